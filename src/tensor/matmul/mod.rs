//! The matrix product family: `matmul` and its transposed forms (product.rs), the
//! fused `lineare` (linear.rs), and their VJPs (vjp.rs). The kernels they run are in
//! `tensor/gemm/`.

mod linear;
mod product;
mod vjp;

pub use linear::linear;
pub use product::{matmul, matmul_exact, matmul_fast, matmul_t, Trans, EXACT_MATMUL_MAX_WORK};
pub use vjp::{matmul_backward, matmul_vjp_2d, matmul_vjp_2d_post, VjpPost};
