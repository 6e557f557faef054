//! The GEMM kernels behind every product (`matmul`, its VJP, the fused attention):
//!
//! * layout.rs — [`Strides`] (an operand read in place, transposed or not) and [`Tri`]
//!   (the causal forms of the unpacked kernel);
//! * post.rs — [`Post`]: an operation applied to each finished element of a product
//!   (the fused VJP epilogues);
//! * exact.rs — the exact in-order kernels (the oracles' recipe);
//! * dispatch.rs — [`gemm_fast`], the tuned GEMM: the AVX-512 kernels where the CPU
//!   has them, `matrixmultiply::dgemm` elsewhere;
//! * avx512.rs — the AVX-512 entry points, choosing between small.rs (unpacked, for
//!   `k ≤ 256` and narrow `n`) and packed.rs (packed, cache-blocked, 8×24 microkernel);
//! * sgemm/ — the f32 family (f32 accumulation; AVX-512, AVX2 + FMA and portable
//!   kernels with one accumulation order, so the same bits on each): `gemm_fast_f32`,
//!   `gemm_unpacked_into_f32` (the exact kernels are exact.rs's, generic).
//!
//! The ops that use them live in `tensor/matmul/`.

#[cfg(target_arch = "x86_64")]
mod avx512;
mod dispatch;
mod exact;
mod layout;
#[cfg(target_arch = "x86_64")]
mod packed;
mod post;
mod sgemm;
#[cfg(target_arch = "x86_64")]
mod small;

#[cfg(target_arch = "x86_64")]
pub(in crate::tensor) use avx512::gemm_unpacked_into;
pub(in crate::tensor) use dispatch::gemm_fast;
pub(in crate::tensor) use exact::{exact_strided, gemm_exact, Elem};
pub(in crate::tensor) use layout::{Strides, Tri};
pub(in crate::tensor) use post::PostOp;
pub(in crate::tensor) use sgemm::{gemm_fast_f32, gemm_unpacked_into_f32};
