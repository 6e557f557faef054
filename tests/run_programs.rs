//! Runs every program under `tests/run/` with the faber binary and compares its
//! stdout with the `.out` file beside it (and the exit code with `.code`, default 0),
//! given the arguments in `.args` (one a line) and the standard input in `.in` if any.
//! Every program under `tests/run/fail/` is a failing program (tests/README.md): it
//! must exit 1 with the diagnostic code and `line:col` its `.err` file names, and
//! render as its snapshot. Expected files were derived independently (by hand and by
//! `tests/reference/run/*.py`), never by running faber.

mod common;

use std::path::{Path, PathBuf};

fn programs(dir: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fab"))
        .collect();
    v.sort();
    v
}

fn sibling(p: &Path, ext: &str) -> PathBuf {
    p.with_extension(ext)
}

#[test]
fn run_programs_match_expected_output() {
    let mut failures = Vec::new();
    let files = programs("tests/run");
    assert!(
        files.len() >= 80,
        "expected the run corpus, found {}",
        files.len()
    );
    for path in &files {
        let p = path.to_str().unwrap();
        // `X.args`: the program's arguments, one a line (after `--`); `X.in`: its stdin.
        let mut cmd = common::Faber::new().args(["run", p]);
        if let Ok(a) = std::fs::read_to_string(sibling(path, "args")) {
            cmd = cmd.arg("--").args(a.lines());
        }
        if let Ok(input) = std::fs::read(sibling(path, "in")) {
            cmd = cmd.stdin(input);
        }
        let out = cmd.output();
        let want = std::fs::read_to_string(sibling(path, "out")).unwrap();
        let code: i32 = std::fs::read_to_string(sibling(path, "code"))
            .map(|s| s.trim().parse().unwrap())
            .unwrap_or(0);
        let got = String::from_utf8_lossy(&out.stdout);
        if got != want || out.status.code() != Some(code) {
            failures.push(format!(
                "{p}: exit {:?} (want {code})\n--- stdout\n{got}--- want\n{want}--- stderr\n{}",
                out.status.code(),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn failing_programs_report_the_expected_diagnostic() {
    common::failing::check_suite("tests/run/fail", 20);
}
