//! The host devices of norma (docs/norma.md § solum, consolum, processus): the programs
//! under `tests/solum/` run in a temporary working directory made for each and removed
//! after it, and print their `.out` (written by hand); the failures are RUN017 (or
//! RUN007) and leave the files as they were; writes stay atomic under the writer's
//! fault hook; standard error, raw bytes and the environment are checked here because
//! `tests/run` compares standard output only.

mod common;

use common::Faber;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

/// A fresh directory under the system's temporary directory, removed when dropped
/// (also when the test fails).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("faber-norma-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `faber run` of the program text `src` (written outside `dir`, in a directory of its
/// own) with `dir` as the working directory.
fn faber_in(dir: &Path, src: &str) -> (Faber, TempDir) {
    let home = TempDir::new("prog");
    let file = home.path().join("prog.fab");
    std::fs::write(&file, src).unwrap();
    let run = Faber::new()
        .arg("run")
        .arg(&file)
        .current_dir(dir)
        .deadline(Duration::from_secs(60));
    (run, home)
}

fn run_in(dir: &Path, src: &str) -> Output {
    let (f, _home) = faber_in(dir, src);
    f.output()
}

fn stdout(out: &Output) -> String {
    common::text(&out.stdout)
}

fn stderr(out: &Output) -> String {
    common::text(&out.stderr)
}

/// The run failed with `code` and a message containing `words`.
fn assert_fails(out: &Output, code: &str, words: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "stderr:\n{err}");
    assert!(err.contains(&format!("error[{code}]")), "stderr:\n{err}");
    assert!(err.contains(words), "`{words}` missing in:\n{err}");
    assert!(!err.contains("panicked"), "stderr:\n{err}");
}

#[test]
fn solum_programs_match_expected_output() {
    let mut programs: Vec<PathBuf> = std::fs::read_dir("tests/solum")
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fab"))
        .collect();
    programs.sort();
    assert!(programs.len() >= 3, "the solum programs: {programs:?}");
    let mut failures = Vec::new();
    for prog in &programs {
        let dir = TempDir::new("solum");
        let abs = std::fs::canonicalize(prog).unwrap();
        let out = Faber::new()
            .arg("run")
            .arg(&abs)
            .current_dir(dir.path())
            .deadline(Duration::from_secs(60))
            .output();
        let want = std::fs::read_to_string(prog.with_extension("out")).unwrap();
        if stdout(&out) != want || !out.status.success() {
            failures.push(format!(
                "{}: exit {:?}\n--- stdout\n{}--- want\n{want}--- stderr\n{}",
                prog.display(),
                out.status.code(),
                stdout(&out),
                stderr(&out)
            ));
        }
        let left = dir.path().to_path_buf();
        drop(dir);
        assert!(!left.exists(), "{} was not removed", left.display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_missing_file_is_run017() {
    let dir = TempDir::new("missing");
    let out = run_in(
        dir.path(),
        "importa ex \"norma:solum\" privata solum\nincipit { nota solum.carpe(\"nusquam.txt\") }\n",
    );
    assert_fails(
        &out,
        "RUN017",
        "cannot read `nusquam.txt`: it does not exist",
    );
    for call in [
        "solum.mensura(\"nusquam\")",
        "solum.describe(\"nusquam\")",
        "solum.sequere(\"nusquam\")",
        "solum.enumera(\"nusquam\")",
    ] {
        let src = format!("importa ex \"norma:solum\" privata solum\nincipit {{ nota {call} }}\n");
        assert_fails(&run_in(dir.path(), &src), "RUN017", "`nusquam`");
    }
}

#[test]
fn dele_refuses_a_directory_and_amputa_the_working_directory() {
    let dir = TempDir::new("refuse");
    std::fs::create_dir(dir.path().join("d")).unwrap();
    std::fs::write(dir.path().join("d/f.txt"), "manet").unwrap();
    let out = run_in(
        dir.path(),
        "importa ex \"norma:solum\" privata solum\nincipit { solum.dele(\"d\") }\n",
    );
    assert_fails(&out, "RUN017", "cannot remove `d`: it is a directory");
    for path in [".", "..", "/", "./", "d/..", ""] {
        let src = format!(
            "importa ex \"norma:solum\" privata solum\nincipit {{ solum.amputa(\"{path}\") }}\n"
        );
        assert_fails(
            &run_in(dir.path(), &src),
            "RUN017",
            "does not remove the root",
        );
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("d/f.txt")).unwrap(),
        "manet"
    );
}

#[test]
fn bad_counts_and_modes_are_run017() {
    let dir = TempDir::new("counts");
    std::fs::write(dir.path().join("f"), "abc").unwrap();
    for (call, words) in [
        (
            "solum.partem(\"f\", -1, 2)",
            "the start must not be negative",
        ),
        (
            "solum.inveni(\"f\", \"a\", 0, -2)",
            "the length must not be negative",
        ),
        ("solum.modum(\"f\", 4096)", "4096 is not a mode"),
        ("solum.partem(\"f\", 0, 1099511627776)", "more than the"),
    ] {
        let src = format!("importa ex \"norma:solum\" privata solum\nincipit {{ nota {call} }}\n");
        assert_fails(&run_in(dir.path(), &src), "RUN017", words);
    }
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_without_blocking() {
    let dir = TempDir::new("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(dir.path().join("p"))
        .status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("mkfifo is not available; skipped");
        return;
    }
    for call in [
        "nota solum.lege(\"p\")",
        "nota solum.partem(\"p\", 0, 4)",
        "nota solum.inveni(\"p\", \"a\", 0, 4)",
        "solum.appone(\"p\", \"x\")",
        "solum.exscribe(\"p\", \"q\")",
        "solum.tange(\"p\")",
    ] {
        let src = format!("importa ex \"norma:solum\" privata solum\nincipit {{ {call} }}\n");
        let out = run_in(dir.path(), &src);
        assert_fails(&out, "RUN017", "`p`");
    }
    let (f, _home) = faber_in(
        dir.path(),
        "importa ex \"norma:solum\" privata solum\nincipit { nota solum.legibilene(\"p\"), solum.regularene(\"p\"), solum.exstat(\"p\") }\n",
    );
    let out = f.output();
    assert_eq!(stdout(&out), "falsum, falsum, verum\n", "{}", stderr(&out));
    assert!(!dir.path().join("q").exists());
}

#[test]
fn appone_and_exscribe_are_atomic() {
    let dir = TempDir::new("atomic");
    std::fs::write(dir.path().join("log.txt"), "vetus\n").unwrap();
    std::fs::write(dir.path().join("dest.txt"), "prior").unwrap();
    for call in [
        "solum.appone(\"log.txt\", \"novum\\n\")",
        "solum.exscribe(\"log.txt\", \"dest.txt\")",
        "solum.funde(\"dest.txt\", |41 42|)",
    ] {
        let src = format!("importa ex \"norma:solum\" privata solum\nincipit {{ {call} }}\n");
        let (f, _home) = faber_in(dir.path(), &src);
        let out = f.env("FABER_WRITE_FAULT", "fail-after=0").output();
        assert_fails(&out, "RUN017", "injected");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("log.txt")).unwrap(),
        "vetus\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("dest.txt")).unwrap(),
        "prior"
    );
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["dest.txt", "log.txt"], "no temporary is left");
}

#[test]
fn tange_sets_the_modification_time_to_now() {
    let dir = TempDir::new("touch");
    let file = dir.path().join("vetus.txt");
    std::fs::write(&file, "manet").unwrap();
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000); // 2001
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(old)
        .unwrap();
    let before = SystemTime::now() - Duration::from_secs(5);
    let out = run_in(
        dir.path(),
        "importa ex \"norma:solum\" privata solum\nincipit { solum.tange(\"vetus.txt\") }\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    assert!(modified >= before, "{modified:?} is not now");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "manet");
}

#[test]
fn consolum_writes_standard_error_and_raw_bytes() {
    let dir = TempDir::new("consolum");
    let out = run_in(
        dir.path(),
        "importa ex \"norma:consolum\" privata consolum\nincipit {\n  consolum.mone(\"cave\")\n  consolum.monet(\"iterum\")\n  consolum.vide(\"vide\")\n  consolum.videbit(\"videbit\")\n  consolum.funde(|ff 00 41 0a|)\n}\n",
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "cave\niterum\nvide\nvidebit\n");
    assert_eq!(out.stdout, [0xff, 0x00, 0x41, 0x0a]);
}

#[test]
fn consolum_lege_at_the_end_of_input_stops_the_program() {
    let dir = TempDir::new("eof");
    let out = run_in(
        dir.path(),
        "importa ex \"norma:consolum\" privata consolum\nincipit { nota consolum.lege() }\n",
    );
    assert_fails(&out, "RUN007", "standard input is at its end");
}

#[test]
fn processus_and_solum_read_the_environment() {
    let dir = TempDir::new("env");
    let (f, _home) = faber_in(
        dir.path(),
        "importa ex \"norma:processus\" privata processus\nimporta ex \"norma:solum\" privata solum\nincipit {\n  fac { nota processus.lege(\"FABER_PROBA\") } cape e { nota e }\n  nota solum.domus()\n  nota solum.temporarium()\n}\n",
    );
    let out = f
        .env("FABER_PROBA", "valor cum spatio")
        .env("HOME", "/domus/proba")
        .env("TMPDIR", "/tmp/proba-temporaria")
        .output();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "valor cum spatio\n/domus/proba\n/tmp/proba-temporaria\n"
    );
    let (f, _home) = faber_in(
        dir.path(),
        "importa ex \"norma:solum\" privata solum\nincipit { nota solum.domus() }\n",
    );
    assert_eq!(stdout(&f.env_remove("HOME").output()), "/\n");
}

/// `processus.exsequi(cmd)` of a program that imports `faber:processus`.
fn exsequi_src(cmd: &str) -> String {
    format!(
        "importa ex \"faber:processus\" privata processus\nincipit {{ nota processus.exsequi({cmd:?}) }}\n"
    )
}

#[test]
fn exsequi_fails_on_a_nonzero_status_naming_it_and_standard_error() {
    let dir = TempDir::new("exsequi-status");
    let out = run_in(
        dir.path(),
        &exsequi_src("printf partial; printf 'non licet' >&2; exit 3"),
    );
    assert_fails(
        &out,
        "RUN017",
        "failed: it exited with status 3; its standard error: non licet",
    );
    // Nothing of the failed command's standard output is printed.
    assert_eq!(stdout(&out), "");
    let out = run_in(dir.path(), &exsequi_src("exit 9"));
    assert_fails(&out, "RUN017", "failed: it exited with status 9");
    assert!(
        !stderr(&out).contains("standard error:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exsequi_passes_standard_error_on_and_reads_no_standard_input() {
    let dir = TempDir::new("exsequi-streams");
    let out = run_in(dir.path(), &exsequi_src("printf cave >&2; printf bene"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "bene\n");
    assert_eq!(stderr(&out), "cave");
    // The command's standard input is empty, not faber's.
    let (f, _home) = faber_in(dir.path(), &exsequi_src("cat; printf finis"));
    let out = f.stdin("non legendum\n").output();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "finis\n");
    // It runs in faber's working directory.
    std::fs::write(dir.path().join("hic.txt"), "adsum").unwrap();
    let out = run_in(dir.path(), &exsequi_src("cat hic.txt"));
    assert_eq!(stdout(&out), "adsum\n");
}

#[test]
fn captura_runs_a_program_without_a_shell_and_keeps_its_status() {
    let dir = TempDir::new("captura");
    let src = r#"importa ex "faber:processus" privata processus
importa ex "faber:json" privata json
incipit {
    nota json.pange(processus.captura(["/bin/sh", "-c", "printf o; printf e >&2; exit 7"]))
    fixum tabula<textus, valor> t ← processus.captura(["printf", "%s|", "$HOME", "a b"]) ↦ tabula<textus, valor>
    nota json.pange(t["stdout"]), json.pange(t["status"])
}
"#;
    let out = run_in(dir.path(), src);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "{\"status\":7,\"stdout\":\"o\",\"stderr\":\"e\"}\n\"$HOME|a b|\", 0\n"
    );
    // Nothing of the program's standard error reaches faber's: it is in the value.
    assert_eq!(stderr(&out), "");
    let missing = "importa ex \"norma:processus\" privata processus\nincipit { nota processus.captura([\"/nusquam/programma\"]) }\n";
    assert_fails(
        &run_in(dir.path(), missing),
        "RUN017",
        "cannot run `/nusquam/programma`: cannot start `/nusquam/programma`",
    );
    let empty = "importa ex \"norma:processus\" privata processus\nincipit { nota processus.captura([]) }\n";
    assert_fails(
        &run_in(dir.path(), empty),
        "RUN017",
        "an empty argument list names no program",
    );
}
