//! What the integration tests share (`mod common;` at the top of a test file):
//!
//! * [`Faber`], the one way a test runs the built `faber` binary (arguments, working
//!   directory, environment, standard input, an address-space cap, a deadline) and
//!   captures its exit code, stdout and stderr;
//! * [`failing`], the format and the checker of failing programs (tests/README.md);
//! * [`entries`], the reader of the `faber explain` entries under `docs/explain/`;
//! * [`f32`], the f32 kernel tests' random tensors and thread check.
//!
//! Each test binary compiles this whole module and uses a part of it.

#![allow(dead_code)]

pub mod entries;
pub mod f32;
pub mod failing;
pub mod spmd_files;

use std::ffi::{OsStr, OsString};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_faber");

/// The repository root (where `cargo test` runs the tests).
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Variables of the host environment that change what faber prints or loads and that
/// no test means to inherit; [`Faber::new`] removes them (a test sets one explicitly
/// with [`Faber::env`]). `FABER_THREADS` is not among them: results never depend on
/// it, and the suite may be run under it. `FABER_PJRT_PLUGIN` and `VIRTUAL_ENV` choose
/// the PJRT plugin `faber devices` loads; a test that wants one passes
/// [`pjrt_plugin`]'s path explicitly.
const CLEARED: [&str; 6] = [
    "CLICOLOR_FORCE",
    "FORCE_COLOR",
    "FABER_LIBRARY_HOME",
    "FABER_WRITE_FAULT",
    "FABER_PJRT_PLUGIN",
    "VIRTUAL_ENV",
];

/// The PJRT plugin the tests that need one use: `FABER_PJRT_PLUGIN` of the test
/// process when it names a file, else the CPU plugin in the repository's
/// `.venv-xla/` (scripts/xla-setup.sh). `None` when neither exists; such tests then
/// print a `skipped: no PJRT plugin (run scripts/xla-setup.sh)` line.
pub fn pjrt_plugin() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FABER_PJRT_PLUGIN").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    let lib = Path::new(ROOT).join(".venv-xla/lib");
    let mut found: Vec<PathBuf> = std::fs::read_dir(lib)
        .ok()?
        .flatten()
        .map(|e| {
            e.path()
                .join("site-packages/xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so")
        })
        .filter(|p| p.is_file())
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The line a test prints when it skips its plugin part.
pub const NO_PLUGIN_SKIP: &str = "skipped: no PJRT plugin (run scripts/xla-setup.sh)";

/// Prints `{what}: {NO_PLUGIN_SKIP}` on the process's stderr directly, past the test
/// harness's output capture, so a plain `cargo test` shows it.
pub fn say_no_plugin(what: &str) {
    let _ = writeln!(std::io::stderr(), "{what}: {NO_PLUGIN_SKIP}");
}

/// One run of `faber`, built up and then started by [`Faber::output`] (or turned into a
/// [`Command`] by [`Faber::command`] for a test that drives the child itself).
#[derive(Clone, Debug)]
pub struct Faber {
    args: Vec<OsString>,
    /// In order; `None` removes the variable. A later entry for a name wins.
    env: Vec<(OsString, Option<OsString>)>,
    dir: Option<PathBuf>,
    stdin: Option<Vec<u8>>,
    cap_mib: Option<u64>,
    deadline: Option<Duration>,
}

impl Default for Faber {
    fn default() -> Self {
        Self::new()
    }
}

impl Faber {
    /// `faber` with colour off (`NO_COLOR=1`) and the variables of [`CLEARED`] removed,
    /// in the test's working directory (the repository root), standard input empty.
    pub fn new() -> Faber {
        let mut env = vec![("NO_COLOR".into(), Some("1".into()))];
        env.extend(CLEARED.iter().map(|k| (OsString::from(k), None)));
        Faber {
            args: Vec::new(),
            env,
            dir: None,
            stdin: None,
            cap_mib: None,
            deadline: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Faber {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Faber
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Faber {
        self.env
            .push((key.as_ref().to_owned(), Some(value.as_ref().to_owned())));
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Faber {
        self.env.push((key.as_ref().to_owned(), None));
        self
    }

    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Faber {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    /// Bytes piped into faber's standard input (otherwise it reads an empty stream).
    pub fn stdin(mut self, bytes: impl AsRef<[u8]>) -> Faber {
        self.stdin = Some(bytes.as_ref().to_vec());
        self
    }

    /// Caps faber's address space at `mib` MiB (`ulimit -v` in a `sh` that then
    /// `exec`s faber), so that an unbounded allocation fails fast instead of
    /// exhausting the machine.
    pub fn memory_cap_mib(mut self, mib: u64) -> Faber {
        self.cap_mib = Some(mib);
        self
    }

    /// Kills faber and fails the test when it runs longer than `limit`.
    pub fn deadline(mut self, limit: Duration) -> Faber {
        self.deadline = Some(limit);
        self
    }

    /// The command line, for messages: `faber run x.fab`.
    pub fn describe(&self) -> String {
        describe_args(&self.args)
    }

    /// The configured [`Command`], not started (standard streams not yet chosen).
    pub fn command(&self) -> Command {
        let mut cmd = match self.cap_mib {
            None => Command::new(BIN),
            Some(mib) => {
                let mut sh = Command::new("sh");
                sh.arg("-c")
                    .arg(format!("ulimit -v {}; exec \"$0\" \"$@\"", mib * 1024))
                    .arg(BIN);
                sh
            }
        };
        cmd.args(&self.args);
        for (key, value) in &self.env {
            match value {
                Some(v) => cmd.env(key, v),
                None => cmd.env_remove(key),
            };
        }
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        cmd
    }

    /// Runs faber to the end; its exit status and everything it wrote.
    pub fn output(self) -> Output {
        let mut cmd = self.command();
        cmd.stdin(if self.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("the faber binary starts");
        // Feed and drain on threads, so that a child that writes much before it reads
        // (or reads much before it writes) cannot block on a full pipe. A child that
        // exits without reading its input is not an error of the runner's.
        let feeder = self.stdin.map(|bytes| {
            let mut pipe = child.stdin.take().expect("stdin is piped");
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            })
        });
        let drain = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                v
            })
        };
        let out = drain(Box::new(child.stdout.take().expect("stdout is piped")));
        let err = drain(Box::new(child.stderr.take().expect("stderr is piped")));
        let status = match self.deadline {
            None => child.wait().expect("faber ends"),
            Some(limit) => {
                let start = Instant::now();
                loop {
                    if let Some(status) = child.try_wait().expect("faber's status") {
                        break status;
                    }
                    if start.elapsed() > limit {
                        let _ = child.kill();
                        let _ = child.wait();
                        let dir = self.dir.as_deref().unwrap_or(Path::new(ROOT));
                        panic!(
                            "`{}` in {} ran past {limit:?}",
                            describe_args(&self.args),
                            dir.display()
                        );
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        };
        if let Some(f) = feeder {
            let _ = f.join();
        }
        Output {
            status,
            stdout: out.join().expect("stdout drained"),
            stderr: err.join().expect("stderr drained"),
        }
    }
}

fn describe_args(args: &[OsString]) -> String {
    let words: Vec<String> = args
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!("faber {}", words.join(" "))
}

/// `faber ARGS` from the repository root with the defaults of [`Faber::new`].
pub fn faber(args: &[&str]) -> Output {
    Faber::new().args(args).output()
}

/// The per-step losses a GPT example prints under `--trace` (`passus N: damnum L`).
/// The GPT example's size as its first lines print it: (parameters, block, batch)
/// — the number before " parameters", and the numbers after "block " and "batch ".
pub fn gpt_size(stdout: &str) -> (u64, u64, u64) {
    let before = |after: &str| -> u64 {
        let s = stdout
            .split(after)
            .next()
            .unwrap_or_else(|| panic!("{stdout}"));
        s.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let after = |before: &str| -> u64 {
        let s = stdout
            .split(before)
            .nth(1)
            .unwrap_or_else(|| panic!("{stdout}"));
        s.split(',').next().unwrap().trim().parse().unwrap()
    };
    (before(" parameters"), after("block "), after("batch "))
}

pub fn gpt_losses(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("passus ")?
                .split("damnum ")
                .nth(1)?
                .parse()
                .ok()
        })
        .collect()
}

/// (bytes to the device, bytes back) from `faber --verbose run --backend xla`'s
/// summary on `stderr`.
pub fn xla_traffic(stderr: &str) -> (u64, u64) {
    let line = stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("xla: ")?
                .strip_suffix(" byte(s) back to the host")
        })
        .unwrap_or_else(|| panic!("no traffic line in:\n{stderr}"));
    let (inn, out) = line
        .split_once(" byte(s) copied to the device, ")
        .unwrap_or_else(|| panic!("{line}"));
    (inn.parse().unwrap(), out.parse().unwrap())
}

/// The calls that ran on the device, from the same summary.
pub fn xla_offloaded(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| {
            l.strip_prefix("xla: ")?
                .strip_suffix(" call(s) ran on the device")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no device summary in:\n{stderr}"))
}

/// The numbers a run printed on stdout, one per line.
pub fn printed_numbers(stdout: &[u8]) -> Vec<f64> {
    text(stdout)
        .lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("not a number: {l}"))
        })
        .collect()
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An empty folder `suite/name` under the tests' temporary directory (emptied first):
/// each test that writes files uses its own.
pub fn scratch_dir(suite: &str, name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(suite)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Writes `body` to `path`, creating its folders.
pub fn write_file(path: &Path, body: &str) {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d).expect("create dir");
    }
    std::fs::write(path, body).expect("write file");
}

/// The most bytes the values kept on each device held (`--verbose`'s "values kept
/// on the devices held at most … byte(s) on device id D, …"), in device order.
pub fn xla_held(stderr: &str) -> Vec<u64> {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("xla: values kept on the devices held at most "))
        .unwrap_or_else(|| panic!("no held line in:\n{stderr}"));
    line.split(", ")
        .map(|p| {
            p.split_once(" byte(s) on device id ")
                .and_then(|(b, _)| b.parse().ok())
                .unwrap_or_else(|| panic!("{line}"))
        })
        .collect()
}
