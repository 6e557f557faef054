//! When an accumulation `x + y` (a gradient added into its accumulator) is `y` itself,
//! bit for bit, so that the evaluator can keep `y` instead of forming the sum: IEEE
//! gives `−0.0 + y = y` for every y and `+0.0 + y = y` except `y = −0.0`.
//!
//! The same holds in f32: two f32 tensors are checked on their f32 bits; an
//! accumulation whose operands have different types is never skipped (the add promotes
//! it to f64).

use super::{DType, Tensor};

/// Accumulations of fewer elements may skip a zero accumulator that is not a shared
/// zero block: the check reads both operands on one thread, which from this size costs
/// about what a split add does.
const SKIP_ZERO_ADD_BELOW: usize = 1 << 16;

/// Whether `x + y` is `y` bit for bit, with `x` an accumulator of `y`'s shape: a shared
/// zero block ([`Tensor::is_shared_zeros`]) when `y` holds no −0.0; below
/// `SKIP_ZERO_ADD_BELOW` elements also any `x` of zeros that [`adds_nothing`] accepts.
#[inline(always)]
pub fn accumulation_is_addend(x: &Tensor, y: &Tensor) -> bool {
    x.shape() == y.shape()
        && x.dtype() == y.dtype()
        && if x.is_shared_zeros() {
            !has_neg_zero(y)
        } else {
            x.numel() < SKIP_ZERO_ADD_BELOW && adds_nothing(x, y)
        }
}

/// Whether `x + y` is `y` bit for bit because `x` is a shared zero block of `y`'s shape
/// and `y` holds no −0.0 (a companion's loop-carried cotangent that starts each
/// iteration as `retro_nihil`): no pass over `x` at all.
#[inline(always)]
pub fn shared_zeros_add_is_addend(x: &Tensor, y: &Tensor) -> bool {
    x.same_shape(y) && x.dtype() == y.dtype() && x.is_shared_zeros() && !has_neg_zero(y)
}

/// Whether `x + y` is `y` bit for bit: every x is ±0.0 (−0.0 + y = y for every y;
/// +0.0 + y = y except y = −0.0) and, if some x is +0.0, no y is −0.0. Stops at x's
/// first non-zero element, so an accumulator already holding gradients costs a
/// glance.
pub fn adds_nothing(x: &Tensor, y: &Tensor) -> bool {
    if x.dtype() == DType::F32 {
        return x.dtype() == y.dtype() && adds_nothing_f32(x.data32(), y);
    }
    // Chunks of 64 with branch-free inner loops (they vectorise), early exit between.
    let mut pos_zero = false;
    for c in x.data().chunks(64) {
        let (mut nonzero, mut pz) = (0u64, 0u64);
        for v in c {
            let b = v.to_bits();
            nonzero |= b << 1;
            pz |= u64::from(b == 0);
        }
        if nonzero != 0 {
            return false;
        }
        pos_zero |= pz != 0;
    }
    !pos_zero || !has_neg_zero(y)
}

/// [`adds_nothing`] of an f32 accumulator `x` and an f32 `y`.
fn adds_nothing_f32(x: &[f32], y: &Tensor) -> bool {
    let mut pos_zero = false;
    for c in x.chunks(64) {
        let (mut nonzero, mut pz) = (0u32, 0u32);
        for v in c {
            let b = v.to_bits();
            nonzero |= b << 1;
            pz |= u32::from(b == 0);
        }
        if nonzero != 0 {
            return false;
        }
        pos_zero |= pz != 0;
    }
    !pos_zero || !has_neg_zero(y)
}

/// Whether some element of `y` is −0.0 (chunked, branch-free inner loops; compiled
/// for AVX-512 where the CPU has it — baseline x86-64 has no 64-bit vector compare).
pub fn has_neg_zero(y: &Tensor) -> bool {
    if let Some(y) = y.data_f32() {
        const NEG_ZERO: u32 = 0x8000_0000;
        return super::par_f32::wide(
            #[inline(always)]
            || {
                y.chunks(64).any(|c| {
                    c.iter()
                        .fold(0u32, |a, v| a | u32::from(v.to_bits() == NEG_ZERO))
                        != 0
                })
            },
        );
    }
    #[inline(always)]
    fn scan(y: &[f64]) -> bool {
        const NEG_ZERO: u64 = 0x8000_0000_0000_0000;
        y.chunks(64).any(|c| {
            c.iter()
                .fold(0u64, |a, v| a | u64::from(v.to_bits() == NEG_ZERO))
                != 0
        })
    }
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn scan_avx512(y: &[f64]) -> bool {
        scan(y)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked).
        return unsafe { scan_avx512(y.data()) };
    }
    scan(y.data())
}
