//! `faber format` (docs/format.md), through the library and the built binary:
//!
//! * every `.fab`/`.proba` file of the repository that parses is formatted to a text
//!   that formats to itself and parses to the same syntax tree; every file that does
//!   not parse is refused;
//! * every such file translated into each reader locale formats to itself there, and
//!   translated back into Latin gives the formatted file again; only a built-in method
//!   that Latin spells two ways (faber's own `neg` and the table's `negativa`) may come
//!   back in the other spelling (never anything else, and never in a test program);
//! * every program of tests/run checks (its method calls are translated by what the
//!   front end resolved them to), translates into every locale (no refusal), comes
//!   back exactly, and there prints its `.out` and exits with its code (in-process, or
//!   with the binary and its `.args` and `.in`);
//! * a built-in on a receiver whose type is only inferred (`radix` on a number, `sqrt`
//!   on a tensor) comes back as written, which the tokens alone cannot do; a genus
//!   method that is also a built-in's name is kept, and refused where the file does
//!   not check;
//! * the CLI: `--check` exit codes and diff, the default rewrite, `--stdout`, a file
//!   that does not parse left untouched, an unknown locale (LEX009), a name that is a
//!   keyword of the target (CLI004), a package translated and back;
//! * examples/gpt-shakespeare-en is `faber format --locale en` of
//!   examples/gpt-shakespeare, and both print the same for a few steps.

mod common;

use std::path::{Path, PathBuf};

use common::{Faber, ROOT};
use faber::diag::Diagnostic;
use faber::format::{Members, Options, Resolved};
use faber::resolve::{LoadError, Loader, MemoryLoader};
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
/// path relative to the root), as the CLI's loader finds them on disk: each read in
/// its package's locale.
struct Repo(MemoryLoader);

impl Loader for Repo {
    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        self.0.load(spec, importer)
    }

    fn default_locale(&self, name: &str) -> Locale {
        default_locale(name)
    }
}

fn loader(files: &[(String, String)]) -> Repo {
    let mut map: rustc_hash::FxHashMap<String, String> = faber::libraries::BUNDLED
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for (n, t) in files {
        map.insert(n.clone(), t.clone());
    }
    Repo(MemoryLoader { files: map })
}

/// The genus methods `rel` can see (its import closure), as the CLI computes them.
fn members(rel: &str, text: &str, repo: &mut Repo) -> Members {
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

/// Formats `text` (named `name`) in its own locale.
fn fmt(name: &str, text: &str, default: Locale) -> Result<String, Vec<Diagnostic>> {
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    faber::format::format(
        &sources,
        id,
        &Options {
            default,
            target: None,
            members: &Members::new(),
            resolved: &Resolved::none(),
        },
    )
}

/// What the front end makes of `text`'s method calls (named `name`, its imports
/// loaded from `repo`), as the CLI computes it before translating.
fn resolved(name: &str, text: &str, default: Locale, repo: &mut Repo) -> Resolved {
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    Resolved::check(&sources, id, default, repo)
}

/// Translates `text` (named `name`) into `target`: its method calls as `resolved`
/// reads them, the genus methods `members` for the calls it does not resolve.
fn translate(
    name: &str,
    text: &str,
    default: Locale,
    target: Locale,
    members: &Members,
    resolved: &Resolved,
) -> Result<String, Vec<Diagnostic>> {
    let mut sources = SourceMap::new();
    let id = sources.add(name, text);
    faber::format::format(
        &sources,
        id,
        &Options {
            default,
            target: Some(target),
            members,
            resolved,
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

/// Whether a refusal only says that the file uses a keyword the target locale has no
/// spelling for (its cell in the vocabulary is `-`, as English `sic`): such a program
/// cannot be written in that locale at all, so it is not translated there.
fn unspelled_keyword_only(ds: &[Diagnostic], to: Locale) -> bool {
    use faber::syntax::vocab::{vocabulary, Section};
    !ds.is_empty()
        && ds.iter().all(|d| {
            let prefix = "the keyword `";
            let suffix = format!("` has no spelling in locale `{}`", to.code());
            d.code.id == "CLI004"
                && d.message.starts_with(prefix)
                && d.message.ends_with(&suffix)
                && {
                    let word = &d.message[prefix.len()..d.message.len() - suffix.len()];
                    vocabulary()
                        .lookup(Section::Keyword, Locale::LA, word)
                        .is_some()
                        && vocabulary().spell(Section::Keyword, to, word).is_none()
                }
        })
}

fn codes_of(ds: &[Diagnostic]) -> Vec<&'static str> {
    ds.iter().map(|d| d.code.id).collect()
}

// ---------------------------------------------------------------- layout

#[test]
fn formatting_is_idempotent_and_keeps_the_tree_over_the_repository() {
    let (mut formatted, mut refused, mut failures) = (0, 0, Vec::new());
    for rel in repository_files() {
        let text = read(&rel);
        let default = default_locale(&rel);
        let result = fmt(&rel, &text, default);
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
        match fmt(&rel, &once, default) {
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
    let f = |t: &str| fmt("x.fab", t, Locale::LA).unwrap();
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

/// A program of tests/run (not a failing one, not an imported module).
fn is_test_program(rel: &str) -> bool {
    rel.strip_prefix("tests/run/")
        .is_some_and(|name| !name.contains('/') && name.ends_with(".fab"))
}

#[test]
fn translation_round_trips_through_every_locale() {
    let files = repository_files();
    let texts: Vec<(String, String)> = files.iter().map(|r| (r.clone(), read(r))).collect();
    let mut repo = loader(&texts);
    let (mut translated, mut exact, mut refusals, mut failures) = (0, 0, Vec::new(), Vec::new());
    let (mut programs, mut checked) = (0, 0);
    for (rel, text) in &texts {
        let default = default_locale(rel);
        if tree(text, default).is_none() {
            continue;
        }
        // Every test program translates into every locale, reads as checked there
        // (the translation took its calls from the front end), and comes back exactly.
        let program = is_test_program(rel);
        programs += usize::from(program);
        let x0 = fmt(rel, text, default).unwrap();
        let members = members(rel, text, &mut repo);
        // In Latin: the same tokens (the frontmatter may lose a `locale = "la"`).
        let r0 = resolved(rel, &x0, default, &mut repo);
        let ok = r0.checked(&x0);
        checked += usize::from(ok);
        let normal = translate(rel, &x0, default, Locale::LA, &members, &r0);
        if program && !ok {
            failures.push(format!("{rel}: the test program does not check"));
        }
        let normal = match normal {
            Ok(n) => n,
            Err(ds) => {
                failures.push(format!("{rel} → la: {:?}", codes_of(&ds)));
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
            let there = match translate(rel, &x0, default, l, &members, &r0) {
                Ok(t) => t,
                Err(ds) => {
                    let unwritable = unspelled_keyword_only(&ds, l);
                    if (program && !unwritable) || ds.iter().any(|d| d.code.id != "CLI004") {
                        failures.push(format!(
                            "{rel} → {}: {:?}: {}",
                            l.code(),
                            codes_of(&ds),
                            ds[0].message
                        ));
                    }
                    refusals.push(format!("{rel} → {}: {}", l.code(), ds[0].message));
                    continue;
                }
            };
            translated += 1;
            // Formatted in its locale; back in Latin it is the normal form.
            if fmt(rel, &there, default).as_deref() != Ok(there.as_str()) {
                failures.push(format!("{rel} → {}: not formatted there", l.code()));
            }
            let r = resolved(rel, &there, default, &mut repo);
            if program && !r.checked(&there) {
                failures.push(format!("{rel} → {}: does not check there", l.code()));
            }
            match translate(rel, &there, default, Locale::LA, &members, &r) {
                Ok(back) if back == normal => {}
                Ok(back) => {
                    all_exact = false;
                    // Only a file outside the test programs may come back with a
                    // built-in method in Latin's other spelling.
                    let why = match same_tokens(&normal, &back, true) {
                        Err(why) => Some(why),
                        Ok(()) if program => Some("a method came back respelled".into()),
                        Ok(()) => None,
                    };
                    if let Some(why) = why {
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
        "{translated} translations; {checked} files checked; {exact} files come back from every locale exactly; {} refusals (CLI004):\n{}",
        refusals.len(),
        refusals.join("\n")
    );
    assert!(programs >= 160, "only {programs} test programs");
    assert!(checked >= 400, "only {checked} files checked");
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
    let mut repo = loader(&[]);
    let mut tr = |text: &str, to: Locale| {
        let r = resolved("t.fab", text, Locale::LA, &mut repo);
        assert!(r.checked(text), "{text}");
        translate("t.fab", text, Locale::LA, to, &m, &r).unwrap()
    };
    let x0 = fmt("t.fab", &text, Locale::LA).unwrap();
    for l in all_locales().into_iter().filter(|l| *l != Locale::LA) {
        let there = tr(&x0, l);
        let back = tr(&there, locale("en"));
        assert_eq!(back, x0, "en → {} → en", l.code());
    }
    // Latin needs no frontmatter; English gets it back.
    let la = tr(&x0, Locale::LA);
    assert!(!la.starts_with("+++"), "{la}");
    assert!(tr(&la, locale("en")).starts_with("+++\nlocale = \"en\"\n+++\n"));
}

#[test]
fn a_built_in_on_an_inferred_receiver_comes_back_as_written() {
    // No receiver has a declared type: the checker infers `fractus` for `r` (from
    // `dimidium`'s result) and for `r - 2.25`, and a tensor for `t`. Latin writes the
    // square root `radix` on a number and `sqrt` on a tensor; English and Chinese have
    // one word for both, which the receiver's type picks back.
    let src = "functio dimidium(fractus x) → fractus {\n    redde x / 2.0\n}\n\nincipit {\n    fixum _ r ← dimidium(12.5)\n    fixum tf32[] semen ← vacua\n    fixum _ t ← semen.strue([4.0, 9.0], [2])\n    nota r.radix(), (r - 2.25).radix(), t.sqrt()\n}\n";
    // √6.25, √4 and the element-wise root of [4, 9].
    let want = "2.5, 2.0, [2.0, 3.0]\n";
    assert_eq!(run_in_process("r.fab", src, &[]), Some((0, want.into())));
    let m = Members::new();
    let mut repo = loader(&[]);
    let mut tr = |text: &str, to: Locale| {
        let r = resolved("r.fab", text, Locale::LA, &mut repo);
        assert!(r.checked(text), "{text}");
        translate("r.fab", text, Locale::LA, to, &m, &r).unwrap()
    };
    for (code, root) in [
        ("en", "sqrt"),
        ("zh-Hans", "平方根"),
        ("ar", "الجذر_التربيعي"),
    ] {
        let there = tr(src, locale(code));
        let calls = format!(" r.{root}(), (r - 2.25).{root}(), t.{root}()\n");
        assert!(there.contains(&calls), "{code}: {there}");
        assert_eq!(
            run_in_process("r.fab", &there, &[]),
            Some((0, want.into())),
            "{code}"
        );
        assert_eq!(tr(&there, Locale::LA), src, "{code} → la");
    }
    // From the tokens alone (a file that does not check) the receivers' types are
    // unknown, and the number's root comes back as the tensor op's name.
    let en = tr(src, locale("en"));
    let mut sources = SourceMap::new();
    let id = sources.add("r.fab", en.as_str());
    let by_tokens = faber::format::format(
        &sources,
        id,
        &Options {
            default: Locale::LA,
            target: Some(Locale::LA),
            members: &m,
            resolved: &Resolved::none(),
        },
    )
    .unwrap();
    assert!(
        by_tokens.contains("nota r.sqrt(), (r - 2.25).sqrt(), t.sqrt()"),
        "{by_tokens}"
    );
}

#[test]
fn a_call_is_translated_by_what_it_names_where_the_file_checks() {
    // `adde` is a method of `Arca` and a built-in (`add` in English): the call on a
    // list element is the genus method, which only the checker can tell.
    let src = "genus Arca {\n    numerus summa = 0\n\n    functio adde(numerus x) {\n        ego.summa ← ego.summa + x\n    }\n}\n\nincipit {\n    varia lista<Arca> arcae ← [Arca {}]\n    arcae[0].adde(3)\n    nota arcae[0].summa, arcae.longitudo()\n}\n";
    let mut repo = loader(&[]);
    let m = members("a.fab", src, &mut repo);
    let r = resolved("a.fab", src, Locale::LA, &mut repo);
    assert!(r.checked(src));
    let en = translate("a.fab", src, Locale::LA, locale("en"), &m, &r).unwrap();
    assert!(
        en.contains("    arcae[0].adde(3)\n    print arcae[0].summa, arcae.length()\n"),
        "{en}"
    );
    assert_eq!(
        run_in_process("a.fab", &en, &[]),
        Some((0, "3, 1\n".into()))
    );
    // The same program with an error does not check: from its tokens the call may be
    // either, and the translation is refused.
    let broken = src.replace("nota arcae[0].summa", "nota nusquam(), arcae[0].summa");
    let r = resolved("a.fab", &broken, Locale::LA, &mut repo);
    assert!(!r.checked(&broken));
    let ds = translate("a.fab", &broken, Locale::LA, locale("en"), &m, &r).unwrap_err();
    assert_eq!(codes_of(&ds), ["CLI004"]);
    assert!(
        ds[0].message.contains("`.adde(…)` may be a genus member"),
        "{}",
        ds[0].message
    );
    // A resolution of another text is not used.
    let ds = translate(
        "a.fab",
        &broken,
        Locale::LA,
        locale("en"),
        &m,
        &resolved("a.fab", src, Locale::LA, &mut repo),
    )
    .unwrap_err();
    assert_eq!(codes_of(&ds), ["CLI004"]);
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

/// Runs the program at `path` with the faber binary, from the repository root, with
/// the arguments and standard input of the test program `original` (its `.args`,
/// `.in`): the exit code and stdout.
fn run_binary(path: &Path, original: &Path) -> (i64, String) {
    let mut cmd = Faber::new().args(["run", path.to_str().unwrap()]);
    if let Ok(a) = std::fs::read_to_string(original.with_extension("args")) {
        cmd = cmd.arg("--").args(a.lines());
    }
    if let Ok(input) = std::fs::read(original.with_extension("in")) {
        cmd = cmd.stdin(input);
    }
    let o = cmd.output();
    (
        i64::from(o.status.code().unwrap_or(-1)),
        common::text(&o.stdout),
    )
}

#[test]
fn translated_programs_print_what_the_originals_print() {
    let dir = Path::new(ROOT).join("tests/run");
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "fab"))
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
    // Programs that need the CLI (arguments, standard input, the file system) run
    // with the binary from here, their imported modules in lib/ beside them.
    let out_dir = scratch("programs");
    let mut failures = Vec::new();
    // Programs a locale cannot write (a keyword without a spelling there).
    let mut unwritable = 0;
    let mut unwritable_in = vec![0; all_locales().len()];
    // The imported modules in each locale, translated once.
    let translated_libs: Vec<Vec<(String, String)>> = all_locales()
        .into_iter()
        .map(|l| {
            let there = out_dir.join(l.code());
            std::fs::create_dir_all(there.join("lib")).unwrap();
            libs.iter()
                .map(|(n, t)| {
                    let m = members(n, t, &mut repo);
                    let r = resolved(n, t, Locale::LA, &mut repo);
                    let x = translate(n, t, Locale::LA, l, &m, &r).unwrap_or_else(|ds| {
                        failures.push(format!("{n} → {}: {:?}", l.code(), codes_of(&ds)));
                        t.clone()
                    });
                    let file = Path::new(n).file_name().unwrap();
                    std::fs::write(there.join("lib").join(file), &x).unwrap();
                    (n.clone(), x)
                })
                .collect()
        })
        .collect();
    let (mut ran, mut by_binary) = (vec![0usize; 8], 0);
    for p in &programs {
        let rel = p.strip_prefix(ROOT).unwrap().to_string_lossy().into_owned();
        let text = read(&rel);
        let want = std::fs::read_to_string(p.with_extension("out")).unwrap();
        let code: i64 = std::fs::read_to_string(p.with_extension("code"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0);
        let plain = !p.with_extension("args").exists() && !p.with_extension("in").exists();
        let in_process = plain && run_in_process(&rel, &text, &libs) == Some((code, want.clone()));
        by_binary += usize::from(!in_process);
        let members = members(&rel, &text, &mut repo);
        let r = resolved(&rel, &text, Locale::LA, &mut repo);
        if !r.checked(&text) {
            failures.push(format!("{rel}: does not check"));
        }
        for (k, l) in all_locales().into_iter().enumerate() {
            let main = match translate(&rel, &text, Locale::LA, l, &members, &r) {
                Ok(t) => t,
                Err(ds) if unspelled_keyword_only(&ds, l) => {
                    unwritable += 1;
                    unwritable_in[k] += 1;
                    continue;
                }
                Err(ds) => {
                    failures.push(format!("{rel} → {}: {:?}", l.code(), codes_of(&ds)));
                    continue;
                }
            };
            let got = if in_process {
                run_in_process(&rel, &main, &translated_libs[k])
            } else {
                let path = out_dir.join(l.code()).join(p.file_name().unwrap());
                std::fs::write(&path, &main).unwrap();
                Some(run_binary(&path, p))
            };
            match got {
                Some((c, out)) if c == code && out == want => ran[k] += 1,
                other => failures.push(format!(
                    "{rel} in {}: {:?}\n--- program\n{main}",
                    l.code(),
                    other.map(|(c, o)| format!("exit {c}\n{o}"))
                )),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    eprintln!(
        "ran per locale: {ran:?} of {}; {by_binary} with the binary; {unwritable} translations not written (a keyword the locale does not spell)",
        programs.len()
    );
    assert!(
        unwritable <= 1,
        "{unwritable} translations refused for an unspelled keyword"
    );
    assert!(programs.len() >= 160, "only {} programs", programs.len());
    assert!(
        by_binary >= 6,
        "only {by_binary} programs ran with the binary"
    );
    for (n, u) in ran.iter().zip(&unwritable_in) {
        assert_eq!(n + u, programs.len());
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
fn the_cli_translates_a_call_by_what_the_checker_resolved() {
    // `Arca.adde` beside the built-in `adde`: only the checker knows that
    // `arcae[0].adde(3)` is the genus method; a file with an error is refused.
    let dir = scratch("checked");
    let f = dir.join("a.fab");
    let src = "genus Arca {\n    numerus summa = 0\n\n    functio adde(numerus x) {\n        ego.summa ← ego.summa + x\n    }\n}\n\nincipit {\n    varia lista<Arca> arcae ← [Arca {}]\n    arcae[0].adde(3)\n    nota arcae[0].summa\n}\n";
    std::fs::write(&f, src).unwrap();
    let (code, out, err) = run(&["format", "--stdout", "--locale", "en", f.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("\n    arcae[0].adde(3)\n    print arcae[0].summa\n"),
        "{out}"
    );
    let broken = src.replace("nota arcae[0].summa", "nota arcae[0].summa, nusquam()");
    std::fs::write(&f, &broken).unwrap();
    let (code, out, err) = run(&["format", "--locale", "en", f.to_str().unwrap()]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("CLI004") && err.contains("`.adde(…)`"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&f).unwrap(), broken);
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
