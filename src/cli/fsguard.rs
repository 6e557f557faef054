//! Checked file access shared by every reader of user-named paths: the CLI's source,
//! manifest and import loaders and the default host reads (`hospes.lege_textum`,
//! `hospes.carga_tensores`). Two rules (docs/robustness.md, "Paths and special files"):
//!
//! - [`read_regular_file`] reads only regular files, and at most `limit` bytes. The
//!   file type is checked with `metadata` *before* the file is opened, so a FIFO is
//!   never opened (opening one blocks until a writer comes) and a device such as
//!   `/dev/zero` is never read; a symlink loop is reported as one.
//! - [`contain`] keeps a path inside a root directory: lexically (`..` may not climb
//!   above the root) and after resolving symlinks (the real file must lie below the
//!   root's real path).

use std::fmt;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

/// The largest source file or manifest faber reads (64 MiB).
pub const SOURCE_LIMIT: u64 = 64 << 20;

/// Why a path could not be read.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    PermissionDenied,
    /// A symlink chain that never ends (ELOOP).
    SymlinkLoop,
    /// Not a regular file: what it is instead ("a directory", "a FIFO (named pipe)").
    NotRegular(&'static str),
    /// Larger than the limit (`size` is a lower bound when the file grew while read).
    TooLarge {
        size: u64,
        limit: u64,
    },
    Other(io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::NotFound => write!(f, "it does not exist"),
            ReadError::PermissionDenied => write!(f, "permission denied"),
            ReadError::SymlinkLoop => write!(f, "it is a loop of symbolic links"),
            ReadError::NotRegular(kind) => write!(f, "it is {kind}, not a regular file"),
            ReadError::TooLarge { size, limit } => write!(
                f,
                "it is {} bytes, more than the {} bytes faber reads from one file",
                group(*size),
                group(*limit)
            ),
            ReadError::Other(e) => write!(f, "{e}"),
        }
    }
}

/// `1234567` as `1 234 567`.
fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// ELOOP, which `io::ErrorKind` names only on nightly.
#[cfg(target_os = "linux")]
const ELOOP: i32 = 40;
#[cfg(not(target_os = "linux"))]
const ELOOP: i32 = 62;

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> ReadError {
        match e.kind() {
            io::ErrorKind::NotFound => ReadError::NotFound,
            io::ErrorKind::PermissionDenied => ReadError::PermissionDenied,
            _ if e.raw_os_error() == Some(ELOOP) => ReadError::SymlinkLoop,
            _ => ReadError::Other(e),
        }
    }
}

/// What a non-regular file is, in words.
fn kind(ft: std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    if ft.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

/// The bytes of the regular file `path`, at most `limit` of them. Anything else
/// (missing, a directory, a FIFO, a device, a socket, a symlink loop, a larger file)
/// is an error, found before any byte is read.
pub fn read_regular_file(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind(meta.file_type())));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge {
            size: meta.len(),
            limit,
        });
    }
    let file = std::fs::File::open(path)?;
    // The path may have been replaced between the check and the open.
    let opened = file.metadata()?;
    if !opened.is_file() {
        return Err(ReadError::NotRegular(kind(opened.file_type())));
    }
    read_capped(file, limit)
}

/// Reads `r` to its end, failing once more than `limit` bytes came.
pub fn read_capped(r: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    r.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge {
            size: bytes.len() as u64,
            limit,
        });
    }
    Ok(bytes)
}

/// Why [`contain`] refused a path.
#[derive(Debug)]
pub enum ContainError {
    /// The path (lexically, or once its symlinks are resolved) is outside the root.
    Escapes,
    /// The path could not be resolved (missing, a symlink loop, no permission).
    Unresolved(ReadError),
}

/// `path` with `.` and `..` removed lexically (`a/b/../c` → `a/c`); a `..` above the
/// start of a relative path is kept.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                let last = out.components().next_back();
                match last {
                    Some(Component::Normal(_)) => {
                        out.pop();
                    }
                    Some(Component::RootDir) | Some(Component::Prefix(_)) => {}
                    _ => out.push(".."),
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The real path of `path` when it lies inside `root` (a canonical directory), both
/// as written and once symlinks are resolved: the one rule every loader applies to a
/// relative import, a manifest's entry and a library module. A relative `path` is
/// taken relative to `root`.
pub fn contain(root: &Path, path: &Path) -> Result<PathBuf, ContainError> {
    let joined = normalize(&root.join(path));
    if !joined.starts_with(root) {
        return Err(ContainError::Escapes);
    }
    let real = std::fs::canonicalize(&joined).map_err(|e| ContainError::Unresolved(e.into()))?;
    if !real.starts_with(root) {
        return Err(ContainError::Escapes);
    }
    Ok(real)
}

/// The file that marks a package's root directory.
pub const MANIFEST: &str = "faber.toml";

/// The root a program's relative imports stay inside: the directory of the nearest
/// `faber.toml` at or above `dir` (the entry file's real directory, or the current
/// directory for standard input), else `dir` itself.
pub fn package_root(dir: &Path) -> PathBuf {
    dir.ancestors()
        .find(|a| a.join(MANIFEST).is_file())
        .unwrap_or(dir)
        .to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_keeps_leading_parents() {
        assert_eq!(normalize(Path::new("a/./b/../c")), PathBuf::from("a/c"));
        assert_eq!(normalize(Path::new("../x")), PathBuf::from("../x"));
        assert_eq!(normalize(Path::new("a/../../x")), PathBuf::from("../x"));
        assert_eq!(normalize(Path::new("/a/../../x")), PathBuf::from("/x"));
    }

    #[test]
    fn group_thousands() {
        assert_eq!(group(7), "7");
        assert_eq!(group(1234), "1 234");
        assert_eq!(group(67_108_864), "67 108 864");
    }

    #[test]
    fn lexical_escape_is_refused_before_the_file_system() {
        let root = Path::new("/nonexistent-root/pkg");
        assert!(matches!(
            contain(root, Path::new("../x.fab")),
            Err(ContainError::Escapes)
        ));
        assert!(matches!(
            contain(root, Path::new("a/../../pkg2/x.fab")),
            Err(ContainError::Escapes)
        ));
        assert!(matches!(
            contain(root, Path::new("a/../x.fab")),
            Err(ContainError::Unresolved(ReadError::NotFound))
        ));
    }
}
