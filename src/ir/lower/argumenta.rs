//! `incipit argumenta name { … }` (docs/language.md § "Command-line arguments"): the
//! entry's `@ operandus` and `@ optio` annotations declare the command line; `name` is
//! bound to a record of one field per declaration, filled at run time by the host
//! function `argumenta_parsa` (src/eval/host_args.rs) from the program's arguments.

use super::Lowerer;
use crate::diag::codes;
use crate::ir::host::Host;
use crate::ir::{Const, Field, Genus, GenusId, Operand, Rhs, Stmt, Ty};
use crate::syntax::ast::{AnnotArg, Annotation, Ident};

/// One declared argument, as the run-time parser reads it (one line of the spec text:
/// `kind \t name \t type \t short \t long`).
struct ArgSpec {
    /// `rest` (`@ operandus ceteri`), `one` (`@ operandus`), `opt` (`@ optio`).
    kind: &'static str,
    name: String,
    ty: &'static str,
    short: String,
    long: String,
}

impl ArgSpec {
    fn field_ty(&self) -> Ty {
        let scalar = match self.ty {
            "numerus" => Ty::Int,
            "fractus" => Ty::Float,
            "bivalens" => Ty::Bool,
            _ => Ty::Text,
        };
        match self.kind {
            "rest" => Ty::List(Box::new(scalar)),
            "opt" if self.ty != "bivalens" => Ty::Union(vec![scalar, Ty::Nihil]),
            _ => scalar,
        }
    }
}

fn scalar_name(word: &str) -> Option<&'static str> {
    match word {
        "textus" => Some("textus"),
        "numerus" => Some("numerus"),
        "fractus" => Some("fractus"),
        "bivalens" => Some("bivalens"),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// Binds `name` in the entry function being lowered to the parsed command line.
    pub(super) fn entry_args(&mut self, annotations: &[Annotation], name: &Ident) {
        let mut specs: Vec<ArgSpec> = Vec::new();
        for a in annotations {
            let Some(spec) = self.arg_spec(a) else {
                continue;
            };
            if specs.iter().any(|s| s.name == spec.name) {
                self.error(
                    codes::SEM_DUPLICATE,
                    format!("`{}` is already declared on this `incipit`", spec.name),
                    a.span,
                );
                continue;
            }
            let clash = specs.iter().find(|s| {
                s.kind == "opt"
                    && spec.kind == "opt"
                    && ((!s.short.is_empty() && s.short == spec.short)
                        || (!s.long.is_empty() && s.long == spec.long))
            });
            if let Some(other) = clash {
                let msg = format!(
                    "`@ optio {}` uses the same flag as `@ optio {}`",
                    spec.name, other.name
                );
                self.error(codes::SEM_BAD_ANNOTATION, msg, a.span);
                continue;
            }
            specs.push(spec);
        }
        let gid = GenusId(self.program.genera.len() as u32);
        self.program.genera.push(Genus {
            name: "argumenta".to_string(),
            fields: specs
                .iter()
                .map(|s| Field {
                    name: s.name.clone(),
                    ty: s.field_ty(),
                    narrow: false,
                })
                .collect(),
        });
        let text: Vec<String> = specs
            .iter()
            .map(|s| format!("{}\t{}\t{}\t{}\t{}", s.kind, s.name, s.ty, s.short, s.long))
            .collect();
        let ty = Ty::Record(gid);
        let dst = self.new_slot(&name.name, ty);
        self.emit(Stmt::Let {
            dst,
            rhs: Rhs::Host(
                Host::ArgumentaParsa,
                vec![
                    Operand::Const(Const::Int(i64::from(gid.0))),
                    Operand::Const(Const::Text(text.join("\n"))),
                ],
            ),
            span: name.span,
        });
        self.bind(name, dst, false, true);
    }

    /// `@ operandus [ceteri] T name …` or `@ optio name … typus T …`; other annotations
    /// are not about the command line (None). A malformed one is SEM021.
    fn arg_spec(&mut self, a: &Annotation) -> Option<ArgSpec> {
        let words: Vec<Option<&str>> = a
            .args
            .iter()
            .map(|x| match x {
                AnnotArg::Word(w) | AnnotArg::Text(w) => Some(w.as_str()),
                _ => None,
            })
            .collect();
        match a.name.name.as_str() {
            "operandus" => {
                let (rest, at) = match words.first() {
                    Some(Some("ceteri")) => (true, 1),
                    _ => (false, 0),
                };
                let ty = words.get(at).copied().flatten().and_then(scalar_name);
                let name = words.get(at + 1).copied().flatten();
                match (ty, name) {
                    (Some(ty), Some(name)) => Some(ArgSpec {
                        kind: if rest { "rest" } else { "one" },
                        name: name.to_string(),
                        ty,
                        short: String::new(),
                        long: String::new(),
                    }),
                    _ => {
                        self.error(
                            codes::SEM_BAD_ANNOTATION,
                            "`@ operandus` takes `[ceteri] TYPE name` with TYPE one of textus, numerus, fractus, bivalens",
                            a.span,
                        );
                        None
                    }
                }
            }
            "optio" => {
                let Some(Some(name)) = words.first().copied() else {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ optio` starts with the name the option binds to",
                        a.span,
                    );
                    return None;
                };
                let mut spec = ArgSpec {
                    kind: "opt",
                    name: name.to_string(),
                    ty: "bivalens",
                    short: String::new(),
                    long: String::new(),
                };
                let mut i = 1;
                while i < words.len() {
                    let key = words[i];
                    let value = words.get(i + 1).copied().flatten();
                    match (key, value) {
                        (Some("brevis"), Some(v)) if v.chars().count() == 1 => {
                            spec.short = v.to_string()
                        }
                        (Some("longum"), Some(v)) if !v.is_empty() && !v.contains('\t') => {
                            spec.long = v.to_string()
                        }
                        (Some("typus"), Some(v)) if scalar_name(v).is_some() => {
                            spec.ty = scalar_name(v).unwrap_or("textus")
                        }
                        (Some("descriptio" | "ubique"), _) => {}
                        _ => {
                            self.error(
                                codes::SEM_BAD_ANNOTATION,
                                format!(
                                    "`@ optio {name}`: expected `brevis \"c\"`, `longum \"name\"`, `typus T` (textus, numerus, fractus, bivalens) or `descriptio \"…\"`"
                                ),
                                a.span,
                            );
                            break;
                        }
                    }
                    i += if key == Some("ubique") { 1 } else { 2 };
                }
                if spec.short.is_empty() && spec.long.is_empty() {
                    spec.long = spec.name.replace('_', "-");
                }
                Some(spec)
            }
            _ => None,
        }
    }
}
