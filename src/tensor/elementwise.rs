//! Elementwise kernels: binary ops with NumPy broadcasting (`addita`,
//! `subtrahe`, `multiplica`, `divide`), `addita_bias`, and unary maps (`neg`,
//! `scala`, `reciproca`, `exp`, `log`, `sqrt`, `tanh`, `relu` and its mask
//! `positiva`). GELU is its own family (activation/gelu.rs).
//!
//! Each kernel makes one allocation for its result and runs a tight loop the
//! compiler vectorises; the costly transcendental maps run row-parallel above
//! a size threshold (results never depend on the thread count).
//!
//! Element types: `addita`, `subtrahe`, `multiplica`, `divide` (with a tensor or a
//! number), `addita_bias`, `neg`, `scala`, `reciproca`, `log`, `sqrt`, `relu` and
//! `positiva` run an f32 tensor in f32 (elementwise_f32.rs, whose docs give the bounds
//! and the rule for number operands) and an f64 tensor with the code below, unchanged.
//! Two tensor operands of different types promote: the f32 one is widened exactly and
//! the f64 kernel runs. `exp` and `tanh` take f64 tensors only.

use std::mem::MaybeUninit;

use super::elem::widened;
use super::elementwise_f32::{
    add_bias_t32, binary_t32, check_divisor_t32, scalar_t32, unary_t32, BinOp, UnaryOp,
};
use super::par::{build, build_from, PAR_MIN_CHEAP};
use super::shape::{broadcast_shapes, broadcast_strides};
use super::tanh::{map_tanh_cr, tanh_exp, PlainTanh};
use super::{
    alloc, bias_conflict, checked_numel, exp_cr_map, fmt_shape, vec_for_tensor, DType, TResult,
    Tensor, TensorError,
};

/// The broadcast shape of `a` and `b`, or `name`'s `Shape` error.
fn broadcast_named(name: &str, a: &Tensor, b: &Tensor) -> TResult<Vec<usize>> {
    broadcast_shapes(a.shape(), b.shape()).map_err(|e| TensorError {
        message: format!("{name}: {}", e.message),
        ..e
    })
}

#[inline(always)]
fn binary<F: Fn(f64, f64) -> f64 + Copy + Sync>(
    name: &str,
    op: BinOp,
    a: &Tensor,
    b: &Tensor,
    f: F,
) -> TResult<Tensor> {
    if a.dtype() != DType::F64 || b.dtype() != DType::F64 {
        return binary_other(name, op, a, b);
    }
    if a.same_shape(b) {
        let (ad, bd) = (a.data(), b.data());
        let out = build(ad.len(), 1, |start, dst| {
            let src = ad[start..].iter().zip(&bd[start..]);
            for (d, (&x, &y)) in dst.iter_mut().zip(src) {
                d.write(f(x, y));
            }
        })?;
        return Ok(Tensor::shaped_like(a, out));
    }
    let shape = broadcast_named(name, a, b)?;
    let n = checked_numel(&shape)?;
    let mut out = alloc(n)?;
    if b.numel() == 1 && a.numel() == n {
        let y = b.data()[0];
        out.extend(a.data().iter().map(|&x| f(x, y)));
    } else if a.numel() == 1 && b.numel() == n {
        let x = a.data()[0];
        out.extend(b.data().iter().map(|&y| f(x, y)));
    } else if n > 0 {
        let rank = shape.len();
        let sa = broadcast_strides(a.shape(), &shape);
        let sb = broadcast_strides(b.shape(), &shape);
        let (ad, bd) = (a.data(), b.data());
        let inner = shape[rank - 1];
        let (ia, ib) = (sa[rank - 1], sb[rank - 1]);
        let mut idx = vec![0usize; rank];
        let (mut oa, mut ob) = (0usize, 0usize);
        loop {
            match (ia, ib) {
                (1, 1) => out.extend(
                    ad[oa..oa + inner]
                        .iter()
                        .zip(&bd[ob..ob + inner])
                        .map(|(&x, &y)| f(x, y)),
                ),
                (0, 1) => {
                    let x = ad[oa];
                    out.extend(bd[ob..ob + inner].iter().map(|&y| f(x, y)));
                }
                (1, 0) => {
                    let y = bd[ob];
                    out.extend(ad[oa..oa + inner].iter().map(|&x| f(x, y)));
                }
                _ => {
                    let (x, y) = (ad[oa], bd[ob]);
                    out.extend(std::iter::repeat_n(f(x, y), inner));
                }
            }
            let mut ax = rank - 1;
            loop {
                if ax == 0 {
                    return Ok(Tensor::from_parts(shape, out));
                }
                ax -= 1;
                idx[ax] += 1;
                oa += sa[ax];
                ob += sb[ax];
                if idx[ax] < shape[ax] {
                    break;
                }
                oa -= sa[ax] * idx[ax];
                ob -= sb[ax] * idx[ax];
                idx[ax] = 0;
            }
        }
    }
    Ok(Tensor::from_parts(shape, out))
}

/// [`binary`] when an operand is f32: both f32 run the f32 kernel; an f32 and an f64
/// operand promote (the f32 one widened exactly, the f64 kernel).
#[cold]
#[inline(never)]
fn binary_other(name: &str, op: BinOp, a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    if a.dtype() == DType::F32 && b.dtype() == DType::F32 {
        let shape = if a.same_shape(b) {
            a.shape().to_vec()
        } else {
            broadcast_named(name, a, b)?
        };
        let n = checked_numel(&shape)?;
        return binary_t32(op, a, b, &shape, n);
    }
    let (a, b) = (widened(a)?, widened(b)?);
    match op {
        BinOp::Add => add(&a, &b),
        BinOp::Sub => sub(&a, &b),
        BinOp::Mul => mul(&a, &b),
        BinOp::Div => div(&a, &b),
    }
}

/// `a.addita(b)`: `a + b` with broadcasting.
pub fn add(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("addita", BinOp::Add, a, b, |x, y| x + y)
}

/// `a.subtrahe(b)`: `a − b` with broadcasting.
pub fn sub(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("subtrahe", BinOp::Sub, a, b, |x, y| x - y)
}

/// `a.multiplica(b)` / `a ⊙ b`: `a · b` elementwise with broadcasting.
pub fn mul(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("multiplica", BinOp::Mul, a, b, |x, y| x * y)
}

/// `a.divide(b)`: checked quotient; any zero (±0) or non-finite element of
/// `b` is a `Domain` error.
pub fn div(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    if b.dtype() == DType::F32 {
        check_divisor_t32(b)?;
    } else if let Some(&bad) = b.data().iter().find(|v| **v == 0.0 || !v.is_finite()) {
        return Err(TensorError::domain(format!(
            "divide: divisor element {bad}"
        )));
    }
    binary("divide", BinOp::Div, a, b, |x, y| x / y)
}

/// `x.divide(s)` for a number `s`: a zero or non-finite `s` is `divide`'s `Domain`
/// error; else `x / s` per element (an f64 tensor: as `div` by a rank-0 `s`, the same
/// bits).
pub fn div_scalar(x: &Tensor, s: f64) -> TResult<Tensor> {
    if s == 0.0 || !s.is_finite() {
        return Err(TensorError::domain(format!("divide: divisor element {s}")));
    }
    match x.dtype() {
        DType::F64 => unary(x, |v| v / s),
        DType::F32 => scalar_t32(BinOp::Div, x, s),
    }
}

/// `x.addita_bias(b)`: `x[…, C] + b[C]`, the bias added to every last-axis row.
pub fn add_bias(x: &Tensor, b: &Tensor) -> TResult<Tensor> {
    let c = match (x.shape().last(), b.shape()) {
        (Some(&c), &[bc]) if c == bc => c,
        _ => {
            return Err(TensorError::shape(format!(
                "addita_bias: bias {} does not fit the last axis of {} ({})",
                fmt_shape(b.shape()),
                fmt_shape(x.shape()),
                bias_conflict(x.shape(), b.shape())
            )))
        }
    };
    match (x.dtype(), b.dtype()) {
        (DType::F64, DType::F64) => {}
        (DType::F32, DType::F32) => return add_bias_t32(x, b),
        _ => return add_bias(&*widened(x)?, &*widened(b)?),
    }
    let (xd, bd) = (x.data(), b.data());
    let out = build(if c > 0 { xd.len() } else { 0 }, c, |start, dst| {
        let rows = xd[start..start + dst.len()].chunks_exact(c);
        for (drow, row) in dst.chunks_exact_mut(c).zip(rows) {
            for (d, (&v, &w)) in drow.iter_mut().zip(row.iter().zip(bd)) {
                d.write(v + w);
            }
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

#[inline(always)]
fn unary<F: Fn(f64) -> f64 + Copy + Sync>(x: &Tensor, f: F) -> TResult<Tensor> {
    let xd = x.data();
    let out = build(xd.len(), 1, |start, dst| {
        for (d, &v) in dst.iter_mut().zip(&xd[start..]) {
            d.write(f(v));
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// Like `unary` for costly maps: row-parallel above a size threshold.
pub(in crate::tensor) fn unary_par<F: Fn(f64) -> f64 + Copy + Sync>(
    x: &Tensor,
    f: F,
) -> TResult<Tensor> {
    map_slices(x, |src, dst| {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = f(s);
        }
    })
}

/// A result of x's shape written by `f(src, dst)` over blocks of x's elements (with
/// `dst` the block's result elements), on several threads from `PAR_MIN_CHEAP`
/// elements. Each block's result is zero-filled by its own thread before `f` runs,
/// where it is in cache anyway — not the whole buffer up front on one thread.
pub(in crate::tensor) fn map_slices<F: Fn(&[f64], &mut [f64]) + Sync>(
    x: &Tensor,
    f: F,
) -> TResult<Tensor> {
    let xd = x.data();
    let out = build_from(x.numel(), 1, PAR_MIN_CHEAP, |start, dst| {
        for d in dst.iter_mut() {
            d.write(0.0);
        }
        // SAFETY: every element of dst was written just above; MaybeUninit<f64> has
        // f64's layout.
        let dst = unsafe { &mut *(dst as *mut [MaybeUninit<f64>] as *mut [f64]) };
        f(&xd[start..start + dst.len()], dst);
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// `x.neg()`: `−x`.
pub fn neg(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Neg, x);
    }
    unary(x, |v| -v)
}

/// `x.scala(f)`: `x · f`.
pub fn scale(x: &Tensor, factor: f64) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return scalar_t32(BinOp::Mul, x, factor);
    }
    unary(x, |v| v * factor)
}

/// `x.addita(y)` for a number `y`: `x + y` per element.
pub fn add_scalar(x: &Tensor, y: f64) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return scalar_t32(BinOp::Add, x, y);
    }
    unary(x, |v| v + y)
}

/// `x.subtrahe(y)` for a number `y`: `x − y` per element.
pub fn sub_scalar(x: &Tensor, y: f64) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return scalar_t32(BinOp::Sub, x, y);
    }
    unary(x, |v| v - y)
}

/// `x.reciproca()`: `1 / x`; a zero or non-finite element is a `Domain` error.
pub fn reciprocal(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Reciprocal, x);
    }
    if let Some(&bad) = x.data().iter().find(|v| **v == 0.0 || !v.is_finite()) {
        return Err(TensorError::domain(format!("reciproca: element {bad}")));
    }
    unary(x, |v| 1.0 / v)
}

/// `x.exp()`: `eˣ`, correctly rounded (`exp_cr`; glibc's `exp`, which the oracles
/// matched, gives the same bits on every reference point).
/// An f32 tensor: `exp_f32` per element (exp_f32.rs, faithfully rounded).
pub fn exp(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == super::DType::F32 {
        return super::elem::map_f32(x, super::f32ops::exp_f32_map);
    }
    map_slices(x, exp_cr_map)
}

/// `x.log()`: natural log; an element ≤ 0 or NaN is a `Domain` error.
pub fn log(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Log, x);
    }
    if let Some(&bad) = x.data().iter().find(|v| v.is_nan() || **v <= 0.0) {
        return Err(TensorError::domain(format!(
            "log: element {bad} is not positive"
        )));
    }
    unary_par(x, f64::ln)
}

/// `x.sqrt()`: square root (correctly rounded); an element < 0 or NaN is a
/// `Domain` error (−0.0 gives −0.0).
pub fn sqrt(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Sqrt, x);
    }
    if let Some(&bad) = x.data().iter().find(|v| v.is_nan() || **v < 0.0) {
        return Err(TensorError::domain(format!(
            "sqrt: element {bad} is negative"
        )));
    }
    unary(x, f64::sqrt)
}

/// `x.tanh()`: the correctly rounded hyperbolic tangent
/// ([`tanh_cr`](super::tanh_cr)).
/// An f32 tensor: `tanh_f32` per element (tanh/tanh_f32.rs, faithfully rounded).
pub fn tanh(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == super::DType::F32 {
        return super::elem::map_f32(x, super::f32ops::tanh_f32_map);
    }
    map_slices(x, map_tanh_cr::<PlainTanh>)
}

/// tanh through the exp identity ([`tanh_exp`]): `1 − 2/(e^{2t}+1)` for
/// t ≥ 0, `2/(e^{−2t}+1) − 1` for t < 0.
/// An f32 tensor: the same identity in f64, rounded once (tanh/tanh_f32.rs).
pub fn tanh_exp_identity(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == super::DType::F32 {
        return super::elem::map_f32(x, super::tanh::tanh_f32::tanh_per_exp_f32_map);
    }
    unary_par(x, tanh_exp)
}

/// `x.relu()`: `x` where `x > 0` (NaN stays NaN), else `0.0`.
pub fn relu(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Relu, x);
    }
    unary(x, |v| if v > 0.0 || v.is_nan() { v } else { 0.0 })
}

/// `x.positiva()`, ReLU's derivative mask: `1.0` where `x > 0`, else `0.0`.
pub fn positive(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return unary_t32(UnaryOp::Positive, x);
    }
    let mut out = vec_for_tensor(x.numel());
    out.extend(x.data().iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }));
    Tensor::from_flat(out, x.shape())
}
