//! The embedding gather `collige` and its VJP `retro_collige` for f32 tables (issue 21),
//! on slices, with ids already validated by the caller (`Tensor::to_indices`, as the
//! f64 kernels do).
//!
//! The gather copies rows (exact). The scatter-add sums, for each table row, the
//! cotangent rows of its ids in f64 in token order, and rounds once: within
//! `½ ulp + k·2⁻⁵³·Σ|terms|` for an id that occurs k times (an f32 running sum, as the
//! f64 kernel's, would err by up to k·2⁻²⁴). The ids are grouped by a stable counting
//! sort, so only one d-long f64 accumulator is needed, whatever the vocabulary; the
//! order of each row's terms is the token order, so the result is deterministic.

/// `e.collige(ids)`: `out` (`ids.len()·d` elements) gets the rows `table[id]` (rows of
/// `d`).
pub fn embedding_f32(table: &[f32], d: usize, ids: &[usize], out: &mut [f32]) {
    if d == 0 {
        return;
    }
    for (&i, o) in ids.iter().zip(out.chunks_exact_mut(d)) {
        o.copy_from_slice(&table[i * d..(i + 1) * d]);
    }
}

/// The `collige` VJP: `out` (`vocab·d`, overwritten) gets, for each row v, the sum of the
/// cotangent rows `g[t]` (rows of `d`) with `ids[t] = v`, in f64 in token order, rounded
/// once (zeros for ids that do not occur).
pub fn embedding_backward_f32(ids: &[usize], g: &[f32], d: usize, vocab: usize, out: &mut [f32]) {
    out.fill(0.0);
    if d == 0 || ids.is_empty() {
        return;
    }
    // Stable counting sort of the token positions by id.
    let mut start = vec![0usize; vocab + 1];
    for &i in ids {
        start[i + 1] += 1;
    }
    for v in 0..vocab {
        start[v + 1] += start[v];
    }
    let mut next = start.clone();
    let mut order = vec![0usize; ids.len()];
    for (t, &i) in ids.iter().enumerate() {
        order[next[i]] = t;
        next[i] += 1;
    }
    let mut acc = vec![0.0f64; d];
    for v in 0..vocab {
        let tokens = &order[start[v]..start[v + 1]];
        if tokens.is_empty() {
            continue;
        }
        acc.fill(0.0);
        for &t in tokens {
            for (a, &x) in acc.iter_mut().zip(&g[t * d..(t + 1) * d]) {
                *a += x as f64;
            }
        }
        for (o, &a) in out[v * d..(v + 1) * d].iter_mut().zip(&acc) {
            *o = a as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gather copies rows; the scatter-add of repeated ids equals the f64 sum in token
    /// order rounded once (ids repeated 1 000 and 2 000 times, terms 1 and 1e-4: an f32
    /// running sum rounds each 1e-4 to its ulps), untouched rows stay 0.
    #[test]
    fn gather_and_scatter_add() {
        let table: Vec<f32> = (0..12).map(|i| i as f32 * 0.5).collect();
        let mut out = vec![0.0f32; 6];
        embedding_f32(&table, 3, &[3, 0], &mut out);
        assert_eq!(out, [4.5, 5.0, 5.5, 0.0, 0.5, 1.0]);
        let n = 3000;
        let ids: Vec<usize> = (0..n).map(|t| if t % 3 == 0 { 1 } else { 3 }).collect();
        // Column 0 alternates 1 and 1e-4 from token to token, column 1 is 1e-4.
        let g: Vec<f32> = (0..2 * n)
            .map(|k| if k % 4 == 0 { 1.0 } else { 1e-4 })
            .collect();
        let mut gt = vec![7.0f32; 8];
        embedding_backward_f32(&ids, &g, 2, 4, &mut gt);
        let (mut w1, mut w3) = ([0.0f64; 2], [0.0f64; 2]);
        for (t, &i) in ids.iter().enumerate() {
            let w = if i == 1 { &mut w1 } else { &mut w3 };
            w[0] += g[2 * t] as f64;
            w[1] += g[2 * t + 1] as f64;
        }
        assert_eq!(
            gt,
            [
                0.0,
                0.0,
                w1[0] as f32,
                w1[1] as f32,
                0.0,
                0.0,
                w3[0] as f32,
                w3[1] as f32
            ]
        );
        // An f32 running sum of row 3's column 0 (each 1e-4 rounded to the sum's ulps) differs.
        let mut f32_sum = 0.0f32;
        for (t, &i) in ids.iter().enumerate() {
            if i == 3 {
                f32_sum += g[2 * t];
            }
        }
        assert_ne!(gt[6], f32_sum);
        assert!((gt[6] as f64 - w3[0]).abs() <= w3[0] * 2f64.powi(-24));
    }
}
