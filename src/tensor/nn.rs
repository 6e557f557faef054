//! Network kernels over the last axis: `activatio_softmax`, `log_softmax`,
//! `laminatio` (LayerNorm), `crux_entropia` (probability targets),
//! `crux_entropia_indices` (integer targets), plus `collige` (embedding
//! gather) and `larva_causalis` (causal mask). Recipes follow docs/tensors.md
//! exactly; rows run in parallel above a size threshold (each row's
//! result depends only on that row).

use std::mem::MaybeUninit;

use super::elementwise::build;
use super::{
    alloc, alloc_zeros, checked_numel, exp_cr, exp_cr_in_place, fmt_shape, par_rows, TResult,
    Tensor, TensorError, PAR_MIN_CHEAP,
};

/// Size of the last axis, or a `Shape` error at rank 0.
fn last_axis(name: &str, x: &Tensor) -> TResult<usize> {
    x.shape()
        .last()
        .copied()
        .ok_or_else(|| TensorError::shape(format!("{name}: a rank-0 tensor has no last axis")))
}

/// Largest element of a non-empty row, NaN if any element is NaN. Four
/// running maxima (max is exact in any order; only the sign of a zero
/// maximum may depend on the order, which no caller observes: `x − m` and
/// `m + ln s` give the same results for m = ±0).
#[inline(always)]
fn row_max(row: &[f64]) -> f64 {
    let mut lanes = [row[0]; 4];
    let mut nan = false;
    let chunks = row.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = if v > *l { v } else { *l };
            nan |= v.is_nan();
        }
    }
    for &v in rest {
        lanes[0] = if v > lanes[0] { v } else { lanes[0] };
        nan |= v.is_nan();
    }
    if nan {
        return f64::NAN;
    }
    let a = if lanes[1] > lanes[0] {
        lanes[1]
    } else {
        lanes[0]
    };
    let b = if lanes[3] > lanes[2] {
        lanes[3]
    } else {
        lanes[2]
    };
    if b > a {
        b
    } else {
        a
    }
}

/// Softmax rows of `src` (length `c` each) into `dst`, with AVX2 for the
/// division pass where the CPU has it (same IEEE results, wider vectors).
fn softmax_rows(src: &[f64], dst: &mut [f64], c: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked above).
            unsafe { softmax_rows_avx2(src, dst, c) };
            return;
        }
    }
    softmax_rows_generic(src, dst, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn softmax_rows_avx2(src: &[f64], dst: &mut [f64], c: usize) {
    softmax_rows_generic(src, dst, c)
}

#[inline(always)]
fn softmax_rows_generic(src: &[f64], dst: &mut [f64], c: usize) {
    for (r, o) in src.chunks_exact(c).zip(dst.chunks_exact_mut(c)) {
        softmax_row(r, o);
    }
}

/// Below this, `exp` rounds to +0: e^x < 2⁻¹⁰⁷⁵ (half the least subnormal) for
/// x < −1075·ln 2 ≈ −745.13, so round-to-nearest gives 0 (glibc's `exp` returns
/// +0 there too, after a slow underflow path that sets `errno`).
const EXP_ZERO_BELOW: f64 = -746.0;

/// `exp_cr(d)`, with the inputs whose result is +0 answered at once (the masked
/// entries of causal attention, `x − m ≈ −1e9`). Same bits as `exp_cr(d)` for every
/// `d`, NaN included (`NaN < c` is false).
#[inline(always)]
pub(crate) fn exp_or_zero(d: f64) -> f64 {
    if d < EXP_ZERO_BELOW {
        0.0
    } else {
        exp_cr(d)
    }
}

/// `row[i] = exp_cr(row[i] − m)` in place, then their sum left to right: the
/// exponentials of a softmax row through the vectorised map.
#[inline(always)]
pub(crate) fn exp_shifted_sum(row: &mut [f64], m: f64) -> f64 {
    for v in row.iter_mut() {
        *v -= m;
    }
    exp_cr_in_place(row);
    let mut s = 0.0;
    for &e in row.iter() {
        s += e;
    }
    s
}

/// Softmax of one row into `out`: `m = max`, `e = exp(x − m)`, `s = Σ e`
/// left to right, `y = e / s`.
#[inline(always)]
fn softmax_row(row: &[f64], out: &mut [f64]) {
    if row.is_empty() {
        return;
    }
    let m = row_max(row);
    out.copy_from_slice(row);
    let s = exp_shifted_sum(out, m);
    for o in out.iter_mut() {
        *o /= s;
    }
}

/// `x.activatio_softmax()`: softmax over the last axis (recipe above).
pub fn softmax(x: &Tensor) -> TResult<Tensor> {
    let c = last_axis("activatio_softmax", x)?;
    let mut out = alloc_zeros(x.numel())?;
    if c > 0 {
        par_rows(x.data(), &mut out, c, c, PAR_MIN_CHEAP, |src, dst| {
            softmax_rows(src, dst, c)
        });
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `x.log_softmax()`: per last-axis row, `m = max`, `s = Σ exp(x − m)` left to
/// right, `y = (x − m) − ln s`.
pub fn log_softmax(x: &Tensor) -> TResult<Tensor> {
    let c = last_axis("log_softmax", x)?;
    let mut out = alloc_zeros(x.numel())?;
    if c > 0 {
        par_rows(x.data(), &mut out, c, c, PAR_MIN_CHEAP, |src, dst| {
            for (r, o) in src.chunks_exact(c).zip(dst.chunks_exact_mut(c)) {
                let m = row_max(r);
                o.copy_from_slice(r);
                let ls = exp_shifted_sum(o, m).ln();
                for (o, &v) in o.iter_mut().zip(r) {
                    *o = (v - m) - ls;
                }
            }
        });
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `x.laminatio(axis, eps, γ, β)`: LayerNorm over the last axis (`axis` must
/// name it); γ and β have shape `[d]`. Per row: `mean = Σx/d`, `c = x − mean`,
/// `var = Σc²/d`, `inv = 1/√(var + eps)`, `y = (c·inv)·γ + β` (sums left to
/// right from 0.0).
pub fn layernorm(
    x: &Tensor,
    axis: usize,
    eps: f64,
    gamma: &Tensor,
    beta: &Tensor,
) -> TResult<Tensor> {
    let d = last_axis("laminatio", x)?;
    if axis + 1 != x.rank() {
        return Err(TensorError::shape(format!(
            "laminatio: axis {axis} is not the last axis of {}",
            fmt_shape(x.shape())
        )));
    }
    if gamma.shape() != [d] || beta.shape() != [d] {
        return Err(TensorError::shape(format!(
            "laminatio: scale {} and offset {} must both be [{d}], the size of the last axis {axis} of {}",
            fmt_shape(gamma.shape()),
            fmt_shape(beta.shape()),
            fmt_shape(x.shape())
        )));
    }
    if d == 0 {
        return Err(TensorError::shape("laminatio: the last axis is empty"));
    }
    let (g, b) = (gamma.data(), beta.data());
    let xd = x.data();
    #[cfg(target_arch = "x86_64")]
    let lanes = super::ln_lanes::available();
    let out = build(x.numel(), d, |start, dst| {
        let (mut src, mut dst) = (&xd[start..start + dst.len()], dst);
        // Eight rows in AVX-512 lanes where the CPU has them (the same bits, see
        // ln_lanes.rs), then four rows in lockstep: their in-order sums are independent
        // chains, so they overlap instead of waiting on one another (each row's sums
        // unchanged), then single rows.
        #[cfg(target_arch = "x86_64")]
        if lanes {
            let w = super::ln_lanes::ROWS * d;
            for (r, o) in src.chunks_exact(w).zip(dst.chunks_exact_mut(w)) {
                // SAFETY: AVX-512F is available (checked above).
                unsafe { super::ln_lanes::forward(r, o, d, eps, g, b) };
            }
            let done = src.len() / w * w;
            (src, dst) = (&src[done..], &mut dst[done..]);
        }
        let mut groups = src.chunks_exact(4 * d).zip(dst.chunks_exact_mut(4 * d));
        for (r, o) in &mut groups {
            ln_forward_rows::<4>(r, o, d, eps, g, b);
        }
        let done = src.len() / (4 * d) * 4 * d;
        for (r, o) in src[done..]
            .chunks_exact(d)
            .zip(dst[done..].chunks_exact_mut(d))
        {
            ln_forward_rows::<1>(r, o, d, eps, g, b);
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// LayerNorm of `R` consecutive rows of length `d` into `dst` (every slot written; the
/// recipe of [`layernorm`]), the rows' sums interleaved ([`ln_stats`]).
#[inline(always)]
fn ln_forward_rows<const R: usize>(
    src: &[f64],
    dst: &mut [MaybeUninit<f64>],
    d: usize,
    eps: f64,
    g: &[f64],
    b: &[f64],
) {
    let stats = ln_stats::<R>(src, d, eps);
    for (r, (mean, inv)) in stats.into_iter().enumerate() {
        let rows = r * d..(r + 1) * d;
        ln_output_row(&src[rows.clone()], &mut dst[rows], mean, inv, g, b);
    }
}

/// One row of the layernorm VJP's ∂x from its statistics and the means `m1 = Σ h/d`,
/// `m2 = Σ h·x̂/d` (h = g·γ): `inv·(g·γ − m1 − x̂·m2)` with `x̂ = (x − mean)·inv`.
#[inline(always)]
pub(crate) fn ln_backward_row(
    xr: &[f64],
    gr: &[f64],
    gm: &[f64],
    out: &mut [MaybeUninit<f64>],
    (mean, inv): (f64, f64),
    (m1, m2): (f64, f64),
) {
    for (((o, &xv), &gv), &gmv) in out.iter_mut().zip(xr).zip(gr).zip(gm) {
        let xh = (xv - mean) * inv;
        o.write(inv * (gv * gmv - m1 - xh * m2));
    }
}

/// One row of the layernorm forward from its statistics: `((x − mean)·inv)·γ + β`.
#[inline(always)]
pub(crate) fn ln_output_row(
    row: &[f64],
    out: &mut [MaybeUninit<f64>],
    mean: f64,
    inv: f64,
    g: &[f64],
    b: &[f64],
) {
    for (((o, &x), &gv), &bv) in out.iter_mut().zip(row).zip(g).zip(b) {
        o.write(((x - mean) * inv) * gv + bv);
    }
}

/// `(mean, 1/√(var + eps))` of R consecutive rows of length `d` (`xr`: R·d values):
/// `mean = Σx/d`, `var = Σ(x − mean)²/d`, each sum in index order from 0.0, the rows'
/// loops interleaved (independent in-order sums in flight; each row's order, so its
/// bits, unchanged). Shared by the layernorm forward and its VJP.
#[inline(always)]
pub(crate) fn ln_stats<const R: usize>(xr: &[f64], d: usize, eps: f64) -> [(f64, f64); R] {
    let df = d as f64;
    let xr = &xr[..R * d];
    let mut sum = [0.0; R];
    for j in 0..d {
        for r in 0..R {
            sum[r] += xr[r * d + j];
        }
    }
    let mean = sum.map(|s| s / df);
    let mut var = [0.0; R];
    for j in 0..d {
        for r in 0..R {
            let c = xr[r * d + j] - mean[r];
            var[r] += c * c;
        }
    }
    std::array::from_fn(|r| (mean[r], 1.0 / (var[r] / df + eps).sqrt()))
}

/// `x.crux_entropia(t)`: `−(Σ t·ln(softmax(x) + 1e-7)) / C` → rank 0, with
/// `C` the last-axis size, the sum over every element in row-major order
/// from 0.0. `t` must have `x`'s shape and be finite (else `Domain`); any finite
/// targets are accepted, not only probabilities.
pub fn cross_entropy(x: &Tensor, t: &Tensor) -> TResult<Tensor> {
    let c = last_axis("crux_entropia", x)?;
    if x.shape() != t.shape() {
        return Err(TensorError::shape(format!(
            "crux_entropia: targets {} do not match logits {} ({})",
            fmt_shape(t.shape()),
            fmt_shape(x.shape()),
            super::shape_difference(t.shape(), x.shape())
        )));
    }
    if c == 0 {
        return Err(TensorError::shape("crux_entropia: the last axis is empty"));
    }
    // Any finite targets (the definition is linear in them); NaN and ±∞ have no loss.
    if let Some(&bad) = t.data().iter().find(|v| !v.is_finite()) {
        return Err(TensorError::domain(format!(
            "crux_entropia: target {bad} is not a finite number"
        )));
    }
    let mut p = vec![0.0; c];
    let mut s = 0.0;
    for (r, tr) in x.data().chunks_exact(c).zip(t.data().chunks_exact(c)) {
        softmax_row(r, &mut p);
        for (&pv, &tv) in p.iter().zip(tr) {
            s += tv * (pv + 1e-7).ln();
        }
    }
    Ok(Tensor::scalar(-s / c as f64))
}

/// `z.crux_entropia_indices(y)`: mean over rows of `lse(z_r) − z_r[y_r]` with
/// `lse = m + ln(Σ exp(z − m))` (m the row max, sums left to right) → rank 0;
/// the row losses are summed in order from 0.0 and divided by the row count.
/// `y` has shape `z.shape[..rank-1]` and holds integers in `[0, V)`.
pub fn cross_entropy_indices(z: &Tensor, y: &Tensor) -> TResult<Tensor> {
    let v = last_axis("crux_entropia_indices", z)?;
    if y.shape() != &z.shape()[..z.rank() - 1] {
        return Err(TensorError::shape(format!(
            "crux_entropia_indices: targets {} do not match logits {} (the targets must have the logits' shape without the last axis, {}: {})",
            fmt_shape(y.shape()),
            fmt_shape(z.shape()),
            fmt_shape(&z.shape()[..z.rank() - 1]),
            super::shape_difference(y.shape(), &z.shape()[..z.rank() - 1])
        )));
    }
    if v == 0 || y.numel() == 0 {
        return Err(TensorError::shape(format!(
            "crux_entropia_indices: logits {} have no rows or no classes",
            fmt_shape(z.shape())
        )));
    }
    let ids = y.to_indices(v, "crux_entropia_indices")?;
    let mut total = 0.0;
    let mut e = vec![0.0; v];
    for (r, &id) in z.data().chunks_exact(v).zip(&ids) {
        let m = row_max(r);
        e.copy_from_slice(r);
        let s = exp_shifted_sum(&mut e, m);
        total += (m + s.ln()) - r[id];
    }
    Ok(Tensor::scalar(total / ids.len() as f64))
}

/// `e.collige(ids)`: rows of `E[V, D]` gathered by an integer id tensor of
/// any shape → `ids.shape + [D]`. Ids must be integers in `[0, V)`.
pub fn embedding(table: &Tensor, ids: &Tensor) -> TResult<Tensor> {
    let &[v, d] = table.shape() else {
        return Err(TensorError::shape(format!(
            "collige: the table must be rank 2 [V, D], found {}",
            fmt_shape(table.shape())
        )));
    };
    let idx = ids.to_indices(v, "collige")?;
    let mut shape = ids.shape().to_vec();
    shape.push(d);
    let n = checked_numel(&shape)?;
    let mut out = alloc(n)?;
    for &i in &idx {
        out.extend_from_slice(&table.data()[i * d..(i + 1) * d]);
    }
    Ok(Tensor::from_parts(shape, out))
}

/// `x.larva_causalis(value)`: a copy of `x` (rank ≥ 2) with every entry whose
/// last-axis index j exceeds its second-to-last index i set to `value`.
pub fn causal_mask(x: &Tensor, value: f64) -> TResult<Tensor> {
    let (t1, t2) = super::causal::matrix("larva_causalis", x)?;
    let mut out = alloc(x.numel())?;
    out.extend_from_slice(x.data());
    if t1 > 0 && t2 > 0 {
        for m in out.chunks_exact_mut(t1 * t2) {
            for (i, row) in m.chunks_exact_mut(t2).enumerate() {
                if i + 1 < t2 {
                    row[i + 1..].fill(value);
                }
            }
        }
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `collige` VJP *(helper)*: `gE = zeros([V, D])`, then for each id in
/// row-major order `gE[id] += g[t]` (repeated ids accumulate in order).
/// `g` has shape `ids.shape + [D]`.
pub fn embedding_backward(ids: &Tensor, g: &Tensor, vocab: usize) -> TResult<Tensor> {
    let Some((&d, lead)) = g.shape().split_last() else {
        return Err(TensorError::shape("collige backward: rank-0 gradient"));
    };
    if lead != ids.shape() {
        return Err(TensorError::shape(format!(
            "collige backward: gradient {} does not fit ids {} (its leading axes against the ids: {})",
            fmt_shape(g.shape()),
            fmt_shape(ids.shape()),
            super::shape_difference(lead, ids.shape())
        )));
    }
    let idx = ids.to_indices(vocab, "collige backward")?;
    let shape = [vocab, d];
    let n = checked_numel(&shape)?;
    let mut out = alloc_zeros(n)?;
    if d > 0 {
        for (&i, row) in idx.iter().zip(g.data().chunks_exact(d)) {
            for (o, &v) in out[i * d..(i + 1) * d].iter_mut().zip(row) {
                *o += v;
            }
        }
    }
    Ok(Tensor::from_parts(shape, out))
}

#[cfg(test)]
mod tests {
    use super::{exp_cr, exp_or_zero};

    /// Rows in lockstep groups give the recipe's bits row by row (7 rows: a group of
    /// four and a tail of three), against the recipe written out here.
    #[test]
    fn layernorm_groups_match_the_recipe() {
        // row counts with and without eight-row lane groups, four-row groups and single
        // rows; d = 1; a size that takes both threads
        for (rows, d, threads) in [
            (7, 13, 1),
            (21, 13, 1),
            (9, 1, 1),
            (1100, 64, 1),
            (1100, 64, 2),
        ] {
            layernorm_case(rows, d, threads);
        }
    }

    fn layernorm_case(rows: usize, d: usize, threads: usize) {
        let eps = 1e-5;
        let mut rng = super::super::SplitMix64::new(5);
        let x = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
        let g = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
        let b = rng.normal_tensor(&[d], 0.0, 0.2).unwrap();
        let before = super::super::set_threads(threads);
        let y = super::layernorm(&x, 1, eps, &g, &b).unwrap();
        super::super::set_threads(before);
        for r in 0..rows {
            let row = &x.data()[r * d..(r + 1) * d];
            let mut sum = 0.0;
            for &v in row {
                sum += v;
            }
            let mean = sum / d as f64;
            let mut var = 0.0;
            for &v in row {
                var += (v - mean) * (v - mean);
            }
            let inv = 1.0 / (var / d as f64 + eps).sqrt();
            for (j, &v) in row.iter().enumerate() {
                let want = ((v - mean) * inv) * g.data()[j] + b.data()[j];
                assert_eq!(
                    y.data()[r * d + j].to_bits(),
                    want.to_bits(),
                    "{rows}×{d}, row {r}, {j}"
                );
            }
        }
    }

    /// The shortcut gives `exp_cr`'s own bits on both sides of the threshold, at the
    /// underflow boundary, far below it and for the special values.
    #[test]
    fn exp_or_zero_matches_exp() {
        let mut xs = vec![
            f64::NAN,
            f64::NEG_INFINITY,
            -1e9,
            -1e300,
            -0.0,
            0.0,
            1.0,
            709.0,
        ];
        let mut d = -760.0;
        while d < -700.0 {
            xs.push(d);
            d += 0.015625 / 3.0;
        }
        for x in [-746.0f64, -745.1332191019412, -745.1332191019411] {
            xs.extend([
                x,
                f64::from_bits(x.to_bits() - 1),
                f64::from_bits(x.to_bits() + 1),
            ]);
        }
        for x in xs {
            assert_eq!(exp_or_zero(x).to_bits(), exp_cr(x).to_bits(), "x = {x:e}");
        }
    }
}
