//! Activation families whose forward and backward are kernels of their own (ReLU and
//! its mask are plain maps in elementwise.rs).

mod gelu;
pub(in crate::tensor) mod gelu_f32;
mod silu;
pub(in crate::tensor) mod silu_f32;

pub use gelu::*;
pub use silu::*;
