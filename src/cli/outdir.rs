//! `hospes.para_directorium(via)`: a program claims its output directory at
//! start-up, so that a directory it cannot write, or one another faber run is
//! writing, stops it before the work rather than after (docs/robustness.md,
//! "Writing files").
//!
//! Claiming a directory (1) creates it and its missing parents, (2) probes it: creates
//! `.faber-probe-PID` there, writes and fsyncs a byte, removes it — this fails as root
//! too where the directory cannot be written (a read-only mount, a path below a
//! regular file or under `/proc`), because permission bits are not the test; (3) takes
//! an exclusive advisory lock on `.faber.lock` in it (`flock` on Unix, `LockFileEx` on
//! Windows, through `std::fs::File::try_lock`), held until the process ends — the
//! kernel releases it however the process ends, so a killed run leaves no stale lock;
//! (4) removes temporaries (`.NAME.faber-tmp-PID`, src/cli/atomic.rs) that a killed
//! writer left there. Claiming a directory this process already holds is a no-op.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::atomic::TEMP_MARK;

/// The lock file's name inside a claimed directory.
pub const LOCK_NAME: &str = ".faber.lock";

/// Directories this process has claimed, with their open, locked lock files.
static HELD: Mutex<Vec<(PathBuf, File)>> = Mutex::new(Vec::new());

/// Claims `dir` for this process (see the module documentation); the error is a
/// sentence for a RUN017 message.
pub fn claim(dir: &Path) -> Result<(), String> {
    fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory: {e}"))?;
    let canonical = fs::canonicalize(dir).map_err(|e| format!("cannot open it: {e}"))?;
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    if held.iter().any(|(d, _)| *d == canonical) {
        return Ok(());
    }
    probe(&canonical).map_err(|e| format!("cannot write files in it: {e}"))?;
    let lock_path = canonical.join(LOCK_NAME);
    let lock = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock_path)
        .map_err(|e| format!("cannot create its lock file `{}`: {e}", lock_path.display()))?;
    match lock.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => {
            return Err(format!(
                "another faber run is writing to it (it holds the lock `{}`); wait for that run to end or write somewhere else",
                lock_path.display()
            ))
        }
        Err(fs::TryLockError::Error(e)) => {
            return Err(format!("cannot lock `{}`: {e}", lock_path.display()))
        }
    }
    remove_stale_temporaries(&canonical);
    held.push((canonical, lock));
    Ok(())
}

/// Creates, writes, fsyncs and removes a probe file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let path = dir.join(format!(".faber-probe-{}", std::process::id()));
    let _ = fs::remove_file(&path);
    let result = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
        .and_then(|mut f| {
            f.write_all(b"x")?;
            f.sync_all()
        });
    let removed = fs::remove_file(&path);
    result.and(removed)
}

/// Removes the temporaries of writers that are gone: with the lock held no claiming
/// run writes here, and on Linux a temporary whose PID is still a live process is
/// kept (a program that writes here without claiming the directory).
fn remove_stale_temporaries(dir: &Path) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let proc_fs = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Some((_, pid)) = name.rsplit_once(TEMP_MARK) else {
            continue;
        };
        if !name.starts_with('.') {
            continue;
        }
        let alive = match pid.parse::<u32>() {
            Ok(p) if p == std::process::id() => true,
            Ok(p) => proc_fs && Path::new(&format!("/proc/{p}")).exists(),
            Err(_) => continue,
        };
        let is_file = entry.file_type().is_ok_and(|t| t.is_file());
        if !alive && is_file {
            let _ = fs::remove_file(entry.path());
        }
    }
}
