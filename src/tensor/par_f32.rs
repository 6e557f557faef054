//! The f32 kernels' building blocks (issue 21): blocks of whole rows on the pool's
//! threads for any element type ([`par_rows_of`], an element-generic copy of
//! `par::par_rows`, which stays f64-only), the CPU-feature trampoline every f32 kernel
//! runs its loops through ([`wide`]), and [`SendPtrOf`], `par::SendPtr` for any element.
//!
//! Each row's result depends only on that row and the work splits at whole rows, so no
//! result depends on the thread count. The trampoline only changes the vector width the
//! same scalar operations compile to (no FMA contraction: Rust never contracts, and
//! every `mul_add` is a fused multiply-add on every CPU), so no result depends on the
//! CPU either.

use super::{pool, threads};

/// Runs `f(first_row, input_rows, output_rows)` over disjoint blocks of whole rows
/// (`in_row` input and `out_row` output elements per row; `first_row` the index of the
/// block's first row), on several threads when the input has at least `min_elements`
/// elements. A block's rows are computed exactly as on one
/// thread, so the output never depends on the thread count.
pub(in crate::tensor) fn par_rows_of<A: Sync, B: Send, F>(
    input: &[A],
    out: &mut [B],
    in_row: usize,
    out_row: usize,
    min_elements: usize,
    f: F,
) where
    F: Fn(usize, &[A], &mut [B]) + Sync,
{
    if input.len() < min_elements || out_row == 0 || in_row == 0 {
        f(0, input, out);
        return;
    }
    let rows = input.len() / in_row;
    let t = threads().min(rows.max(1));
    if t <= 1 {
        f(0, input, out);
        return;
    }
    let per = rows.div_ceil(t);
    let blocks: Vec<(&[A], &mut [B])> = input
        .chunks(per * in_row)
        .zip(out.chunks_mut(per * out_row))
        .collect();
    pool::run_each(blocks, &|i, (ci, co)| f(i * per, ci, co));
}

/// Runs `f(start, len)` over disjoint blocks covering `0..n`, each a multiple of `unit`
/// long (but the last), on several threads from `min_par` elements. For kernels with
/// several outputs, which take their block's parts through [`SendPtrOf`].
pub(in crate::tensor) fn par_blocks<F>(n: usize, unit: usize, min_par: usize, f: F)
where
    F: Fn(usize, usize) + Sync,
{
    let unit = unit.max(1);
    let t = if n >= min_par {
        threads().min(n / unit)
    } else {
        1
    };
    if n == 0 {
        return;
    }
    if t <= 1 {
        f(0, n);
        return;
    }
    let per = n.div_ceil(unit).div_ceil(t) * unit;
    pool::run_blocks(n.div_ceil(per), &|i| {
        let start = i * per;
        f(start, per.min(n - start))
    });
}

/// Elements from which the f32 element maps split their work over threads (a block of
/// 2¹⁵ elements is 128 KiB per operand).
pub(in crate::tensor) const PAR_MIN_F32_MAP: usize = 1 << 15;

/// `dst[i] = f(src[i])` (one length): the element maps of the f32 kernels, on the
/// pool's threads from [`PAR_MIN_F32_MAP`] elements, the loop compiled for the widest
/// ISA ([`wide`]). Each element depends on its own input only, so the result does not
/// depend on the thread count.
#[inline(always)]
pub(in crate::tensor) fn map_each<F>(src: &[f32], dst: &mut [f32], f: F)
where
    F: Fn(f32) -> f32 + Sync,
{
    par_rows_of(src, dst, 1, 1, PAR_MIN_F32_MAP, |_, s, d| {
        wide(
            #[inline(always)]
            || {
                for (d, &s) in d.iter_mut().zip(s) {
                    *d = f(s);
                }
            },
        )
    });
}

/// `dst[i] = f(g[i], x[i])` (one length): the element-wise VJPs of the f32 kernels, as
/// [`map_each`].
#[inline(always)]
pub(in crate::tensor) fn map_pairs<F>(g: &[f32], x: &[f32], dst: &mut [f32], f: F)
where
    F: Fn(f32, f32) -> f32 + Sync,
{
    let dp = SendPtrOf::new(dst.as_mut_ptr());
    par_blocks(x.len(), 1, PAR_MIN_F32_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside `dst` (as long as `x`), and no other
        // block covers it.
        let db = unsafe { dp.part(start, len) };
        let (gb, xb) = (&g[start..start + len], &x[start..start + len]);
        wide(
            #[inline(always)]
            || {
                for ((o, &gv), &xv) in db.iter_mut().zip(gb).zip(xb) {
                    *o = f(gv, xv);
                }
            },
        )
    });
}

/// A buffer's base pointer handed to the pool's threads, each of which writes its own
/// disjoint part (`par::SendPtr` for any element type).
pub(in crate::tensor) struct SendPtrOf<T>(*mut T);

impl<T> Clone for SendPtrOf<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for SendPtrOf<T> {}
// SAFETY: hands disjoint ranges of one buffer to the pool's threads.
unsafe impl<T: Send> Send for SendPtrOf<T> {}
// SAFETY: as above; the pointer is only copied.
unsafe impl<T: Send> Sync for SendPtrOf<T> {}

impl<T> SendPtrOf<T> {
    /// Wraps a buffer's base pointer.
    pub(in crate::tensor) fn new(p: *mut T) -> Self {
        SendPtrOf(p)
    }

    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    pub(in crate::tensor) fn get(self) -> *mut T {
        self.0
    }

    /// The elements `[start, start + len)`.
    ///
    /// # Safety
    /// The range lies inside the buffer, the buffer outlives the slice, and no other
    /// live slice overlaps the range.
    #[allow(clippy::mut_from_ref)]
    pub(in crate::tensor) unsafe fn part(&self, start: usize, len: usize) -> &mut [T] {
        // SAFETY: the caller's contract (above).
        unsafe { std::slice::from_raw_parts_mut(self.0.add(start), len) }
    }
}

/// Runs `f` compiled for AVX-512F (with AVX2 and FMA) where the CPU has it, else as
/// plain code: the same operations either way, only the vector width differs. `f` must
/// be an `#[inline(always)]` closure (`wide(#[inline(always)] || …)`) calling only
/// `#[inline(always)]` functions: only code inlined into the `#[target_feature]`
/// trampoline is compiled for its features (a closure left out of line runs as baseline
/// x86-64 code, where every `mul_add` is a libm call).
#[inline(always)]
pub(in crate::tensor) fn wide<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if avx512() {
            // SAFETY: the CPU has AVX-512F, AVX2 and FMA (checked).
            return unsafe { run_avx512(f) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA (checked).
            return unsafe { run_avx2(f) };
        }
    }
    f()
}

/// Whether the CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn avx512() -> bool {
    use std::arch::is_x86_feature_detected as has;
    has!("avx512f") && has!("avx2") && has!("fma")
}

/// `f()` compiled for AVX-512F.
///
/// # Safety
/// The CPU has AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn run_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f()` compiled for AVX2.
///
/// # Safety
/// The CPU has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn run_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}
