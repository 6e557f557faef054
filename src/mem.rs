//! One accounting of live heap bytes, and the memory limit checked against it
//! (`--max-memory-gib`, docs/robustness.md § Limits).
//!
//! The `faber` binary's global allocator reports every allocation and free here
//! ([`note_alloc`], [`note_free`]: a thread-local add each, moved to one process-wide
//! atomic every 64 KiB), so [`live`] is the
//! heap in use by the whole process: texts, lists, maps, records, tensors, and the
//! compiled program alike, counted once however often a value is shared. Nothing
//! fails inside the allocator; instead
//!
//! - the evaluator checks [`over`] at every step (loop iteration or call), so memory
//!   that grows a little per step (a map filled by `pone`, a list of lists) ends in
//!   RUN012 within one step of crossing the limit, and
//! - the sites that can allocate a lot in one step (text `+` and templates, range
//!   lists, list growth, map growth, tensor buffers) ask [`check`] before allocating,
//!   so the allocation that would cross the limit is never made.
//!
//! Without the counting allocator (the library embedded elsewhere, the fuzz targets)
//! [`live`] stays 0 and only the per-value limits apply (text bytes, list items,
//! tensor elements).

use std::cell::Cell;
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::Relaxed};

/// Heap bytes allocated and not yet freed, as flushed by the threads (see [`BATCH`]).
/// Signed: a block allocated on one thread and freed on another can be subtracted
/// before it was added.
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// The limit in bytes (`usize::MAX`: none).
static LIMIT: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Each thread adds its allocations and frees to its own counter and moves it to
/// [`LIVE`] once it holds this many bytes either way: a plain add on a thread-local per
/// allocation, and an atomic add only every 64 KiB (or for each block that large).
/// [`live`] can therefore lag by less than 64 KiB per thread (a handful of threads:
/// the evaluator, the kernel pool, the output writer).
const BATCH: isize = 64 << 10;

thread_local! {
    /// This thread's bytes not yet moved to [`LIVE`]. Const-initialised and without a
    /// destructor, so the allocator may use it at any time (it never allocates).
    static PENDING: Cell<isize> = const { Cell::new(0) };
}

/// Called by the global allocator after a successful allocation of `bytes`.
#[inline(always)]
pub fn note_alloc(bytes: usize) {
    // Layout sizes never exceed isize::MAX.
    pend(bytes as isize);
}

/// Called by the global allocator when `bytes` are freed.
#[inline(always)]
pub fn note_free(bytes: usize) {
    pend(-(bytes as isize));
}

/// Called by the global allocator when a block of `old` bytes became `new` bytes.
#[inline(always)]
pub fn note_realloc(old: usize, new: usize) {
    pend(new as isize - old as isize);
}

#[inline(always)]
fn pend(bytes: isize) {
    PENDING.with(|p| {
        let v = p.get() + bytes;
        if v > -BATCH && v < BATCH {
            p.set(v);
        } else {
            p.set(0);
            LIVE.fetch_add(v, Relaxed);
        }
    });
}

/// Heap bytes in use now (this thread's pending bytes included; other threads' may
/// lag by less than [`BATCH`] each).
#[inline(always)]
pub fn live() -> usize {
    let pending = PENDING.with(|p| p.get());
    (LIVE.load(Relaxed) + pending).max(0) as usize
}

/// The memory limit in bytes (`usize::MAX` when there is none).
pub fn limit() -> usize {
    LIMIT.load(Relaxed)
}

/// Sets the memory limit in bytes (`usize::MAX`: none); returns the old one.
pub fn set_limit(bytes: usize) -> usize {
    LIMIT.swap(bytes, Relaxed)
}

/// Whether the heap in use is beyond the limit (checked every step, so only the
/// flushed count is read: it lags [`live`] by less than [`BATCH`] per thread).
#[inline(always)]
pub fn over() -> bool {
    LIVE.load(Relaxed) > LIMIT.load(Relaxed).min(isize::MAX as usize) as isize
}

/// `Err(message)` when allocating `bytes` more would take the heap beyond the limit.
#[inline]
pub fn check(bytes: usize) -> Result<(), String> {
    let live = live();
    if fits(live, bytes, LIMIT.load(Relaxed)) {
        Ok(())
    } else {
        Err(refusal(live, bytes))
    }
}

/// Whether `bytes` more on top of `live` stay within `limit`.
#[inline(always)]
fn fits(live: usize, bytes: usize, limit: usize) -> bool {
    match live.checked_add(bytes) {
        Some(total) => total <= limit,
        None => false,
    }
}

/// The message of a refused allocation of `bytes` with `live` bytes in use.
#[cold]
fn refusal(live: usize, bytes: usize) -> String {
    format!(
        "allocating {} would take the memory in use ({}) beyond the limit of {}; raise `--max-memory-gib` if it should",
        human(bytes),
        human(live),
        human(limit())
    )
}

/// The message of a heap that grew beyond the limit (checked once per step).
#[cold]
pub fn over_message() -> String {
    format!(
        "the program's memory grew beyond the limit of {} ({} in use); raise `--max-memory-gib` if it should",
        human(limit()),
        human(live())
    )
}

/// `1.5 GiB`, `12.0 MiB`, `512 bytes`.
pub fn human(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if b >= KIB * KIB * KIB {
        format!("{:.1} GiB", b / (KIB * KIB * KIB))
    } else if b >= KIB * KIB {
        format!("{:.1} MiB", b / (KIB * KIB))
    } else if b >= KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// The default limit: three quarters of the memory this process may use (the
/// smaller of the machine's `MemTotal` and the cgroup's `memory.max`), so that the
/// limit, not the kernel's OOM killer, stops a program; 8 GiB where neither is known.
pub fn default_limit() -> usize {
    let total = mem_total().into_iter().chain(cgroup_max()).min();
    match total {
        Some(t) => t / 4 * 3,
        None => 8 << 30,
    }
}

/// `MemTotal` from /proc/meminfo, in bytes.
fn mem_total() -> Option<usize> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: usize = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// The cgroup v2 memory limit of this process, in bytes (`None` for `max` or unknown).
fn cgroup_max() -> Option<usize> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let rel = cg.lines().find_map(|l| l.strip_prefix("0::"))?;
    let path = format!("/sys/fs/cgroup{}/memory.max", rel.trim_end());
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human(512), "512 bytes");
        assert_eq!(human(3 << 19), "1.5 MiB");
        assert_eq!(human(5 << 30), "5.0 GiB");
    }

    #[test]
    fn a_request_fits_up_to_the_limit_exactly() {
        // (The limit itself is process-wide: tests here must not change it.)
        assert!(fits(0, 1000, 1000));
        assert!(!fits(0, 1001, 1000));
        assert!(!fits(600, 500, 1000));
        assert!(!fits(usize::MAX, 1, usize::MAX));
        assert!(fits(usize::MAX - 1, 1, usize::MAX));
    }

    #[test]
    fn default_limit_is_positive() {
        assert!(default_limit() > 0);
    }
}
