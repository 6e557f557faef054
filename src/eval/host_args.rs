//! The program's command line parsed by its declarations (src/ir/cli_spec.rs, written by
//! src/ir/lower/argumenta.rs and commands.rs; docs/language.md § "Command-line
//! arguments" and § "Commands" give the rules): `hospes.argumenta_parsa` gives the
//! entry's record, `hospes.imperium_elige` the command a CLI program runs and
//! `hospes.imperium_argumenta` that command's record. A command line that does not fit is
//! RUN024; `--help` and `--version` print on standard output and end the run with 0.

use super::host_args_help as help;
use super::value::{Record, Value};
use super::{fault, FResult, Fault, Io};
use crate::diag::codes;
use crate::ir::cli_spec::{ArgDecl, ArgKind, CliSpec};
use crate::ir::{GenusId, Program};

/// The command line read: the command chosen (None: the entry's own), each
/// declaration's value (by index in `spec.args`; None when absent), the operands.
struct Walked {
    cmd: Option<usize>,
    values: Vec<Option<Value>>,
    operands: Vec<String>,
}

/// How a walk ended.
enum Outcome {
    Run(Walked),
    /// `--help`: the help of the command or group reached.
    Help(Vec<String>, Option<usize>),
    Version,
}

fn value(d: &ArgDecl, raw: &str) -> Result<Value, String> {
    let bad = |what: &str| format!("`{}` expects {what}, found `{raw}`", d.name);
    match d.ty.as_str() {
        "numerus" => raw
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| bad("an integer")),
        "fractus" => raw
            .parse::<f64>()
            .map(Value::Float)
            .map_err(|_| bad("a number")),
        "bivalens" => match raw {
            "verum" | "true" => Ok(Value::Bool(true)),
            "falsum" | "false" => Ok(Value::Bool(false)),
            _ => Err(bad("verum or falsum")),
        },
        _ => Ok(Value::text(raw)),
    }
}

/// Whether declaration `d` is an option the command line accepts at this point: the
/// entry's options before any command word, its `ubique` ones anywhere, and the
/// chosen command's own.
fn active(d: &ArgDecl, at_root: bool, cmd: Option<usize>) -> bool {
    d.kind == ArgKind::Opt
        && match d.owner {
            None => at_root || d.ubique,
            Some(k) => cmd == Some(k),
        }
}

/// Is `word` a help flag here (`--help`, or `-h` that no option claims)?
fn is_help(spec: &CliSpec, word: &str, at_root: bool, cmd: Option<usize>) -> bool {
    spec.help
        && (word == "--help"
            || (word == "-h"
                && !spec
                    .args
                    .iter()
                    .any(|d| active(d, at_root, cmd) && d.short == "h")))
}

/// Walks the command line. `Err` is the RUN024 message.
fn walk(spec: &CliSpec, argv: &[String]) -> Result<Outcome, String> {
    let has_cmds = !spec.commands.is_empty();
    let any_options = spec.help || spec.args.iter().any(|d| d.kind == ArgKind::Opt);
    let mut node: Vec<String> = Vec::new();
    let mut w = Walked {
        cmd: None,
        values: vec![None; spec.args.len()],
        operands: Vec::new(),
    };
    let mut only_operands = !any_options;
    // `--help` before `--` asks for help about the command the other words name; a
    // word that does not fit is then no error, help about what was read so far is.
    let help_asked = spec.help
        && argv
            .iter()
            .take_while(|a| *a != "--")
            .any(|a| a == "--help" || a == "-h");
    let mut help_seen = false;
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        i += 1;
        let at_root = node.is_empty();
        if !only_operands && a == "--" {
            only_operands = true;
            continue;
        }
        if !only_operands && is_help(spec, a, at_root, w.cmd) {
            help_seen = true;
            continue;
        }
        if !only_operands && spec.help && !spec.version.is_empty() && a == "--version" {
            return Ok(Outcome::Version);
        }
        if !only_operands && a != "-" && a.starts_with('-') {
            match option(spec, argv, &mut i, a, &mut w, at_root) {
                Ok(true) => continue,
                Ok(false) => {}
                Err(_) if help_asked => return Ok(Outcome::Help(node, w.cmd)),
                Err(e) => return Err(e),
            }
        }
        if has_cmds && w.cmd.is_none() {
            match step(spec, &node, a) {
                Step::Command(k) => {
                    node = spec.commands[k].path.clone();
                    w.cmd = Some(k);
                }
                Step::Group => node.push(a.clone()),
                Step::Unknown if help_asked => return Ok(Outcome::Help(node, None)),
                Step::Unknown => return Err(unknown_command(spec, &node, a)),
            }
            continue;
        }
        w.operands.push(a.clone());
    }
    if help_seen {
        return Ok(Outcome::Help(node, w.cmd));
    }
    if has_cmds && w.cmd.is_none() {
        let names = help::children(spec, &node);
        let what = if node.is_empty() {
            String::new()
        } else {
            format!(" after `{}`", node.join(" "))
        };
        return Err(format!(
            "a command is needed{what}: {} (`--help` describes them)",
            names.join(", ")
        ));
    }
    Ok(Outcome::Run(w))
}

enum Step {
    Command(usize),
    Group,
    Unknown,
}

/// The command word `word` at `node`: a command (by name or alias), a group on the way
/// to commands, or neither.
fn step(spec: &CliSpec, node: &[String], word: &str) -> Step {
    let under = |path: &[String]| path.len() > node.len() && path[..node.len()] == *node;
    let here = |path: &[String]| path.len() == node.len() + 1 && under(path);
    if let Some(k) = spec
        .commands
        .iter()
        .position(|c| here(&c.path) && c.path[node.len()] == word)
    {
        return Step::Command(k);
    }
    if let Some(k) = spec
        .commands
        .iter()
        .position(|c| here(&c.path) && c.aliases.iter().any(|x| x == word))
    {
        return Step::Command(k);
    }
    if spec
        .commands
        .iter()
        .any(|c| under(&c.path) && c.path[node.len()] == word)
    {
        return Step::Group;
    }
    Step::Unknown
}

fn unknown_command(spec: &CliSpec, node: &[String], word: &str) -> String {
    let names = help::children(spec, node);
    let mut msg = format!("unknown command `{word}`");
    if let Some(n) = crate::diag::suggest::nearest(word, names.iter().map(String::as_str)) {
        msg.push_str(&format!(" (did you mean `{n}`?)"));
    }
    let of = if node.is_empty() {
        String::new()
    } else {
        format!(" of `{}`", node.join(" "))
    };
    msg.push_str(&format!(
        "; the commands{of} are {} (`--help` describes them)",
        names.join(", ")
    ));
    msg
}

/// Reads the option word `a` (and its value, from the next word when it takes one).
/// `Ok(false)`: not an option after all (a negative number, read as an operand).
fn option(
    spec: &CliSpec,
    argv: &[String],
    i: &mut usize,
    a: &str,
    w: &mut Walked,
    at_root: bool,
) -> Result<bool, String> {
    let find = |pred: &dyn Fn(&ArgDecl) -> bool| {
        spec.args
            .iter()
            .position(|d| active(d, at_root, w.cmd) && pred(d))
    };
    // `--long`, `--long=value`, `-s`, `-svalue`, `-abc` (flags together).
    let (found, inline): (Option<usize>, Option<String>) = if let Some(long) = a.strip_prefix("--")
    {
        let (name, v) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (long, None),
        };
        (find(&|d| d.long == name), v)
    } else {
        let mut chars = a[1..].chars();
        let c = chars.next().map(String::from).unwrap_or_default();
        let rest: String = chars.collect();
        match find(&|d| d.short == c) {
            Some(k) if spec.args[k].ty == "bivalens" && !rest.is_empty() => {
                w.values[k] = Some(Value::Bool(true));
                for c in rest.chars() {
                    let c = c.to_string();
                    match find(&|d| d.short == c && d.ty == "bivalens") {
                        Some(k) => w.values[k] = Some(Value::Bool(true)),
                        None => return Err(format!("unknown option `-{c}` in `{a}`")),
                    }
                }
                return Ok(true);
            }
            Some(k) => (Some(k), (!rest.is_empty()).then_some(rest)),
            None => (None, None),
        }
    };
    let Some(k) = found else {
        if a.parse::<f64>().is_ok() {
            return Ok(false);
        }
        let more = if spec.help {
            " (`--help` lists the options)"
        } else {
            ""
        };
        return Err(format!("unknown option `{a}`{more}"));
    };
    let d = &spec.args[k];
    if d.ty == "bivalens" {
        w.values[k] = Some(match inline {
            None => Value::Bool(true),
            Some(v) => value(d, &v)?,
        });
        return Ok(true);
    }
    let raw = match inline {
        Some(v) => v,
        None if *i < argv.len() => {
            *i += 1;
            argv[*i - 1].clone()
        }
        None => return Err(format!("option `{a}` needs a value")),
    };
    w.values[k] = Some(value(d, &raw)?);
    Ok(true)
}

/// Fills the operands of the chosen command (or the entry) and every default; the
/// values of `target`'s record in field order.
fn record_values(
    spec: &CliSpec,
    mut w: Walked,
    target: Option<usize>,
) -> Result<Vec<Value>, String> {
    let owner = w.cmd;
    let mut operands = std::mem::take(&mut w.operands).into_iter();
    for (k, d) in spec.args.iter().enumerate() {
        if d.owner != owner {
            continue;
        }
        match d.kind {
            ArgKind::One => match (operands.next(), &d.default) {
                (Some(raw), _) => w.values[k] = Some(value(d, &raw)?),
                (None, Some(def)) => w.values[k] = Some(value(d, def)?),
                (None, None) => return Err(format!("missing the operand `{}`", d.name)),
            },
            ArgKind::Rest => {
                let vals: Result<Vec<Value>, String> =
                    operands.by_ref().map(|raw| value(d, &raw)).collect();
                w.values[k] = Some(Value::list(vals?));
            }
            ArgKind::Opt => {}
        }
    }
    if let Some(extra) = operands.next() {
        return Err(format!("unexpected operand `{extra}`"));
    }
    let fields = spec.fields_of(target);
    let mut out = Vec::with_capacity(fields.len());
    for d in fields {
        let k = spec
            .args
            .iter()
            .position(|x| std::ptr::eq(x, d))
            .unwrap_or_default();
        let v = match (w.values[k].take(), &d.default) {
            (Some(v), _) => v,
            (None, Some(def)) => value(d, def)?,
            (None, None) => match (d.kind, d.ty.as_str()) {
                (ArgKind::Rest, _) => Value::list(Vec::new()),
                (ArgKind::Opt, "bivalens") => Value::Bool(false),
                _ => Value::Nihil,
            },
        };
        out.push(v);
    }
    Ok(out)
}

fn read_spec(
    prog: &Program,
    genus: Option<&Value>,
    spec: &Value,
) -> FResult<(CliSpec, Option<usize>)> {
    let refuse = || {
        fault(
            codes::RUN_TYPE,
            "`hospes.argumenta_parsa`: not a command-line declaration",
        )
    };
    let Value::Text(text) = spec else {
        return refuse();
    };
    let Some(spec) = CliSpec::from_text(text) else {
        return refuse();
    };
    let genus = match genus {
        None => None,
        Some(Value::Int(g)) => match usize::try_from(*g).ok().filter(|&g| g < prog.genera.len()) {
            Some(g) => Some(g),
            None => return refuse(),
        },
        Some(_) => return refuse(),
    };
    Ok((spec, genus))
}

/// Walks `argv`; `--help` and `--version` print and end the run (exit 0).
fn walked(spec: &CliSpec, io: &mut dyn Io) -> FResult<Walked> {
    match walk(spec, &io.args()) {
        Ok(Outcome::Run(w)) => Ok(w),
        Ok(Outcome::Help(node, cmd)) => {
            io.stdout(&help::text(spec, &node, cmd));
            Err(Fault::Exit(0))
        }
        Ok(Outcome::Version) => {
            io.stdout(&help::version(spec));
            Err(Fault::Exit(0))
        }
        Err(msg) => fault(codes::RUN_ARGUMENTS, msg),
    }
}

fn record(
    prog: &Program,
    genus: usize,
    spec: &CliSpec,
    w: Walked,
    target: Option<usize>,
) -> FResult<Value> {
    let fields = match record_values(spec, w, target) {
        Ok(f) => f,
        Err(msg) => return fault(codes::RUN_ARGUMENTS, msg),
    };
    if prog.genera[genus].fields.len() != fields.len() {
        return fault(
            codes::RUN_TYPE,
            "`hospes.argumenta_parsa`: not a command-line declaration",
        );
    }
    Ok(Value::Record(std::rc::Rc::new(Record {
        genus: GenusId(genus as u32),
        fields,
    })))
}

/// `hospes.argumenta_parsa(genus, spec)`: the entry's record.
pub(crate) fn parse(
    prog: &Program,
    genus: &Value,
    spec: &Value,
    io: &mut dyn Io,
) -> FResult<Value> {
    let (spec, genus) = read_spec(prog, Some(genus), spec)?;
    let mut w = walked(&spec, io)?;
    // With commands, the operands are the command's: the entry's record (which
    // declares no operands then) has options only.
    if w.cmd.take().is_some() {
        w.operands.clear();
    }
    record(prog, genus.unwrap_or_default(), &spec, w, None)
}

/// `hospes.imperium_elige(spec)`: the index of the command the command line names.
pub(crate) fn choose(prog: &Program, spec: &Value, io: &mut dyn Io) -> FResult<Value> {
    let (spec, _) = read_spec(prog, None, spec)?;
    let w = walked(&spec, io)?;
    let cmd = w.cmd;
    // Every operand and default is checked now, before the entry's body runs.
    if let Err(msg) = record_values(&spec, w, cmd) {
        return fault(codes::RUN_ARGUMENTS, msg);
    }
    Ok(Value::Int(cmd.map_or(-1, |k| k as i64)))
}

/// `hospes.imperium_argumenta(genus, spec, k)`: the record of command `k`.
pub(crate) fn command(
    prog: &Program,
    genus: &Value,
    spec: &Value,
    k: &Value,
    io: &mut dyn Io,
) -> FResult<Value> {
    let (spec, genus) = read_spec(prog, Some(genus), spec)?;
    let Value::Int(k) = k else {
        return fault(
            codes::RUN_TYPE,
            "`hospes.imperium_argumenta`: not a command",
        );
    };
    let w = walked(&spec, io)?;
    if w.cmd.map(|c| c as i64) != Some(*k) {
        return fault(
            codes::RUN_TYPE,
            "`hospes.imperium_argumenta`: not the command chosen",
        );
    }
    let cmd = w.cmd;
    record(prog, genus.unwrap_or_default(), &spec, w, cmd)
}

#[cfg(test)]
mod tests;
