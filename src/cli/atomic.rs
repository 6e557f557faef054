//! The one way faber writes a file for a program (`hospes.scribe_textum`,
//! `hospes.serva_tensores`, and the gradus functions built on them): write a
//! temporary file beside the target, flush and fsync it, rename it over the target,
//! then fsync the directory. A reader sees the old file or the new one, never a
//! mixture; a failure at any point (full disk, an error, a kill) leaves the old file
//! as it was. docs/robustness.md ("Writing files") describes the protocol.
//!
//! The temporary file is `.NAME.faber-tmp-PID` in the target's directory. On an
//! error it is removed before the error is returned; a process killed mid-write
//! (SIGKILL, power loss) leaves it behind, and it is never read: the next
//! `hospes.para_directorium` of that directory removes it (src/cli/outdir.rs).
//!
//! Fault injection, for tests: `FABER_WRITE_FAULT` makes every write misbehave once
//! N bytes of the temporary file are written —
//! `fail-after=N` returns an injected I/O error (as a full disk would),
//! `abort-after=N` aborts the process (as a kill would), and
//! `pause-after=N:MS` sleeps MS milliseconds and then finishes the write (a slow disk).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The environment variable of the fault-injection hook.
pub const FAULT_VAR: &str = "FABER_WRITE_FAULT";

/// The marker in the name of every temporary file the writer creates.
pub const TEMP_MARK: &str = ".faber-tmp-";

/// Bytes written between two checks of the fault hook.
const CHUNK: usize = 1 << 16;

/// Replaces (or creates) the file at `path` with `contents`, atomically; missing
/// parent directories are created. A target that exists and is not a regular file
/// (a directory, a FIFO, a device) is refused; a symbolic link is written through
/// (its target is replaced, the link stays).
pub fn write_atomic(path: &Path, contents: &[u8]) -> io::Result<()> {
    let target = resolve_target(path)?;
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&dir)?;
    let Some(name) = target.file_name() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path names no file",
        ));
    };
    let temp = dir.join(format!(
        ".{}{TEMP_MARK}{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let old_mode = fs::metadata(&target).ok().map(|m| m.permissions());
    let result = write_temp(&temp, contents, old_mode).and_then(|()| {
        fs::rename(&temp, &target)?;
        sync_dir(&dir)
    });
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// The file a write to `path` replaces: `path` itself, or where a symbolic link at
/// `path` points. Errors for an existing target that is not a regular file.
fn resolve_target(path: &Path) -> io::Result<PathBuf> {
    let target = match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).or_else(|e| {
            // A dangling link: write the file it names.
            if e.kind() == io::ErrorKind::NotFound {
                let link = fs::read_link(path)?;
                Ok(path.parent().unwrap_or(Path::new(".")).join(link))
            } else {
                Err(e)
            }
        })?,
        _ => path.to_path_buf(),
    };
    match fs::metadata(&target) {
        Ok(m) if !m.is_file() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            if m.is_dir() {
                "it is a directory"
            } else {
                "it is not a regular file (a device, FIFO or socket)"
            },
        )),
        _ => Ok(target),
    }
}

/// Writes, flushes and fsyncs the temporary file, with the old target's permissions.
fn write_temp(temp: &Path, contents: &[u8], mode: Option<fs::Permissions>) -> io::Result<()> {
    // A temporary of this name is a leftover of an earlier process with this PID.
    let _ = fs::remove_file(temp);
    let mut file = OpenOptions::new().write(true).create_new(true).open(temp)?;
    let fault = Fault::from_env();
    let mut written = 0;
    for chunk in contents.chunks(CHUNK) {
        fault.check(written)?;
        file.write_all(chunk)?;
        written += chunk.len();
    }
    fault.check(written)?;
    file.flush()?;
    if let Some(mode) = mode {
        file.set_permissions(mode)?;
    }
    file.sync_all()
}

/// Makes the rename durable: fsyncs the directory (Unix; elsewhere a no-op).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// The fault-injection hook ([`FAULT_VAR`]).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    Fail(usize),
    Abort(usize),
    Pause(usize, u64),
}

impl Fault {
    fn from_env() -> Fault {
        std::env::var(FAULT_VAR)
            .ok()
            .and_then(|v| Fault::parse(&v))
            .unwrap_or(Fault::None)
    }

    fn parse(spec: &str) -> Option<Fault> {
        let (kind, arg) = spec.split_once('=')?;
        match kind {
            "fail-after" => Some(Fault::Fail(arg.parse().ok()?)),
            "abort-after" => Some(Fault::Abort(arg.parse().ok()?)),
            "pause-after" => {
                let (n, ms) = arg.split_once(':')?;
                Some(Fault::Pause(n.parse().ok()?, ms.parse().ok()?))
            }
            _ => None,
        }
    }

    /// Called with the bytes written so far, before each chunk and at the end.
    /// A pause happens once: the first time `written` reaches its threshold.
    fn check(self, written: usize) -> io::Result<()> {
        match self {
            Fault::Fail(n) if written >= n => Err(io::Error::other(format!(
                "injected write fault after {written} bytes ({FAULT_VAR})"
            ))),
            Fault::Abort(n) if written >= n => std::process::abort(),
            Fault::Pause(n, ms) if written >= n => {
                PAUSED.with(|p| {
                    if !p.replace(true) {
                        std::thread::sleep(std::time::Duration::from_millis(ms));
                    }
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

thread_local! {
    static PAUSED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_specs_parse() {
        assert_eq!(Fault::parse("fail-after=10"), Some(Fault::Fail(10)));
        assert_eq!(Fault::parse("abort-after=0"), Some(Fault::Abort(0)));
        assert_eq!(
            Fault::parse("pause-after=3:250"),
            Some(Fault::Pause(3, 250))
        );
        assert_eq!(Fault::parse("pause-after=3"), None);
        assert_eq!(Fault::parse("explode"), None);
    }

    #[test]
    fn replaces_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("faber-atomic-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let f = dir.join("sub/a.txt");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two!").unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"two!");
        let names: Vec<_> = fs::read_dir(dir.join("sub"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("a.txt")]);
        assert!(write_atomic(&dir, b"x").is_err(), "a directory is refused");
        fs::remove_dir_all(&dir).unwrap();
    }
}
