//! The embedding gather `collige`, forward and backward (`retro_collige`).

use super::{
    alloc, alloc_zeros, checked_numel, fmt_shape, shape_difference, TResult, Tensor, TensorError,
};

/// `e.collige(ids)`: rows of `E[V, D]` gathered by an integer id tensor of
/// any shape → `ids.shape + [D]`. Ids must be integers in `[0, V)`.
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
    let n = checked_numel(&shape)?;
    let mut out = alloc(n)?;
    for &i in &idx {
        out.extend_from_slice(&table.data()[i * d..(i + 1) * d]);
    }
    Ok(Tensor::from_parts(shape, out))
}

/// `collige` VJP *(helper)*: `gE = zeros([V, D])`, then for each id in
/// row-major order `gE[id] += g[t]` (repeated ids accumulate in order).
/// `g` has shape `ids.shape + [D]`.
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
/// row count (its first axis; 0 at rank 0).
pub fn embedding_table_backward(ids: &Tensor, g: &Tensor, table: &Tensor) -> TResult<Tensor> {
    let vocab = table.shape().first().copied().unwrap_or(0);
    embedding_backward(ids, g, vocab)
}
