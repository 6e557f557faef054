//! The exact in-order f32 kernels, the f64 ones' recipe (gemm/exact.rs) in f32:
//! `acc = a[i,0]·b[0,j]`, then `acc += a[i,p]·b[p,j]` for p = 1, 2, … in order, each
//! product and sum rounded to f32 (no FMA) — into a zeroed matrix
//! ([`gemm_exact_f32`]) or read through strides ([`exact_strided_f32`]).

use super::Strides;

/// The exact kernel's order read through strides (the bits of [`gemm_exact_f32`] on
/// the same values); hands the results to `put` row by row.
///
/// # Safety
/// k ≥ 1 and the strides address elements of `a` (`m×k`) and `b` (`k×n`) only.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(in crate::tensor) unsafe fn exact_strided_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    sa: Strides,
    b: &[f32],
    sb: Strides,
    mut put: impl FnMut(f32),
) {
    for i in 0..m {
        for j in 0..n {
            // SAFETY: i < m, j < n, p < k address elements of a and b (as required).
            let x = |p: usize| unsafe { *a.get_unchecked(i * sa.row + p * sa.col) };
            let y = |p: usize| unsafe { *b.get_unchecked(p * sb.row + j * sb.col) };
            let mut acc = x(0) * y(0);
            for p in 1..k {
                acc += x(p) * y(p);
            }
            put(acc);
        }
    }
}

/// Exact in-order f32 GEMM, `c` pre-zeroed, row-major `[m,k]·[k,n]`. The i-p-j loop
/// keeps each `c[i,j]`'s accumulation order and vectorises over j (Rust never
/// contracts `a*b + c` into an FMA, so the rounding is that of the order above).
pub(in crate::tensor) fn gemm_exact_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    b: &[f32],
    c: &mut [f32],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked above); the function has no other
            // preconditions.
            unsafe { gemm_exact_avx2(m, n, k, a, b, c) };
            return;
        }
    }
    gemm_exact_generic(m, n, k, a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gemm_exact_avx2(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    gemm_exact_generic(m, n, k, a, b, c)
}

#[inline(always)]
fn gemm_exact_generic(m: usize, n: usize, k: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    if k == 0 || n == 0 {
        return;
    }
    for (arow, crow) in a.chunks_exact(k).zip(c.chunks_exact_mut(n)).take(m) {
        let a0 = arow[0];
        for (cv, &bv) in crow.iter_mut().zip(&b[..n]) {
            *cv = a0 * bv;
        }
        for (p, &ap) in arow.iter().enumerate().skip(1) {
            let brow = &b[p * n..(p + 1) * n];
            for (cv, &bv) in crow.iter_mut().zip(brow) {
                *cv += ap * bv;
            }
        }
    }
}
