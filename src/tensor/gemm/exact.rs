//! The exact in-order kernels: the oracles' recipe (docs/ops.md) — `acc =
//! a[i,0]·b[0,j]`, then `acc += a[i,p]·b[p,j]` for p = 1, 2, … in order, no FMA —
//! into a zeroed matrix ([`gemm_exact`]) or read through strides ([`exact_strided`]).
//! One code for both element types ([`Elem`]): in f32 every product and sum is rounded
//! to f32 (`matmul_exact` on f32 tensors, the sgemm's tests).

use super::layout::Strides;

/// An element type of the exact kernels: f64 or f32.
pub(in crate::tensor) trait Elem:
    Copy + std::ops::Mul<Output = Self> + std::ops::AddAssign
{
}

impl Elem for f64 {}
impl Elem for f32 {}

/// The exact kernel's order — `a(i,0)·b(0,j)`, then `+= a(i,p)·b(p,j)` for p = 1, 2, …
/// (no FMA) — read through strides, so the bits of [`gemm_exact`] on the same values;
/// hands the results to `put` row by row.
///
/// # Safety
/// k ≥ 1 and the strides address elements of `a` (`m×k`) and `b` (`k×n`) only.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(in crate::tensor) unsafe fn exact_strided<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    sa: Strides,
    b: &[T],
    sb: Strides,
    mut put: impl FnMut(T),
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

/// Exact in-order GEMM, `c` pre-zeroed, row-major `[m,k]·[k,n]`. The i-p-j
/// loop keeps each `c[i,j]`'s accumulation order and vectorises over j.
pub(in crate::tensor) fn gemm_exact<T: Elem>(
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    b: &[T],
    c: &mut [T],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked above); the function has
            // no other preconditions. AVX2 only widens the vectors: Rust never
            // contracts `a*b + c` into an FMA, so the rounding is unchanged.
            unsafe { gemm_exact_avx2(m, n, k, a, b, c) };
            return;
        }
    }
    gemm_exact_generic(m, n, k, a, b, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn gemm_exact_avx2<T: Elem>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) {
    gemm_exact_generic(m, n, k, a, b, c)
}

#[inline(always)]
fn gemm_exact_generic<T: Elem>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) {
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
