//! The causal mask `larva_causalis`, and causal attention weights in one pass:
//! `x.softmax_causalis(s, v)` is
//! `x.scala(s).larva_causalis(v).activatio_softmax()` without the two intermediate
//! tensors, and `g.retro_softmax_causalis(y, s)` is that chain's VJP
//! (`retro_softmax`, then the mask's `larva_causalis(·, 0)`, then `scala(s)`) in one
//! pass. Every element goes through the operations of the unfused chain in the same
//! order, so the results are the same bits; what is saved is memory traffic and, in
//! the forward, the work on masked entries: they all hold `v`, so their exponential
//! is computed once per row (and is +0 whenever `v` lies 746 or more below the row
//! maximum, as for the usual `v = −1e9`, where adding it to the sum changes nothing).

use std::mem::MaybeUninit;

use super::causal_f32::{softmax_causal_backward_f32, softmax_causal_f32};
use super::row::exp_or_zero;
use crate::tensor::elem::{common, widened, Elem, Sink};
use crate::tensor::par::build;
use crate::tensor::{
    exp_cr_in_place, f32_vec, fmt_shape, shape_difference, DType, TResult, Tensor, TensorError,
};

/// `(rows of the last-two-axes matrix, row length)`, or a `Shape` error below rank 2.
fn matrix(name: &str, x: &Tensor) -> TResult<(usize, usize)> {
    let r = x.rank();
    if r < 2 {
        return Err(TensorError::shape(format!(
            "{name}: needs rank ≥ 2, found {}",
            fmt_shape(x.shape())
        )));
    }
    Ok((x.shape()[r - 2], x.shape()[r - 1]))
}

/// `softmax(mask(x·s, v))` over the last axis, `mask` setting every entry whose
/// last-axis index j exceeds its second-to-last index i to `v`.
/// An f32 `x` computes in f32 (softmax/causal_f32.rs, `s` and `v` rounded once to f32).
pub fn softmax_causal(x: &Tensor, s: f64, v: f64) -> TResult<Tensor> {
    let (t1, c) = matrix("softmax_causalis", x)?;
    if x.dtype() == DType::F32 {
        return f32_result(x, |dst| {
            softmax_causal_f32(x.data32(), dst, t1, c, s as f32, v as f32)
        });
    }
    let xd = x.data();
    let out = build(x.numel(), c.max(1), |start, dst| {
        if c == 0 {
            return;
        }
        let first = start / c;
        let n = dst.len();
        for (o, &xv) in dst.iter_mut().zip(&xd[start..start + n]) {
            o.write(xv);
        }
        // SAFETY: every element of dst was written just above.
        let rows = unsafe { &mut *(dst as *mut [_] as *mut [f64]) };
        causal_rows(rows, c, first, t1, s, v);
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// Rows `first, first + 1, …` of [`softmax_causal`] in place (`rows` holds whole rows
/// of `c` scores on entry, the weights on return; row r's query index is `r mod t1`,
/// only its entries j ≤ i are read). The kept entries' `x·s − m` of every row go
/// through one vectorised `exp_cr` call, then each row is summed in order.
pub(in crate::tensor) fn causal_rows(
    rows: &mut [f64],
    c: usize,
    first: usize,
    t1: usize,
    s: f64,
    v: f64,
) {
    if c == 0 || t1 == 0 {
        return;
    }
    // Groups of about 4 096 scores, so that the exponentials stay in cache.
    let group = (4096 / c).max(1);
    for (g, rows) in rows.chunks_mut(group * c).enumerate() {
        causal_group(rows, c, first + g * group, t1, s, v);
    }
}

/// [`causal_rows`] for one group of rows.
fn causal_group(rows: &mut [f64], c: usize, first: usize, t1: usize, s: f64, v: f64) {
    let kept = |r: usize| ((first + r) % t1 + 1).min(c);
    let mut z = Vec::with_capacity(rows.len());
    let mut maxima = Vec::with_capacity(rows.len() / c);
    for (r, row) in rows.chunks_exact(c).enumerate() {
        // j ≤ i keep x·s; the other c − kept entries are v.
        let kept = kept(r);
        // Row maximum (NaN if any value is NaN), as `row_max` of the masked row.
        let (mut m, mut nan) = scaled_max(&row[..kept], s);
        if kept < c {
            nan |= v.is_nan();
            m = if v > m { v } else { m };
        }
        if nan {
            m = f64::NAN;
        }
        maxima.push(m);
        z.extend(row[..kept].iter().map(|&xv| xv * s - m));
    }
    exp_cr_in_place(&mut z);
    let mut e = &z[..];
    for (r, row) in rows.chunks_exact_mut(c).enumerate() {
        let kept = kept(r);
        let (er, rest) = e.split_at(kept);
        e = rest;
        let mut sum = 0.0;
        for &x in er {
            sum += x;
        }
        let ev = exp_or_zero(v - maxima[r]);
        // Adding +0.0 to the (never −0.0) sum changes nothing.
        if ev != 0.0 {
            for _ in kept..c {
                sum += ev;
            }
        }
        for (o, &x) in row.iter_mut().zip(er) {
            *o = x / sum;
        }
        let y = ev / sum;
        for o in row[kept..].iter_mut() {
            *o = y;
        }
    }
}

/// `(max_j x_j·s, whether some x_j·s is NaN)` (−∞ for no x), taken on eight lanes
/// where the CPU has AVX-512F. The maximum of non-NaN values is one of them whatever
/// the order, up to the sign of a zero maximum, which changes no result here (`z − m`
/// and `v − m` go into `exp`, and `exp(±0) = 1`).
fn scaled_max(x: &[f64], s: f64) -> (f64, bool) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: AVX-512F is available (checked).
        return unsafe { scaled_max_avx512(x, s) };
    }
    scaled_max_lanes(x, s)
}

/// [`scaled_max`] compiled for AVX-512F.
///
/// # Safety
/// AVX-512F is available.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn scaled_max_avx512(x: &[f64], s: f64) -> (f64, bool) {
    scaled_max_lanes(x, s)
}

/// [`scaled_max`] over eight independent lanes (vectorisable), then the lanes and the
/// remainder.
#[inline(always)]
fn scaled_max_lanes(x: &[f64], s: f64) -> (f64, bool) {
    let mut m = [f64::NEG_INFINITY; 8];
    let mut nan = [false; 8];
    let chunks = x.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for l in 0..8 {
            let z = c[l] * s;
            nan[l] |= z.is_nan();
            m[l] = if z > m[l] { z } else { m[l] };
        }
    }
    let mut mx = f64::NEG_INFINITY;
    let mut any_nan = false;
    for l in 0..8 {
        any_nan |= nan[l];
        mx = if m[l] > mx { m[l] } else { mx };
    }
    for &xv in rest {
        let z = xv * s;
        any_nan |= z.is_nan();
        mx = if z > mx { z } else { mx };
    }
    (mx, any_nan)
}

/// Row `i` of [`softmax_causal_backward`]: `d = Σ_j g_j·y_j` over the entries of `gr`
/// (the whole row, or — fused attention, whose masked weights are zeros — its first
/// i + 1), then `(y_j·(g_j − d))·s` for j ≤ i and `0·s` for the masked entries.
#[inline(always)]
pub(in crate::tensor) fn causal_row_backward(
    gr: &[f64],
    yr: &[f64],
    o: &mut [MaybeUninit<f64>],
    i: usize,
    s: f64,
) {
    let mut d = 0.0;
    for (a, b) in gr.iter().zip(yr) {
        d += a * b;
    }
    let kept = (i + 1).min(o.len());
    for ((o, &gv), &yv) in o[..kept].iter_mut().zip(gr).zip(yr) {
        o.write((yv * (gv - d)) * s);
    }
    let zero = 0.0 * s;
    for o in o[kept..].iter_mut() {
        o.write(zero);
    }
}

/// The VJP of [`softmax_causal`] for `x`, from the cotangent `g` and the result `y`:
/// per row `d = Σ_j g_j·y_j` (every j, left to right), then `(y_j·(g_j − d))·s` for
/// kept entries and `0·s` for masked ones. With `g` and `y` f32, in f32
/// (softmax/causal_f32.rs, `s` rounded once to f32); one of each type: in f64, the f32
/// one widened exactly.
pub fn softmax_causal_backward(g: &Tensor, y: &Tensor, s: f64) -> TResult<Tensor> {
    if g.shape() != y.shape() {
        return Err(TensorError::shape(format!(
            "retro_softmax_causalis: cotangent {} does not match {} ({})",
            fmt_shape(g.shape()),
            fmt_shape(y.shape()),
            shape_difference(g.shape(), y.shape())
        )));
    }
    let (t1, c) = matrix("retro_softmax_causalis", y)?;
    if common(&[g, y]) == DType::F32 {
        return f32_result(y, |dst| {
            softmax_causal_backward_f32(g.data32(), y.data32(), dst, t1, c, s as f32)
        });
    }
    let (g, y) = (widened(g)?, widened(y)?);
    let (gd, yd) = (g.data(), y.data());
    let out = build(y.numel(), c.max(1), |start, dst| {
        if c == 0 {
            return;
        }
        for (r, o) in dst.chunks_exact_mut(c).enumerate() {
            let row = start / c + r;
            let (gr, yr) = (&gd[row * c..(row + 1) * c], &yd[row * c..(row + 1) * c]);
            causal_row_backward(gr, yr, o, row % t1, s);
        }
    })?;
    Ok(Tensor::shaped_like(&y, out))
}

/// An f32 tensor of `like`'s shape whose elements `fill` writes.
fn f32_result(like: &Tensor, fill: impl FnOnce(&mut [f32])) -> TResult<Tensor> {
    let n = like.numel();
    let mut v = f32_vec(n)?;
    v.resize(n, 0.0);
    fill(&mut v);
    Tensor::from_f32(v, like.shape())
}

/// `x.larva_causalis(value)`: a copy of `x` (rank ≥ 2) with every entry whose
/// last-axis index j exceeds its second-to-last index i set to `value` (an f32 tensor:
/// an f32 copy, `value` rounded once).
pub fn causal_mask(x: &Tensor, value: f64) -> TResult<Tensor> {
    let (t1, t2) = matrix("larva_causalis", x)?;
    match x.dtype() {
        crate::tensor::DType::F64 => causal_mask_of::<f64>(x, t1, t2, value),
        crate::tensor::DType::F32 => causal_mask_of::<f32>(x, t1, t2, value as f32),
    }
}

/// [`causal_mask`] of either element type (elem.rs): a copy, then the fills.
fn causal_mask_of<T: Elem>(x: &Tensor, t1: usize, t2: usize, value: T) -> TResult<Tensor> {
    let mut out = T::buf(x.numel())?;
    out.put_slice(T::of(x));
    if t1 > 0 && t2 > 0 {
        for m in out.chunks_exact_mut(t1 * t2) {
            for (i, row) in m.chunks_exact_mut(t2).enumerate() {
                if i + 1 < t2 {
                    row[i + 1..].fill(value);
                }
            }
        }
    }
    Ok(T::finish(x.shape(), out))
}
