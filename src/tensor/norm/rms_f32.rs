//! RMS normalisation for f32 tensors (issue 21), forward and backward (`rms_norm`,
//! `retro_rms_norm`), on row-major rows of `d = γ.len()`, in f64 from the exactly
//! widened f32 values with the fixed-order sums of reduce_f32.rs, each result rounded
//! to f32 once (rows split between threads as whole rows; ∂γ's columns summed down the
//! rows in order on one thread), so no result depends on the thread count.
//!
//! Forward: `ss = Σx²` (squares exact), `inv = 1/√(ss/d + ε)`, `y = (x·inv)·γ`: within
//! `½ ulp + (d/8 + 6)·2⁻⁵²·|y|` (no cancellation anywhere; d/8 + 3 the depth of the
//! lane sum). Backward: `x̂ = x·inv`, `s = Σ (g·γ)·x̂`, `∂x = inv·(g·γ − x̂·(s/d))`
//! (within `½ ulp + (d/8 + 6)·2⁻⁵¹·inv·(|gγ| + |x̂|·Σ|gγx̂|/d)`), `∂γ = Σ_rows g·x̂`
//! (within `½ ulp + (rows + d/8 + 8)·2⁻⁵²·Σ_rows|g·x̂|`). tests/f32_rows.rs checks these
//! against numpy.

use crate::tensor::par_f32::{par_rows_of, wide, SendPtrOf};
use crate::tensor::reduce_f32::{lane_sum3_by, lane_sum_by};

/// Input elements from which rows are split between threads.
const PAR_MIN_RMS: usize = 1 << 14;

#[inline(always)]
fn inv_rms(row: &[f32], eps: f64) -> f64 {
    let ss = lane_sum_by(row, |v| {
        let v = v as f64;
        v * v
    });
    1.0 / (ss / row.len() as f64 + eps).sqrt()
}

/// `x.rms_norm(axis, ε, γ)` for f32 rows (`x`, `y` of one length, a multiple of d).
pub fn rms_norm_f32(x: &[f32], y: &mut [f32], eps: f64, gamma: &[f32]) {
    let d = gamma.len();
    if d == 0 {
        return;
    }
    par_rows_of(x, y, d, d, PAR_MIN_RMS, |_, xb, yb| {
        wide(
            #[inline(always)]
            || {
                for (r, o) in xb.chunks_exact(d).zip(yb.chunks_exact_mut(d)) {
                    let inv = inv_rms(r, eps);
                    for ((o, &v), &g) in o.iter_mut().zip(r).zip(gamma) {
                        *o = ((v as f64 * inv) * g as f64) as f32;
                    }
                }
            },
        )
    });
}

/// `g.retro_rms_norm(x, ε, γ)` for f32: ∂x into `gx` (x's length), ∂γ into `gg` (d).
pub fn rms_norm_backward_f32(
    g: &[f32],
    x: &[f32],
    eps: f64,
    gamma: &[f32],
    gx: &mut [f32],
    gg: &mut [f32],
) {
    let d = gamma.len();
    if d == 0 {
        return;
    }
    let rows = x.len() / d;
    let df = d as f64;
    let mut invs = vec![0.0f64; rows];
    let ip = SendPtrOf::new(invs.as_mut_ptr());
    par_rows_of(x, gx, d, d, PAR_MIN_RMS, |r0, xb, ob| {
        let n = xb.len() / d;
        // SAFETY: this block's rows [r0, r0 + n) own invs[r0 .. r0 + n], disjoint from
        // every other block's; `invs` outlives `par_rows_of`.
        let iv = unsafe { ip.part(r0, n) };
        let gbk = &g[r0 * d..(r0 + n) * d];
        wide(
            #[inline(always)]
            || {
                for (k, ((xr, gr), o)) in xb
                    .chunks_exact(d)
                    .zip(gbk.chunks_exact(d))
                    .zip(ob.chunks_exact_mut(d))
                    .enumerate()
                {
                    let inv = inv_rms(xr, eps);
                    iv[k] = inv;
                    let m = lane_sum3_by(xr, gr, gamma, |xv, gv, gm| {
                        (gv as f64 * gm as f64) * (xv as f64 * inv)
                    }) / df;
                    for (((o, &xv), &gv), &gm) in o.iter_mut().zip(xr).zip(gr).zip(gamma) {
                        *o = (inv * (gv as f64 * gm as f64 - (xv as f64 * inv) * m)) as f32;
                    }
                }
            },
        )
    });
    let mut acc = vec![0.0f64; d];
    wide(
        #[inline(always)]
        || {
            for (r, &inv) in invs.iter().enumerate() {
                let (xr, gr) = (&x[r * d..(r + 1) * d], &g[r * d..(r + 1) * d]);
                for ((a, &xv), &gv) in acc.iter_mut().zip(xr).zip(gr) {
                    *a += gv as f64 * (xv as f64 * inv);
                }
            }
        },
    );
    for (o, &a) in gg.iter_mut().zip(&acc) {
        *o = a as f32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::set_threads;
    use crate::tensor::softmax::row_f32::tests::{f32_rows, ulp};

    /// Against the recipe in plain f64 (index-order sums), within the stated bounds, the
    /// same bits on one and two threads.
    #[test]
    fn rms_norm_within_its_bounds_at_any_thread_count() {
        let eps = 1e-6;
        for (rows, d) in [(5, 9), (700, 64)] {
            let x = f32_rows(6, rows * d, 4.0);
            let g = f32_rows(7, rows * d, 2.0);
            let gamma: Vec<f32> = f32_rows(8, d, 0.5).iter().map(|v| v + 1.0).collect();
            let mut outs = Vec::new();
            for threads in [1, 2] {
                set_threads(threads);
                let mut y = vec![0.0f32; rows * d];
                rms_norm_f32(&x, &mut y, eps, &gamma);
                let (mut gx, mut gg) = (vec![0.0f32; rows * d], vec![0.0f32; d]);
                rms_norm_backward_f32(&g, &x, eps, &gamma, &mut gx, &mut gg);
                set_threads(0);
                outs.push((y, gx, gg));
            }
            assert!(outs[0] == outs[1]);
            let (y, gx, gg) = &outs[0];
            let (mut wg, mut ag) = (vec![0.0f64; d], vec![0.0f64; d]);
            for r in 0..rows {
                let xr: Vec<f64> = x[r * d..(r + 1) * d].iter().map(|&v| v as f64).collect();
                let gr: Vec<f64> = g[r * d..(r + 1) * d].iter().map(|&v| v as f64).collect();
                let inv = 1.0 / (xr.iter().map(|v| v * v).sum::<f64>() / d as f64 + eps).sqrt();
                let h: Vec<f64> = (0..d).map(|j| gr[j] * gamma[j] as f64).collect();
                let s: f64 = (0..d).map(|j| h[j] * xr[j] * inv).sum();
                let sa: f64 = (0..d).map(|j| (h[j] * xr[j] * inv).abs()).sum();
                for j in 0..d {
                    let want = xr[j] * inv * gamma[j] as f64;
                    let got = y[r * d + j] as f64;
                    assert!(
                        (got - want).abs() <= ulp(want as f32) / 2.0 + 2f64.powi(-46) * want.abs()
                    );
                    let want = inv * (h[j] - xr[j] * inv * (s / d as f64));
                    let tol = ulp(want as f32) / 2.0
                        + 2f64.powi(-44) * inv * (h[j].abs() + (xr[j] * inv).abs() * sa / d as f64);
                    assert!((gx[r * d + j] as f64 - want).abs() <= tol, "gx ({r}, {j})");
                    wg[j] += gr[j] * xr[j] * inv;
                    ag[j] += (gr[j] * xr[j] * inv).abs();
                }
            }
            for j in 0..d {
                let tol = ulp(wg[j] as f32) / 2.0 + rows as f64 * 2f64.powi(-48) * ag[j];
                assert!((gg[j] as f64 - wg[j]).abs() <= tol, "gγ [{j}]");
            }
        }
    }
}
