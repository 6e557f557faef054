//! Imports and paths (docs/robustness.md, "Paths and special files"): a relative
//! import names the same file from any working directory; imports, symlinks and a
//! manifest's entry stay inside the package root; FIFOs, devices and symlink loops
//! fail at once with a clear message; `faber test` walks each directory once.
//!
//! Every run has a deadline: a regression that hangs (a FIFO opened, `/dev/zero`
//! read to the end, a walk that multiplies) fails the test after a bounded time
//! instead of hanging the suite.

#![cfg(unix)]

mod common;

use common::Faber;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// How long one run may take before the test kills it and fails.
const DEADLINE: Duration = Duration::from_secs(30);

struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-paths-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Runs faber in `cwd` with `args` (and `stdin` piped in when given), killing it
/// when it runs past [`DEADLINE`].
fn faber_in(cwd: &Path, args: &[&str], stdin: Option<&str>) -> Out {
    let mut run = Faber::new().args(args).current_dir(cwd).deadline(DEADLINE);
    if let Some(text) = stdin {
        run = run.stdin(text);
    }
    let out = run.output();
    Out {
        code: out.status.code(),
        stdout: common::text(&out.stdout),
        stderr: common::text(&out.stderr),
    }
}

fn faber(cwd: &Path, args: &[&str]) -> Out {
    faber_in(cwd, args, None)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn mkfifo(path: &Path) {
    let ok = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs")
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

const MANIFEST: &str = "[package]\nname = \"p\"\n";

/// `pkg/x.fab` (f = 3) and a decoy `pkg/src/x.fab` (f = 2), with `pkg/src/main.fab`
/// importing `../x`: the right answer is 3.
fn package_with_decoy(dir: &Path) -> PathBuf {
    let pkg = dir.join("pkg");
    write(&pkg.join("faber.toml"), MANIFEST);
    write(&pkg.join("x.fab"), "functio f() → numerus { redde 3 }\n");
    write(
        &pkg.join("src/x.fab"),
        "functio f() → numerus { redde 2 }\n",
    );
    write(
        &pkg.join("src/main.fab"),
        "importa ex \"../x\" privata x\nincipit { nota x.f() }\n",
    );
    pkg
}

#[test]
fn a_parent_import_names_one_file_from_every_working_directory() {
    let dir = scratch("dotdot");
    let pkg = package_with_decoy(&dir);
    let main = pkg.join("src/main.fab");
    let runs = [
        (pkg.join("src"), vec!["run", "main.fab"]),
        (dir.clone(), vec!["run", s(&main)]),
        (pkg.clone(), vec!["run", "src/main.fab"]),
        (pkg.clone(), vec!["run", "."]),
        (std::path::PathBuf::from("/"), vec!["run", s(&pkg)]),
    ];
    for (cwd, args) in runs {
        let o = faber(&cwd, &args);
        assert_eq!(
            o.code,
            Some(0),
            "{args:?} in {}: {}",
            cwd.display(),
            o.stderr
        );
        assert_eq!(o.stdout, "3\n", "{args:?} in {}", cwd.display());
    }
    // Standard input resolves relative to the working directory.
    let o = faber_in(
        &pkg.join("src"),
        &["run", "-"],
        Some("importa ex \"../x\" privata x\nincipit { nota x.f() }\n"),
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, "3\n");
}

#[test]
fn one_file_reached_by_two_spellings_is_one_module() {
    // `./d/c` and `../d2/c` (d2 -> d) are one file, so one module with one genus
    // `Par`: loaded twice, `a.mk()` would return the other module's `Par` (SEM004).
    let dir = scratch("spellings");
    write(&dir.join("faber.toml"), MANIFEST);
    write(&dir.join("d/c.fab"), "genus Par { numerus a }\n");
    symlink("d", dir.join("d2")).unwrap();
    write(
        &dir.join("d/a.fab"),
        "importa ex \"../d2/c\" privata c\nfunctio mk() → c.Par { redde c.Par { a = 4 } }\n",
    );
    write(
        &dir.join("main.fab"),
        "importa ex \"./d/c\" privata c\nimporta ex \"./d/a\" privata a\nincipit {\n    fixum c.Par p ← a.mk()\n    nota p.a\n}\n",
    );
    let o = faber(&dir, &["run", "main.fab"]);
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    assert_eq!(o.stdout, "4\n");
}

#[test]
fn a_relative_import_out_of_the_root_is_sem011_naming_the_root() {
    let dir = scratch("escape");
    // A lone file: its root is its own directory.
    write(&dir.join("x.fab"), "functio f() → numerus { redde 1 }\n");
    write(
        &dir.join("lone/main.fab"),
        "importa ex \"../x\" privata x\nincipit { nota x.f() }\n",
    );
    for (cwd, path) in [
        (dir.join("lone"), "main.fab".to_string()),
        (dir.clone(), dir.join("lone/main.fab").display().to_string()),
    ] {
        let o = faber(&cwd, &["run", &path]);
        assert_eq!(o.code, Some(1), "{}", o.stderr);
        assert!(o.stderr.starts_with("error[SEM011]"), "{}", o.stderr);
        let root = dir.join("lone");
        assert!(
            o.stderr
                .contains(&format!("the package root `{}`", root.display())),
            "{}",
            o.stderr
        );
        assert!(o.stderr.contains(":1:12"), "{}", o.stderr);
        assert_eq!(o.stdout, "");
    }
    // In a package, climbing above the manifest's directory.
    let pkg = dir.join("pkg");
    write(&pkg.join("faber.toml"), MANIFEST);
    write(
        &pkg.join("src/main.fab"),
        "importa ex \"../../x\" privata x\nincipit { nota x.f() }\n",
    );
    let o = faber(&dir, &["check", "pkg"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[SEM011]"), "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!("`{}`", pkg.display())),
        "{}",
        o.stderr
    );
}

#[test]
fn a_symlink_out_of_the_root_is_sem011() {
    let dir = scratch("symlink-escape");
    write(
        &dir.join("outside/x.fab"),
        "functio f() → numerus { redde 1 }\n",
    );
    let pkg = dir.join("pkg");
    write(&pkg.join("faber.toml"), MANIFEST);
    symlink(dir.join("outside/x.fab"), pkg.join("x.fab")).unwrap();
    // A symlinked directory that leaves the package, too.
    symlink(dir.join("outside"), pkg.join("ext")).unwrap();
    for spec in ["./x", "./ext/x"] {
        write(
            &pkg.join("main.fab"),
            &format!("importa ex \"{spec}\" privata x\nincipit {{ nota x.f() }}\n"),
        );
        let o = faber(&pkg, &["run", "main.fab"]);
        assert_eq!(o.code, Some(1), "{spec}: {}", o.stderr);
        assert!(
            o.stderr.starts_with("error[SEM011]"),
            "{spec}: {}",
            o.stderr
        );
        assert!(
            o.stderr.contains(&format!("`{}`", pkg.display())),
            "{}",
            o.stderr
        );
        assert_eq!(o.stdout, "");
    }
    // A symlink that stays inside the package is fine.
    write(
        &pkg.join("lib/y.fab"),
        "functio f() → numerus { redde 5 }\n",
    );
    symlink(pkg.join("lib/y.fab"), pkg.join("y.fab")).unwrap();
    write(
        &pkg.join("main.fab"),
        "importa ex \"./y\" privata y\nincipit { nota y.f() }\n",
    );
    let o = faber(&pkg, &["run", "main.fab"]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "5\n"),
        "{}",
        o.stderr
    );
}

#[test]
fn a_manifest_entry_out_of_the_package_is_cli002_naming_the_root() {
    let dir = scratch("entry-escape");
    let secret = dir.join("secret.fab");
    write(&secret, "incipit { nota \"secretum\" }\n");
    let pkg = dir.join("a/b/pkg");
    let up = "../".repeat(20);
    write(
        &pkg.join("faber.toml"),
        &format!("{MANIFEST}[paths]\nentry = \"{up}etc/passwd\"\n"),
    );
    let o = faber(&dir, &["run", s(&pkg)]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI002]"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains(&format!("the package root `{}`", pkg.display())),
        "{}",
        o.stderr
    );
    assert!(o.stderr.contains("faber.toml:4:9"), "{}", o.stderr);
    assert!(!o.stderr.contains("root:x:"), "{}", o.stderr);
    // `source` climbing out, to a file that exists.
    write(
        &pkg.join("faber.toml"),
        &format!("{MANIFEST}[paths]\nsource = \"../../..\"\nentry = \"secret.fab\"\n"),
    );
    let o = faber(&dir, &["run", s(&pkg)]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI002]"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
    // The entry a symlink to a file outside.
    write(&pkg.join("faber.toml"), MANIFEST);
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    symlink(&secret, pkg.join("src/main.fab")).unwrap();
    let o = faber(&dir, &["run", s(&pkg)]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI002]"), "{}", o.stderr);
    assert_eq!(o.stdout, "");
}

#[test]
fn a_fifo_fails_at_once_as_import_entry_manifest_and_host_read() {
    let dir = scratch("fifo");
    mkfifo(&dir.join("p.fab"));
    write(
        &dir.join("main.fab"),
        "importa ex \"./p\" privata p\nincipit { nota 1 }\n",
    );
    let o = faber(&dir, &["check", "main.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI001]"), "{}", o.stderr);
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);
    assert!(o.stderr.contains("main.fab:1:12"), "{}", o.stderr);

    let o = faber(&dir, &["run", "p.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);

    let pkg = dir.join("pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    mkfifo(&pkg.join("faber.toml"));
    let o = faber(&dir, &["run", "pkg"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);

    mkfifo(&dir.join("data.txt"));
    write(
        &dir.join("host.fab"),
        "incipit {\n    fixum textus t ← hospes.lege_textum(\"data.txt\")\n    nota t\n}\n",
    );
    let o = faber(&dir, &["run", "host.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("FIFO"), "{}", o.stderr);
}

#[test]
fn dev_zero_fails_at_once_as_entry_import_and_host_read() {
    let dir = scratch("devzero");
    let o = faber(&dir, &["run", "/dev/zero"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI001]"), "{}", o.stderr);
    assert!(o.stderr.contains("character device"), "{}", o.stderr);

    // As an import (through a symlink, which also leaves the root).
    symlink("/dev/zero", dir.join("z.fab")).unwrap();
    write(
        &dir.join("main.fab"),
        "importa ex \"./z\" privata z\nincipit { nota 1 }\n",
    );
    let o = faber(&dir, &["check", "main.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[SEM011]"), "{}", o.stderr);

    // As a library module under --lib-root: a symlink out of the library's root.
    let libs = dir.join("libs");
    std::fs::create_dir_all(libs.join("z/src")).unwrap();
    symlink("/dev/zero", libs.join("z/src/zero.fab")).unwrap();
    let o = faber_in(
        &dir,
        &["--lib-root", s(&libs), "check", "-"],
        Some("importa ex \"z:zero\" privata z\nincipit { nota 1 }\n"),
    );
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[SEM011]"), "{}", o.stderr);
    assert!(o.stderr.contains("library `z`"), "{}", o.stderr);

    for (host, ty) in [("lege_textum", "textus"), ("lege_octetos", "octeti")] {
        write(
            &dir.join("host.fab"),
            &format!(
                "incipit {{\n    fixum {ty} t ← hospes.{host}(\"/dev/zero\")\n    nota 1\n}}\n"
            ),
        );
        let o = faber(&dir, &["run", "host.fab"]);
        assert_eq!(o.code, Some(1), "{host}: {}", o.stderr);
        assert!(
            o.stderr.contains("character device"),
            "{host}: {}",
            o.stderr
        );
    }
}

#[test]
fn a_symlink_loop_is_reported_as_a_loop() {
    let dir = scratch("loop");
    symlink("l2.fab", dir.join("l1.fab")).unwrap();
    symlink("l1.fab", dir.join("l2.fab")).unwrap();
    write(
        &dir.join("main.fab"),
        "importa ex \"./l1\" privata l\nincipit { nota 1 }\n",
    );
    let o = faber(&dir, &["check", "main.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI001]"), "{}", o.stderr);
    assert!(o.stderr.contains("loop of symbolic links"), "{}", o.stderr);
    let o = faber(&dir, &["run", "l1.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("loop of symbolic links"), "{}", o.stderr);
    assert!(!o.stderr.contains("does not exist"), "{}", o.stderr);
}

#[test]
fn faber_test_walks_each_directory_once() {
    let dir = scratch("walk");
    write(
        &dir.join("t.proba"),
        "proba \"unum\" {\n    adfirma 1 + 1 ≡ 2\n}\n",
    );
    symlink(".", dir.join("a")).unwrap();
    symlink(".", dir.join("b")).unwrap();
    // And a loop below, which is neither a file nor a directory.
    symlink("loop", dir.join("loop")).unwrap();
    let o = faber(&dir, &["test", "."]);
    assert_eq!(o.code, Some(0), "{}{}", o.stdout, o.stderr);
    assert!(
        o.stdout
            .ends_with("1 passed, 0 failed, 0 blocked, 0 skipped\n"),
        "{}",
        o.stdout
    );
}

#[test]
fn reads_are_capped_before_they_start() {
    let dir = scratch("caps");
    // A sparse 65 MiB entry file: refused from its size, without reading it.
    let big = dir.join("big.fab");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(65 << 20)
        .unwrap();
    let o = faber(&dir, &["check", "big.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[CLI001]"), "{}", o.stderr);
    assert!(
        o.stderr
            .contains("68 157 440 bytes, more than the 67 108 864 bytes"),
        "{}",
        o.stderr
    );
    // A host text read is capped by the text limit.
    write(&dir.join("data.txt"), &"x".repeat(100));
    write(
        &dir.join("host.fab"),
        "incipit {\n    fixum textus t ← hospes.lege_textum(\"data.txt\")\n    nota t.longitudo()\n}\n",
    );
    let o = faber(&dir, &["run", "host.fab"]);
    assert_eq!(
        (o.code, o.stdout.as_str()),
        (Some(0), "100\n"),
        "{}",
        o.stderr
    );
    let o = faber(&dir, &["run", "--max-text-bytes", "50", "host.fab"]);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.starts_with("error[RUN017]"), "{}", o.stderr);
    assert!(
        o.stderr.contains("100 bytes, more than the 50"),
        "{}",
        o.stderr
    );
}
