//! A persistent pool of worker threads for the parallel kernels. Spawning scoped
//! threads per operation cost 20–50 µs each time, which a training step with a few
//! hundred parallel operations paid over and over; here the workers are started once
//! and wait for work.
//!
//! [`run_blocks`] runs `f(0) … f(n−1)` on the workers and the calling thread and
//! returns when all have finished. Which thread runs a block never changes its result
//! (each block writes only its own output), so results do not depend on the pool.
//! A worker that cannot be started just means fewer helpers: the caller always works
//! through the blocks itself too, so a job finishes even with no worker at all.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

/// One call of [`run_blocks`]. `f` is the caller's closure with its lifetime erased:
/// it is only called for an index taken below `n`, and the caller does not return
/// (so the closure stays alive) until all `n` indices are done.
struct Job {
    n: usize,
    next: AtomicUsize,
    done: AtomicUsize,
    f: *const (dyn Fn(usize) + Sync),
}

// SAFETY: `f` points to a `Sync` closure that outlives every use (see `Job`).
unsafe impl Send for Job {}
unsafe impl Sync for Job {}

struct State {
    job: Option<Arc<Job>>,
    generation: u64,
    /// Workers asleep on `Shared::wake` (changed under the lock only).
    sleepers: usize,
    /// Callers asleep on `Shared::finished` (changed under the lock only).
    waiting: usize,
}

struct Shared {
    state: Mutex<State>,
    /// `State::generation`, readable without the lock: workers spin on it for a
    /// while before they sleep (see [`SPIN`]).
    generation: AtomicU64,
    /// Workers wait here for a new job.
    wake: Condvar,
    /// Callers wait here for their job's last block.
    finished: Condvar,
}

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, State> {
    match shared.state.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// The pool, started on first use with one worker per available core but one.
fn pool() -> &'static Arc<Shared> {
    static POOL: OnceLock<Arc<Shared>> = OnceLock::new();
    POOL.get_or_init(|| {
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                job: None,
                generation: 0,
                sleepers: 0,
                waiting: 0,
            }),
            generation: AtomicU64::new(0),
            wake: Condvar::new(),
            finished: Condvar::new(),
        });
        let workers = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .saturating_sub(1);
        for i in 0..workers {
            let s = Arc::clone(&shared);
            // A worker the system refuses is simply missing (see the module doc).
            let _ = std::thread::Builder::new()
                .name(format!("faber-tensor-{i}"))
                .spawn(move || worker(&s));
        }
        shared
    })
}

/// How long a pool thread polls for new work (a worker) or for the last block of its
/// job (the caller) before it sleeps on a condition variable. Kernels come in bursts —
/// a training step runs hundreds of parallel operations with short serial gaps — and
/// waking a sleeping thread costs tens of microseconds on a virtual machine, as much
/// as a small kernel's whole block; OpenMP runtimes spin before sleeping for the same
/// reason. Only threads that just worked spin, and only for this long.
const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

/// Polls until `ready()` or [`SPIN`] has passed; whether it became ready.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = std::time::Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return ready();
        }
    }
}

fn worker(shared: &Shared) {
    let mut seen = 0;
    loop {
        spin_until(|| shared.generation.load(Ordering::Acquire) != seen);
        let job = {
            let mut st = lock(shared);
            while st.generation == seen {
                st.sleepers += 1;
                st = match shared.wake.wait(st) {
                    Ok(g) => g,
                    Err(poisoned) => poisoned.into_inner(),
                };
                st.sleepers -= 1;
            }
            seen = st.generation;
            st.job.clone()
        };
        if let Some(job) = job {
            work(shared, &job);
        }
    }
}

/// Takes and runs blocks of `job` until none is left.
fn work(shared: &Shared, job: &Job) {
    loop {
        let i = job.next.fetch_add(1, Ordering::AcqRel);
        if i >= job.n {
            return;
        }
        // SAFETY: index i < n was taken, so the caller is still waiting for it and
        // the closure is alive (see `Job`).
        let f = unsafe { &*job.f };
        // Kernels do not panic; should one, the block counts as done so the caller
        // is not left waiting.
        let _ = catch_unwind(AssertUnwindSafe(|| f(i)));
        if job.done.fetch_add(1, Ordering::AcqRel) + 1 == job.n {
            // A caller that found its job unfinished under the lock counted itself in
            // `waiting` before sleeping; one still spinning sees `done` without a wake
            // (a wake is a system call, paid per job otherwise).
            let st = lock(shared);
            if st.waiting > 0 {
                shared.finished.notify_all();
            }
        }
    }
}

/// Runs `f(i)` for every `i` in `0..n` on the pool and the calling thread; returns
/// when every call has finished.
pub(in crate::tensor) fn run_blocks(n: usize, f: &(dyn Fn(usize) + Sync)) {
    if n <= 1 {
        if n == 1 {
            f(0);
        }
        return;
    }
    let shared = pool();
    // SAFETY: only the lifetime is erased; `run_blocks` does not return before every
    // block has run, and no block runs after that (see `Job`).
    let f: *const (dyn Fn(usize) + Sync) = unsafe { std::mem::transmute(f) };
    let job = Arc::new(Job {
        n,
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        f,
    });
    {
        let mut st = lock(shared);
        st.job = Some(Arc::clone(&job));
        st.generation = st.generation.wrapping_add(1);
        shared.generation.store(st.generation, Ordering::Release);
        // Spinning workers see the generation; only sleeping ones need the wake (they
        // count themselves under this lock before they sleep).
        if st.sleepers > 0 {
            shared.wake.notify_all();
        }
    }
    work(shared, &job);
    spin_until(|| job.done.load(Ordering::Acquire) >= n);
    let mut st = lock(shared);
    while job.done.load(Ordering::Acquire) < n {
        st.waiting += 1;
        st = match shared.finished.wait(st) {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        st.waiting -= 1;
    }
    if st.job.as_ref().is_some_and(|j| Arc::ptr_eq(j, &job)) {
        st.job = None;
    }
}

/// Runs `f(i, item)` once for every item (each handed over by value, e.g. a pair of
/// disjoint input/output slices), spread over the pool like [`run_blocks`].
pub(in crate::tensor) fn run_each<T: Send>(items: Vec<T>, f: &(dyn Fn(usize, T) + Sync)) {
    if items.len() <= 1 {
        for (i, it) in items.into_iter().enumerate() {
            f(i, it);
        }
        return;
    }
    // Each item sits in a slot; whichever thread takes block i takes item i.
    let slots: Vec<Mutex<Option<T>>> = items.into_iter().map(|t| Mutex::new(Some(t))).collect();
    run_blocks(slots.len(), &|i| {
        let item = match slots[i].lock() {
            Ok(mut g) => g.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        };
        if let Some(item) = item {
            f(i, item);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::run_blocks;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_block_runs_once() {
        for n in [0, 1, 2, 3, 17, 100] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            run_blocks(n, &|i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "n = {n}"
            );
        }
    }

    /// Jobs posted after the workers have stopped spinning (they sleep and must be
    /// woken: one of them takes a block while the caller works through 1 ms blocks),
    /// with blocks on the workers slow enough that the caller runs out of blocks,
    /// stops spinning and sleeps until the last one is done: every block runs once and
    /// the caller returns (within a generous time limit, so a lost wake fails instead
    /// of hanging). The pool is the process's, so a test running beside this one may
    /// post its own job and keep the workers for a whole round: a round where no worker
    /// took a block is tried again (up to 40 times; without the wake none ever does).
    #[test]
    fn sleeping_threads_are_woken() {
        let workers = std::thread::available_parallelism().map_or(1, |n| n.get()) > 1;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for _ in 0..3 {
                let mut ok = false;
                for _ in 0..40 {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    let n = 40;
                    let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
                    let on_worker = AtomicUsize::new(0);
                    run_blocks(n, &|i| {
                        let name = std::thread::current().name().map(str::to_owned);
                        let worker = name.is_some_and(|n| n.starts_with("faber-tensor"));
                        on_worker.fetch_add(usize::from(worker), Ordering::Relaxed);
                        let ms = if worker { 60 } else { 1 };
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                        hits[i].fetch_add(1, Ordering::Relaxed);
                    });
                    if !hits.iter().all(|h| h.load(Ordering::Relaxed) == 1) {
                        break;
                    }
                    if !workers || on_worker.load(Ordering::Relaxed) > 0 {
                        ok = true;
                        break;
                    }
                }
                let _ = tx.send(ok);
            }
        });
        for round in 0..3 {
            let ok = rx.recv_timeout(std::time::Duration::from_secs(60));
            assert_eq!(ok, Ok(true), "round {round}");
        }
    }

    #[test]
    fn nested_jobs_finish() {
        let total = AtomicUsize::new(0);
        run_blocks(4, &|_| {
            run_blocks(3, &|_| {
                total.fetch_add(1, Ordering::Relaxed);
            });
        });
        assert_eq!(total.load(Ordering::Relaxed), 12);
    }
}
