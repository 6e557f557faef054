//! Parser golden tests. Every program under `tests/parse/ok/` must parse; its AST
//! dump is snapshotted. Every program under `tests/parse/err/` is a failing program
//! (tests/README.md): `faber check` must exit 1 with the code and `L:C` that its `.err`
//! file names (taken from the hand-written header comment that describes the case),
//! and its rendered diagnostics (colour off) are snapshotted.

mod common;

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

#[test]
fn err_programs_fail_at_the_named_position() {
    common::failing::check_suite("tests/parse/err", 60);
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
