//! The file system behind the `hospes` file functions (`lege_textum`, `scribe_textum`,
//! `para_directorium`, `carga_tensores`, `serva_tensores`): the library's `Io` trait
//! refuses them by default, and every `Io` of the CLI (`faber run`'s `ProcessIo`,
//! `faber test`'s `TestIo`, `faber grad-check`'s `CaptureIo`) reaches the files
//! through one [`HostFiles`] (docs/host.md).
//!
//! Reads are of regular files only, bounded ([`fsguard::read_regular_file`]); writes
//! replace a file atomically ([`atomic::write_atomic`]); an output directory is claimed
//! for the run ([`outdir::claim`]).

use std::path::Path;

use super::{atomic, fsguard, outdir};
use faber::eval::RunConfig;

/// The file system of one run, with the read limits of its [`RunConfig`].
#[derive(Clone, Copy, Debug)]
pub struct HostFiles {
    /// Largest text file `hospes.lege_textum` reads (the text limit).
    text_limit: u64,
    /// Largest file the byte reads take ([`RunConfig::host_bytes_limit`]).
    bytes_limit: u64,
}

impl HostFiles {
    pub fn new(config: &RunConfig) -> HostFiles {
        HostFiles {
            text_limit: config.max_text_bytes as u64,
            bytes_limit: config.host_bytes_limit(),
        }
    }

    /// A whole file as UTF-8 text (a regular file of at most the text limit).
    pub fn read_file(&self, path: &str) -> Result<String, String> {
        String::from_utf8(read_host_file(path, self.text_limit)?)
            .map_err(|_| "it is not valid UTF-8".to_string())
    }

    /// Creates or replaces a file (and its missing parent directories) atomically.
    pub fn write_file(&self, path: &str, contents: &str) -> Result<(), String> {
        atomic::write_atomic(Path::new(path), contents.as_bytes()).map_err(|e| e.to_string())
    }

    /// Creates an output directory, checks that files can be written in it and locks
    /// it for this run.
    pub fn claim_dir(&self, path: &str) -> Result<(), String> {
        outdir::claim(Path::new(path))
    }

    /// A whole file as bytes (checkpoints), of at most the bytes limit.
    pub fn read_bytes(&self, path: &str) -> Result<Vec<u8>, String> {
        read_host_file(path, self.bytes_limit)
    }

    /// The largest text a text read takes (and the longest output of a command).
    pub fn text_limit(&self) -> u64 {
        self.text_limit
    }

    /// The largest file (or byte range) a byte read takes.
    pub fn bytes_limit(&self) -> u64 {
        self.bytes_limit
    }

    /// Creates or replaces a file atomically (checkpoints).
    pub fn write_bytes(&self, path: &str, contents: &[u8]) -> Result<(), String> {
        atomic::write_atomic(Path::new(path), contents).map_err(|e| e.to_string())
    }
}

/// A host read: a regular file only (a FIFO, a device or a symlink loop fails at once,
/// before anything is opened or read), of at most `limit` bytes. `/dev/stdin` is
/// the one exception: the program's standard input, read to its end.
fn read_host_file(path: &str, limit: u64) -> Result<Vec<u8>, String> {
    if path == "/dev/stdin" {
        return fsguard::read_capped(std::io::stdin().lock(), limit).map_err(|e| e.to_string());
    }
    fsguard::read_regular_file(Path::new(path), limit).map_err(|e| e.to_string())
}

/// The five file methods of `faber::eval::Io` and its `device` (src/cli/hostdev.rs), forwarded to the [`HostFiles`] in
/// field `$files` of the implementing type.
macro_rules! host_file_methods {
    ($files:ident) => {
        fn read_file(&mut self, path: &str) -> Result<String, String> {
            self.$files.read_file(path)
        }
        fn write_file(&mut self, path: &str, contents: &str) -> Result<(), String> {
            self.$files.write_file(path, contents)
        }
        fn claim_dir(&mut self, path: &str) -> Result<(), String> {
            self.$files.claim_dir(path)
        }
        fn read_bytes(&mut self, path: &str) -> Result<Vec<u8>, String> {
            self.$files.read_bytes(path)
        }
        fn write_bytes(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
            self.$files.write_bytes(path, contents)
        }
        fn device(
            &mut self,
            req: &faber::eval::device::Device,
        ) -> Result<faber::eval::device::Reply, String> {
            self.$files.device(req)
        }
    };
}
pub(crate) use host_file_methods;

/// The longest line `lege` reads from standard input (bytes, line break included).
const STDIN_LINE_LIMIT: u64 = 64 << 20;

/// `lege`: the next line of standard input without `\n` / `\r\n`; `None` at its end.
pub fn read_stdin_line() -> Result<Option<String>, String> {
    use std::io::{BufRead, Read};
    let mut buf = Vec::new();
    let stdin = std::io::stdin();
    let n = stdin
        .lock()
        .take(STDIN_LINE_LIMIT)
        .read_until(b'\n', &mut buf)
        .map_err(|e| e.to_string())?;
    if n == 0 {
        return Ok(None);
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    } else if n as u64 == STDIN_LINE_LIMIT {
        return Err(format!("a line longer than {STDIN_LINE_LIMIT} bytes"));
    }
    String::from_utf8(buf)
        .map(Some)
        .map_err(|_| "a line that is not valid UTF-8".to_string())
}
