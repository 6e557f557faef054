//! The layernorm's row recipes (docs/ops.md), shared by the
//! forward and the backward and by their AVX-512 lane code (lanes.rs), which applies
//! the same operations to eight rows at once: the statistics, one output row, one row
//! of ∂x, and groups of rows in lockstep.

use std::mem::MaybeUninit;

/// `(mean, 1/√(var + eps))` of R consecutive rows of length `d` (`xr`: R·d values):
/// `mean = Σx/d`, `var = Σ(x − mean)²/d`, each sum in index order from 0.0, the rows'
/// loops interleaved (independent in-order sums in flight; each row's order, so its
/// bits, unchanged). Shared by the layernorm forward and its VJP.
#[inline(always)]
pub(super) fn ln_stats<const R: usize>(xr: &[f64], d: usize, eps: f64) -> [(f64, f64); R] {
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

/// One row of the layernorm forward from its statistics: `((x − mean)·inv)·γ + β`.
#[inline(always)]
pub(super) fn ln_output_row(
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

/// LayerNorm of `R` consecutive rows of length `d` into `dst` (every slot written; the
/// recipe of [`layernorm`]), the rows' sums interleaved ([`ln_stats`]).
#[inline(always)]
pub(super) fn ln_forward_rows<const R: usize>(
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
pub(super) fn ln_backward_row(
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

/// Rows the layernorm backward processes side by side.
pub(super) const LN_GROUP: usize = 4;

/// Step 1 of the layernorm backward (layernorm.rs) for `R` consecutive rows of length `d` (`xr`, `gr`: R·d
/// values): `dst` gets their ∂x (every slot written), `st` their (mean, inv) pairs.
#[inline(always)]
pub(super) fn ln_backward_rows<const R: usize>(
    xr: &[f64],
    gr: &[f64],
    gm: &[f64],
    eps: f64,
    dst: &mut [std::mem::MaybeUninit<f64>],
    st: &mut [f64],
) {
    let d = gm.len();
    let df = d as f64;
    let stats = ln_stats::<R>(xr, d, eps);
    let (mut s1, mut s2) = ([0.0; R], [0.0; R]);
    for j in 0..d {
        for r in 0..R {
            let (mean, inv) = stats[r];
            let h = gr[r * d + j] * gm[j];
            s1[r] += h;
            s2[r] += h * ((xr[r * d + j] - mean) * inv);
        }
    }
    for (r, (mean, inv)) in stats.into_iter().enumerate() {
        st[2 * r] = mean;
        st[2 * r + 1] = inv;
        let (m1, m2) = (s1[r] / df, s2[r] / df);
        let rows = r * d..(r + 1) * d;
        let (x, g, o) = (&xr[rows.clone()], &gr[rows.clone()], &mut dst[rows]);
        ln_backward_row(x, g, gm, o, (mean, inv), (m1, m2));
    }
}
