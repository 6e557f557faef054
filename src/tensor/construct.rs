//! Construction: `crea` (fill), `vacua` (zeros), `strue` (from a flat list).

use super::dtype::Store;
use super::{alloc, checked_numel, fmt_shape, DType, Shape, TResult, Tensor, TensorError};

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
    /// One block per element count and type.
    blocks: std::collections::HashMap<(usize, DType), super::dtype::Store>,
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

    /// [`Tensor::full`] of element type `dtype` (an f32 tensor holds `fill` rounded
    /// once).
    pub fn full_of(dtype: DType, fill: f64, shape: &[usize]) -> TResult<Tensor> {
        match dtype {
            DType::F64 => Tensor::full(fill, shape),
            DType::F32 => Tensor::full_f32(fill as f32, shape),
        }
    }

    /// [`Tensor::from_flat`] of element type `dtype` (an f32 tensor holds each value
    /// rounded once).
    pub fn from_flat_of(dtype: DType, data: Vec<f64>, shape: &[usize]) -> TResult<Tensor> {
        match dtype {
            DType::F64 => Tensor::from_flat(data, shape),
            DType::F32 => {
                super::flat_len(data.len(), shape)?;
                let mut v = super::f32_vec(data.len())?;
                v.extend(data.iter().map(|&x| x as f32));
                Tensor::from_f32(v, shape)
            }
        }
    }

    /// `vacua`: zero-filled (rank 0: one 0.0). From [`SHARED_ZEROS_FROM`] elements
    /// the tensors of one size share a cached block of zeros (tensors are immutable and
    /// a write copies first): the zero accumulators of a backward pass then cost
    /// nothing after the first step, and [`Tensor::is_shared_zeros`] recognises them.
    pub fn zeros(shape: &[usize]) -> TResult<Tensor> {
        Tensor::zeros_of(DType::F64, shape)
    }

    /// [`Tensor::zeros`] of element type `dtype` (f32 zeros share their own blocks).
    pub fn zeros_of(dtype: DType, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        let fresh = |shape: &[usize]| match dtype {
            DType::F64 => Tensor::full(0.0, shape),
            DType::F32 => Tensor::full_f32(0.0, shape),
        };
        if n < SHARED_ZEROS_FROM {
            return fresh(shape);
        }
        if let Some(data) = ZEROS.with(|z| z.borrow().blocks.get(&(n, dtype)).cloned()) {
            return Ok(Tensor {
                shape: Shape::new(shape),
                data,
            });
        }
        let t = fresh(shape)?;
        ZEROS.with(|z| {
            let mut z = z.borrow_mut();
            if z.elements + n <= SHARED_ZEROS_MAX {
                z.elements += n;
                z.blocks.insert((n, dtype), t.data.clone());
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
                    .get(&(n, self.dtype()))
                    .is_some_and(|b| match (b, &self.data) {
                        (Store::F64(b), Store::F64(d)) => b.ptr_eq(d),
                        (Store::F32(b), Store::F32(d)) => std::rc::Rc::ptr_eq(b, d),
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
