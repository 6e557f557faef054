//! The row-parallel building blocks every kernel family uses: a result buffer built
//! block by block on the pool's threads ([`build`], [`build_from`]), a map over whole
//! rows ([`par_rows`]), and the one [`SendPtr`] that hands a result buffer's base
//! pointer to those threads. Each block's elements depend only on their own indices,
//! so no result ever depends on the thread count.

use std::mem::MaybeUninit;

use super::{alloc, pool, threads, Out, TResult};

/// Elements from which a cheap map (≈ 1 ns per element, memory-bound) is split
/// between threads: below it the hand-off to the pool costs more than it saves.
pub(in crate::tensor) const PAR_MIN_MAP: usize = 1 << 16;

/// Elements from which a ~10 ns/element kernel (the vectorised correctly rounded
/// tanh included) is split between threads (spawning costs ~20 µs).
pub(in crate::tensor) const PAR_MIN_CHEAP: usize = 1 << 15;

/// A result buffer's base pointer handed to the pool's threads, each of which
/// writes its own disjoint part.
#[derive(Clone, Copy)]
pub(in crate::tensor) struct SendPtr(pub(in crate::tensor) *mut f64);
// SAFETY: hands disjoint ranges of one result buffer to the pool's threads.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the pointer is only copied.
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// Wraps a buffer's base pointer.
    pub(in crate::tensor) fn new(p: *mut f64) -> SendPtr {
        SendPtr(p)
    }
    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    pub(in crate::tensor) fn get(self) -> *mut f64 {
        self.0
    }
}

/// An `n`-element result built by `fill(start, dst)`, which must write every slot of
/// `dst` with elements `start..start + dst.len()`; on several threads in blocks of
/// whole `unit`s (rows) when `n ≥ PAR_MIN_MAP`. Each element depends only on its
/// index, so the result never depends on the thread count.
#[inline(always)]
pub(in crate::tensor) fn build<F>(n: usize, unit: usize, fill: F) -> TResult<Out>
where
    F: Fn(usize, &mut [MaybeUninit<f64>]) + Sync,
{
    build_from(n, unit, PAR_MIN_MAP, fill)
}

/// [`build`], threaded from `min_par` elements (for results whose elements each
/// take many operations).
#[inline(always)]
pub(in crate::tensor) fn build_from<F>(
    n: usize,
    unit: usize,
    min_par: usize,
    fill: F,
) -> TResult<Out>
where
    F: Fn(usize, &mut [MaybeUninit<f64>]) + Sync,
{
    let mut out = alloc(n)?;
    let unit = unit.max(1);
    let t = if n >= min_par {
        threads().min(n / unit)
    } else {
        1
    };
    // SAFETY: every slot is written below: the blocks cover 0..n and `fill`
    // writes each slot of its block.
    let base = SendPtr(unsafe { out.assume_filled() });
    let per = if t <= 1 {
        n
    } else {
        n.div_ceil(unit).div_ceil(t) * unit
    };
    let block = |i: usize| {
        let start = i * per;
        let len = per.min(n - start);
        // SAFETY: [start, start + len) lies inside the n-slot buffer and no other
        // block covers it; MaybeUninit<f64> has f64's layout.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(base.get().add(start) as *mut MaybeUninit<f64>, len)
        };
        fill(start, dst);
    };
    if n == 0 {
        return Ok(out);
    }
    if t <= 1 {
        block(0);
    } else {
        pool::run_blocks(n.div_ceil(per), &block);
    }
    Ok(out)
}

/// Runs `f(input_rows, output_rows)` over disjoint blocks of whole rows,
/// on several threads when the work is large. Each row's result depends only
/// on that row, so the output never depends on the thread count.
///
/// `min_elements` is the input size below which one thread does it all
/// (spawning costs ~20 µs): [`PAR_MIN_CHEAP`] for ~10 ns/element kernels (the
/// vectorised correctly rounded tanh included).
/// A thread the system refuses to start is replaced by running its block
/// on the calling thread (never a panic).
pub(in crate::tensor) fn par_rows<F>(
    input: &[f64],
    out: &mut [f64],
    in_row: usize,
    out_row: usize,
    min_elements: usize,
    f: F,
) where
    F: Fn(&[f64], &mut [f64]) + Sync,
{
    if input.len() < min_elements || out_row == 0 {
        f(input, out);
        return;
    }
    let rows = input.len().checked_div(in_row).unwrap_or(0);
    let t = threads().min(rows.max(1));
    if t <= 1 {
        f(input, out);
        return;
    }
    let per = rows.div_ceil(t);
    // Blocks of whole rows; who computes a block never changes its result.
    let blocks: Vec<(&[f64], &mut [f64])> = input
        .chunks(per * in_row)
        .zip(out.chunks_mut(per * out_row))
        .collect();
    pool::run_each(blocks, &|_, (ci, co)| f(ci, co));
}
