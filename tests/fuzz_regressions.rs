//! Inputs the fuzz targets (fuzz/, docs/robustness.md) found, replayed through the
//! CLI. Each must end in a diagnostic (exit 1) without a panic or an abort. A case
//! whose fix has not landed is `#[ignore]`d with the reason, per issue 8: the
//! regression test comes before the fix. Inputs live in `tests/fuzz_regressions/`.

mod common;

use common::Faber;

fn faber(args: &[&str]) -> (Option<i32>, String) {
    let out = common::faber(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// No panic, no internal error, exit 1 and a diagnostic of the given family.
fn assert_diagnostic(code: Option<i32>, err: &str, family: &str) {
    assert!(!err.contains("panicked"), "{err}");
    assert!(!err.contains("please report"), "{err}");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.starts_with(&format!("error[{family}")), "{err}");
}

#[test]
fn mutating_method_on_unknown_field_is_a_diagnostic() {
    let file = "tests/fuzz_regressions/panic_mutating_method_on_unknown_field.fab";
    for verb in ["check", "run"] {
        let (code, err) = faber(&[verb, file]);
        assert_diagnostic(code, &err, "SEM");
    }
}

#[test]
fn genus_method_on_unknown_field_is_a_diagnostic() {
    let file = "tests/fuzz_regressions/panic_genus_method_on_unknown_field.fab";
    for verb in ["check", "run"] {
        let (code, err) = faber(&[verb, file]);
        assert_diagnostic(code, &err, "SEM");
    }
}

#[test]
fn label_after_multibyte_text_in_another_file_is_rendered() {
    let file = "tests/fuzz_regressions/panic_multibyte_secondary_file/main.fab";
    let (code, err) = faber(&["check", file]);
    assert_diagnostic(code, &err, "SEM");
    assert!(err.contains("main.fab:4:12"), "{err}");
    assert!(err.contains("imported here"), "{err}");
}

/// Runs `faber run FILE` with its address space capped at `limit_mb` (through `sh -c
/// 'ulimit -v'`), so an unbounded allocation fails fast instead of exhausting the
/// machine. Returns the exit code (`None` on a signal) and stderr.
fn run_capped(file: &str, limit_mb: u64) -> (Option<i32>, String) {
    let out = Faber::new()
        .args(["run", file])
        .memory_cap_mib(limit_mb)
        .output();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn text_doubling_is_a_diagnostic_not_an_abort() {
    // Fixed by the default 1 GiB text limit (--max-text-bytes). 4 GiB of address
    // space leaves room for the last allowed text (1 GiB) and its 512 MiB halves;
    // without the limit the run would hit the cap instead of exhausting the machine.
    let (code, err) = run_capped("tests/fuzz_regressions/oom_text_doubling.fab", 4096);
    assert!(!err.contains("memory allocation of"), "{err}");
    assert_diagnostic(code, &err, "RUN012");
}
