//! The embedding gather `collige`, forward and backward (`retro_collige`).

use super::elem::new_f32;
use super::embedding_f32::{embedding_backward_f32, embedding_f32};
use super::{
    alloc, alloc_zeros, checked_numel, fmt_shape, shape_difference, DType, TResult, Tensor,
    TensorError,
};

/// `e.collige(ids)`: rows of `E[V, D]` gathered by an integer id tensor of
/// any shape → `ids.shape + [D]`. Ids must be integers in `[0, V)`; they may be of
/// either element type, the result has the table's (an f32 table's rows are copied as
/// they are).
pub fn embedding(table: &Tensor, ids: &Tensor) -> TResult<Tensor> {
    let &[v, d] = table.shape() else {
        return Err(TensorError::shape(format!(
            "collige: the table must be rank 2 [V, D], found {}",
            fmt_shape(table.shape())
        )));
    };
    let idx = ids.to_indices(v, "collige")?;
    let mut shape = ids.shape().to_vec();
    shape.push(d);
    if table.dtype() == DType::F32 {
        return new_f32(&shape, |o| embedding_f32(table.data32(), d, &idx, o));
    }
    let n = checked_numel(&shape)?;
    let mut out = alloc(n)?;
    for &i in &idx {
        out.extend_from_slice(&table.data()[i * d..(i + 1) * d]);
    }
    Ok(Tensor::from_parts(shape, out))
}

/// `collige` VJP *(helper)*: `gE = zeros([V, D])`, then for each id in
/// row-major order `gE[id] += g[t]` (repeated ids accumulate in order).
/// `g` has shape `ids.shape + [D]`. An f32 `g` gives an f32 table gradient: each row's
/// terms summed in f64 in token order and rounded once (embedding_f32.rs); `ids` may
/// be of either type.
pub fn embedding_backward(ids: &Tensor, g: &Tensor, vocab: usize) -> TResult<Tensor> {
    let Some((&d, lead)) = g.shape().split_last() else {
        return Err(TensorError::shape("collige backward: rank-0 gradient"));
    };
    if lead != ids.shape() {
        return Err(TensorError::shape(format!(
            "collige backward: gradient {} does not fit ids {} (its leading axes against the ids: {})",
            fmt_shape(g.shape()),
            fmt_shape(ids.shape()),
            shape_difference(lead, ids.shape())
        )));
    }
    let idx = ids.to_indices(vocab, "collige backward")?;
    let shape = [vocab, d];
    if g.dtype() == DType::F32 {
        return new_f32(&shape, |o| {
            embedding_backward_f32(&idx, g.data32(), d, vocab, o)
        });
    }
    let n = checked_numel(&shape)?;
    let mut out = alloc_zeros(n)?;
    if d > 0 {
        for (&i, row) in idx.iter().zip(g.data().chunks_exact(d)) {
            for (o, &v) in out[i * d..(i + 1) * d].iter_mut().zip(row) {
                *o += v;
            }
        }
    }
    Ok(Tensor::from_parts(shape, out))
}

/// `g.retro_collige(ids, table)`: [`embedding_backward`] into a table of `table`'s
/// row count (its first axis; 0 at rank 0). The gradient has the type `g` and the table
/// promote to (only the table's shape is read).
pub fn embedding_table_backward(ids: &Tensor, g: &Tensor, table: &Tensor) -> TResult<Tensor> {
    let vocab = table.shape().first().copied().unwrap_or(0);
    if g.dtype() == DType::F32 && table.dtype() == DType::F64 {
        return embedding_backward(ids, &g.to_dtype(DType::F64)?, vocab);
    }
    embedding_backward(ids, g, vocab)
}
