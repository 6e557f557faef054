//! Reader locales (docs/language.md § Reader locales): one vocabulary table
//! (src/syntax/vocabulary.txt) gives every keyword, primitive type and intrinsic method
//! a spelling per locale.
//!
//! * `tests/locales/twin.la.fab` prints `tests/locales/twin.out` (worked out by hand, see
//!   the comments in the program); its hand-written English twin prints the same;
//! * for every locale of the table, the Latin program translated word by word with the
//!   table (a small translator below, independent of faber's own lookup) prints the same;
//! * files of different locales import each other; faber.toml's `[reader] locale` is the
//!   default of a package's files and a file's frontmatter wins;
//! * an unknown locale names the known ones (LEX009, CLI002); a keyword of another
//!   locale is an ordinary name; diagnostics quote the user's own spelling.

mod common;

use std::path::{Path, PathBuf};

use common::{faber, text, ROOT};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("locale-tests", name)
}

fn write(path: &Path, body: &str) {
    common::write_file(path, body)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(ROOT).join(rel)).expect("read test file")
}

/// `faber run PATH`: (exit code, stdout, stderr).
fn run(path: &Path) -> (i32, String, String) {
    let o = faber(&["run", path.to_str().expect("utf-8 path")]);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// The table as the test reads it: (section, la, faber, spellings by locale code).
struct Table {
    codes: Vec<String>,
    rows: Vec<(String, String, String, Vec<String>)>,
}

fn table() -> Table {
    let body = read("src/syntax/vocabulary.txt");
    let mut lines = body
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    let mut codes = vec!["la".to_string()];
    codes.extend(header[3..].iter().map(|s| s.to_string()));
    let rows = lines
        .map(|l| {
            let c: Vec<&str> = l.split_whitespace().collect();
            let mut sp = vec![c[1].to_string()];
            // A cell's current spelling; older ones follow `|` and are never written.
            sp.extend(
                c[3..]
                    .iter()
                    .map(|s| s.split('|').next().unwrap().to_string()),
            );
            (c[0].to_string(), c[1].to_string(), c[2].to_string(), sp)
        })
        .collect();
    Table { codes, rows }
}

impl Table {
    fn col(&self, code: &str) -> usize {
        self.codes.iter().position(|c| c == code).unwrap()
    }

    /// The target spelling of a Latin word outside a method position: keywords
    /// (the implemented ones) and types.
    fn word(&self, w: &str, col: usize) -> Option<&str> {
        self.rows
            .iter()
            .find(|(sec, la, f, _)| (sec == "kw" || sec == "ty") && la == w && f != "-")
            .map(|r| r.3[col].as_str())
            .filter(|s| *s != "-")
    }

    /// A keyword of `src` that locale `code` has no spelling for (its cell is `-`).
    fn unspelled(&self, src: &str, code: &str) -> Option<String> {
        let col = self.col(code);
        let words: Vec<&str> = src
            .lines()
            .map(|l| l.split('#').next().unwrap_or(""))
            .flat_map(|l| l.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
            .collect();
        self.rows
            .iter()
            .find(|(sec, la, f, sp)| {
                sec == "kw" && f != "-" && sp[col] == "-" && words.contains(&la.as_str())
            })
            .map(|r| r.1.clone())
    }

    /// The target spelling of a method name after `.`: faber's own name of an
    /// implemented row, or the row's canonical (Latin) name (`multiplicata`).
    fn method(&self, w: &str, col: usize) -> Option<&str> {
        self.rows
            .iter()
            .find(|(sec, la, f, _)| {
                sec == "fn" && f != "-" && (f.split('|').any(|n| n == w) || la == w)
            })
            .map(|r| r.3[col].as_str())
            .filter(|s| *s != "-")
    }

    /// The Latin program `src` in locale `code`, word by word; text literals and
    /// comments are kept as they are. A word after `.` is an intrinsic only when it is
    /// called, its receiver is no import alias and the file declares no `functio` of
    /// that name (fields, module functions and genus methods are names).
    fn translate(&self, src: &str, code: &str) -> String {
        let col = self.col(code);
        let mut names: Vec<String> = vec!["hospes".into()];
        for line in src.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if words.first() == Some(&"importa") {
                names.extend(words.last().map(|w| w.to_string()));
            }
            for pair in words.windows(2) {
                if pair[0] == "functio" {
                    names.push(pair[1].split('(').next().unwrap_or("").to_string());
                }
            }
        }
        let chars: Vec<char> = src.chars().collect();
        // Fields: a word read after `.` without a call is a name the program declares
        // (`genus Res { numerus copia }` … `r.copia`), kept wherever it stands.
        let mut fields: Vec<String> = Vec::new();
        let mut j = 0;
        while j < chars.len() {
            if chars[j] == '.' {
                let start = j + 1;
                let mut k = start;
                while k < chars.len() && (chars[k].is_ascii_alphanumeric() || chars[k] == '_') {
                    k += 1;
                }
                if k > start && chars.get(k) != Some(&'(') {
                    fields.push(chars[start..k].iter().collect());
                }
                j = k.max(j + 1);
            } else {
                j += 1;
            }
        }
        let mut out = String::new();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c == '#' {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(chars[i]);
                    i += 1;
                }
            } else if c == '"' {
                out.push(c);
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' {
                        out.push(chars[i]);
                        i += 1;
                    }
                    out.push(chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    out.push('"');
                    i += 1;
                }
            } else if c.is_ascii_alphabetic() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let w: String = chars[start..i].iter().collect();
                let after_dot = start > 0 && chars[start - 1] == '.';
                let mut r = start.saturating_sub(1);
                while r > 0 && (chars[r - 1].is_ascii_alphanumeric() || chars[r - 1] == '_') {
                    r -= 1;
                }
                let receiver: String = chars[r..start.saturating_sub(1)].iter().collect();
                let called = chars.get(i) == Some(&'(');
                let name = names.contains(&receiver) || names.contains(&w);
                let t = if after_dot && called && !name {
                    self.method(&w, col)
                } else if after_dot || names.contains(&w) || fields.contains(&w) {
                    // a field, or a function the program names itself (`functio valor`)
                    None
                } else {
                    self.word(&w, col)
                };
                out.push_str(t.unwrap_or(&w));
            } else if c.is_ascii_digit() {
                // A number, with its fraction: `1.0.logarithmus()` keeps `1.0`.
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    out.push(chars[i]);
                    i += 1;
                }
                if i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit() {
                    out.push('.');
                    i += 1;
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        out.push(chars[i]);
                        i += 1;
                    }
                }
            } else {
                out.push(c);
                i += 1;
            }
        }
        out
    }
}

#[test]
fn the_latin_program_prints_the_hand_worked_output() {
    let (code, out, err) = run(&Path::new(ROOT).join("tests/locales/twin.la.fab"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, read("tests/locales/twin.out"));
}

#[test]
fn the_hand_written_english_twin_prints_the_same() {
    let (code, out, err) = run(&Path::new(ROOT).join("tests/locales/twin.en.fab"));
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, read("tests/locales/twin.out"));
}

#[test]
fn every_locale_of_the_table_runs_the_translated_program() {
    let t = table();
    assert_eq!(
        t.codes,
        ["la", "en", "ar", "hi", "th-TH", "vi", "zh-Hans", "zh-Hant"]
    );
    let latin = read("tests/locales/twin.la.fab");
    let want = read("tests/locales/twin.out");
    let dir = scratch("every");
    for code in &t.codes {
        let body = t.translate(&latin, code);
        if code != "la" {
            // The translation really is in the other vocabulary.
            let main = t.word("incipit", t.col(code)).unwrap();
            assert!(
                body.contains(main) && !body.contains("incipit {"),
                "{code}:\n{body}"
            );
            let added = t.method("addita", t.col(code)).unwrap();
            assert!(body.contains(&format!(".{added}(")), "{code}:\n{body}");
        }
        let file = dir.join(format!("twin.{code}.fab"));
        write(&file, &format!("+++\nlocale = \"{code}\"\n+++\n{body}"));
        let (status, out, err) = run(&file);
        assert_eq!(status, 0, "{code}: {err}\n{body}");
        assert_eq!(out, want, "{code}:\n{body}");
    }
}

#[test]
fn one_spelling_of_a_shared_term_picks_the_number_method_on_arithmetic() {
    // `sqrt` spells the tensor op `sqrt` and the number method `radix`; the receiver's
    // type picks. Arithmetic on numbers and a number method's result are numbers:
    // √(1.5² + 4) = √6.25 and √(7 − 0.75) = √6.25, where the tensor op would stop with
    // "`sqrt` needs a tensor".
    let dir = scratch("pick");
    let file = dir.join("main.fab");
    write(
        &file,
        "+++\nlocale = \"en\"\n+++\nfn f(float b) → float {\n    return (b.power(2.0) + 4.0).sqrt()\n}\n\nmain {\n    const float a ← 7.0\n    print f(1.5), (a - 0.75).sqrt(), (-a + 16.0).sqrt()\n}\n",
    );
    let (status, out, err) = run(&file);
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "2.5, 2.5, 3.0\n");
}

#[test]
fn chinese_names_and_keywords() {
    // User names in Han script next to zh-Hans keywords, types and methods.
    let dir = scratch("zh");
    let file = dir.join("main.fab");
    write(
        &file,
        "+++\nlocale = \"zh-Hans\"\n+++\n函数 问候(文本 名字) → 文本 {\n    返回 \"你好，§!\"(名字)\n}\n\n入口 {\n    常量 列表<整数> 数 ← [1, 2, 3]\n    显示 问候(\"世界\"), 数.长度()\n}\n",
    );
    let (status, out, err) = run(&file);
    assert_eq!(status, 0, "{err}");
    assert_eq!(out, "你好，世界!, 3\n");
}

#[test]
fn files_of_different_locales_import_each_other() {
    let dir = scratch("cross");
    // A Latin library used from an English file, and an English library from Latin:
    // identity is the name the user wrote, whatever the locale of the keywords.
    write(
        &dir.join("latina.fab"),
        "genus Par {\n    numerus a = 0\n    numerus b = 0\n}\n\nfunctio dupla(numerus n) → numerus {\n    redde 2 * n\n}\n",
    );
    write(
        &dir.join("anglica.fab"),
        "+++\nlocale = \"en\"\n+++\nfn triple(int n) → int {\n    return 3 * n\n}\n\nfn total(list<int> xs) → int {\n    var int s ← 0\n    for from xs const x then s ← s + x\n    return s\n}\n",
    );
    write(
        &dir.join("main_en.fab"),
        "+++\nlocale = \"en\"\n+++\nimport from \"./latina\" private dupla\nimport from \"./latina\" private latina\n\nmain {\n    const latina.Par p ← latina.Par { a = 1, b = 2 }\n    print dupla(21), p.a + p.b\n}\n",
    );
    write(
        &dir.join("main_la.fab"),
        "importa ex \"./anglica\" privata triple\nimporta ex \"./anglica\" privata anglica\n\nincipit {\n    nota triple(5), anglica.total([1, 2, 3])\n}\n",
    );
    let (status, out, err) = run(&dir.join("main_en.fab"));
    assert_eq!((status, out.as_str()), (0, "42, 3\n"), "{err}");
    let (status, out, err) = run(&dir.join("main_la.fab"));
    assert_eq!((status, out.as_str()), (0, "15, 6\n"), "{err}");
}

#[test]
fn the_manifest_sets_the_default_and_the_frontmatter_wins() {
    let dir = scratch("package");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[reader]\nlocale = \"en\"\n",
    );
    // main.fab has no frontmatter: English from the manifest. util.fab says Latin.
    write(
        &dir.join("src/main.fab"),
        "import from \"./util\" private half\n\nmain {\n    print half(10)\n}\n",
    );
    write(
        &dir.join("src/util.fab"),
        "+++\nlocale = \"la\"\n+++\nfunctio half(numerus n) → numerus {\n    redde n / 2\n}\n",
    );
    let (status, out, err) = run(&dir);
    assert_eq!((status, out.as_str()), (0, "5\n"), "{err}");
    // The same file given directly still finds its package's manifest.
    let (status, out, err) = run(&dir.join("src/main.fab"));
    assert_eq!((status, out.as_str()), (0, "5\n"), "{err}");
    // `faber parse` reads the entry in the manifest's locale too.
    let o = faber(&["parse", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // Libraries (`norma:`, `gradus:`) stay Latin in an English package.
    write(
        &dir.join("src/main.fab"),
        "import from \"norma:mathesis\" private factorialis\n\nmain {\n    print factorialis(5)\n}\n",
    );
    let (status, out, err) = run(&dir);
    assert_eq!((status, out.as_str()), (0, "120\n"), "{err}");
}

#[test]
fn an_unknown_locale_names_the_known_ones() {
    let dir = scratch("unknown");
    let file = dir.join("main.fab");
    write(
        &file,
        "+++\nlocale = \"en-US\"\n+++\nincipit {\n    nota 1\n}\n",
    );
    let (status, _, err) = run(&file);
    assert_eq!(status, 1);
    assert!(err.contains("error[LEX009]"), "{err}");
    assert!(err.contains("\"en-US\""), "{err}");
    for code in table().codes {
        assert!(err.contains(&format!("`{code}`")), "{code} missing:\n{err}");
    }
    let pkg = scratch("unknown-pkg");
    write(
        &pkg.join("faber.toml"),
        "[package]\nname = \"p\"\n[locale]\nlocale = \"latin\"\n",
    );
    write(&pkg.join("src/main.fab"), "incipit {\n}\n");
    let (status, _, err) = run(&pkg);
    assert_eq!(status, 1);
    assert!(
        err.contains("error[CLI002]") && err.contains("`latin`"),
        "{err}"
    );
    assert!(err.contains("`zh-Hant`"), "{err}");
}

#[test]
fn a_keyword_of_another_locale_is_an_ordinary_name() {
    let dir = scratch("names");
    // Latin keywords as names in an English file…
    let en = dir.join("en.fab");
    write(
        &en,
        "+++\nlocale = \"en\"\n+++\nfn functio(int si) → int {\n    return si + 1\n}\n\nmain {\n    const int nota ← functio(1)\n    const string redde ← \"r\"\n    print nota, redde\n}\n",
    );
    let (status, out, err) = run(&en);
    assert_eq!((status, out.as_str()), (0, "2, r\n"), "{err}");
    // …and English keywords as names in a Latin file.
    let la = dir.join("la.fab");
    write(
        &la,
        "functio fn(numerus if) → numerus {\n    redde if + 1\n}\n\nincipit {\n    fixum numerus print ← fn(1)\n    fixum textus return ← \"r\"\n    fixum numerus step ← 2\n    nota print, return, step\n}\n",
    );
    let (status, out, err) = run(&la);
    assert_eq!((status, out.as_str()), (0, "2, r, 2\n"), "{err}");
    // In English, `per` is no keyword (it is `pro`, outside the subset): a name.
    let per = dir.join("per.fab");
    write(
        &per,
        "+++\nlocale = \"en\"\n+++\nmain {\n    const int per ← 3\n    for range 0 ‥ 7 step per const i then write i\n}\n",
    );
    let (status, out, err) = run(&per);
    assert_eq!((status, out.as_str()), (0, "0\n3\n6\n"), "{err}");
    // A Latin type word is a plain name in English: an unknown type there.
    let ty = dir.join("ty.fab");
    write(
        &ty,
        "+++\nlocale = \"en\"\n+++\nmain {\n    const numerus n ← 1\n    print n\n}\n",
    );
    let (status, _, err) = run(&ty);
    assert_eq!(status, 1);
    assert!(
        err.contains("error[SEM015]") && err.contains("`numerus`"),
        "{err}"
    );
}

#[test]
fn diagnostics_quote_the_users_spelling() {
    let dir = scratch("spelling");
    let file = dir.join("main.fab");
    write(
        &file,
        "+++\nlocale = \"en\"\n+++\nmain {\n    const list<int> xs ← [1, 2]\n    print xs.lenght()\n    print xs.longitudo()\n    const tf32[] seed ← empty\n    const tf32[2] t ← seed.create(1.0, [2])\n    print t.added()\n    print xs.apply()\n}\n",
    );
    let (status, _, err) = run(&file);
    assert_eq!(status, 1);
    // A misspelling is matched against the English spellings.
    assert!(
        err.contains("no method `lenght`") && err.contains("did you mean `length`?"),
        "{err}"
    );
    // The Latin spelling is not read in an English file; the hint gives the English one.
    assert!(err.contains("no method `longitudo`"), "{err}");
    assert!(err.contains("where it is `length`"), "{err}");
    // Arity errors name the method as written.
    assert!(
        err.contains("`added` takes 1 argument(s) but 0 were given"),
        "{err}"
    );
    // A vocabulary intrinsic faber lacks is named with its canonical name.
    assert!(
        err.contains("error[SEM014]") && err.contains("`apply` (canonical `applica`)"),
        "{err}"
    );
    // Parse errors list the expected keywords in the file's locale.
    let parse = dir.join("parse.fab");
    write(
        &parse,
        "+++\nlocale = \"en\"\n+++\nmain {\n    if 1 > 0 print 1\n}\n",
    );
    let (status, _, err) = run(&parse);
    assert_eq!(status, 1);
    assert!(
        err.contains("unexpected keyword `print`, expected one of `then`, `{`"),
        "{err}"
    );
    let top = dir.join("top.fab");
    write(&top, "+++\nlocale = \"en\"\n+++\nincipit {\n}\n");
    let (_, _, err) = run(&top);
    assert!(err.contains("`fn`, `class`, `import`, `main`"), "{err}");
}

#[test]
fn faber_test_reads_the_package_locale_and_english_modifiers() {
    let dir = scratch("tests");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[reader]\nlocale = \"en\"\n",
    );
    write(
        &dir.join("src/twice.fab"),
        "fn twice(int n) → int {\n    return 2 * n\n}\n\ndescribe \"twice\" {\n    test \"positive\" {\n        assert twice(2) ≡ 4\n    }\n    test \"later\" skip \"not yet\" {\n        assert false\n    }\n}\n",
    );
    let o = faber(&["test", dir.join("src").to_str().unwrap()]);
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{out}{err}");
    // One case passes; `skip` is `omitte`: the other is skipped, not failed.
    assert!(
        out.contains("1 passed") && out.contains("1 skipped"),
        "{out}{err}"
    );
}

#[test]
fn a_latin_keyword_in_an_english_statement_gets_the_english_spelling() {
    let dir = scratch("latin-head");
    let file = dir.join("main.fab");
    write(
        &file,
        "+++\nlocale = \"en\"\n+++\nfn f(int n) → int {\n    redde n\n}\n\nmain {\n    print f(1)\n}\n",
    );
    let (status, _, err) = run(&file);
    assert_eq!(status, 1);
    assert!(err.contains("where it is `return`"), "{err}");
}

/// Copies `examples/NAME` into a scratch package whose files are translated to `code`
/// and whose manifest sets `[reader] locale` (no frontmatter in the files).
fn translated_example(t: &Table, name: &str, code: &str) -> PathBuf {
    let src = Path::new(ROOT).join("examples").join(name);
    let dst = scratch(&format!("example-{name}-{code}"));
    fn copy(t: &Table, from: &Path, to: &Path, code: &str) {
        for entry in std::fs::read_dir(from).expect("read example dir").flatten() {
            let p = entry.path();
            let q = to.join(entry.file_name());
            if p.is_dir() {
                std::fs::create_dir_all(&q).unwrap();
                copy(t, &p, &q, code);
            } else if p.extension().is_some_and(|e| e == "fab") {
                let body = std::fs::read_to_string(&p).unwrap();
                write(&q, &t.translate(&body, code));
            } else if p.file_name().is_some_and(|n| n == "faber.toml") {
                let body = std::fs::read_to_string(&p).unwrap();
                write(&q, &format!("{body}\n[reader]\nlocale = \"{code}\"\n"));
            }
        }
    }
    copy(t, &src, &dst, code);
    dst
}

#[test]
fn every_run_program_prints_the_same_in_english_and_traditional_chinese() {
    // tests/run/*.fab (single-file programs in Latin), translated with the table.
    let t = table();
    let dir = scratch("run-programs");
    let mut count = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("tests/run"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fab"))
        .collect();
    files.sort();
    let mut unspelled = 0;
    for file in files {
        let body = std::fs::read_to_string(&file).unwrap();
        // `@ optio` / `@ operandus` read their argument words (`brevis`, `typus`, …) in
        // Latin in every locale (docs/language.md § Reader locales): not translated.
        if body.starts_with("+++")
            || body.contains("importa")
            || body.contains("@ optio")
            || body.contains("@ operandus")
        {
            continue;
        }
        let want = run(&file);
        for code in ["en", "zh-Hant"] {
            // A keyword the locale cannot spell (English `sic`): the program is not
            // translatable there; only that word may be the reason.
            if let Some(w) = t.unspelled(&body, code) {
                assert_eq!((w.as_str(), code), ("sic", "en"), "{}", file.display());
                unspelled += 1;
                continue;
            }
            let q = dir.join(format!(
                "{code}-{}",
                file.file_name().unwrap().to_string_lossy()
            ));
            write(
                &q,
                &format!(
                    "+++\nlocale = \"{code}\"\n+++\n{}",
                    t.translate(&body, code)
                ),
            );
            let got = run(&q);
            assert_eq!(
                (got.0, &got.1),
                (want.0, &want.1),
                "{} in {code}: {}",
                file.display(),
                got.2
            );
        }
        count += 1;
    }
    assert!(count > 100, "only {count} programs");
    assert!(unspelled <= 2, "{unspelled} programs skipped in a locale");
}

#[test]
fn translated_examples_print_what_the_originals_print() {
    // The packages' libraries (`gradus:…`) stay Latin; the example's own files are read
    // in the manifest's locale.
    let t = table();
    for name in ["mlp", "primes"] {
        let (code0, want, err0) = run(&Path::new(ROOT).join("examples").join(name));
        assert_eq!(code0, 0, "{name}: {err0}");
        for code in ["en", "th-TH", "zh-Hant"] {
            let dir = translated_example(&t, name, code);
            let (status, out, err) = run(&dir);
            assert_eq!(status, 0, "{name} in {code}: {err}");
            assert_eq!(out, want, "{name} in {code}");
        }
    }
}

#[test]
fn an_english_private_annotation_hides_the_function() {
    let dir = scratch("private");
    write(
        &dir.join("lib.fab"),
        "+++\nlocale = \"en\"\n+++\n@ private\nfn hidden(int n) → int {\n    return n\n}\n\nfn shown(int n) → int {\n    return hidden(n) + 1\n}\n",
    );
    write(
        &dir.join("ok.fab"),
        "importa ex \"./lib\" privata lib\n\nincipit {\n    nota lib.shown(1)\n}\n",
    );
    write(
        &dir.join("bad.fab"),
        "importa ex \"./lib\" privata lib\n\nincipit {\n    nota lib.hidden(1)\n}\n",
    );
    let (status, out, err) = run(&dir.join("ok.fab"));
    assert_eq!((status, out.as_str()), (0, "2\n"), "{err}");
    let (status, _, err) = run(&dir.join("bad.fab"));
    assert_eq!(status, 1);
    assert!(err.contains("no public function `hidden`"), "{err}");
}

#[test]
fn the_matrix_product_glyph_is_not_part_of_a_unicode_name() {
    // U+00B7 `·` is XID_Continue, but in Faber it is the matrix product: `a·a` is three
    // tokens, in every locale.
    let dir = scratch("middle-dot");
    for (code, main, print, name) in [
        ("la", "incipit", "nota", "a"),
        ("zh-Hans", "入口", "显示", "甲"),
    ] {
        let file = dir.join(format!("{code}.fab"));
        write(
            &file,
            &format!("+++\nlocale = \"{code}\"\n+++\n{main} {{\n    {print} 3·4, (2 + 1)·2\n    {print} {name}·{name}\n}}\n"),
        );
        let (_, _, err) = run(&file);
        // `a`/`甲` is unknown, and named alone, not as `a·a`.
        assert!(
            err.contains(&format!("cannot find `{name}`")),
            "{code}: {err}"
        );
    }
    let file = dir.join("ok.fab");
    write(
        &file,
        "incipit {\n    fixum numerus a ← 3\n    nota a·a, 3·4\n}\n",
    );
    let (status, out, err) = run(&file);
    assert_eq!((status, out.as_str()), (0, "9, 12\n"), "{err}");
}

#[test]
fn older_pack_spellings_are_read_in_their_own_locale() {
    let dir = scratch("older");
    // Vietnamese and Traditional Chinese written with the packs' earlier words
    // (`bắtđầu`, `in`, `vănbản`; `常數`, `如果`, `顯示`), as the public examples are.
    let vi = dir.join("vi.fab");
    write(
        &vi,
        "+++\nlocale = \"vi\"\n+++\nhàm chào(vănbản tên) → vănbản {\n  trả \"xin chào, \" + tên\n}\n\nbắtđầu {\n  hằng vănbản lời ← chào(\"bạn\")\n  in lời\n  ghi_chú lời\n}\n",
    );
    let (status, out, err) = run(&vi);
    assert_eq!(
        (status, out.as_str()),
        (0, "xin chào, bạn\nxin chào, bạn\n"),
        "{err}"
    );
    let hant = dir.join("hant.fab");
    write(
        &hant,
        "+++\nlocale = \"zh-Hant\"\n+++\n入口 {\n  常數 整數 甲 ← 2\n  如果 甲 > 1 {\n    顯示 甲\n  } 否則 {\n    註記 0\n  }\n}\n",
    );
    let (status, out, err) = run(&hant);
    assert_eq!((status, out.as_str()), (0, "2\n"), "{err}");
    // English programs upstream write `null` and the empty literal `vacua`.
    let en = dir.join("en.fab");
    write(
        &en,
        "+++\nlocale = \"en\"\n+++\nfn first(list<int> xs) → int ∪ null {\n    if xs.is_empty() {\n        return null\n    }\n    return xs[0]\n}\n\nmain {\n    var list<int> xs ← vacua\n    if first(xs) is null {\n        print 0\n    }\n    xs.append(4)\n    print first(xs)\n}\n",
    );
    let (status, out, err) = run(&en);
    assert_eq!((status, out.as_str()), (0, "0\n4\n"), "{err}");
    // In Latin and English `in` stays an ordinary name.
    let la = dir.join("la.fab");
    write(&la, "incipit {\n    fixum numerus in ← 3\n    nota in\n}\n");
    let (status, out, err) = run(&la);
    assert_eq!((status, out.as_str()), (0, "3\n"), "{err}");
}
