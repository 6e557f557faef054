//! The f32 kernels of issue 21 on plain slices, collected for the benches and
//! integration tests (`#[doc(hidden)]`: not a user API). Each kernel lives beside its
//! f64 family (exp_f32.rs, tanh/tanh_f32.rs, activation/gelu_f32.rs, softmax/*_f32.rs,
//! norm/layernorm_f32.rs, reduce_f32.rs, elementwise_f32.rs, embedding_f32.rs,
//! optim_f32.rs); its module docs state its error bound. docs/performance.md § f32
//! element-wise and row kernels (issue 21) has their timings.

pub use super::activation::gelu_f32::{
    gelu_backward_f32, gelu_derivative_f32, gelu_f32, gelu_f32_map, gelu_with_derivative_f32,
};
pub use super::activation::silu_f32::{
    silu_backward_f32, silu_derivative_f32, silu_f32, silu_f32_map,
};
pub use super::elementwise_f32::{add_bias_f32, binary_f32, scale_f32, unary_f32, BinOp, UnaryOp};
pub use super::embedding_f32::{embedding_backward_f32, embedding_f32};
pub use super::exp_f32::{exp_f32, exp_f32_map};
pub use super::norm::layernorm_f32::{layernorm_backward_f32, layernorm_f32};
pub use super::norm::rms_f32::{rms_norm_backward_f32, rms_norm_f32};
pub use super::optim_f32::adamw_step_f32;
pub use super::reduce_f32::{
    mean_f32, split_axis, sum_axis_backward_f32, sum_axis_f32, sum_f32, sum_squares_f32,
    sum_to_shape_f32,
};
pub use super::softmax::causal_f32::{
    causal_row_backward_f32, causal_rows_f32, softmax_causal_backward_f32, softmax_causal_f32,
};
pub use super::softmax::cross_entropy_f32::{
    cross_entropy_indices_backward_f32, cross_entropy_indices_f32,
};
pub use super::softmax::row_f32::{
    log_softmax_backward_f32, log_softmax_rows_f32, softmax_backward_f32, softmax_rows_f32,
};
pub use super::tanh::tanh_f32::{tanh_backward_f32, tanh_f32, tanh_f32_map};
