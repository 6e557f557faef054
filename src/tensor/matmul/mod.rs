//! The matrix product family: `matmul` and its transposed forms (product.rs), the
//! fused `lineare` (linear.rs), and their VJPs (vjp.rs). The kernels they run are in
//! `tensor/gemm/`.

mod linear;
mod product;
mod vjp;

pub use linear::*;
pub use product::*;
pub use vjp::*;
