//! The command-line parser on hand-made declarations: options, operands, defaults,
//! commands, `--help` and the RUN024 messages.

use super::*;
use crate::eval::display::display;
use crate::ir::cli_spec::Command;
use crate::ir::{Field, Genus, Ty};

struct ArgsIo {
    args: Vec<String>,
    out: String,
}

impl Io for ArgsIo {
    fn stdout(&mut self, s: &str) {
        self.out.push_str(s);
    }
    fn stderr(&mut self, _: &str) {}
    fn args(&self) -> Vec<String> {
        self.args.clone()
    }
}

fn decl(
    owner: Option<usize>,
    kind: ArgKind,
    name: &str,
    ty: &str,
    short: &str,
    long: &str,
) -> ArgDecl {
    ArgDecl {
        owner,
        kind,
        name: name.into(),
        ty: ty.into(),
        short: short.into(),
        long: long.into(),
        ubique: false,
        default: None,
        descr: String::new(),
    }
}

fn io(args: &[&str]) -> ArgsIo {
    ArgsIo {
        args: args.iter().map(|s| s.to_string()).collect(),
        out: String::new(),
    }
}

/// A program whose genus 0 is the record of `target`.
fn program(spec: &CliSpec, target: Option<usize>) -> Program {
    let mut p = Program::default();
    p.genera.push(Genus {
        name: "argumenta".into(),
        fields: spec
            .fields_of(target)
            .iter()
            .map(|d| Field {
                name: d.name.clone(),
                ty: Ty::Any,
                narrow: false,
            })
            .collect(),
    });
    p
}

/// The entry's record as displayed, or the RUN024 message, or `exit 0: <stdout>`.
fn entry(spec: &CliSpec, args: &[&str]) -> String {
    let p = program(spec, None);
    let mut io = io(args);
    match parse(&p, &Value::Int(0), &Value::text(spec.to_text()), &mut io) {
        Ok(v) => display(&v, &p),
        Err(Fault::Error(c, m)) => format!("{}: {m}", c.id),
        Err(Fault::Exit(0)) => format!("exit 0: {}", io.out),
        Err(_) => "other fault".into(),
    }
}

/// The command chosen and its record, or the message.
fn command_line(spec: &CliSpec, args: &[&str]) -> String {
    let mut io1 = io(args);
    let text = Value::text(spec.to_text());
    let k = match choose(&Program::default(), &text, &mut io1) {
        Ok(Value::Int(k)) => k,
        Ok(_) => return "not an index".into(),
        Err(Fault::Error(c, m)) => return format!("{}: {m}", c.id),
        Err(Fault::Exit(0)) => return format!("exit 0: {}", io1.out),
        Err(_) => return "other fault".into(),
    };
    let p = program(spec, Some(k as usize));
    let mut io2 = io(args);
    match command(&p, &Value::Int(0), &text, &Value::Int(k), &mut io2) {
        Ok(v) => format!("{k}: {}", display(&v, &p)),
        Err(Fault::Error(c, m)) => format!("{}: {m}", c.id),
        Err(_) => "other fault".into(),
    }
}

fn single() -> CliSpec {
    CliSpec {
        args: vec![
            decl(None, ArgKind::Opt, "n", "numerus", "n", "lineae"),
            decl(None, ArgKind::Opt, "v", "bivalens", "v", ""),
            decl(None, ArgKind::Opt, "q", "bivalens", "q", ""),
            decl(None, ArgKind::Rest, "r", "textus", "", ""),
        ],
        ..CliSpec::default()
    }
}

#[test]
fn options_and_operands() {
    let got = entry(&single(), &["-vq", "a", "--lineae=5", "--", "-v"]);
    assert!(got.contains("n = 5"), "{got}");
    assert!(
        got.contains("v = verum") && got.contains("q = verum"),
        "{got}"
    );
    assert!(got.contains("r = [a, -v]"), "{got}");
    let got = entry(&single(), &["-n", "-3"]);
    assert!(
        got.contains("n = -3") && got.contains("v = falsum"),
        "{got}"
    );
    // Without `@ cli`, `--help` is an unknown option like any other.
    assert_eq!(
        entry(&single(), &["--help"]),
        "RUN024: unknown option `--help`"
    );
}

#[test]
fn command_lines_that_do_not_fit_are_run024() {
    let mut three = single();
    three.args.pop();
    let cases: &[(&[&str], &str)] = &[
        (&["--nope"], "unknown option `--nope`"),
        (&["-vz"], "unknown option `-z` in `-vz`"),
        (&["-n"], "option `-n` needs a value"),
        (&["--lineae", "x"], "`n` expects an integer, found `x`"),
        (&["-v=1"], "unknown option `-=` in `-v=1`"),
        (&["a"], "unexpected operand `a`"),
    ];
    for (args, want) in cases {
        assert_eq!(entry(&three, args), format!("RUN024: {want}"), "{args:?}");
    }
    let one = CliSpec {
        args: vec![decl(None, ArgKind::One, "x", "numerus", "", "")],
        ..CliSpec::default()
    };
    assert_eq!(entry(&one, &[]), "RUN024: missing the operand `x`");
    // No option declared: every word is an operand, `-n` included.
    assert!(entry(&one, &["-4"]).contains("x = -4"));
}

#[test]
fn defaults_fill_what_is_absent() {
    let mut spec = CliSpec::default();
    let mut top = decl(None, ArgKind::Opt, "top", "numerus", "", "top");
    top.default = Some("10".into());
    let mut name = decl(None, ArgKind::One, "nomen", "textus", "", "");
    name.default = Some("munde".into());
    spec.args = vec![top, name];
    let got = entry(&spec, &[]);
    assert!(
        got.contains("top = 10") && got.contains("nomen = munde"),
        "{got}"
    );
    let got = entry(&spec, &["--top", "3", "Marce"]);
    assert!(
        got.contains("top = 3") && got.contains("nomen = Marce"),
        "{got}"
    );
}

/// `prog [-v] [--root R]` with commands `hello <name>` (alias `hi`) and `greet bye`.
fn tree() -> CliSpec {
    let mut verbose = decl(None, ArgKind::Opt, "verbose", "bivalens", "v", "verbose");
    verbose.ubique = true;
    verbose.descr = "More output".into();
    let mut root = decl(None, ArgKind::Opt, "root", "textus", "", "root");
    root.default = Some("/r".into());
    let mut formal = decl(Some(1), ArgKind::Opt, "formal", "bivalens", "", "formal");
    formal.descr = "Formally".into();
    CliSpec {
        name: "prog".into(),
        version: "1.2".into(),
        descr: "A test".into(),
        help: true,
        args: vec![
            verbose,
            root,
            decl(Some(0), ArgKind::One, "name", "textus", "", ""),
            formal,
        ],
        commands: vec![
            Command {
                path: vec!["hello".into()],
                aliases: vec!["hi".into()],
                descr: "Say hello".into(),
            },
            Command {
                path: vec!["greet".into(), "bye".into()],
                aliases: vec![],
                descr: "Say goodbye".into(),
            },
        ],
        groups: vec![(vec!["greet".into()], "Greetings".into())],
    }
}

#[test]
fn the_command_line_names_the_command() {
    let t = tree();
    assert_eq!(
        command_line(&t, &["hello", "Marce"]),
        "0: argumenta { verbose = falsum, name = Marce }"
    );
    // An alias, the `ubique` option after the command.
    assert_eq!(
        command_line(&t, &["hi", "-v", "Marce"]),
        "0: argumenta { verbose = verum, name = Marce }"
    );
    assert_eq!(
        command_line(&t, &["--root", "/x", "greet", "bye", "--formal"]),
        "1: argumenta { verbose = falsum, formal = verum }"
    );
    // The entry's own record: its options, with the default.
    let got = entry(&t, &["-v", "greet", "bye"]);
    assert_eq!(got, "argumenta { verbose = verum, root = /r }");
    // An entry option that is not `ubique` stands before the command only.
    assert_eq!(
        command_line(&t, &["hello", "--root", "/x", "M"]),
        "RUN024: unknown option `--root` (`--help` lists the options)"
    );
    assert_eq!(
        command_line(&t, &["helo", "M"]),
        "RUN024: unknown command `helo` (did you mean `hello`?); the commands are hello, greet (`--help` describes them)"
    );
    assert_eq!(
        command_line(&t, &["-v"]),
        "RUN024: a command is needed: hello, greet (`--help` describes them)"
    );
    assert_eq!(
        command_line(&t, &["greet"]),
        "RUN024: a command is needed after `greet`: bye (`--help` describes them)"
    );
    assert_eq!(
        command_line(&t, &["hello"]),
        "RUN024: missing the operand `name`"
    );
}

#[test]
fn help_and_version_print_and_end_the_run() {
    let t = tree();
    assert_eq!(
        command_line(&t, &["--help"]),
        "exit 0: prog 1.2\nA test\n\nUsage: prog [options] <command>\n\nCommands:\n  hello, hi  Say hello\n  greet ...  Greetings\n\nOptions:\n  -v, --verbose        More output\n      --root <textus>  (default: /r)\n  -h, --help           Show this help\n      --version        Show the version\n"
    );
    assert_eq!(
        command_line(&t, &["greet", "bye", "-h"]),
        "exit 0: Say goodbye\n\nUsage: prog greet bye [options]\n\nOptions:\n  -v, --verbose  More output\n      --formal   Formally\n  -h, --help     Show this help\n"
    );
    // Help about what was read so far, even when the rest does not fit.
    let got = command_line(&t, &["greet", "nope", "--help"]);
    assert!(
        got.starts_with("exit 0: Greetings\n\nUsage: prog greet [options] <command>"),
        "{got}"
    );
    assert_eq!(command_line(&t, &["--version"]), "exit 0: prog 1.2\n");
    // After `--` it is an operand.
    assert_eq!(
        command_line(&t, &["hello", "--", "--help"]),
        "0: argumenta { verbose = falsum, name = --help }"
    );
}
