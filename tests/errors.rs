//! The error matrix (issue 8): one program per failure class under `tests/errors/`,
//! each a failing program (tests/README.md: `NN_class.err` names the command, the
//! exit code, the code and the location, and `tests/snapshots/failing__errors__NN_class.snap`
//! holds the rendered message). Cases marked `todo:` have no diagnostic yet and are
//! skipped (fuzz/run.sh skips them too when it seeds). Expectations were written by
//! hand from the source positions, not by running faber.
//!
//! The unit tests below check the checker itself (tests/common/failing.rs): a wrong
//! code, a wrong position, a wrong exit, a panic and a changed message each fail.

mod common;

use common::failing::{self, Case};
use std::path::{Path, PathBuf};

#[test]
fn every_failure_class_reports_its_diagnostic() {
    failing::check_suite("tests/errors", 22);
}

#[test]
fn location_matching() {
    use failing::location_matches;
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

fn spec(text: &str) -> Result<Case, String> {
    failing::parse_spec("tests/errors", "07_x", text, |p| p.ends_with("07_x.fab"))
}

#[test]
fn the_expectation_format_reads_every_key_and_its_defaults() {
    let full = spec(
        "# a comment\ncmd: check --lib-root d\npath: 07_x/main.fab\nexit: 2\ncode: SEM010\nat: 07_x/b.fab:1:12\ntodo: later\n",
    )
    .unwrap();
    assert_eq!(full.cmd, ["check", "--lib-root", "d"]);
    assert_eq!(full.path, Path::new("tests/errors/07_x/main.fab"));
    assert_eq!(full.exit, 2);
    assert_eq!(full.code, "SEM010");
    assert_eq!(full.at, "07_x/b.fab:1:12");
    assert_eq!(full.todo.as_deref(), Some("later"));

    let short = spec("code: RUN001\nat: 4:14\n").unwrap();
    assert_eq!(short.cmd, ["run"]);
    assert_eq!(short.path, Path::new("tests/errors/07_x.fab"));
    assert_eq!(short.exit, 1);
    assert_eq!(short.todo, None);
    // No `07_y.fab`: the case is the folder.
    let folder = failing::parse_spec("tests/errors", "07_y", "code: A001\nat: 1:1", |_| false);
    assert_eq!(folder.unwrap().path, PathBuf::from("tests/errors/07_y"));

    assert!(spec("at: 4:14\n").unwrap_err().contains("no `code:`"));
    assert!(spec("code: RUN001\n").unwrap_err().contains("no `at:`"));
    assert!(spec("code: RUN001\nat: 4:14\ncolour: red\n")
        .unwrap_err()
        .contains("unknown key"));
    assert!(spec("code: RUN001\ncode: RUN002\nat: 4:14\n")
        .unwrap_err()
        .contains("twice"));
    assert!(spec("RUN001\n4:14\n").is_err());
}

/// A report as faber renders it: the header, then the `-->` line.
const REPORT: &str = "error[RUN013]: shapes do not fit\n  --> tests/errors/07_x.fab:6:10\n   │\n";

#[test]
fn the_checker_accepts_the_expected_report() {
    let case = spec("code: RUN013\nat: 6:10\n").unwrap();
    assert_eq!(failing::verify(&case, Some(1), REPORT), Ok(()));
    // A warning before the error does not count as the first error.
    let warned = format!("warning[W001]: x\n  --> a.fab:1:1\n{REPORT}");
    assert_eq!(failing::verify(&case, Some(1), &warned), Ok(()));
}

#[test]
fn the_checker_catches_a_wrong_code_position_exit_or_panic() {
    let case = spec("code: RUN013\nat: 6:10\n").unwrap();
    let wrong = |case: &Case, status, stderr: &str| {
        failing::verify(case, status, stderr).expect_err("the checker must reject this")
    };
    // Wrong code (also a code that only starts the same way).
    assert!(
        wrong(&spec("code: RUN001\nat: 6:10").unwrap(), Some(1), REPORT).contains("want RUN001")
    );
    assert!(wrong(&spec("code: RUN01\nat: 6:10").unwrap(), Some(1), REPORT).contains("want RUN01"));
    // Wrong line, wrong column, a line that only ends the same way.
    for at in ["7:10", "6:11", "16:10"] {
        let case = spec(&format!("code: RUN013\nat: {at}")).unwrap();
        assert!(wrong(&case, Some(1), REPORT).contains("location"), "{at}");
    }
    assert!(wrong(
        &spec("code: RUN013\nat: 16:10").unwrap(),
        Some(1),
        &REPORT.replace(":6:10", ":116:10")
    )
    .contains("location"));
    // Wrong file for a `file:line:col` expectation.
    let other = spec("code: RUN013\nat: b.fab:6:10").unwrap();
    assert!(wrong(&other, Some(1), REPORT).contains("location"));
    // Wrong exit, a signal, no error at all, no location line, a panic.
    assert!(wrong(&case, Some(0), REPORT).contains("exit"));
    assert!(wrong(&case, None, REPORT).contains("exit"));
    assert!(wrong(&case, Some(1), "").contains("no `error[…]` line"));
    assert!(wrong(&case, Some(1), "error[RUN013]: x\n").contains("no `-->` line"));
    let panicked = format!("{REPORT}thread 'faber' panicked at src/x.rs:1:1\n");
    assert!(wrong(&case, Some(1), &panicked).contains("panicked"));
    assert!(
        wrong(&case, Some(1), &format!("{REPORT}please report this bug\n"))
            .contains("please report")
    );
}

/// The rendered message is compared in full: a snapshot that differs by one character,
/// or that does not exist, fails. (Runs in a scratch folder; under
/// `INSTA_UPDATE=always` insta overwrites instead of comparing, so the check is moot.)
#[test]
fn the_checker_catches_a_changed_message() {
    if std::env::var("INSTA_UPDATE").is_ok_and(|v| v == "always")
        || std::env::var_os("INSTA_FORCE_PASS").is_some()
    {
        println!("skipped: INSTA_UPDATE=always / INSTA_FORCE_PASS accept every snapshot");
        return;
    }
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("failing-snapshots-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = Path::new("tests/errors/07_x.fab");
    let compare = |name: &str, text: &str| {
        failing::compare_snapshot(&dir, name, input, "faber run tests/errors/07_x.fab", text)
    };
    // A snapshot as the suites store it.
    std::fs::write(
        dir.join("kept.snap"),
        format!("---\nsource: tests/common/failing.rs\ndescription: faber run tests/errors/07_x.fab\ninput_file: tests/errors/07_x.fab\n---\n{REPORT}"),
    )
    .unwrap();
    assert_eq!(compare("kept", REPORT), Ok(()));
    let changed = REPORT.replace("do not fit", "do not fit!");
    assert!(
        compare("kept", &changed).is_err(),
        "a changed message passed"
    );
    assert!(
        compare("absent", REPORT).is_err(),
        "a missing snapshot passed"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
