//! LayerNorm rows eight at a time, one row per AVX-512 lane (x86-64 with `avx512f`,
//! chosen at run time).
//!
//! The recipe's per-row sums run left to right from 0.0 (docs/ops.md), so a row's
//! own sums cannot be split into lanes; eight rows can. Element j of eight consecutive
//! rows is gathered into one vector, and every vector operation applies to each lane
//! exactly the scalar operation the recipe applies to that row (IEEE add, sub, mul, div
//! and sqrt, no fused multiply-add), in the same order — so each row's results are the
//! bits of the scalar code ([`super::rows::ln_stats`] and the loops written with it),
//! which the callers use for the remaining rows and on other CPUs.

#![cfg(target_arch = "x86_64")]

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

/// Rows per group: one per lane.
pub(super) const ROWS: usize = 8;

/// Whether this CPU can run the lane code (`is_x86_feature_detected!` caches).
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// Element `j` of the eight rows of length `d` at `base` (lane r: `base[r·d + j]`).
///
/// # Safety
/// AVX-512F is available; `base` addresses 8·d elements and j < d.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn column(base: *const f64, idx: __m512i, j: usize) -> __m512d {
    // SAFETY: lane r reads base[r·d + j], inside the 8·d elements (as required).
    unsafe { _mm512_i64gather_pd::<8>(idx, base.add(j)) }
}

/// Lane offsets `r·d` of eight rows of length d.
#[inline]
#[target_feature(enable = "avx512f")]
fn offsets(d: usize) -> __m512i {
    let d = d as i64;
    _mm512_set_epi64(7 * d, 6 * d, 5 * d, 4 * d, 3 * d, 2 * d, d, 0)
}

/// `(mean, 1/√(var + eps))` of eight rows of length `d` ≥ 1 (`xr`: 8·d values), as
/// vectors (lane r: row r): `mean = Σx/d`, `var = Σ(x − mean)²/d`, each sum in index
/// order from 0.0 — [`super::rows::ln_stats`] per lane.
///
/// # Safety
/// AVX-512F is available.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn stats(xr: &[f64], d: usize, eps: f64) -> (__m512d, __m512d) {
    assert!(d >= 1 && xr.len() >= ROWS * d && ROWS * d <= i64::MAX as usize);
    let (base, idx) = (xr.as_ptr(), offsets(d));
    let df = _mm512_set1_pd(d as f64);
    let mut sum = _mm512_setzero_pd();
    for j in 0..d {
        // SAFETY: j < d and xr holds the 8 rows (asserted).
        sum = _mm512_add_pd(sum, unsafe { column(base, idx, j) });
    }
    let mean = _mm512_div_pd(sum, df);
    let mut var = _mm512_setzero_pd();
    for j in 0..d {
        // SAFETY: as above.
        let c = _mm512_sub_pd(unsafe { column(base, idx, j) }, mean);
        var = _mm512_add_pd(var, _mm512_mul_pd(c, c));
    }
    let sd = _mm512_sqrt_pd(_mm512_add_pd(_mm512_div_pd(var, df), _mm512_set1_pd(eps)));
    (mean, _mm512_div_pd(_mm512_set1_pd(1.0), sd))
}

fn lanes(v: __m512d) -> [f64; ROWS] {
    // SAFETY: __m512d and [f64; 8] have the same size, and every bit pattern is valid
    // for both.
    unsafe { std::mem::transmute::<__m512d, [f64; ROWS]>(v) }
}

/// The layernorm forward of eight rows (`src`: 8·d values) into `dst`, every slot
/// written: `y = ((x − mean)·inv)·γ + β` with the statistics of [`stats`].
///
/// # Safety
/// AVX-512F is available.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn forward(
    src: &[f64],
    dst: &mut [MaybeUninit<f64>],
    d: usize,
    eps: f64,
    g: &[f64],
    b: &[f64],
) {
    // SAFETY: AVX-512F is available (as required).
    let (mean, inv) = unsafe { stats(src, d, eps) };
    let (mean, inv) = (lanes(mean), lanes(inv));
    for r in 0..ROWS {
        let rows = r * d..(r + 1) * d;
        super::rows::ln_output_row(&src[rows.clone()], &mut dst[rows], mean[r], inv[r], g, b);
    }
}

/// The layernorm VJP's ∂x for eight rows (`xr`, `gr`: 8·d values; `gm` = γ) into `dst`
/// (every slot written), their (mean, inv) pairs into `st` (16 values): per row
/// `h = g·γ`, `s1 = Σ h`, `s2 = Σ h·x̂` in index order, `∂x = inv·(h − s1/d − x̂·(s2/d))`.
///
/// # Safety
/// AVX-512F is available.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn backward(
    xr: &[f64],
    gr: &[f64],
    gm: &[f64],
    eps: f64,
    dst: &mut [MaybeUninit<f64>],
    st: &mut [f64],
) {
    let d = gm.len();
    assert!(gr.len() >= ROWS * d && st.len() >= 2 * ROWS);
    // SAFETY: AVX-512F is available (as required); stats checks xr.
    let (mean, inv) = unsafe { stats(xr, d, eps) };
    let (xb, gb, idx) = (xr.as_ptr(), gr.as_ptr(), offsets(d));
    let (mut s1, mut s2) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    for (j, &gmj) in gm.iter().enumerate() {
        // SAFETY: j < d; xr and gr hold the 8 rows (asserted).
        let (x, g) = unsafe { (column(xb, idx, j), column(gb, idx, j)) };
        let h = _mm512_mul_pd(g, _mm512_set1_pd(gmj));
        s1 = _mm512_add_pd(s1, h);
        let xh = _mm512_mul_pd(_mm512_sub_pd(x, mean), inv);
        s2 = _mm512_add_pd(s2, _mm512_mul_pd(h, xh));
    }
    let df = _mm512_set1_pd(d as f64);
    let (m1, m2) = (lanes(_mm512_div_pd(s1, df)), lanes(_mm512_div_pd(s2, df)));
    let (mean, inv) = (lanes(mean), lanes(inv));
    for r in 0..ROWS {
        let (m, s) = (mean[r], inv[r]);
        st[2 * r] = m;
        st[2 * r + 1] = s;
        let rows = r * d..(r + 1) * d;
        let (x, g, o) = (&xr[rows.clone()], &gr[rows.clone()], &mut dst[rows]);
        super::rows::ln_backward_row(x, g, gm, o, (m, s), (m1[r], m2[r]));
    }
}
