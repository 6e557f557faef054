//! Activation families whose forward and backward are kernels of their own (ReLU and
//! its mask are plain maps in elementwise.rs).

mod gelu;
mod silu;

pub use gelu::{
    gelu, gelu_backward, gelu_backward_derivata, gelu_cum_derivata, gelu_exp_identity,
    gelu_exp_identity_backward, GELU_BETA, GELU_C,
};
pub use silu::{silu, silu_backward};
