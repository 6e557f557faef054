//! Activation families whose forward and backward are kernels of their own (ReLU and
//! its mask are plain maps in elementwise.rs).

mod gelu;
mod silu;

pub use gelu::*;
pub use silu::*;
