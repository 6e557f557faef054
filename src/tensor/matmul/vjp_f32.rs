//! The element-wise steps of the matmul VJP in f32 (vjp.rs), for f32 tensors: `∂a ⊙ d`
//! and `r + ∂a` when the GEMM's epilogue does not apply, the scalings of the dot
//! product's VJP, a transpose, the sums over broadcast batch axes. Each is the IEEE
//! single-precision operation per element (correctly rounded, as the f32 `multiplica`,
//! `addita` give), with the f64 ops' shape checks and messages; the sums are taken in
//! f64 and rounded once (reduce_f32.rs's `sum_to_shape_f32`).

use crate::tensor::elementwise_f32::{binary_f32, BinOp};
use crate::tensor::reduce_f32::sum_to_shape_f32;
use crate::tensor::shape::broadcast_shapes;
use crate::tensor::{
    checked_numel, f32_vec, fmt_shape, shape_difference, TResult, Tensor, TensorError,
};

/// An f32 tensor of `shape` from `n` elements made by `fill` (which writes every one).
fn made(shape: &[usize], fill: impl FnOnce(&mut [f32])) -> TResult<Tensor> {
    let n = checked_numel(shape)?;
    let mut v = f32_vec(n)?;
    v.resize(n, 0.0);
    fill(&mut v);
    Tensor::from_f32(v, shape)
}

/// `g.retro_gelu_derivata(d)` in f32: `g ⊙ d`, `g` of `d`'s shape.
pub(super) fn scaled_by(g: &Tensor, d: &Tensor) -> TResult<Tensor> {
    if g.shape() != d.shape() {
        return Err(TensorError::shape(format!(
            "retro_gelu_derivata: cotangent {} does not match the derivative {} ({})",
            fmt_shape(g.shape()),
            fmt_shape(d.shape()),
            shape_difference(g.shape(), d.shape())
        )));
    }
    let (gd, dd) = (g.data32(), d.data32());
    made(g.shape(), |o| {
        for ((o, &x), &y) in o.iter_mut().zip(gd).zip(dd) {
            *o = x * y;
        }
    })
}

/// `r.addita(ga)` in f32 (broadcasting).
pub(super) fn added_to(r: &Tensor, ga: &Tensor) -> TResult<Tensor> {
    let shape = broadcast_shapes(r.shape(), ga.shape()).map_err(|e| TensorError {
        message: format!("addita: {}", e.message),
        ..e
    })?;
    made(&shape, |o| {
        binary_f32(
            BinOp::Add,
            r.data32(),
            r.shape(),
            ga.data32(),
            ga.shape(),
            &shape,
            o,
        )
    })
}

/// `x · s` per element (`x.multiplica(s)` with `s` a rank-0 f32 tensor).
pub(super) fn times(x: &Tensor, s: f32) -> TResult<Tensor> {
    let xd = x.data32();
    made(x.shape(), |o| {
        for (o, &v) in o.iter_mut().zip(xd) {
            *o = v * s;
        }
    })
}

/// The rank-2 `x` (`[r, c]`) transposed (`[c, r]`).
pub(super) fn transposed(x: &Tensor) -> TResult<Tensor> {
    let &[r, c] = x.shape() else {
        return Err(TensorError::shape(format!(
            "transpone: needs a rank-2 tensor, found shape {}",
            fmt_shape(x.shape())
        )));
    };
    let xd = x.data32();
    made(&[c, r], |o| {
        for (i, row) in xd.chunks_exact(c.max(1)).take(r).enumerate() {
            for (j, &v) in row.iter().enumerate() {
                o[j * r + i] = v;
            }
        }
    })
}

/// `g.summa_ad_formam(shape)` in f32 (`g` itself when it has that shape).
pub(super) fn summed_to(g: &Tensor, shape: &[usize]) -> TResult<Tensor> {
    if g.shape() == shape {
        return Ok(g.clone());
    }
    let v = sum_to_shape_f32(g.data32(), g.shape(), shape)?;
    Tensor::from_f32(v, shape)
}
