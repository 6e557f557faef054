//! `x.lineare(w, b)`: the product and its bias in one result buffer.

use super::product::matmul;
use crate::tensor::par::PAR_MIN_MAP;
use crate::tensor::{bias_conflict, fmt_shape, pool, threads, TResult, Tensor, TensorError};

/// `x.lineare(w, b)`: `(x · w).addita_bias(b)` with the bias added in place to the
/// product's fresh buffer while it is still in cache (one result buffer instead of
/// two; `v + w` per element, the same bits as the two ops).
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> TResult<Tensor> {
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
    let bd = b.data();
    let yd = y.data_mut();
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
        let blocks: Vec<&mut [f64]> = yd.chunks_mut(per).collect();
        pool::run_each(blocks, &|_, block: &mut [f64]| {
            for row in block.chunks_exact_mut(c) {
                for (v, &w) in row.iter_mut().zip(bd) {
                    *v += w;
                }
            }
        });
    }
    Ok(y)
}
