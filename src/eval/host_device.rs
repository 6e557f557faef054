//! The host functions behind `norma:solum`, `norma:solum/path`, `norma:consolum` and
//! `norma:processus` (docs/norma.md): file-system requests and shell commands go to
//! [`Io::device`], the
//! standard streams to the `Io` stream methods, and the four path functions are pure
//! (`std::path`, nothing is read). A failure is RUN017 with the host's reason.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::device::{Device, FileStatus, Reply, Stream};
use super::value::Value;
use super::{fault, FResult, Io};
use crate::diag::codes;
use crate::ir::host::Host;

/// Runs device host function `h` (one of the `solum_*`, `via_*`, `consolum_*`,
/// `processus_*` functions and `scribe_octetos`).
pub(super) fn call(h: Host, args: &[Value], io: &mut dyn Io) -> FResult<Value> {
    let path = || text(h, &args[0]);
    let second = || text(h, &args[1]);
    let req = match h {
        Host::ScribeOctetos => {
            let p = path()?;
            return match io.write_bytes(p, bytes(h, &args[1])?) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(codes::RUN_HOST, format!("cannot write `{p}`: {e}")),
            };
        }
        Host::SolumCarpe => {
            let p = path()?;
            return match io.read_file(p) {
                Ok(s) => Ok(Value::list(s.lines().map(Value::text).collect())),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read `{p}`: {e}")),
            };
        }
        Host::ViaIunge => return join(h, &args[0]),
        Host::ViaParens => {
            let parent = Path::new(path()?).parent();
            return Ok(Value::text(parent.and_then(Path::to_str).unwrap_or("")));
        }
        Host::ViaNomen => {
            let name = Path::new(path()?).file_name();
            return Ok(Value::text(name.and_then(|n| n.to_str()).unwrap_or("")));
        }
        Host::ViaSuffixum => {
            let ext = Path::new(path()?).extension().and_then(|e| e.to_str());
            return Ok(Value::text(
                ext.map(|e| format!(".{e}")).unwrap_or_default(),
            ));
        }
        Host::ConsolumDic => {
            io.stdout(path()?);
            return Ok(Value::Vacuum);
        }
        Host::ConsolumMone => {
            io.stderr(path()?);
            return Ok(Value::Vacuum);
        }
        Host::ConsolumFunde => {
            io.stdout_bytes(bytes(h, &args[0])?);
            return Ok(Value::Vacuum);
        }
        Host::ConsolumHauri => {
            let n = count(h, &args[0], "the byte count")?;
            return match io.read_stdin(n) {
                Ok(b) => Ok(Value::Bytes(Rc::new(b))),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read standard input: {e}")),
            };
        }
        Host::ConsolumTerminalis => {
            let stream = match int(h, &args[0])? {
                0 => Stream::In,
                1 => Stream::Out,
                2 => Stream::Err,
                n => {
                    return fault(
                        codes::RUN_HOST,
                        format!(
                            "`hospes.{}`: {n} is not a standard stream (0, 1 or 2)",
                            h.name()
                        ),
                    )
                }
            };
            return Ok(Value::Bool(io.is_terminal(stream)));
        }
        Host::ProcessusExi => {
            let code = int(h, &args[0])?;
            return Err(super::Fault::Exit(code));
        }
        Host::SolumPartem => Device::ReadRange {
            path: path()?,
            start: count(h, &args[1], "the start")?,
            len: count(h, &args[2], "the length")?,
        },
        Host::SolumInveni => Device::Find {
            path: path()?,
            pattern: second()?.as_bytes(),
            start: count(h, &args[2], "the start")?,
            len: count(h, &args[3], "the length")?,
        },
        Host::SolumAppone => Device::Append {
            path: path()?,
            text: second()?,
        },
        Host::SolumExstat => Device::Exists(path()?),
        Host::SolumDirectoriumne => Device::IsDir(path()?),
        Host::SolumRegularene => Device::IsFile(path()?),
        Host::SolumLegibilene => Device::Readable(path()?),
        Host::SolumVinculumne => Device::IsLink(path()?),
        Host::SolumMensura => Device::Size(path()?),
        Host::SolumModus => Device::Mode(path()?),
        Host::SolumStatus => Device::Status(path()?),
        Host::SolumSequere => Device::ReadLink(path()?),
        Host::SolumVincula => Device::Symlink {
            target: path()?,
            link: second()?,
        },
        Host::SolumDele => Device::RemoveFile(path()?),
        Host::SolumExscribe => Device::Copy {
            from: path()?,
            to: second()?,
        },
        Host::SolumRenomina => Device::Rename {
            from: path()?,
            to: second()?,
        },
        Host::SolumTange => Device::Touch(path()?),
        Host::SolumModum => {
            let mode = int(h, &args[1])?;
            if !(0..=0o7777).contains(&mode) {
                return fault(
                    codes::RUN_HOST,
                    format!(
                        "cannot set the mode of `{}`: {mode} is not a mode (0 to 0o7777)",
                        path()?
                    ),
                );
            }
            Device::SetMode {
                path: path()?,
                mode: mode as u32,
            }
        }
        Host::SolumCrea => Device::CreateDir(path()?),
        Host::SolumEnumera => Device::List(path()?),
        Host::SolumAmputa => Device::RemoveTree(path()?),
        Host::SolumAbsolve => Device::Absolute(path()?),
        Host::SolumDomus => Device::Home,
        Host::SolumTemporarium => Device::TempDir,
        Host::ProcessusAmbitus => Device::Env(path()?),
        Host::ProcessusSedes => Device::WorkingDir,
        Host::ProcessusIdentitas => Device::ProcessId,
        Host::ProcessusCaptura => {
            let Value::List(items) = &args[0] else {
                return fault(
                    codes::RUN_TYPE,
                    format!("`hospes.{}` needs a lista of textus", h.name()),
                );
            };
            let mut argv = Vec::with_capacity(items.len());
            for item in items.iter() {
                argv.push(text(h, item)?.to_string());
            }
            let req = Device::Exec(&argv);
            return match io.device(&req) {
                Ok(reply) => Ok(value(reply)),
                Err(e) => fault(codes::RUN_HOST, format!("{}: {e}", what(&req))),
            };
        }
        Host::ProcessusExsequi => {
            let req = Device::Shell(path()?);
            return match io.device(&req) {
                Ok(Reply::Output { stdout, stderr }) => {
                    // What the command said on standard error goes on faber's.
                    if !stderr.is_empty() {
                        io.stderr(&stderr);
                    }
                    Ok(Value::text(stdout))
                }
                Ok(other) => Ok(value(other)),
                Err(e) => fault(codes::RUN_HOST, format!("{}: {e}", what(&req))),
            };
        }
        _ => {
            return fault(
                codes::RUN_HOST,
                format!("`hospes.{}` is not a device function", h.name()),
            )
        }
    };
    match io.device(&req) {
        Ok(reply) => Ok(value(reply)),
        Err(e) => fault(codes::RUN_HOST, format!("{}: {e}", what(&req))),
    }
}

/// The value a device reply is to the program.
fn value(reply: Reply) -> Value {
    match reply {
        Reply::Done => Value::Vacuum,
        Reply::Bool(b) => Value::Bool(b),
        Reply::Int(n) => Value::Int(n),
        Reply::Text(s) => Value::text(s),
        Reply::MaybeText(s) => s.map(Value::text).unwrap_or(Value::Nihil),
        Reply::Bytes(b) => Value::Bytes(Rc::new(b)),
        Reply::Names(ns) => Value::list(ns.into_iter().map(Value::text).collect()),
        Reply::Status(s) => status(&s),
        Reply::Output { stdout, .. } => Value::text(stdout),
        Reply::Captured {
            status,
            stdout,
            stderr,
        } => captured(status, stdout, stderr),
    }
}

/// `hospes.processus_captura`'s value: the object `{"status", "stdout", "stderr"}`.
fn captured(status: i64, stdout: String, stderr: String) -> Value {
    use super::json::{Json, Members};
    let mut members = Members::default();
    members.insert("status".to_string(), Rc::new(Json::Int(status)));
    members.insert("stdout".to_string(), Rc::new(Json::Text(stdout)));
    members.insert("stderr".to_string(), Rc::new(Json::Text(stderr)));
    Value::Json(Rc::new(Json::Object(members)))
}

/// `hospes.solum_status`: the eight fields of `SolumStatus` in declaration order, the
/// two flags as 0 / 1 (stdlib/src/solum.fab builds the genus).
fn status(s: &FileStatus) -> Value {
    let fields = [
        s.mode,
        s.links,
        s.uid,
        s.gid,
        s.size,
        s.modified_ms,
        s.is_dir as i64,
        s.is_link as i64,
    ];
    Value::list(fields.into_iter().map(Value::Int).collect())
}

/// What a failed request was doing, for its message.
pub(super) fn what(req: &Device) -> String {
    match req {
        Device::ReadRange { path, .. } | Device::Find { path, .. } => {
            format!("cannot read `{path}`")
        }
        Device::Append { path, .. } => format!("cannot append to `{path}`"),
        Device::Exists(p)
        | Device::IsDir(p)
        | Device::IsFile(p)
        | Device::Readable(p)
        | Device::IsLink(p)
        | Device::Size(p)
        | Device::Mode(p)
        | Device::Status(p) => format!("cannot look at `{p}`"),
        Device::ReadLink(p) => format!("cannot read the link `{p}`"),
        Device::Symlink { link, .. } => format!("cannot create the link `{link}`"),
        Device::RemoveFile(p) | Device::RemoveTree(p) => format!("cannot remove `{p}`"),
        Device::Copy { from, to } => format!("cannot copy `{from}` to `{to}`"),
        Device::Rename { from, to } => format!("cannot rename `{from}` to `{to}`"),
        Device::Touch(p) => format!("cannot touch `{p}`"),
        Device::SetMode { path, .. } => format!("cannot set the mode of `{path}`"),
        Device::CreateDir(p) => format!("cannot create the directory `{p}`"),
        Device::List(p) => format!("cannot list `{p}`"),
        Device::Absolute(p) => format!("cannot resolve `{p}`"),
        Device::Home => "cannot find the home directory".to_string(),
        Device::TempDir => "cannot find the temporary directory".to_string(),
        Device::Env(n) => format!("cannot read the environment variable `{n}`"),
        Device::WorkingDir => "cannot find the working directory".to_string(),
        Device::ProcessId => "cannot find the process id".to_string(),
        Device::Entropy(_) => "cannot read random bytes".to_string(),
        Device::Shell(command) => format!("the command `{command}` failed"),
        Device::Exec(argv) => format!("cannot run `{}`", argv.first().map_or("", String::as_str)),
    }
}

/// `hospes.via_iunge(partes)`: the parts pushed in order as `std::path` does (an
/// absolute part starts over from itself); empty parts are skipped.
fn join(h: Host, parts: &Value) -> FResult<Value> {
    let Value::List(items) = parts else {
        return fault(
            codes::RUN_TYPE,
            format!("`hospes.{}` needs a lista of textus", h.name()),
        );
    };
    let mut buf = PathBuf::new();
    for item in items.iter() {
        let part = text(h, item)?;
        if !part.is_empty() {
            buf.push(part);
        }
    }
    // Every part is UTF-8, so their join is.
    Ok(Value::text(buf.to_string_lossy().into_owned()))
}

pub(super) fn bytes(h: Host, v: &Value) -> FResult<&[u8]> {
    match v {
        Value::Bytes(b) => Ok(b.as_slice()),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`hospes.{}` needs octeti, not a {}",
                h.name(),
                other.type_name()
            ),
        ),
    }
}

pub(super) fn int(h: Host, v: &Value) -> FResult<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`hospes.{}` needs a numerus, not a {}",
                h.name(),
                other.type_name()
            ),
        ),
    }
}

/// A byte count or offset: a numerus ≥ 0.
pub(super) fn count(h: Host, v: &Value, what: &str) -> FResult<u64> {
    let n = int(h, v)?;
    u64::try_from(n).or_else(|_| {
        fault(
            codes::RUN_HOST,
            format!(
                "`hospes.{}`: {what} must not be negative, not {n}",
                h.name()
            ),
        )
    })
}

/// The text argument of a host function, or RUN_TYPE naming the function.
pub(super) fn text(h: Host, v: &Value) -> FResult<&str> {
    match v {
        Value::Text(s) => Ok(s.as_str()),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`hospes.{}` needs a textus, not a {}",
                h.name(),
                other.type_name()
            ),
        ),
    }
}
