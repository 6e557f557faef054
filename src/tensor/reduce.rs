//! Reductions: `summa`, `media` (all elements → rank 0), `summa_axis`,
//! `media_axis`, `maximum_axis` (along one axis), `argmax` (last axis), and their
//! VJPs: `summa_ad_formam` (broadcasting's), `retro_dilata` (the axis sums' and
//! means'), `retro_maximum`.
//!
//! Orders are fixed and sequential so results never depend on threads:
//! `summa` adds left to right starting from 0.0; axis reductions start from
//! the first slice along the axis and add the others in index order (the
//! column-sum recipe of docs/ops.md).
//!
//! An f32 tensor is reduced natively (reduce_f32.rs): `summa` and `media` to a number
//! are f64 sums of its f32 elements in reduce_f32.rs's fixed lane order (not rounded to
//! f32: [`sum_value`], [`mean_value`]; [`sum`] and [`mean`] give that value rounded once
//! as a rank-0 f32 tensor); the axis sums and means are f64 sums in the order above,
//! rounded once; `maximum_axis`, `argmax` and `retro_maximum` are one generic body for
//! both types (elem.rs), exact. An f32 `argmax` gives its indices as an f32 tensor
//! (exact below 2²⁴).

use std::mem::MaybeUninit;

use super::elem::{widened, Elem, Sink};
use super::par::{build_from, PAR_MIN_MAP};
use super::reduce_f32::{
    max_axis_t32, sum_axis_backward_t32, sum_axis_t32, sum_f32, sum_to_shape_t32,
};
use super::{fmt_shape, vec_for_tensor, DType, Out, TResult, Tensor, TensorError};

/// `x.summa()`: in-order sum of every element, starting from 0.0 → rank 0 (an f32
/// tensor: the f64 sum of [`sum_value`] rounded once, a rank-0 f32 tensor).
pub fn sum(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return Tensor::from_f32(vec![sum_f32(x.data32()) as f32], &[]);
    }
    Ok(Tensor::scalar(sum_slice(x.data())))
}

pub(in crate::tensor) fn sum_slice(v: &[f64]) -> f64 {
    let mut acc = 0.0;
    for &e in v {
        acc += e;
    }
    acc
}

/// `x.media()`: `summa ÷ count` → rank 0; an empty tensor is a `Shape` error (an f32
/// tensor: [`mean_value`] rounded once, a rank-0 f32 tensor).
pub fn mean(x: &Tensor) -> TResult<Tensor> {
    let m = mean_value(x)?;
    if x.dtype() == DType::F32 {
        return Tensor::from_f32(vec![m as f32], &[]);
    }
    Ok(Tensor::scalar(m))
}

/// [`sum`]'s one element, without a rank-0 tensor: for an f32 tensor the f64 sum of
/// its elements in reduce_f32.rs's fixed lane order, not rounded.
pub fn sum_value(x: &Tensor) -> f64 {
    if x.dtype() == DType::F32 {
        return sum_f32(x.data32());
    }
    sum_slice(x.data())
}

/// [`mean`]'s one element, without a rank-0 tensor: for an f32 tensor [`sum_value`]
/// divided by the count in f64, not rounded.
pub fn mean_value(x: &Tensor) -> TResult<f64> {
    if x.numel() == 0 {
        return Err(TensorError::shape("media: the tensor has no elements"));
    }
    Ok(sum_value(x) / x.numel() as f64)
}

/// Splits `shape` around `axis` into (outer, size, inner) and the result shape.
fn around(
    name: &str,
    x: &Tensor,
    axis: usize,
    keepdim: bool,
) -> TResult<(usize, usize, usize, Vec<usize>)> {
    let shape = x.shape();
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "{name}: axis {axis} out of range for shape {}",
            fmt_shape(shape)
        )));
    }
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    let mut out_shape = shape.to_vec();
    if keepdim {
        out_shape[axis] = 1;
    } else {
        out_shape.remove(axis);
    }
    Ok((outer, shape[axis], inner, out_shape))
}

/// Folds along the axis: `out = x[.., 0, ..]`, then `out = f(out, x[.., k, ..])`
/// for k = 1, 2, … in order (vectorised over the inner extent).
fn fold_axis<F: Fn(f64, f64) -> f64 + Copy + Sync>(
    x: &Tensor,
    outer: usize,
    d: usize,
    inner: usize,
    f: F,
) -> TResult<Out> {
    let src = x.data();
    // Output elements are independent (each folds its own slices in order): blocks of
    // them on the pool's threads once the whole fold is large.
    let min_par = PAR_MIN_MAP.div_ceil(d.max(1));
    #[cfg(target_arch = "x86_64")]
    let wide = std::arch::is_x86_feature_detected!("avx512f");
    build_from(outer * inner, 1, min_par, |start, dst| {
        let end = start + dst.len();
        let mut pos = start;
        while pos < end {
            // One run of positions inside one outer block: [i0, i1) of block o.
            let (o, i0) = (pos / inner, pos % inner);
            let i1 = inner.min(i0 + (end - pos));
            let block = &src[o * d * inner..(o + 1) * d * inner];
            let acc = &mut dst[pos - start..pos - start + (i1 - i0)];
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX-512F (checked above).
                unsafe { fold_run_avx512(block, inner, d, i0, acc, f) };
                pos += i1 - i0;
                continue;
            }
            fold_run(block, inner, d, i0, acc, f);
            pos += i1 - i0;
        }
    })
}

/// Positions `i0..i0 + acc.len()` of one outer block (`d` slices of `inner`): the
/// first slice's values, then `f(acc, slice k)` for k = 1, 2, … in order — a whole
/// row of positions side by side (vectorised; each position's fold in order).
#[inline(always)]
fn fold_run<F: Fn(f64, f64) -> f64>(
    block: &[f64],
    inner: usize,
    d: usize,
    i0: usize,
    acc: &mut [MaybeUninit<f64>],
    f: F,
) {
    let i1 = i0 + acc.len();
    for (a, &v) in acc.iter_mut().zip(&block[i0..i1]) {
        a.write(v);
    }
    // SAFETY: every element was written just above.
    let acc = unsafe { &mut *(acc as *mut [MaybeUninit<f64>] as *mut [f64]) };
    for k in 1..d {
        let row = &block[k * inner + i0..k * inner + i1];
        for (a, &v) in acc.iter_mut().zip(row) {
            *a = f(*a, v);
        }
    }
}

/// [`fold_run`] compiled for AVX-512 (eight positions per instruction; the same
/// operations per position, in the same order).
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn fold_run_avx512<F: Fn(f64, f64) -> f64>(
    block: &[f64],
    inner: usize,
    d: usize,
    i0: usize,
    acc: &mut [MaybeUninit<f64>],
    f: F,
) {
    fold_run(block, inner, d, i0, acc, f)
}

/// `x.summa_axis(axis, keep)`: sums along `axis` (first slice, then the rest
/// in order); `keep` keeps the axis with size 1. An empty axis sums to 0.0.
pub fn sum_axis(x: &Tensor, axis: usize, keepdim: bool) -> TResult<Tensor> {
    let (outer, d, inner, out_shape) = around("summa_axis", x, axis, keepdim)?;
    if x.dtype() == DType::F32 {
        return sum_axis_t32(x, (outer, d, inner), &out_shape, false);
    }
    if d == 0 {
        return Tensor::zeros(&out_shape);
    }
    let out = fold_axis(x, outer, d, inner, |a, v| a + v)?;
    Ok(Tensor::from_parts(out_shape, out))
}

/// `x.media_axis(axis, keep)`: `summa_axis ÷ size`; an empty axis is a
/// `Shape` error.
pub fn mean_axis(x: &Tensor, axis: usize, keepdim: bool) -> TResult<Tensor> {
    let (outer, d, inner, out_shape) = around("media_axis", x, axis, keepdim)?;
    if d == 0 {
        return Err(TensorError::shape(format!(
            "media_axis: axis {axis} is empty"
        )));
    }
    if x.dtype() == DType::F32 {
        return sum_axis_t32(x, (outer, d, inner), &out_shape, true);
    }
    let mut out = fold_axis(x, outer, d, inner, |a, v| a + v)?;
    let n = d as f64;
    for v in out.iter_mut() {
        *v /= n;
    }
    Ok(Tensor::from_parts(out_shape, out))
}

/// `x.maximum_axis(axis, keep)`: largest element along `axis`; NaN
/// propagates. An empty axis is a `Shape` error.
pub fn max_axis(x: &Tensor, axis: usize, keepdim: bool) -> TResult<Tensor> {
    let (outer, d, inner, out_shape) = around("maximum_axis", x, axis, keepdim)?;
    if d == 0 {
        return Err(TensorError::shape(format!(
            "maximum_axis: axis {axis} is empty"
        )));
    }
    if x.dtype() == DType::F32 {
        return max_axis_t32(x, (outer, d, inner), &out_shape);
    }
    let out = fold_axis(
        x,
        outer,
        d,
        inner,
        |a, v| {
            if v > a || v.is_nan() {
                v
            } else {
                a
            }
        },
    )?;
    Ok(Tensor::from_parts(out_shape, out))
}

/// `x.argmax()`: index of the largest element of each last-axis row (the
/// first one on ties; the first NaN if any) as an integer-valued tensor of
/// shape `shape[..rank-1]`. Rank 0 or an empty last axis is a `Shape` error.
pub fn argmax(x: &Tensor) -> TResult<Tensor> {
    let shape = x.shape();
    let Some((&c, rows_shape)) = shape.split_last() else {
        return Err(TensorError::shape("argmax: a rank-0 tensor has no axis"));
    };
    if c == 0 {
        return Err(TensorError::shape("argmax: the last axis is empty"));
    }
    match x.dtype() {
        DType::F64 => argmax_of::<f64>(x, c, rows_shape),
        DType::F32 => argmax_of::<f32>(x, c, rows_shape),
    }
}

/// [`argmax`] of rows of `c ≥ 1` elements, the indices in `x`'s element type.
fn argmax_of<T: Elem>(x: &Tensor, c: usize, rows_shape: &[usize]) -> TResult<Tensor> {
    let mut out = T::buf(x.numel() / c)?;
    for row in T::of(x).chunks_exact(c) {
        let mut best = 0usize;
        for (j, &v) in row.iter().enumerate() {
            // NaN is the one value unequal to itself.
            #[allow(clippy::eq_op)]
            if v != v {
                best = j;
                break;
            }
            if v > row[best] {
                best = j;
            }
        }
        out.put(T::from_index(best));
    }
    Ok(T::finish(rows_shape, out))
}

/// `g.summa_ad_formam(shape)` *(VJP helper)*: reduces a broadcast result `g`
/// back to an operand's `shape` — the gradient rule of broadcasting. Extra
/// leading axes are summed one at a time (outermost first), then every axis
/// where `shape` has size 1 and `g` does not, left to right; each sum runs in
/// index order as in [`sum_axis`]. `shape` must broadcast to `g`'s shape.
pub fn sum_to_shape(g: &Tensor, shape: &[usize]) -> TResult<Tensor> {
    let gs = g.shape();
    let fits = shape.len() <= gs.len()
        && shape
            .iter()
            .zip(&gs[gs.len() - shape.len()..])
            .all(|(&s, &d)| s == d || s == 1);
    if !fits {
        return Err(TensorError::shape(format!(
            "summa_ad_formam: {} does not broadcast to {} ({})",
            fmt_shape(shape),
            fmt_shape(gs),
            if shape.len() > gs.len() {
                format!("rank {} against rank {}", shape.len(), gs.len())
            } else {
                super::broadcast_conflict(shape, gs)
            }
        )));
    }
    if g.dtype() == DType::F32 {
        return sum_to_shape_t32(g, shape);
    }
    let mut cur = g.clone();
    while cur.rank() > shape.len() {
        cur = sum_axis(&cur, 0, false)?;
    }
    for (axis, &s) in shape.iter().enumerate() {
        if s == 1 && cur.shape()[axis] != 1 {
            cur = sum_axis(&cur, axis, true)?;
        }
    }
    Ok(cur)
}

/// `shape` split at `axis` as (outer, n, inner) for a reduction's backward, checking that
/// the cotangent `g` has the reduced shape's element count (`name` is the op).
fn reduced_split(
    name: &str,
    g: &Tensor,
    shape: &[usize],
    axis: usize,
) -> TResult<(usize, usize, usize)> {
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "{name}: axis {axis} out of range for shape {}",
            fmt_shape(shape)
        )));
    }
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    if g.numel() != outer * inner {
        return Err(TensorError::shape(format!(
            "{name}: the gradient {} has {} elements, the shape {} reduced along axis {axis} has {}",
            fmt_shape(g.shape()),
            g.numel(),
            fmt_shape(shape),
            outer * inner
        )));
    }
    Ok((outer, shape[axis], inner))
}

/// `g.retro_dilata(like, axis, mean)`: the cotangent of `summa_axis` (or, with `mean`,
/// of `media_axis`) along `axis`, broadcast back to `like`'s shape (times 1/n for a
/// mean over n elements).
pub fn sum_axis_backward(g: &Tensor, like: &Tensor, axis: usize, mean: bool) -> TResult<Tensor> {
    let shape = like.shape();
    let (outer, n, inner) = reduced_split("retro_dilata", g, shape, axis)?;
    if g.dtype() == DType::F32 {
        return sum_axis_backward_t32(g, shape, (outer, n, inner), mean);
    }
    let scale = if mean { 1.0 / n as f64 } else { 1.0 };
    let gd = g.data();
    let mut out = vec_for_tensor(like.numel());
    for o in 0..outer {
        let row = &gd[o * inner..(o + 1) * inner];
        for _ in 0..n {
            out.extend(row.iter().map(|v| v * scale));
        }
    }
    Tensor::from_flat(out, shape)
}

/// `g.retro_maximum(x, axis)`, `maximum_axis` backward: the gradient goes to the first
/// maximum along `axis`.
pub fn max_axis_backward(g: &Tensor, x: &Tensor, axis: usize) -> TResult<Tensor> {
    let shape = x.shape();
    let (outer, n, inner) = reduced_split("retro_maximum", g, shape, axis)?;
    match (g.dtype(), x.dtype()) {
        (DType::F64, DType::F64) => {}
        (DType::F32, DType::F32) => return max_axis_backward_of::<f32>(g, x, (outer, n, inner)),
        _ => return max_axis_backward(&*widened(g)?, &*widened(x)?, axis),
    }
    max_axis_backward_of::<f64>(g, x, (outer, n, inner))
}

/// [`max_axis_backward`] of checked operands of one element type.
fn max_axis_backward_of<T: Elem>(
    g: &Tensor,
    x: &Tensor,
    (outer, n, inner): (usize, usize, usize),
) -> TResult<Tensor> {
    let (xd, gd) = (T::of(x), T::of(g));
    let mut out = T::zeros(x.numel())?;
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0;
            for j in 1..n {
                if xd[(o * n + j) * inner + i] > xd[(o * n + best) * inner + i] {
                    best = j;
                }
            }
            if n > 0 {
                out[(o * n + best) * inner + i] = gd[o * inner + i];
            }
        }
    }
    Ok(T::finish(x.shape(), out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The axis folds against a scalar loop written here (first slice, then each
    /// later one in order, per position): every axis of three shapes, rows wide
    /// enough for the vector code and with remainders, NaN and signed zeros among the
    /// values (the maximum takes NaN, and keeps the earlier of equal zeros).
    #[test]
    fn axis_folds_match_the_in_order_loop() {
        let mut r = super::super::SplitMix64::new(9);
        for shape in [vec![37, 133], vec![5, 19, 70], vec![1024, 64]] {
            let n: usize = shape.iter().product();
            let mut v: Vec<f64> = (0..n).map(|_| r.uniform() * 4.0 - 2.0).collect();
            for (i, e) in v.iter_mut().enumerate() {
                match i % 97 {
                    3 => *e = f64::NAN,
                    5 => *e = -0.0,
                    7 => *e = 0.0,
                    _ => {}
                }
            }
            let x = Tensor::from_flat(v.clone(), &shape).unwrap();
            for axis in 0..shape.len() {
                let d = shape[axis];
                let inner: usize = shape[axis + 1..].iter().product();
                let outer = n / (d * inner);
                let fold = |f: &dyn Fn(f64, f64) -> f64| -> Vec<u64> {
                    let mut out = Vec::new();
                    for o in 0..outer {
                        for i in 0..inner {
                            let at = |k: usize| v[(o * d + k) * inner + i];
                            out.push((1..d).fold(at(0), |a, k| f(a, at(k))).to_bits());
                        }
                    }
                    out
                };
                let bits = |t: Tensor| t.data().iter().map(|e| e.to_bits()).collect::<Vec<_>>();
                let sum = fold(&|a, b| a + b);
                let max = fold(&|a, b| if b > a || b.is_nan() { b } else { a });
                assert_eq!(
                    bits(sum_axis(&x, axis, false).unwrap()),
                    sum,
                    "{shape:?} {axis}"
                );
                assert_eq!(
                    bits(max_axis(&x, axis, false).unwrap()),
                    max,
                    "{shape:?} {axis}"
                );
            }
        }
    }
}
