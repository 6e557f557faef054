//! Causal attention weights in one pass: `x.softmax_causalis(s, v)` is
//! `x.scala(s).larva_causalis(v).activatio_softmax()` without the two intermediate
//! tensors, and `g.retro_softmax_causalis(y, s)` is that chain's VJP
//! (`retro_softmax`, then the mask's `larva_causalis(·, 0)`, then `scala(s)`) in one
//! pass. Every element goes through the operations of the unfused chain in the same
//! order, so the results are the same bits; what is saved is memory traffic and, in
//! the forward, the work on masked entries: they all hold `v`, so their exponential
//! is computed once per row (and is +0 whenever `v` lies 746 or more below the row
//! maximum, as for the usual `v = −1e9`, where adding it to the sum changes nothing).

use std::mem::MaybeUninit;

use super::elementwise::build;
use super::nn::{exp_or_zero, exp_shifted_sum};
use super::{fmt_shape, TResult, Tensor, TensorError};

/// `(rows of the last-two-axes matrix, row length)`, or a `Shape` error below rank 2.
pub(super) fn matrix(name: &str, x: &Tensor) -> TResult<(usize, usize)> {
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
pub fn softmax_causal(x: &Tensor, s: f64, v: f64) -> TResult<Tensor> {
    let (t1, c) = matrix("softmax_causalis", x)?;
    let xd = x.data();
    let out = build(x.numel(), c.max(1), |start, dst| {
        if c == 0 {
            return;
        }
        let rows = dst.chunks_exact_mut(c);
        for (r, o) in rows.enumerate() {
            let row = start / c + r;
            let xr = &xd[row * c..(row + 1) * c];
            for (o, &xv) in o.iter_mut().zip(xr) {
                o.write(xv);
            }
            // SAFETY: every element of o was written just above.
            let o = unsafe { &mut *(o as *mut [_] as *mut [f64]) };
            causal_row(o, row % t1, s, v);
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// Row `i` of [`softmax_causal`] in place: `row` holds the scores on entry (only
/// entries j ≤ i are read) and the weights on return.
#[inline(always)]
pub(super) fn causal_row(row: &mut [f64], i: usize, s: f64, v: f64) {
    let c = row.len();
    // j ≤ i keep x·s; the other c − kept entries are v.
    let kept = (i + 1).min(c);
    let masked = c - kept;
    // Row maximum (NaN if any value is NaN), as `row_max` of the masked row.
    let mut m = f64::NEG_INFINITY;
    let mut nan = false;
    for &xv in &row[..kept] {
        let z = xv * s;
        nan |= z.is_nan();
        m = if z > m { z } else { m };
    }
    if masked > 0 {
        nan |= v.is_nan();
        m = if v > m { v } else { m };
    }
    if nan {
        m = f64::NAN;
    }
    for x in row[..kept].iter_mut() {
        *x *= s;
    }
    let mut sum = exp_shifted_sum(&mut row[..kept], m);
    let ev = exp_or_zero(v - m);
    // Adding +0.0 to the (never −0.0) sum changes nothing.
    if ev != 0.0 {
        for _ in 0..masked {
            sum += ev;
        }
    }
    for o in row[..kept].iter_mut() {
        *o /= sum;
    }
    let y = ev / sum;
    for o in row[kept..].iter_mut() {
        *o = y;
    }
}

/// Row `i` of [`softmax_causal_backward`]: `d = Σ_j g_j·y_j`, then
/// `(y_j·(g_j − d))·s` for j ≤ i and `0·s` for the masked entries.
#[inline(always)]
pub(super) fn causal_row_backward(
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
/// kept entries and `0·s` for masked ones.
pub fn softmax_causal_backward(g: &Tensor, y: &Tensor, s: f64) -> TResult<Tensor> {
    if g.shape() != y.shape() {
        return Err(TensorError::shape(format!(
            "retro_softmax_causalis: cotangent {} does not match {}",
            fmt_shape(g.shape()),
            fmt_shape(y.shape())
        )));
    }
    let (t1, c) = matrix("retro_softmax_causalis", y)?;
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
    Ok(Tensor::shaped_like(y, out))
}
