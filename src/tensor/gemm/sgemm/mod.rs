//! The f32 GEMM family (`sgemm`, BLAS's name for it): the f64 kernels' counterparts for f32 operands, accumulating
//! in f32 (as PyTorch and MKL do), on plain slices, with the same [`Strides`]
//! (transposed operands read in place), [`Tri`] causal forms and [`Post`](super::post::Post) epilogues.
//!
//! * lanes.rs — [`lanes::Lanes`]: the few SIMD operations the kernels are written in,
//!   for AVX-512 (16 lanes) and AVX2 + FMA (8 lanes);
//! * packed.rs — packed, cache-blocked GEMM with an `MR × NV·W` register tile
//!   (8×48 on AVX-512, 6×16 on AVX2);
//! * small.rs — the unpacked kernel for `k ≤ KC` and `n ≤ 128` (the attention heads),
//!   with the [`Tri`] forms;
//! * scalar.rs — the portable fallback (no AVX2/AVX-512, other architectures);
//! * the exact in-order kernels (no FMA), the f32 oracles' recipe, are gemm/exact.rs's, generic over the element;
//! * dispatch.rs — the entry points [`gemm_fast_f32`] and [`gemm_unpacked_into_f32`].
//!
//! **One accumulation order everywhere.** Whatever the ISA, tile, thread or block an
//! element `c[i,j]` lands in, it is computed the same way: for each k-block (fixed
//! boundaries 0, KC, 2·KC, … with KC = 256) an accumulator starting at +0.0 takes
//! `acc = fma(a[i,p], b[p,j], acc)` for p in order; the first block's accumulator is
//! stored, each later one added (`c = c + acc`). So the AVX-512, AVX2 and scalar paths
//! give the same bits, at any thread count (the unit tests check both).
//!
//! **Error bound.** With `u = 2⁻²⁴`, each element takes at most `k + ⌈k/KC⌉` roundings
//! of partial sums bounded by `Σ_p |a[i,p]·b[p,j]|`, so
//! `|c − a·b| ≤ γ·Σ_p |a[i,p]|·|b[p,j]|` with `γ = (k + ⌈k/KC⌉)·u / (1 − (k + ⌈k/KC⌉)·u)`;
//! the tests check this against an f64 product formed independently.

#[cfg(target_arch = "x86_64")]
mod lanes;
#[cfg(target_arch = "x86_64")]
mod packed;
#[cfg(target_arch = "x86_64")]
mod small;

mod dispatch;
mod scalar;

#[cfg(test)]
mod tests;

pub(in crate::tensor) use dispatch::{gemm_fast_f32, gemm_unpacked_into_f32};

use super::layout::{Strides, Tri};

/// The k-block: where each element's sum is split (a constant: it fixes the bits). The
/// packed A micro-panel (KC·MR·4 B = 8 KiB on AVX-512) stays in L1.
pub(super) const KC: usize = 256;

/// Largest `n` the unpacked kernel takes (a k-block of `b` is at most KC·MAX_N·4 B =
/// 128 KiB, in L2, while the rows of `a` stream past it).
pub(super) const MAX_N: usize = 128;

/// A result buffer's base pointer handed to the pool's threads, each of which writes
/// its own disjoint part (tensor/par.rs's `SendPtr`, for f32).
#[derive(Clone, Copy)]
pub(super) struct Shared(pub(super) *mut f32);
// SAFETY: hands disjoint ranges of one buffer to the pool's threads.
unsafe impl Send for Shared {}
// SAFETY: as above; the pointer is only copied.
unsafe impl Sync for Shared {}

impl Shared {
    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    pub(super) fn get(self) -> *mut f32 {
        self.0
    }
}
