//! The requests the host devices of norma answer through [`super::Io::device`]: the
//! file system of `norma:solum` (beyond the whole-file reads and writes `Io` has as
//! methods of their own), the environment facts of `norma:processus`. The library
//! defines the protocol only; the CLI answers it (src/cli/hostdev.rs) with the guards of
//! every host file access: special files are never opened, every write is atomic.

/// One request of a host device. Paths are the program's texts, relative to the
/// working directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Device<'a> {
    /// At most `len` bytes of a regular file from byte `start` on (fewer at its end).
    ReadRange {
        path: &'a str,
        start: u64,
        len: u64,
    },
    /// The file offset of the first occurrence of `pattern` among the bytes
    /// `[start, start + len)` of a regular file, or -1.
    Find {
        path: &'a str,
        pattern: &'a [u8],
        start: u64,
        len: u64,
    },
    /// `text` added at the end of a file (created when missing), atomically.
    Append {
        path: &'a str,
        text: &'a str,
    },
    /// Whether the path names something (symbolic links followed).
    Exists(&'a str),
    IsDir(&'a str),
    IsFile(&'a str),
    /// A regular file that can be opened for reading.
    Readable(&'a str),
    /// The path itself is a symbolic link.
    IsLink(&'a str),
    /// The size in bytes (links followed).
    Size(&'a str),
    /// The permission bits (links followed).
    Mode(&'a str),
    /// The status of the path itself (links not followed).
    Status(&'a str),
    /// The target of a symbolic link.
    ReadLink(&'a str),
    /// A symbolic link at `link` pointing to `target`.
    Symlink {
        target: &'a str,
        link: &'a str,
    },
    /// Removes a file or a symbolic link (never a directory).
    RemoveFile(&'a str),
    /// Copies a regular file's bytes to `to`, atomically.
    Copy {
        from: &'a str,
        to: &'a str,
    },
    Rename {
        from: &'a str,
        to: &'a str,
    },
    /// Creates an empty file, or sets the modification time of an existing one to now.
    Touch(&'a str),
    SetMode {
        path: &'a str,
        mode: u32,
    },
    /// Creates a directory and its missing parents.
    CreateDir(&'a str),
    /// The names in a directory, sorted.
    List(&'a str),
    /// Removes a directory with everything in it, or a file.
    RemoveTree(&'a str),
    /// The canonical absolute path, or the working directory joined with the path.
    Absolute(&'a str),
    Home,
    TempDir,
    /// An environment variable of the process (`None` when unset).
    Env(&'a str),
    /// The working directory.
    WorkingDir,
    /// The process id.
    ProcessId,
    /// `n` bytes from the operating system's random source (`norma:aleator`).
    Entropy(u64),
    /// A shell command (`/bin/sh -c`) run to its end, its output captured
    /// (`processus.exsequi`); a status other than 0 is a failure.
    Shell(&'a str),
    /// A program and its arguments run to its end without a shell, its output and
    /// status captured whatever the status (`processus.captura`).
    Exec(&'a [String]),
}

/// A file's status ([`Device::Status`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileStatus {
    pub mode: i64,
    pub links: i64,
    pub uid: i64,
    pub gid: i64,
    pub size: i64,
    /// Modification time, milliseconds since the Unix epoch.
    pub modified_ms: i64,
    pub is_dir: bool,
    pub is_link: bool,
}

/// The answer to a [`Device`] request.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Done,
    Bool(bool),
    Int(i64),
    Text(String),
    MaybeText(Option<String>),
    Bytes(Vec<u8>),
    Names(Vec<String>),
    Status(FileStatus),
    /// What a [`Device::Shell`] command wrote to standard output and standard error.
    Output {
        stdout: String,
        stderr: String,
    },
    /// The exit status (128 + the signal for a program a signal ended) and outputs of
    /// a [`Device::Exec`] program.
    Captured {
        status: i64,
        stdout: String,
        stderr: String,
    },
}

/// Which standard stream [`super::Io::is_terminal`] asks about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stream {
    In,
    Out,
    Err,
}
