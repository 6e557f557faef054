//! Ctrl-C for `faber run` (src/cli/interrupt.rs, src/eval/interrupt.rs): a first
//! SIGINT stops the program at its next step — a file write in progress finishes
//! first — and faber exits 130 with one line on stderr; a second SIGINT ends it at
//! once, and the file being written keeps its old contents (the writer's rename has
//! not happened). Writes are slowed with the writer's `FABER_WRITE_FAULT` hook.
#![cfg(unix)]

mod common;

use common::Faber;
use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

fn tmp(tag: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-int-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn spawn(dir: &Path, src: &str, fault: Option<&str>) -> Child {
    std::fs::write(dir.join("prog.fab"), src).unwrap();
    let mut run = Faber::new().arg("run").arg("prog.fab").current_dir(dir);
    if let Some(f) = fault {
        run = run.env("FABER_WRITE_FAULT", f);
    }
    let mut cmd = run.command();
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // faber keeps a SIGINT that was ignored when it started (a background job of a
    // script runs so); the child gets the default disposition, however the tests run.
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().expect("the faber binary runs")
}

fn sigint(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Reads stdout up to the line `ready`.
fn wait_ready(child: &mut Child) {
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "ready\n");
}

/// Waits at most `limit` for the child to end; kills it after that.
fn wait_at_most(child: &mut Child, limit: Duration) -> (ExitStatus, Duration, String) {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status, start.elapsed(), err);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the program did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn temporaries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".faber-tmp-"))
        .collect()
}

fn wait_for_temporary(dir: &Path) {
    let start = Instant::now();
    while temporaries(dir).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no write started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

const LOOP: &str = "incipit {\n    varia numerus i ← 0\n    nota \"ready\"\n    dum verum {\n        i ← i + 1\n    }\n}\n";

#[test]
fn sigint_stops_a_loop_with_exit_130_and_one_line() {
    let dir = tmp("loop");
    let mut child = spawn(&dir, LOOP, None);
    wait_ready(&mut child);
    sigint(&child);
    let (status, _, err) = wait_at_most(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130), "{status:?} {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("faber: interrupted (SIGINT)"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes `out.txt` (327,680 bytes), then loops forever.
const WRITE_THEN_LOOP: &str = r#"
incipit {
    varia textus s ← "0123456789"
    itera ab 0 ‥ 15 fixum k { s ← s + s }
    nota "ready"
    hospes.scribe_textum("out.txt", s)
    nota "written"
    dum verum { }
}
"#;

#[test]
fn a_first_sigint_lets_the_write_in_progress_finish() {
    let dir = tmp("finish");
    std::fs::write(dir.join("out.txt"), "old").unwrap();
    // The write pauses 1.5 s with 100,000 bytes written; SIGINT arrives in the pause.
    let mut child = spawn(&dir, WRITE_THEN_LOOP, Some("pause-after=100000:1500"));
    wait_ready(&mut child);
    wait_for_temporary(&dir);
    sigint(&child);
    let (status, _, err) = wait_at_most(&mut child, Duration::from_secs(30));
    assert_eq!(status.code(), Some(130), "{status:?} {err}");
    assert!(err.starts_with("faber: interrupted (SIGINT)"), "{err}");
    let text = std::fs::read_to_string(dir.join("out.txt")).unwrap();
    assert_eq!(text.len(), 327_680, "the write was completed");
    assert!(text.starts_with("01234567890123"));
    assert!(temporaries(&dir).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_second_sigint_exits_at_once_and_the_old_file_survives() {
    let dir = tmp("twice");
    std::fs::write(dir.join("out.txt"), "old").unwrap();
    // The write would pause 60 s: only the second SIGINT can end the run in time.
    let mut child = spawn(&dir, WRITE_THEN_LOOP, Some("pause-after=100000:60000"));
    wait_ready(&mut child);
    wait_for_temporary(&dir);
    sigint(&child);
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the first SIGINT waits for the write"
    );
    sigint(&child);
    let (status, took, err) = wait_at_most(&mut child, Duration::from_secs(20));
    assert_eq!(status.code(), Some(130), "{status:?} {err}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(std::fs::read_to_string(dir.join("out.txt")).unwrap(), "old");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_sigint_ignored_at_start_stays_ignored() {
    let dir = tmp("ignored");
    std::fs::write(dir.join("prog.fab"), LOOP).unwrap();
    let mut cmd = Faber::new()
        .args(["run", "prog.fab"])
        .current_dir(&dir)
        .command();
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    // As `nohup` or a script's background job starts it.
    // SAFETY: `signal` is async-signal-safe, as `pre_exec` requires.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    wait_ready(&mut child);
    sigint(&child);
    sigint(&child);
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "an ignored SIGINT ended the run"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}
