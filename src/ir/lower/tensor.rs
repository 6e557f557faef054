//! Tensor methods and operators → `Rhs::Op`, with static shape checks (SEM023) where
//! the operand shapes are known from declared types or literals.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::ops::{infer_shape, Op, OpResult, StaticShape};
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind, Literal, TypeArg};

pub fn static_shape(t: &Ty) -> StaticShape {
    match t {
        Ty::Tensor { shape, .. } => shape.clone(),
        _ => None,
    }
}

/// The values of a list literal of natural numbers (`[2, 3]`), if `e` is one.
pub fn literal_dims(e: &ast::Expr) -> Option<Vec<u64>> {
    let ExprKind::List(items) = &e.kind else {
        return None;
    };
    items
        .iter()
        .map(|i| match i.kind {
            ExprKind::Lit(Literal::Int(n)) if n >= 0 => Some(n as u64),
            _ => None,
        })
        .collect()
}

/// The shape written in a type argument `tensor<f32, [2, 3]>`, if fully known.
pub fn type_arg_dims(args: &[TypeArg]) -> Option<Vec<u64>> {
    let TypeArg::Type(t) = args.first()? else {
        return None;
    };
    match &t.kind {
        ast::TypeKind::Path { args, .. } => match args.get(1)? {
            TypeArg::Shape(dims, _) => dims
                .iter()
                .map(|d| match d {
                    ast::Dim::Nat(n, _) => Some(*n),
                    _ => None,
                })
                .collect(),
            _ => None,
        },
        ast::TypeKind::Shaped { dims, .. } => dims
            .iter()
            .map(|d| match d {
                ast::Dim::Nat(n, _) => Some(*n),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// Whether `op` keeps an integer element type (`tensor<numerus, …>`, `ti64`): ops
/// that only move, add, subtract, multiply, negate, clip at zero or sum elements give
/// integers from integers, so their result is integer when every tensor operand is
/// (construction: when the seed is). `media`, `divide`, `scala`, `exp`, … give
/// fractions, and `argmax`/`multinomialis` keep their declared `tf32` results.
fn keeps_int(op: Op, operands: &[(Operand, Ty)]) -> bool {
    let int = |t: &Ty| matches!(t, Ty::Tensor { int: true, .. });
    let tensors = || {
        operands
            .iter()
            .filter(|(_, t)| matches!(t, Ty::Tensor { .. }))
    };
    match op {
        // the seed gives the element kind; `collige` gathers rows of its receiver
        Op::Crea | Op::Strue | Op::Collige => operands.first().is_some_and(|(_, t)| int(t)),
        Op::Forma
        | Op::Transpone
        | Op::Permute
        | Op::Sectio
        | Op::Angusta
        | Op::Concatena
        | Op::Addita
        | Op::Subtrahe
        | Op::Multiplica
        | Op::AdditaBias
        | Op::MatMul
        | Op::Neg
        | Op::Relu
        | Op::Summa
        | Op::SummaAxis
        | Op::MaximumAxis
        | Op::Planata
        | Op::TransponeUltimas => {
            operands.first().is_some_and(|(_, t)| int(t)) && tensors().all(|(_, t)| int(t))
        }
        _ => false,
    }
}

impl Lowerer<'_> {
    /// Emits `op` over already-lowered operands (receiver first) and returns its
    /// value and static type. `shape_arg` is a literal shape operand, when there is one.
    pub fn tensor_op(
        &mut self,
        op: Op,
        operands: Vec<(Operand, Ty)>,
        shape_arg: Option<&[u64]>,
        span: Span,
    ) -> (Operand, Ty) {
        let shapes: Vec<StaticShape> = operands.iter().map(|(_, t)| static_shape(t)).collect();
        let shape = match infer_shape(op, &shapes, shape_arg) {
            Ok(s) => s,
            Err(msg) => {
                self.diags
                    .push(Diagnostic::error(codes::SEM_SHAPE, msg, span));
                None
            }
        };
        let int = keeps_int(op, &operands);
        let any_tensor = Ty::Tensor {
            shape: None,
            int: false,
            wide: false,
        };
        let ty = match op.result() {
            OpResult::Tensor => Ty::Tensor {
                shape,
                int,
                wide: false,
            },
            OpResult::Float if int => Ty::Int,
            OpResult::Float => Ty::Float,
            OpResult::IntList => Ty::List(Box::new(Ty::Int)),
            OpResult::FloatList if int => Ty::List(Box::new(Ty::Int)),
            OpResult::FloatList => Ty::List(Box::new(Ty::Float)),
            OpResult::Int => Ty::Int,
            OpResult::Triple => Ty::Tuple(vec![any_tensor; 3]),
            OpResult::Pair => Ty::Tuple(vec![any_tensor; 2]),
        };
        let ops = operands.into_iter().map(|(o, _)| o).collect();
        if int && !matches!(ty, Ty::Tensor { .. }) {
            // The kernels compute in f64: an integer tensor's sum or element list is
            // made `numerus` values (exact while |x| < 2⁵³, as every element is).
            let raw = self.temp(Rhs::Op(op, ops), Ty::Any, span);
            return (
                self.temp(Rhs::Convert(raw, ty.clone()), ty.clone(), span),
                ty,
            );
        }
        (self.temp(Rhs::Op(op, ops), ty.clone(), span), ty)
    }

    /// A tensor method call `base.name(args)`; `None` when `name` is not a tensor op.
    pub fn tensor_method(
        &mut self,
        base: &ast::Expr,
        name: &ast::Ident,
        spelled: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Operand, Ty)> {
        let op = Op::from_method(&name.name)?;
        if op.arity() != args.len() + 1 {
            self.error(
                codes::SEM_ARITY,
                format!(
                    "`{}` takes {} argument(s) but {} were given",
                    spelled,
                    op.arity() - 1,
                    args.len()
                ),
                name.span,
            );
            return Some((Operand::Const(Const::Nihil), Ty::Any));
        }
        let mut operands = vec![self.expr(base, None)];
        for a in args {
            operands.push(self.expr(a, None));
        }
        let shape_arg = match op {
            Op::Crea | Op::Strue | Op::Forma => args.last().and_then(literal_dims),
            Op::Normalis | Op::Uniformis => args.get(1).and_then(literal_dims),
            _ => None,
        };
        if op == Op::Strue {
            if let (Some(dims), ExprKind::List(items)) = (&shape_arg, &args[0].kind) {
                let want: u64 = dims.iter().product();
                if items.len() as u64 != want {
                    let msg = format!(
                        "`strue` gets {} values for shape {:?} ({want} elements)",
                        items.len(),
                        dims
                    );
                    self.diags
                        .push(Diagnostic::error(codes::SEM_SHAPE, msg, args[0].span));
                }
            }
        }
        Some(self.tensor_op(op, operands, shape_arg.as_deref(), span))
    }

    /// `structa<T>(list)` / `creata<T>(fill)` with the shape of the type argument.
    pub fn tensor_intrinsic(
        &mut self,
        name: &str,
        type_args: &[TypeArg],
        arg: &ast::Expr,
        span: Span,
    ) -> (Operand, Ty) {
        let Some(dims) = type_arg_dims(type_args) else {
            self.error(
                codes::SEM_SHAPE,
                format!("`{name}` needs a tensor type argument with a known shape, like `tensor<f32, [2, 2]>`"),
                span,
            );
            return (Operand::Const(Const::Nihil), Ty::Any);
        };
        let list: Vec<Operand> = dims
            .iter()
            .map(|&d| Operand::Const(Const::Int(d as i64)))
            .collect();
        let shape = self.temp(Rhs::List(list), Ty::List(Box::new(Ty::Int)), span);
        let value = self.expr(arg, None);
        if name == "structa" {
            if let ExprKind::List(items) = &arg.kind {
                let want: u64 = dims.iter().product();
                if items.len() as u64 != want {
                    let msg = format!(
                        "`structa` gets {} values for shape {:?} ({want} elements)",
                        items.len(),
                        dims
                    );
                    self.diags
                        .push(Diagnostic::error(codes::SEM_SHAPE, msg, arg.span));
                }
            }
        }
        let op = if name == "structa" {
            Op::Strue
        } else {
            Op::Crea
        };
        // The type argument stands in for the seed: it gives the element kind.
        let m = self.cur_module();
        let seed = match type_args.first() {
            Some(TypeArg::Type(t)) => self.ty(m, t),
            _ => Ty::Any,
        };
        let operands = vec![
            (Operand::Const(Const::Nihil), seed),
            value,
            (shape, Ty::List(Box::new(Ty::Int))),
        ];
        self.tensor_op(op, operands, Some(&dims), span)
    }

    /// `vacua` for a tensor type: zeros of the declared shape (rank 0 for `[]`), as
    /// `seed.crea(0.0, shape)`. The seed gives the element type (docs/precision.md):
    /// `nihil` for the run's precision, or, for a declared f64 element type
    /// (`Ty::Tensor::wide`), the number 0.0 — an f64 seed, so F64 tensors under every
    /// precision.
    pub fn tensor_vacua(&mut self, ty: &Ty, span: Span) -> Option<(Operand, Ty)> {
        let Ty::Tensor {
            shape: Some(dims),
            wide,
            ..
        } = ty
        else {
            return None;
        };
        let seed = if *wide {
            Const::Float(0.0)
        } else {
            Const::Nihil
        };
        let dims: Option<Vec<u64>> = dims.iter().copied().collect();
        let dims = dims?;
        let list: Vec<Operand> = dims
            .iter()
            .map(|&d| Operand::Const(Const::Int(d as i64)))
            .collect();
        let shape = self.temp(Rhs::List(list), Ty::List(Box::new(Ty::Int)), span);
        let operands = vec![
            (Operand::Const(seed), ty.clone()),
            (Operand::Const(Const::Float(0.0)), Ty::Float),
            (shape, Ty::List(Box::new(Ty::Int))),
        ];
        Some(self.tensor_op(Op::Crea, operands, Some(&dims), span))
    }
}
