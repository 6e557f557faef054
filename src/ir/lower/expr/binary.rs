//! Binary operators: `et`/`aut` and `vel` become `If`s (the right operand runs
//! only when it decides the result), `·` and `⊙` on tensors become tensor ops, and
//! every other operator is one `Prim::Binary` with its result type.

use super::Lowered;
use crate::ir::lower::Lowerer;
use crate::ir::ops::Op;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast;

impl Lowerer<'_> {
    pub(super) fn binary(
        &mut self,
        op: BinOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Lowered {
        match op {
            BinOp::Et | BinOp::Aut => {
                let (l, _) = self.expr(lhs, None);
                let dst = self.new_slot("", Ty::Bool);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(l),
                    span: lhs.span,
                });
                self.push_block();
                let (r, _) = self.expr(rhs, None);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(r),
                    span: rhs.span,
                });
                let eval_rhs = self.pop_block();
                let (then, otherwise) = if op == BinOp::Et {
                    (eval_rhs, Block::default())
                } else {
                    (Block::default(), eval_rhs)
                };
                self.emit(Stmt::If {
                    cond: Operand::Slot(dst),
                    then,
                    otherwise,
                });
                (Operand::Slot(dst), Ty::Bool)
            }
            BinOp::Vel => {
                let (l, lt) = self.expr(lhs, None);
                let dst = self.new_slot("", Ty::Any);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(l),
                    span: lhs.span,
                });
                let is_nihil = self.temp(
                    Rhs::Is(Operand::Slot(dst), IsTest::Nihil, false),
                    Ty::Bool,
                    span,
                );
                // `T ∪ nihil vel b` has the type T.
                let rest = match &lt {
                    Ty::Union(ms) => {
                        let rest: Vec<&Ty> = ms.iter().filter(|t| **t != Ty::Nihil).collect();
                        (rest.len() == 1).then(|| rest[0].clone())
                    }
                    _ => None,
                };
                self.push_block();
                let (mut r, rt) = self.expr(rhs, None);
                // A `valor` result boxes the fallback (`accipe(k) vel nihil` is a JSON
                // null, as `fixum valor v ← accipe(k)` is), so the slot never holds a
                // bare `nihil`.
                if let Some(t @ Ty::Json { .. }) = &rest {
                    if !matches!(rt, Ty::Json { .. }) {
                        r = self.temp(Rhs::Coerce(r, t.clone()), t.clone(), rhs.span);
                    }
                }
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(r),
                    span: rhs.span,
                });
                let then = self.pop_block();
                self.emit(Stmt::If {
                    cond: is_nihil,
                    then,
                    otherwise: Block::default(),
                });
                let ty = rest.unwrap_or(rt);
                self.cx().slots[dst.0 as usize].ty = ty.clone();
                (Operand::Slot(dst), ty)
            }
            _ => {
                let (l, lt) = self.expr(lhs, None);
                let (r, rt) = self.expr(rhs, None);
                let lt_tensor = matches!(lt, Ty::Tensor { .. });
                let rt_tensor = matches!(rt, Ty::Tensor { .. });
                match op {
                    BinOp::Dot if lt_tensor && rt_tensor => {
                        return self.tensor_op(Op::MatMul, vec![(l, lt), (r, rt)], None, span);
                    }
                    BinOp::Hadamard if lt_tensor => {
                        return self.tensor_op(Op::Multiplica, vec![(l, lt), (r, rt)], None, span);
                    }
                    BinOp::Hadamard if rt_tensor => {
                        return self.tensor_op(Op::Multiplica, vec![(r, rt), (l, lt)], None, span);
                    }
                    _ => {}
                }
                self.check_data_comparison(op, &lt, &rt, span);
                let ty = binary_type(op, &lt, &rt);
                (
                    self.temp(Rhs::Prim(Prim::Binary(op), vec![l, r]), ty.clone(), span),
                    ty,
                )
            }
        }
    }
}

fn binary_type(op: BinOp, l: &Ty, r: &Ty) -> Ty {
    use BinOp::*;
    match op {
        Eq | Ne | NumEq | NumNe | Lt | Gt | Le | Ge => Ty::Bool,
        Add | Sub | Mul | Div | Rem | Dot | Hadamard => match (l, r) {
            (Ty::Int, Ty::Int) => Ty::Int,
            (Ty::Float, Ty::Int | Ty::Float) | (Ty::Int, Ty::Float) => Ty::Float,
            (Ty::Text, Ty::Text) if op == Add => Ty::Text,
            _ => Ty::Any,
        },
        BitAnd | BitOr | BitXor => match (l, r) {
            (Ty::Bool, Ty::Bool) => Ty::Bool,
            (Ty::Int, Ty::Int) => Ty::Int,
            _ => Ty::Any,
        },
        Shl | Shr => Ty::Int,
        Et | Aut => Ty::Bool,
        Vel => Ty::Any,
    }
}
