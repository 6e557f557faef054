//! CLI programs with commands (docs/language.md § "Commands"): `@ imperia` mounts a
//! module's `@ imperium` functions under a group, `--help` describes the level asked
//! about and exits 0, a command line that names no command is RUN024 (exit 1), and the
//! annotations that cannot work are SEM021 at compile time. A command module checked
//! on its own reads its package entry's `ubique` options.

mod common;

use std::path::{Path, PathBuf};

use common::{faber, text};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("commands", name)
}

fn write(path: &Path, body: &str) {
    common::write_file(path, body)
}

/// `faber ARGS…`: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    let o = faber(args);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

const MAIN: &str = "importa ex \"./mandata/salve\" privata * ut salve\n\n@ cli \"exemplum\"\n@ versio \"2.0\"\n@ descriptio \"Exemplum mandatorum\"\n@ optio verbose brevis \"v\" longum \"verbose\" ubique descriptio \"Plura dic\"\n@ imperia \"salve\" ex salve\nincipit argumenta args {}\n\n@ imperium \"versio\"\nfunctio versio() {\n    nota \"2.0\"\n}\n";

const SALVE: &str = "@ descriptio \"Salutationes\"\nincipit {}\n\n@ imperium \"dic\"\n@ alias \"d\"\n@ descriptio \"Saluta\"\n@ operandus textus nomen descriptio \"quem\"\nfunctio dic() argumenta args → vacuum {\n    si args.verbose {\n        nota \"verbose\"\n    }\n    nota \"Salve, §!\"(args.nomen)\n}\n\n@ imperium \"vale\"\n@ optio formaliter longum \"formaliter\"\n@ operandus textus nomen\nfunctio vale() argumenta args → vacuum {\n    si args.formaliter {\n        nota \"Vale, §.\"(args.nomen)\n    } secus {\n        nota \"Ave atque vale, §!\"(args.nomen)\n    }\n}\n";

/// The example package, written afresh in its own folder `name` (tests run in
/// parallel: each writes its own copy).
fn package(name: &str) -> PathBuf {
    let dir = scratch(name);
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"exemplum\"\n[paths]\nsource = \".\"\nentry = \"main.fab\"\n",
    );
    write(&dir.join("main.fab"), MAIN);
    write(&dir.join("mandata/salve.fab"), SALVE);
    dir
}

#[test]
fn mounted_commands_run_with_their_records() {
    let dir = package("package-1");
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["run", d, "--", "salve", "dic", "Marce"]);
    assert_eq!((code, out.as_str()), (0, "Salve, Marce!\n"), "{err}");
    // The alias, and the `ubique` option after the command.
    let (code, out, err) = run(&["run", d, "--", "salve", "d", "-v", "Iulia"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "verbose\nSalve, Iulia!\n"),
        "{err}"
    );
    let (code, out, err) = run(&["run", d, "--", "salve", "vale", "--formaliter", "Tite"]);
    assert_eq!((code, out.as_str()), (0, "Vale, Tite.\n"), "{err}");
    let (code, out, err) = run(&["run", d, "--", "versio"]);
    assert_eq!((code, out.as_str()), (0, "2.0\n"), "{err}");
}

#[test]
fn help_describes_the_level_asked_about() {
    let dir = package("package-2");
    let d = dir.to_str().unwrap();
    let (code, out, _) = run(&["run", d, "--", "--help"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "exemplum 2.0\nExemplum mandatorum\n\nUsage: exemplum [options] <command>\n\nCommands:\n  versio\n  salve ...  Salutationes\n\nOptions:\n  -v, --verbose  Plura dic\n  -h, --help     Show this help\n      --version  Show the version\n"
    );
    let (code, out, _) = run(&["run", d, "--", "salve", "dic", "-h"]);
    assert_eq!(code, 0);
    assert_eq!(
        out,
        "Saluta\n\nUsage: exemplum salve dic [options] <nomen>\n\nArguments:\n  <nomen>  quem\n\nOptions:\n  -v, --verbose  Plura dic\n  -h, --help     Show this help\n"
    );
    let (code, out, _) = run(&["run", d, "--", "--version"]);
    assert_eq!((code, out.as_str()), (0, "exemplum 2.0\n"));
}

#[test]
fn a_command_line_that_names_no_command_is_run024() {
    let dir = package("package-3");
    let d = dir.to_str().unwrap();
    let (code, out, err) = run(&["run", d]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("error[RUN024]: a command is needed: versio, salve"),
        "{err}"
    );
    let (code, _, err) = run(&["run", d, "--", "salve", "dicc", "M"]);
    assert_eq!(code, 1);
    assert!(
        err.contains(
            "unknown command `dicc` (did you mean `dic`?); the commands of `salve` are dic, vale"
        ),
        "{err}"
    );
    let (code, _, err) = run(&["run", d, "--", "salve", "dic"]);
    assert_eq!(code, 1);
    assert!(err.contains("missing the operand `nomen`"), "{err}");
    // It points at the `argumenta` binding of the entry.
    assert!(err.contains("main.fab:8:19"), "{err}");
}

#[test]
fn a_command_module_checks_with_its_package_entry() {
    let dir = package("package-4");
    let module = dir.join("mandata/salve.fab");
    let (code, _, err) = run(&["check", module.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    // Outside its package it does not know `verbose`.
    let lone = scratch("lone");
    let copy = lone.join("salve.fab");
    write(&copy, SALVE);
    let (code, _, err) = run(&["check", copy.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[SEM007]") && err.contains("`verbose`"),
        "{err}"
    );
}

#[test]
fn annotations_that_cannot_work_are_sem021() {
    let dir = scratch("bad");
    let cases = [
        (
            "imperia.fab",
            "@ imperia \"x\" ex nusquam\nincipit argumenta args {}\n",
            "`nusquam` is not an imported module",
        ),
        (
            "params.fab",
            "incipit {}\n\n@ imperium \"f\"\nfunctio f(numerus n) {\n    nota n\n}\n",
            "takes its command line through `argumenta`, not parameters",
        ),
        (
            "default.fab",
            "@ optio n typus numerus vel \"tres\"\nincipit argumenta args {\n    nota args.n\n}\n",
            "the default of `n` (`vel …`) must be a `numerus`",
        ),
        (
            "operands.fab",
            "@ operandus textus x\nincipit argumenta args {}\n\n@ imperium \"f\"\nfunctio f() {\n    nota 1\n}\n",
            "a program with commands reads its operands in the commands",
        ),
        (
            "rest.fab",
            "@ operandus ceteri textus xs\n@ operandus textus y\nincipit argumenta args {\n    nota args.y\n}\n",
            "must be the last operand",
        ),
        (
            "method.fab",
            "genus G {\n    functio m() argumenta a {\n        nota 1\n    }\n}\n\nincipit {}\n",
            "only a top-level function takes `argumenta`",
        ),
    ];
    for (name, src, want) in cases {
        let f = dir.join(name);
        write(&f, src);
        let (code, _, err) = run(&["check", f.to_str().unwrap()]);
        assert_eq!(code, 1, "{name}: {err}");
        assert!(
            err.contains("error[SEM021]") && err.contains(want),
            "{name}: {err}"
        );
    }
    // A command is called by the command line, never by the program.
    let f = dir.join("call.fab");
    write(
        &f,
        "@ imperium \"f\"\nfunctio f() argumenta a {\n    nota 1\n}\n\nincipit {\n    f()\n}\n",
    );
    let (code, _, err) = run(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[SEM003]") && err.contains("the command line calls it"),
        "{err}"
    );
    // `argumenta` is the only word allowed there.
    let f = dir.join("marker.fab");
    write(&f, "functio f() nomina a {\n}\n\nincipit {}\n");
    let (code, _, err) = run(&["check", f.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(
        err.contains("error[PARSE001]") && err.contains("unexpected `nomina` after the parameters"),
        "{err}"
    );
}

#[test]
fn commands_in_another_locale() {
    let dir = scratch("english");
    let f = dir.join("main.fab");
    write(
        &f,
        "+++\nlocale = \"en\"\n+++\n@ cli \"hello\"\n@ optio loud brevis \"l\" ubique\nmain args a {}\n\n@ imperium \"greet\"\n@ operandus textus who\nfn greet() args a {\n    if a.loud {\n        print \"HELLO, §!\"(a.who)\n    } else {\n        print \"hello, §\"(a.who)\n    }\n}\n",
    );
    let (code, out, err) = run(&["run", f.to_str().unwrap(), "--", "-l", "greet", "Ann"]);
    assert_eq!((code, out.as_str()), (0, "HELLO, Ann!\n"), "{err}");
}
