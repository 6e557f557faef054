//! `processus.exsequi`: one shell command, run by `/bin/sh -c` to its end, and
//! `processus.captura`: one program run with its arguments, no shell between
//! (docs/norma.md § processus, docs/host.md § Shell commands). Its standard input is
//! `/dev/null`; its standard output and standard error are captured, each up to a
//! limit; it inherits the working directory and the environment. A command that does
//! not exit with status 0 is a failure whose reason names the status (or the signal)
//! and what it wrote to standard error.

use std::io::{self, Read};
use std::process::{Command, ExitStatus, Stdio};

/// What a command that exited with status 0 wrote.
pub struct Output {
    pub stdout: String,
    pub stderr: String,
}

/// How a program ended and what it wrote.
pub struct Captured {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// Runs `command` with `/bin/sh -c`; `limit` bounds the bytes read of each output
/// stream (a longer standard output is a failure, a longer standard error is cut).
pub fn run(command: &str, limit: u64) -> Result<Output, String> {
    let mut sh = Command::new("/bin/sh");
    sh.arg("-c").arg(command);
    let done = capture(sh, "`/bin/sh`", limit)?;
    let stderr = String::from_utf8_lossy(&done.stderr).into_owned();
    if !done.status.success() {
        let mut why = ended(done.status);
        let said = stderr.trim_end();
        if !said.is_empty() {
            why.push_str("; its standard error: ");
            why.push_str(said);
        }
        return Err(why);
    }
    let stdout = String::from_utf8(done.stdout)
        .map_err(|_| "its standard output is not valid UTF-8".to_string())?;
    Ok(Output { stdout, stderr })
}

/// Runs the program `argv[0]` with the arguments `argv[1..]`, no shell between
/// (`processus.captura`), whatever its status; its standard input is `/dev/null`.
pub fn exec(argv: &[String], limit: u64) -> Result<Captured, String> {
    let Some((program, args)) = argv.split_first() else {
        return Err("an empty argument list names no program".to_string());
    };
    let mut cmd = Command::new(program);
    cmd.args(args);
    capture(cmd, &format!("`{program}`"), limit)
}

/// The exit status a program ended with: its code, or 128 + the signal that ended it
/// (as a shell reports it).
pub fn status_code(status: ExitStatus) -> i64 {
    if let Some(code) = status.code() {
        return i64::from(code);
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return 128 + i64::from(signal);
        }
    }
    -1
}

/// Runs `cmd` to its end with standard input `/dev/null` and both outputs captured;
/// `shown` names the program in a failure to start it.
fn capture(mut cmd: Command, shown: &str, limit: u64) -> Result<Captured, String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {shown}: {e}"))?;
    let mut err_pipe = child.stderr.take().expect("standard error is piped");
    // Standard error is drained on its own thread, so that a command that fills
    // one pipe while faber reads the other never blocks.
    let errors = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut err_pipe).take(limit).read_to_end(&mut buf);
        let _ = io::copy(&mut err_pipe, &mut io::sink());
        buf
    });
    let mut out_pipe = child.stdout.take().expect("standard output is piped");
    let mut out = Vec::new();
    let read = (&mut out_pipe).take(limit + 1).read_to_end(&mut out);
    let too_long = out.len() as u64 > limit;
    if too_long {
        let _ = child.kill();
    }
    drop(out_pipe);
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for {shown}: {e}"))?;
    let err = errors.join().unwrap_or_default();
    read.map_err(|e| format!("cannot read its standard output: {e}"))?;
    if too_long {
        return Err(format!(
            "its standard output is longer than the {limit} bytes faber reads at once"
        ));
    }
    Ok(Captured {
        status,
        stdout: out,
        stderr: err,
    })
}

/// How a command that failed ended, in words.
fn ended(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("it exited with status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("it was ended by signal {signal}");
        }
    }
    "it ended without an exit status".to_string()
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn standard_output_is_the_result() {
        let out = run("printf 'a b\\n'; printf warn >&2", 1024).unwrap();
        assert_eq!(out.stdout, "a b\n");
        assert_eq!(out.stderr, "warn");
    }

    #[test]
    fn a_nonzero_status_is_a_failure_naming_it_and_standard_error() {
        let e = run("printf partial; printf 'it broke\\n' >&2; exit 7", 1024)
            .err()
            .unwrap();
        assert_eq!(e, "it exited with status 7; its standard error: it broke");
        let e = run("exit 3", 1024).err().unwrap();
        assert_eq!(e, "it exited with status 3");
    }

    #[test]
    fn standard_input_is_empty() {
        // `cat` copies standard input: /dev/null gives nothing and ends at once.
        assert_eq!(run("cat", 1024).unwrap().stdout, "");
    }

    #[test]
    fn output_over_the_limit_is_refused() {
        let e = run("printf 123456", 5).err().unwrap();
        assert!(e.contains("longer than the 5 bytes"), "{e}");
        assert_eq!(run("printf 12345", 5).unwrap().stdout, "12345");
    }

    #[test]
    fn exec_runs_a_program_without_a_shell_whatever_its_status() {
        let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // `$HOME` stays text: no shell expands it.
        let done = exec(&argv(&["/bin/echo", "$HOME", "a b"]), 1024).unwrap();
        assert_eq!(done.stdout, b"$HOME a b\n");
        assert_eq!(status_code(done.status), 0);
        let done = exec(
            &argv(&["/bin/sh", "-c", "printf o; printf e >&2; exit 7"]),
            1024,
        )
        .unwrap();
        assert_eq!(
            (done.stdout.as_slice(), done.stderr.as_slice()),
            (&b"o"[..], &b"e"[..])
        );
        assert_eq!(status_code(done.status), 7);
        let done = exec(&argv(&["/bin/sh", "-c", "kill -9 $$"]), 1024).unwrap();
        assert_eq!(status_code(done.status), 137);
        assert!(exec(&[], 1024).is_err());
        let e = exec(&argv(&["/nusquam/programma"]), 1024).err().unwrap();
        assert!(e.starts_with("cannot start `/nusquam/programma`"), "{e}");
    }

    #[test]
    fn a_signal_is_named() {
        let e = run("kill -9 $$", 1024).err().unwrap();
        assert_eq!(e, "it was ended by signal 9");
    }
}
