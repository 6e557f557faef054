//! The error matrix (issue 8): one program per failure class under `tests/errors/`,
//! each run through the built binary. `NN_class.err` names the expectation:
//!
//! ```text
//! cmd: run                  # subcommand, then any flags that go before the path
//! path: 16_import_cycle/main.fab   # optional; default `NN_class.fab`, else `NN_class/`
//! exit: 1
//! code: RUN001              # the first `error[…]` line
//! at: 4:10                  # `line:col` of its `-->` line, or `file:line:col` when
//!                           # the primary location is in another file
//! todo: <reason>            # optional: the class has no diagnostic yet; skipped
//! ```
//!
//! Every case must also keep stderr free of panics ("panicked", "please report").
//! Expectations were written by hand from the source positions, not by running faber.

use std::path::{Path, PathBuf};
use std::process::Command;

const DIR: &str = "tests/errors";

struct Case {
    name: String,
    cmd: Vec<String>,
    path: PathBuf,
    exit: i32,
    code: String,
    at: String,
    todo: Option<String>,
}

fn parse_case(spec_path: &Path) -> Case {
    let name = spec_path.file_stem().unwrap().to_str().unwrap().to_string();
    let spec = std::fs::read_to_string(spec_path).unwrap();
    let mut cmd = None;
    let mut path = None;
    let mut exit = None;
    let mut code = None;
    let mut at = None;
    let mut todo = None;
    for line in spec.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (key, value) = line
            .split_once(':')
            .unwrap_or_else(|| panic!("{name}.err: `key: value` expected, found `{line}`"));
        let value = value.trim().to_string();
        match key.trim() {
            "cmd" => cmd = Some(value.split_whitespace().map(String::from).collect()),
            "path" => path = Some(Path::new(DIR).join(value)),
            "exit" => exit = Some(value.parse().expect("exit is an integer")),
            "code" => code = Some(value),
            "at" => at = Some(value),
            "todo" => todo = Some(value),
            other => panic!("{name}.err: unknown key `{other}`"),
        }
    }
    let path = path.unwrap_or_else(|| {
        let file = Path::new(DIR).join(format!("{name}.fab"));
        if file.exists() {
            file
        } else {
            Path::new(DIR).join(&name)
        }
    });
    assert!(path.exists(), "{name}: {} does not exist", path.display());
    Case {
        cmd: cmd.unwrap_or_else(|| vec!["run".to_string()]),
        path,
        exit: exit.unwrap_or_else(|| panic!("{name}.err: no `exit:`")),
        code: code.unwrap_or_else(|| panic!("{name}.err: no `code:`")),
        at: at.unwrap_or_else(|| panic!("{name}.err: no `at:`")),
        todo,
        name,
    }
}

fn cases() -> Vec<Case> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "err"))
        .collect();
    specs.sort();
    specs.iter().map(|p| parse_case(p)).collect()
}

/// Whether the `-->` location (`file:line:col`) matches `at`: `line:col` compares
/// the end, `file:line:col` compares the whole location or its last path components.
fn location_matches(loc: &str, at: &str) -> bool {
    let has_file = at.split(':').count() > 2;
    if has_file {
        loc == at || loc.ends_with(&format!("/{at}"))
    } else {
        loc.ends_with(&format!(":{at}"))
    }
}

/// Checks one finished run against its case; `Err` explains the mismatch.
fn verify(case: &Case, status: Option<i32>, stderr: &str) -> Result<(), String> {
    let mut problems = Vec::new();
    for bad in ["panicked", "please report"] {
        if stderr.contains(bad) {
            problems.push(format!("stderr contains `{bad}`"));
        }
    }
    if status != Some(case.exit) {
        problems.push(format!("exit {status:?}, want {}", case.exit));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    match lines.iter().position(|l| l.starts_with("error[")) {
        None => problems.push("no `error[…]` line".to_string()),
        Some(i) => {
            if !lines[i].starts_with(&format!("error[{}]", case.code)) {
                problems.push(format!("first error is `{}`, want {}", lines[i], case.code));
            }
            let loc = lines
                .get(i + 1)
                .and_then(|l| l.trim().strip_prefix("-->"))
                .map(|l| l.trim());
            match loc {
                Some(loc) if location_matches(loc, &case.at) => {}
                Some(loc) => problems.push(format!("location `{loc}`, want `{}`", case.at)),
                None => problems.push("no `-->` line after the error".to_string()),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

#[test]
fn every_failure_class_reports_its_diagnostic() {
    let cases = cases();
    assert!(
        cases.len() >= 22,
        "expected the whole matrix, found {}",
        cases.len()
    );
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for case in &cases {
        if let Some(reason) = &case.todo {
            skipped.push(format!("SKIP {} (TODO: {reason})", case.name));
            continue;
        }
        let mut args: Vec<&str> = case.cmd.iter().map(String::as_str).collect();
        args.push(case.path.to_str().unwrap());
        let out = Command::new(env!("CARGO_BIN_EXE_faber"))
            .args(&args)
            .env("NO_COLOR", "1")
            .env_remove("FABER_LIBRARY_HOME")
            .output()
            .expect("the faber binary runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        if let Err(why) = verify(case, out.status.code(), &stderr) {
            failures.push(format!(
                "{}: faber {}: {why}\n{stderr}",
                case.name,
                args.join(" ")
            ));
        }
    }
    for s in &skipped {
        println!("{s}");
    }
    println!(
        "error matrix: {} checked, {} skipped",
        cases.len() - skipped.len(),
        skipped.len()
    );
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn location_matching() {
    assert!(location_matches("tests/errors/x.fab:4:10", "4:10"));
    assert!(!location_matches("tests/errors/x.fab:14:10", "4:10"));
    assert!(location_matches(
        "gradus:serialize.fab:16:11",
        "gradus:serialize.fab:16:11"
    ));
    assert!(location_matches(
        "tests/errors/d/b.fab:1:12",
        "d/b.fab:1:12"
    ));
    assert!(!location_matches(
        "tests/errors/dd/b.fab:1:12",
        "d/b.fab:1:12"
    ));
}
