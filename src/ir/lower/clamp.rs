//! `x ↦ a ‥ b` (docs/language.md § 6, "Conversions"): a conversion whose target is a
//! range clamps into it. A `numerus` becomes the nearest integer the range holds (a
//! throw when it holds none); an `intervallum` becomes its part inside the range, each
//! end moved into it (empty when the two do not meet; never a throw). Any other
//! statically known source is SEM029, as for a conversion the matrix rejects.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::{Method, Operand, Rhs, Ty};
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};

impl Lowerer<'_> {
    pub(super) fn clamp(
        &mut self,
        e: &ast::Expr,
        range: &ast::Expr,
        fallback: Option<&ast::Expr>,
        span: Span,
    ) -> (Operand, Ty) {
        let (v, from) = self.expr(e, None);
        let ExprKind::Range {
            start,
            end,
            inclusive,
            ..
        } = &range.kind
        else {
            // The grammar only builds a clamp around a range.
            return (v, Ty::Any);
        };
        let (r, _) = self.interval_value(start, end, *inclusive, None, range.span);
        let target = match &from {
            Ty::Int => Ty::Int,
            Ty::Interval => Ty::Interval,
            Ty::Any | Ty::Union(_) => Ty::Any,
            other => {
                self.diags.push(
                    Diagnostic::error(
                        codes::SEM_NO_CONVERSION,
                        format!(
                            "there is no conversion from `{}` to `intervallum`",
                            self.show_ty(other)
                        ),
                        span,
                    )
                    .with_hint(
                        "a `numerus` or an `intervallum` is clamped into a range (`x ↦ 0‥100`)",
                    ),
                );
                Ty::Any
            }
        };
        let rhs = Rhs::Method(Method::Clamp, r, vec![v]);
        self.may_fail(rhs, target, fallback, span)
    }
}
