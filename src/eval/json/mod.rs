//! `json` / `valor`: one dynamic JSON value (docs/language.md § 7, "JSON values").
//!
//! A value is a tree of [`Json`] nodes; children sit behind `Rc` so that reading a
//! member (`accipe`) shares it instead of copying the subtree. The text form is read by
//! [`parse`] (bounded depth and sizes, errors with the JSON text's line:column) and
//! written by [`write`]; `↦` between `valor` and the other types is in [`boxing`].

pub(crate) mod boxing;
pub(crate) mod methods;
pub(crate) mod parse;
pub(crate) mod toml;

use std::rc::Rc;

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;

/// An object's members, in the order they were written.
pub type Members = IndexMap<String, Rc<Json>, FxBuildHasher>;

/// Deepest nesting of arrays and objects that JSON text, boxing and unboxing accept
/// (beyond it: RUN012).
pub const MAX_DEPTH: usize = 256;

#[derive(Clone, Debug)]
pub enum Json {
    Null,
    Bool(bool),
    /// A number written without a fraction or exponent that fits 64 bits.
    Int(i64),
    /// Every other number (always finite).
    Float(f64),
    Text(String),
    Array(Vec<Rc<Json>>),
    Object(Members),
}

impl PartialEq for Json {
    /// Structural equality: numbers by value (`1` equals `1.0`), objects as key sets
    /// with equal members (order does not matter), arrays element by element.
    fn eq(&self, other: &Json) -> bool {
        match (self, other) {
            (Json::Null, Json::Null) => true,
            (Json::Bool(a), Json::Bool(b)) => a == b,
            (Json::Int(a), Json::Int(b)) => a == b,
            (Json::Float(a), Json::Float(b)) => a == b,
            (Json::Int(a), Json::Float(b)) | (Json::Float(b), Json::Int(a)) => {
                super::numbers::int_float_eq(*a, *b)
            }
            (Json::Text(a), Json::Text(b)) => a == b,
            (Json::Array(a), Json::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Json::Object(a), Json::Object(b)) => {
                a.len() == b.len() && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

impl Json {
    /// The JSON kind, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) | Json::Float(_) => "a number",
            Json::Text(_) => "a string",
            Json::Array(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Appends the JSON text of `j` to `out`: `spaced` puts a space after `,` and `:`
/// (the display form `nota` prints); otherwise the text is compact (`json.pange`).
/// Stops early once `out` is longer than `limit` bytes (the caller reports RUN012).
pub fn write(out: &mut String, j: &Json, spaced: bool, limit: usize) {
    if out.len() > limit {
        return;
    }
    match j {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Int(i) => out.push_str(&i.to_string()),
        Json::Float(f) => super::numbers::float_into(out, *f),
        Json::Text(t) => write_text(out, t),
        Json::Array(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if spaced { ", " } else { "," });
                }
                write(out, x, spaced, limit);
                if out.len() > limit {
                    return;
                }
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (k, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(if spaced { ", " } else { "," });
                }
                write_text(out, k);
                out.push_str(if spaced { ": " } else { ":" });
                write(out, x, spaced, limit);
                if out.len() > limit {
                    return;
                }
            }
            out.push('}');
        }
    }
}

/// A JSON string literal: `"` and `\` escaped, control characters as `\n`, `\t`, … or
/// `\u00XX`; everything else (all of Unicode) as it is.
fn write_text(out: &mut String, t: &str) {
    out.push('"');
    for c in t.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(j: &Json, spaced: bool) -> String {
        let mut s = String::new();
        write(&mut s, j, spaced, usize::MAX);
        s
    }

    #[test]
    fn writes_compact_and_spaced() {
        let mut m = Members::default();
        m.insert("a\"b".into(), Rc::new(Json::Int(1)));
        m.insert(
            "c".into(),
            Rc::new(Json::Array(vec![
                Rc::new(Json::Float(2.5)),
                Rc::new(Json::Null),
                Rc::new(Json::Text("x\ny\u{1}".into())),
            ])),
        );
        let j = Json::Object(m);
        assert_eq!(text(&j, false), r#"{"a\"b":1,"c":[2.5,null,"x\ny\u0001"]}"#);
        assert_eq!(
            text(&j, true),
            r#"{"a\"b": 1, "c": [2.5, null, "x\ny\u0001"]}"#
        );
        assert_eq!(text(&Json::Float(3.0), false), "3.0");
    }

    #[test]
    fn equality_is_structural() {
        assert_eq!(Json::Int(1), Json::Float(1.0));
        assert_ne!(Json::Int(1), Json::Text("1".into()));
        let mut a = Members::default();
        a.insert("x".into(), Rc::new(Json::Int(1)));
        a.insert("y".into(), Rc::new(Json::Null));
        let mut b = Members::default();
        b.insert("y".into(), Rc::new(Json::Null));
        b.insert("x".into(), Rc::new(Json::Int(1)));
        assert_eq!(Json::Object(a), Json::Object(b));
    }
}
