//! Tensor storage in one heap block: the elements, then a two-word trailer (the
//! reference count and the block's capacity in elements). A fresh result is built in
//! place through [`Out`]; a `Vec<f64>` is adopted without copying its elements (its
//! allocation grows by the two trailer words when it has no room for them).
//!
//! [`Buf`] is shared and copy-on-write like the `Rc<Vec<f64>>` it replaces, with one
//! allocation per buffer instead of two. Like `Rc` it is neither `Send` nor `Sync`.

use std::alloc::{alloc, alloc_zeroed, dealloc, Layout};
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ptr::NonNull;

use super::{TResult, TensorError};

/// Words after the elements: reference count, capacity (in f64 slots).
const TRAILER: usize = 2;

// The trailer words are stored in f64-sized, f64-aligned slots.
const _: () = assert!(std::mem::size_of::<usize>() <= std::mem::size_of::<f64>());
const _: () = assert!(std::mem::align_of::<usize>() <= std::mem::align_of::<f64>());

/// A shared, immutable-unless-unique buffer of `len` f64 values.
///
/// Invariant: `ptr` addresses an allocation of `cap` f64 slots made by the global
/// allocator with `Layout::array::<f64>(cap)`, `cap ≥ len + TRAILER`; slots
/// `0..len` are initialised elements, slot `len` holds the reference count and
/// slot `len + 1` holds `cap`.
pub(in crate::tensor) struct Buf {
    ptr: NonNull<f64>,
    len: usize,
}

impl Buf {
    #[inline(always)]
    fn rc_ptr(&self) -> *mut usize {
        // SAFETY: slot `len` is inside the allocation (invariant).
        unsafe { self.ptr.as_ptr().add(self.len) as *mut usize }
    }

    #[inline(always)]
    fn rc(&self) -> usize {
        // SAFETY: the trailer is initialised and never covered by a reference.
        unsafe { *self.rc_ptr() }
    }

    /// Number of elements.
    #[inline(always)]
    pub(in crate::tensor) fn len(&self) -> usize {
        self.len
    }

    /// The elements.
    #[inline(always)]
    pub(in crate::tensor) fn as_slice(&self) -> &[f64] {
        // SAFETY: slots `0..len` are initialised and only mutated through
        // `make_mut`, which needs `&mut self` and a unique buffer.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// Whether two buffers are the same block.
    #[inline(always)]
    pub(in crate::tensor) fn ptr_eq(&self, other: &Buf) -> bool {
        self.ptr == other.ptr
    }

    /// Whether this is the only handle on the block.
    #[inline(always)]
    pub(in crate::tensor) fn is_unique(&self) -> bool {
        self.rc() == 1
    }

    /// Mutable elements, copying the block first if it is shared.
    pub(in crate::tensor) fn make_mut(&mut self) -> &mut [f64] {
        if !self.is_unique() {
            // The block exists at this size, so only an out-of-memory can fail here
            // (an abort, as `Rc::make_mut` would).
            let Ok(mut out) = Out::with_capacity_unmetered(self.len) else {
                std::alloc::handle_alloc_error(Layout::new::<f64>())
            };
            out.extend_from_slice(self.as_slice());
            *self = out.finish();
        }
        // SAFETY: unique (just checked or made so): no other handle reads the elements.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Adopts `v`'s allocation (grown by the trailer if it has no room for it).
    pub(in crate::tensor) fn from_vec(v: Vec<f64>) -> TResult<Buf> {
        let mut v = v;
        let len = v.len();
        v.try_reserve_exact(TRAILER).map_err(|_| too_big(len))?;
        let mut v = ManuallyDrop::new(v);
        let cap = v.capacity();
        let ptr = v.as_mut_ptr();
        // SAFETY: `cap ≥ len + TRAILER` after the reserve; a Vec<f64> with non-zero
        // capacity was allocated by the global allocator with `Layout::array::<f64>(cap)`,
        // which is how `Drop` frees it. The Vec is not used again (ManuallyDrop).
        unsafe {
            let p = ptr.add(len) as *mut usize;
            p.write(1);
            p.add(1).write(cap);
            Ok(Buf {
                ptr: NonNull::new_unchecked(ptr),
                len,
            })
        }
    }
}

/// An empty `Vec` with room for `n` elements that [`Buf::from_vec`] adopts in place
/// (its block also has room for the trailer).
pub(in crate::tensor) fn vec_for(n: usize) -> Vec<f64> {
    Vec::with_capacity(n.saturating_add(TRAILER))
}

impl Clone for Buf {
    #[inline(always)]
    fn clone(&self) -> Buf {
        let n = self.rc();
        if n == usize::MAX {
            std::process::abort();
        }
        // SAFETY: the trailer is ours to update (no reference covers it; not Sync).
        unsafe { *self.rc_ptr() = n + 1 };
        Buf {
            ptr: self.ptr,
            len: self.len,
        }
    }
}

impl Drop for Buf {
    #[inline]
    fn drop(&mut self) {
        let n = self.rc();
        if n > 1 {
            // SAFETY: as in `clone`.
            unsafe { *self.rc_ptr() = n - 1 };
            return;
        }
        // SAFETY: the last handle: free the block with the layout it was made with
        // (invariant); `cap` was valid for `Layout::array` when the block was made.
        unsafe {
            let cap = *self.rc_ptr().add(1);
            dealloc(
                self.ptr.as_ptr() as *mut u8,
                Layout::array::<f64>(cap).unwrap_unchecked(),
            );
        }
    }
}

impl std::fmt::Debug for Buf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

fn too_big(n: usize) -> TensorError {
    TensorError::limit(format!("cannot allocate a tensor of {n} elements"))
}

/// A buffer of exactly `cap` elements under construction, filled front to back
/// with the `Vec`-like methods below; [`Out::finish`] once full.
pub(in crate::tensor) struct Out {
    ptr: NonNull<f64>,
    cap: usize,
    filled: usize,
}

impl Out {
    fn layout(cap: usize) -> TResult<Layout> {
        cap.checked_add(TRAILER)
            .and_then(|slots| Layout::array::<f64>(slots).ok())
            .ok_or_else(|| too_big(cap))
    }

    /// Room for exactly `cap` elements (a `Limit` error when the memory limit or the
    /// system refuses).
    #[inline]
    pub(in crate::tensor) fn with_capacity(cap: usize) -> TResult<Out> {
        crate::mem::check(Out::layout(cap)?.size()).map_err(TensorError::limit)?;
        Out::with_capacity_unmetered(cap)
    }

    /// [`Out::with_capacity`] without the memory-limit check: for a copy-on-write
    /// copy, which cannot fail softly (the evaluator's per-step check reports a heap
    /// beyond the limit right after).
    pub(in crate::tensor) fn with_capacity_unmetered(cap: usize) -> TResult<Out> {
        let layout = Out::layout(cap)?;
        // SAFETY: the layout has a non-zero size (at least the trailer).
        let p = unsafe { alloc(layout) } as *mut f64;
        match NonNull::new(p) {
            Some(ptr) => Ok(Out {
                ptr,
                cap,
                filled: 0,
            }),
            None => Err(too_big(cap)),
        }
    }

    /// `cap` zeros.
    pub(in crate::tensor) fn zeros(cap: usize) -> TResult<Out> {
        let layout = Out::layout(cap)?;
        crate::mem::check(layout.size()).map_err(TensorError::limit)?;
        // SAFETY: non-zero size as above; all-zero bits are 0.0 for f64.
        let p = unsafe { alloc_zeroed(layout) } as *mut f64;
        match NonNull::new(p) {
            Some(ptr) => Ok(Out {
                ptr,
                cap,
                filled: cap,
            }),
            None => Err(too_big(cap)),
        }
    }

    /// Declares the whole buffer filled and returns a pointer to its first slot, for a
    /// kernel that writes through raw pointers (the fast GEMM).
    ///
    /// # Safety
    /// Before the buffer is read (through `Deref`) or finished, every one of its
    /// `cap` slots must have been written through the returned pointer.
    #[inline]
    pub(in crate::tensor) unsafe fn assume_filled(&mut self) -> *mut f64 {
        self.filled = self.cap;
        self.ptr.as_ptr()
    }

    /// The slots not yet filled.
    #[inline(always)]
    fn spare(&mut self) -> &mut [MaybeUninit<f64>] {
        // SAFETY: slots `filled..cap` are inside the allocation and not covered by
        // any other reference while `self` is borrowed mutably.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.ptr.as_ptr().add(self.filled) as *mut MaybeUninit<f64>,
                self.cap - self.filled,
            )
        }
    }

    /// Appends one element; more than the capacity is a bug (panic).
    #[inline(always)]
    pub(in crate::tensor) fn push(&mut self, v: f64) {
        assert!(self.filled < self.cap, "tensor buffer overfilled");
        // SAFETY: `filled < cap` just checked.
        unsafe { self.ptr.as_ptr().add(self.filled).write(v) };
        self.filled += 1;
    }

    /// Appends the items, at most the remaining capacity (every kernel sizes its
    /// buffer exactly; items beyond it would be a bug, caught in debug builds).
    #[inline(always)]
    pub(in crate::tensor) fn extend<I: IntoIterator<Item = f64>>(&mut self, items: I) {
        let mut it = items.into_iter();
        let mut k = 0;
        for (slot, v) in self.spare().iter_mut().zip(&mut it) {
            slot.write(v);
            k += 1;
        }
        self.filled += k;
        debug_assert!(
            self.filled < self.cap || it.next().is_none(),
            "tensor buffer overfilled"
        );
    }

    /// Appends a copy of `src`.
    #[inline(always)]
    pub(in crate::tensor) fn extend_from_slice(&mut self, src: &[f64]) {
        let spare = self.spare();
        assert!(src.len() <= spare.len(), "tensor buffer overfilled");
        // SAFETY: `src` fits in the spare slots (checked); `MaybeUninit<f64>` has
        // f64's layout; the regions do not overlap (the buffer is not yet shared).
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), spare.as_mut_ptr() as *mut f64, src.len())
        };
        self.filled += src.len();
    }

    /// Fills up to `n` elements with `v` (`n` at most the capacity).
    #[inline]
    pub(in crate::tensor) fn resize(&mut self, n: usize, v: f64) {
        assert!(n <= self.cap, "tensor buffer overfilled");
        if n > self.filled {
            let k = n - self.filled;
            for slot in &mut self.spare()[..k] {
                slot.write(v);
            }
            self.filled = n;
        }
    }

    /// The shared buffer; every slot must have been filled.
    #[inline(always)]
    pub(in crate::tensor) fn finish(self) -> Buf {
        assert!(self.filled == self.cap, "tensor buffer not filled");
        let this = ManuallyDrop::new(self);
        let len = this.cap;
        // SAFETY: slots `len` and `len + 1` are the trailer, inside the allocation of
        // `len + TRAILER` slots made in `with_capacity`/`zeros`.
        unsafe {
            let p = this.ptr.as_ptr().add(len) as *mut usize;
            p.write(1);
            p.add(1).write(len + TRAILER);
        }
        Buf { ptr: this.ptr, len }
    }
}

impl std::ops::Deref for Out {
    type Target = [f64];
    #[inline(always)]
    fn deref(&self) -> &[f64] {
        // SAFETY: slots `0..filled` are initialised.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.filled) }
    }
}

impl std::ops::DerefMut for Out {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [f64] {
        // SAFETY: as in `deref`; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.filled) }
    }
}

impl Drop for Out {
    fn drop(&mut self) {
        // Abandoned (an error part-way): free the block made in `with_capacity`/`zeros`.
        // SAFETY: the layout is the one the block was allocated with.
        unsafe {
            dealloc(
                self.ptr.as_ptr() as *mut u8,
                Layout::array::<f64>(self.cap + TRAILER).unwrap_unchecked(),
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_share_and_copy_on_write() {
        let mut o = Out::with_capacity(4).unwrap();
        o.push(1.0);
        o.extend([2.0, 3.0]);
        o.extend_from_slice(&[4.0]);
        let a = o.finish();
        let mut b = a.clone();
        assert!(a.ptr_eq(&b));
        assert!(!a.is_unique());
        b.make_mut()[0] = 9.0;
        assert!(!a.ptr_eq(&b));
        assert_eq!(a.as_slice(), &[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(b.as_slice(), &[9.0, 2.0, 3.0, 4.0]);
        assert!(a.is_unique() && b.is_unique());
    }

    #[test]
    fn adopt_vec_and_empty() {
        let v = Buf::from_vec(vec![1.0, 2.0, 3.0]).unwrap();
        assert_eq!(v.as_slice(), &[1.0, 2.0, 3.0]);
        let e = Buf::from_vec(Vec::new()).unwrap();
        assert_eq!(e.len(), 0);
        let z = Out::zeros(0).unwrap().finish();
        assert_eq!(z.as_slice(), &[] as &[f64]);
        let mut r = Out::with_capacity(3).unwrap();
        r.resize(3, 7.0);
        assert_eq!(r.finish().as_slice(), &[7.0; 3]);
        // An abandoned builder frees its block.
        let mut p = Out::with_capacity(8).unwrap();
        p.push(1.0);
        drop(p);
    }
}
