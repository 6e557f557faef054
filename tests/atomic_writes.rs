//! Files a program writes (`hospes.scribe_textum`, `hospes.serva_tensores`) are
//! replaced atomically (src/cli/atomic.rs): a write that fails, aborts or is killed
//! halfway leaves the previous file byte for byte and no temporary (or, after a kill, a
//! temporary that the next claim of the directory removes); a claimed output
//! directory (`hospes.para_directorium`, src/cli/outdir.rs) is probed before the work
//! and locked against a second run. The failures are injected with the writer's
//! `FABER_WRITE_FAULT` hook or with a real SIGKILL.

mod common;

use common::Faber;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-atomic-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn faber(dir: &Path, src: &str, fault: Option<&str>) -> Faber {
    let file = dir.join("prog.fab");
    std::fs::write(&file, src).unwrap();
    let run = Faber::new().arg("run").arg(&file).current_dir(dir);
    match fault {
        Some(f) => run.env("FABER_WRITE_FAULT", f),
        None => run,
    }
}

/// The run as a [`Command`], for the tests that kill it halfway.
fn command(dir: &Path, src: &str, fault: Option<&str>) -> Command {
    faber(dir, src, fault).command()
}

fn run(dir: &Path, src: &str, fault: Option<&str>) -> Output {
    faber(dir, src, fault).output()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn temporaries(dir: &Path) -> Vec<String> {
    listing(dir)
        .into_iter()
        .filter(|n| n.contains(".faber-tmp-"))
        .collect()
}

/// A program writing a 300×300 f64 tensor (720,000 data bytes) to `ckpt.safetensors`.
const CHECKPOINT: &str = r#"
importa ex "gradus:serialize" privata serialize
incipit {
    fixum tf32[] z ← vacua
    serialize.scribe_safetensors("ckpt.safetensors", z.crea(2.5, [300, 300]))
    nota "scriptum"
}
"#;

/// A text of 10 · 2^15 = 327,680 bytes written over `out.txt`.
const TEXT: &str = r#"
incipit {
    varia textus s ← "0123456789"
    itera ab 0 ‥ 15 fixum k { s ← s + s }
    hospes.scribe_textum("out.txt", s)
    nota "scriptum"
}
"#;

#[test]
fn a_write_that_fails_halfway_keeps_the_old_file_and_leaves_no_temporary() {
    let dir = tmp("fail");
    std::fs::write(dir.join("out.txt"), "the previous good contents\n").unwrap();
    // As a full disk would: the error comes after 100,000 of the 327,680 bytes.
    let out = run(&dir, TEXT, Some("fail-after=100000"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("RUN017"), "{err}");
    assert!(err.contains("cannot write `out.txt`"), "{err}");
    assert!(err.contains("injected write fault"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("out.txt")).unwrap(),
        "the previous good contents\n"
    );
    assert_eq!(listing(&dir), vec!["out.txt", "prog.fab"]);
    // Without the fault the same program replaces the file completely.
    let out = run(&dir, TEXT, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = std::fs::read_to_string(dir.join("out.txt")).unwrap();
    assert_eq!(text.len(), 327_680);
    assert!(text.starts_with("0123456789012"));
    assert_eq!(listing(&dir), vec!["out.txt", "prog.fab"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checkpoint_write_that_fails_keeps_the_previous_checkpoint() {
    let dir = tmp("ckpt-fail");
    let out = run(&dir, CHECKPOINT, None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let good = std::fs::read(dir.join("ckpt.safetensors")).unwrap();
    // 8-byte header length, the header, then 90,000 f64 values.
    assert!(good.len() > 720_000, "{}", good.len());
    for fault in ["fail-after=0", "fail-after=4096", "fail-after=700000"] {
        let out = run(&dir, CHECKPOINT, Some(fault));
        assert_eq!(out.status.code(), Some(1), "{fault}: {}", stderr(&out));
        assert!(stderr(&out).contains("cannot write `ckpt.safetensors`"));
        assert!(
            std::fs::read(dir.join("ckpt.safetensors")).unwrap() == good,
            "{fault}"
        );
        assert!(temporaries(&dir).is_empty(), "{fault}: {:?}", listing(&dir));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_aborted_write_keeps_the_previous_checkpoint() {
    let dir = tmp("abort");
    std::fs::write(dir.join("ckpt.safetensors"), b"previous checkpoint bytes").unwrap();
    // The process dies (SIGABRT) with 300,000 bytes of the new file written.
    let out = run(&dir, CHECKPOINT, Some("abort-after=300000"));
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("scriptum"));
    assert_eq!(
        std::fs::read(dir.join("ckpt.safetensors")).unwrap(),
        b"previous checkpoint bytes"
    );
    // The dead writer's temporary is left behind, named after the target and its PID…
    let left = temporaries(&dir);
    assert_eq!(left.len(), 1, "{:?}", listing(&dir));
    assert!(
        left[0].starts_with(".ckpt.safetensors.faber-tmp-"),
        "{left:?}"
    );
    // …and the next claim of the directory removes it.
    let out = run(
        &dir,
        "incipit {\n    hospes.para_directorium(\".\")\n}\n",
        None,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(temporaries(&dir).is_empty(), "{:?}", listing(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits until `dir` holds a temporary (a write is in progress).
fn wait_for_temporary(dir: &Path, child: &mut Child) {
    let start = Instant::now();
    while temporaries(dir).is_empty() {
        assert!(
            child.try_wait().unwrap().is_none(),
            "the program ended before writing"
        );
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no write started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_write_killed_with_sigkill_keeps_the_previous_checkpoint() {
    let dir = tmp("kill");
    std::fs::write(dir.join("ckpt.safetensors"), b"previous checkpoint bytes").unwrap();
    // The write stops for 30 s with 200,000 bytes written; SIGKILL arrives meanwhile.
    let mut child = command(&dir, CHECKPOINT, Some("pause-after=200000:30000"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_temporary(&dir, &mut child);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(
        std::fs::read(dir.join("ckpt.safetensors")).unwrap(),
        b"previous checkpoint bytes"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_device_or_a_directory_is_not_replaced() {
    let dir = tmp("special");
    std::fs::create_dir(dir.join("sub")).unwrap();
    for (target, why) in [
        ("/dev/null", "not a regular file"),
        ("sub", "is a directory"),
    ] {
        let src = format!("incipit {{\n    hospes.scribe_textum(\"{target}\", \"x\")\n}}\n");
        let out = run(&dir, &src, None);
        assert_eq!(out.status.code(), Some(1), "{target}: {}", stderr(&out));
        assert!(stderr(&out).contains(why), "{target}: {}", stderr(&out));
    }
    assert!(dir.join("sub").is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_symbolic_link_is_written_through() {
    let dir = tmp("link");
    std::fs::write(dir.join("real.txt"), "old").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("real.txt", dir.join("link.txt")).unwrap();
        let out = run(
            &dir,
            "incipit {\n    hospes.scribe_textum(\"link.txt\", \"new\")\n}\n",
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(dir.join("real.txt")).unwrap(),
            "new"
        );
        let meta = std::fs::symlink_metadata(dir.join("link.txt")).unwrap();
        assert!(meta.file_type().is_symlink());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Claims the directory, says so, then waits (up to 60 s) for the test to end it.
const HOLDER: &str = r#"
incipit {
    hospes.para_directorium("out")
    nota "claimed"
    fixum f32 t0 ← hospes.hora()
    dum hospes.hora() - t0 < 60.0 { }
}
"#;

const CLAIM: &str = "incipit {\n    hospes.para_directorium(\"out\")\n    nota \"claimed\"\n}\n";

#[test]
fn a_second_run_on_a_claimed_directory_stops_with_a_diagnostic() {
    let dir = tmp("lock");
    let holder_dir = dir.join("a");
    let other_dir = dir.join("b");
    std::fs::create_dir_all(&holder_dir).unwrap();
    std::fs::create_dir_all(&other_dir).unwrap();
    // Both programs name the same directory (a symbolic link would do too): `../out`
    // from their own directories.
    let holder = HOLDER.replace("\"out\"", "\"../out\"");
    let mut child = command(&holder_dir, &holder, None)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "claimed\n");
    let out = run(&other_dir, &CLAIM.replace("\"out\"", "\"../out\""), None);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("RUN017"), "{err}");
    assert!(err.contains("another faber run is writing to it"), "{err}");
    assert!(err.contains(".faber.lock"), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("claimed"));
    // The kernel drops the lock of a killed run: the directory is free again.
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run(&other_dir, &CLAIM.replace("\"out\"", "\"../out\""), None);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_directory_is_found_when_claimed() {
    let dir = tmp("unwritable");
    std::fs::write(dir.join("file"), "a regular file").unwrap();
    // Tests may run as root, where permission bits do not stop a write: these paths
    // cannot hold files for anyone (below a regular file, under /dev/null, in /proc).
    for target in ["file/out", "/dev/null/out", "/proc/faber-out"] {
        let src = format!(
            "incipit {{\n    hospes.para_directorium(\"{target}\")\n    nota \"claimed\"\n}}\n"
        );
        let out = run(&dir, &src, None);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{target}: {err}");
        assert!(
            err.contains(&format!("cannot use `{target}` as an output directory")),
            "{target}: {err}"
        );
        assert!(!String::from_utf8_lossy(&out.stdout).contains("claimed"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_gpt_example_refuses_an_unwritable_out_before_training() {
    let dir = tmp("gpt");
    std::fs::write(dir.join("file"), "a regular file").unwrap();
    let bad = dir.join("file/out");
    let out = Faber::new()
        .args([
            "run",
            "examples/gpt-shakespeare",
            "--",
            "--tiny",
            "--steps",
            "3",
        ])
        .arg("--out")
        .arg(&bad)
        .output();
    let err = stderr(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("RUN017"), "{err}");
    assert!(err.contains("as an output directory"), "{err}");
    // Nothing was computed: no model banner, no step line.
    assert!(!stdout.contains("gpt-shakespeare:"), "{stdout}");
    assert!(!stdout.contains("step "), "{stdout}");
    std::fs::remove_dir_all(&dir).unwrap();
}
