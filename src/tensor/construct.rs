//! Construction: `crea` (fill), `vacua` (zeros), `strue` (from a flat list).

use super::{alloc, checked_numel, fmt_shape, TResult, Tensor, TensorError};

/// Converts a user shape (`lista<numerus>`) to dimensions: a negative size is
/// a `Shape` error; the element count is checked against the limit.
pub fn dims_from_i64(dims: &[i64]) -> TResult<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for (axis, &d) in dims.iter().enumerate() {
        if d < 0 {
            return Err(TensorError::shape(format!(
                "negative size {d} for axis {axis} of a shape"
            )));
        }
        out.push(
            usize::try_from(d).map_err(|_| {
                TensorError::limit(format!("size {d} for axis {axis} is too large"))
            })?,
        );
    }
    checked_numel(&out)?;
    Ok(out)
}

impl Tensor {
    /// `seed.crea(fill, shape)`: every element equal to `fill`.
    pub fn full(fill: f64, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        // Filled on several threads from `PAR_MIN_MAP` elements (the zero accumulators
        // of a backward pass are activation-sized).
        let v = super::elementwise::build(n, 1, |_, dst| {
            for d in dst {
                d.write(fill);
            }
        })?;
        Ok(Tensor::from_parts(shape, v))
    }

    /// `vacua`: zero-filled (rank 0: one 0.0).
    pub fn zeros(shape: &[usize]) -> TResult<Tensor> {
        Tensor::full(0.0, shape)
    }

    /// `seed.strue(flat, shape)`: a flat row-major list with exactly
    /// product(shape) elements (else a `Shape` error).
    pub fn from_flat(data: Vec<f64>, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        if data.len() != n {
            return Err(TensorError::shape(format!(
                "strue: {} elements given for shape {} which holds {n}",
                data.len(),
                fmt_shape(shape)
            )));
        }
        Tensor::from_vec_parts(shape, data)
    }

    /// Like [`Tensor::from_flat`] but copies from a slice.
    pub fn from_slice(data: &[f64], shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        if data.len() != n {
            return Err(TensorError::shape(format!(
                "strue: {} elements given for shape {} which holds {n}",
                data.len(),
                fmt_shape(shape)
            )));
        }
        let mut v = alloc(n)?;
        v.extend_from_slice(data);
        Ok(Tensor::from_parts(shape, v))
    }

    /// A rank-1 tensor of the given values.
    pub fn vector(data: Vec<f64>) -> TResult<Tensor> {
        let n = data.len();
        checked_numel(&[n])?;
        Tensor::from_vec_parts(&[n], data)
    }
}
