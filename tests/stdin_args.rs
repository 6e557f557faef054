//! `lege` and `incipit argumenta` through the binary where the run corpus
//! (tests/run/, `.in` / `.args` files) cannot reach: input that is not UTF-8, a
//! program read from standard input, a command line that does not fit.

mod common;

use common::{text, Faber};

const LINES: &str = "tests/run/363_lege_lines.fab";
const OPTIONS: &str = "tests/run/360_argumenta_options.fab";

#[test]
fn a_line_that_is_not_utf8_is_run017() {
    let out = Faber::new()
        .args(["run", LINES])
        .stdin(b"ok\n\xff\xfe\n")
        .output();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error[RUN017]: cannot read standard input: a line that is not valid UTF-8"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(text(&out.stdout), "1: [ok]\n");
}

#[test]
fn a_program_read_from_stdin_finds_its_input_at_the_end() {
    let program = "incipit {\n    nota lege est nihil\n}\n";
    let out = Faber::new().args(["run", "-"]).stdin(program).output();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "verum\n");
}

#[test]
fn a_command_line_that_does_not_fit_is_run023_at_the_binding() {
    for (args, message) in [
        (&["--nomen"][..], "option `--nomen` needs a value"),
        (
            &["--quotiens", "tria"][..],
            "`quotiens` expects an integer, found `tria`",
        ),
        (&["-x"][..], "unknown option `-x`"),
        (&["-cz"][..], "unknown option `-z` in `-cz`"),
    ] {
        let out = Faber::new()
            .args(["run", OPTIONS, "--"])
            .args(args)
            .output();
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(&format!("error[RUN024]: {message}")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("360_argumenta_options.fab:11:19"),
            "{args:?}: {err}"
        );
        assert!(
            text(&out.stdout).is_empty(),
            "{args:?}: the body must not run"
        );
    }
}
