//! One kernel body for both element types (issue 21): the result buffers of f64 and
//! f32 tensors behind one interface, so a kernel that moves elements without arithmetic
//! (transpose, permute, narrow, concat, pad, the causal mask's copy, the axis maximum
//! and its VJP, argmax) is written once, generic over [`Elem`], and monomorphised for
//! each type. The f64 instance is the code the f64 kernel always ran (an [`Out`] buffer,
//! `par::build_from`), so its results and speed are unchanged; the f32 instance fills a
//! `Vec<f32>` allocated with `f32_vec` (memory-limit checked).
//!
//! [`build_f32`] is the f32 twin of `par::build_from`: an n-element result written
//! block by block on the pool's threads, never zero-filled first.

use std::mem::MaybeUninit;
use std::ops::DerefMut;
use std::rc::Rc;

use crate::tensor::dtype::{f32_vec, Store};
use crate::tensor::par::build_from;
use crate::tensor::par_f32::{par_blocks, SendPtrOf};
use crate::tensor::{alloc, alloc_zeros, Out, Shape, TResult, Tensor};

/// A result buffer under construction, filled front to back (the methods of [`Out`]
/// and of `Vec`).
pub(in crate::tensor) trait Sink<T>: DerefMut<Target = [T]> {
    /// Appends a copy of `src`.
    fn put_slice(&mut self, src: &[T]);
    /// Appends one element.
    fn put(&mut self, v: T);
    /// Fills up to `n` elements with `v`.
    fn fill_to(&mut self, n: usize, v: T);
}

impl Sink<f64> for Out {
    #[inline(always)]
    fn put_slice(&mut self, src: &[f64]) {
        self.extend_from_slice(src)
    }
    #[inline(always)]
    fn put(&mut self, v: f64) {
        self.push(v)
    }
    #[inline(always)]
    fn fill_to(&mut self, n: usize, v: f64) {
        self.resize(n, v)
    }
}

impl Sink<f32> for Vec<f32> {
    #[inline(always)]
    fn put_slice(&mut self, src: &[f32]) {
        self.extend_from_slice(src)
    }
    #[inline(always)]
    fn put(&mut self, v: f32) {
        self.push(v)
    }
    #[inline(always)]
    fn fill_to(&mut self, n: usize, v: f32) {
        if n > self.len() {
            self.resize(n, v)
        }
    }
}

/// An element type a tensor stores: f64 or f32.
pub(in crate::tensor) trait Elem:
    Copy + Send + Sync + PartialOrd + 'static
{
    /// +0.0.
    const ZERO: Self;
    /// Its result buffer.
    type Buf: Sink<Self>;
    /// The elements of `x`, which stores this type (the other type is a bug of the
    /// caller and panics, as [`Tensor::data`] does).
    fn of(x: &Tensor) -> &[Self];
    /// An empty buffer with room for `n` elements (memory-limit checked).
    fn buf(n: usize) -> TResult<Self::Buf>;
    /// `n` zeros (memory-limit checked).
    fn zeros(n: usize) -> TResult<Self::Buf>;
    /// The tensor of `shape` holding the full buffer `b` (product(shape) elements).
    fn finish(shape: &[usize], b: Self::Buf) -> Tensor;
    /// An `n`-element result written by `fill(start, dst)` over blocks of whole `unit`s,
    /// on the pool's threads from `min_par` elements (`par::build_from`).
    fn build<F>(n: usize, unit: usize, min_par: usize, fill: F) -> TResult<Self::Buf>
    where
        F: Fn(usize, &mut [MaybeUninit<Self>]) + Sync;
    /// An index or a count as this type (exact up to 2⁵³ resp. 2²⁴).
    fn from_index(i: usize) -> Self;
}

impl Elem for f64 {
    const ZERO: f64 = 0.0;
    type Buf = Out;
    #[inline(always)]
    fn of(x: &Tensor) -> &[f64] {
        x.data()
    }
    #[inline(always)]
    fn buf(n: usize) -> TResult<Out> {
        alloc(n)
    }
    #[inline(always)]
    fn zeros(n: usize) -> TResult<Out> {
        alloc_zeros(n)
    }
    #[inline(always)]
    fn finish(shape: &[usize], b: Out) -> Tensor {
        Tensor::from_parts(shape, b)
    }
    #[inline(always)]
    fn build<F>(n: usize, unit: usize, min_par: usize, fill: F) -> TResult<Out>
    where
        F: Fn(usize, &mut [MaybeUninit<f64>]) + Sync,
    {
        build_from(n, unit, min_par, fill)
    }
    #[inline(always)]
    fn from_index(i: usize) -> f64 {
        i as f64
    }
}

impl Elem for f32 {
    const ZERO: f32 = 0.0;
    type Buf = Vec<f32>;
    #[inline(always)]
    fn of(x: &Tensor) -> &[f32] {
        x.data32()
    }
    #[inline(always)]
    fn buf(n: usize) -> TResult<Vec<f32>> {
        f32_vec(n)
    }
    fn zeros(n: usize) -> TResult<Vec<f32>> {
        let mut v = f32_vec(n)?;
        v.resize(n, 0.0);
        Ok(v)
    }
    #[inline(always)]
    fn finish(shape: &[usize], b: Vec<f32>) -> Tensor {
        f32_tensor(shape, b)
    }
    #[inline(always)]
    fn build<F>(n: usize, unit: usize, min_par: usize, fill: F) -> TResult<Vec<f32>>
    where
        F: Fn(usize, &mut [MaybeUninit<f32>]) + Sync,
    {
        build_f32(n, unit, min_par, fill)
    }
    #[inline(always)]
    fn from_index(i: usize) -> f32 {
        i as f32
    }
}

/// An f32 tensor of `shape` adopting `v` (the caller has checked that `v` has
/// product(shape) elements; [`Tensor::from_f32`] checks it again for callers outside
/// the kernels).
#[inline(always)]
pub(in crate::tensor) fn f32_tensor(shape: &[usize], v: Vec<f32>) -> Tensor {
    debug_assert_eq!(shape.iter().product::<usize>(), v.len());
    Tensor {
        shape: Shape::new(shape),
        data: Store::F32(Rc::new(v)),
    }
}

/// An f32 tensor of `like`'s shape adopting `v` (`like.numel()` elements).
#[inline(always)]
pub(in crate::tensor) fn f32_like(like: &Tensor, v: Vec<f32>) -> Tensor {
    debug_assert_eq!(like.numel(), v.len());
    Tensor {
        shape: like.shape.clone(),
        data: Store::F32(Rc::new(v)),
    }
}

/// An `n`-element f32 result written by `fill(start, dst)`, which must write every slot
/// of `dst` (elements `start..start + dst.len()`), over blocks of whole `unit`s on the
/// pool's threads from `min_par` elements. Each element depends only on its index, so
/// the result never depends on the thread count.
#[inline(always)]
pub(in crate::tensor) fn build_f32<F>(
    n: usize,
    unit: usize,
    min_par: usize,
    fill: F,
) -> TResult<Vec<f32>>
where
    F: Fn(usize, &mut [MaybeUninit<f32>]) + Sync,
{
    filled_f32(n, |slots| {
        let p = SendPtrOf::new(slots.as_mut_ptr());
        par_blocks(n, unit, min_par, |start, len| {
            // SAFETY: [start, start + len) lies inside the n slots, which outlive
            // `par_blocks`, and no other block covers it.
            fill(start, unsafe { p.part(start, len) })
        })
    })
}

/// An `n`-element f32 result written by `fill(slots)`, which must write every one of
/// its `n` slots (a kernel that splits the work itself).
#[inline(always)]
pub(in crate::tensor) fn filled_f32(
    n: usize,
    fill: impl FnOnce(&mut [MaybeUninit<f32>]),
) -> TResult<Vec<f32>> {
    let mut v = f32_vec(n)?;
    fill(&mut v.spare_capacity_mut()[..n]);
    // SAFETY: `fill` wrote each of the n slots.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// `dst` viewed as slots to write (an initialised slice may always be overwritten).
#[inline(always)]
pub(in crate::tensor) fn as_slots<T>(dst: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: MaybeUninit<T> has T's layout; the slots are only written with valid T
    // values, so `dst` stays initialised.
    unsafe { &mut *(dst as *mut [T] as *mut [MaybeUninit<T>]) }
}
