//! The cross-entropies for f32 logits (issue 21), forward and backward, on row-major
//! rows and f64 cotangents (the loss's cotangent is a number, not rounded):
//! `crux_entropia_indices` and `retro_crux_indices` on `[rows, v]` logits and validated
//! class ids (the caller checks them with `Tensor::to_indices`, as the f64 kernels do),
//! and `crux_entropia`, `retro_crux_entropia`, `retro_crux_scopi` with probability
//! targets `t` of the logits' shape (rows of `c`).
//!
//! Every step is in f64 from the exactly widened f32 values, each row's softmax
//! row_f32.rs's recipe (`p = e·(1/s)`, within `δ = (c + 3)·2⁻⁵⁰` relative of the exact
//! softmax); the losses are f64 numbers (`crux_entropia*` of an f32 tensor are not
//! rounded to f32), the gradients are rounded to f32 once. Rows are split between
//! threads as whole rows (a forward's per-row losses are summed afterwards in row order),
//! so no result depends on the thread count. Bounds (n rows):
//! * `crux_entropia_indices`: per row `lse − z[id]`, `lse = m + ln Σ exp(z − m)`, their
//!   mean (the row losses added in row order): within `(v/8 + n + 8)·2⁻⁵²·M` of the
//!   exact mean, M the mean over rows of `|m| + |z[id]| + |lse| + 1` (the 1: s's
//!   relative error is ln s's absolute error);
//! * `retro_crux_indices`: `(p − onehot(id))·(g/n)`, rounded once: within
//!   `½ ulp + (v/8 + 8)·2⁻⁵⁰·(p + 1)·|g|/n`;
//! * `crux_entropia`: `−Σ t·ln(p + 10⁻⁷) / c` over every element (row sums in the fixed
//!   lane order, then the rows in order): within
//!   `(c + N + 8)·2⁻⁵⁰·(Σ|t| + Σ|t·ln(p + 10⁻⁷)|)/c`, N the element count;
//! * `retro_crux_entropia`: `rⱼ = tⱼ·pⱼ/(pⱼ + 10⁻⁷)`, `∂xₖ = (pₖ·Σr − rₖ)·g/c`, rounded
//!   once: within `½ ulp + (c + 4)·2⁻⁴⁸·(pₖ·Σ|r| + |rₖ|)·|g|/c`;
//! * `retro_crux_scopi`: `∂tₖ = −ln(pₖ + 10⁻⁷)·g/c`, rounded once: within
//!   `½ ulp + (c + 4)·2⁻⁵⁰·(1 + |ln(pₖ + 10⁻⁷)|)·|g|/c`.
//!
//! tests/f32_rows.rs checks these bounds against numpy float64 references.

use super::row_f32::{exp_shifted_f64, row_max_f32, PAR_MIN_ROWS_F32};
use crate::tensor::par_f32::{par_rows_of, wide};
use crate::tensor::reduce_f32::{lane_sum2_by, lane_sum_f64};

/// `z.crux_entropia_indices(y)` for f32 logits `z` (`ids.len()` rows of `v`): the mean
/// row loss, rounded to f32 once.
pub fn cross_entropy_indices_f32(z: &[f32], ids: &[usize], v: usize) -> f32 {
    cross_entropy_indices_mean_f32(z, ids, v) as f32
}

/// [`cross_entropy_indices_f32`]'s mean row loss in f64, before the rounding: the loss
/// `crux_entropia_indices` gives for f32 logits.
pub fn cross_entropy_indices_mean_f32(z: &[f32], ids: &[usize], v: usize) -> f64 {
    if v == 0 || ids.is_empty() {
        return f64::NAN;
    }
    let mut losses = vec![0.0f64; ids.len()];
    par_rows_of(z, &mut losses, v, 1, PAR_MIN_ROWS_F32, |r0, zb, lb| {
        let mut e = Vec::with_capacity(v);
        wide(
            #[inline(always)]
            || {
                for (k, (r, l)) in zb.chunks_exact(v).zip(lb.iter_mut()).enumerate() {
                    let m = row_max_f32(r);
                    let s = exp_shifted_f64(r, m, &mut e);
                    *l = (m as f64 + s.ln()) - r[ids[r0 + k]] as f64;
                }
            },
        )
    });
    let mut total = 0.0f64;
    for l in losses {
        total += l;
    }
    total / ids.len() as f64
}

/// `retro_crux_indices(g, z, y)` for f32: `dst = (softmax(z) − onehot(ids))·g/rows`
/// (`dst` of z's length).
pub fn cross_entropy_indices_backward_f32(
    g: f64,
    z: &[f32],
    ids: &[usize],
    v: usize,
    dst: &mut [f32],
) {
    if v == 0 || ids.is_empty() {
        return;
    }
    let scale = g / ids.len() as f64;
    par_rows_of(z, dst, v, v, PAR_MIN_ROWS_F32, |r0, zb, db| {
        let mut e = Vec::with_capacity(v);
        wide(
            #[inline(always)]
            || {
                for (k, (r, o)) in zb.chunks_exact(v).zip(db.chunks_exact_mut(v)).enumerate() {
                    let m = row_max_f32(r);
                    let inv = 1.0 / exp_shifted_f64(r, m, &mut e);
                    for (o, &ev) in o.iter_mut().zip(e.iter()) {
                        *o = ((ev * inv) * scale) as f32;
                    }
                    let id = ids[r0 + k];
                    o[id] = ((e[id] * inv - 1.0) * scale) as f32;
                }
            },
        )
    });
}

/// `x.crux_entropia(t)` for f32 logits and targets of one length (rows of `c ≥ 1`):
/// `−Σ t·ln(p + 10⁻⁷) / c` in f64 (module docs).
pub fn cross_entropy_f32(x: &[f32], t: &[f32], c: usize) -> f64 {
    if c == 0 {
        return f64::NAN;
    }
    let mut rows = vec![0.0f64; x.len() / c];
    par_rows_of(x, &mut rows, c, 1, PAR_MIN_ROWS_F32, |r0, xb, sb| {
        let tb = &t[r0 * c..r0 * c + xb.len()];
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || {
                for ((xr, tr), s) in xb.chunks_exact(c).zip(tb.chunks_exact(c)).zip(sb) {
                    let inv = 1.0 / exp_shifted_f64(xr, row_max_f32(xr), &mut e);
                    *s = lane_sum2_by(&e, tr, |ev, tv| tv as f64 * (ev * inv + 1e-7).ln());
                }
            },
        )
    });
    let mut total = 0.0f64;
    for s in rows {
        total += s;
    }
    -total / c as f64
}

/// `retro_crux_entropia(g, x, t)` for f32: per row `rⱼ = tⱼ·pⱼ/(pⱼ + 10⁻⁷)`, `dst[k] =
/// (pₖ·Σr − rₖ)·g/c` in f64, rounded once (`x`, `t`, `dst` of one length, rows of c).
pub fn cross_entropy_backward_f32(g: f64, x: &[f32], t: &[f32], c: usize, dst: &mut [f32]) {
    if c == 0 {
        return;
    }
    let cf = c as f64;
    par_rows_of(x, dst, c, c, PAR_MIN_ROWS_F32, |r0, xb, db| {
        let tb = &t[r0 * c..r0 * c + xb.len()];
        let (mut e, mut r) = (Vec::with_capacity(c), vec![0.0f64; c]);
        wide(
            #[inline(always)]
            || {
                for ((xr, tr), o) in xb
                    .chunks_exact(c)
                    .zip(tb.chunks_exact(c))
                    .zip(db.chunks_exact_mut(c))
                {
                    let inv = 1.0 / exp_shifted_f64(xr, row_max_f32(xr), &mut e);
                    for ((rv, &ev), &tv) in r.iter_mut().zip(e.iter()).zip(tr) {
                        let q = ev * inv;
                        *rv = tv as f64 * q / (q + 1e-7);
                    }
                    let sr = lane_sum_f64(&r);
                    for ((o, &ev), &rv) in o.iter_mut().zip(e.iter()).zip(&r) {
                        *o = (((ev * inv) * sr - rv) * g / cf) as f32;
                    }
                }
            },
        )
    });
}

/// `retro_crux_scopi(g, x)` for f32: `dst[k] = −ln(pₖ + 10⁻⁷)·g/c` in f64, rounded once
/// (`x`, `dst` of one length, rows of c).
pub fn cross_entropy_targets_backward_f32(g: f64, x: &[f32], c: usize, dst: &mut [f32]) {
    if c == 0 {
        return;
    }
    let cf = c as f64;
    par_rows_of(x, dst, c, c, PAR_MIN_ROWS_F32, |_, xb, db| {
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || {
                for (xr, o) in xb.chunks_exact(c).zip(db.chunks_exact_mut(c)) {
                    let inv = 1.0 / exp_shifted_f64(xr, row_max_f32(xr), &mut e);
                    for (o, &ev) in o.iter_mut().zip(e.iter()) {
                        *o = (-(ev * inv + 1e-7).ln() * g / cf) as f32;
                    }
                }
            },
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::set_threads;
    use crate::tensor::softmax::row_f32::tests::{f32_rows, softmax_ref, ulp};

    /// Loss and gradient against an f64 computation with the correctly rounded exp
    /// (the GPT's 65-token vocabulary, 1 024 rows), within their bounds, and the same
    /// bits on one and two threads.
    #[test]
    fn loss_and_gradient_within_their_bounds() {
        let (rows, v) = (1024, 65);
        let z = f32_rows(41, rows * v, 6.0);
        let ids: Vec<usize> = (0..rows).map(|r| (r * 37 + 11) % v).collect();
        set_threads(1);
        let l1 = cross_entropy_indices_f32(&z, &ids, v);
        let mut g1 = vec![0.0f32; z.len()];
        cross_entropy_indices_backward_f32(0.75, &z, &ids, v, &mut g1);
        set_threads(2);
        let l2 = cross_entropy_indices_f32(&z, &ids, v);
        let mut g2 = vec![0.0f32; z.len()];
        cross_entropy_indices_backward_f32(0.75, &z, &ids, v, &mut g2);
        set_threads(0);
        assert_eq!(l1.to_bits(), l2.to_bits());
        assert_eq!(g1, g2);
        let mut want = 0.0f64;
        for (r, &id) in ids.iter().enumerate() {
            let row = &z[r * v..(r + 1) * v];
            let p = softmax_ref(row);
            want -= p[id].ln();
            for (j, &q) in p.iter().enumerate() {
                let w = (q - if j == id { 1.0 } else { 0.0 }) * 0.75 / rows as f64;
                let got = g1[r * v + j] as f64;
                assert!(
                    (got - w).abs() <= ulp(w as f32) / 2.0 + 1e-14 * 0.75 / rows as f64,
                    "({r}, {j})"
                );
            }
        }
        want /= rows as f64;
        assert!(
            (l1 as f64 - want).abs() <= ulp(want as f32) / 2.0 + 1e-12,
            "{l1} vs {want}"
        );
    }
}
