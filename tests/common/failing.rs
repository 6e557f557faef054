//! Failing programs: one format and one checker for every suite of programs that must
//! fail (`tests/run/fail/`, `tests/errors/`, `tests/parse/err/`). tests/README.md says
//! how to add one. In short, `X.fab` (or the folder `X/`) has an expectation `X.err`
//! beside it:
//!
//! ```text
//! # a comment
//! cmd: run --max-steps 100   # optional: the subcommand and any flags before the path; default `run`
//! path: X/main.fab           # optional: what faber is given, relative to the suite's folder;
//!                            # default `X.fab`, else the folder `X/`
//! exit: 1                    # optional: default 1
//! code: RUN001               # the code of the first `error[…]` line
//! at: 4:10                   # `line:col` of the `-->` line after it, or `file:line:col`
//!                            # when the location is in another file
//! todo: <reason>             # optional: the class has no diagnostic yet; the case is skipped
//! ```
//!
//! The checker runs `faber CMD PATH` from the repository root (colour off), requires the
//! exit code, the code and the location, and no panic ("panicked", "please report") on
//! stderr, and compares the whole of stderr with the insta snapshot
//! `tests/snapshots/failing__<suite>__X.snap` (`<suite>` is the folder under `tests/`
//! with `_` for `/`: `run_fail`, `errors`, `parse_err`).

use std::path::{Path, PathBuf};

use super::{Faber, ROOT};

/// Where every failing program's rendered message is kept.
pub const SNAPSHOTS: &str = "tests/snapshots";

/// One failing program and what it must report.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// `X` of `X.err`.
    pub name: String,
    /// The subcommand and the flags before the path.
    pub cmd: Vec<String>,
    /// What faber is given, relative to the repository root.
    pub path: PathBuf,
    pub exit: i32,
    pub code: String,
    /// `line:col` or `file:line:col`.
    pub at: String,
    pub todo: Option<String>,
}

/// Reads the expectation `spec` of the case `name` in the suite folder `dir`. Where
/// `path:` is absent, `exists` says whether `X.fab` is there (else the folder `X/`).
pub fn parse_spec(
    dir: &str,
    name: &str,
    spec: &str,
    exists: impl Fn(&Path) -> bool,
) -> Result<Case, String> {
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
            .ok_or_else(|| format!("{name}.err: `key: value` expected, found `{line}`"))?;
        let value = value.trim().to_string();
        let slot = match key.trim() {
            "cmd" => {
                cmd = Some(value.split_whitespace().map(String::from).collect());
                continue;
            }
            "path" => &mut path,
            "exit" => {
                exit = Some(
                    value
                        .parse()
                        .map_err(|_| format!("{name}.err: `exit: {value}` is not an integer"))?,
                );
                continue;
            }
            "code" => &mut code,
            "at" => &mut at,
            "todo" => &mut todo,
            other => return Err(format!("{name}.err: unknown key `{other}`")),
        };
        if slot.replace(value).is_some() {
            return Err(format!("{name}.err: `{}` given twice", key.trim()));
        }
    }
    let path = match path {
        Some(p) => Path::new(dir).join(p),
        None => {
            let file = Path::new(dir).join(format!("{name}.fab"));
            if exists(&file) {
                file
            } else {
                Path::new(dir).join(name)
            }
        }
    };
    Ok(Case {
        name: name.to_string(),
        cmd: cmd.unwrap_or_else(|| vec!["run".to_string()]),
        path,
        exit: exit.unwrap_or(1),
        code: code.ok_or_else(|| format!("{name}.err: no `code:`"))?,
        at: at.ok_or_else(|| format!("{name}.err: no `at:`"))?,
        todo,
    })
}

/// Every case of the suite folder `dir` (relative to the repository root), by name.
pub fn cases(dir: &str) -> Vec<Case> {
    let mut specs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "err"))
        .collect();
    specs.sort();
    specs
        .iter()
        .map(|spec| {
            let name = spec.file_stem().unwrap().to_str().unwrap();
            let text = std::fs::read_to_string(spec).unwrap();
            let case = parse_spec(dir, name, &text, |p| Path::new(ROOT).join(p).exists())
                .unwrap_or_else(|e| panic!("{dir}/{e}"));
            let full = Path::new(ROOT).join(&case.path);
            assert!(
                full.exists(),
                "{name}: {} does not exist",
                case.path.display()
            );
            case
        })
        .collect()
}

/// Whether the `-->` location (`file:line:col`) matches `at`: `line:col` compares
/// the end, `file:line:col` compares the whole location or its last path components.
pub fn location_matches(loc: &str, at: &str) -> bool {
    let has_file = at.split(':').count() > 2;
    if has_file {
        loc == at || loc.ends_with(&format!("/{at}"))
    } else {
        loc.ends_with(&format!(":{at}"))
    }
}

/// Checks one finished run against its case (everything but the snapshot); `Err`
/// says every mismatch.
pub fn verify(case: &Case, status: Option<i32>, stderr: &str) -> Result<(), String> {
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

/// The snapshot name of a case of the suite folder `dir`: `failing__run_fail__X`.
pub fn snapshot_name(dir: &str, case: &Case) -> String {
    let suite = dir.strip_prefix("tests/").unwrap_or(dir).replace('/', "_");
    format!("failing__{suite}__{}", case.name)
}

/// Compares `rendered` with the snapshot `name` under `snapshots` (an absolute folder);
/// `Err` when it differs or does not exist yet (insta then writes `NAME.snap.new`
/// beside it for review, see tests/README.md).
pub fn compare_snapshot(
    snapshots: &Path,
    name: &str,
    input: &Path,
    description: &str,
    rendered: &str,
) -> Result<(), String> {
    let mut settings = insta::Settings::clone_current();
    settings.set_snapshot_path(snapshots);
    settings.set_prepend_module_to_snapshot(false);
    settings.set_input_file(input);
    settings.set_description(description);
    settings.set_omit_expression(true);
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        settings.bind(|| insta::assert_snapshot!(name, rendered));
    }));
    result.map_err(|_| format!("the rendered message differs from {name}.snap"))
}

/// Runs every case of the suite folder `dir` (at least `min` of them), checks each
/// against its expectation and its snapshot, and fails with every mismatch.
pub fn check_suite(dir: &str, min: usize) {
    let cases = cases(dir);
    assert!(
        cases.len() >= min,
        "{dir}: expected at least {min} cases, found {}",
        cases.len()
    );
    let snapshots = Path::new(ROOT).join(SNAPSHOTS);
    let mut failures = Vec::new();
    let mut skipped = 0;
    for case in &cases {
        if let Some(reason) = &case.todo {
            println!("SKIP {dir}/{} (TODO: {reason})", case.name);
            skipped += 1;
            continue;
        }
        let run = Faber::new()
            .args(&case.cmd)
            .arg(&case.path)
            .current_dir(ROOT);
        let line = run.describe();
        let out = run.output();
        // No path of this machine in a snapshot (none is printed today).
        let stderr = String::from_utf8_lossy(&out.stderr).replace(ROOT, "[root]");
        let mut problems = Vec::new();
        if let Err(why) = verify(case, out.status.code(), &stderr) {
            problems.push(why);
        }
        let name = snapshot_name(dir, case);
        if let Err(why) = compare_snapshot(&snapshots, &name, &case.path, &line, &stderr) {
            problems.push(why);
        }
        if !problems.is_empty() {
            failures.push(format!(
                "{}: {line}: {}\n{stderr}",
                case.name,
                problems.join("; ")
            ));
        }
    }
    println!(
        "{dir}: {} checked, {skipped} skipped",
        cases.len() - skipped
    );
    assert!(
        failures.is_empty(),
        "{} of {} failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
