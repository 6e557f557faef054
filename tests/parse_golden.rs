//! Parser golden tests. Every program under `tests/parse/ok/` must parse; its AST
//! dump is snapshotted. Every program under `tests/parse/err/` must fail; its
//! rendered diagnostics (colour off) are snapshotted, and the first diagnostic must
//! point at the `L:C` that the file's header comment names (written by hand).

use faber::diag::render;
use faber::source::SourceMap;
use faber::syntax::{dump_ast, parse};

fn load(path: &std::path::Path) -> (SourceMap, faber::source::FileId) {
    let text = std::fs::read_to_string(path).expect("test file is UTF-8");
    let mut sources = SourceMap::new();
    let name = path.file_name().unwrap().to_string_lossy().to_string();
    let id = sources.add(name, text);
    (sources, id)
}

#[test]
fn ok_programs_parse() {
    insta::glob!("parse/ok/*.fab", |path| {
        let (sources, id) = load(path);
        match parse(&sources, id) {
            Ok(module) => insta::assert_snapshot!(dump_ast(&module)),
            Err(diags) => panic!(
                "{} should parse:\n{}",
                path.display(),
                render(&diags, &sources, false)
            ),
        }
    });
}

/// The first `L:C` after the word `at` in the file's first comment line.
fn expected_position(text: &str) -> Option<(usize, usize)> {
    let header = text.lines().find(|l| l.trim_start().starts_with('#'))?;
    let at = header.find(" at ")?;
    let rest = &header[at + 4..];
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == ':'))
        .unwrap_or(rest.len());
    let (l, c) = rest[..end].split_once(':')?;
    Some((l.parse().ok()?, c.parse().ok()?))
}

#[test]
fn err_programs_fail_at_the_named_position() {
    insta::glob!("parse/err/*.fab", |path| {
        let (sources, id) = load(path);
        let diags = match parse(&sources, id) {
            Ok(_) => panic!("{} should not parse", path.display()),
            Err(d) => d,
        };
        assert!(!diags.is_empty());
        if let Some(want) = expected_position(sources.text(id)) {
            let got = sources.line_col(diags[0].span);
            assert_eq!(got, want, "{}: first diagnostic position", path.display());
        }
        insta::assert_snapshot!(render(&diags, &sources, false));
    });
}

/// Two independent bad statements in one block are both reported.
#[test]
fn recovery_reports_several_errors() {
    let src = "incipit {\n    fixum numerus ← 1\n    nota 1\n    7\n    nota 3\n}\n";
    let mut sources = SourceMap::new();
    let id = sources.add("multi.fab", src);
    let diags = parse(&sources, id).unwrap_err();
    let lines: Vec<usize> = diags.iter().map(|d| sources.line_col(d.span).0).collect();
    assert_eq!(lines, vec![2, 4], "{}", render(&diags, &sources, false));
}
