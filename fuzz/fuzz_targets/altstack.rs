//! A signal stack for the targets built without a sanitizer (`lexer`, `parser`,
//! `check`; see fuzz/run.sh).
//!
//! A stack overflow hits the guard page below the stack with SIGSEGV. libFuzzer's
//! handler for it reports the crash ("deadly signal") and saves the input, but it can
//! only run on a separate signal stack: on the exhausted one the kernel kills the
//! process instead, and the input that overflowed is lost. AddressSanitizer sets up
//! that stack for every thread and libFuzzer keeps its `SA_ONSTACK` flag; without a
//! sanitizer nobody does (these binaries have no Rust `main`, so the standard
//! library's own overflow handler is not installed either). [`init`] does it for the
//! main thread and marks SIGSEGV and SIGBUS `SA_ONSTACK` before libFuzzer installs its
//! handlers (libFuzzer keeps the flag it finds); [`on_this_thread`] gives another
//! thread (the `check` worker) its own signal stack.

#![allow(dead_code)]

use std::cell::Cell;

/// Room for libFuzzer's crash handler (it formats a report and writes the input).
const SIZE: usize = 1 << 20;

thread_local! {
    static DONE: Cell<bool> = const { Cell::new(false) };
}

/// Gives the calling thread a signal stack, once.
pub fn on_this_thread() {
    if DONE.with(|d| d.replace(true)) {
        return;
    }
    // SAFETY: querying only; `old` is a valid place for the result.
    let mut old: libc::stack_t = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::sigaltstack(std::ptr::null(), &mut old) };
    if rc == 0 && old.ss_flags & libc::SS_DISABLE == 0 {
        return; // a sanitizer runtime already gave this thread one
    }
    // Leaked: the stack must outlive every signal the thread can receive.
    let stack: &'static mut [u8] = Box::leak(vec![0u8; SIZE].into_boxed_slice());
    let ss = libc::stack_t {
        ss_sp: stack.as_mut_ptr().cast(),
        ss_flags: 0,
        ss_size: SIZE,
    };
    // SAFETY: `ss` describes a live, writable buffer of SIZE bytes that is never freed.
    let rc = unsafe { libc::sigaltstack(&ss, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "sigaltstack failed");
}

/// Called from `LLVMFuzzerInitialize`, before libFuzzer installs its signal handlers:
/// a signal stack for the main thread, and SIGSEGV/SIGBUS, where they still have their
/// default action, given the `SA_ONSTACK` flag, so libFuzzer's handlers for them
/// inherit it. A handler already there (a sanitizer's) is left alone.
pub fn init() {
    on_this_thread();
    for signal in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: a zeroed sigaction is valid (SIG_DFL, empty mask); the first call
        // only reads the current disposition, the second changes only the flags of
        // the default one.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            let rc = libc::sigaction(signal, std::ptr::null(), &mut current);
            assert_eq!(rc, 0, "sigaction failed");
            if current.sa_sigaction != libc::SIG_DFL {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            action.sa_flags = libc::SA_ONSTACK;
            let rc = libc::sigaction(signal, &action, std::ptr::null_mut());
            assert_eq!(rc, 0, "sigaction failed");
        }
    }
}
