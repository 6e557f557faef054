//! The SIMD operations the f32 kernels are written in ([`Lanes`]), for AVX-512
//! (`__m512`, 16 lanes) and AVX2 + FMA (`__m256`, 8 lanes). The kernels are generic
//! over them and `#[inline(always)]`; each is instantiated inside one
//! `#[target_feature]` function per ISA (packed.rs, small.rs), where these methods and
//! the intrinsics they call are inlined.

use std::arch::x86_64::*;

/// A vector of `W` f32 lanes and the operations on it the kernels use.
///
/// # Safety
/// Every method requires the CPU to have the ISA of the implementation (checked by
/// the dispatcher before any kernel runs); the pointer arguments are as each says.
pub(super) trait Lanes {
    type V: Copy;
    /// Lanes per vector.
    const W: usize;
    /// Columns of packed B per block (KC·NC·4 B in L2; a multiple of the packed
    /// tile's width).
    const NC: usize;
    unsafe fn zero() -> Self::V;
    unsafe fn splat(x: f32) -> Self::V;
    /// `W` values at `p` (no alignment needed).
    unsafe fn load(p: *const f32) -> Self::V;
    unsafe fn store(p: *mut f32, v: Self::V);
    /// Lanes `0..w` from `p` (`w ≤ W`), the others 0.0; memory past lane `w` is not
    /// accessed.
    unsafe fn load_part(p: *const f32, w: usize) -> Self::V;
    /// Lanes `0..w` to `p` (`w ≤ W`); memory past lane `w` is not accessed.
    unsafe fn store_part(p: *mut f32, w: usize, v: Self::V);
    /// `a·b + c`, rounded once.
    unsafe fn fma(a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `a + b` (with two NaNs, `a`'s payload).
    unsafe fn add(a: Self::V, b: Self::V) -> Self::V;
    unsafe fn mul(a: Self::V, b: Self::V) -> Self::V;
}

/// AVX-512F.
pub(super) struct Avx512;

/// Lanes `0..w` of a 16-lane mask (`w` clamped to 0..16).
#[inline(always)]
fn mask16(w: usize) -> __mmask16 {
    ((1u32 << w.min(16)) - 1) as __mmask16
}

impl Lanes for Avx512 {
    type V = __m512;
    const W: usize = 16;
    const NC: usize = 960;
    #[inline(always)]
    unsafe fn zero() -> __m512 {
        // SAFETY: AVX-512F is present (the trait's contract).
        unsafe { _mm512_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m512 {
        // SAFETY: as above.
        unsafe { _mm512_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m512 {
        // SAFETY: p addresses 16 readable f32 (the caller's contract).
        unsafe { _mm512_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m512) {
        // SAFETY: p addresses 16 writable f32 (the caller's contract).
        unsafe { _mm512_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn load_part(p: *const f32, w: usize) -> __m512 {
        // SAFETY: lanes 0..w are readable; masked-off lanes are not accessed.
        unsafe { _mm512_maskz_loadu_ps(mask16(w), p) }
    }
    #[inline(always)]
    unsafe fn store_part(p: *mut f32, w: usize, v: __m512) {
        // SAFETY: lanes 0..w are writable; masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_ps(p, mask16(w), v) }
    }
    #[inline(always)]
    unsafe fn fma(a: __m512, b: __m512, c: __m512) -> __m512 {
        // SAFETY: AVX-512F is present.
        unsafe { _mm512_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn add(a: __m512, b: __m512) -> __m512 {
        // SAFETY: AVX-512F is present.
        unsafe { _mm512_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m512, b: __m512) -> __m512 {
        // SAFETY: AVX-512F is present.
        unsafe { _mm512_mul_ps(a, b) }
    }
}

/// AVX2 with FMA.
pub(super) struct Avx2;

/// The AVX2 mask of lanes `0..w` (`w` clamped to 0..8): all ones in each kept lane.
///
/// # Safety
/// AVX2 is present.
#[inline(always)]
unsafe fn mask8(w: usize) -> __m256i {
    // SAFETY: AVX2 is present (as required).
    unsafe {
        let idx = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        _mm256_cmpgt_epi32(_mm256_set1_epi32(w.min(8) as i32), idx)
    }
}

impl Lanes for Avx2 {
    type V = __m256;
    const W: usize = 8;
    const NC: usize = 768;
    #[inline(always)]
    unsafe fn zero() -> __m256 {
        // SAFETY: AVX is present (the trait's contract).
        unsafe { _mm256_setzero_ps() }
    }
    #[inline(always)]
    unsafe fn splat(x: f32) -> __m256 {
        // SAFETY: as above.
        unsafe { _mm256_set1_ps(x) }
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> __m256 {
        // SAFETY: p addresses 8 readable f32 (the caller's contract).
        unsafe { _mm256_loadu_ps(p) }
    }
    #[inline(always)]
    unsafe fn store(p: *mut f32, v: __m256) {
        // SAFETY: p addresses 8 writable f32 (the caller's contract).
        unsafe { _mm256_storeu_ps(p, v) }
    }
    #[inline(always)]
    unsafe fn load_part(p: *const f32, w: usize) -> __m256 {
        // SAFETY: lanes 0..w are readable; masked-off lanes are not accessed (a masked
        // load never faults on them).
        unsafe { _mm256_maskload_ps(p, mask8(w)) }
    }
    #[inline(always)]
    unsafe fn store_part(p: *mut f32, w: usize, v: __m256) {
        // SAFETY: lanes 0..w are writable; masked-off lanes are not accessed.
        unsafe { _mm256_maskstore_ps(p, mask8(w), v) }
    }
    #[inline(always)]
    unsafe fn fma(a: __m256, b: __m256, c: __m256) -> __m256 {
        // SAFETY: FMA is present.
        unsafe { _mm256_fmadd_ps(a, b, c) }
    }
    #[inline(always)]
    unsafe fn add(a: __m256, b: __m256) -> __m256 {
        // SAFETY: AVX is present.
        unsafe { _mm256_add_ps(a, b) }
    }
    #[inline(always)]
    unsafe fn mul(a: __m256, b: __m256) -> __m256 {
        // SAFETY: AVX is present.
        unsafe { _mm256_mul_ps(a, b) }
    }
}
