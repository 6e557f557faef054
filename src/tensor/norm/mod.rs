//! The normalisation family: LayerNorm forward and backward (layernorm.rs), its row
//! recipes (rows.rs) and their AVX-512 eight-row form (lanes.rs).

#[cfg(target_arch = "x86_64")]
mod lanes;
mod layernorm;
pub(in crate::tensor) mod layernorm_f32;
mod rms;
pub(in crate::tensor) mod rms_f32;
mod rows;

pub use layernorm::*;
pub use rms::*;
