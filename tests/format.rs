//! `faber format` (docs/format.md), through the library and the built binary:
//!
//! * every `.fab`/`.proba` file of the repository that parses is formatted to a text
//!   that formats to itself and parses to the same syntax tree; every file that does
//!   not parse is refused;
//! * every such file translated into each reader locale formats to itself there, and
//!   translated back into Latin gives the formatted file again; only a built-in method
//!   that Latin spells two ways (faber's own `neg` and the table's `negativa`) may come
//!   back in the other spelling (counted, and never anything else);
//! * every program of tests/run, translated into each locale (with the modules it
//!   imports), prints its `.out` and exits with its code (in-process);
//! * the CLI: `--check` exit codes and diff, the default rewrite, `--stdout`, a file
//!   that does not parse left untouched, an unknown locale (LEX009), a name that is a
//!   keyword of the target (CLI004), a package translated and back;
//! * examples/gpt-shakespeare-en is `faber format --locale en` of
//!   examples/gpt-shakespeare, and both print the same for a few steps.

mod common;

use std::path::{Path, PathBuf};

use common::{Faber, ROOT};
use faber::diag::Diagnostic;
use faber::format::{Members, Options};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;
use faber::syntax::vocab::Locale;

// ---------------------------------------------------------------- helpers

/// Every `.fab` and `.proba` file under the repository's source folders, relative to
/// the root, sorted.
fn repository_files() -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') || name == "target" || p.is_symlink() {
                continue;
            }
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "fab" || x == "proba") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for dir in ["tests", "examples", "stdlib", "gradus-fab", "benches"] {
        walk(&Path::new(ROOT).join(dir), &mut out);
    }
    let mut rel: Vec<String> = out
        .iter()
        .map(|p| p.strip_prefix(ROOT).unwrap().to_string_lossy().into_owned())
        .collect();
    rel.sort();
    rel
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).unwrap()
}

/// The `[reader] locale` of the nearest faber.toml above a file, else Latin.
fn default_locale(rel: &str) -> Locale {
    let mut dir = Path::new(ROOT).join(rel);
    while dir.pop() {
        let manifest = dir.join("faber.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest) {
            // A deliberately broken manifest (a CLI002 fixture) reads as Latin.
            let Ok(table) = text.parse::<toml::Table>() else {
                return Locale::LA;
            };
            let code = table
                .get("reader")
                .and_then(|r| r.get("locale"))
                .and_then(|l| l.as_str());
            return code.map_or(Locale::LA, |c| Locale::from_code(c).unwrap());
        }
        if dir == Path::new(ROOT) {
            break;
        }
    }
    Locale::LA
}

fn locale(code: &str) -> Locale {
    Locale::from_code(code).unwrap()
}

fn all_locales() -> Vec<Locale> {
    Locale::all().collect()
}

/// A loader over the bundled libraries and the given repository files (by their
/// path relative to the root), as the CLI's loader finds them on disk.
fn loader(files: &[(String, String)]) -> MemoryLoader {
    let mut map: rustc_hash::FxHashMap<String, String> = faber::libraries::BUNDLED
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for (n, t) in files {
        map.insert(n.clone(), t.clone());
    }
    MemoryLoader { files: map }
}

/// The genus methods `rel` can see (its import closure), as the CLI computes them.
fn members(rel: &str, text: &str, repo: &mut MemoryLoader) -> Members {
    let mut sources = SourceMap::new();
    let id = sources.add(rel, text);
    Members::of_program(&mut sources, id, repo).unwrap_or_else(|| {
        let mut m = Members::bundled();
        if let Ok(module) = faber::syntax::parse(&sources, id) {
            m.add(&module);
        }
        m
    })
}

fn fmt(
    name: &str,
    text: &str,
    default: Locale,
    target: Option<Locale>,
    members: &Members,
) -> Result<String, Vec<Diagnostic>> {
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    faber::format::format(
        &sources,
        id,
        &Options {
            default,
            target,
            members,
        },
    )
}

/// The syntax tree's dump (no spans), or `None` when the text does not parse.
fn tree(text: &str, default: Locale) -> Option<String> {
    let mut sources = SourceMap::new();
    let id = sources.add("x.fab", text);
    faber::syntax::parse_in(&sources, id, default)
        .ok()
        .map(|m| faber::syntax::dump_ast(&m))
}

/// The reader locale a text is read in, when it parses.
fn tree_locale(text: &str, default: Locale) -> Option<Locale> {
    let mut sources = SourceMap::new();
    let id = sources.add("x.fab", text);
    faber::syntax::parse_in(&sources, id, default)
        .ok()
        .map(|m| m.locale)
}

fn codes_of(ds: &[Diagnostic]) -> Vec<&'static str> {
    ds.iter().map(|d| d.code.id).collect()
}

// ---------------------------------------------------------------- layout

#[test]
fn formatting_is_idempotent_and_keeps_the_tree_over_the_repository() {
    let none = Members::new();
    let (mut formatted, mut refused, mut failures) = (0, 0, Vec::new());
    for rel in repository_files() {
        let text = read(&rel);
        let default = default_locale(&rel);
        let result = fmt(&rel, &text, default, None, &none);
        let Some(want) = tree(&text, default) else {
            // A file that does not parse is refused, with its diagnostics.
            match result {
                Err(ds) if !ds.is_empty() => refused += 1,
                _ => failures.push(format!("{rel}: does not parse, but was formatted")),
            }
            continue;
        };
        let once = match result {
            Ok(t) => t,
            Err(ds) => {
                failures.push(format!("{rel}: refused: {:?}", codes_of(&ds)));
                continue;
            }
        };
        formatted += 1;
        if tree(&once, default).as_deref() != Some(want.as_str()) {
            failures.push(format!("{rel}: the formatted text has another syntax tree"));
        }
        match fmt(&rel, &once, default, None, &none) {
            Ok(twice) if twice == once => {}
            Ok(twice) => failures.push(format!(
                "{rel}: not idempotent:\n{}",
                faber::format::diff::unified(&rel, &once, &twice)
            )),
            Err(ds) => failures.push(format!(
                "{rel}: formatted text refused: {:?}",
                codes_of(&ds)
            )),
        }
        if !once.ends_with('\n')
            || once.contains("\n\n\n")
            || once.lines().any(|l| l.ends_with(' '))
        {
            // Trailing spaces may remain only inside block texts, which no file has.
            failures.push(format!(
                "{rel}: blank lines, trailing spaces or final newline"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(formatted >= 400, "only {formatted} files formatted");
    assert!(refused >= 40, "only {refused} non-parsing files seen");
}

#[test]
fn layout_rules() {
    let none = Members::new();
    let f = |t: &str| fmt("x.fab", t, Locale::LA, None, &none).unwrap();
    // Indentation from the brackets that end their lines, spacing, blank lines,
    // comments re-indented, one final newline.
    let src = "\n\n# caput\nfunctio f( numerus x )→numerus{\n\n\n      # intus\nredde x*2+f(x-1 ,2)   \n}\nincipit{\nfixum lista<numerus> l←[1,-2,\n3]\n\tnota l[0],-l[1]\n}\n\n\n";
    let want = "# caput\nfunctio f(numerus x) → numerus {\n\n    # intus\n    redde x * 2 + f(x - 1, 2)\n}\nincipit {\n    fixum lista<numerus> l ← [1, -2,\n        3]\n    nota l[0], -l[1]\n}\n";
    assert_eq!(f(src), want);
    assert_eq!(f(want), want);
    // A statement continued after `,` or an operator is indented one more level; the
    // items of a bracket that ends its line are not; `ad 'route' (x)` keeps its space.
    let src = "incipit {\nadfirma 1 < 2,\n\"nuntius\"\nfixum numerus n ← 1 +\n2\nfixum lista<numerus> l ← [\n1,\n2\n]\nfixum _ h ← ad 'cuda:launch'(n)\n}\n";
    let want = "incipit {\n    adfirma 1 < 2,\n        \"nuntius\"\n    fixum numerus n ← 1 +\n        2\n    fixum lista<numerus> l ← [\n        1,\n        2\n    ]\n    fixum _ h ← ad 'cuda:launch' (n)\n}\n";
    assert_eq!(f(src), want);
    // Block text, frontmatter, annotations and glyph/keyword alternatives are kept
    // byte for byte.
    let src = "+++\n# nota bene\nlocale = \"la\"\n+++\n@ radix backward   \"g\"\nfunctio h(f64 x) → f64 {\n    redde x·x\n}\nincipit {\n    nota «linea una\n   linea  duae  »\n    itera ab 0 usque 2 fixum i { nota i }\n    itera ab 0…2 fixum i { nota i }\n}\n";
    let out = f(src);
    assert!(
        out.starts_with("+++\n# nota bene\nlocale = \"la\"\n+++\n@ radix backward   \"g\"\n"),
        "{out}"
    );
    assert!(out.contains("«linea una\n   linea  duae  »"), "{out}");
    assert!(out.contains("redde x · x"), "{out}");
    assert!(
        out.contains("ab 0 usque 2") && out.contains("ab 0 … 2"),
        "{out}"
    );
}

// ---------------------------------------------------------------- translation

#[test]
fn translation_round_trips_through_every_locale() {
    let files = repository_files();
    let texts: Vec<(String, String)> = files.iter().map(|r| (r.clone(), read(r))).collect();
    let mut repo = loader(&texts);
    let none = Members::new();
    let (mut translated, mut exact, mut refusals, mut failures) = (0, 0, Vec::new(), Vec::new());
    for (rel, text) in &texts {
        let default = default_locale(rel);
        if tree(text, default).is_none() {
            continue;
        }
        let x0 = fmt(rel, text, default, None, &none).unwrap();
        let members = members(rel, text, &mut repo);
        // In Latin: the same tokens (the frontmatter may lose a `locale = "la"`).
        let normal = match fmt(rel, &x0, default, Some(Locale::LA), &members) {
            Ok(n) => n,
            Err(ds) => {
                refusals.push(format!("{rel} → la: {:?}", codes_of(&ds)));
                continue;
            }
        };
        let latin = tree_locale(text, default) == Some(Locale::LA);
        if latin {
            if let Err(why) = same_tokens(&x0, &normal, false) {
                failures.push(format!("{rel}: into Latin: {why}"));
            }
        }
        let mut all_exact = true;
        for l in all_locales() {
            let there = match fmt(rel, &x0, default, Some(l), &members) {
                Ok(t) => t,
                Err(ds) => {
                    if ds.iter().any(|d| d.code.id != "CLI004") {
                        failures.push(format!("{rel} → {}: {:?}", l.code(), codes_of(&ds)));
                    }
                    refusals.push(format!("{rel} → {}", l.code()));
                    continue;
                }
            };
            translated += 1;
            // Formatted in its locale; back in Latin it is the normal form.
            if fmt(rel, &there, default, None, &none).as_deref() != Ok(there.as_str()) {
                failures.push(format!("{rel} → {}: not formatted there", l.code()));
            }
            match fmt(rel, &there, default, Some(Locale::LA), &members) {
                Ok(back) if back == normal => {}
                Ok(back) => {
                    all_exact = false;
                    if let Err(why) = same_tokens(&normal, &back, true) {
                        failures.push(format!(
                            "{rel} → {} → la: {why}\n{}",
                            l.code(),
                            faber::format::diff::unified(rel, &normal, &back)
                        ));
                    }
                }
                Err(ds) => failures.push(format!("{rel} → {} → la: {:?}", l.code(), codes_of(&ds))),
            }
        }
        if all_exact {
            exact += 1;
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "{translated} translations; {exact} files come back from every locale exactly; {} refusals (CLI004):\n{}",
        refusals.len(),
        refusals.join("\n")
    );
    assert!(translated >= 8 * 400, "only {translated} translations");
    assert!(
        refusals.len() * 50 < translated,
        "{} refusals",
        refusals.len()
    );
}

/// `a` and `b` lex to the same tokens, but (with `methods`) for identifiers right
/// after a `.`.
fn same_tokens(a: &str, b: &str, methods: bool) -> Result<(), String> {
    let ta = faber::syntax::lexer::lex(faber::source::FileId(0), a).tokens;
    let tb = faber::syntax::lexer::lex(faber::source::FileId(0), b).tokens;
    if ta.len() != tb.len() {
        return Err("token counts differ".into());
    }
    for (i, (x, y)) in ta.iter().zip(&tb).enumerate() {
        if x.1 == y.1 {
            continue;
        }
        let after_period = i > 0 && ta[i - 1].1 == faber::syntax::token::Tok::Period;
        let both_names = matches!(
            (&x.1, &y.1),
            (
                faber::syntax::token::Tok::Ident(_),
                faber::syntax::token::Tok::Ident(_)
            )
        );
        if !(methods && after_period && both_names) {
            return Err(format!("{:?} became {:?}", x.1, y.1));
        }
    }
    Ok(())
}

#[test]
fn a_non_latin_file_round_trips_exactly() {
    let text = read("tests/locales/twin.en.fab");
    let m = Members::new();
    let x0 = fmt("t.fab", &text, Locale::LA, None, &m).unwrap();
    for l in all_locales().into_iter().filter(|l| *l != Locale::LA) {
        let there = fmt("t.fab", &x0, Locale::LA, Some(l), &m).unwrap();
        let back = fmt("t.fab", &there, Locale::LA, Some(locale("en")), &m).unwrap();
        assert_eq!(back, x0, "en → {} → en", l.code());
    }
    // Latin needs no frontmatter; English gets it back.
    let la = fmt("t.fab", &x0, Locale::LA, Some(Locale::LA), &m).unwrap();
    assert!(!la.starts_with("+++"), "{la}");
    assert!(fmt("t.fab", &la, Locale::LA, Some(locale("en")), &m)
        .unwrap()
        .starts_with("+++\nlocale = \"en\"\n+++\n"));
}

/// Program output, captured.
#[derive(Default)]
struct Captured(String);

impl faber::eval::Io for Captured {
    fn stdout(&mut self, s: &str) {
        self.0.push_str(s);
    }
    fn stderr(&mut self, _: &str) {}
}

/// Compiles and runs `main` (named `tests/run/<name>`) with `modules` beside it: the
/// exit code and stdout, or `None` when it does not compile.
fn run_in_process(name: &str, main: &str, modules: &[(String, String)]) -> Option<(i64, String)> {
    let mut sources = SourceMap::new();
    let id = sources.add(name, main);
    let mut l = loader(modules);
    let program = faber::compile(&mut sources, id, &mut l).ok()?;
    let mut io = Captured::default();
    // A run-time error exits 1, as `faber run` does.
    let config = faber::eval::RunConfig::default();
    let code = faber::eval::run_entry(&program, &mut io, &config).unwrap_or(1);
    Some((code, io.0))
}

#[test]
fn translated_programs_print_what_the_originals_print() {
    let dir = Path::new(ROOT).join("tests/run");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fab"))
        .filter(|p| !p.with_extension("args").exists() && !p.with_extension("in").exists())
        .collect();
    programs.sort();
    // The modules the programs import (tests/run/lib), by their canonical names.
    let libs: Vec<(String, String)> = std::fs::read_dir(dir.join("lib"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "fab"))
                .map(|p| {
                    let rel = p.strip_prefix(ROOT).unwrap().to_string_lossy().into_owned();
                    (rel.clone(), read(&rel))
                })
                .collect()
        })
        .unwrap_or_default();
    let mut repo = loader(&libs);
    // The imported modules in each locale, translated once.
    let translated_libs: Vec<Vec<(String, String)>> = all_locales()
        .into_iter()
        .map(|l| {
            libs.iter()
                .map(|(n, t)| {
                    let m = members(n, t, &mut repo);
                    let x = fmt(n, t, Locale::LA, Some(l), &m).unwrap_or_else(|_| t.clone());
                    (n.clone(), x)
                })
                .collect()
        })
        .collect();
    let (mut checked, mut skipped, mut failures) = (vec![0usize; 8], 0, Vec::new());
    for p in &programs {
        let rel = p.strip_prefix(ROOT).unwrap().to_string_lossy().into_owned();
        let text = read(&rel);
        let want = std::fs::read_to_string(p.with_extension("out")).unwrap();
        let code: i64 = std::fs::read_to_string(p.with_extension("code"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0);
        // Programs that need the file system or the CLI do not run in-process.
        if run_in_process(&rel, &text, &libs) != Some((code, want.clone())) {
            skipped += 1;
            continue;
        }
        let members = members(&rel, &text, &mut repo);
        for (k, l) in all_locales().into_iter().enumerate() {
            let Ok(main) = fmt(&rel, &text, Locale::LA, Some(l), &members) else {
                continue;
            };
            match run_in_process(&rel, &main, &translated_libs[k]) {
                Some((c, out)) if c == code && out == want => checked[k] += 1,
                other => failures.push(format!(
                    "{rel} in {}: {:?}\n--- program\n{main}",
                    l.code(),
                    other.map(|(c, o)| format!("exit {c}\n{o}"))
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!("ran per locale: {checked:?}; {skipped} programs need the CLI");
    for (k, n) in checked.iter().enumerate() {
        assert!(*n >= 120, "locale {k}: only {n} programs ran");
    }
}

// ---------------------------------------------------------------- the CLI

fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("format-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn run(args: &[&str]) -> (i32, String, String) {
    let o = Faber::new().args(args).output();
    (
        o.status.code().unwrap_or(-1),
        common::text(&o.stdout),
        common::text(&o.stderr),
    )
}

const MESSY: &str = "incipit {\n  fixum numerus x←1+2\n\n\n  nota x   \n}\n";
const TIDY: &str = "incipit {\n    fixum numerus x ← 1 + 2\n\n    nota x\n}\n";

#[test]
fn check_reports_a_diff_and_exit_code() {
    let dir = scratch("check");
    let f = dir.join("a.fab");
    std::fs::write(&f, MESSY).unwrap();
    let (code, out, _) = run(&["format", "--check", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.contains("\n-  fixum numerus x←1+2\n")
            && out.contains("\n+    fixum numerus x ← 1 + 2\n"),
        "{out}"
    );
    assert!(out.contains("\n-  nota x   \n+    nota x\n"), "{out}");
    assert!(out.starts_with(&format!("--- {}\n", f.display())), "{out}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), MESSY, "--check wrote");
    std::fs::write(&f, TIDY).unwrap();
    let (code, out, err) = run(&["format", "--check", f.to_str().unwrap()]);
    assert_eq!((code, out.as_str(), err.as_str()), (0, "", ""));
}

#[test]
fn the_default_rewrites_atomically_and_stdout_prints() {
    let dir = scratch("write");
    let f = dir.join("a.fab");
    std::fs::write(&f, MESSY).unwrap();
    let (code, out, _) = run(&["format", "--stdout", f.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (0, TIDY));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), MESSY);
    let (code, _, _) = run(&["format", f.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read_to_string(&f).unwrap(), TIDY);
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".faber-tmp-"))
        .collect();
    assert!(leftovers.is_empty());
}

#[test]
fn a_file_that_does_not_parse_is_never_written() {
    let dir = scratch("broken");
    let f = dir.join("a.fab");
    let broken = "incipit {\n  nota 1 ==  2\n}\n";
    std::fs::write(&f, broken).unwrap();
    let before = std::fs::metadata(&f).unwrap().modified().unwrap();
    for mode in ["--write", "--check", "--stdout"] {
        let (code, out, err) = run(&["format", mode, f.to_str().unwrap()]);
        assert_eq!(code, 1, "{mode}");
        assert!(err.contains("LEX006"), "{mode}: {err}");
        assert_eq!(out, "", "{mode}");
    }
    assert_eq!(std::fs::read_to_string(&f).unwrap(), broken);
    assert_eq!(std::fs::metadata(&f).unwrap().modified().unwrap(), before);
}

#[test]
fn an_unknown_locale_names_the_known_ones() {
    let dir = scratch("locale");
    let f = dir.join("a.fab");
    std::fs::write(&f, TIDY).unwrap();
    let (code, _, err) = run(&["format", "--locale", "fr", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("LEX009") && err.contains("`fr`"), "{err}");
    assert!(err.contains(&Locale::known_list()), "{err}");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), TIDY);
}

#[test]
fn a_name_that_the_target_reserves_stops_the_translation() {
    let dir = scratch("collision");
    let f = dir.join("a.fab");
    // `step` is `per` in English: the program would not parse there.
    let src = "incipit {\n    fixum numerus step ← 2\n    nota step\n}\n";
    std::fs::write(&f, src).unwrap();
    let (code, out, err) = run(&["format", "--locale", "en", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("CLI004") && err.contains("`step`") && err.contains("`en`"),
        "{err}"
    );
    assert_eq!(out, "");
    assert_eq!(std::fs::read_to_string(&f).unwrap(), src);
    // Into Vietnamese, where `step` is an ordinary name, it translates.
    let (code, out, err) = run(&["format", "--stdout", "--locale", "vi", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("+++\nlocale = \"vi\"\n+++\n") && out.contains(" step "),
        "{out}"
    );
}

#[test]
fn a_package_translates_and_back() {
    let dir = scratch("package");
    std::fs::write(
        dir.join("faber.toml"),
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let main = "importa ex \"./util\" privata util\n\nincipit {\n    fixum lista<numerus> l ← [3, 1, 2]\n    nota util.dupla(l.longitudo()), l.primus()\n}\n";
    let util = "functio dupla(numerus x) → numerus {\n    redde x * 2\n}\n";
    std::fs::write(dir.join("src/main.fab"), main).unwrap();
    std::fs::write(dir.join("src/util.fab"), util).unwrap();
    let d = dir.to_str().unwrap();
    let (_, want, _) = run(&["run", d]);
    assert_eq!(want, "6, 3\n");
    for code in ["zh-Hans", "ar", "en"] {
        let (c, _, err) = run(&["format", "--locale", code, d]);
        assert_eq!(c, 0, "{err}");
        let text = std::fs::read_to_string(dir.join("src/main.fab")).unwrap();
        assert!(
            text.starts_with(&format!("+++\nlocale = \"{code}\"\n+++\n")),
            "{text}"
        );
        assert!(!text.contains("incipit"), "{text}");
        assert_eq!(run(&["run", d]).1, want, "{code}");
    }
    let (c, _, err) = run(&["format", "--locale", "la", d]);
    assert_eq!(c, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("src/main.fab")).unwrap(),
        main
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("src/util.fab")).unwrap(),
        util
    );
}

// ---------------------------------------------------------------- the English example

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

#[test]
fn the_english_gpt_example_is_in_sync_and_runs_identically() {
    let latin = Path::new(ROOT).join("examples/gpt-shakespeare");
    let english = Path::new(ROOT).join("examples/gpt-shakespeare-en");
    // Regenerate: the Latin sources translated with `faber format --locale en`.
    let dir = scratch("gpt-en");
    std::fs::copy(latin.join("faber.toml"), dir.join("faber.toml")).unwrap();
    copy_dir(&latin.join("src"), &dir.join("src"));
    let (code, _, err) = run(&["format", "--locale", "en", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let mut names: Vec<_> = std::fs::read_dir(dir.join("src"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    names.sort();
    let shipped: Vec<_> = {
        let mut v: Vec<_> = std::fs::read_dir(english.join("src"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names, shipped, "the same files");
    for n in &names {
        let want = std::fs::read_to_string(dir.join("src").join(n)).unwrap();
        let have = std::fs::read_to_string(english.join("src").join(n)).unwrap();
        assert!(
            want == have,
            "examples/gpt-shakespeare-en/src/{} is out of sync; regenerate it with `faber format --locale en`:\n{}",
            n.to_string_lossy(),
            faber::format::diff::unified("checked in", &have, &want)
        );
        assert!(have.starts_with("+++\nlocale = \"en\"\n+++\n"));
    }
    // Both run a few steps to the same losses and sample.
    let strip = |s: &str| -> String {
        s.lines()
            .map(|l| match l.find("tokens/s") {
                Some(i) => &l[..i],
                None => l,
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let flags = [
        "--tiny",
        "--steps",
        "2",
        "--eval-interval",
        "1",
        "--sample",
        "20",
        "--out",
    ];
    let mut outs = Vec::new();
    for (pkg, tag) in [(&latin, "la"), (&english, "en")] {
        let out = dir.join(format!("out-{tag}"));
        let mut args = vec!["run", pkg.to_str().unwrap(), "--"];
        args.extend(flags);
        args.push(out.to_str().unwrap());
        let (code, stdout, err) = run(&args);
        assert_eq!(code, 0, "{tag}: {err}");
        assert!(stdout.contains("step 2"), "{tag}: {stdout}");
        outs.push(strip(&stdout));
    }
    assert_eq!(outs[0], outs[1]);
}
