//! Static checks and lowering of the data types `valor`, `copia` and `intervallum`
//! (docs/language.md § 3, § 6, § 7): which methods a receiver of a known type has,
//! the one `↦` outside the conversion matrix that can never succeed, and the range
//! value `a ‥ b` where an `intervallum` is expected.

use super::Lowerer;
use crate::diag::codes;
use crate::ir::{BinOp, Method, Operand, Rhs, Ty};
use crate::source::Span;
use crate::syntax::ast;

/// A field default that is a literal (a number, optionally negated, a text, a
/// `bivalens`, `nihil`), as the constant a field of type `ty` holds; `None` otherwise.
pub(super) fn literal_const(e: &ast::Expr, ty: &Ty) -> Option<crate::ir::Const> {
    use crate::ir::Const;
    use crate::syntax::ast::{ExprKind, Literal, UnOp};
    let c = match &e.kind {
        ExprKind::Lit(Literal::Int(i)) => Const::Int(*i),
        ExprKind::Lit(Literal::Float(f)) => Const::Float(*f),
        ExprKind::Lit(Literal::Text(t) | Literal::Ascii(t)) => Const::Text(t.clone()),
        ExprKind::Lit(Literal::Bool(b)) => Const::Bool(*b),
        ExprKind::Lit(Literal::Nihil) => Const::Nihil,
        ExprKind::Unary {
            op: UnOp::Neg,
            expr,
        } => match literal_const(expr, &Ty::Any)? {
            Const::Int(i) => Const::Int(i.checked_neg()?),
            Const::Float(f) => Const::Float(-f),
            _ => return None,
        },
        _ => return None,
    };
    // The declared-type coercion a constructor applies (`fractus x ← 3` holds 3.0).
    Some(match (c, ty) {
        (Const::Int(i), Ty::Float) => Const::Float(i as f64),
        (c, _) => c,
    })
}

/// The built-in methods of a receiver of a data type, or `None` for other types.
fn methods_of(t: &Ty) -> Option<&'static [Method]> {
    Some(match t {
        Ty::Json { .. } => &[
            Method::Accipe,
            Method::Habet,
            Method::Longitudo,
            Method::Claves,
            Method::Vacua,
            Method::Nonvacua,
        ],
        Ty::Set(_) => &[
            Method::Adde,
            Method::Habet,
            Method::Continet,
            Method::Dele,
            Method::Longitudo,
            Method::Vacua,
            Method::Nonvacua,
        ],
        Ty::Interval => &[
            Method::Longitudo,
            Method::Continet,
            Method::Inter,
            Method::Unio,
            Method::Vacua,
            Method::Nonvacua,
        ],
        _ => return None,
    })
}

/// Whether values of type `t` are known never to have the data-type methods.
fn certainly_other(t: &Ty) -> bool {
    !matches!(t, Ty::Any | Ty::Union(_)) && methods_of(t).is_none()
}

impl Lowerer<'_> {
    /// SEM002 (and `false`) when a receiver of static type `recv` has no method `m`:
    /// a data type with a method it does not have, or `adde` / `inter` / `union` on a
    /// value that is certainly not a set or a range.
    pub(super) fn data_method_ok(&mut self, recv: &Ty, m: Method, name: &ast::Ident) -> bool {
        let known = match methods_of(recv) {
            Some(ms) => ms.contains(&m),
            None => {
                !(matches!(m, Method::Adde | Method::Inter | Method::Unio) && certainly_other(recv))
            }
        };
        if !known {
            let mut d = crate::diag::Diagnostic::error(
                codes::SEM_UNKNOWN_FUNCTION,
                format!(
                    "no method `{}` on a value of type `{}`",
                    name.name,
                    self.show_ty(recv)
                ),
                name.span,
            );
            if let Some(ms) = methods_of(recv) {
                let names: Vec<String> = ms.iter().map(|m| format!("`{}`", m.name())).collect();
                d = d.with_hint(format!("its methods are {}", names.join(", ")));
            }
            self.diags.push(d);
        }
        known
    }

    /// SEM004 for `↦` from a `valor` or `json` into a function type: a JSON value never
    /// holds a function. (Pairs of the conversion matrix are src/ir/conversion.rs's.)
    pub(super) fn check_data_conversion(&mut self, from: &Ty, to: &Ty, span: Span) {
        if matches!((from, to), (Ty::Json { .. }, Ty::Func(..))) {
            self.diags.push(crate::diag::Diagnostic::error(
                codes::SEM_TYPE_MISMATCH,
                format!(
                    "a value of type `{}` cannot be converted to `{}`",
                    self.show_ty(from),
                    self.show_ty(to)
                ),
                span,
            ));
        }
    }

    /// SEM004 for `≡` / `≠` between a `valor` and a value of another known type (not
    /// `nihil`): a `valor` only ever equals a `valor`, so the comparison would be
    /// constant; the hint says to convert first.
    pub(super) fn check_data_comparison(&mut self, op: BinOp, l: &Ty, r: &Ty, span: Span) {
        if !matches!(op, BinOp::Eq | BinOp::Ne) {
            return;
        }
        let other = match (l, r) {
            (Ty::Json { .. }, o) | (o, Ty::Json { .. }) => o,
            _ => return,
        };
        if matches!(other, Ty::Json { .. } | Ty::Any | Ty::Nihil | Ty::Union(_)) {
            return;
        }
        let shown = self.show_ty(other);
        self.diags.push(
            crate::diag::Diagnostic::error(
                codes::SEM_TYPE_MISMATCH,
                format!("a `valor` compared with a `{shown}` is never equal to it"),
                span,
            )
            .with_hint(format!(
                "convert the valor first: `(v ↦ {shown}) ≡ …`, or box the other side: `x ↦ valor`"
            )),
        );
    }

    /// `a ‥ b` / `a … b` where an `intervallum` is expected: the range as a value.
    pub(super) fn interval_value(
        &mut self,
        start: &ast::Expr,
        end: &ast::Expr,
        inclusive: bool,
        step: Option<&ast::Expr>,
        span: Span,
    ) -> (Operand, Ty) {
        if let Some(s) = step {
            self.error(
                codes::SEM_UNSUPPORTED,
                "an intervallum has no step: `per` makes a lista",
                s.span,
            );
        }
        let a = self.expr_to(start, &Ty::Int);
        let b = self.expr_to(end, &Ty::Int);
        let rhs = Rhs::Method(Method::Interval { inclusive }, a, vec![b]);
        (self.temp(rhs, Ty::Interval, span), Ty::Interval)
    }

    /// `vacua` of a `copia`: the empty set.
    pub(super) fn empty_set(&mut self, t: &Ty, span: Span) -> (Operand, Ty) {
        let list = self.temp(Rhs::List(vec![]), Ty::List(Box::new(Ty::Any)), span);
        (
            self.temp(Rhs::Convert(list, t.clone()), t.clone(), span),
            t.clone(),
        )
    }
}
