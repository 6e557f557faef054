//! Runs every program under `tests/run/` with the faber binary and compares its
//! stdout with the `.out` file beside it (and the exit code with `.code`, default 0).
//! Every program under `tests/run/fail/` must exit 1 with the diagnostic code and
//! `line:col` its `.err` file names. Expected files were derived independently
//! (by hand and by `tests/reference/run/*.py`), never by running faber.

use std::path::{Path, PathBuf};
use std::process::Command;

fn faber(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_faber"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the faber binary runs")
}

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
        let out = faber(&["run", p]);
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
    let mut failures = Vec::new();
    let files = programs("tests/run/fail");
    assert!(files.len() >= 20);
    for path in &files {
        let p = path.to_str().unwrap();
        let spec = std::fs::read_to_string(sibling(path, "err")).unwrap();
        let mut lines = spec.lines();
        let code = lines.next().unwrap().trim().to_string();
        let pos = lines.next().unwrap().trim().to_string();
        let out = faber(&["run", p]);
        let err = String::from_utf8_lossy(&out.stderr);
        let first_error = err.lines().position(|l| l.starts_with("error["));
        let ok = out.status.code() == Some(1)
            && first_error.is_some_and(|i| {
                let lines: Vec<&str> = err.lines().collect();
                lines[i].starts_with(&format!("error[{code}]"))
                    && lines
                        .get(i + 1)
                        .is_some_and(|l| l.trim_end().ends_with(&format!(":{pos}")))
            });
        if !ok {
            failures.push(format!(
                "{p}: want {code} at {pos}, exit {:?}\n{err}",
                out.status.code()
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
