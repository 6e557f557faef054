//! Rendered runtime diagnostics land on the user's code (issue 18,
//! docs/diagnostics.md "Runtime errors in library code"):
//! - an error raised inside a bundled library points first at the user's call into it,
//!   with the library frames as labels, named in order;
//! - an error raised while a generated `@ radix backward` companion runs points at the
//!   primal op of the user's function and names the function differentiated;
//! - shape errors name the axes that disagree (also the static SEM023 ones).
//!
//! The programs are the error-matrix cases under tests/errors/; every expected line is
//! written by hand from their source (line and column of the call, the shapes).

mod common;

fn run(file: &str) -> String {
    faber("run", file)
}

fn faber(verb: &str, file: &str) -> String {
    let out = common::faber(&[verb, &format!("tests/errors/{file}")]);
    assert_eq!(out.status.code(), Some(1), "{file} must fail");
    String::from_utf8(out.stderr).expect("UTF-8 diagnostics")
}

/// The first two lines (header and `-->` location) and whether each expected label
/// text appears, in the given order, in the rest.
fn check(stderr: &str, head: &str, at: &str, labels: &[&str]) {
    let mut lines = stderr.lines();
    assert_eq!(lines.next(), Some(head), "header\n{stderr}");
    assert_eq!(lines.next().map(str::trim), Some(at), "location\n{stderr}");
    let rest: Vec<&str> = lines.collect();
    let mut from = 0;
    for want in labels {
        match rest[from..].iter().position(|l| l.contains(want)) {
            Some(i) => from += i + 1,
            None => panic!("no line containing `{want}` after line {from}:\n{stderr}"),
        }
    }
}

#[test]
fn a_library_error_points_at_the_users_call() {
    let err = run("25_library_shape_mismatch.fab");
    check(
        &err,
        "error[RUN013]: matmul: [2, 3] · [2, 3]: the inner dimensions differ (3 against 2: axis 1 of the left, axis 0 of the right)",
        "--> tests/errors/25_library_shape_mismatch.fab:6:11",
        &[
            " 6 │     redde math.matmul(x, w)",
            "raised in `gradus:math::matmul`, called from here",
            " 13 │     nota forward(a, b)",
            "in call to `25_library_shape_mismatch::forward`",
            "╭─[ gradus:math.fab:109:11 ]",
            "redde a · b",
            "raised here, in `gradus:math::matmul`",
        ],
    );
}

#[test]
fn nested_library_frames_are_named_in_order() {
    let err = run("26_nested_library_error.fab");
    check(
        &err,
        "error[RUN013]: attentio: 3 heads do not divide the width 8 of [1, 4, 8]",
        "--> tests/errors/26_nested_library_error.fab:9:20",
        &[
            "raised in `gradus:attention::multi_caput`, called from `gradus:transformer::stratum`, called from here",
        ],
    );
    // Both library frames are shown as labels in their own files.
    assert!(
        err.contains("in call to `gradus:attention::multi_caput`"),
        "{err}"
    );
    assert!(
        err.contains("raised here, in `gradus:attention::multi_caput`"),
        "{err}"
    );
    assert!(err.contains("╭─[ gradus:transformer.fab:"), "{err}");
    assert!(err.contains("╭─[ gradus:attention.fab:"), "{err}");
}

#[test]
fn a_companion_error_points_at_the_primal_op() {
    let err = run("27_companion_error.fab");
    // tanh's backward multiplies the [3, 3] upstream by the [2, 4] derivative.
    check(
        &err,
        "error[RUN013]: multiplica: shapes [3, 3] and [2, 4] do not broadcast (axis 0: 3 against 2; axis 1: 3 against 4; sizes must be equal or 1)",
        "--> tests/errors/27_companion_error.fab:9:11",
        &[
            " 9 │     redde nn.tanh(h)",
            "while computing the gradient of `27_companion_error::net` (in `27_companion_error::grad_net`), at this op",
            " 17 │     nota grad_net(w, x, nihil, up)",
            "in call to `27_companion_error::grad_net`",
        ],
    );
    assert!(!err.contains("gradus:nn.fab"), "{err}");
}

#[test]
fn a_broadcast_error_names_the_axes() {
    let err = run("05_runtime_shape_mismatch.fab");
    check(
        &err,
        "error[RUN013]: addita: shapes [2, 3] and [3, 2] do not broadcast (axis 0: 2 against 3; axis 1: 3 against 2; sizes must be equal or 1)",
        "--> tests/errors/05_runtime_shape_mismatch.fab:6:10",
        &[],
    );
}

#[test]
fn deep_library_recursion_still_reaches_the_users_call() {
    let out = common::faber(&[
        "run",
        "--lib-root",
        "tests/fixtures/libroot",
        "tests/errors/28_deep_library_recursion.fab",
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    // descende(30, …) … descende(0, …): 31 calls, 30 of them from the recursive site.
    check(
        &err,
        "error[RUN001]: index 5 is out of range for length 3",
        "--> tests/errors/28_deep_library_recursion.fab:7:10",
        &[
            "raised in `profunda:arbor::descende` (31 nested calls), called from here",
            "╭─[ profunda:arbor.fab:5:15 ]",
            "in call to `profunda:arbor::descende` (30 nested calls)",
            "raised here, in `profunda:arbor::descende`",
        ],
    );
}

#[test]
fn a_static_shape_error_names_the_axes() {
    let err = faber("check", "04_static_shape_mismatch.fab");
    check(
        &err,
        "error[SEM023]: `·`: [2, 3] · [2, 3]: the inner dimensions differ (3 against 2: axis 1 of the left, axis 0 of the right)",
        "--> tests/errors/04_static_shape_mismatch.fab:6:20",
        &[],
    );
}

#[test]
fn a_demanded_companion_copy_still_names_the_primal() {
    let err = run("29_demanded_companion_error.fab");
    check(
        &err,
        "error[RUN013]: multiplica: shapes [3, 3] and [2, 4] do not broadcast (axis 0: 3 against 2; axis 1: 3 against 4; sizes must be equal or 1)",
        "--> tests/errors/29_demanded_companion_error.fab:9:11",
        &[
            "while computing the gradient of `29_demanded_companion_error::net` (in `29_demanded_companion_error::grad_net`), at this op",
            "in call to `29_demanded_companion_error::grad_net`",
        ],
    );
}
