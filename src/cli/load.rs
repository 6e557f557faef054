//! Turning a `<path>` argument into source text: a `.fab` file, or a package directory
//! whose `faber.toml` names the entry file. Every failure is a diagnostic, never a
//! panic: unreadable paths (missing, a FIFO, a device, a symlink loop, too large) are
//! CLI001, a bad manifest or an entry outside the package CLI002, bytes that are not
//! UTF-8 LEX014. The path `-` is standard input: one file named `<stdin>`, read to its
//! end, whose relative imports and `faber.toml` are looked up from the current
//! directory (as for a file that lies there).

use std::io;
use std::path::{Path, PathBuf};

use super::fsguard::{self, ContainError, ReadError, SOURCE_LIMIT};
use faber::diag::{codes, Diagnostic};
use faber::source::{FileId, SourceMap, Span};
use faber::syntax::vocab::Locale;

use super::manifest::{self, Manifest};

pub const MANIFEST: &str = fsguard::MANIFEST;

/// The path argument that means standard input, and the name its diagnostics show.
pub const STDIN_PATH: &str = "-";
pub const STDIN_NAME: &str = "<stdin>";

/// Whether a `<path>` argument is `-` (standard input).
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN_PATH
}

/// What a `<path>` argument resolved to.
pub struct Input {
    /// The file to check, parse or run.
    pub entry: FileId,
    /// The package's manifest: the directory's own, or for a file the nearest
    /// `faber.toml` above it.
    pub package: Option<Manifest>,
    /// Notes and warnings from loading (ignored manifest sections).
    pub notes: Vec<Diagnostic>,
}

impl Input {
    /// The entry file with its manifest, whose loading notes become the input's.
    fn new(entry: FileId, package: Option<Manifest>) -> Input {
        let notes = package
            .as_ref()
            .map(|m| m.notes.clone())
            .unwrap_or_default();
        Input {
            entry,
            package,
            notes,
        }
    }
}

/// Loads `path` into `sources`. A directory must hold `faber.toml`; its entry is
/// `<dir>/<paths.source>/<paths.entry>`. A file is loaded as is, and the nearest
/// `faber.toml` above it (if any) is read for its settings.
pub fn load(path: &Path, sources: &mut SourceMap) -> Result<Input, Vec<Diagnostic>> {
    if is_stdin(path) {
        return load_stdin(sources);
    }
    let meta = std::fs::metadata(path).map_err(|e| vec![io_error(sources, path, &e.into())])?;
    if meta.is_dir() {
        let manifest_path = path.join(MANIFEST);
        if std::fs::symlink_metadata(&manifest_path).is_err() {
            let d = placeholder_error(
                sources,
                path,
                format!("`{}` is a directory without a {MANIFEST}", path.display()),
            )
            .with_hint("pass a .fab file, or a package directory that contains faber.toml");
            return Err(vec![d]);
        }
        let (manifest, manifest_file) = read_manifest(&manifest_path, sources)?;
        let entry_path = path.join(&manifest.source).join(&manifest.entry);
        check_entry(path, &manifest, manifest_file, &entry_path)?;
        let entry = read_source(&entry_path, sources).map_err(|d| vec![d])?;
        let notes = manifest.notes.clone();
        Ok(Input {
            entry,
            package: Some(manifest),
            notes,
        })
    } else {
        let package = match manifest_above(path) {
            Some(manifest_path) => Some(read_manifest(&manifest_path, sources)?.0),
            None => None,
        };
        let entry = read_source(path, sources).map_err(|d| vec![d])?;
        Ok(Input::new(entry, package))
    }
}

/// Standard input as the entry file `<stdin>`, with the nearest `faber.toml` at or
/// above the current directory for its settings.
fn load_stdin(sources: &mut SourceMap) -> Result<Input, Vec<Diagnostic>> {
    let package = match manifest_in_or_above(Path::new(".")) {
        Some(manifest_path) => Some(read_manifest(&manifest_path, sources)?.0),
        None => None,
    };
    let bytes = match fsguard::read_capped(io::stdin().lock(), SOURCE_LIMIT) {
        Ok(bytes) => bytes,
        Err(e) => {
            let d = placeholder_error(
                sources,
                Path::new(STDIN_NAME),
                format!("cannot read standard input: {e}"),
            );
            return Err(vec![d]);
        }
    };
    let entry = add_text(STDIN_NAME.to_string(), bytes, sources).map_err(|d| vec![d])?;
    Ok(Input::new(entry, package))
}

/// Reads one source file into the map: only a regular file of at most
/// [`SOURCE_LIMIT`] bytes (fsguard). Text that is not UTF-8 is added lossily so the
/// LEX014 diagnostic can show where the first bad byte is.
pub fn read_source(path: &Path, sources: &mut SourceMap) -> Result<FileId, Diagnostic> {
    let bytes =
        fsguard::read_regular_file(path, SOURCE_LIMIT).map_err(|e| io_error(sources, path, &e))?;
    add_text(path.display().to_string(), bytes, sources)
}

/// A package's entry file must exist and lie inside the package directory `dir`,
/// as written and once symlinks are resolved (`entry = "../../etc/passwd"` is CLI002
/// at the setting, naming the package root).
fn check_entry(
    dir: &Path,
    manifest: &Manifest,
    manifest_file: FileId,
    entry_path: &Path,
) -> Result<(), Vec<Diagnostic>> {
    let at = manifest
        .paths_span
        .unwrap_or(Span::new(manifest_file, 0, 0));
    let root = match std::fs::canonicalize(dir) {
        Ok(root) => root,
        Err(e) => {
            let why = ReadError::from(e);
            let d = Diagnostic::error(
                codes::CLI_IO,
                format!(
                    "cannot resolve the package directory `{}`: {why}",
                    dir.display()
                ),
                Span::new(manifest_file, 0, 0),
            );
            return Err(vec![d]);
        }
    };
    let rel = Path::new(&manifest.source).join(&manifest.entry);
    match fsguard::contain(&root, &rel) {
        Ok(_) => Ok(()),
        Err(ContainError::Escapes) => Err(vec![Diagnostic::error(
            codes::CLI_MANIFEST,
            format!(
                "the package entry `{}` lies outside the package root `{}`",
                entry_path.display(),
                root.display()
            ),
            at,
        )
        .with_hint("`source` and `entry` under [paths] name a file inside the package directory")]),
        Err(ContainError::Unresolved(ReadError::NotFound)) => Err(vec![Diagnostic::error(
            codes::CLI_IO,
            format!(
                "the package entry file `{}` does not exist",
                entry_path.display()
            ),
            Span::new(manifest_file, 0, 0),
        )
        .with_hint("create it, or set `source` and `entry` under [paths] in faber.toml")]),
        Err(ContainError::Unresolved(why)) => Err(vec![Diagnostic::error(
            codes::CLI_IO,
            format!(
                "cannot read the package entry file `{}`: {why}",
                entry_path.display()
            ),
            at,
        )]),
    }
}

/// Adds source bytes under `name`; bytes that are not UTF-8 are LEX014.
fn add_text(name: String, bytes: Vec<u8>, sources: &mut SourceMap) -> Result<FileId, Diagnostic> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(sources.add(name, text)),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            let file = sources.add(name.clone(), text);
            // The lossy text has U+FFFD (3 bytes) where the first bad sequence was.
            Err(Diagnostic::error(
                codes::LEX_BAD_UTF8,
                format!("`{name}` is not valid UTF-8 (first bad byte at offset {at})"),
                Span::new(file, at, at + '\u{FFFD}'.len_utf8()),
            )
            .with_hint("faber reads source files as UTF-8; re-save the file in that encoding"))
        }
    }
}

fn read_manifest(
    path: &Path,
    sources: &mut SourceMap,
) -> Result<(Manifest, FileId), Vec<Diagnostic>> {
    let file = read_source(path, sources).map_err(|d| vec![d])?;
    let mut manifest = manifest::parse(sources.text(file), file).map_err(|d| vec![d])?;
    manifest.dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    manifest.locale = reader_pack(&manifest, sources)?;
    Ok((manifest, file))
}

/// The package's locale, as its own reader pack (`reader/<code>.toml` beside
/// `faber.toml`) makes it when it has one (src/syntax/pack.rs); a pack file that does
/// not read is CLI002 with its message. A pack is registered once per file and
/// process.
fn reader_pack(manifest: &Manifest, sources: &mut SourceMap) -> Result<Locale, Vec<Diagnostic>> {
    use std::sync::Mutex;
    static SEEN: Mutex<Vec<(PathBuf, Locale)>> = Mutex::new(Vec::new());
    let base = manifest.locale;
    let path = manifest
        .dir
        .join("reader")
        .join(format!("{}.toml", base.code()));
    if !path.is_file() {
        return Ok(base);
    }
    let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
    if let Some((_, l)) = SEEN
        .lock()
        .ok()
        .and_then(|s| s.iter().find(|(p, _)| *p == key).cloned())
    {
        return Ok(l);
    }
    let file = read_source(&path, sources).map_err(|d| vec![d])?;
    let whole = Span::new(file, 0, 0);
    let spec = faber::syntax::pack::parse(sources.text(file)).map_err(|m| {
        vec![Diagnostic::error(
            codes::CLI_MANIFEST,
            format!("reader pack: {m}"),
            whole,
        )]
    })?;
    let locale = faber::syntax::pack::register(base, &spec).map_err(|m| {
        vec![Diagnostic::error(
            codes::CLI_MANIFEST,
            format!("reader pack: {m}"),
            whole,
        )]
    })?;
    if let Ok(mut s) = SEEN.lock() {
        s.push((key, locale));
    }
    Ok(locale)
}

/// The manifest of the nearest `faber.toml` above `file`, if any (`faber test`, which
/// reads each test file on its own).
pub fn package_above(
    file: &Path,
    sources: &mut SourceMap,
) -> Result<Option<Manifest>, Vec<Diagnostic>> {
    match manifest_above(file) {
        Some(path) => Ok(Some(read_manifest(&path, sources)?.0)),
        None => Ok(None),
    }
}

/// The reader locale of `file` when its frontmatter names none: the `[reader] locale`
/// of the nearest `faber.toml` above it, else Latin (`faber format`).
pub fn package_locale(
    file: &Path,
    sources: &mut SourceMap,
) -> Result<faber::syntax::vocab::Locale, Vec<Diagnostic>> {
    Ok(package_above(file, sources)?
        .map(|m| m.locale)
        .unwrap_or(faber::syntax::vocab::Locale::LA))
}

/// The nearest `faber.toml` in the directory of `file` or any directory above it.
fn manifest_above(file: &Path) -> Option<PathBuf> {
    let dir = match file.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    manifest_in_or_above(dir)
}

/// The nearest `faber.toml` in `dir` or any directory above it, looked up from the
/// directory's real path (as the import loader finds the package root).
fn manifest_in_or_above(dir: &Path) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(dir)
        .or_else(|_| std::path::absolute(dir))
        .ok()?;
    let found = fsguard::package_root(&dir).join(MANIFEST);
    if !found.is_file() {
        return None;
    }
    // Show it relative to the working directory when it lies below it.
    let shown = std::env::current_dir()
        .ok()
        .and_then(|cwd| found.strip_prefix(cwd).ok().map(Path::to_path_buf));
    Some(shown.unwrap_or(found))
}

/// A CLI001 for a path that cannot be read. The path is added to the map as an
/// empty file so the diagnostic has a location to print (no snippet is drawn for
/// an empty file).
fn io_error(sources: &mut SourceMap, path: &Path, e: &ReadError) -> Diagnostic {
    let shown = path.display();
    let message = match e {
        ReadError::NotFound => format!("`{shown}` does not exist"),
        ReadError::PermissionDenied => format!("permission denied reading `{shown}`"),
        _ => format!("cannot read `{shown}`: {e}"),
    };
    placeholder_error(sources, path, message)
}

fn placeholder_error(sources: &mut SourceMap, path: &Path, message: String) -> Diagnostic {
    let file = sources.add(path.display().to_string(), String::new());
    Diagnostic::error(codes::CLI_IO, message, Span::new(file, 0, 0))
}
