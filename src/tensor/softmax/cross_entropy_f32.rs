//! The integer-target cross-entropy for f32 logits (issue 21), forward and backward:
//! `crux_entropia_indices` and `retro_crux_indices` on `[rows, v]` row-major logits and
//! validated class ids (the caller checks them with `Tensor::to_indices`, as the f64
//! kernels do).
//!
//! Forward: per row `lse − z[id]` with `lse = m + ln Σ exp(z − m)` (row_f32.rs's
//! recipe, f64 throughout), the row losses summed in f64 in row order, divided by the
//! row count and rounded once: within `½ ulp + 2⁻⁴⁸·Σ_rows(|m| + |ln s| + |z[id]|)/rows`
//! of the exact mean. Backward: `(softmax(z) − onehot(id))·(g/rows)` in f64 (p before
//! its rounding), rounded once: within `½ ulp + 2⁻⁴⁹·(p + 1)·|g|/rows`. Rows are split
//! between threads as whole rows (the forward's per-row losses are summed afterwards in
//! row order), so no result depends on the thread count.

use super::row_f32::{exp_shifted_f64, row_max_f32, PAR_MIN_ROWS_F32};
use crate::tensor::par_f32::{par_rows_of, wide};

/// `z.crux_entropia_indices(y)` for f32 logits `z` (`ids.len()` rows of `v`): the mean
/// row loss, rounded to f32 once.
pub fn cross_entropy_indices_f32(z: &[f32], ids: &[usize], v: usize) -> f32 {
    if v == 0 || ids.is_empty() {
        return f32::NAN;
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
    (total / ids.len() as f64) as f32
}

/// `retro_crux_indices(g, z, y)` for f32: `dst = (softmax(z) − onehot(ids))·g/rows`
/// (`dst` of z's length).
pub fn cross_entropy_indices_backward_f32(
    g: f32,
    z: &[f32],
    ids: &[usize],
    v: usize,
    dst: &mut [f32],
) {
    if v == 0 || ids.is_empty() {
        return;
    }
    let scale = g as f64 / ids.len() as f64;
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
