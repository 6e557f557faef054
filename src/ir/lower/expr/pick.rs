//! The receiver type that picks between the two faber names of one vocabulary term
//! (`sqrt|radix`: the tensor op, or the number method) at a method call. It is the
//! receiver's static type as [`Lowerer::peek_type`] reads it, and also knows, without
//! lowering anything, that arithmetic on numbers and a number method's result are
//! numbers: `(1.0 - b.potentia(2.0)).radix()` is a number's square root in every
//! locale, where `sqrt` would otherwise pick the tensor op. Only the pick uses it.

use crate::ir::lower::intrinsics::{self, Spelled};
use crate::ir::lower::Lowerer;
use crate::ir::{Method, Ty};
use crate::syntax::ast::{self, BinOp, ExprKind, Literal, UnOp};

impl Lowerer<'_> {
    /// The type that picks the intrinsic of a call on receiver `e`.
    pub(super) fn pick_type(&mut self, e: &ast::Expr) -> Ty {
        match &e.kind {
            ExprKind::Lit(Literal::Int(_)) => Ty::Int,
            ExprKind::Lit(Literal::Float(_)) => Ty::Float,
            ExprKind::Unary {
                op: UnOp::Neg,
                expr,
            } => number(self.pick_type(expr)),
            ExprKind::Binary { op, lhs, rhs } => {
                let arithmetic = matches!(
                    op,
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem
                );
                match (arithmetic, self.pick_type(lhs), self.pick_type(rhs)) {
                    (true, Ty::Int, Ty::Int) => Ty::Int,
                    (true, Ty::Int | Ty::Float, Ty::Int | Ty::Float) => Ty::Float,
                    _ => Ty::Any,
                }
            }
            ExprKind::Call { callee, .. } => match &callee.kind {
                ExprKind::Field { expr, name } => self.number_method(expr, name),
                _ => Ty::Any,
            },
            _ => self.peek_type(e),
        }
    }

    /// The number a number method of a number receiver gives (`b.potentia(2.0)`).
    fn number_method(&mut self, recv: &ast::Expr, name: &ast::Ident) -> Ty {
        let recv = number(self.pick_type(recv));
        if recv == Ty::Any {
            return Ty::Any;
        }
        let locale = self.modules[self.cur_module()].locale;
        let internal = match intrinsics::resolve(locale, &name.name, &recv) {
            Spelled::Faber(n) => n,
            Spelled::AsWritten => name.name.as_str(),
            Spelled::Unimplemented(_) | Spelled::Foreign => return Ty::Any,
        };
        match Method::from_name(internal) {
            Some(m) => number(super::call::method_type(m, &recv)),
            None => Ty::Any,
        }
    }
}

/// `ty` when it is a number type, else `Any`.
fn number(ty: Ty) -> Ty {
    match ty {
        Ty::Int | Ty::Float => ty,
        _ => Ty::Any,
    }
}
