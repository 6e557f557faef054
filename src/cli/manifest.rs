//! `faber.toml`, the package manifest (docs/cli.md).
//!
//! ```toml
//! [package]
//! name = "hello"
//! version = "0.1.0"
//! edition = "2026"
//!
//! [paths]
//! source = "src"      # default
//! entry = "main.fab"  # default
//!
//! [paths.templates]   # named folders imported as `§name/stem`
//! gnu = "../common/gnu"
//!
//! [reader]            # or [locale]
//! locale = "en"       # the reader locale of the package's files (default "la")
//!
//! [run]
//! precision = "f32"   # f32 or f64: the element type of floating tensors (default
//!                     # f64; `--precision` wins; docs/precision.md)
//! backend = "xla"     # cpu or xla: where `faber run` computes (default cpu;
//!                     # `--backend` wins; docs/xla.md)
//! device = 0          # the PJRT device of the xla backend (default 0; `--device` wins)
//! devices = 2         # under `--backend xla`: the train step data-parallel over
//!                     # this many devices (default 1; `--devices` wins; docs/xla.md)
//!
//! [run.sharding]      # under `--devices N`: tensor parallel (docs/xla.md)
//! "strata.*.w1" = "columns"  # a parameter path (`*`: any one part) → its last
//! "strata.*.w2" = "rows"     # axis (columns) or first axis (rows) split over N
//! ```
//!
//! `[build]`, `[device]`, `[dependencies]` and `[library]` are accepted and ignored, each
//! with a note; other unknown keys are ignored silently. Parsing is pure: the caller
//! reads the file and adds its text to the `SourceMap` so spans in the returned
//! diagnostics point into it.

use serde::Deserialize;
use toml::Spanned;

use faber::diag::{codes, Diagnostic, Severity};
use faber::source::{FileId, Span};
use faber::syntax::vocab::Locale;
use faber::xla::spmd::Sharding;

/// The settings of one package.
#[derive(Clone, Debug, PartialEq)]
pub struct Manifest {
    pub name: String,
    pub version: Option<String>,
    pub edition: Option<String>,
    /// Source directory, relative to the manifest's directory (`[paths] source`).
    pub source: String,
    /// Entry file, relative to the source directory (`[paths] entry`).
    pub entry: String,
    /// Where `[paths] entry` (else `[paths] source`) is written, when it is: the
    /// loader points there when the entry leaves the package (src/cli/load.rs).
    pub paths_span: Option<Span>,
    /// `[reader] locale` (or `[locale] locale`): the reader locale of the package's
    /// files whose frontmatter names none. The frontmatter wins for its file.
    pub locale: Locale,
    /// `[paths.templates]`: folders of shared modules, relative to the manifest's
    /// directory, by name; `importa ex "§name/stem"` reads `<folder>/stem.fab`.
    pub templates: Vec<(String, String)>,
    /// The directory of `faber.toml` (set by the loader, empty from [`parse`]).
    pub dir: std::path::PathBuf,
    /// `[run] precision`: `faber run`/`test`/`grad-check` without `--precision`.
    pub precision: Option<faber::tensor::DType>,
    /// `[run] backend`: `faber run` without `--backend`.
    pub backend: Option<Backend>,
    /// `[run] device`: the PJRT device of `faber run --backend xla` without
    /// `--device`, with where it is written (CLI013 points there when the plugin
    /// has no such device).
    pub device: Option<(usize, Span)>,
    /// `[run] devices`: `faber run --backend xla` without `--devices`.
    pub devices: Option<usize>,
    /// `[run.sharding]`: parameter path patterns and the axis each splits over the
    /// devices (`"rows"` is [`Sharding::Batch`]), in the table's (sorted) order.
    pub sharding: Vec<(String, Sharding)>,
    /// Notes about sections that were read but ignored.
    pub notes: Vec<Diagnostic>,
}

/// Where `faber run` computes: `cpu`, the interpreter, or `xla`, a PJRT device for
/// the functions that lower to StableHLO (docs/xla.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Cpu,
    Xla,
}

impl Backend {
    /// `cpu` or `xla`, as `--backend` and `[run] backend` spell them.
    pub fn from_name(name: &str) -> Option<Backend> {
        match name {
            "cpu" => Some(Backend::Cpu),
            "xla" => Some(Backend::Xla),
            _ => None,
        }
    }
}

impl Manifest {
    /// `name v0.1.0`, for status lines.
    pub fn describe(&self) -> String {
        let mut s = self.name.clone();
        if let Some(v) = &self.version {
            s.push_str(" v");
            s.push_str(v);
        }
        if let Some(e) = &self.edition {
            s.push_str(&format!(" (edition {e})"));
        }
        s
    }
}

#[derive(Deserialize)]
struct Raw {
    package: Option<Spanned<RawPackage>>,
    #[serde(default)]
    paths: RawPaths,
    reader: Option<RawLocale>,
    locale: Option<RawLocale>,
    run: Option<RawRun>,
    build: Option<Spanned<toml::Value>>,
    device: Option<Spanned<toml::Value>>,
    dependencies: Option<Spanned<toml::Value>>,
    library: Option<Spanned<toml::Value>>,
}

#[derive(Deserialize)]
struct RawPackage {
    name: Option<Spanned<String>>,
    version: Option<String>,
    edition: Option<String>,
}

#[derive(Deserialize, Default)]
struct RawPaths {
    source: Option<Spanned<String>>,
    entry: Option<Spanned<String>>,
    #[serde(default)]
    templates: std::collections::BTreeMap<String, Spanned<String>>,
}

#[derive(Deserialize, Default)]
struct RawRun {
    precision: Option<Spanned<String>>,
    backend: Option<Spanned<String>>,
    device: Option<Spanned<i64>>,
    devices: Option<Spanned<i64>>,
    sharding: Option<std::collections::BTreeMap<String, Spanned<String>>>,
}

/// `[run.sharding]`: each value `"columns"` or `"rows"`.
fn run_sharding(
    table: Option<std::collections::BTreeMap<String, Spanned<String>>>,
    span: impl Fn(std::ops::Range<usize>) -> Span,
) -> Result<Vec<(String, Sharding)>, Diagnostic> {
    let mut out = Vec::new();
    for (path, how) in table.unwrap_or_default() {
        let sharding = match how.get_ref().as_str() {
            "columns" => Sharding::Columns,
            "rows" => Sharding::Batch,
            other => return Err(Diagnostic::error(
                codes::CLI_MANIFEST,
                format!("`\"{path}\" = \"{other}\"` in [run.sharding] is not a sharding"),
                span(how.span()),
            )
            .with_hint(
                "\"columns\" splits a parameter's last axis over the devices, \"rows\" its first",
            )),
        };
        out.push((path, sharding));
    }
    Ok(out)
}

/// `[run] devices`: a positive count.
fn run_devices(
    devices: Option<Spanned<i64>>,
    span: impl Fn(std::ops::Range<usize>) -> Span,
) -> Result<Option<usize>, Diagnostic> {
    let Some(d) = devices else {
        return Ok(None);
    };
    match usize::try_from(*d.get_ref()) {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(Diagnostic::error(
            codes::CLI_MANIFEST,
            format!(
                "`devices = {}` in [run] is not a positive count",
                d.get_ref()
            ),
            span(d.span()),
        )
        .with_hint("the number of PJRT devices the train step runs on: 1, 2, …")),
    }
}

#[derive(Deserialize)]
struct RawLocale {
    locale: Option<Spanned<String>>,
}

/// Parses the text of `faber.toml` (already added to the source map as `file`).
/// Any problem is one CLI002 diagnostic pointing into the manifest.
pub fn parse(text: &str, file: FileId) -> Result<Manifest, Diagnostic> {
    let span = |r: std::ops::Range<usize>| Span::new(file, r.start, r.end);
    let raw: Raw = toml::from_str(text).map_err(|e| {
        let at = e.span().unwrap_or(0..0);
        Diagnostic::error(
            codes::CLI_MANIFEST,
            format!("malformed faber.toml: {}", e.message().trim_end()),
            span(at),
        )
    })?;

    let Some(package) = raw.package else {
        return Err(Diagnostic::error(
            codes::CLI_MANIFEST,
            "faber.toml has no [package] table",
            span(0..0),
        )
        .with_hint("start the file with:\n[package]\nname = \"…\"\nversion = \"0.1.0\""));
    };
    let package_span = package.span();
    let package = package.into_inner();
    let Some(name) = package.name else {
        return Err(Diagnostic::error(
            codes::CLI_MANIFEST,
            "[package] has no `name`",
            span(package_span),
        ));
    };
    if name.get_ref().trim().is_empty() {
        return Err(Diagnostic::error(
            codes::CLI_MANIFEST,
            "the package name is empty",
            span(name.span()),
        ));
    }

    let path_setting = |value: Option<Spanned<String>>, key: &str, default: &str| {
        let Some(value) = value else {
            return Ok(default.to_string());
        };
        let text = value.get_ref();
        if text.trim().is_empty() || std::path::Path::new(text).has_root() {
            return Err(Diagnostic::error(
                codes::CLI_MANIFEST,
                format!("[paths] {key} must be a non-empty relative path"),
                span(value.span()),
            ));
        }
        Ok(text.clone())
    };
    let paths_span = raw
        .paths
        .entry
        .as_ref()
        .or(raw.paths.source.as_ref())
        .map(|v| span(v.span()));
    let source = path_setting(raw.paths.source, "source", "src")?;
    let entry = path_setting(raw.paths.entry, "entry", "main.fab")?;

    let mut templates = Vec::new();
    for (name, dir) in raw.paths.templates {
        let named = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
        if !named {
            return Err(Diagnostic::error(
                codes::CLI_MANIFEST,
                format!("[paths.templates] `{name}` is not a name (letters, digits, `_`, `-`)"),
                span(dir.span()),
            ));
        }
        let dir = path_setting(Some(dir), &format!("templates.{name}"), "")?;
        templates.push((name, dir));
    }

    let mut locale = Locale::LA;
    for (table, settings) in [("reader", &raw.reader), ("locale", &raw.locale)] {
        if let Some(code) = settings.as_ref().and_then(|s| s.locale.as_ref()) {
            match Locale::from_code(code.get_ref()) {
                Some(l) => locale = l,
                None => {
                    return Err(Diagnostic::error(
                        codes::CLI_MANIFEST,
                        format!("unknown reader locale `{}` in [{table}]", code.get_ref()),
                        span(code.span()),
                    )
                    .with_hint(format!("the known locales are {}", Locale::known_list())));
                }
            }
        }
    }

    let run = raw.run.unwrap_or_default();
    let devices = run_devices(run.devices, span)?;
    let sharding = run_sharding(run.sharding, span)?;
    let (run_precision, run_backend, run_device) = (run.precision, run.backend, run.device);
    let backend = match run_backend {
        None => None,
        Some(b) => match Backend::from_name(b.get_ref()) {
            Some(b) => Some(b),
            None => {
                return Err(Diagnostic::error(
                    codes::CLI_MANIFEST,
                    format!("unknown backend `{}` in [run]", b.get_ref()),
                    span(b.span()),
                )
                .with_hint("the backends are \"cpu\" and \"xla\""));
            }
        },
    };
    let device = match run_device {
        None => None,
        Some(d) => match usize::try_from(*d.get_ref()) {
            Ok(n) => Some((n, span(d.span()))),
            Err(_) => {
                return Err(Diagnostic::error(
                    codes::CLI_MANIFEST,
                    format!(
                        "[run] device must be a device number (0, 1, …), not {}",
                        d.get_ref()
                    ),
                    span(d.span()),
                )
                .with_hint("`faber devices` lists the devices and their numbers"));
            }
        },
    };
    let precision = match run_precision {
        None => None,
        Some(p) => match faber::tensor::DType::from_name(p.get_ref()) {
            Some(d) => Some(d),
            None => {
                return Err(Diagnostic::error(
                    codes::CLI_MANIFEST,
                    format!("unknown precision `{}` in [run]", p.get_ref()),
                    span(p.span()),
                )
                .with_hint("the precisions are \"f32\" and \"f64\""));
            }
        },
    };

    let mut notes = Vec::new();
    for (table, value) in [
        ("build", &raw.build),
        ("device", &raw.device),
        ("dependencies", &raw.dependencies),
        ("library", &raw.library),
    ] {
        if let Some(value) = value {
            notes.push(Diagnostic {
                severity: Severity::Note,
                ..Diagnostic::error(
                    codes::CLI_MANIFEST,
                    format!("[{table}] in faber.toml is ignored"),
                    span(value.span()),
                )
            });
        }
    }

    Ok(Manifest {
        name: name.into_inner(),
        version: package.version,
        edition: package.edition,
        source,
        entry,
        paths_span,
        locale,
        templates,
        dir: std::path::PathBuf::new(),
        precision,
        backend,
        device,
        devices,
        sharding,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(text: &str) -> Manifest {
        match parse(text, FileId(0)) {
            Ok(m) => m,
            Err(d) => panic!("unexpected diagnostic: {d:?}"),
        }
    }

    fn err(text: &str) -> Diagnostic {
        match parse(text, FileId(0)) {
            Ok(m) => panic!("expected an error, got {m:?}"),
            Err(d) => d,
        }
    }

    #[test]
    fn defaults() {
        let m = ok("[package]\nname = \"hello\"\n");
        assert_eq!(m.name, "hello");
        assert_eq!(m.version, None);
        assert_eq!(m.source, "src");
        assert_eq!(m.entry, "main.fab");
        assert!(m.notes.is_empty());
        assert_eq!(m.describe(), "hello");
    }

    #[test]
    fn full() {
        let m = ok(concat!(
            "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2026\"\n",
            "description = \"extra keys are fine\"\n",
            "[paths]\nsource = \"lib\"\nentry = \"start.fab\"\n",
            "[reader]\nlocale = \"la\"\n",
        ));
        assert_eq!(m.version.as_deref(), Some("0.1.0"));
        assert_eq!(m.edition.as_deref(), Some("2026"));
        assert_eq!((m.source.as_str(), m.entry.as_str()), ("lib", "start.fab"));
        assert_eq!(m.describe(), "p v0.1.0 (edition 2026)");
    }

    #[test]
    fn template_folders() {
        let m = ok("[package]\nname = \"p\"\n[paths.templates]\ngnu = \"../common/gnu\"\n");
        assert_eq!(m.templates, vec![("gnu".into(), "../common/gnu".into())]);
        let d = err("[package]\nname = \"p\"\n[paths.templates]\ngnu = \"\"\n");
        assert!(d.message.contains("templates.gnu"), "{}", d.message);
        let d = err("[package]\nname = \"p\"\n[paths.templates]\n\"a/b\" = \"x\"\n");
        assert!(d.message.contains("is not a name"), "{}", d.message);
    }

    #[test]
    fn ignored_sections_give_notes() {
        let text = "[package]\nname = \"p\"\n[build]\nkind = \"lib\"\n[dependencies]\nx = \"1\"\n";
        let m = ok(text);
        assert_eq!(m.notes.len(), 2);
        assert!(m.notes.iter().all(|n| n.severity == Severity::Note));
        assert!(m.notes[0].message.contains("[build]"));
        assert!(m.notes[1].message.contains("[dependencies]"));
    }

    #[test]
    fn bad_toml_points_into_the_file() {
        let text = "[package]\nname = \"p\nversion = 1\n";
        let d = err(text);
        assert_eq!(d.code.id, "CLI002");
        assert!(
            d.message.starts_with("malformed faber.toml"),
            "{}",
            d.message
        );
        assert!(d.span.lo >= 10, "{:?}", d.span);
        assert!(d.span.hi as usize <= text.len());
    }

    #[test]
    fn wrong_type_points_at_the_value() {
        let text = "[package]\nname = 3\n";
        let d = err(text);
        assert_eq!(d.code.id, "CLI002");
        assert_eq!(&text[d.span.range()], "3");
    }

    #[test]
    fn missing_package_or_name() {
        assert!(err("[paths]\nsource = \"src\"\n")
            .message
            .contains("[package]"));
        assert!(err("[package]\nversion = \"1\"\n").message.contains("name"));
        assert!(err("[package]\nname = \" \"\n").message.contains("empty"));
    }

    #[test]
    fn locale_is_a_known_reader_locale() {
        let text = "[package]\nname = \"p\"\n[locale]\nlocale = \"xx\"\n";
        let d = err(text);
        assert!(d.message.contains("`xx`"));
        assert!(
            d.hint.as_deref().is_some_and(|h| h.contains("`zh-Hant`")),
            "{:?}",
            d.hint
        );
        assert_eq!(&text[d.span.range()], "\"xx\"");
        let text = "[package]\nname = \"p\"\n[reader]\nlocale = \"EN\"\n";
        assert!(err(text).message.contains("[reader]"));
        let en = ok("[package]\nname = \"p\"\n[reader]\nlocale = \"en\"\n");
        assert_eq!(en.locale.code(), "en");
        let th = ok("[package]\nname = \"p\"\n[locale]\nlocale = \"th-TH\"\n");
        assert_eq!(th.locale.code(), "th-TH");
        assert_eq!(ok("[package]\nname = \"p\"\n").locale.code(), "la");
    }

    #[test]
    fn paths_must_be_relative() {
        let d = err("[package]\nname = \"p\"\n[paths]\nsource = \"/etc\"\n");
        assert!(d.message.contains("source"));
        let d = err("[package]\nname = \"p\"\n[paths]\nentry = \"\"\n");
        assert!(d.message.contains("entry"));
    }

    #[test]
    fn run_devices() {
        assert_eq!(ok("[package]\nname = \"p\"\n").devices, None);
        let m = ok("[package]\nname = \"p\"\n[run]\ndevices = 4\n");
        assert_eq!(m.devices, Some(4));
        for bad in ["0", "-2"] {
            let text = format!("[package]\nname = \"p\"\n[run]\ndevices = {bad}\n");
            assert!(parse(&text, FileId(0)).is_err(), "devices = {bad}");
        }
    }

    #[test]
    fn run_sharding() {
        assert!(ok("[package]\nname = \"p\"\n").sharding.is_empty());
        let m = ok(
            "[package]\nname = \"p\"\n[run.sharding]\n\"strata.*.w1\" = \"columns\"\n\
                    \"strata.*.w2\" = \"rows\"\n",
        );
        assert_eq!(
            m.sharding,
            vec![
                ("strata.*.w1".to_string(), Sharding::Columns),
                ("strata.*.w2".to_string(), Sharding::Batch)
            ]
        );
        let text = "[package]\nname = \"p\"\n[run.sharding]\nw = \"diagonal\"\n";
        assert!(parse(text, FileId(0)).is_err());
    }

    #[test]
    fn run_precision() {
        use faber::tensor::DType;
        assert_eq!(ok("[package]\nname = \"p\"\n").precision, None);
        let m = ok("[package]\nname = \"p\"\n[run]\nprecision = \"f32\"\n");
        assert_eq!(m.precision, Some(DType::F32));
        let m = ok("[package]\nname = \"p\"\n[run]\nprecision = \"f64\"\n");
        assert_eq!(m.precision, Some(DType::F64));
        let text = "[package]\nname = \"p\"\n[run]\nprecision = \"f16\"\n";
        let d = err(text);
        assert!(d.message.contains("`f16`"), "{}", d.message);
        assert_eq!(&text[d.span.range()], "\"f16\"");
    }

    #[test]
    fn run_backend_and_device() {
        let m = ok("[package]\nname = \"p\"\n");
        assert_eq!((m.backend, m.device), (None, None));
        let text = "[package]\nname = \"p\"\n[run]\nbackend = \"xla\"\ndevice = 2\n";
        let m = ok(text);
        assert_eq!(m.backend, Some(Backend::Xla));
        let (n, at) = m.device.unwrap();
        assert_eq!((n, &text[at.range()]), (2, "2"));
        let m = ok("[package]\nname = \"p\"\n[run]\nbackend = \"cpu\"\n");
        assert_eq!(m.backend, Some(Backend::Cpu));
        let text = "[package]\nname = \"p\"\n[run]\nbackend = \"tpu\"\n";
        let d = err(text);
        assert_eq!(d.code.id, "CLI002");
        assert!(d.message.contains("unknown backend `tpu`"), "{}", d.message);
        assert_eq!(&text[d.span.range()], "\"tpu\"");
        assert!(d.hint.as_deref().is_some_and(|h| h.contains("\"xla\"")));
        let text = "[package]\nname = \"p\"\n[run]\ndevice = -1\n";
        let d = err(text);
        assert_eq!(d.code.id, "CLI002");
        assert!(d.message.contains("device number"), "{}", d.message);
        assert_eq!(&text[d.span.range()], "-1");
        let text = "[package]\nname = \"p\"\n[run]\ndevice = \"gpu\"\n";
        let d = err(text);
        assert_eq!(d.code.id, "CLI002");
        assert_eq!(&text[d.span.range()], "\"gpu\"");
    }
}
