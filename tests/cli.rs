//! End-to-end tests of the `faber` binary: exit codes, which stream gets what,
//! diagnostic headers and locations, colour rules, packages and manifests.

mod common;

use common::{Faber, BIN};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `faber` with colour-related variables cleared (`NO_COLOR` too: these tests
/// check the colour rules), so the host environment cannot change what the tests see.
fn faber(args: &[&str]) -> Output {
    faber_env(args, &[])
}

fn faber_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut run = Faber::new()
        .args(args)
        .current_dir(common::ROOT)
        .env_remove("NO_COLOR");
    for (k, v) in env {
        run = run.env(k, v);
    }
    run.output()
}

fn code(o: &Output) -> i32 {
    o.status
        .code()
        .expect("faber exited normally, not by a signal")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh, empty scratch directory under cargo's per-target temp dir.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("cli-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

fn write(path: &Path, bytes: impl AsRef<[u8]>) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create parent dir");
    }
    std::fs::write(path, bytes).expect("write test file");
}

fn arg(p: &Path) -> &str {
    p.to_str().expect("scratch paths are UTF-8")
}

const BAD: &str = "incipit {\n    nota \"salve\"\n    varia numerus x ← ]\n}\n";

#[test]
fn check_hello_is_silent_and_succeeds() {
    let o = faber(&["check", "examples/hello.fab"]);
    assert_eq!(code(&o), 0, "stderr:\n{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    assert_eq!(stdout(&o), "");
}

#[test]
fn syntax_error_reports_code_and_location() {
    let dir = scratch("syntax-error");
    let file = dir.join("bad.fab");
    write(&file, BAD);
    let o = faber(&["check", arg(&file)]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.starts_with("error["), "{err}");
    assert!(
        err.contains(&format!("  --> {}:3:23\n", file.display())),
        "{err}"
    );
    assert_eq!(stdout(&o), "");
}

#[test]
fn missing_path_is_cli001() {
    let o = faber(&["check", "no/such/file.fab"]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[CLI001]"), "{err}");
    assert!(err.contains("no/such/file.fab"), "{err}");
}

#[test]
fn directory_without_manifest_is_cli001() {
    let dir = scratch("no-manifest");
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("error[CLI001]"), "{}", stderr(&o));
}

#[test]
fn invalid_utf8_is_lex014() {
    let dir = scratch("utf8");
    let file = dir.join("latin1.fab");
    write(&file, b"incipit {\n    nota \"caf\xe9\"\n}\n");
    let o = faber(&["check", arg(&file)]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[LEX014]"), "{err}");
    assert!(err.contains(&format!("{}:2:14", file.display())), "{err}");
}

#[test]
fn no_colour_when_asked() {
    let dir = scratch("colour");
    let file = dir.join("bad.fab");
    write(&file, BAD);
    let never = faber_env(
        &["--color", "never", "check", arg(&file)],
        &[("FORCE_COLOR", "1")],
    );
    assert_eq!(code(&never), 1);
    assert!(!stderr(&never).contains("\x1b["), "{}", stderr(&never));
    let no_color = faber_env(
        &["check", arg(&file)],
        &[("NO_COLOR", "1"), ("FORCE_COLOR", "1")],
    );
    assert!(
        !stderr(&no_color).contains("\x1b["),
        "{}",
        stderr(&no_color)
    );
    // Not a terminal and nothing forced: plain.
    let auto = faber(&["check", arg(&file)]);
    assert!(!stderr(&auto).contains("\x1b["), "{}", stderr(&auto));
}

#[test]
fn colour_when_forced() {
    let dir = scratch("colour-forced");
    let file = dir.join("bad.fab");
    write(&file, BAD);
    let always = faber(&["--color", "always", "check", arg(&file)]);
    assert!(stderr(&always).contains("\x1b["), "{}", stderr(&always));
    let forced = faber_env(&["check", arg(&file)], &[("FORCE_COLOR", "1")]);
    assert!(stderr(&forced).contains("\x1b["), "{}", stderr(&forced));
}

#[test]
fn package_directory_checks_its_entry() {
    let dir = scratch("package");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"salve\"\nversion = \"0.1.0\"\nedition = \"2026\"\n\n[build]\nkind = \"bin\"\n",
    );
    write(
        &dir.join("src/main.fab"),
        "incipit {\n    nota \"salve\"\n}\n",
    );
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 0, "stderr:\n{}", stderr(&o));
    assert_eq!(stderr(&o), "");

    // -v shows the status line and the note about the ignored [build] table.
    let o = faber(&["-v", "check", arg(&dir)]);
    assert_eq!(code(&o), 0);
    let err = stderr(&o);
    assert!(err.contains("Checking salve v0.1.0"), "{err}");
    assert!(err.contains("note[CLI002]"), "{err}");
}

#[test]
fn package_entry_errors_point_into_the_entry() {
    let dir = scratch("package-bad-entry");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[paths]\nsource = \"lib\"\nentry = \"start.fab\"\n",
    );
    let entry = dir.join("lib/start.fab");
    write(&entry, BAD);
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 1);
    assert!(
        stderr(&o).contains(&format!("{}:3:23", entry.display())),
        "{}",
        stderr(&o)
    );
}

#[test]
fn missing_package_entry_is_cli001() {
    let dir = scratch("package-no-entry");
    write(&dir.join("faber.toml"), "[package]\nname = \"p\"\n");
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[CLI001]"), "{err}");
    assert!(err.contains("main.fab"), "{err}");
}

#[test]
fn malformed_manifest_is_cli002_with_location() {
    let dir = scratch("bad-manifest");
    let manifest = dir.join("faber.toml");
    write(&manifest, "[package]\nname = \"p\"\nversion = 0.1.0\n");
    write(&dir.join("src/main.fab"), "incipit {\n}\n");
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    assert!(err.contains("error[CLI002]"), "{err}");
    assert!(
        err.contains(&format!("--> {}:3:", manifest.display())),
        "{err}"
    );
    assert!(
        err.contains("version = 0.1.0"),
        "snippet shows the bad line:\n{err}"
    );
}

#[test]
fn unsupported_locale_is_cli002() {
    let dir = scratch("locale");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[reader]\nlocale = \"xx\"\n",
    );
    write(&dir.join("src/main.fab"), "incipit {\n}\n");
    let o = faber(&["check", arg(&dir)]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("error[CLI002]"), "{}", stderr(&o));
    // The diagnostic names the locales faber knows (docs/language.md § Reader locales).
    assert!(stderr(&o).contains("`en`"), "{}", stderr(&o));
    // A file inside the package picks up the same settings.
    let o = faber(&["check", arg(&dir.join("src/main.fab"))]);
    assert_eq!(code(&o), 1);
    assert!(stderr(&o).contains("error[CLI002]"), "{}", stderr(&o));
}

#[test]
fn several_errors_end_with_a_count() {
    let dir = scratch("many");
    let file = dir.join("many.fab");
    write(
        &file,
        "incipit {\n    varia numerus a ← ]\n    varia numerus b ← ]\n}\n",
    );
    let o = faber(&["check", arg(&file)]);
    assert_eq!(code(&o), 1);
    let err = stderr(&o);
    let errors = err.matches("error[").count();
    if errors > 1 {
        assert!(
            err.trim_end().ends_with(&format!("error: {errors} errors")),
            "{err}"
        );
    }
}

#[test]
fn unknown_verb_is_usage_error() {
    let o = faber(&["frobnicate"]);
    assert_eq!(code(&o), 2);
    let o = faber(&["check"]);
    assert_eq!(code(&o), 2, "a missing <path> is a usage error");
    let o = faber(&["--color", "sometimes", "check", "examples/hello.fab"]);
    assert_eq!(code(&o), 2);
}

#[test]
fn every_verb_has_help() {
    for args in [
        &["--help"][..],
        &["check", "--help"],
        &["parse", "--help"],
        &["help", "check"],
    ] {
        let o = faber(args);
        assert_eq!(code(&o), 0, "{args:?}");
        assert!(stdout(&o).contains("Usage:"), "{args:?}: {}", stdout(&o));
    }
}

#[test]
fn parse_prints_the_tree_on_stdout() {
    let o = faber(&["parse", "examples/hello.fab"]);
    assert_eq!(code(&o), 0, "stderr:\n{}", stderr(&o));
    assert!(!stdout(&o).trim().is_empty());
    assert_eq!(stderr(&o), "");
}

#[test]
fn parse_error_prints_nothing_on_stdout() {
    let dir = scratch("parse-error");
    let file = dir.join("bad.fab");
    write(&file, BAD);
    let o = faber(&["parse", arg(&file)]);
    assert_eq!(code(&o), 1);
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("error["));
}

#[test]
fn deep_nesting_is_a_diagnostic_or_fine_never_a_crash() {
    let dir = scratch("deep");
    let file = dir.join("deep.fab");
    let depth = 20_000;
    let src = format!(
        "incipit {{\n    varia numerus x ← {}1{}\n}}\n",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    write(&file, src);
    let o = faber(&["check", arg(&file)]);
    let c = code(&o);
    assert!(c == 0 || c == 1, "exit {c}, stderr:\n{}", stderr(&o));
    assert!(!stderr(&o).contains("internal error"), "{}", stderr(&o));
}

#[test]
fn max_steps_stops_a_loop_that_does_not_end() {
    let dir = scratch("max-steps");
    let endless = dir.join("endless.fab");
    write(
        &endless,
        "functio f(numerus n) → numerus {\n    redde n + 1\n}\n\nincipit {\n    varia numerus i ← 0\n    dum verum {\n        i ← f(i)\n    }\n}\n",
    );
    let o = faber(&["run", "--max-steps", "100000", arg(&endless)]);
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("error[RUN014]"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"));

    // 1 call (incipit) + 100 iterations = 101 steps: 101 is enough, 100 is not.
    let finite = dir.join("finite.fab");
    write(
        &finite,
        "incipit {\n    varia numerus s ← 0\n    itera ab 0 ‥ 100 fixum i {\n        s ← s + i\n    }\n    nota s\n}\n",
    );
    let ok = faber(&["run", "--max-steps", "101", arg(&finite)]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
    assert_eq!(stdout(&ok), "4950\n");
    let over = faber(&["run", "--max-steps", "100", arg(&finite)]);
    assert_eq!(code(&over), 1);
    assert!(stderr(&over).contains("error[RUN014]"));
    assert!(stderr(&over).contains(":3:5"), "{}", stderr(&over));
}

/// Runs `faber args…` in `dir` with `input` on its standard input.
fn faber_stdin(dir: &Path, args: &[&str], input: impl AsRef<[u8]>) -> Output {
    Faber::new()
        .args(args)
        .current_dir(dir)
        .stdin(input)
        .output()
}

#[test]
fn run_dash_reads_the_program_from_stdin() {
    let dir = scratch("stdin-run");
    // Relative imports are looked up from the current directory.
    write(
        &dir.join("lib/util.fab"),
        "functio duplex(numerus n) → numerus {\n    redde 2 * n\n}\n",
    );
    let program = "importa ex \"./lib/util\" privata u\nincipit {\n    nota u.duplex(21)\n    nota \"salve\"\n}\n";
    let o = faber_stdin(&dir, &["run", "-"], program);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "42\nsalve\n");

    // Program arguments still follow `--`.
    let args = "incipit {\n    nota hospes.argumenta()\n}\n";
    let o = faber_stdin(&dir, &["run", "-", "--", "a", "b"], args);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stdout(&o), "[a, b]\n");
}

#[test]
fn diagnostics_from_stdin_are_named_stdin() {
    let dir = scratch("stdin-check");
    let bad = "incipit {\n    nota nomen_ignotum\n}\n";
    for verb in ["check", "run"] {
        let o = faber_stdin(&dir, &[verb, "-"], bad);
        assert_eq!(code(&o), 1, "{verb}: {}", stderr(&o));
        assert!(stderr(&o).contains("error[SEM"), "{verb}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("<stdin>:2:10"),
            "{verb}: {}",
            stderr(&o)
        );
        assert_eq!(stdout(&o), "", "{verb}");
    }
    let o = faber_stdin(&dir, &["check", "-"], "incipit {\n    nota 1\n}\n");
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(stderr(&o), "");
    // Bytes that are not UTF-8 are LEX014, as for a file.
    let o = faber_stdin(&dir, &["check", "-"], b"incipit {\n    nota \"\xff\"\n}\n");
    assert_eq!(code(&o), 1, "{}", stderr(&o));
    assert!(stderr(&o).contains("error[LEX014]"), "{}", stderr(&o));
    assert!(stderr(&o).contains("<stdin>:2:11"), "{}", stderr(&o));
}

#[test]
fn a_printed_line_reaches_a_pipe_before_the_program_ends() {
    use std::io::BufRead;
    // The program prints a line and then blocks reading its standard input to the
    // end; the line must be on the pipe while it waits, not only at exit.
    let dir = scratch("line-buffered");
    let file = dir.join("blocks.fab");
    write(
        &file,
        "incipit {\n    nota \"primum\"\n    fixum textus t ← hospes.lege_textum(\"/dev/stdin\")\n    nota \"secundum §\"(t.longitudo())\n}\n",
    );
    let mut child = Faber::new()
        .args(["run", arg(&file)])
        .command()
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the faber binary starts");
    let stdin = child.stdin.take().expect("stdin is piped");
    let out = child.stdout.take().expect("stdout is piped");
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = std::io::BufReader::new(out).lines();
        let first = lines.next();
        let _ = tx.send(first.map(|l| l.unwrap_or_default()));
        lines.map(|l| l.unwrap_or_default()).collect::<Vec<_>>()
    });
    let first = rx.recv_timeout(std::time::Duration::from_secs(30));
    // Still running: it waits for its standard input, which is open.
    let running = child.try_wait().expect("query the child").is_none();
    drop(stdin);
    let status = child.wait().expect("faber ends");
    let rest = reader.join().expect("the reader thread ends");
    assert_eq!(
        first,
        Ok(Some("primum".to_string())),
        "the first line did not arrive in time"
    );
    assert!(running, "the program ended before its stdin was closed");
    assert_eq!(status.code(), Some(0));
    assert_eq!(rest, vec!["secundum 0".to_string()]);
}

#[test]
fn batched_output_keeps_every_line_and_its_order_with_stderr() {
    // Many lines to a pipe (written out in batches), stderr lines between them: on one
    // shared pipe everything arrives, in program order.
    let dir = scratch("line-order");
    let file = dir.join("order.fab");
    write(
        &file,
        "incipit {\n    itera ab 0 ‥ 20000 fixum i {\n        nota i\n        si i % 5000 ≡ 0 ergo mone \"mone §\"(i)\n    }\n    nota \"finis\"\n}\n",
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("'{BIN}' run '{}' 2>&1 | cat", arg(&file)))
        .output()
        .expect("sh runs");
    let text = stdout(&o);
    let mut want = Vec::new();
    for i in 0..20000 {
        want.push(i.to_string());
        if i % 5000 == 0 {
            want.push(format!("mone {i}"));
        }
    }
    want.push("finis".to_string());
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(
        got.len(),
        want.len(),
        "{}",
        &text[text.len().saturating_sub(300)..]
    );
    assert!(got.iter().zip(&want).all(|(g, w)| g == w));
}
