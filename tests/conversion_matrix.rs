//! The `↦` conversion matrix (docs/language.md § "Conversions") against the upstream
//! language's verdicts. `UPSTREAM` is the semantic part of the upstream conversion
//! matrix (its generated coverage document: `✕` where its type checker refuses the
//! pair, any other glyph where it accepts it), transcribed row by row for the 13 type
//! families faber has; faber's own table is a Rust `match` (src/ir/conversion.rs),
//! written separately, and these tests hold the two together:
//!
//! * with both types known, `faber check` refuses a `✕` pair with SEM029 and accepts
//!   every other pair;
//! * run, an accepted pair either converts or fails with a conversion failure (RUN005),
//!   never another error;
//! * with the source's type only known at run time (a union with `nihil`), a `✕` pair
//!   fails at run time with "there is no conversion from …", and an accepted pair does
//!   not fail for that reason.

mod common;

use std::path::PathBuf;

/// Families in the order of the columns of `UPSTREAM`.
const FAMILIES: [&str; 13] = [
    "numerus",
    "fractus",
    "bivalens",
    "textus",
    "ascii",
    "octeti",
    "json",
    "valor",
    "lista",
    "tabula",
    "copia",
    "intervallum",
    "tensor",
];

/// Row = source family, column = target family, in `FAMILIES` order.
const UPSTREAM: [(&str, &str); 13] = [
    ("numerus", "◐ ✓ ✓ ✓ ✓ ✕ ✕ ✓ ◐ ◐ ◐ ✓ ✕"),
    ("fractus", "✓ ◐ ✓ ✓ ◐ ✕ ✕ ✓ ◐ ◐ ◐ ✕ ✕"),
    ("bivalens", "✓ ✓ ◐ ◐ ◐ ✕ ✕ ✓ ◐ ◐ ◐ ✕ ◐"),
    ("textus", "✓ ✓ ✓ ◐ ✓ ✓ ✕ ✓ ◐ ◐ ◐ ✕ ◐"),
    ("ascii", "◐ ◐ ✓ ✓ ◐ ✓ ✕ ✓ ◐ ◐ ◐ ✕ ◐"),
    ("octeti", "✕ ✕ ✕ ✓ ✓ ◐ ✕ ✓ ✕ ◐ ◐ ✕ ✓"),
    ("json", "✕ ✕ ✕ ✕ ✕ ✕ ◐ ✓ ◐ ◐ ◐ ✕ ◐"),
    ("valor", "✓ ✓ ✓ ✓ ✓ ✓ ✓ ◐ ✓ ✓ ◐ ✕ ◐"),
    ("lista", "◐ ◐ ◐ ◐ ◐ ◐ ◐ ✓ ◐ ✕ ✓ ✕ ✓"),
    ("tabula", "◐ ◐ ◐ ◐ ◐ ◐ ◐ ✓ ✓ ◐ ✕ ✕ ✕"),
    ("copia", "◐ ◐ ◐ ◐ ◐ ◐ ◐ ◐ ✓ ✕ ◐ ✕ ✕"),
    ("intervallum", "◐ ◐ ◐ ◐ ◐ ◐ ◐ ◐ ✓ ◐ ◐ ✓ ✓"),
    ("tensor", "✕ ✕ ◐ ◐ ◐ ◐ ◐ ✓ ✓ ✕ ✕ ✕ ✓"),
];

/// How a family is written as a type, and a value of it.
fn written(family: &str) -> (&'static str, &'static str) {
    match family {
        "numerus" => ("numerus", "42"),
        "fractus" => ("fractus", "2.5"),
        "bivalens" => ("bivalens", "verum"),
        "textus" => ("textus", "\"hi\""),
        "ascii" => ("ascii", "'hi'"),
        "octeti" => ("octeti", "|68 69|"),
        "json" => ("json", "{ \"k\": 1 }"),
        "valor" => ("valor", "42 ↦ valor"),
        "lista" => ("lista<numerus>", "[1, 2, 3]"),
        "tabula" => ("tabula<textus, numerus>", "{ \"k\": 1 }"),
        "copia" => ("copia<numerus>", "[1, 2, 3] ↦ copia<numerus>"),
        "intervallum" => ("intervallum<numerus>", "0‥3"),
        "tensor" => ("tensor<numerus, [3]>", "[1, 2, 3] ↦ tensor<numerus, [3]>"),
        other => panic!("no family {other}"),
    }
}

fn accepted(from: &str, to: &str) -> bool {
    let row = UPSTREAM.iter().find(|(f, _)| *f == from).unwrap().1;
    let glyphs: Vec<&str> = row.split(' ').collect();
    assert_eq!(glyphs.len(), FAMILIES.len(), "row {from}");
    let col = FAMILIES.iter().position(|f| *f == to).unwrap();
    match glyphs[col] {
        "✕" => false,
        "✓" | "◐" => true,
        g => panic!("unknown glyph {g}"),
    }
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-conversion-matrix");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.fab"));
    std::fs::write(&p, text).unwrap();
    p
}

fn pairs() -> impl Iterator<Item = (&'static str, &'static str)> {
    FAMILIES
        .iter()
        .flat_map(|f| FAMILIES.iter().map(move |t| (*f, *t)))
}

/// `faber CMD` on `src ↦ T` with `src` of the source family (declared `F ∪ nihil` when
/// `union`, so that its type is only known at run time): the exit code and stderr.
fn convert(cmd: &str, from: &str, to: &str, union: bool) -> (Option<i32>, String) {
    let ((fty, value), (tty, _)) = (written(from), written(to));
    let declared = if union {
        format!("{fty} ∪ nihil")
    } else {
        fty.to_string()
    };
    let src = format!(
        "incipit {{\n    fixum {declared} src ← {value}\n    fixum _ r ← src ↦ {tty}\n}}\n"
    );
    let path = scratch(&format!("{cmd}-{union}-{from}-{to}"), &src);
    let out = common::faber(&[cmd, path.to_str().unwrap()]);
    (out.status.code(), common::text(&out.stderr))
}

fn report(wrong: &[String]) {
    assert!(
        wrong.is_empty(),
        "{} cells differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn check_time_verdicts_are_upstream_s() {
    let mut wrong = Vec::new();
    for (from, to) in pairs() {
        let (code, err) = convert("check", from, to, false);
        let refused = err.contains("error[SEM029]") && err.contains(":3:17");
        let want = accepted(from, to);
        if err.contains("panicked") || (want && code != Some(0)) || (!want && !refused) {
            wrong.push(format!("{from} ↦ {to}: upstream accepts: {want}\n{err}"));
        }
    }
    report(&wrong);
}

#[test]
fn accepted_pairs_convert_or_fail_as_a_conversion() {
    let mut wrong = Vec::new();
    for (from, to) in pairs().filter(|(f, t)| accepted(f, t)) {
        let (code, err) = convert("run", from, to, false);
        let ok = code == Some(0) || (code == Some(1) && err.starts_with("error[RUN005]"));
        if !ok || err.contains("panicked") {
            wrong.push(format!("{from} ↦ {to}: exit {code:?}\n{err}"));
        }
    }
    report(&wrong);
}

#[test]
fn run_time_verdicts_are_upstream_s() {
    // A `json` value is a `valor` at run time: the json row is only checked statically.
    let mut wrong = Vec::new();
    for (from, to) in pairs().filter(|(f, _)| *f != "json") {
        let (_, err) = convert("run", from, to, true);
        let refused =
            err.starts_with("error[RUN005]") && err.contains("there is no conversion from");
        let want = accepted(from, to);
        if err.contains("panicked") || want == refused || (!want && !err.contains(":3:17")) {
            wrong.push(format!("{from} ↦ {to}: upstream accepts: {want}\n{err}"));
        }
    }
    report(&wrong);
}
