//! The tensor ops whose registry row says `[eval f]` (src/ir/ops.rs): each function
//! reads its operands and calls its kernels where the row's `[kernel(K i, …)]` form
//! cannot say it — number operands of the broadcasting ops, literal shapes and seeds,
//! results that are numbers or lists, epilogue variants of one kernel, value trees,
//! and a few that check their operands in an order of their own. Dispatch only: the
//! kernels are in `crate::tensor`.
//!
//! Element types (docs/precision.md): the kernels are dtype-aware, so an op on f32
//! tensors runs here as on f64 ones and gives f32 tensors. What this file decides:
//! a constructor (`strue`, `normalis`, `uniformis`) makes its seed tensor's type, or
//! the run's precision for a `nihil` seed; a number operand of an f32 tensor op is not
//! rounded to f32 first (the f64 operation, rounded once: tensor/elementwise_f32.rs);
//! a number standing for a tensor in a VJP helper is taken in the type of the tensor
//! operand beside it.

use std::rc::Rc;

use super::tensor_access::float_list;
use super::tensor_args::{
    axis, coefficients, dims, flag, flat_numbers, heads, int, kr, num, pair_part, range_bound,
    seed, tensor_arg, tensorish, with_tensorish,
};
use super::tensor_trees::{deep_add, zeros_like};
use super::value::Value;
use super::FResult;
use crate::ir::ops::Op;
use crate::tensor::{self as k, DType, Tensor};

type Operands<'a, 'b> = &'a [&'b Value];

pub(super) fn tensor(t: Tensor) -> FResult<Value> {
    Ok(Value::tensor(t))
}

/// The tuple of an op's tensor results, in order.
pub(super) fn tensor_tuple<const N: usize>(ts: [Tensor; N]) -> Value {
    Value::Tuple(Rc::new(ts.into_iter().map(Value::tensor).collect()))
}

pub(super) fn crea(op: Op, a: Operands) -> FResult<Value> {
    tensor(kr(Tensor::full(num(op, a[1])?, &dims(a[2])?))?)
}

/// The element type a constructor gives: its seed tensor's, or the run's precision
/// for a `nihil` seed.
fn made_dtype(seed: &Value) -> DType {
    match seed {
        Value::Tensor(t) => t.dtype(),
        // the lowering's seed for a declared f64 tensor (tensor_dtype::wide_seed)
        Value::Float(_) => DType::F64,
        _ => k::precision(),
    }
}

pub(super) fn strue(_: Op, a: Operands) -> FResult<Value> {
    let mut data = Vec::new();
    flat_numbers(a[1], &mut data)?;
    tensor(kr(Tensor::from_flat_of(
        made_dtype(a[0]),
        data,
        &dims(a[2])?,
    ))?)
}

pub(super) fn sectio(op: Op, a: Operands) -> FResult<Value> {
    let (s, e) = (range_bound(op, a[1])?, range_bound(op, a[2])?);
    tensor(kr(k::slice_rows(tensor_arg(op, a[0])?, s, e))?)
}

pub(super) fn angusta(op: Op, a: Operands) -> FResult<Value> {
    let (s, e) = (range_bound(op, a[2])?, range_bound(op, a[3])?);
    tensor(kr(k::narrow(tensor_arg(op, a[0])?, axis(op, a[1])?, s, e))?)
}

pub(super) fn concatena(op: Op, a: Operands) -> FResult<Value> {
    let (x, y) = (tensor_arg(op, a[0])?, tensor_arg(op, a[1])?);
    tensor(kr(k::concat(&[x, y], axis(op, a[2])?))?)
}

/// `addita`, `subtrahe`, `multiplica`, `divide`: a number operand is one pass over the
/// tensor, no rank-0 tensor to broadcast (the same x ∘ y per element, so the same
/// bits); otherwise the second operand may be a tensor or a number.
pub(super) fn arith(op: Op, a: Operands) -> FResult<Value> {
    let x = tensor_arg(op, a[0])?;
    if x.dtype() == DType::F32 {
        // An f32 tensor and a number: one pass, the number not rounded first.
        if let Some(y) = a[1].as_f64() {
            return tensor(kr(match op {
                Op::Addita => k::add_scalar(x, y),
                Op::Subtrahe => k::sub_scalar(x, y),
                Op::Multiplica => k::scale(x, y),
                _ => k::div_scalar(x, y),
            })?);
        }
    }
    if op != Op::Divide {
        if let Some(y) = a[1].as_f64() {
            return tensor(kr(match op {
                Op::Addita => k::add_scalar(x, y),
                Op::Subtrahe => k::sub_scalar(x, y),
                _ => k::scale(x, y),
            })?);
        }
    }
    tensor(kr(with_tensorish(op, a[1], |y| match op {
        Op::Addita => k::add(x, y),
        Op::Subtrahe => k::sub(x, y),
        Op::Multiplica => k::mul(x, y),
        _ => k::div(x, y),
    })?)?)
}

pub(super) fn summa(op: Op, a: Operands) -> FResult<Value> {
    Ok(Value::Float(k::sum_value(tensor_arg(op, a[0])?)))
}

/// `crux_entropia`, `crux_entropia_indices`: the loss as a number (an f64 number for
/// f32 logits too: computed in f64 from their values, not rounded to f32).
pub(super) fn crux_entropia(op: Op, a: Operands) -> FResult<Value> {
    let (x, t) = (tensor_arg(op, a[0])?, tensor_arg(op, a[1])?);
    Ok(Value::Float(kr(if op == Op::CruxEntropia {
        k::cross_entropy_value(x, t)
    } else {
        k::cross_entropy_indices_value(x, t)
    })?))
}

pub(super) fn attentio_ex_pari(op: Op, a: Operands) -> FResult<Value> {
    // the operands the pair was made from: checked like `attentio`'s
    heads(op, a[3])?;
    pair_part(op, tensor_arg(op, a[0])?, a[4], 0)
}

pub(super) fn gelu_ex_pari(op: Op, a: Operands) -> FResult<Value> {
    pair_part(op, tensor_arg(op, a[0])?, a[1], 0)
}

pub(super) fn normalis(op: Op, a: Operands) -> FResult<Value> {
    let mut rng = k::SplitMix64::new(seed(op, a[1])?);
    tensor(kr(rng.normal_tensor_of(
        made_dtype(a[0]),
        &dims(a[2])?,
        num(op, a[3])?,
        num(op, a[4])?,
    ))?)
}

pub(super) fn uniformis(op: Op, a: Operands) -> FResult<Value> {
    let mut rng = k::SplitMix64::new(seed(op, a[1])?);
    tensor(kr(rng.uniform_tensor_of(made_dtype(a[0]), &dims(a[2])?))?)
}

pub(super) fn multinomialis(op: Op, a: Operands) -> FResult<Value> {
    let mut rng = k::SplitMix64::new(seed(op, a[1])?);
    tensor(kr(rng.multinomial(tensor_arg(op, a[0])?))?)
}

pub(super) fn magnitudines(op: Op, a: Operands) -> FResult<Value> {
    let shape = tensor_arg(op, a[0])?.shape();
    Ok(Value::list(
        shape.iter().map(|&d| Value::Int(d as i64)).collect(),
    ))
}

pub(super) fn planata(op: Op, a: Operands) -> FResult<Value> {
    Ok(float_list(tensor_arg(op, a[0])?))
}

pub(super) fn numerus(op: Op, a: Operands) -> FResult<Value> {
    Ok(Value::Int(tensor_arg(op, a[0])?.numel() as i64))
}

pub(super) fn retro_nihil(_: Op, a: Operands) -> FResult<Value> {
    zeros_like(a[0])
}

pub(super) fn retro_adde(_: Op, a: Operands) -> FResult<Value> {
    deep_add(a[0], a[1])
}

pub(super) fn retro_imple(op: Op, a: Operands) -> FResult<Value> {
    let fill = num(op, a[1])?;
    let like = tensor_arg(op, a[0])?;
    tensor(kr(Tensor::full_of(like.dtype(), fill, like.shape()))?)
}

/// A cotangent `g` made from operand `v` by `tensorish`: when `v` was a number, in
/// the element type of the tensor `like` it goes with (an f32 rank-0 tensor: the
/// number rounded once).
fn cotangent(g: Rc<Tensor>, v: &Value, like: &Tensor) -> FResult<Rc<Tensor>> {
    if like.dtype() == DType::F32 && !matches!(v, Value::Tensor(_)) {
        return Ok(Rc::new(kr(g.to_dtype(DType::F32))?));
    }
    Ok(g)
}

pub(super) fn retro_ad_formam(op: Op, a: Operands) -> FResult<Value> {
    let g = tensorish(op, a[0])?;
    match a[1] {
        Value::Tensor(like) => {
            let g = cotangent(g, a[0], like)?;
            tensor(kr(k::sum_to_shape(&g, like.shape()))?)
        }
        // A number operand of a broadcasting op: its gradient is the total (an f32
        // cotangent: the f64 sum of its elements, not rounded).
        _ => Ok(Value::Float(k::sum_value(&g))),
    }
}

/// `retro_dilata`, `retro_maximum`: the VJPs of the axis reductions.
pub(super) fn retro_axis(op: Op, a: Operands) -> FResult<Value> {
    let g = tensorish(op, a[0])?;
    let like = tensor_arg(op, a[1])?;
    let g = cotangent(g, a[0], like)?;
    let ax = axis(op, a[2])?;
    tensor(kr(if op == Op::RetroMaximum {
        k::max_axis_backward(&g, like, ax)
    } else {
        // a[3]: the reduction was a mean or a sum.
        k::sum_axis_backward(&g, like, ax, flag(op, a[3])?)
    })?)
}

pub(super) fn retro_inpone(op: Op, a: Operands) -> FResult<Value> {
    let like = tensor_arg(op, a[3])?;
    let ax = axis(op, a[1])?;
    let g = tensor_arg(op, a[0])?;
    tensor(kr(k::narrow_backward(g, ax, range_bound(op, a[2])?, like))?)
}

/// `retro_laminatio` and its epilogue `retro_laminatio_adde` (operand 4 the addend).
pub(super) fn retro_laminatio(op: Op, a: Operands) -> FResult<Value> {
    let t = |i: usize| tensor_arg(op, a[i]);
    let addend = if op == Op::RetroLaminatioAdde {
        Some(t(4)?)
    } else {
        None
    };
    let (gx, gg, gb) = kr(k::layernorm_backward_adde(
        t(0)?,
        t(1)?,
        num(op, a[2])?,
        t(3)?,
        addend,
    ))?;
    Ok(tensor_tuple([gx, gg, gb]))
}

pub(super) fn retro_collige(op: Op, a: Operands) -> FResult<Value> {
    let table = tensor_arg(op, a[2])?;
    let g = tensor_arg(op, a[1])?;
    tensor(kr(k::embedding_table_backward(
        g,
        tensor_arg(op, a[0])?,
        table,
    ))?)
}

pub(super) fn retro_permute(op: Op, a: Operands) -> FResult<Value> {
    // The inverse permutation: output axis axes[i] takes input axis i.
    let inv = kr(k::inverse_permutation(&dims(a[1])?))?;
    tensor(kr(k::permute(tensor_arg(op, a[0])?, &inv))?)
}

pub(super) fn retro_pars(op: Op, a: Operands) -> FResult<Value> {
    // The part of g that came from operand `which` (0: x, 1: y) of a concatenation.
    let ax = axis(op, a[3])?;
    let (x, y) = (tensor_arg(op, a[1])?, tensor_arg(op, a[2])?);
    let first = int(op, a[4])? == 0;
    tensor(kr(k::concat_part(tensor_arg(op, a[0])?, x, y, ax, first))?)
}

/// `retro_matmul` and its epilogues `retro_matmul_derivata` (∂a scaled by operand 3)
/// and `retro_matmul_adde` (operand 3 added to ∂a).
pub(super) fn retro_matmul(op: Op, a: Operands) -> FResult<Value> {
    let t = |i: usize| tensor_arg(op, a[i]);
    let post = match op {
        Op::RetroMatMulDerivata => Some(k::VjpPost::Scale(t(3)?)),
        Op::RetroMatMulAdde => Some(k::VjpPost::AddTo(t(3)?)),
        _ => None,
    };
    let (ga, gb) = kr(k::matmul_backward(t(0)?, t(1)?, t(2)?, post))?;
    Ok(tensor_tuple([ga, gb]))
}

/// `matmul_nt`, `matmul_tn`: the product with operand 1 or 0 read transposed.
pub(super) fn matmul_t(op: Op, a: Operands) -> FResult<Value> {
    let trans = if op == Op::MatMulNT {
        k::Trans::B
    } else {
        k::Trans::A
    };
    let (x, y) = (tensor_arg(op, a[0])?, tensor_arg(op, a[1])?);
    tensor(kr(k::matmul_t(x, y, trans))?)
}

pub(super) fn adamw_passus(op: Op, a: Operands) -> FResult<Value> {
    let t = |i: usize| tensor_arg(op, a[i]);
    let c = coefficients(op, a[4], 8)?;
    let coef = k::AdamCoef {
        beta1: c[0],
        one_minus_beta1: c[1],
        beta2: c[2],
        one_minus_beta2: c[3],
        inv_bc2_sqrt: c[4],
        eps: c[5],
        decay: c[6],
        step: c[7],
    };
    let (p, m, v) = kr(k::adamw_step(t(0)?, t(1)?, t(2)?, t(3)?, &coef))?;
    Ok(tensor_tuple([p, m, v]))
}
