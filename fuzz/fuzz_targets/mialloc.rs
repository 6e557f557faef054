//! mimalloc as the global allocator of the targets built without a sanitizer, as the
//! faber CLI has it (src/main.rs). Only with the `mimalloc` feature, which run.sh
//! turns on for the plain build (`-s none`) and never for ASan: AddressSanitizer finds
//! memory errors through its own malloc, and a Rust allocator over mimalloc would hide
//! every Rust allocation from it. The parser allocates and frees a few hundred blocks
//! per input (tokens, syntax tree, diagnostics, rendered text); with glibc's malloc that
//! was 17 % of the `parser` target's CPU time (docs/robustness.md § Throughput).
//!
//! Unlike the CLI's allocator this one does not count live bytes for `faber::mem`
//! (`--max-memory-gib`): no target sets that limit; `-rss_limit_mb` bounds memory.

#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout};

/// Alignment of every block mimalloc returns (its size classes are word multiples).
const PLAIN_ALIGN: usize = 8;

pub struct Mimalloc;

// SAFETY: each method forwards to the mimalloc function with the same contract
// (`mi_malloc`/`mi_zalloc`/`mi_realloc` return PLAIN_ALIGN-aligned blocks or null;
// the `_aligned` forms honour `align`); `mi_free` takes any pointer either returned.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: see the impl.
        unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_realloc(ptr.cast(), new).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new, layout.align()).cast()
            }
        }
    }
}
