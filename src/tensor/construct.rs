//! Construction: `crea` (fill), `vacua` (zeros), `strue` (from a flat list).

use super::dtype::Store;
use super::{alloc, checked_numel, fmt_shape, Shape, TResult, Tensor, TensorError};

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

/// Zero tensors of at least this many elements share a cached block per size.
const SHARED_ZEROS_FROM: usize = 1 << 12;
/// At most this many elements of cached zeros per thread (32 MiB); sizes beyond are
/// not cached.
const SHARED_ZEROS_MAX: usize = 1 << 22;

#[derive(Default)]
struct SharedZeros {
    blocks: std::collections::HashMap<usize, super::dtype::Store>,
    elements: usize,
}

thread_local! {
    static ZEROS: std::cell::RefCell<SharedZeros> = std::cell::RefCell::new(SharedZeros::default());
}

impl Tensor {
    /// `seed.crea(fill, shape)`: every element equal to `fill`.
    pub fn full(fill: f64, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        // Filled on several threads from `PAR_MIN_MAP` elements (the zero accumulators
        // of a backward pass are activation-sized).
        let v = super::par::build(n, 1, |_, dst| {
            for d in dst {
                d.write(fill);
            }
        })?;
        Ok(Tensor::from_parts(shape, v))
    }

    /// `vacua`: zero-filled (rank 0: one 0.0). From [`SHARED_ZEROS_FROM`] elements
    /// the tensors of one size share a cached block of zeros (tensors are immutable and
    /// a write copies first): the zero accumulators of a backward pass then cost
    /// nothing after the first step, and [`Tensor::is_shared_zeros`] recognises them.
    pub fn zeros(shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        if n < SHARED_ZEROS_FROM {
            return Tensor::full(0.0, shape);
        }
        if let Some(data) = ZEROS.with(|z| z.borrow().blocks.get(&n).cloned()) {
            return Ok(Tensor {
                shape: Shape::new(shape),
                data,
            });
        }
        let t = Tensor::full(0.0, shape)?;
        ZEROS.with(|z| {
            let mut z = z.borrow_mut();
            if z.elements + n <= SHARED_ZEROS_MAX {
                z.elements += n;
                z.blocks.insert(n, t.data.clone());
            }
        });
        Ok(t)
    }

    /// Whether this tensor holds this thread's shared block of zeros for its size (so
    /// every element is +0.0), as [`Tensor::zeros`] hands out.
    pub fn is_shared_zeros(&self) -> bool {
        let n = self.numel();
        n >= SHARED_ZEROS_FROM
            && ZEROS.with(|z| {
                z.borrow()
                    .blocks
                    .get(&n)
                    .is_some_and(|b| match (b, &self.data) {
                        (Store::F64(b), Store::F64(d)) => b.ptr_eq(d),
                        _ => false,
                    })
            })
    }

    /// `seed.strue(flat, shape)`: a flat row-major list with exactly
    /// product(shape) elements (else a `Shape` error).
    pub fn from_flat(data: Vec<f64>, shape: &[usize]) -> TResult<Tensor> {
        super::flat_len(data.len(), shape)?;
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
