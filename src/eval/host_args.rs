//! `hospes.argumenta_parsa`: the program's arguments parsed by the entry's
//! `@ operandus` / `@ optio` declarations (src/ir/lower/argumenta.rs writes the spec;
//! docs/language.md § "Command-line arguments" describes the rules). A command line
//! that does not fit is RUN024.

use super::value::{Record, Value};
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::{GenusId, Program};

struct Spec<'a> {
    kind: &'a str,
    name: &'a str,
    ty: &'a str,
    short: &'a str,
    long: &'a str,
}

fn specs(text: &str) -> Option<Vec<Spec<'_>>> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 5).then(|| Spec {
                kind: f[0],
                name: f[1],
                ty: f[2],
                short: f[3],
                long: f[4],
            })
        })
        .collect()
}

fn value(spec: &Spec, raw: &str) -> FResult<Value> {
    let bad = |what: &str| {
        fault(
            codes::RUN_ARGUMENTS,
            format!("`{}` expects {what}, found `{raw}`", spec.name),
        )
    };
    match spec.ty {
        "numerus" => raw
            .parse::<i64>()
            .map(Value::Int)
            .or_else(|_| bad("an integer")),
        "fractus" => raw
            .parse::<f64>()
            .map(Value::Float)
            .or_else(|_| bad("a number")),
        "bivalens" => match raw {
            "verum" | "true" => Ok(Value::Bool(true)),
            "falsum" | "false" => Ok(Value::Bool(false)),
            _ => bad("verum or falsum"),
        },
        _ => Ok(Value::text(raw)),
    }
}

/// Parses `args` into a record of genus `genus` whose fields follow `spec`.
pub(crate) fn parse(
    prog: &Program,
    genus: &Value,
    spec: &Value,
    args: Vec<String>,
) -> FResult<Value> {
    let (Value::Int(g), Value::Text(spec)) = (genus, spec) else {
        return fault(
            codes::RUN_TYPE,
            "`hospes.argumenta_parsa` needs (numerus, textus)",
        );
    };
    let specs = specs(spec);
    let genus = usize::try_from(*g).ok().filter(|&g| g < prog.genera.len());
    let (Some(specs), Some(genus)) = (specs, genus) else {
        return fault(
            codes::RUN_TYPE,
            "`hospes.argumenta_parsa`: not a command-line declaration",
        );
    };
    if prog.genera[genus].fields.len() != specs.len() {
        return fault(
            codes::RUN_TYPE,
            "`hospes.argumenta_parsa`: not a command-line declaration",
        );
    }
    let has_options = specs.iter().any(|s| s.kind == "opt");
    let mut fields: Vec<Value> = specs
        .iter()
        .map(|s| match (s.kind, s.ty) {
            ("rest", _) => Value::list(Vec::new()),
            ("opt", "bivalens") => Value::Bool(false),
            _ => Value::Nihil,
        })
        .collect();
    let mut operands: Vec<String> = Vec::new();
    let mut only_operands = !has_options;
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if only_operands || a == "-" || !a.starts_with('-') {
            operands.push(a.clone());
            continue;
        }
        if a == "--" {
            only_operands = true;
            continue;
        }
        // `--long`, `--long=value`, `-s`, `-svalue`, `-abc` (bivalens flags together).
        let (found, inline): (Option<usize>, Option<String>) =
            if let Some(long) = a.strip_prefix("--") {
                let (name, v) = match long.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (long, None),
                };
                (
                    specs.iter().position(|s| s.kind == "opt" && s.long == name),
                    v,
                )
            } else {
                let mut chars = a[1..].chars();
                let c = chars.next().map(String::from).unwrap_or_default();
                let rest: String = chars.collect();
                let at = specs.iter().position(|s| s.kind == "opt" && s.short == c);
                match at {
                    Some(k) if specs[k].ty == "bivalens" && !rest.is_empty() => {
                        // `-abc`: every letter a flag.
                        fields[k] = Value::Bool(true);
                        for c in rest.chars() {
                            let c = c.to_string();
                            match specs
                                .iter()
                                .position(|s| s.kind == "opt" && s.short == c && s.ty == "bivalens")
                            {
                                Some(k) => fields[k] = Value::Bool(true),
                                None => {
                                    return fault(
                                        codes::RUN_ARGUMENTS,
                                        format!("unknown option `-{c}` in `{a}`"),
                                    )
                                }
                            }
                        }
                        continue;
                    }
                    Some(k) => (Some(k), (!rest.is_empty()).then_some(rest)),
                    None => (None, None),
                }
            };
        let Some(k) = found else {
            if a.parse::<f64>().is_ok() {
                operands.push(a.clone());
                continue;
            }
            return fault(codes::RUN_ARGUMENTS, format!("unknown option `{a}`"));
        };
        let spec = &specs[k];
        if spec.ty == "bivalens" {
            fields[k] = match inline {
                None => Value::Bool(true),
                Some(v) => value(spec, &v)?,
            };
            continue;
        }
        let raw = match inline {
            Some(v) => v,
            None if i < args.len() => {
                i += 1;
                args[i - 1].clone()
            }
            None => return fault(codes::RUN_ARGUMENTS, format!("option `{a}` needs a value")),
        };
        fields[k] = value(spec, &raw)?;
    }
    let mut operands = operands.into_iter();
    for (k, s) in specs.iter().enumerate() {
        match s.kind {
            "one" => match operands.next() {
                Some(raw) => fields[k] = value(s, &raw)?,
                None => {
                    return fault(
                        codes::RUN_ARGUMENTS,
                        format!("missing the operand `{}`", s.name),
                    )
                }
            },
            "rest" => {
                let vals: FResult<Vec<Value>> =
                    operands.by_ref().map(|raw| value(s, &raw)).collect();
                fields[k] = Value::list(vals?);
            }
            _ => {}
        }
    }
    if let Some(extra) = operands.next() {
        return fault(
            codes::RUN_ARGUMENTS,
            format!("unexpected operand `{extra}`"),
        );
    }
    Ok(Value::Record(std::rc::Rc::new(Record {
        genus: GenusId(genus as u32),
        fields,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::display::display;
    use crate::eval::Fault;
    use crate::ir::{Field, Genus, Ty};

    /// A program whose genus 0 has one field per spec line, and the spec text.
    fn setup(lines: &[&str]) -> (Program, Value) {
        let mut p = Program::default();
        p.genera.push(Genus {
            name: "argumenta".into(),
            fields: lines
                .iter()
                .map(|l| Field {
                    name: l.split('\t').nth(1).unwrap().into(),
                    ty: Ty::Any,
                    narrow: false,
                })
                .collect(),
        });
        (p, Value::text(lines.join("\n")))
    }

    fn run(lines: &[&str], args: &[&str]) -> Result<String, String> {
        let (p, spec) = setup(lines);
        let args = args.iter().map(|s| s.to_string()).collect();
        match parse(&p, &Value::Int(0), &spec, args) {
            Ok(v) => Ok(display(&v, &p)),
            Err(Fault::Error(c, m)) => Err(format!("{}: {m}", c.id)),
            Err(_) => Err("other fault".into()),
        }
    }

    const N: &str = "opt\tn\tnumerus\tn\tlineae";
    const V: &str = "opt\tv\tbivalens\tv\t";
    const Q: &str = "opt\tq\tbivalens\tq\t";
    const REST: &str = "rest\tr\ttextus\t\t";

    #[test]
    fn options_and_operands() {
        let got = run(&[N, V, Q, REST], &["-vq", "a", "--lineae=5", "--", "-v"]).unwrap();
        assert!(got.contains("n = 5"), "{got}");
        assert!(
            got.contains("v = verum") && got.contains("q = verum"),
            "{got}"
        );
        assert!(got.contains("r = [a, -v]"), "{got}");
        let got = run(&[N, V, Q, REST], &["-n", "-3"]).unwrap();
        assert!(got.contains("n = -3"), "{got}");
    }

    #[test]
    fn command_lines_that_do_not_fit_are_run023() {
        let cases: &[(&[&str], &str)] = &[
            (&["--nope"], "unknown option `--nope`"),
            (&["-vz"], "unknown option `-z` in `-vz`"),
            (&["-n"], "option `-n` needs a value"),
            (&["--lineae", "x"], "`n` expects an integer, found `x`"),
            (&["-v=1"], "unknown option `-=` in `-v=1`"),
        ];
        for (args, want) in cases {
            assert_eq!(
                run(&[N, V, Q], args),
                Err(format!("RUN024: {want}")),
                "{args:?}"
            );
        }
        assert_eq!(
            run(&["one\tx\tnumerus\t\t"], &["1", "2"]),
            Err("RUN024: unexpected operand `2`".into())
        );
        assert_eq!(
            run(&["one\tx\tnumerus\t\t"], &[]),
            Err("RUN024: missing the operand `x`".into())
        );
    }

    #[test]
    fn a_spec_that_does_not_fit_the_genus_is_refused() {
        let (p, _) = setup(&[N]);
        let bad = parse(&p, &Value::Int(7), &Value::text(N), vec![]);
        assert!(matches!(bad, Err(Fault::Error(c, _)) if c == codes::RUN_TYPE));
        let bad = parse(&p, &Value::Int(0), &Value::text("x"), vec![]);
        assert!(matches!(bad, Err(Fault::Error(c, _)) if c == codes::RUN_TYPE));
        let bad = parse(
            &p,
            &Value::Int(0),
            &Value::text(format!("{N}\n{V}")),
            vec![],
        );
        assert!(matches!(bad, Err(Fault::Error(c, _)) if c == codes::RUN_TYPE));
    }
}
