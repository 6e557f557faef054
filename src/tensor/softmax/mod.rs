//! The softmax family over the last axis, forward and backward: the plain softmax and
//! log-softmax (plain.rs), the causal mask and the fused causal softmax (causal.rs),
//! the cross-entropies (cross_entropy.rs) — all built on one row recipe (row.rs).

mod causal;
pub(in crate::tensor) mod causal_f32;
mod cross_entropy;
pub(in crate::tensor) mod cross_entropy_f32;
mod plain;
mod row;
pub(in crate::tensor) mod row_f32;

pub use causal::*;
pub(in crate::tensor) use causal::{causal_row_backward, causal_rows};
pub use cross_entropy::*;
pub use plain::*;
