//! `x.lineare(w, b)`: the product and its bias in one result buffer, in f64 or — every
//! operand f32 — natively in f32 (the sgemm's product, then each `v + w` rounded once
//! to f32: the bits of the f32 `matmul` followed by the f32 `addita_bias`).

use super::product::matmul;
use crate::tensor::elem::{by_dtype, Float};
use crate::tensor::par::PAR_MIN_MAP;
use crate::tensor::{bias_conflict, fmt_shape, pool, threads, TResult, Tensor, TensorError};

/// `x.lineare(w, b)`: `(x · w).addita_bias(b)` with the bias added in place to the
/// product's fresh buffer while it is still in cache (one result buffer instead of
/// two; `v + w` per element, the same bits as the two ops). Operands of both element
/// types are computed in f64 (the f32 ones widened exactly).
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> TResult<Tensor> {
    by_dtype!(linear_in, [x, w, b])
}

fn linear_in<T: Float>(x: &Tensor, w: &Tensor, b: &Tensor) -> TResult<Tensor> {
    let mut y = matmul(x, w)?;
    let c = match (y.shape().last(), b.shape()) {
        (Some(&c), &[bc]) if c == bc => c,
        _ => {
            return Err(TensorError::shape(format!(
                "lineare: bias {} does not fit the last axis of the product {} ({})",
                fmt_shape(b.shape()),
                fmt_shape(y.shape()),
                bias_conflict(y.shape(), b.shape())
            )))
        }
    };
    if c == 0 {
        return Ok(y);
    }
    let bd = T::data(b);
    let yd = T::data_mut(&mut y);
    let rows = yd.len() / c;
    let t = if yd.len() >= PAR_MIN_MAP {
        threads().min(rows)
    } else {
        1
    };
    if t <= 1 {
        for row in yd.chunks_exact_mut(c) {
            for (v, &w) in row.iter_mut().zip(bd) {
                *v += w;
            }
        }
    } else {
        let per = rows.div_ceil(t) * c;
        let blocks: Vec<&mut [T]> = yd.chunks_mut(per).collect();
        pool::run_each(blocks, &|_, block: &mut [T]| {
            for row in block.chunks_exact_mut(c) {
                for (v, &w) in row.iter_mut().zip(bd) {
                    *v += w;
                }
            }
        });
    }
    Ok(y)
}
