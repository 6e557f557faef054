//! The interrupt flag: `faber run` sets it on a first SIGINT (src/cli/interrupt.rs),
//! and the machine checks it where it already counts steps (every loop iteration and
//! every call, `Machine::tick`), so a Ctrl-C stops the program between two steps —
//! never inside a host function, so a file being written is finished first. The
//! check is one relaxed atomic load beside the step-budget test.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Marks the process interrupted; returns whether it already was (a second
/// interrupt). Async-signal-safe: one lock-free atomic swap.
pub fn request() -> bool {
    INTERRUPTED.swap(true, Ordering::Relaxed)
}

/// Whether an interrupt was requested.
#[inline]
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
