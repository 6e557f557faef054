//! The softmax family for f32 tensors (issue 21), on row-major slices with rows of `c`
//! elements: softmax and log-softmax and their VJPs, and the one-row recipes the causal
//! softmax (causal_f32.rs) and the cross-entropy (cross_entropy_f32.rs) share.
//!
//! Recipe per row, every step after the maximum in f64 from the exactly widened f32
//! values: `m = max x` (f32, exact; NaN if the row holds a NaN), `eⱼ = exp(xⱼ − m)`
//! (`exp_f32::exp_core`, 2⁻⁵⁰ relative), `s = Σ eⱼ` in the fixed lane order of
//! reduce_f32.rs, `yⱼ = eⱼ·(1/s)` rounded to f32 once.
//!
//! Error bounds (c the row length):
//! * softmax: each `yⱼ` within `½ ulp + (c + 3)·2⁻⁵⁰·yⱼ` of the exact softmax of the
//!   f32 row — **faithfully rounded** (tested against an f64 softmax with the
//!   correctly rounded exp);
//! * log-softmax: `(xⱼ − m) − ln s` in f64, rounded once: within
//!   `½ ulp + 2⁻⁴⁷·(|xⱼ − m| + |ln s| + 1)` (the 1: s's relative error is ln s's
//!   absolute error);
//! * the VJPs: `d = Σ gⱼyⱼ` (products exact in f64, fixed lane order), then
//!   `yⱼ·(gⱼ − d)` (softmax) or `gⱼ − pⱼ·Σg` (log-softmax) in f64, rounded once: the
//!   softmax VJP within `½ ulp + 2⁻⁴⁷·(|yⱼ|·Σ|gₖyₖ| + |∂xⱼ|)`, the log-softmax VJP within
//!   `½ ulp + (c + 4)·2⁻⁵⁰·(pⱼ·Σ|gₖ| + |gⱼ|)` (p's own error included).
//!
//! tests/f32_rows.rs checks these bounds against numpy float64 references.
//!
//! Rows are independent and split between threads as whole rows, so no result depends
//! on the thread count; the arithmetic is the same at every vector width.

use crate::tensor::exp_f32::exp_core;
use crate::tensor::par_f32::{par_rows_of, wide};
use crate::tensor::reduce_f32::{lane_sum2_by, lane_sum_f32, lane_sum_f64};

/// Input elements from which the row kernels split rows between threads.
pub(in crate::tensor) const PAR_MIN_ROWS_F32: usize = 1 << 14;

/// Largest element of a non-empty f32 row, NaN if any element is NaN (eight running
/// maxima; max is exact in any order, only the sign of a zero maximum may depend on
/// it, which no result observes: `x − (±0)` and `exp` give the same bits).
#[inline(always)]
pub(in crate::tensor) fn row_max_f32(row: &[f32]) -> f32 {
    let mut lanes = [f32::NEG_INFINITY; 8];
    let mut nan = [false; 8];
    let chunks = row.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for ((l, n), &v) in lanes.iter_mut().zip(nan.iter_mut()).zip(c) {
            *l = if v > *l { v } else { *l };
            *n |= v.is_nan();
        }
    }
    for ((l, n), &v) in lanes.iter_mut().zip(nan.iter_mut()).zip(rest) {
        *l = if v > *l { v } else { *l };
        *n |= v.is_nan();
    }
    if nan.iter().any(|&n| n) {
        return f32::NAN;
    }
    lanes
        .iter()
        .fold(f32::NEG_INFINITY, |a, &b| if b > a { b } else { a })
}

/// `e[j] = exp(row[j] − m)` in f64 (e cleared and refilled) and their fixed-order sum.
#[inline(always)]
pub(in crate::tensor) fn exp_shifted_f64(row: &[f32], m: f32, e: &mut Vec<f64>) -> f64 {
    let m = m as f64;
    // A plain loop, not `extend(map(…))`: the exponentials must be inlined into the
    // caller's `wide` copy (an out-of-line `extend` runs as baseline code).
    e.clear();
    e.resize(row.len(), 0.0);
    for (o, &x) in e.iter_mut().zip(row) {
        *o = exp_core(x as f64 - m);
    }
    lane_sum_f64(e)
}

/// Softmax of one f32 row into `out` (the row's length), `e` a scratch vector (the
/// module's recipe).
#[inline(always)]
pub(in crate::tensor) fn softmax_row_f32(row: &[f32], out: &mut [f32], e: &mut Vec<f64>) {
    if row.is_empty() {
        return;
    }
    let m = row_max_f32(row);
    let s = exp_shifted_f64(row, m, e);
    let inv = 1.0 / s;
    for (o, &v) in out.iter_mut().zip(e.iter()) {
        *o = (v * inv) as f32;
    }
}

/// `activatio_softmax` of f32 rows of length `c` (`src` and `dst` of one length, a
/// multiple of c).
pub fn softmax_rows_f32(src: &[f32], dst: &mut [f32], c: usize) {
    if c == 0 {
        return;
    }
    par_rows_of(src, dst, c, c, PAR_MIN_ROWS_F32, |_, s, d| {
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || {
                for (r, o) in s.chunks_exact(c).zip(d.chunks_exact_mut(c)) {
                    softmax_row_f32(r, o, &mut e);
                }
            },
        )
    });
}

/// `log_softmax` of f32 rows of length `c`: `(xⱼ − m) − ln s` in f64, rounded once.
pub fn log_softmax_rows_f32(src: &[f32], dst: &mut [f32], c: usize) {
    if c == 0 {
        return;
    }
    par_rows_of(src, dst, c, c, PAR_MIN_ROWS_F32, |_, s, d| {
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || {
                for (r, o) in s.chunks_exact(c).zip(d.chunks_exact_mut(c)) {
                    let m = row_max_f32(r);
                    let ls = exp_shifted_f64(r, m, &mut e).ln();
                    let m = m as f64;
                    for (o, &v) in o.iter_mut().zip(r) {
                        *o = ((v as f64 - m) - ls) as f32;
                    }
                }
            },
        )
    });
}

/// `Σ gⱼ·yⱼ` of one row in f64 (each product exact), fixed order.
#[inline(always)]
pub(in crate::tensor) fn row_dot_f32(g: &[f32], y: &[f32]) -> f64 {
    lane_sum2_by(g, y, |a, b| a as f64 * b as f64)
}

/// `retro_softmax`, the softmax VJP from its result `y`: per row `d = Σ gⱼyⱼ`, then
/// `yⱼ·(gⱼ − d)` in f64, rounded once. `g`, `y`, `dst` of one length, rows of `c`.
pub fn softmax_backward_f32(g: &[f32], y: &[f32], dst: &mut [f32], c: usize) {
    if c == 0 {
        return;
    }
    par_rows_of(g, dst, c, c, PAR_MIN_ROWS_F32, |r0, gb, db| {
        let yb = &y[r0 * c..r0 * c + gb.len()];
        wide(
            #[inline(always)]
            || {
                for ((gr, yr), o) in gb
                    .chunks_exact(c)
                    .zip(yb.chunks_exact(c))
                    .zip(db.chunks_exact_mut(c))
                {
                    let d = row_dot_f32(gr, yr);
                    for ((o, &gv), &yv) in o.iter_mut().zip(gr).zip(yr) {
                        *o = (yv as f64 * (gv as f64 - d)) as f32;
                    }
                }
            },
        )
    });
}

/// `retro_log_softmax`, the log-softmax VJP from its input `x`: per row
/// `gⱼ − pⱼ·Σg` with `p = softmax(x)` in f64 (before its rounding), rounded once.
pub fn log_softmax_backward_f32(g: &[f32], x: &[f32], dst: &mut [f32], c: usize) {
    if c == 0 {
        return;
    }
    par_rows_of(g, dst, c, c, PAR_MIN_ROWS_F32, |r0, gb, db| {
        let xb = &x[r0 * c..r0 * c + gb.len()];
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || {
                for ((gr, xr), o) in gb
                    .chunks_exact(c)
                    .zip(xb.chunks_exact(c))
                    .zip(db.chunks_exact_mut(c))
                {
                    let m = row_max_f32(xr);
                    let inv = 1.0 / exp_shifted_f64(xr, m, &mut e);
                    let sg = lane_sum_f32(gr);
                    for ((o, &gv), &ev) in o.iter_mut().zip(gr).zip(e.iter()) {
                        *o = (gv as f64 - (ev * inv) * sg) as f32;
                    }
                }
            },
        )
    });
}

#[cfg(test)]
pub(in crate::tensor) mod tests {
    use super::*;
    use crate::tensor::{exp_cr, set_threads, SplitMix64};

    pub(in crate::tensor) fn f32_rows(seed: u64, n: usize, scale: f64) -> Vec<f32> {
        let mut r = SplitMix64::new(seed);
        (0..n)
            .map(|_| ((r.uniform() - 0.5) * scale) as f32)
            .collect()
    }

    pub(in crate::tensor) fn ulp(y: f32) -> f64 {
        let a = y.abs();
        (f32::from_bits(a.to_bits() + 1) as f64 - a as f64).max(f32::from_bits(1) as f64)
    }

    /// Softmax of an f32 row in f64 with the correctly rounded exp (a reference to
    /// 2⁻⁵⁰ relative, independent of the kernel's exp and its summation order).
    pub(in crate::tensor) fn softmax_ref(row: &[f32]) -> Vec<f64> {
        let m = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
        let e: Vec<f64> = row.iter().map(|&x| exp_cr(x as f64 - m)).collect();
        let s: f64 = e.iter().sum();
        e.iter().map(|v| v / s).collect()
    }

    /// Softmax rows (lengths around the lane width, the GPT's 64 and a vocabulary of
    /// 65; wide-ranging logits) are faithful: within one ulp of the f64 reference, and
    /// the same bits on one and on two threads.
    #[test]
    fn softmax_is_faithful_at_any_thread_count() {
        for (rows, c, scale) in [(3, 1, 1.0), (50, 7, 5.0), (600, 64, 20.0), (300, 65, 60.0)] {
            let x = f32_rows(c as u64, rows * c, scale);
            let (mut a, mut b) = (vec![0.0f32; x.len()], vec![0.0f32; x.len()]);
            set_threads(1);
            softmax_rows_f32(&x, &mut a, c);
            set_threads(2);
            softmax_rows_f32(&x, &mut b, c);
            set_threads(0);
            assert_eq!(a, b);
            for (r, row) in x.chunks_exact(c).enumerate() {
                for (j, want) in softmax_ref(row).into_iter().enumerate() {
                    let got = a[r * c + j];
                    assert!(
                        (got as f64 - want).abs() < ulp(want as f32),
                        "{rows}×{c} row {r} [{j}]: {got:e} vs {want:e}"
                    );
                }
            }
        }
        // A NaN makes its whole row NaN; other rows keep their values.
        let mut x = f32_rows(5, 16, 1.0);
        x[3] = f32::NAN;
        let mut y = vec![0.0f32; 16];
        softmax_rows_f32(&x, &mut y, 8);
        assert!(y[..8].iter().all(|v| v.is_nan()) && y[8..].iter().all(|v| v.is_finite()));
    }

    /// Log-softmax within its bound of the f64 reference ln(softmax); the VJPs within
    /// theirs of the f64 formulas on the reference softmax.
    #[test]
    fn log_softmax_and_the_vjps_within_their_bounds() {
        let (rows, c) = (200, 33);
        let x = f32_rows(8, rows * c, 12.0);
        let g = f32_rows(9, rows * c, 2.0);
        let mut ls = vec![0.0f32; x.len()];
        log_softmax_rows_f32(&x, &mut ls, c);
        let mut y = vec![0.0f32; x.len()];
        softmax_rows_f32(&x, &mut y, c);
        let (mut gs, mut gl) = (vec![0.0f32; x.len()], vec![0.0f32; x.len()]);
        softmax_backward_f32(&g, &y, &mut gs, c);
        log_softmax_backward_f32(&g, &x, &mut gl, c);
        for r in 0..rows {
            let row = &x[r * c..(r + 1) * c];
            let (gr, yr) = (&g[r * c..(r + 1) * c], &y[r * c..(r + 1) * c]);
            let p = softmax_ref(row);
            let d: f64 = gr.iter().zip(yr).map(|(&a, &b)| a as f64 * b as f64).sum();
            let da: f64 = gr
                .iter()
                .zip(yr)
                .map(|(&a, &b)| (a as f64 * b as f64).abs())
                .sum();
            let sg: f64 = gr.iter().map(|&v| v as f64).sum();
            let sa: f64 = gr.iter().map(|&v| (v as f64).abs()).sum();
            for j in 0..c {
                let want = p[j].ln();
                let got = ls[r * c + j] as f64;
                assert!(
                    (got - want).abs() <= ulp(want as f32) / 2.0 + 1e-12 * (1.0 + want.abs()),
                    "ls"
                );
                let want = yr[j] as f64 * (gr[j] as f64 - d);
                let tol = ulp(want as f32) / 2.0 + 1e-13 * (yr[j] as f64) * da + 1e-15 * want.abs();
                assert!((gs[r * c + j] as f64 - want).abs() <= tol, "softmax vjp");
                let want = gr[j] as f64 - p[j] * sg;
                let tol = ulp(want as f32) / 2.0 + 1e-13 * p[j] * sa + 1e-13 * gr[j].abs() as f64;
                assert!(
                    (gl[r * c + j] as f64 - want).abs() <= tol,
                    "log-softmax vjp"
                );
            }
        }
    }
}
