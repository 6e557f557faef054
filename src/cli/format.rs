//! `faber format PATH`: canonical layout for a file or every `.fab`/`.proba` file under
//! a directory, and `--locale L` to translate between reader locales (the library's
//! `faber::format`; docs/format.md).
//!
//! Modes: `--write` (the default) rewrites each file that changes, atomically (a
//! temporary file beside it, fsync, rename: src/cli/atomic.rs); `--check` writes
//! nothing and prints a unified diff for each file that is not formatted; `--stdout`
//! prints the formatted text. A file that does not parse (or cannot be translated) is
//! reported and never written. Exit code 1 when any file was reported or, with
//! `--check`, is not formatted; else 0.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use rustc_hash::FxHashSet;

use super::{atomic, load, print_stdout, Context};
use faber::diag::{codes, Diagnostic};
use faber::format::{Members, Options, Resolved};
use faber::source::{FileId, SourceMap, Span};
use faber::syntax::vocab::Locale;

#[derive(Args, Debug)]
pub struct FormatArgs {
    /// A `.fab` file, or a directory (a package): every `.fab` and `.proba` file under it.
    pub path: PathBuf,

    /// Write nothing; print a diff for each file that is not formatted and exit 1 if any.
    #[arg(long, conflicts_with_all = ["write", "stdout"])]
    pub check: bool,

    /// Rewrite the files that change, in place (the default).
    #[arg(long, conflicts_with = "stdout")]
    pub write: bool,

    /// Print the formatted text on stdout instead of writing the files.
    #[arg(long)]
    pub stdout: bool,

    /// Translate into this reader locale (`la`, `en`, `ar`, `hi`, `th-TH`, `vi`,
    /// `zh-Hans`, `zh-Hant`): keywords, type names and built-in methods.
    #[arg(long, value_name = "L")]
    pub locale: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Write,
    Check,
    Stdout,
}

pub fn run(args: &FormatArgs, ctx: &Context) -> ExitCode {
    let mut sources = SourceMap::new();
    let mode = if args.check {
        Mode::Check
    } else if args.stdout {
        Mode::Stdout
    } else {
        Mode::Write
    };
    let target = match &args.locale {
        None => None,
        Some(code) => match Locale::from_code(code) {
            Some(l) => Some(l),
            None => {
                let d = unknown_locale(&mut sources, code);
                return ctx.report(&sources, &[d]);
            }
        },
    };
    if !args.path.exists() {
        let d = load::read_source(&args.path, &mut sources).err();
        return ctx.report(&sources, &d.into_iter().collect::<Vec<_>>());
    }
    let mut files = Vec::new();
    super::test::discover(&args.path, &mut files, &mut FxHashSet::default());
    // Where a file's imports do not load, the genus methods of its whole package and
    // of the libraries stand in for those it can see (see `members_for`).
    let mut package: Option<Members> = None;
    let mut diags: Vec<Diagnostic> = Vec::new();
    let mut unformatted = false;
    let many = files.len() > 1;
    for path in &files {
        let file = match load::read_source(path, &mut sources) {
            Ok(f) => f,
            Err(d) => {
                diags.push(d);
                continue;
            }
        };
        let default = match load::package_locale(path, &mut sources) {
            Ok(l) => l,
            Err(ds) => {
                diags.extend(ds);
                continue;
            }
        };
        let (members, resolved) = match target {
            Some(_) => (
                members_for(path, default, ctx, &mut package, &args.path),
                resolved(&sources, file, default, ctx),
            ),
            None => (Members::new(), Resolved::none()),
        };
        let opts = Options {
            default,
            target,
            members: &members,
            resolved: &resolved,
        };
        let formatted = match faber::format::format(&sources, file, &opts) {
            Ok(t) => t,
            Err(ds) => {
                diags.extend(ds);
                continue;
            }
        };
        let original = sources.text(file);
        let shown = path.display().to_string();
        match mode {
            Mode::Stdout => {
                if many {
                    print_stdout(&format!("==> {shown} <==\n"));
                }
                print_stdout(&formatted);
            }
            Mode::Check => {
                if formatted != original {
                    unformatted = true;
                    print_stdout(&faber::format::diff::unified(&shown, original, &formatted));
                }
            }
            Mode::Write => {
                if formatted != original {
                    match atomic::write_atomic(path, formatted.as_bytes()) {
                        Ok(()) => ctx.status("Formatted", &shown),
                        Err(e) => diags.push(Diagnostic::error(
                            codes::CLI_IO,
                            format!("cannot write `{shown}`: {e}"),
                            Span::new(file, 0, 0),
                        )),
                    }
                }
            }
        }
    }
    let code = ctx.report(&sources, &diags);
    if unformatted {
        ExitCode::FAILURE
    } else {
        code
    }
}

/// What the front end makes of `file`'s method calls, its imports loaded as
/// `faber check` loads them.
fn resolved(sources: &SourceMap, file: FileId, default: Locale, ctx: &Context) -> Resolved {
    let mut loader = super::modules::FsLoader::new(ctx.lib_root.clone());
    loader.package_locale = default;
    Resolved::check(sources, file, default, &mut loader)
}

/// The genus methods `path` can see: those of its own module and of everything it
/// imports; when its imports do not load, those of its whole package and of the
/// bundled libraries (computed once, in `package`).
fn members_for(
    path: &Path,
    default: Locale,
    ctx: &Context,
    package: &mut Option<Members>,
    arg: &Path,
) -> Members {
    let mut scratch = SourceMap::new();
    if let Ok(id) = load::read_source(path, &mut scratch) {
        let mut loader = super::modules::FsLoader::new(ctx.lib_root.clone());
        loader.package_locale = default;
        if let Some(m) = Members::of_program(&mut scratch, id, &mut loader) {
            return m;
        }
    }
    package
        .get_or_insert_with(|| {
            let mut members = Members::bundled();
            let mut files = Vec::new();
            super::test::discover(&package_dir(arg), &mut files, &mut FxHashSet::default());
            for p in &files {
                let mut scratch = SourceMap::new();
                if let Ok(id) = load::read_source(p, &mut scratch) {
                    let locale = load::package_locale(p, &mut scratch).unwrap_or_default();
                    if let Ok(m) = faber::syntax::parse_in(&scratch, id, locale) {
                        members.add(&m);
                    }
                }
            }
            members
        })
        .clone()
}

/// The package a path belongs to: the nearest directory with a `faber.toml` at or
/// above it, else the path's own directory.
fn package_dir(path: &Path) -> PathBuf {
    let dir = super::run::dir_of(path);
    let real = std::fs::canonicalize(&dir).unwrap_or(dir);
    super::fsguard::package_root(&real)
}

/// LEX009, as for a frontmatter locale, pointing at the flag's value.
fn unknown_locale(sources: &mut SourceMap, code: &str) -> Diagnostic {
    let file = sources.add("--locale", code.to_string());
    Diagnostic::error(
        codes::LEX_UNSUPPORTED_LOCALE,
        format!("unknown reader locale `{code}`"),
        Span::new(file, 0, code.len()),
    )
    .with_hint(format!("the known locales are {}", Locale::known_list()))
}
