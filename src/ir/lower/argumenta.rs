//! The declarations of a command line (docs/language.md § "Command-line arguments"):
//! `@ operandus` and `@ optio` annotations read into [`ArgDecl`]s, the record genus
//! they make, and the binding of `argumenta name` to that record, filled at run time by
//! the host functions of src/eval/host_args.rs from the program's arguments.

use super::Lowerer;
use crate::diag::codes;
use crate::ir::cli_spec::{ArgDecl, ArgKind};
use crate::ir::host::Host;
use crate::ir::{Field, Genus, GenusId, Operand, Rhs, Stmt, Ty};
use crate::source::Span;
use crate::syntax::ast::{AnnotArg, Annotation, Ident};

/// The type of the field a declaration fills: `T`; `T ∪ nihil` for an option with a
/// value and no default; `lista<T>` for the operands left.
pub(super) fn field_ty(d: &ArgDecl) -> Ty {
    let scalar = match d.ty.as_str() {
        "numerus" => Ty::Int,
        "fractus" => Ty::Float,
        "bivalens" => Ty::Bool,
        _ => Ty::Text,
    };
    match d.kind {
        ArgKind::Rest => Ty::List(Box::new(scalar)),
        ArgKind::Opt if d.ty != "bivalens" && d.default.is_none() => {
            Ty::Union(vec![scalar, Ty::Nihil])
        }
        _ => scalar,
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

/// An annotation argument as a word or text.
fn word(a: &AnnotArg) -> Option<&str> {
    match a {
        AnnotArg::Word(w) | AnnotArg::Text(w) => Some(w.as_str()),
        _ => None,
    }
}

/// The default `vel X` of a declaration of type `ty`, as text the run-time parser reads
/// as that type; None when X is not a value of the type.
fn default_text(ty: &str, x: &AnnotArg) -> Option<String> {
    match (ty, x) {
        ("textus", AnnotArg::Text(t)) => Some(t.clone()),
        ("numerus", AnnotArg::Int(i)) => Some(i.to_string()),
        ("fractus", AnnotArg::Int(i)) => Some(i.to_string()),
        ("fractus", AnnotArg::Float(f)) => Some(f.to_string()),
        ("bivalens", AnnotArg::Word(w)) if w == "verum" || w == "falsum" => Some(w.clone()),
        _ => None,
    }
}

impl Lowerer<'_> {
    /// The `@ operandus` / `@ optio` declarations among `annotations`, owned by `owner`.
    /// A malformed one is SEM021; a name declared twice (here or in `taken`, the fields
    /// the same record already has) is SEM006; two options with one flag are SEM021.
    pub(super) fn arg_decls(
        &mut self,
        annotations: &[Annotation],
        owner: Option<usize>,
        taken: &[ArgDecl],
    ) -> Vec<ArgDecl> {
        let mut decls: Vec<ArgDecl> = Vec::new();
        for a in annotations {
            let Some(d) = self.arg_decl(a, owner) else {
                continue;
            };
            let all = || taken.iter().chain(decls.iter());
            if all().any(|s| s.name == d.name) {
                self.error(
                    codes::SEM_DUPLICATE,
                    format!("`{}` is already declared on this command line", d.name),
                    a.span,
                );
                continue;
            }
            let clash = all().find(|s| {
                s.kind == ArgKind::Opt
                    && d.kind == ArgKind::Opt
                    && ((!s.short.is_empty() && s.short == d.short)
                        || (!s.long.is_empty() && s.long == d.long))
            });
            if let Some(other) = clash {
                let msg = format!(
                    "`@ optio {}` uses the same flag as `@ optio {}`",
                    d.name, other.name
                );
                self.error(codes::SEM_BAD_ANNOTATION, msg, a.span);
                continue;
            }
            decls.push(d);
        }
        let rest = decls.iter().position(|d| d.kind == ArgKind::Rest);
        if let Some(r) = rest {
            if decls[r + 1..].iter().any(|d| d.kind != ArgKind::Opt) {
                let span = annotations
                    .iter()
                    .find(|a| a.name.name == "operandus")
                    .map_or(Span::default(), |a| a.span);
                self.error(
                    codes::SEM_BAD_ANNOTATION,
                    "`@ operandus ceteri` takes the operands left, so it must be the last operand",
                    span,
                );
            }
        }
        decls
    }

    /// A genus with one field per declaration, for the record `argumenta name` binds.
    pub(super) fn args_genus(&mut self, decls: &[&ArgDecl]) -> GenusId {
        let gid = GenusId(self.program.genera.len() as u32);
        self.program.genera.push(Genus {
            name: "argumenta".to_string(),
            fields: decls
                .iter()
                .map(|d| Field {
                    name: d.name.clone(),
                    ty: field_ty(d),
                    narrow: false,
                })
                .collect(),
        });
        self.genus_generics.push(Vec::new());
        self.defaults.push(vec![None; decls.len()]);
        gid
    }

    /// Binds `name` in the function being lowered to `hospes.HOST(ops…)`, a record of
    /// genus `gid`.
    pub(super) fn bind_args(&mut self, name: &Ident, gid: GenusId, host: Host, ops: Vec<Operand>) {
        let dst = self.new_slot(&name.name, Ty::Record(gid));
        self.emit(Stmt::Let {
            dst,
            rhs: Rhs::Host(host, ops),
            span: name.span,
        });
        self.bind(name, dst, false, true);
    }

    /// `@ operandus [ceteri] T name …` or `@ optio name …`; other annotations are not
    /// about the command line (None). A malformed one is SEM021.
    fn arg_decl(&mut self, a: &Annotation, owner: Option<usize>) -> Option<ArgDecl> {
        let args = &a.args;
        let mut d = ArgDecl {
            owner,
            kind: ArgKind::Opt,
            name: String::new(),
            ty: "bivalens".to_string(),
            short: String::new(),
            long: String::new(),
            ubique: false,
            default: None,
            descr: String::new(),
        };
        let at = match a.name.name.as_str() {
            "operandus" => {
                let (rest, at) = match args.first().and_then(word) {
                    Some("ceteri") => (true, 1),
                    _ => (false, 0),
                };
                let ty = args.get(at).and_then(word).and_then(scalar_name);
                let name = args.get(at + 1).and_then(word);
                let (Some(ty), Some(name)) = (ty, name) else {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ operandus` takes `[ceteri] TYPE name` with TYPE one of textus, numerus, fractus, bivalens",
                        a.span,
                    );
                    return None;
                };
                d.kind = if rest { ArgKind::Rest } else { ArgKind::One };
                d.ty = ty.to_string();
                d.name = name.to_string();
                at + 2
            }
            "optio" => {
                let Some(name) = args.first().and_then(word) else {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ optio` starts with the name the option binds to",
                        a.span,
                    );
                    return None;
                };
                d.name = name.to_string();
                1
            }
            _ => return None,
        };
        let mut default: Option<&AnnotArg> = None;
        let mut i = at;
        while i < args.len() {
            let key = word(&args[i]);
            let value = args.get(i + 1);
            let text = value.and_then(word);
            let opt = d.kind == ArgKind::Opt;
            let ok = match (key, text) {
                (Some("brevis"), Some(v)) if opt && v.chars().count() == 1 && v != "-" => {
                    d.short = v.to_string();
                    true
                }
                (Some("longum"), Some(v))
                    if opt && !v.is_empty() && !v.contains(['\t', ' ', '=']) =>
                {
                    d.long = v.to_string();
                    true
                }
                (Some("typus"), Some(v)) if opt && scalar_name(v).is_some() => {
                    d.ty = scalar_name(v).unwrap_or("textus").to_string();
                    true
                }
                (Some("descriptio"), Some(v)) => {
                    d.descr = v.to_string();
                    true
                }
                (Some("vel"), _) if value.is_some() => {
                    default = value;
                    true
                }
                (Some("ubique"), _) => {
                    d.ubique = true;
                    i += 1;
                    continue;
                }
                _ => false,
            };
            if !ok {
                let what = if opt {
                    format!("`@ optio {}`: expected `brevis \"c\"`, `longum \"name\"`, `typus T` (textus, numerus, fractus, bivalens), `vel DEFAULT`, `ubique` or `descriptio \"…\"`", d.name)
                } else {
                    format!(
                        "`@ operandus {}`: expected `vel DEFAULT` or `descriptio \"…\"`",
                        d.name
                    )
                };
                // The field is still declared, so its uses raise nothing more.
                self.error(codes::SEM_BAD_ANNOTATION, what, a.span);
                default = None;
                break;
            }
            i += 2;
        }
        if let Some(x) = default {
            match default_text(&d.ty, x) {
                Some(t) => d.default = Some(t),
                None => {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        format!("the default of `{}` (`vel …`) must be a `{}`", d.name, d.ty),
                        a.span,
                    );
                }
            }
        }
        if d.kind == ArgKind::Rest && d.default.is_some() {
            self.error(
                codes::SEM_BAD_ANNOTATION,
                format!(
                    "`@ operandus ceteri {}` is a list, empty when absent: it takes no `vel`",
                    d.name
                ),
                a.span,
            );
            d.default = None;
        }
        if d.kind == ArgKind::Opt && d.short.is_empty() && d.long.is_empty() {
            d.long = d.name.replace('_', "-");
        }
        Some(d)
    }
}
