//! The element types the product family is generic over ([`Float`]: f64 and f32), so
//! that `matmul`, `lineare`, their VJPs and the fused attention have one copy of their
//! shape logic and run natively on either storage (docs/precision.md):
//!
//! * where a tensor's elements are ([`Float::data`], [`Float::data_mut`]: `Tensor::data`
//!   for f64, `Tensor::data32` for f32) and how a result is allocated and becomes a
//!   tensor ([`Float::alloc`], [`ResultBuf`]: buf.rs's `Out` for f64, a `Vec<f32>` from
//!   `f32_vec` for f32, both checked against the memory limit);
//! * the GEMM hooks: [`Float::gemm_fast`] (gemm/dispatch.rs's `gemm_fast`, the sgemm's
//!   `gemm_fast_f32`) and [`Float::gemm_unpacked_into`] (the unpacked kernels with their
//!   causal [`Tri`] forms); the exact in-order kernels are generic already
//!   (gemm/exact.rs's `Elem`);
//! * which kernel a small product takes: in f64 the exact in-order kernel, which
//!   reproduces the oracle captures bit for bit; in f32 always the sgemm (f32 FMA
//!   accumulation, as PyTorch and MKL do: there is no f32 oracle capture to reproduce, and
//!   one kernel for every size keeps a product the same bits however it is batched or
//!   shaped — a mat-vec is the sgemm's `[m, k]·[k, 1]`).
//!
//! The f64 monomorphisation of every generic function is the code the f64 path ran
//! before, so its results are the same bits.

use std::ops::DerefMut;

use crate::tensor::buf::Out;
use crate::tensor::gemm::{
    gemm_fast, gemm_fast_f32, gemm_unpacked_into_f32, Elem as Exact, PostOp, Strides, Tri,
};
use crate::tensor::{f32_vec, TResult, Tensor};

/// A result buffer under construction: a slice of what has been written, and the
/// tensor it becomes.
pub(in crate::tensor) trait ResultBuf<T>: DerefMut<Target = [T]> + Sized {
    /// Declares the whole buffer filled and returns its first slot, for kernels that
    /// write through raw pointers.
    ///
    /// # Safety
    /// Every slot must be written through the pointer before the buffer becomes a
    /// tensor; until then the slice view shows only the elements pushed (or zeroed).
    unsafe fn assume_filled(&mut self) -> *mut T;
    /// Appends one element (past the capacity: a bug, panic).
    fn push(&mut self, v: T);
    /// The tensor of `shape` holding the buffer (every slot written).
    fn into_tensor(self, shape: &[usize]) -> TResult<Tensor>;
}

impl ResultBuf<f64> for Out {
    #[inline(always)]
    unsafe fn assume_filled(&mut self) -> *mut f64 {
        // SAFETY: as this function requires.
        unsafe { Out::assume_filled(self) }
    }
    #[inline(always)]
    fn push(&mut self, v: f64) {
        Out::push(self, v)
    }
    #[inline(always)]
    fn into_tensor(self, shape: &[usize]) -> TResult<Tensor> {
        Ok(Tensor::from_parts(shape, self))
    }
}

/// An f32 result buffer: a `Vec<f32>` of exactly `cap` reserved elements (from
/// `f32_vec`, so checked against the memory limit).
pub(in crate::tensor) struct Out32 {
    v: Vec<f32>,
    cap: usize,
    /// Filled through the pointer of [`ResultBuf::assume_filled`].
    assumed: bool,
}

impl std::ops::Deref for Out32 {
    type Target = [f32];
    #[inline(always)]
    fn deref(&self) -> &[f32] {
        &self.v
    }
}

impl DerefMut for Out32 {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [f32] {
        &mut self.v
    }
}

impl ResultBuf<f32> for Out32 {
    #[inline(always)]
    unsafe fn assume_filled(&mut self) -> *mut f32 {
        self.assumed = true;
        self.v.as_mut_ptr()
    }
    #[inline(always)]
    fn push(&mut self, x: f32) {
        assert!(self.v.len() < self.cap, "tensor buffer overfilled");
        self.v.push(x)
    }
    fn into_tensor(mut self, shape: &[usize]) -> TResult<Tensor> {
        if self.assumed {
            // SAFETY: the capacity holds `cap` elements, every one written through the
            // pointer of `assume_filled` (its contract).
            unsafe { self.v.set_len(self.cap) };
        }
        Tensor::from_f32(self.v, shape)
    }
}

/// An element type of the product family: f64 or f32 (module docs).
pub(in crate::tensor) trait Float:
    Exact + PartialEq + PartialOrd + Send + Sync + std::fmt::Debug + 'static
{
    /// 0.
    const ZERO: Self;
    /// Whether small products take the exact in-order kernel under `matmul`'s
    /// automatic choice (up to `EXACT_MATMUL_MAX_WORK`), and dot products, mat-vec and
    /// vec-mat the in-order loops (f64: the oracles' recipe); else (f32) the sgemm takes
    /// every product, vectors as their matrix forms.
    const EXACT_SMALL: bool;
    /// The result buffer.
    type Out: ResultBuf<Self>;

    /// The elements of a tensor of this type (another type: a bug, panic).
    fn data(t: &Tensor) -> &[Self];
    /// Mutable elements of a tensor of this type (copying shared storage first).
    fn data_mut(t: &mut Tensor) -> &mut [Self];
    /// Room for `n` elements (memory limit checked).
    fn alloc(n: usize) -> TResult<Self::Out>;
    /// `n` zeros (memory limit checked).
    fn alloc_zeros(n: usize) -> TResult<Self::Out>;
    /// The magnitude bits (sign dropped): 0 exactly for ±0.
    fn magnitude_bits(self) -> u64;

    /// The tuned GEMM: `c = a·b` (`m×n`, row-major, every element written), with an
    /// optional epilogue; thread-count invariant.
    ///
    /// # Safety
    /// As gemm/dispatch.rs's `gemm_fast` (`c` addresses `m·n` writable elements that
    /// nothing else accesses and that do not overlap `a` or `b`).
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_fast(
        m: usize,
        n: usize,
        k: usize,
        a: &[Self],
        sa: Strides,
        b: &[Self],
        sb: Strides,
        c: *mut Self,
        post: Option<(PostOp, &[Self])>,
    );

    /// The unpacked kernel into a strided destination, the part `tri` says; `false`
    /// (nothing written) for a product it does not take.
    ///
    /// # Safety
    /// `c` addresses the `m×n` matrix of row stride `ldc` (writable, accessed by nothing
    /// else during the call, not overlapping `a` or `b`).
    #[allow(clippy::too_many_arguments)]
    unsafe fn gemm_unpacked_into(
        m: usize,
        n: usize,
        k: usize,
        a: &[Self],
        sa: Strides,
        b: &[Self],
        sb: Strides,
        c: *mut Self,
        ldc: usize,
        tri: Tri,
    ) -> bool;
}

impl Float for f64 {
    const ZERO: f64 = 0.0;
    const EXACT_SMALL: bool = true;
    type Out = Out;

    #[inline(always)]
    fn data(t: &Tensor) -> &[f64] {
        t.data()
    }
    #[inline(always)]
    fn data_mut(t: &mut Tensor) -> &mut [f64] {
        t.data_mut()
    }
    #[inline(always)]
    fn alloc(n: usize) -> TResult<Out> {
        crate::tensor::alloc(n)
    }
    #[inline(always)]
    fn alloc_zeros(n: usize) -> TResult<Out> {
        crate::tensor::alloc_zeros(n)
    }
    #[inline(always)]
    fn magnitude_bits(self) -> u64 {
        self.to_bits() << 1
    }

    #[inline(always)]
    unsafe fn gemm_fast(
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        sa: Strides,
        b: &[f64],
        sb: Strides,
        c: *mut f64,
        post: Option<(PostOp, &[f64])>,
    ) {
        // SAFETY: as this function requires.
        unsafe { gemm_fast(m, n, k, a, sa, b, sb, c, post) }
    }

    #[inline(always)]
    unsafe fn gemm_unpacked_into(
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        sa: Strides,
        b: &[f64],
        sb: Strides,
        c: *mut f64,
        ldc: usize,
        tri: Tri,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: as this function requires.
            unsafe { crate::tensor::gemm::gemm_unpacked_into(m, n, k, a, sa, b, sb, c, ldc, tri) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = (m, n, k, a, sa, b, sb, c, ldc, tri);
            false
        }
    }
}

impl Float for f32 {
    const ZERO: f32 = 0.0;
    const EXACT_SMALL: bool = false;
    type Out = Out32;

    #[inline(always)]
    fn data(t: &Tensor) -> &[f32] {
        t.data32()
    }
    #[inline(always)]
    fn data_mut(t: &mut Tensor) -> &mut [f32] {
        match t.data_f32_mut() {
            Some(d) => d,
            None => crate::tensor::f64_in_f32_path(),
        }
    }
    #[inline(always)]
    fn alloc(n: usize) -> TResult<Out32> {
        Ok(Out32 {
            v: f32_vec(n)?,
            cap: n,
            assumed: false,
        })
    }
    fn alloc_zeros(n: usize) -> TResult<Out32> {
        let mut v = f32_vec(n)?;
        v.resize(n, 0.0);
        Ok(Out32 {
            v,
            cap: n,
            assumed: false,
        })
    }
    #[inline(always)]
    fn magnitude_bits(self) -> u64 {
        u64::from(self.to_bits() << 1)
    }

    #[inline(always)]
    unsafe fn gemm_fast(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        sa: Strides,
        b: &[f32],
        sb: Strides,
        c: *mut f32,
        post: Option<(PostOp, &[f32])>,
    ) {
        // SAFETY: as this function requires.
        unsafe { gemm_fast_f32(m, n, k, a, sa, b, sb, c, post) }
    }

    #[inline(always)]
    unsafe fn gemm_unpacked_into(
        m: usize,
        n: usize,
        k: usize,
        a: &[f32],
        sa: Strides,
        b: &[f32],
        sb: Strides,
        c: *mut f32,
        ldc: usize,
        tri: Tri,
    ) -> bool {
        // SAFETY: as this function requires.
        unsafe { gemm_unpacked_into_f32(m, n, k, a, sa, b, sb, c, ldc, tri) }
    }
}
