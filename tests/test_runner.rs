//! `faber test`: the report format, filters and exit codes, and the library suites.

mod common;

fn faber(args: &[&str]) -> (String, i32) {
    let out = common::faber(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn every_outcome_is_reported() {
    let (out, code) = faber(&["test", "tests/testrunner/mixed.proba"]);
    assert_eq!(code, 1, "{out}");
    let want = "\
PASS tests/testrunner/mixed.proba::exterior::transit
FAIL tests/testrunner/mixed.proba::exterior::deficit
    adfirma failed: duplex(2) ≡ 5
FAIL tests/testrunner/mixed.proba::exterior::nuntius
    duplex(1) non est 3
SKIP tests/testrunner/mixed.proba::exterior::omissa
PASS tests/testrunner/mixed.proba::exterior/interior::profunda
2 passed, 2 failed, 0 blocked, 1 skipped
";
    assert_eq!(out, want);
}

#[test]
fn filters_select_cases() {
    let (out, code) = faber(&["test", "tests/testrunner", "--tag", "celer"]);
    assert_eq!(code, 0);
    assert!(
        out.ends_with("1 passed, 0 failed, 0 blocked, 0 skipped\n"),
        "{out}"
    );
    let (out, _) = faber(&["test", "tests/testrunner", "--name", "deficit"]);
    assert!(
        out.ends_with("0 passed, 1 failed, 0 blocked, 0 skipped\n"),
        "{out}"
    );
    let (out, _) = faber(&["test", "tests/testrunner", "--filter", "interior"]);
    assert!(
        out.ends_with("1 passed, 0 failed, 0 blocked, 0 skipped\n"),
        "{out}"
    );
}

#[test]
fn json_report_has_the_upstream_shape() {
    let (out, code) = faber(&["test", "tests/testrunner", "--json", "--suite", "interior"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with(
            "{\"success\":true,\"passed\":1,\"failed\":0,\"blocked\":0,\"skipped\":0,\"cases\":[{"
        ),
        "{out}"
    );
    assert!(out.contains("\"path\":\"tests/testrunner/mixed.proba::exterior/interior::profunda\""));
}

#[test]
fn a_file_that_does_not_compile_is_blocked() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-blocked");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.proba");
    std::fs::write(&file, "proba \"x\" { adfirma ignotum }\n").unwrap();
    let (out, code) = faber(&["test", file.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with("0 passed, 0 failed, 1 blocked, 0 skipped\n"),
        "{out}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn norma_suites_pass() {
    let (out, code) = faber(&["test", "stdlib"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 failed, 0 blocked"), "{out}");
}

#[test]
fn gradus_suites_pass() {
    let (out, code) = faber(&["test", "gradus-fab"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(" 0 failed, 0 blocked"), "{out}");
}

#[test]
fn setup_and_teardown_run_around_each_test() {
    // tests/testhooks/acta.proba records the order in a list its outermost setup binds;
    // its second test leaves the list ending in another word, so the inner teardown's
    // assertion fails after the body has passed.
    let (out, code) = faber(&["test", "tests/testhooks/acta.proba"]);
    assert_eq!(code, 1, "{out}");
    let want = "\
PASS tests/testhooks/acta.proba::exterior/interior::acta
FAIL tests/testhooks/acta.proba::exterior/interior::postpara deficit
    adfirma failed: acta.ultimus() ≡ \"corpus\"
1 passed, 1 failed, 0 blocked, 0 skipped
";
    assert_eq!(out, want);
}

#[test]
fn only_omnia_may_follow_a_setup_keyword() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-hooks");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("semel.proba");
    std::fs::write(
        &file,
        "probandum \"s\" {\n    praepara semel {\n        fixum _ x ← 1\n    }\n    proba \"p\" {\n        adfirma verum\n    }\n}\n",
    )
    .unwrap();
    let out = common::faber(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.starts_with("error[SEM014]: `semel` after a setup or teardown keyword")
            && err.contains("semel.proba:2:14"),
        "{err}"
    );
}
