//! Reading TOML text (TOML 1.1, through the `toml` crate's spanned document) into a
//! [`Json`] tree, for `norma:toml` (docs/norma.md § toml). Every failure is a
//! [`ParseError`] with the line and column of the TOML text, as JSON's.
//!
//! Mapping: a table is an object whose members keep the order in which their keys
//! first appear in the text; an array is an array; strings, integers, booleans are
//! themselves; a float is a float, but `nan` and `inf` are errors (a `valor` holds only
//! finite numbers); a date or time is its TOML text (`1979-05-27T07:32:00Z`), since
//! faber has no date type. Bounds as JSON's: nesting deeper than [`MAX_DEPTH`] or an
//! array or table with more items than the list limit is a `limit` error (RUN012).

use std::rc::Rc;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::methods::{solved, text_arg, tried};
use super::parse::{Bounds, ParseError};
use super::{Json, Members, MAX_DEPTH};
use crate::eval::value::Value;
use crate::eval::FResult;

/// `toml_solve(text)`: the value of a TOML document; bad text is RUN025 (a bound
/// reached is RUN012), both with the line and column in the TOML text.
pub(crate) fn solve(arg: &Value) -> FResult<Value> {
    solved("TOML", parse(text_arg(arg)?, Bounds::current()))
}

/// `toml_tempta(text)`: the value of a TOML document, or `nihil` when it does not
/// parse (a bound reached is still RUN012).
pub(crate) fn tempta(arg: &Value) -> FResult<Value> {
    tried("TOML", parse(text_arg(arg)?, Bounds::current()))
}

/// Parses a whole TOML document: its root table as an object.
pub fn parse(text: &str, bounds: Bounds) -> Result<Json, ParseError> {
    let doc = DeTable::parse(text).map_err(|e| {
        let pos = e.span().map_or(text.len(), |s| s.start);
        // The crate's messages may run over lines ("invalid key\nexpected ...").
        let msg = e
            .message()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        ParseError::at(text, pos, msg, false)
    })?;
    let reader = Reader { text, bounds };
    reader.table(doc.get_ref(), 0)
}

struct Reader<'a> {
    text: &'a str,
    bounds: Bounds,
}

impl Reader<'_> {
    fn error(&self, pos: usize, msg: String, limit: bool) -> ParseError {
        ParseError::at(self.text, pos, msg, limit)
    }

    fn table(&self, t: &DeTable<'_>, depth: usize) -> Result<Json, ParseError> {
        let mut entries: Vec<_> = t.iter().collect();
        if entries.len() > self.bounds.max_items {
            let pos = entries
                .iter()
                .map(|(k, _)| k.span().start)
                .max()
                .unwrap_or(0);
            return Err(self.error(
                pos,
                format!("a table with more than {} keys", self.bounds.max_items),
                true,
            ));
        }
        // The crate keeps keys in code-point order; put them back in document order.
        entries.sort_by_key(|(k, _)| k.span().start);
        let mut members = Members::default();
        for (k, v) in entries {
            let value = self.value(v, depth + 1)?;
            members.insert(k.get_ref().to_string(), Rc::new(value));
        }
        Ok(Json::Object(members))
    }

    fn value(&self, v: &Spanned<DeValue<'_>>, depth: usize) -> Result<Json, ParseError> {
        let at = v.span().start;
        if depth > MAX_DEPTH {
            return Err(self.error(at, format!("nesting deeper than {MAX_DEPTH} levels"), true));
        }
        Ok(match v.get_ref() {
            DeValue::String(s) => Json::Text(s.to_string()),
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => Json::Int(n),
                Err(_) => {
                    return Err(self.error(
                        at,
                        format!("integer `{i}` does not fit in 64 bits"),
                        false,
                    ))
                }
            },
            DeValue::Float(f) => match f.as_str().parse::<f64>() {
                Ok(x) if x.is_finite() => Json::Float(x),
                _ => {
                    return Err(self.error(
                        at,
                        format!("float `{f}` is not a finite number, which a valor cannot hold"),
                        false,
                    ))
                }
            },
            DeValue::Boolean(b) => Json::Bool(*b),
            DeValue::Datetime(d) => Json::Text(d.to_string()),
            DeValue::Array(items) => {
                if items.len() > self.bounds.max_items {
                    return Err(self.error(
                        at,
                        format!("an array with more than {} items", self.bounds.max_items),
                        true,
                    ));
                }
                let mut out = Vec::with_capacity(items.len());
                for item in items.iter() {
                    out.push(Rc::new(self.value(item, depth + 1)?));
                }
                Json::Array(out)
            }
            DeValue::Table(t) => self.table(t, depth)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Json, ParseError> {
        parse(
            text,
            Bounds {
                max_items: 1000,
                max_text: 1 << 20,
            },
        )
    }

    fn shown(text: &str) -> String {
        let mut out = String::new();
        super::super::write(&mut out, &read(text).unwrap(), false, usize::MAX);
        out
    }

    /// Examples of the TOML 1.0.0 specification (toml.io/en/v1.0.0).
    #[test]
    fn specification_examples() {
        assert_eq!(
            shown("int1 = +99\nint6 = 5_349_221\nhex3 = 0xdead_beef\noct1 = 0o01234567\nbin1 = 0b11010110"),
            r#"{"int1":99,"int6":5349221,"hex3":3735928559,"oct1":342391,"bin1":214}"#
        );
        assert_eq!(
            shown("[dog.\"tater.man\"]\ntype.name = \"pug\""),
            r#"{"dog":{"tater.man":{"type":{"name":"pug"}}}}"#
        );
        assert_eq!(
            shown("flt2 = 3.1415\nflt3 = -0.01\nflt5 = 1e06\nodt1 = 1979-05-27T07:32:00Z"),
            r#"{"flt2":3.1415,"flt3":-0.01,"flt5":1000000.0,"odt1":"1979-05-27T07:32:00Z"}"#
        );
        assert_eq!(
            shown(
                "[[products]]\nname = \"Hammer\"\n\n[[products]]\n\n[[products]]\nname = \"Nail\""
            ),
            r#"{"products":[{"name":"Hammer"},{},{"name":"Nail"}]}"#
        );
    }

    #[test]
    fn errors_carry_line_and_column() {
        // The specification's invalid examples: a repeated key, a key without a value.
        let e = read("name = \"Tom\"\nname = \"Pradyun\"").unwrap_err();
        assert_eq!((e.line, e.col, e.limit), (2, 1, false));
        let e = read("a = 1\nkey = # INVALID").unwrap_err();
        assert_eq!(e.line, 2);
        let e = read("x = 1\ny = nan").unwrap_err();
        assert_eq!((e.line, e.col), (2, 5));
        let e = read("n = 9_223_372_036_854_775_808").unwrap_err();
        assert_eq!((e.line, e.col), (1, 5));
    }
}
