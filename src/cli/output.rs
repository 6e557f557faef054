//! Program stdout for `faber run`: prompt on a pipe without a write per line.
//!
//! Lines are appended to a shared buffer; a flusher thread, woken by the first line
//! that lands in an empty buffer, waits [`DELAY`] for more to gather and writes them
//! all out. So a line reaches a pipe or file at most a few milliseconds after `nota`
//! printed it, even when a long computation follows, while a loop printing thousands of
//! lines a second still pays for one `write` per batch, not per line (a write per line
//! made such a loop ~12x slower; docs/cli.md § Streams). [`LineOut::flush`] writes the
//! buffer out at once (before diagnostics, progress lines and at exit); chunks are
//! written in the order they were taken, so output keeps its order.

use std::io::Write;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long the flusher lets lines gather after the first one.
const DELAY: Duration = Duration::from_millis(5);

/// A buffer this large is written out at once by the program's thread.
const MAX_PENDING: usize = 1 << 16;

struct Pending {
    buf: Vec<u8>,
    closed: bool,
}

struct Shared {
    pending: Mutex<Pending>,
    wake: Condvar,
    /// Held while a chunk is taken and written, so chunks reach stdout in order.
    writer: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Shared {
    fn write_out(&self) {
        let _order = lock(&self.writer);
        let chunk = std::mem::take(&mut lock(&self.pending).buf);
        if !chunk.is_empty() {
            // A closed pipe is not an error worth reporting.
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&chunk);
            let _ = out.flush();
        }
    }

    fn flusher(&self) {
        loop {
            {
                let mut p = lock(&self.pending);
                while p.buf.is_empty() && !p.closed {
                    p = self.wake.wait(p).unwrap_or_else(|e| e.into_inner());
                }
                if p.buf.is_empty() {
                    return;
                }
            }
            std::thread::sleep(DELAY);
            self.write_out();
        }
    }
}

/// Standard output with delayed, batched writes (see the module comment).
pub struct LineOut {
    shared: Arc<Shared>,
    /// `None` when the thread could not be started: every write is then flushed.
    thread: Option<JoinHandle<()>>,
}

impl LineOut {
    pub fn new() -> LineOut {
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending {
                buf: Vec::with_capacity(1 << 12),
                closed: false,
            }),
            wake: Condvar::new(),
            writer: Mutex::new(()),
        });
        let for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("faber-stdout".into())
            .spawn(move || for_thread.flusher())
            .ok();
        LineOut { shared, thread }
    }

    pub fn write(&self, s: &[u8]) {
        let mut p = lock(&self.shared.pending);
        let was_empty = p.buf.is_empty();
        p.buf.extend_from_slice(s);
        let full = p.buf.len() >= MAX_PENDING;
        drop(p);
        if full || self.thread.is_none() {
            self.shared.write_out();
        } else if was_empty {
            self.shared.wake.notify_one();
        }
    }

    /// Writes everything buffered out now.
    pub fn flush(&self) {
        self.shared.write_out();
    }
}

impl Drop for LineOut {
    fn drop(&mut self) {
        lock(&self.shared.pending).closed = true;
        self.shared.wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.shared.write_out();
    }
}
