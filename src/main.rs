//! The `faber` binary: parses the command line, decides on colour, installs the
//! panic hook, and runs the chosen verb on a worker thread with a large stack (deeply
//! nested input recurses deeply). Verbs live in `cli/`, one file each.

mod cli;

use std::ffi::OsString;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

use cli::{Cli, ColorChoice};

/// mimalloc instead of the system allocator: every tensor result costs a few heap
/// blocks, and with glibc a small training step spent ~45% of its instructions in
/// malloc/free, while large buffers paid page faults (glibc returns them to the OS).
/// Measured: linear-regression step 42.9k → 30.9k instructions; GPT step page faults
/// 7.4k → 0.16k.
#[global_allocator]
static GLOBAL: Mimalloc = Mimalloc;

/// The global allocator over libmimalloc-sys. Requests with the alignment every
/// mimalloc block has (8 bytes: nearly all of them) take the plain `mi_malloc` path;
/// only larger alignments pay for `mi_malloc_aligned`'s checks (the `mimalloc` crate
/// sent every request there; linear-regression step 13.3k → 12.8k instructions).
/// Every block is reported to `faber::mem` (a thread-local add per allocation and
/// per free), the live-bytes count `--max-memory-gib` is checked against.
struct Mimalloc;

/// Alignment of every block mimalloc returns (its size classes are word multiples).
const PLAIN_ALIGN: usize = 8;

// SAFETY: each method forwards to the mimalloc function with the same contract
// (`mi_malloc`/`mi_zalloc`/`mi_realloc` return PLAIN_ALIGN-aligned blocks or null;
// the `_aligned` forms honour `align`); `mi_free` takes any pointer either returned.
unsafe impl std::alloc::GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_malloc, mi_malloc_aligned};
        // SAFETY: see the impl.
        let p: *mut u8 = unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        };
        if !p.is_null() {
            faber::mem::note_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        use libmimalloc_sys::{mi_zalloc, mi_zalloc_aligned};
        // SAFETY: see the impl.
        let p: *mut u8 = unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        };
        if !p.is_null() {
            faber::mem::note_alloc(layout.size());
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        faber::mem::note_free(layout.size());
        // SAFETY: see the impl.
        unsafe { libmimalloc_sys::mi_free(ptr.cast()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: std::alloc::Layout, new: usize) -> *mut u8 {
        use libmimalloc_sys::{mi_realloc, mi_realloc_aligned};
        // SAFETY: see the impl.
        let p: *mut u8 = unsafe {
            if layout.align() <= PLAIN_ALIGN {
                mi_realloc(ptr.cast(), new).cast()
            } else {
                mi_realloc_aligned(ptr.cast(), new, layout.align()).cast()
            }
        };
        if !p.is_null() {
            // The old block is freed only when the new one exists.
            faber::mem::note_realloc(layout.size(), new);
        }
        p
    }
}

extern "C" {
    /// mimalloc's option setter (in the C library libmimalloc-sys builds; the crate
    /// declares it only behind its `extended` feature).
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (include/mimalloc.h).
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Freed memory stays committed for reuse instead of being returned to the OS after
/// mimalloc's default 10 ms: a GPT training step frees and re-allocates the same
/// multi-MiB tensors every step, and with purging each came back as fresh pages the
/// kernel had to zero (30 steps: 1,437 → 279 page faults, task clock −8 %). Memory is
/// returned at exit; the environment variable `MIMALLOC_PURGE_DELAY` still overrides.
fn keep_freed_memory() {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: a plain option store in the allocator, before any other thread
        // exists; -1 means "never purge".
        unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
    }
}

/// Stack for the worker thread. Only touched pages are committed, so a large
/// reservation costs nothing until deep recursion needs it.
const WORKER_STACK: usize = 256 * 1024 * 1024;

/// Exit code of a bug (Rust's own code for a panic).
const EXIT_INTERNAL: u8 = 101;

fn main() -> ExitCode {
    keep_freed_memory();
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Usage errors exit 2; `--help` and `--version` print and exit 0.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let color = use_color(
        cli.color,
        |name| std::env::var_os(name),
        std::io::stderr().is_terminal(),
    );
    let worker = std::thread::Builder::new()
        .name("faber".to_string())
        .stack_size(WORKER_STACK)
        .spawn(move || cli::run(cli, color));
    match worker {
        // A panic on the worker was already reported by the hook.
        Ok(handle) => handle.join().unwrap_or(ExitCode::from(EXIT_INTERNAL)),
        Err(e) => {
            cli::print_stderr(&format!(
                "internal error in faber: cannot start the worker thread: {e}; please report this bug\n"
            ));
            ExitCode::from(EXIT_INTERNAL)
        }
    }
}

/// The colour decision, in order: `--color`, then a non-empty `NO_COLOR` (off), then
/// `CLICOLOR_FORCE` or `FORCE_COLOR` set to anything but empty, `0` or `false` (on),
/// then whether stderr is a terminal.
fn use_color(
    choice: ColorChoice,
    env: impl Fn(&str) -> Option<OsString>,
    stderr_is_terminal: bool,
) -> bool {
    match choice {
        ColorChoice::Always => return true,
        ColorChoice::Never => return false,
        ColorChoice::Auto => {}
    }
    if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return false;
    }
    let forced = |name: &str| env(name).is_some_and(|v| !v.is_empty() && v != "0" && v != "false");
    if forced("CLICOLOR_FORCE") || forced("FORCE_COLOR") {
        return true;
    }
    stderr_is_terminal
}

/// A panic is a bug in faber, never the user's fault: say so, and where.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let payload = info.payload();
        if payload.is::<faber::tensor::DeviceLost>() {
            // A device-resident tensor whose copy to the host failed
            // (src/tensor/remote.rs): the device's failure, not a bug. `faber run`
            // catches it, flushes what the program printed and reports it (CLI011, or
            // CLI012 out of device memory; src/cli/run.rs).
            return;
        }
        let message = payload
            .downcast_ref::<&str>()
            .copied()
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("unknown panic");
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_else(|| "an unknown location".to_string());
        // Not `eprintln!`: a failing stderr must not panic inside the hook.
        let _ = writeln!(
            std::io::stderr(),
            "internal error in faber: {message} at {location}; please report this bug"
        );
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| OsString::from(v))
        }
    }

    #[test]
    fn flag_wins() {
        let all = [("NO_COLOR", "1"), ("FORCE_COLOR", "1")];
        assert!(use_color(ColorChoice::Always, env(&all), false));
        assert!(!use_color(ColorChoice::Never, env(&all), true));
    }

    #[test]
    fn no_color_beats_force() {
        let vars = [("NO_COLOR", "1"), ("CLICOLOR_FORCE", "1")];
        assert!(!use_color(ColorChoice::Auto, env(&vars), true));
        // An empty NO_COLOR does not count.
        let vars = [("NO_COLOR", ""), ("CLICOLOR_FORCE", "1")];
        assert!(use_color(ColorChoice::Auto, env(&vars), false));
    }

    #[test]
    fn force_beats_terminal() {
        assert!(use_color(
            ColorChoice::Auto,
            env(&[("FORCE_COLOR", "1")]),
            false
        ));
        assert!(!use_color(
            ColorChoice::Auto,
            env(&[("FORCE_COLOR", "0")]),
            false
        ));
        assert!(use_color(
            ColorChoice::Auto,
            env(&[("CLICOLOR_FORCE", "yes")]),
            false
        ));
    }

    #[test]
    fn terminal_last() {
        assert!(use_color(ColorChoice::Auto, env(&[]), true));
        assert!(!use_color(ColorChoice::Auto, env(&[]), false));
    }

    #[test]
    fn cli_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
