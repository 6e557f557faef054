//! The display form of values (docs/language.md § 8): what `nota`, templates and
//! `↦ textus` produce.
//!
//! Choices where §11 leaves room: map keys that are texts are `{:?}`-quoted, Int
//! keys are printed bare and Bool keys as `verum`/`falsum`; a function prints as
//! `<functio name>` with the module prefix (`module::`) dropped.

use std::fmt::Write;

pub use super::numbers::float_into;
use super::value::{Key, Value};
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::Program;

/// RUN012 when a display form or template result `s` is longer than the text limit
/// (`--max-text-bytes`; [`display_into`] stops early once it is) or the heap is
/// beyond the memory limit.
pub(crate) fn within_text_limit(s: &str) -> FResult<()> {
    let max = super::config::text_limit();
    if s.len() > max {
        return fault(
            codes::RUN_LIMIT,
            format!("a textus longer than {max} bytes (a template or a display form)"),
        );
    }
    if crate::mem::over() {
        return fault(codes::RUN_LIMIT, crate::mem::over_message());
    }
    Ok(())
}

/// Whether `out` has grown past the text limit: a display form stops there (a list
/// that holds itself shared twice per level displays exponentially long).
#[inline]
fn full(out: &str) -> bool {
    out.len() > super::config::text_limit()
}

/// The display form of one value.
pub fn display(v: &Value, program: &Program) -> String {
    let mut s = String::new();
    display_into(&mut s, v, program);
    s
}

/// Appends the display form of `v` to `out`, stopping early (somewhere past the text
/// limit) when it grows longer than that: callers check [`within_text_limit`].
pub fn display_into(out: &mut String, v: &Value, program: &Program) {
    match v {
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => float_into(out, *f),
        Value::Bool(true) => out.push_str("verum"),
        Value::Bool(false) => out.push_str("falsum"),
        Value::Text(t) => out.push_str(t),
        Value::Bytes(b) => {
            let _ = write!(out, "<{} bytes>", b.len());
        }
        Value::List(items) | Value::Tuple(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if full(out) {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                display_into(out, x, program);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if full(out) {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                match k {
                    Key::Text(t) => {
                        let _ = write!(out, "{:?}", t.as_str());
                    }
                    Key::Int(n) => {
                        let _ = write!(out, "{n}");
                    }
                    Key::Bool(b) => out.push_str(if *b { "verum" } else { "falsum" }),
                }
                out.push_str(": ");
                display_into(out, x, program);
            }
            out.push('}');
        }
        Value::Record(r) => {
            let genus = program.genera.get(r.genus.0 as usize);
            match genus {
                Some(g) => out.push_str(&g.name),
                None => {
                    let _ = write!(out, "genus#{}", r.genus.0);
                }
            }
            if r.fields.is_empty() {
                out.push_str(" {}");
                return;
            }
            out.push_str(" { ");
            for (i, x) in r.fields.iter().enumerate() {
                if full(out) {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                match genus.and_then(|g| g.fields.get(i)) {
                    Some(f) => out.push_str(&f.name),
                    None => {
                        let _ = write!(out, "{i}");
                    }
                }
                out.push_str(" = ");
                display_into(out, x, program);
            }
            out.push_str(" }");
        }
        Value::Func(c) => {
            let name = program
                .functions
                .get(c.func.0 as usize)
                .map_or("?", |f| f.name.rsplit("::").next().unwrap_or(&f.name));
            let _ = write!(out, "<functio {name}>");
        }
        Value::Tensor(t) => {
            out.push('[');
            for i in 0..t.numel() {
                if i % 1024 == 0 && full(out) {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                match t.data_f32() {
                    // An f32 element as its shortest f32 decimal (0.1, not
                    // 0.10000000149011612), written as a number of that value is.
                    Some(d) => float_into(out, shortest_f32(d[i])),
                    None => float_into(out, t.data()[i]),
                }
            }
            out.push(']');
        }
        // a `valor` as its JSON text with spaces after `,` and `:`
        Value::Json(j) => super::json::write(out, j, true, super::config::text_limit()),
        // `{1, 2, 3}`: a set's elements in insertion order, displayed as in a list
        Value::Set(s) => {
            out.push('{');
            for (i, k) in s.iter().enumerate() {
                if out.len() > super::config::text_limit() {
                    return;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                display_into(out, &k.to_value(), program);
            }
            out.push('}');
        }
        // `a‥b`, `a…b`
        Value::Interval(r) => out.push_str(&r.to_string()),
        Value::Nihil => out.push_str("nihil"),
        Value::Vacuum => out.push_str("vacuum"),
    }
}

/// The f64 nearest the shortest decimal that reads back as `x` in f32 (NaN and ±∞
/// as they are).
fn shortest_f32(x: f32) -> f64 {
    if !x.is_finite() {
        return f64::from(x);
    }
    format!("{x:e}").parse().unwrap_or(f64::from(x))
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::eval::value::{Closure, Map, Record};
    use crate::ir::{Block, Field, FuncId, Function, Genus, GenusId, Ty};
    use crate::source::Span;

    fn show(v: &Value) -> String {
        display(v, &Program::default())
    }

    #[test]
    fn ints() {
        assert_eq!(show(&Value::Int(7)), "7");
        assert_eq!(show(&Value::Int(-5)), "-5");
        assert_eq!(show(&Value::Int(i64::MIN)), "-9223372036854775808");
    }

    #[test]
    fn integral_floats() {
        assert_eq!(show(&Value::Float(16576.0)), "16576.0");
        assert_eq!(show(&Value::Float(-0.0)), "-0.0");
        assert_eq!(show(&Value::Float(1e21)), "1000000000000000000000.0");
        assert_eq!(show(&Value::Float(2.0)), "2.0");
    }

    #[test]
    fn other_floats() {
        assert_eq!(show(&Value::Float(0.1 + 0.2)), "0.30000000000000004");
        assert_eq!(show(&Value::Float(1e-7)), "0.0000001");
        assert_eq!(
            show(&Value::Float(1.3034375000000002)),
            "1.3034375000000002"
        );
        assert_eq!(
            show(&Value::Float(-0.00008428925289756298)),
            "-0.00008428925289756298"
        );
        assert_eq!(show(&Value::Float(f64::NAN)), "NaN");
        assert_eq!(show(&Value::Float(f64::INFINITY)), "inf");
        assert_eq!(show(&Value::Float(f64::NEG_INFINITY)), "-inf");
        assert_eq!(show(&Value::Float(0.01)), "0.01");
    }

    #[test]
    fn scalars() {
        assert_eq!(show(&Value::Bool(true)), "verum");
        assert_eq!(show(&Value::Bool(false)), "falsum");
        assert_eq!(show(&Value::Nihil), "nihil");
        assert_eq!(show(&Value::Vacuum), "vacuum");
        assert_eq!(show(&Value::text("salve \"x\"")), "salve \"x\"");
        assert_eq!(show(&Value::Bytes(Rc::new(vec![1, 2, 3]))), "<3 bytes>");
    }

    #[test]
    fn lists_and_tuples() {
        assert_eq!(show(&Value::list(vec![])), "[]");
        let l = Value::list(vec![
            Value::Int(1),
            Value::Float(2.0),
            Value::text("a"),
            Value::list(vec![Value::Bool(true)]),
        ]);
        assert_eq!(show(&l), "[1, 2.0, a, [verum]]");
        let t = Value::Tuple(Rc::new(vec![Value::Int(1), Value::Nihil]));
        assert_eq!(show(&t), "[1, nihil]");
    }

    #[test]
    fn maps() {
        let mut m = Map::default();
        m.insert(Key::Text(Rc::new("b".into())), Value::Int(1));
        m.insert(Key::Text(Rc::new("a\"".into())), Value::text("x"));
        m.insert(Key::Int(3), Value::Float(0.5));
        m.insert(Key::Bool(false), Value::Nihil);
        assert_eq!(
            show(&Value::Map(Rc::new(m))),
            r#"{"b": 1, "a\"": x, 3: 0.5, falsum: nihil}"#
        );
        assert_eq!(show(&Value::Map(Rc::new(Map::default()))), "{}");
    }

    #[test]
    fn records_and_functions() {
        let program = Program {
            genera: vec![Genus {
                name: "Rectum".into(),
                fields: vec![
                    Field {
                        name: "latus".into(),
                        ty: Ty::Int,
                        narrow: false,
                    },
                    Field {
                        name: "altum".into(),
                        ty: Ty::Int,
                        narrow: false,
                    },
                ],
            }],
            functions: vec![Function {
                name: "main::area".into(),
                params: 0,
                slots: vec![],
                ret: Ty::Vacuum,
                narrow_ret: false,
                throws: false,
                body: Block::default(),
                span: Span::default(),
            }],
            ..Program::default()
        };
        let r = Value::Record(Rc::new(Record {
            genus: GenusId(0),
            fields: vec![Value::Int(6), Value::Int(7)],
        }));
        assert_eq!(display(&r, &program), "Rectum { latus = 6, altum = 7 }");
        let f = Value::Func(Rc::new(Closure {
            func: FuncId(0),
            captures: vec![],
        }));
        assert_eq!(display(&f, &program), "<functio area>");
    }
}
