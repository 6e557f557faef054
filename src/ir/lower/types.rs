//! Source types to IR types, and the small amount of static typing lowering needs:
//! which genus a value is (for fields and methods), where Int→Float coercion applies,
//! and which declared/actual type pairs are certainly incompatible.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::{GenusId, Ty};
use crate::syntax::ast::{Dim, Type, TypeArg, TypeKind};
use crate::syntax::vocab::Locale;

/// What a type name in a module scope can stand for.
#[derive(Clone, Debug)]
pub enum TypeName {
    Genus(GenusId),
    Alias(Ty),
}

impl Lowerer<'_> {
    /// Converts a source type in module `m`. Unknown names are SEM015.
    pub fn ty(&mut self, m: usize, t: &Type) -> Ty {
        match &t.kind {
            TypeKind::Hole => Ty::Any,
            TypeKind::Nihil => Ty::Nihil,
            TypeKind::Union(members) => {
                let ts: Vec<Ty> = members.iter().map(|x| self.ty(m, x)).collect();
                Ty::Union(ts)
            }
            TypeKind::Tuple(args) => Ty::Tuple(args.iter().map(|a| self.targ(m, a)).collect()),
            TypeKind::Func { params, ret, .. } => {
                let ps = params.iter().map(|p| self.ty(m, p)).collect();
                Ty::Func(ps, Box::new(self.ty(m, ret)))
            }
            TypeKind::Shaped { path, dims } => {
                let name = path.last().map_or("", |i| i.name.as_str());
                if path.len() == 1 && is_out_of_subset(name) {
                    self.out_of_subset_type(name, None, t.span);
                    return Ty::Any;
                }
                if path.len() == 1 && is_tensor_sugar(name) {
                    Ty::Tensor {
                        shape: Some(dims.iter().map(dim).collect()),
                        int: scalar_of(&name[1..]) == Ty::Int,
                        wide: &name[1..] == "f64",
                    }
                } else {
                    self.diags.push(Diagnostic::error(
                        codes::SEM_UNKNOWN_TYPE,
                        format!("`{name}[…]` is not a tensor type"),
                        t.span,
                    ));
                    Ty::Any
                }
            }
            TypeKind::Path { path, args } => {
                if path.len() == 2 {
                    // alias.Genus
                    let alias = &path[0].name;
                    if let Some(target) = self.module_alias(m, alias) {
                        match self.modules[target].types.get(&path[1].name) {
                            Some(TypeName::Genus(g)) => {
                                let g = *g;
                                return self.genus_ty(m, g, args, t);
                            }
                            Some(TypeName::Alias(t)) => return t.clone(),
                            None => {}
                        }
                    }
                    let hint = self
                        .module_alias(m, alias)
                        .and_then(|target| self.module_type_hint(target, &path[1].name));
                    self.error_hint(
                        codes::SEM_UNKNOWN_TYPE,
                        format!("unknown type `{}.{}`", alias, path[1].name),
                        t.span,
                        hint,
                    );
                    return Ty::Any;
                }
                let name = path[0].name.as_str();
                if let Some(ty) = self.builtin_type(m, name, args) {
                    if name == "intervallum" {
                        if let Some(a) = args.first() {
                            let e = self.targ(m, a);
                            if !matches!(e, Ty::Any | Ty::Int) {
                                self.error(
                                    codes::SEM_TYPE_MISMATCH,
                                    format!(
                                        "an intervallum has numerus bounds, not `{}`",
                                        self.show_ty(&e)
                                    ),
                                    t.span,
                                );
                            }
                        }
                    }
                    if let Ty::Set(e) = &ty {
                        if !matches!(**e, Ty::Any | Ty::Int | Ty::Text | Ty::Bool) {
                            self.error(
                                codes::SEM_TYPE_MISMATCH,
                                format!(
                                    "a copia holds numerus, textus or bivalens, not `{}`",
                                    self.show_ty(e)
                                ),
                                t.span,
                            );
                        }
                    }
                    return ty;
                }
                match self.modules[m].types.get(name) {
                    Some(TypeName::Genus(g)) => {
                        let g = *g;
                        self.genus_ty(m, g, args, t)
                    }
                    Some(TypeName::Alias(ty)) => ty.clone(),
                    None => {
                        if self.generics.iter().any(|g| g == name) {
                            return Ty::Any;
                        }
                        if is_out_of_subset(name) {
                            self.out_of_subset_type(name, None, t.span);
                            return Ty::Any;
                        }
                        if let Some(canonical) = self.unimplemented_type_word(m, name) {
                            self.out_of_subset_type(name, Some(canonical), t.span);
                            return Ty::Any;
                        }
                        let hint = self.type_hint(m, name);
                        self.error_hint(
                            codes::SEM_UNKNOWN_TYPE,
                            format!("unknown type `{name}`"),
                            t.span,
                            hint,
                        );
                        Ty::Any
                    }
                }
            }
        }
    }

    /// A genus named as a type. Its type arguments are erased, but there must be as
    /// many as it has parameters (or none at all): SEM028 otherwise.
    fn genus_ty(&mut self, m: usize, g: GenusId, args: &[TypeArg], t: &Type) -> Ty {
        let want = self.genus_generics.get(g.0 as usize).map_or(0, Vec::len);
        if !args.is_empty() && args.len() != want {
            let name = self.program.genera[g.0 as usize].name.clone();
            let msg = if want == 0 {
                format!(
                    "genus `{name}` takes no type arguments, but {} are given",
                    args.len()
                )
            } else {
                format!(
                    "genus `{name}` takes {want} type argument(s), but {} are given",
                    args.len()
                )
            };
            self.error(codes::SEM_TYPE_ARGS, msg, t.span);
        }
        for a in args {
            let _ = self.targ(m, a);
        }
        Ty::Record(g)
    }

    /// SEM014 for a type of Faber that faber does not implement (docs/language.md § 10);
    /// `canonical` is its canonical name where the program spells it otherwise.
    fn out_of_subset_type(
        &mut self,
        name: &str,
        canonical: Option<&str>,
        span: crate::source::Span,
    ) {
        let shown = match canonical {
            Some(c) if c != name => format!("`{name}` (`{c}`)"),
            _ => format!("`{name}`"),
        };
        self.diags.push(
            Diagnostic::error(
                codes::SEM_UNSUPPORTED,
                format!("the type {shown} is outside the subset faber supports"),
                span,
            )
            .with_hint("docs/language.md § 10 lists what is not supported"),
        );
    }

    /// The canonical name of the primitive type `name` spells in module `m`'s reader
    /// locale when faber does not implement it (a `ty` row of the vocabulary without
    /// a faber name: `quidlibet`, English `any`).
    fn unimplemented_type_word(&self, m: usize, name: &str) -> Option<&'static str> {
        let locale = self.modules[m].locale;
        let row = crate::syntax::vocab::vocabulary().lookup(
            crate::syntax::vocab::Section::Type,
            locale,
            name,
        )?;
        (!row.implemented()).then_some(row.canonical)
    }

    fn targ(&mut self, m: usize, a: &TypeArg) -> Ty {
        match a {
            TypeArg::Type(t) => self.ty(m, t),
            _ => Ty::Any,
        }
    }

    /// Whether a tensor's element type argument is a 64-bit float (`f64`, `fractus`,
    /// as module `m`'s locale spells them): such tensors stay F64 under
    /// `--precision f32` (`Ty::Tensor::wide`).
    fn is_f64_arg(&self, m: usize, a: &TypeArg) -> bool {
        let TypeArg::Type(t) = a else {
            return false;
        };
        self.is_scalar_word(m, t, &["f64", "fractus"])
    }

    /// Whether a declared type is the scalar `f32` or `f16` (as module `m`'s locale
    /// spells them): the places declared so are rounded to f32 under
    /// `--precision f32` (`SlotInfo::narrow`, `Function::narrow_ret`). An alias of
    /// `f32` is not seen through (docs/precision.md).
    pub fn is_narrow(&self, m: usize, t: &Type) -> bool {
        self.is_scalar_word(m, t, &["f32", "f16"])
    }

    /// Whether `t` is a one-word type without arguments whose canonical name (as
    /// `builtin_type` reads it) is one of `names`.
    fn is_scalar_word(&self, m: usize, t: &Type, names: &[&str]) -> bool {
        let TypeKind::Path { path, args } = &t.kind else {
            return false;
        };
        let ([word], []) = (path.as_slice(), args.as_slice()) else {
            return false;
        };
        let locale = self.modules[m].locale;
        let vocab = crate::syntax::vocab::vocabulary();
        let name = vocab.type_name(locale, &word.name).unwrap_or(&word.name);
        names.contains(&name)
    }

    fn builtin_type(&mut self, m: usize, name: &str, args: &[TypeArg]) -> Option<Ty> {
        // Primitive types are vocabulary: the module's reader locale spells them
        // (src/syntax/vocab.rs); a Latin type word in another locale is a plain name.
        let locale = self.modules[m].locale;
        let vocab = crate::syntax::vocab::vocabulary();
        let name = match vocab.type_name(locale, name) {
            Some(canonical) => canonical,
            None if locale != Locale::LA && vocab.type_name(Locale::LA, name).is_some() => {
                return None
            }
            None => name,
        };
        let arg = |s: &mut Self, i: usize| args.get(i).map_or(Ty::Any, |a| s.targ(m, a));
        Some(match name {
            // `nihil` is a keyword in Latin; other locales may spell the type apart.
            "nihil" => Ty::Nihil,
            "numerus" | "i8" | "i16" | "i32" | "i64" | "u8" | "u16" | "u32" | "u64" => Ty::Int,
            "fractus" | "f16" | "f32" | "f64" => Ty::Float,
            "bivalens" => Ty::Bool,
            "textus" | "ascii" => Ty::Text,
            "octeti" => Ty::Bytes,
            "vacuum" => Ty::Vacuum,
            // Any value; what it holds is checked where it is used, at run time.
            "quidlibet" => Ty::Any,
            "json" => Ty::Json { doc: true },
            "valor" => Ty::Json { doc: false },
            "copia" => Ty::Set(Box::new(arg(self, 0))),
            "intervallum" => Ty::Interval,
            "lista" => Ty::List(Box::new(arg(self, 0))),
            "tabula" => Ty::Map(Box::new(arg(self, 0)), Box::new(arg(self, 1))),
            "tensor" => {
                let shape = match args.get(1) {
                    Some(TypeArg::Shape(dims, _)) => Some(dims.iter().map(dim).collect()),
                    _ => None,
                };
                let int = arg(self, 0) == Ty::Int;
                let wide = args.first().is_some_and(|a| self.is_f64_arg(m, a));
                Ty::Tensor { shape, int, wide }
            }
            n if is_list_sugar(n) => Ty::List(Box::new(scalar_of(&n[1..]))),
            n if is_tensor_sugar(n) => Ty::Tensor {
                shape: None,
                int: scalar_of(&n[1..]) == Ty::Int,
                wide: &n[1..] == "f64",
            },
            _ => return None,
        })
    }
}

fn dim(d: &Dim) -> Option<u64> {
    match d {
        Dim::Nat(n, _) => Some(*n),
        _ => None,
    }
}

fn scalar_of(s: &str) -> Ty {
    if s.starts_with('f') {
        Ty::Float
    } else {
        Ty::Int
    }
}

const WIDTHS: &[&str] = &[
    "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
];

fn is_list_sugar(n: &str) -> bool {
    n.strip_prefix('l').is_some_and(|w| WIDTHS.contains(&w))
}

/// Types of Faber outside the subset: each is SEM014 where a type is written (a
/// `genus` or `typus` of the same name in the module shades it).
pub const OUT_TYPES: &[&str] = &[
    "instans",
    "cursor",
    "modulus",
    "vector",
    "matrix",
    "regex",
    "sparsa",
    "promissum",
    "atomic",
    "ignotum",
    "forma",
];

fn is_out_of_subset(n: &str) -> bool {
    OUT_TYPES.contains(&n)
        || ["s", "v"]
            .iter()
            .any(|p| n.strip_prefix(p).is_some_and(|w| WIDTHS.contains(&w)))
}

fn is_tensor_sugar(n: &str) -> bool {
    n.strip_prefix('t').is_some_and(|w| WIDTHS.contains(&w))
}

/// True when a value of static type `actual` needs Int→Float coercion to fit `declared`.
pub fn needs_coercion(declared: &Ty, actual: &Ty) -> bool {
    match declared {
        // Boxing: a value where a `valor` is declared becomes one (src/eval/json/).
        Ty::Json { .. } => !matches!(actual, Ty::Json { .. }),
        Ty::Float => matches!(actual, Ty::Int | Ty::Any),
        Ty::List(e) if **e == Ty::Float => !matches!(actual, Ty::List(a) if **a == Ty::Float),
        _ => false,
    }
}

/// The code for a certain mismatch: SEM023 between two tensor shapes, else SEM004.
pub fn mismatch_code(declared: &Ty, actual: &Ty) -> crate::diag::Code {
    if matches!((declared, actual), (Ty::Tensor { .. }, Ty::Tensor { .. })) {
        codes::SEM_SHAPE
    } else {
        codes::SEM_TYPE_MISMATCH
    }
}

/// True when `actual` can never be a value of type `declared` (both known).
pub fn incompatible(declared: &Ty, actual: &Ty) -> bool {
    use Ty::*;
    match (declared, actual) {
        (Any, _) | (_, Any) => false,
        (Union(ds), a) => ds.iter().all(|d| incompatible(d, a)),
        (d, Union(as_)) => as_.iter().all(|a| incompatible(d, a)),
        (Float, Int) => false,
        (Int, Int) | (Float, Float) | (Bool, Bool) | (Text, Text) | (Bytes, Bytes) => false,
        (Nihil, Nihil) | (Vacuum, Vacuum) => false,
        (List(d), List(a)) => incompatible(d, a),
        (Map(dk, dv), Map(ak, av)) => incompatible(dk, ak) || incompatible(dv, av),
        (Tensor { shape: Some(d), .. }, Tensor { shape: Some(a), .. }) => {
            d.len() != a.len()
                || d.iter()
                    .zip(a)
                    .any(|(x, y)| matches!((x, y), (Some(p), Some(q)) if p != q))
        }
        (Tuple(_), Tuple(_)) | (Func(..), Func(..)) | (Tensor { .. }, Tensor { .. }) => false,
        (Record(a), Record(b)) => a != b,
        // Every value but a function boxes into `valor` (src/eval/json/boxing.rs).
        (Json { .. }, Func(..)) => true,
        (Json { .. }, _) => false,
        (Set(d), Set(a)) => incompatible(d, a),
        (Interval, Interval) => false,
        _ => true,
    }
}

/// `t ∪ nihil` (`t` itself when it already admits `nihil`): the type of a `sponte`
/// parameter or field.
pub fn with_nihil(t: Ty) -> Ty {
    match t {
        t if admits_nihil(&t) || t == Ty::Any => t,
        Ty::Union(mut ms) => {
            ms.push(Ty::Nihil);
            Ty::Union(ms)
        }
        t => Ty::Union(vec![t, Ty::Nihil]),
    }
}

/// A `nihil` literal standing for an omitted `sponte` value.
pub fn nihil_expr(span: crate::source::Span) -> crate::syntax::ast::Expr {
    use crate::syntax::ast::{Expr, ExprKind, Literal};
    Expr {
        kind: ExprKind::Lit(Literal::Nihil),
        span,
    }
}

/// True when `nihil` is a value of `t` (`nihil` itself, or a union with it).
pub fn admits_nihil(t: &Ty) -> bool {
    match t {
        Ty::Nihil => true,
        Ty::Union(ms) => ms.iter().any(admits_nihil),
        _ => false,
    }
}
