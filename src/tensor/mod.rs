//! The tensor runtime: dense row-major f64 and f32 tensors and the kernels the
//! evaluator calls for `tensor<…>` methods. It knows nothing about the
//! evaluator; every operation is a plain function returning
//! `Result<Tensor, TensorError>` and never panics on user input.
//!
//! See docs/ops.md for every operation, its Latin method name, shape rules,
//! numeric recipe and error cases.
//!
//! * A tensor stores f64 or f32 elements ([`DType`], dtype.rs; docs/precision.md).
//!   Every public entry is dtype-aware: after its checks it runs an f64 tensor with its
//!   f64 code and an f32 tensor with its f32 kernel (`*_f32.rs`, gemm/sgemm/; the
//!   copies and the products are one body generic over the element, elem/), and
//!   tensors of both types in one call are promoted to f64 (elem/mod.rs).
//!   Integer tensors (token ids) hold integral values.
//! * F64 storage is one reference-counted block (`buf::Buf`), F32 storage a shared
//!   `Vec<f32>`, both copy-on-write; shapes of rank ≤ 4 are held inline (no
//!   allocation).
//! * Every operation allocates exactly one result buffer, checked against the
//!   thread's [`Limits`] (a result with more than `max_elements` elements is a
//!   `Limit` error, never an abort).
//!
//! Files, one family per file or folder, forward and backward together:
//!
//! * `mod.rs` (this file): [`Tensor`], its shape, the run limits and thread count;
//!   dtype.rs (element types, the precision policy, f32 storage), buf.rs (f64 storage), pool.rs (worker threads), par.rs (row-parallel building blocks,
//!   the one `SendPtr`), error.rs (errors, their wording, the shared shape checks);
//! * construct.rs, rng.rs, shape.rs (shape ops and their VJP helpers, broadcasting),
//!   elementwise.rs (broadcast binary ops and unary maps, ReLU and its mask),
//!   reduce.rs (reductions and their VJPs), accumulate.rs (when `x + y` is `y`);
//! * dd.rs, exp_cr.rs, tanh/ — the correctly rounded exp and tanh; activation/ —
//!   GELU, which runs inside the tanh maps through their `TanhOf` interface;
//! * gemm/ — the GEMM kernels (`Strides`, `Tri`, `Post`, exact, AVX-512 packed and
//!   unpacked, matrixmultiply; sgemm/ for f32); matmul/ — `matmul`, `lineare` and
//!   their VJPs, generic over the element (elem.rs: f64, and f32 natively);
//! * softmax/ — softmax, log-softmax, the causal softmax and mask, the
//!   cross-entropies; norm/ — LayerNorm; embedding.rs; attention/ (the fused
//!   attention ops); optim.rs (the fused AdamW step).

mod accumulate;
mod activation;
mod attention;
mod buf;
mod construct;
mod dd;
mod device_data;
mod dtype;
mod elem;
mod elementwise;
mod elementwise_f32;
mod embedding;
mod embedding_f32;
mod error;
mod exp_cr;
mod exp_f32;
#[doc(hidden)]
pub mod f32ops;
mod gemm;
mod matmul;
mod norm;
mod optim;
mod optim_f32;
mod par;
mod par_f32;
mod pool;
mod reduce;
mod reduce_f32;
mod remote;
mod rng;
mod shape;
mod softmax;
mod tanh;

pub use accumulate::*;
pub use activation::*;
pub use attention::*;
pub use construct::*;
pub use device_data::{count_fetched, fetched_bytes, DeviceData, DeviceLost, HostData};
pub use dtype::{precision, set_precision, DType};
pub use elementwise::*;
pub use embedding::*;
use error::{bias_conflict, check_same, last_axis, nonempty_last_axis};
pub use error::{
    broadcast_conflict, broadcast_message, shape_difference, TResult, TensorError, TensorErrorKind,
};
pub use exp_cr::exp_cr;
use exp_cr::{exp_cr_in_place, exp_cr_map};
pub use matmul::*;
pub use norm::*;
pub use optim::*;
pub use reduce::*;
pub use rng::*;
pub use shape::*;
pub use softmax::*;
pub use tanh::{tanh_cr, tanh_exp};

use std::cell::Cell;

use buf::Buf;
use buf::Out;
use dtype::{f32_in_f64_path, remote_not_held, Store};
pub(in crate::tensor) use dtype::{f32_vec, f64_in_f32_path};

/// An empty `Vec` with room for `n` elements that becomes a tensor's storage
/// ([`Tensor::from_flat`]) without being copied or grown.
fn vec_for_tensor(n: usize) -> Vec<f64> {
    buf::vec_for(n)
}

/// Resource limits for tensor allocations (per thread).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Largest element count of any one tensor an operation may allocate.
    pub max_elements: usize,
}

impl Limits {
    /// 4 GiB worth of f64 elements: 4·2³⁰ / 8 = 536 870 912.
    const DEFAULT: Limits = Limits {
        max_elements: (4usize << 30) / 8,
    };
}

impl Default for Limits {
    /// 4 GiB worth of f64 elements: 4·2³⁰ / 8 = 536 870 912.
    fn default() -> Self {
        Limits::DEFAULT
    }
}

thread_local! {
    static LIMITS: Cell<Limits> = const { Cell::new(Limits::DEFAULT) };
    static THREADS: Cell<usize> = const { Cell::new(0) };
}

impl Limits {
    /// The limits in force on this thread.
    pub fn current() -> Limits {
        LIMITS.with(|l| l.get())
    }
    /// Sets the limits for this thread; returns the previous ones.
    pub fn set_current(limits: Limits) -> Limits {
        LIMITS.with(|l| l.replace(limits))
    }
}

/// Number of worker threads row-parallel kernels may use on this thread
/// (0 = `std::thread::available_parallelism`). Results never depend on it.
pub fn set_threads(n: usize) -> usize {
    THREADS.with(|t| t.replace(n))
}

fn threads() -> usize {
    // `available_parallelism` reads the system's CPU and cgroup files (tens of µs),
    // so it is asked once per process.
    static AVAILABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match THREADS.with(|t| t.get()) {
        0 => *AVAILABLE.get_or_init(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        }),
        n => n,
    }
}

/// Whether a flat list of `len` elements fills `shape` exactly
/// (`strue`, f64 and f32 alike): else a `Shape` error.
fn flat_len(len: usize, shape: &[usize]) -> TResult<()> {
    let n = checked_numel(shape)?;
    if len != n {
        return Err(TensorError::shape(format!(
            "strue: {len} elements given for shape {} which holds {n}",
            fmt_shape(shape)
        )));
    }
    Ok(())
}

/// Element count of `shape`, with overflow and the thread's limit checked.
pub fn checked_numel(shape: &[usize]) -> TResult<usize> {
    let mut n: usize = 1;
    for &d in shape {
        n = n.checked_mul(d).ok_or_else(|| {
            TensorError::limit(format!(
                "tensor of shape {} has too many elements",
                fmt_shape(shape)
            ))
        })?;
    }
    let max = Limits::current().max_elements;
    if n > max {
        return Err(TensorError::limit(format!(
            "tensor of shape {} has {n} elements, more than the limit of {max}",
            fmt_shape(shape)
        )));
    }
    Ok(n)
}

/// An empty result buffer with room for exactly `n` elements, or a `Limit` error
/// when the system refuses the allocation.
#[inline]
fn alloc(n: usize) -> TResult<Out> {
    Out::with_capacity(n)
}

/// A zero-filled result buffer of `n` elements (limit already checked by the caller).
fn alloc_zeros(n: usize) -> TResult<Out> {
    Out::zeros(n)
}

/// `[2, 3]`-style rendering of a shape for messages.
pub fn fmt_shape(shape: &[usize]) -> String {
    let parts: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    format!("[{}]", parts.join(", "))
}

/// Axes held inline; a higher rank spills to the heap.
const INLINE_RANK: usize = 4;

/// A shape: up to [`INLINE_RANK`] sizes inline (unused ones 0, so two inline
/// shapes are equal exactly when their words are), longer ones boxed.
enum Shape {
    Inline(u8, [usize; INLINE_RANK]),
    Heap(Box<[usize]>),
}

impl Clone for Shape {
    #[inline(always)]
    fn clone(&self) -> Shape {
        match self {
            Shape::Inline(n, d) => Shape::Inline(*n, *d),
            Shape::Heap(d) => Shape::Heap(d.clone()),
        }
    }
}

impl Shape {
    #[inline(always)]
    fn new(dims: &[usize]) -> Shape {
        if dims.len() <= INLINE_RANK {
            let mut d = [0; INLINE_RANK];
            d[..dims.len()].copy_from_slice(dims);
            Shape::Inline(dims.len() as u8, d)
        } else {
            Shape::Heap(dims.into())
        }
    }

    #[inline(always)]
    fn as_slice(&self) -> &[usize] {
        match self {
            Shape::Inline(n, d) => &d[..(*n as usize).min(INLINE_RANK)],
            Shape::Heap(d) => d,
        }
    }
}

impl PartialEq for Shape {
    #[inline(always)]
    fn eq(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Inline(n, d), Shape::Inline(m, e)) => n == m && d == e,
            _ => self.as_slice() == other.as_slice(),
        }
    }
}

impl std::fmt::Debug for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// A dense row-major tensor of f64 or f32 elements ([`DType`], dtype.rs) with
/// copy-on-write storage.
///
/// Invariant: `data.len()` equals the product of `shape` (1 for rank 0).
#[derive(Clone, Debug)]
pub struct Tensor {
    shape: Shape,
    data: Store,
}

impl PartialEq for Tensor {
    /// Same shape and the same element values (an f32 element compares as its exact
    /// f64 value, so tensors of the two types can be equal).
    fn eq(&self, other: &Tensor) -> bool {
        self.shape == other.shape
            && match (self.data_f64(), other.data_f64()) {
                (Some(a), Some(b)) => a == b,
                _ => self.values() == other.values(),
            }
    }
}

impl Tensor {
    /// Builds a tensor from a filled result buffer the caller has checked against
    /// `shape` (crate use).
    #[inline(always)]
    pub(in crate::tensor) fn from_parts(shape: impl AsRef<[usize]>, data: Out) -> Tensor {
        let shape = shape.as_ref();
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        Tensor {
            shape: Shape::new(shape),
            data: Store::F64(data.finish()),
        }
    }

    /// A tensor of `like`'s shape holding `data` (same element count; crate use).
    #[inline(always)]
    pub(in crate::tensor) fn shaped_like(like: &Tensor, data: Out) -> Tensor {
        debug_assert_eq!(like.numel(), data.len());
        Tensor {
            shape: like.shape.clone(),
            data: Store::F64(data.finish()),
        }
    }

    /// Builds a tensor adopting `data`'s allocation (the caller has checked the
    /// element count against `shape`; crate use).
    pub(in crate::tensor) fn from_vec_parts(shape: &[usize], data: Vec<f64>) -> TResult<Tensor> {
        debug_assert_eq!(shape.iter().product::<usize>(), data.len());
        Ok(Tensor {
            shape: Shape::new(shape),
            data: Store::F64(Buf::from_vec(data)?),
        })
    }

    /// A view of `x`'s buffer under another shape with the same element count
    /// (`forma`; crate use; either element type).
    pub(in crate::tensor) fn reshaped(x: &Tensor, shape: &[usize]) -> Tensor {
        debug_assert_eq!(shape.iter().product::<usize>(), x.numel());
        Tensor {
            shape: Shape::new(shape),
            data: x.data.clone(),
        }
    }

    /// A rank-0 tensor holding `value`.
    pub fn scalar(value: f64) -> Tensor {
        let mut out = match Out::with_capacity_unmetered(1) {
            Ok(o) => o,
            Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<f64>()),
        };
        out.push(value);
        Tensor::from_parts([], out)
    }

    /// The shape (`[]` at rank 0).
    #[inline(always)]
    pub fn shape(&self) -> &[usize] {
        self.shape.as_slice()
    }

    /// Whether two tensors have the same shape.
    #[inline(always)]
    pub fn same_shape(&self, other: &Tensor) -> bool {
        self.shape == other.shape
    }

    /// The rank (`longitudo`): number of axes, 0 for a scalar.
    pub fn rank(&self) -> usize {
        self.shape().len()
    }

    /// Number of elements (1 at rank 0).
    #[inline(always)]
    pub fn numel(&self) -> usize {
        self.data.len()
    }

    /// The elements of an f64 tensor in row-major order, for the f64 kernels.
    ///
    /// An f32 tensor here is a bug of the caller (it panics saying so): kernels get
    /// f64 operands (the evaluator widens f32 ones first), and code that may hold
    /// either type reads [`Tensor::values`], [`Tensor::value_at`] or
    /// [`Tensor::data_f32`] (dtype.rs).
    #[inline(always)]
    pub fn data(&self) -> &[f64] {
        match self.held() {
            Store::F64(b) => b.as_slice(),
            Store::F32(_) => f32_in_f64_path(),
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// Mutable elements of an f64 tensor, copying the buffer first if it is shared
    /// (an f32 tensor: as [`Tensor::data`]; see [`Tensor::data_f32_mut`]).
    pub fn data_mut(&mut self) -> &mut [f64] {
        match self.held_mut() {
            Store::F64(b) => b.make_mut(),
            Store::F32(_) => f32_in_f64_path(),
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// Whether two tensors share one buffer (copy-on-write not yet triggered).
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        match (&self.data, &other.data) {
            (Store::F64(a), Store::F64(b)) => a.ptr_eq(b),
            (Store::F32(a), Store::F32(b)) => std::rc::Rc::ptr_eq(a, b),
            (Store::Remote(a), Store::Remote(b)) => std::rc::Rc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Whether this tensor is the only handle on its storage (no other tensor
    /// shares it): a cache that keeps a clone to recognise the storage can drop it
    /// once its clone is the last one.
    pub fn storage_unique(&self) -> bool {
        match &self.data {
            Store::F64(b) => b.is_unique(),
            Store::F32(v) => std::rc::Rc::strong_count(v) == 1,
            Store::Remote(r) => std::rc::Rc::strong_count(r) == 1,
        }
    }

    /// The single element of a one-element tensor (any rank), as an f64.
    pub fn item(&self) -> TResult<f64> {
        match (self.numel(), self.value_at(0)) {
            (1, Some(x)) => Ok(x),
            _ => Err(TensorError::shape(format!(
                "expected a one-element tensor, found shape {}",
                fmt_shape(self.shape())
            ))),
        }
    }

    /// Row-major offset of a coordinate list (`accipe`/`ponde` index).
    /// Wrong coordinate count → `Shape`; a coordinate out of range → `Index`.
    pub fn offset(&self, index: &[i64]) -> TResult<usize> {
        let shape = self.shape();
        if index.len() != shape.len() {
            return Err(TensorError::shape(format!(
                "index has {} coordinates but the tensor has rank {}",
                index.len(),
                shape.len()
            )));
        }
        let mut off = 0usize;
        for (axis, (&i, &d)) in index.iter().zip(shape).enumerate() {
            if i < 0 || (i as u64) >= d as u64 {
                return Err(TensorError::index(format!(
                    "index {i} out of range for axis {axis} of size {d}"
                )));
            }
            off = off * d + i as usize;
        }
        Ok(off)
    }

    /// The element at a coordinate list (`accipe`), as an f64.
    pub fn get(&self, index: &[i64]) -> TResult<f64> {
        let off = self.offset(index)?;
        // `offset` checked the coordinates against the shape.
        Ok(self.value_at(off).unwrap_or(f64::NAN))
    }

    /// Writes one element (`ponde`), copying shared storage first; an f32 tensor
    /// stores `value` rounded once to f32.
    pub fn set(&mut self, index: &[i64], value: f64) -> TResult<()> {
        let off = self.offset(index)?;
        if let Some(d) = self.data_f32_mut() {
            d[off] = value as f32;
        } else {
            self.data_mut()[off] = value;
        }
        Ok(())
    }

    /// Sets every element to `value` (`reple`; an f32 tensor: `value` rounded once).
    pub fn fill_with(&mut self, value: f64) {
        if let Some(d) = self.data_f32_mut() {
            d.fill(value as f32);
            return;
        }
        if matches!(&self.data, Store::F64(b) if b.is_unique()) {
            self.data_mut().fill(value);
        } else {
            let n = self.numel();
            // A copy-on-write copy of an existing block: not metered (see `Out`).
            let mut out = match Out::with_capacity_unmetered(n) {
                Ok(o) => o,
                Err(_) => std::alloc::handle_alloc_error(std::alloc::Layout::new::<f64>()),
            };
            out.resize(n, value);
            self.data = Store::F64(out.finish());
        }
    }

    /// Validates that every element is an integer in `[0, bound)` and returns
    /// them as indices (ids for gathers, targets, argmax results).
    pub fn to_indices(&self, bound: usize, what: &str) -> TResult<Vec<usize>> {
        // An f32 tensor's elements widened one by one (no widened copy first).
        match self.data_f32() {
            Some(d) => indices(d.iter().map(|&v| v as f64), self.numel(), bound, what),
            None => indices(self.data().iter().copied(), self.numel(), bound, what),
        }
    }
}

/// [`Tensor::to_indices`] of `n` values.
fn indices(
    values: impl Iterator<Item = f64>,
    n: usize,
    bound: usize,
    what: &str,
) -> TResult<Vec<usize>> {
    let mut out = Vec::with_capacity(n);
    for v in values {
        if v.fract() != 0.0 || !v.is_finite() {
            return Err(TensorError::index(format!(
                "{what}: id {v} is not an integer"
            )));
        }
        if v < 0.0 || v >= bound as f64 {
            return Err(TensorError::index(format!(
                "{what}: id {v} out of range 0..{bound}"
            )));
        }
        out.push(v as usize);
    }
    Ok(out)
}
