//! The matrix product family: `matmul` and its transposed forms (product.rs), the
//! fused `lineare` (linear.rs), and their VJPs (vjp.rs). The kernels they run are in
//! `tensor/gemm/`.

mod linear;
mod product;
mod vjp;
mod vjp_f32;

pub use linear::*;
pub use product::*;
pub use vjp::*;
