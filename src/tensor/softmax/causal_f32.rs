//! The fused causal softmax for f32 tensors (issue 21), forward and backward:
//! `softmax_causalis(s, v)` is the f32 chain `scala(s)` (`RN₃₂(x·s)`), `larva_causalis(v)`,
//! `activatio_softmax` (softmax/row_f32.rs) in one pass, and its VJP the f32 chain
//! `retro_softmax`, the mask's `larva_causalis(·, 0)`, `scala(s)` — the same bits as
//! those unfused f32 ops (tested), the masked entries' exponential computed once per
//! row. Error bounds: those of the unfused ops (row_f32.rs), the scaling by s one more
//! f32 rounding.
//!
//! Layout: `[…, t1, c]` row-major; row r of the flattened rows has query index
//! `i = r mod t1`, keeps entries j ≤ i and masks the others.

use super::row_f32::{row_dot_f32, row_max_f32, PAR_MIN_ROWS_F32};
use crate::tensor::exp_f32::exp_core;
use crate::tensor::par_f32::{par_rows_of, wide};
use crate::tensor::reduce_f32::lane_sum_f64;

/// Rows `first, first + 1, …` of the causal softmax in place: `rows` holds whole rows
/// of `c` scores on entry, the weights on return; row r's query index is
/// `(first + r) mod t1`. `e` is a scratch vector.
#[inline(always)]
pub fn causal_rows_f32(
    rows: &mut [f32],
    c: usize,
    first: usize,
    t1: usize,
    s: f32,
    v: f32,
    e: &mut Vec<f64>,
) {
    if c == 0 || t1 == 0 {
        return;
    }
    for (r, row) in rows.chunks_exact_mut(c).enumerate() {
        let kept = ((first + r) % t1 + 1).min(c);
        // The scaled and masked row, as `scala` and `larva_causalis` write it.
        for z in row[..kept].iter_mut() {
            *z *= s;
        }
        let mut m = row_max_f32(&row[..kept]);
        if kept < c && !m.is_nan() {
            m = if v > m || v.is_nan() { v } else { m };
        }
        let md = m as f64;
        let ev = exp_core(v as f64 - md);
        e.clear();
        e.resize(c, ev);
        for (o, &z) in e.iter_mut().zip(&row[..kept]) {
            *o = exp_core(z as f64 - md);
        }
        let inv = 1.0 / lane_sum_f64(e);
        for (o, &x) in row.iter_mut().zip(e.iter()) {
            *o = (x * inv) as f32;
        }
    }
}

/// `x.softmax_causalis(s, v)` of f32 scores `[…, t1, c]` into `dst` (one length).
pub fn softmax_causal_f32(x: &[f32], dst: &mut [f32], t1: usize, c: usize, s: f32, v: f32) {
    if c == 0 || t1 == 0 {
        return;
    }
    par_rows_of(x, dst, c, c, PAR_MIN_ROWS_F32, |r0, xb, db| {
        db.copy_from_slice(xb);
        let mut e = Vec::with_capacity(c);
        wide(
            #[inline(always)]
            || causal_rows_f32(db, c, r0, t1, s, v, &mut e),
        );
    });
}

/// Row `i` of the causal VJP: `d = Σ gⱼyⱼ` over the entries of `gr` (the whole row,
/// or — fused attention, whose masked weights are zeros — its first i + 1), then
/// `RN₃₂(RN₃₂(yⱼ·(gⱼ − d))·s)` for j ≤ i and `0·s` for the masked entries.
#[inline(always)]
pub fn causal_row_backward_f32(gr: &[f32], yr: &[f32], o: &mut [f32], i: usize, s: f32) {
    let d = row_dot_f32(gr, yr);
    let kept = (i + 1).min(o.len());
    for ((o, &gv), &yv) in o[..kept].iter_mut().zip(gr).zip(yr) {
        *o = ((yv as f64 * (gv as f64 - d)) as f32) * s;
    }
    let zero = 0.0 * s;
    for o in o[kept..].iter_mut() {
        *o = zero;
    }
}

/// `g.retro_softmax_causalis(y, s)` for f32: the VJP of [`softmax_causal_f32`] from the
/// cotangent `g` and the result `y` (`[…, t1, c]`, one length with `dst`).
pub fn softmax_causal_backward_f32(
    g: &[f32],
    y: &[f32],
    dst: &mut [f32],
    t1: usize,
    c: usize,
    s: f32,
) {
    if c == 0 || t1 == 0 {
        return;
    }
    par_rows_of(g, dst, c, c, PAR_MIN_ROWS_F32, |r0, gb, db| {
        let yb = &y[r0 * c..r0 * c + gb.len()];
        wide(
            #[inline(always)]
            || {
                for (k, ((gr, yr), o)) in gb
                    .chunks_exact(c)
                    .zip(yb.chunks_exact(c))
                    .zip(db.chunks_exact_mut(c))
                    .enumerate()
                {
                    causal_row_backward_f32(gr, yr, o, (r0 + k) % t1, s);
                }
            },
        )
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::set_threads;
    use crate::tensor::softmax::row_f32::tests::f32_rows;
    use crate::tensor::softmax::row_f32::{softmax_backward_f32, softmax_rows_f32};

    /// The fused forward and backward give the bits of the unfused f32 chain (scale,
    /// mask, softmax; softmax VJP, mask with 0, scale), for square and wide blocks,
    /// the GPT's −1e9 mask and a mask value near the scores (its exponential not 0),
    /// on one and two threads.
    #[test]
    fn fused_is_the_unfused_chain() {
        for (b, t1, c, v) in [(3, 5, 5, -1e9f32), (2, 4, 7, 0.25), (40, 64, 64, -1e9)] {
            let n = b * t1 * c;
            let x = f32_rows(31, n, 8.0);
            let g = f32_rows(32, n, 2.0);
            let s = 0.125f32 * 1.5;
            let mut z: Vec<f32> = x.iter().map(|&a| a * s).collect();
            for (r, row) in z.chunks_exact_mut(c).enumerate() {
                let i = r % t1;
                for zv in row.iter_mut().skip(i + 1) {
                    *zv = v;
                }
            }
            let mut want = vec![0.0f32; n];
            softmax_rows_f32(&z, &mut want, c);
            let mut gy = vec![0.0f32; n];
            softmax_backward_f32(&g, &want, &mut gy, c);
            for (r, row) in gy.chunks_exact_mut(c).enumerate() {
                for gv in row.iter_mut().skip(r % t1 + 1) {
                    *gv = 0.0;
                }
            }
            let gwant: Vec<f32> = gy.iter().map(|&a| a * s).collect();
            for threads in [1, 2] {
                set_threads(threads);
                let mut y = vec![0.0f32; n];
                softmax_causal_f32(&x, &mut y, t1, c, s, v);
                let mut gx = vec![0.0f32; n];
                softmax_causal_backward_f32(&g, &y, &mut gx, t1, c, s);
                set_threads(0);
                let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&y), bits(&want), "{b}×{t1}×{c}, v = {v}");
                assert_eq!(bits(&gx), bits(&gwant), "{b}×{t1}×{c}, v = {v}");
            }
        }
    }
}
