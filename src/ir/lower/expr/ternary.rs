//! `cond sic a secus b` (docs/language.md § "Conditional expression"): an `If` whose
//! two arms write one slot. With a known expected type both arms are lowered to it;
//! otherwise the type is the arms' common type (`numerus` and `fractus` make
//! `fractus`, a `nihil` arm makes `T ∪ nihil`), `_` when they have none.

use super::Lowered;
use crate::ir::lower::types::with_nihil;
use crate::ir::lower::Lowerer;
use crate::ir::*;
use crate::syntax::ast;

/// The type of a value that is either `a` or `b`.
fn join(a: &Ty, b: &Ty) -> Ty {
    match (a, b) {
        _ if a == b => a.clone(),
        (Ty::Int, Ty::Float) | (Ty::Float, Ty::Int) => Ty::Float,
        (Ty::Nihil, t) | (t, Ty::Nihil) => with_nihil(t.clone()),
        _ => Ty::Any,
    }
}

impl Lowerer<'_> {
    pub(super) fn ternary(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Expr,
        otherwise: &ast::Expr,
        expected: Option<&Ty>,
    ) -> Lowered {
        let c = self.expr_to(cond, &Ty::Bool);
        let dst = self.new_slot("", Ty::Any);
        let want = expected.filter(|t| **t != Ty::Any).cloned();
        let arm = |this: &mut Self, e: &ast::Expr| -> (Block, Operand, Ty) {
            this.push_block();
            let (op, ty) = match &want {
                Some(w) => (this.expr_to(e, w), w.clone()),
                None => this.expr(e, None),
            };
            (this.pop_block(), op, ty)
        };
        let (mut then_block, a, at) = arm(self, then);
        let (mut else_block, b, bt) = arm(self, otherwise);
        let ty = want.clone().unwrap_or_else(|| join(&at, &bt));
        for (block, op, t, e) in [
            (&mut then_block, a, &at, then),
            (&mut else_block, b, &bt, otherwise),
        ] {
            let rhs = if ty == Ty::Float && *t == Ty::Int {
                Rhs::Coerce(op, Ty::Float)
            } else {
                Rhs::Use(op)
            };
            block.stmts.push(Stmt::Let {
                dst,
                rhs,
                span: e.span,
            });
        }
        self.emit(Stmt::If {
            cond: c,
            then: then_block,
            otherwise: else_block,
        });
        self.cx().slots[dst.0 as usize].ty = ty.clone();
        (Operand::Slot(dst), ty)
    }
}
