//! LayerNorm over the last axis for f32 tensors (issue 21), forward and backward
//! (`laminatio`, `retro_laminatio`, `retro_laminatio_adde`), on row-major slices of
//! rows of `d`, with γ and β of length d.
//!
//! Every statistic and every output is computed in f64 from the exactly widened f32
//! values and rounded to f32 once; the sums run in the fixed lane order of
//! reduce_f32.rs (rows are split between threads as whole rows, the ∂γ/∂β column sums
//! as whole columns, each summed down the rows in order), so no result depends on the
//! thread count.
//!
//! Forward per row: `mean = Σx/d`, `c = x − mean`, `var = Σc²/d` (two passes),
//! `inv = 1/√(var + eps)`, `y = (c·inv)·γ + β`. With `k = d/8 + 4` (the depth of the
//! lane sums) and `a = inv·Σ|x|/d` (a row's size against its spread: the mean's
//! rounding shows in `c = x − mean` when a is large), each `y` is within
//! `½ ulp + k·2⁻⁵¹·(|x̂·γ|·(1 + a) + |γ|·a + |β|)` of the exact LayerNorm of the f32 row.
//!
//! Backward per row: `x̂ = c·inv`, `h = g·γ` (exact), `s1 = Σh`, `s2 = Σh·x̂`,
//! `∂x = inv·(h − s1/d − x̂·(s2/d))`, rounded once: within
//! `½ ulp + k·2⁻⁵⁰·inv·(|h| + Σ|h|/d + |x̂|·Σ|h·x̂|/d)·(1 + a)`; `∂γ = Σ_rows x̂·g` within
//! `½ ulp + (rows + k + 4)·2⁻⁵²·Σ_rows|x̂·g|·(1 + a)`, `∂β = Σ_rows g` within
//! `½ ulp + (rows + 1)·2⁻⁵³·Σ|g|` (tests/f32_rows.rs checks these against numpy).

use crate::tensor::par_f32::{par_blocks, par_rows_of, wide, SendPtrOf};
use crate::tensor::reduce_f32::{lane_sum2_by, lane_sum3_by, lane_sum_by, lane_sum_f32};

/// Input elements from which rows are split between threads.
const PAR_MIN_LN: usize = 1 << 14;

/// `(mean, 1/√(var + eps))` of one row, in f64.
#[inline(always)]
fn row_stats(row: &[f32], eps: f64) -> (f64, f64) {
    let df = row.len() as f64;
    let mean = lane_sum_f32(row) / df;
    let var = lane_sum_by(row, |v| {
        let c = v as f64 - mean;
        c * c
    }) / df;
    (mean, 1.0 / (var + eps).sqrt())
}

/// `x.laminatio(axis, eps, γ, β)` for f32 rows of `d = gamma.len()` (`x` and `y` of one
/// length, a multiple of d ≥ 1; β of length d).
pub fn layernorm_f32(x: &[f32], y: &mut [f32], eps: f64, gamma: &[f32], beta: &[f32]) {
    let d = gamma.len();
    if d == 0 {
        return;
    }
    par_rows_of(x, y, d, d, PAR_MIN_LN, |_, xb, yb| {
        wide(
            #[inline(always)]
            || {
                for (r, o) in xb.chunks_exact(d).zip(yb.chunks_exact_mut(d)) {
                    let (mean, inv) = row_stats(r, eps);
                    for (((o, &v), &g), &b) in o.iter_mut().zip(r).zip(gamma).zip(beta) {
                        *o = (((v as f64 - mean) * inv) * g as f64 + b as f64) as f32;
                    }
                }
            },
        )
    });
}

/// `g.retro_laminatio(x, eps, γ)` for f32: `gx` (x's length) gets ∂x — plus `addend`
/// (x's length, added in f32 after ∂x's rounding: the bits of `addita(r, ∂x)`) when
/// given — and `gg`, `gb` (length d) get ∂γ and ∂β.
#[allow(clippy::too_many_arguments)]
pub fn layernorm_backward_f32(
    g: &[f32],
    x: &[f32],
    eps: f64,
    gamma: &[f32],
    addend: Option<&[f32]>,
    gx: &mut [f32],
    gg: &mut [f32],
    gb: &mut [f32],
) {
    let d = gamma.len();
    if d == 0 {
        return;
    }
    let rows = x.len() / d;
    let df = d as f64;
    // 1. Rows: ∂x, and each row's (mean, inv) for step 2.
    let mut stats = vec![0.0f64; 2 * rows];
    let sp = SendPtrOf::new(stats.as_mut_ptr());
    par_rows_of(x, gx, d, d, PAR_MIN_LN, |r0, xb, ob| {
        let n = xb.len() / d;
        // SAFETY: this block's rows [r0, r0 + n) own stats[2·r0 .. 2·(r0 + n)], disjoint
        // from every other block's; `stats` outlives `par_rows_of`.
        let st = unsafe { sp.part(2 * r0, 2 * n) };
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
                    let (mean, inv) = row_stats(xr, eps);
                    st[2 * k] = mean;
                    st[2 * k + 1] = inv;
                    let s1 = lane_sum2_by(gr, gamma, |a, b| a as f64 * b as f64) / df;
                    let s2 = lane_sum3_by(xr, gr, gamma, |xv, gv, gm| {
                        (gv as f64 * gm as f64) * ((xv as f64 - mean) * inv)
                    }) / df;
                    for (((o, &xv), &gv), &gm) in o.iter_mut().zip(xr).zip(gr).zip(gamma) {
                        let h = gv as f64 * gm as f64;
                        let xh = (xv as f64 - mean) * inv;
                        *o = (inv * (h - s1 - xh * s2)) as f32;
                    }
                }
            },
        );
        if let Some(a) = addend {
            for (o, &v) in ob.iter_mut().zip(&a[r0 * d..(r0 + n) * d]) {
                *o += v;
            }
        }
    });
    // 2. ∂γ (columns 0..d) and ∂β (columns d..2d), each column down the rows in order.
    let stats = &stats;
    let mut sums = vec![0.0f64; 2 * d];
    let cp = SendPtrOf::new(sums.as_mut_ptr());
    let min_par = if rows * d >= PAR_MIN_LN {
        16
    } else {
        usize::MAX
    };
    par_blocks(2 * d, 8, min_par, |start, len| {
        // SAFETY: [start, start + len) lies inside `sums`, no other block covers it.
        let acc = unsafe { cp.part(start, len) };
        wide(
            #[inline(always)]
            || column_sums(g, x, stats, d, start, acc),
        )
    });
    for (o, &s) in gg.iter_mut().zip(&sums[..d]) {
        *o = s as f32;
    }
    for (o, &s) in gb.iter_mut().zip(&sums[d..]) {
        *o = s as f32;
    }
}

/// Columns `start..start + acc.len()` of the 2d (∂γ's, then ∂β's), each summed down the
/// rows in f64 from 0, a row's columns side by side.
#[inline(always)]
fn column_sums(g: &[f32], x: &[f32], stats: &[f64], d: usize, start: usize, acc: &mut [f64]) {
    let end = start + acc.len();
    let gamma_end = end.min(d);
    let beta_start = start.max(d);
    let (ag, ab) = acc.split_at_mut(gamma_end.saturating_sub(start));
    for (r, st) in stats.chunks_exact(2).enumerate() {
        let (mean, inv) = (st[0], st[1]);
        let (gr, xr) = (&g[r * d..(r + 1) * d], &x[r * d..(r + 1) * d]);
        if start < gamma_end {
            let terms = xr[start..gamma_end].iter().zip(&gr[start..gamma_end]);
            for (a, (&xv, &gv)) in ag.iter_mut().zip(terms) {
                *a += ((xv as f64 - mean) * inv) * gv as f64;
            }
        }
        if beta_start < end {
            for (a, &gv) in ab.iter_mut().zip(&gr[beta_start - d..end - d]) {
                *a += gv as f64;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::set_threads;
    use crate::tensor::softmax::row_f32::tests::{f32_rows, ulp};

    /// Forward and backward against the recipe in plain f64 written out here (sums in
    /// index order, a different order from the kernel's lanes), within the stated
    /// bounds; the same bits on one and two threads; the addend added after ∂x's
    /// rounding. An f32-accumulated kernel (errors ~d·2⁻²⁴) fails these bounds.
    #[test]
    fn layernorm_within_its_bounds_at_any_thread_count() {
        let eps = 1e-5;
        for (rows, d) in [(7, 13), (9, 1), (1100, 64), (40, 256)] {
            let x: Vec<f32> = f32_rows(1, rows * d, 6.0).iter().map(|v| v + 3.0).collect();
            let g = f32_rows(2, rows * d, 2.0);
            let gamma: Vec<f32> = f32_rows(3, d, 0.4).iter().map(|v| v + 1.0).collect();
            let beta = f32_rows(4, d, 0.4);
            let addend = f32_rows(5, rows * d, 1.0);
            let n = rows * d;
            let mut out = Vec::new();
            for threads in [1, 2] {
                set_threads(threads);
                let mut y = vec![0.0f32; n];
                layernorm_f32(&x, &mut y, eps, &gamma, &beta);
                let (mut gx, mut gg, mut gb) = (vec![0.0f32; n], vec![0.0f32; d], vec![0.0f32; d]);
                layernorm_backward_f32(&g, &x, eps, &gamma, None, &mut gx, &mut gg, &mut gb);
                let mut gxa = vec![0.0f32; n];
                let (mut gg2, mut gb2) = (vec![0.0f32; d], vec![0.0f32; d]);
                layernorm_backward_f32(
                    &g,
                    &x,
                    eps,
                    &gamma,
                    Some(&addend),
                    &mut gxa,
                    &mut gg2,
                    &mut gb2,
                );
                set_threads(0);
                for i in 0..n {
                    assert_eq!(gxa[i].to_bits(), (addend[i] + gx[i]).to_bits());
                }
                out.push((y, gx, gg, gb));
            }
            assert!(out[0] == out[1], "{rows}×{d}: threads");
            let (y, gx, gg, gb) = &out[0];
            let df = d as f64;
            let (mut wg, mut wb, mut ag, mut abs_b) =
                (vec![0.0; d], vec![0.0; d], vec![0.0; d], vec![0.0; d]);
            for r in 0..rows {
                let xr: Vec<f64> = x[r * d..(r + 1) * d].iter().map(|&v| v as f64).collect();
                let gr: Vec<f64> = g[r * d..(r + 1) * d].iter().map(|&v| v as f64).collect();
                let mean = xr.iter().sum::<f64>() / df;
                let var = xr.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / df;
                let inv = 1.0 / (var + eps).sqrt();
                let xh: Vec<f64> = xr.iter().map(|v| (v - mean) * inv).collect();
                let h: Vec<f64> = (0..d).map(|j| gr[j] * gamma[j] as f64).collect();
                let s1: f64 = h.iter().sum();
                let s2: f64 = (0..d).map(|j| h[j] * xh[j]).sum();
                let s2a: f64 = (0..d).map(|j| (h[j] * xh[j]).abs()).sum();
                for j in 0..d {
                    let t = xh[j] * gamma[j] as f64;
                    let want = t + beta[j] as f64;
                    let got = y[r * d + j] as f64;
                    let tol = ulp(want as f32) / 2.0
                        + 2f64.powi(-44) * (t.abs() + (beta[j] as f64).abs());
                    assert!(
                        (got - want).abs() <= tol,
                        "y {rows}×{d} ({r}, {j}): {got} vs {want}"
                    );
                    let want = inv * (h[j] - s1 / df - xh[j] * (s2 / df));
                    let tol = ulp(want as f32) / 2.0
                        + 2f64.powi(-44)
                            * inv
                            * (h[j].abs() + s1.abs() / df + xh[j].abs() * s2a / df);
                    let got = gx[r * d + j] as f64;
                    assert!(
                        (got - want).abs() <= tol,
                        "gx {rows}×{d} ({r}, {j}): {got} vs {want}"
                    );
                    wg[j] += xh[j] * gr[j];
                    ag[j] += (xh[j] * gr[j]).abs();
                    wb[j] += gr[j];
                    abs_b[j] += gr[j].abs();
                }
            }
            for j in 0..d {
                let tol = ulp(wg[j] as f32) / 2.0 + rows as f64 * 2f64.powi(-48) * ag[j];
                assert!((gg[j] as f64 - wg[j]).abs() <= tol, "gγ {rows}×{d} [{j}]");
                let tol = ulp(wb[j] as f32) / 2.0 + rows as f64 * 2f64.powi(-50) * abs_b[j];
                assert!((gb[j] as f64 - wb[j]).abs() <= tol, "gβ {rows}×{d} [{j}]");
            }
        }
    }
}
