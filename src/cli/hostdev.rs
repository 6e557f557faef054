//! The host devices of norma (`faber::eval::device`): the file-system requests of
//! `norma:solum` and the environment facts and shell commands of `norma:processus`
//! (src/cli/hostshell.rs), answered for every
//! `Io` of the CLI through its [`HostFiles`] (docs/norma.md § solum).
//!
//! The rules of the other host file functions hold here too: a file is read only when
//! it is a regular file (checked before it is opened, so a FIFO or a device is never
//! opened), within the bytes limit; every write of contents (append, copy) goes through
//! [`atomic::write_atomic`]; creating an empty file uses `O_EXCL`, so it never
//! truncates a file that appeared meanwhile. `amputa` refuses the root, `.` and `..`.

use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Component, Path};
use std::time::{SystemTime, UNIX_EPOCH};

use super::atomic;
use super::fsguard::{self, ReadError};
use super::hostfs::HostFiles;
use faber::eval::device::{Device, FileStatus, Reply};

impl HostFiles {
    /// Answers one device request; the error is the reason, in words.
    pub fn device(&self, req: &Device) -> Result<Reply, String> {
        self.answer(req).map_err(|e| e.to_string())
    }

    /// At most `max` bytes of standard input (fewer only at its end), within the
    /// bytes limit.
    pub fn read_stdin(&self, max: u64) -> Result<Vec<u8>, String> {
        if max > self.bytes_limit() {
            return Err(format!(
                "{max} bytes are more than the {} faber reads at once",
                self.bytes_limit()
            ));
        }
        let mut out = Vec::new();
        io::stdin()
            .lock()
            .take(max)
            .read_to_end(&mut out)
            .map_err(|e| e.to_string())?;
        Ok(out)
    }

    fn answer(&self, req: &Device) -> Result<Reply, Failure> {
        Ok(match *req {
            Device::ReadRange { path, start, len } => {
                Reply::Bytes(self.read_range(path, start, len)?)
            }
            Device::Find {
                path,
                pattern,
                start,
                len,
            } => {
                let hay = self.read_range(path, start, len)?;
                let at = if pattern.is_empty() {
                    Some(0)
                } else {
                    hay.windows(pattern.len()).position(|w| w == pattern)
                };
                Reply::Int(at.map_or(-1, |i| (start + i as u64) as i64))
            }
            Device::Append { path, text } => {
                let mut contents = match fs::metadata(path) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
                    _ => fsguard::read_regular_file(Path::new(path), self.bytes_limit())?,
                };
                contents.extend_from_slice(text.as_bytes());
                atomic::write_atomic(Path::new(path), &contents)?;
                Reply::Done
            }
            Device::Exists(p) => Reply::Bool(fs::metadata(p).is_ok()),
            Device::IsDir(p) => Reply::Bool(fs::metadata(p).is_ok_and(|m| m.is_dir())),
            Device::IsFile(p) => Reply::Bool(fs::metadata(p).is_ok_and(|m| m.is_file())),
            Device::Readable(p) => {
                Reply::Bool(fs::metadata(p).is_ok_and(|m| m.is_file()) && fs::File::open(p).is_ok())
            }
            Device::IsLink(p) => {
                Reply::Bool(fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()))
            }
            Device::Size(p) => Reply::Int(fs::metadata(p)?.len() as i64),
            Device::Mode(p) => Reply::Int(mode_bits(&fs::metadata(p)?)),
            Device::Status(p) => Reply::Status(status(&fs::symlink_metadata(p)?)),
            Device::ReadLink(p) => Reply::Text(utf8(fs::read_link(p)?.into_os_string())?),
            Device::Symlink { target, link } => {
                symlink(target, link)?;
                Reply::Done
            }
            Device::RemoveFile(p) => {
                if fs::symlink_metadata(p)?.is_dir() {
                    return Err(Failure::Says(
                        "it is a directory (`amputa` removes directories)",
                    ));
                }
                fs::remove_file(p)?;
                Reply::Done
            }
            Device::Copy { from, to } => {
                let bytes = fsguard::read_regular_file(Path::new(from), self.bytes_limit())?;
                atomic::write_atomic(Path::new(to), &bytes)?;
                Reply::Done
            }
            Device::Rename { from, to } => {
                fs::rename(from, to)?;
                Reply::Done
            }
            Device::Touch(p) => {
                touch(p)?;
                Reply::Done
            }
            Device::SetMode { path, mode } => {
                set_mode(path, mode)?;
                Reply::Done
            }
            Device::CreateDir(p) => {
                fs::create_dir_all(p)?;
                Reply::Done
            }
            Device::List(p) => {
                let mut names = Vec::new();
                for entry in fs::read_dir(p)? {
                    names.push(utf8(entry?.file_name())?);
                }
                names.sort();
                Reply::Names(names)
            }
            Device::RemoveTree(p) => {
                remove_tree(p)?;
                Reply::Done
            }
            Device::Absolute(p) => Reply::Text(absolute(p)?),
            Device::Home => Reply::Text(
                std::env::var("HOME")
                    .ok()
                    .filter(|h| !h.is_empty())
                    .unwrap_or_else(|| "/".to_string()),
            ),
            Device::TempDir => Reply::Text(utf8(std::env::temp_dir().into_os_string())?),
            Device::Env(name) => Reply::MaybeText(match std::env::var(name) {
                Ok(v) => Some(v),
                Err(std::env::VarError::NotPresent) => None,
                Err(std::env::VarError::NotUnicode(_)) => {
                    return Err(Failure::Says("its value is not valid UTF-8"))
                }
            }),
            Device::WorkingDir => Reply::Text(utf8(std::env::current_dir()?.into_os_string())?),
            Device::ProcessId => Reply::Int(i64::from(std::process::id())),
            Device::Entropy(n) => Reply::Bytes(entropy(n)?),
            Device::Exec(argv) => {
                let done =
                    super::hostshell::exec(argv, self.text_limit()).map_err(Failure::Owned)?;
                let text = |b: Vec<u8>, which: &'static str| {
                    String::from_utf8(b).map_err(|_| Failure::Says(which))
                };
                Reply::Captured {
                    status: super::hostshell::status_code(done.status),
                    stdout: text(done.stdout, "its standard output is not valid UTF-8")?,
                    stderr: text(done.stderr, "its standard error is not valid UTF-8")?,
                }
            }
            Device::Shell(command) => {
                let out =
                    super::hostshell::run(command, self.text_limit()).map_err(Failure::Owned)?;
                Reply::Output {
                    stdout: out.stdout,
                    stderr: out.stderr,
                }
            }
        })
    }

    /// At most `len` bytes of the regular file `path` from byte `start` on, and never
    /// more than the bytes limit.
    fn read_range(&self, path: &str, start: u64, len: u64) -> Result<Vec<u8>, Failure> {
        if len > self.bytes_limit() {
            return Err(Failure::Owned(format!(
                "{len} bytes are more than the {} faber reads at once",
                self.bytes_limit()
            )));
        }
        let meta = fs::metadata(path)?;
        if !meta.is_file() {
            return Err(ReadError::NotRegular(if meta.is_dir() {
                "a directory"
            } else {
                "a special file"
            })
            .into());
        }
        let mut file = fs::File::open(path)?;
        if !file.metadata()?.is_file() {
            return Err(ReadError::NotRegular("a special file").into());
        }
        file.seek(SeekFrom::Start(start))?;
        let mut out = Vec::new();
        file.take(len).read_to_end(&mut out)?;
        Ok(out)
    }
}

/// Why a device request failed.
#[derive(Debug)]
enum Failure {
    Read(ReadError),
    Says(&'static str),
    Owned(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Read(e) => write!(f, "{e}"),
            Failure::Says(s) => write!(f, "{s}"),
            Failure::Owned(s) => write!(f, "{s}"),
        }
    }
}

impl From<io::Error> for Failure {
    /// The file-system reasons in the words of the other host reads.
    fn from(e: io::Error) -> Failure {
        Failure::Read(ReadError::from(e))
    }
}

impl From<ReadError> for Failure {
    fn from(e: ReadError) -> Failure {
        Failure::Read(e)
    }
}

fn utf8(s: std::ffi::OsString) -> Result<String, Failure> {
    s.into_string()
        .map_err(|_| Failure::Says("a name that is not valid UTF-8"))
}

/// Creates `p` empty when it is missing (`O_EXCL`: a file that appears meanwhile is not
/// truncated), else sets its modification time to now. Special files are refused.
fn touch(p: &str) -> Result<(), Failure> {
    match fs::metadata(p) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(p)?;
            Ok(())
        }
        Err(e) => Err(e.into()),
        Ok(m) if !(m.is_file() || m.is_dir()) => Err(Failure::Says(
            "it is not a regular file or a directory (a device, FIFO or socket)",
        )),
        Ok(_) => {
            let file = fs::File::open(p)?;
            file.set_modified(SystemTime::now())?;
            Ok(())
        }
    }
}

/// Removes the directory `p` and everything in it (a symbolic link is removed, never
/// followed), or the file `p`. The root, `.`, `..` and paths that climb only upwards
/// are refused.
fn remove_tree(p: &str) -> Result<(), Failure> {
    let norm = fsguard::normalize(Path::new(p));
    let only_up = norm.components().all(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::CurDir
        )
    });
    if p.is_empty() || only_up {
        return Err(Failure::Says(
            "faber does not remove the root, the working directory or a directory above it",
        ));
    }
    if fs::symlink_metadata(p)?.is_dir() {
        fs::remove_dir_all(p)?;
    } else {
        fs::remove_file(p)?;
    }
    Ok(())
}

/// The canonical path of `p` when it exists, else the working directory joined with
/// `p`, `.` and `..` removed lexically.
fn absolute(p: &str) -> Result<String, Failure> {
    let path = match fs::canonicalize(p) {
        Ok(real) => real,
        Err(_) => fsguard::normalize(&std::env::current_dir()?.join(p)),
    };
    utf8(path.into_os_string())
}

fn mode_bits(m: &fs::Metadata) -> i64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        i64::from(m.permissions().mode() & 0o7777)
    }
    #[cfg(not(unix))]
    {
        if m.permissions().readonly() {
            0o444
        } else {
            0o666
        }
    }
}

fn status(m: &fs::Metadata) -> FileStatus {
    let modified_ms = m
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    #[cfg(unix)]
    let (links, uid, gid) = {
        use std::os::unix::fs::MetadataExt;
        (m.nlink() as i64, i64::from(m.uid()), i64::from(m.gid()))
    };
    #[cfg(not(unix))]
    let (links, uid, gid) = (1, 0, 0);
    FileStatus {
        mode: mode_bits(m),
        links,
        uid,
        gid,
        size: m.len() as i64,
        modified_ms,
        is_dir: m.is_dir(),
        is_link: m.file_type().is_symlink(),
    }
}

fn set_mode(path: &str, mode: u32) -> Result<(), Failure> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let mut perms = fs::metadata(path)?.permissions();
        perms.set_readonly(mode & 0o222 == 0);
        fs::set_permissions(path, perms)?;
        Ok(())
    }
}

fn symlink(target: &str, link: &str) -> Result<(), Failure> {
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(target, link)?;
        Ok(())
    }
    #[cfg(not(unix))]
    {
        let _ = (target, link);
        Err(Failure::Says("symbolic links are made on Unix only"))
    }
}

/// The most random bytes one request takes.
const ENTROPY_LIMIT: u64 = 1 << 20;

/// `n` bytes of the operating system's random source (`/dev/urandom`, a fixed
/// path: the one device faber opens for a program).
fn entropy(n: u64) -> Result<Vec<u8>, Failure> {
    if n > ENTROPY_LIMIT {
        return Err(Failure::Owned(format!(
            "{n} bytes are more than the {ENTROPY_LIMIT} one call takes"
        )));
    }
    let mut out = vec![0; n as usize];
    fs::File::open("/dev/urandom")?.read_exact(&mut out)?;
    Ok(out)
}
