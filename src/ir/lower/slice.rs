//! `base[a ‥ b per k]`: an index that is a range. On a text it is a slice of
//! characters (src/eval/slice.rs has the bounds rule); a list, map or tensor is never
//! indexed by a range (lists copy a range with `sectio(a, b)`, as upstream Faber
//! says), so those are `check` errors instead of run-time ones.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};

impl Lowerer<'_> {
    /// Lowers `base[index]` where `index` is a range expression and `base` is already
    /// lowered to `v` of static type `t`.
    pub fn range_index(
        &mut self,
        v: Operand,
        t: &Ty,
        index: &ast::Expr,
        span: Span,
    ) -> (Operand, Ty) {
        let ExprKind::Range {
            start,
            end,
            inclusive,
            step,
        } = &index.kind
        else {
            unreachable!("range_index is called with a range");
        };
        let a = self.expr_to(start, &Ty::Int);
        let b = self.expr_to(end, &Ty::Int);
        let k = match step {
            Some(x) => self.expr_to(x, &Ty::Int),
            None => Operand::Const(Const::Int(1)),
        };
        let hint = match t {
            Ty::List(_) => Some("copy a part of a list with `xs.sectio(a, b)` (elements `a` up to, not including, `b`)"),
            Ty::Tensor { .. } => Some("take rows of a tensor with `t.sectio(a, b)`"),
            Ty::Map(..) => Some("a map is indexed by one key"),
            _ => None,
        };
        if let Some(hint) = hint {
            let shown = self.show_ty(t);
            self.diags.push(
                Diagnostic::error(
                    codes::SEM_TYPE_MISMATCH,
                    format!(
                        "a `{shown}` cannot be indexed by a range; only a `textus` can be sliced"
                    ),
                    index.span,
                )
                .with_hint(hint),
            );
            return (Operand::Const(Const::Nihil), Ty::Any);
        }
        let ty = match t {
            Ty::Text => Ty::Text,
            _ => Ty::Any,
        };
        let rhs = Rhs::Method(
            Method::TextSlice {
                inclusive: *inclusive,
            },
            v,
            vec![a, b, k],
        );
        (self.temp(rhs, ty.clone(), span), ty)
    }
}
