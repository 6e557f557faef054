//! Reading JSON text (RFC 8259) into a [`Json`] tree. Bad input is never a panic: every
//! failure is a [`ParseError`] with the line and column (1-based, counted in
//! characters) of the JSON text where it was found.
//!
//! Bounds: nesting deeper than [`MAX_DEPTH`], an array or object with more items than
//! the list limit (`--max-list-items`), a string longer than the text limit
//! (`--max-text-bytes`) and a heap beyond the memory limit are `limit` errors
//! (RUN012); everything else is a syntax error (RUN025). A duplicate key in one object
//! is an error; a number without fraction or exponent that fits 64 bits is an
//! integer, any other number a float, and a number too large for a float an error.

use std::rc::Rc;

use super::{Json, Members, MAX_DEPTH};

#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub col: usize,
    pub msg: String,
    /// A size or depth bound was reached (RUN012), rather than a syntax error.
    pub limit: bool,
}

impl ParseError {
    /// An error at byte offset `pos` of `text` (clamped to its end, and back to the
    /// start of a character), with the 1-based line and column (in characters).
    pub fn at(text: &str, pos: usize, msg: String, limit: bool) -> ParseError {
        let mut pos = pos.min(text.len());
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        let before = &text[..pos];
        let line = before.matches('\n').count() + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[start..].chars().count() + 1;
        ParseError {
            line,
            col,
            msg,
            limit,
        }
    }
}

/// The bounds one parse runs under.
#[derive(Clone, Copy, Debug)]
pub struct Bounds {
    pub max_items: usize,
    pub max_text: usize,
}

impl Bounds {
    /// The bounds of the running program (its run configuration).
    pub fn current() -> Bounds {
        Bounds {
            max_items: crate::eval::config::list_limit(),
            max_text: crate::eval::config::text_limit(),
        }
    }
}

/// Parses one JSON value that fills all of `text` (whitespace around it allowed).
pub fn parse(text: &str, bounds: Bounds) -> Result<Json, ParseError> {
    let mut p = Parser {
        text,
        b: text.as_bytes(),
        pos: 0,
        bounds,
    };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.pos < p.b.len() {
        return Err(p.error(format!("unexpected {} after the JSON value", p.found())));
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    bounds: Bounds,
}

impl Parser<'_> {
    fn error_at(&self, pos: usize, msg: String, limit: bool) -> ParseError {
        ParseError::at(self.text, pos, msg, limit)
    }

    fn error(&self, msg: String) -> ParseError {
        self.error_at(self.pos, msg, false)
    }

    fn limit(&self, msg: String) -> ParseError {
        self.error_at(self.pos, msg, true)
    }

    /// What is at the current position, for messages.
    fn found(&self) -> String {
        match self.text[self.pos..].chars().next() {
            None => "the end of the text".into(),
            Some(c) if c.is_control() => format!("character U+{:04X}", c as u32),
            Some(c) => format!("`{c}`"),
        }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.pos) {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, ParseError> {
        match self.b.get(self.pos) {
            None => Err(self.error("expected a JSON value, found the end of the text".into())),
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Json::Text(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.word("true", Json::Bool(true)),
            Some(b'f') => self.word("false", Json::Bool(false)),
            Some(b'n') => self.word("null", Json::Null),
            Some(_) => Err(self.error(format!("expected a JSON value, found {}", self.found()))),
        }
    }

    fn word(&mut self, w: &str, v: Json) -> Result<Json, ParseError> {
        if self.b[self.pos..].starts_with(w.as_bytes()) {
            self.pos += w.len();
            Ok(v)
        } else {
            Err(self.error(format!("expected a JSON value, found {}", self.found())))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            return Err(self.limit(format!("JSON nested more than {MAX_DEPTH} levels deep")));
        }
        Ok(())
    }

    fn room(&self, len: usize, cap: usize, item: usize) -> Result<(), ParseError> {
        if len >= self.bounds.max_items {
            return Err(self.limit(format!(
                "a JSON array or object with more than {} items",
                self.bounds.max_items
            )));
        }
        if len == cap {
            let bytes = cap.max(4).saturating_mul(2).saturating_mul(item);
            if let Err(m) = crate::mem::check(bytes) {
                return Err(self.limit(m));
            }
        }
        Ok(())
    }

    fn array(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.enter(depth)?;
        self.pos += 1; // [
        let mut items: Vec<Rc<Json>> = Vec::new();
        self.ws();
        if self.b.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.ws();
            self.room(
                items.len(),
                items.capacity(),
                std::mem::size_of::<Rc<Json>>(),
            )?;
            items.push(Rc::new(self.value(depth)?));
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => {
                    return Err(self.error(format!(
                        "expected `,` or `]` in an array, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, ParseError> {
        self.enter(depth)?;
        self.pos += 1; // {
        let mut members = Members::default();
        self.ws();
        if self.b.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.ws();
            if self.b.get(self.pos) != Some(&b'"') {
                return Err(self.error(format!(
                    "expected a string key in an object, found {}",
                    self.found()
                )));
            }
            let key_at = self.pos;
            let key = self.string()?;
            self.ws();
            if self.b.get(self.pos) != Some(&b':') {
                return Err(self.error(format!(
                    "expected `:` after an object key, found {}",
                    self.found()
                )));
            }
            self.pos += 1;
            self.ws();
            self.room(
                members.len(),
                members.capacity(),
                std::mem::size_of::<(u64, String, Rc<Json>)>() + 8,
            )?;
            let v = self.value(depth)?;
            if members.contains_key(&key) {
                return Err(self.error_at(key_at, format!("duplicate key {key:?}"), false));
            }
            members.insert(key, Rc::new(v));
            self.ws();
            match self.b.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                _ => {
                    return Err(self.error(format!(
                        "expected `,` or `}}` in an object, found {}",
                        self.found()
                    )))
                }
            }
        }
    }

    /// A string literal at `"`; the position ends after its closing quote.
    fn string(&mut self) -> Result<String, ParseError> {
        self.pos += 1; // "
        let mut out = String::new();
        loop {
            if out.len() > self.bounds.max_text {
                return Err(self.limit(format!(
                    "a JSON string longer than {} bytes",
                    self.bounds.max_text
                )));
            }
            let Some(c) = self.text[self.pos..].chars().next() else {
                return Err(self.error("a string without its closing `\"`".into()));
            };
            match c {
                '"' => {
                    self.pos += 1;
                    return Ok(out);
                }
                '\\' => {
                    let at = self.pos;
                    self.pos += 1;
                    let e = self.b.get(self.pos).copied();
                    self.pos += 1;
                    match e {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => out.push(self.unicode_escape(at)?),
                        _ => {
                            return Err(self.error_at(
                                at,
                                "an unknown escape in a string".into(),
                                false,
                            ))
                        }
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(self.error(format!(
                        "a control character (U+{:04X}) inside a string; write it as an escape",
                        c as u32
                    )))
                }
                c => {
                    out.push(c);
                    self.pos += c.len_utf8();
                }
            }
        }
    }

    fn hex4(&mut self, at: usize) -> Result<u32, ParseError> {
        let digits = self.b.get(self.pos..self.pos + 4);
        let v = digits
            .and_then(|d| std::str::from_utf8(d).ok())
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(|d| u32::from_str_radix(d, 16).ok());
        match v {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.error_at(at, "`\\u` needs four hex digits".into(), false)),
        }
    }

    /// `\uXXXX` (after the `u`), with a surrogate pair for characters beyond U+FFFF.
    fn unicode_escape(&mut self, at: usize) -> Result<char, ParseError> {
        let hi = self.hex4(at)?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !self.b[self.pos..].starts_with(b"\\u") {
                return Err(self.error_at(at, "a lone surrogate in a `\\u` escape".into(), false));
            }
            let at2 = self.pos;
            self.pos += 2;
            let lo = self.hex4(at2)?;
            if !(0xDC00..0xE000).contains(&lo) {
                return Err(self.error_at(at, "a lone surrogate in a `\\u` escape".into(), false));
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else {
            hi
        };
        char::from_u32(code)
            .ok_or_else(|| self.error_at(at, "a lone surrogate in a `\\u` escape".into(), false))
    }

    fn number(&mut self) -> Result<Json, ParseError> {
        let start = self.pos;
        let digits = |p: &mut Self| {
            let s = p.pos;
            while p.b.get(p.pos).is_some_and(u8::is_ascii_digit) {
                p.pos += 1;
            }
            p.pos - s
        };
        if self.b.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        let int_at = self.pos;
        let n = digits(self);
        if n == 0 {
            return Err(self.error(format!("expected a digit, found {}", self.found())));
        }
        if n > 1 && self.b[int_at] == b'0' {
            return Err(self.error_at(int_at, "a number with a leading zero".into(), false));
        }
        let mut float = false;
        if self.b.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            float = true;
            if digits(self) == 0 {
                return Err(self.error(format!(
                    "expected a digit after `.`, found {}",
                    self.found()
                )));
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.pos) {
            self.pos += 1;
            float = true;
            if let Some(b'+' | b'-') = self.b.get(self.pos) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                return Err(self.error(format!(
                    "expected a digit in the exponent, found {}",
                    self.found()
                )));
            }
        }
        let s = &self.text[start..self.pos];
        if !float {
            if let Ok(i) = s.parse::<i64>() {
                return Ok(Json::Int(i));
            }
        }
        match s.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Json::Float(f)),
            _ => Err(self.error_at(start, format!("the number {s} is too large"), false)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const B: Bounds = Bounds {
        max_items: 1000,
        max_text: 1000,
    };

    fn err(s: &str) -> (usize, usize, String) {
        let e = parse(s, B).unwrap_err();
        (e.line, e.col, e.msg)
    }

    #[test]
    fn reads_values() {
        let j = parse(
            r#" {"a": [1, -2.5e1, true, null, "x\u00e9\ud83d\ude00"], "b": {}} "#,
            B,
        )
        .unwrap();
        let Json::Object(m) = j else { panic!() };
        let Json::Array(a) = &*m["a"] else { panic!() };
        assert_eq!(*a[0], Json::Int(1));
        assert_eq!(*a[1], Json::Float(-25.0));
        assert_eq!(*a[4], Json::Text("xé😀".into()));
        assert_eq!(
            parse("12345678901234567890", B).unwrap(),
            Json::Float(12345678901234567890.0)
        );
    }

    #[test]
    fn errors_have_line_and_column() {
        assert_eq!(
            err("{\n  \"a\": 1,\n  \"b\" 2\n}").0..=err("{\n  \"a\": 1,\n  \"b\" 2\n}").1,
            3..=7
        );
        assert_eq!(
            err("[1, 2").2,
            "expected `,` or `]` in an array, found the end of the text"
        );
        assert_eq!(
            err("{\"a\":1,\"a\":2}"),
            (1, 8, "duplicate key \"a\"".into())
        );
        assert_eq!(err("01").1, 1);
        assert_eq!(
            err("1.").2,
            "expected a digit after `.`, found the end of the text"
        );
        assert_eq!(err("\"é\\q\"").1, 3);
        assert_eq!(err("1e999").2, "the number 1e999 is too large");
        assert_eq!(err("[1] x").2, "unexpected `x` after the JSON value");
        assert_eq!(err("\"\\ud800\"").2, "a lone surrogate in a `\\u` escape");
        assert_eq!(
            err("").2,
            "expected a JSON value, found the end of the text"
        );
        assert_eq!(err("[tru]").1, 2);
    }

    #[test]
    fn bounds_are_limits() {
        let deep = "[".repeat(MAX_DEPTH + 1);
        let e = parse(&deep, B).unwrap_err();
        assert!(e.limit);
        assert_eq!(e.col, MAX_DEPTH + 1);
        let ok = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert!(parse(&ok, B).is_ok());
        let many = format!("[{}0]", "0,".repeat(1000));
        assert!(parse(&many, B).unwrap_err().limit);
        let long = format!("\"{}\"", "a".repeat(1002));
        assert!(parse(&long, B).unwrap_err().limit);
    }

    #[test]
    fn never_panics_on_damaged_text() {
        // Every prefix of a document, and the document with each byte replaced by
        // each of a few troublesome bytes: an error or a value, never a panic.
        let doc = "{\"a\": [1, -2.5e+3, true, false, null], \"é\": \"\\u00e9\\ud83d\\ude00\\n\", \"o\": {}}";
        for end in 0..=doc.len() {
            if doc.is_char_boundary(end) {
                let _ = parse(&doc[..end], B);
            }
        }
        let bytes = doc.as_bytes();
        for i in 0..bytes.len() {
            for b in [
                b'"', b'\\', b'{', b']', b'u', b'0', b'-', b'e', b'.', b',', 0x01, b' ',
            ] {
                let mut m = bytes.to_vec();
                m[i] = b;
                if let Ok(t) = std::str::from_utf8(&m) {
                    let _ = parse(t, B);
                }
            }
        }
    }
}
