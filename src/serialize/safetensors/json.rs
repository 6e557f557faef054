//! The header's JSON: a strict RFC 8259 reader that the header schema drives
//! (src/serialize/safetensors/header.rs), and the string escaper the writer uses.

use super::{header_err, SResult};

/// Deepest JSON nesting accepted in the header (serde_json's default).
const MAX_DEPTH: usize = 128;

/// A strict RFC 8259 reader over the header text, driven by the schema
/// (header.rs): containers are walked member by member, nothing is built that
/// the caller does not keep.
pub(super) struct JsonParser<'a> {
    pub(super) s: &'a [u8],
    pub(super) pos: usize,
}

impl<'a> JsonParser<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        JsonParser {
            s: text.as_bytes(),
            pos: 0,
        }
    }

    pub(super) fn fail<T>(&self, what: &str) -> SResult<T> {
        header_err(format!(
            "invalid JSON in header at byte {}: {what}",
            self.pos
        ))
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    pub(super) fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub(super) fn literal(&mut self, word: &str) -> SResult<()> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            self.fail("expected a value")
        }
    }

    /// Checks the value at the cursor (skipping it) and names its JSON type,
    /// for messages about a value of the wrong type; invalid JSON is reported
    /// as such instead.
    pub(super) fn check_kind(&mut self) -> SResult<&'static str> {
        let kind = match self.peek() {
            Some(b'{') => "object",
            Some(b'[') => "array",
            Some(b'"') => "string",
            Some(b't' | b'f') => "boolean",
            Some(b'n') => "null",
            _ => "number",
        };
        self.skip_value(1)?;
        Ok(kind)
    }

    /// Checks one value of any type without keeping it.
    pub(super) fn skip_value(&mut self, depth: usize) -> SResult<()> {
        match self.peek() {
            None => self.fail("unexpected end of header"),
            Some(b'{') => self.object(depth, false, |p, _| p.skip_value(depth + 1)),
            Some(b'[') => self.array(depth, |p| p.skip_value(depth + 1)),
            Some(b'"') => self.string(false).map(drop),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(_) => self.fail("expected a value"),
        }
    }

    fn enter(&self, depth: usize) -> SResult<()> {
        if depth > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        Ok(())
    }

    /// Walks the object at the cursor (nesting level `depth`), calling
    /// `member` with each key (empty unless `keep_keys`) and the cursor at
    /// its value; `member` must consume the value.
    pub(super) fn object(
        &mut self,
        depth: usize,
        keep_keys: bool,
        mut member: impl FnMut(&mut Self, String) -> SResult<()>,
    ) -> SResult<()> {
        self.enter(depth)?;
        self.pos += 1; // '{'
        self.ws();
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.fail("expected a string key");
            }
            let key = self.string(keep_keys)?;
            self.ws();
            if !self.eat(b':') {
                return self.fail("expected `:`");
            }
            self.ws();
            member(self, key)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                return Ok(());
            }
            return self.fail("expected `,` or `}`");
        }
    }

    /// Walks the array at the cursor, calling `item` at each element.
    pub(super) fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self) -> SResult<()>,
    ) -> SResult<()> {
        self.enter(depth)?;
        self.pos += 1; // '['
        self.ws();
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                return Ok(());
            }
            return self.fail("expected `,` or `]`");
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Reads a number: `Some(v)` for a non-negative integer without fraction
    /// or exponent that fits in u64, `None` for any other valid number.
    pub(super) fn number(&mut self) -> SResult<Option<u64>> {
        let negative = self.eat(b'-');
        let int_start = self.pos;
        match self.digits() {
            0 => return self.fail("expected a digit"),
            n if n > 1 && self.s[int_start] == b'0' => {
                self.pos = int_start;
                return self.fail("number with a leading zero");
            }
            _ => {}
        }
        let int_end = self.pos;
        let mut integral = !negative;
        if self.eat(b'.') {
            integral = false;
            if self.digits() == 0 {
                return self.fail("expected a digit after `.`");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            integral = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.fail("expected a digit in the exponent");
            }
        }
        if !integral {
            return Ok(None);
        }
        let mut v: u64 = 0;
        for &d in &self.s[int_start..int_end] {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(n) => v = n,
                None => return Ok(None),
            }
        }
        Ok(Some(v))
    }

    fn hex4(&mut self) -> SResult<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return self.fail("expected 4 hex digits after `\\u`"),
            };
            v = v * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// Reads the string at the cursor; its text is returned when `keep`,
    /// otherwise it is only checked and the result is empty.
    pub(super) fn string(&mut self, keep: bool) -> SResult<String> {
        self.pos += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let run = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            if keep {
                out.extend_from_slice(&self.s[run..self.pos]);
            }
            match self.peek() {
                None => return self.fail("unterminated string"),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        Some(b'u') => None,
                        _ => return self.fail("invalid escape"),
                    };
                    self.pos += 1;
                    let c = match simple {
                        Some(c) => c,
                        None => self.unicode_escape()?,
                    };
                    if keep {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
                Some(_) => return self.fail("control character in a string"),
            }
        }
        // Whole UTF-8 sequences of valid text and encoded chars: always valid.
        String::from_utf8(out).or_else(|_| self.fail("string is not valid UTF-8"))
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a UTF-16
    /// surrogate pair; a lone surrogate is an error.
    fn unicode_escape(&mut self) -> SResult<char> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !(self.eat(b'\\') && self.eat(b'u')) {
                return self.fail("high surrogate not followed by a low surrogate");
            }
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return self.fail("high surrogate not followed by a low surrogate");
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else if (0xDC00..0xE000).contains(&hi) {
            return self.fail("lone low surrogate");
        } else {
            hi
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.fail("invalid \\u escape"),
        }
    }
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it: `"`, `\`,
/// the short escapes `\b \f \n \r \t`, other control characters as `\u00xx`;
/// everything else (including non-ASCII) verbatim.
pub(super) fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialize::safetensors::K;

    /// Checks `text` as one JSON value, as unknown fields are checked.
    fn valid(text: &str) -> SResult<()> {
        let mut p = JsonParser::new(text);
        p.ws();
        p.skip_value(1)?;
        p.ws();
        if p.pos != p.s.len() {
            return p.fail("trailing characters");
        }
        Ok(())
    }

    fn string(text: &str) -> SResult<String> {
        let mut p = JsonParser::new(text);
        assert_eq!(p.peek(), Some(b'"'));
        let s = p.string(true)?;
        assert_eq!(p.pos, text.len(), "{text}");
        Ok(s)
    }

    fn number(text: &str) -> SResult<Option<u64>> {
        let mut p = JsonParser::new(text);
        let v = p.number()?;
        if p.pos != p.s.len() {
            return p.fail("trailing characters");
        }
        Ok(v)
    }

    #[test]
    fn json_strings_decode_escapes_and_surrogate_pairs() {
        let text = r#""a\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00é""#;
        assert_eq!(string(text).unwrap(), "a\"\\/\u{8}\u{c}\n\r\tAé😀é");
        assert!(valid(text).is_ok());
        for bad in [
            r#""\ud83d""#,
            r#""\ud83dx""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\u12""#,
            r#""\x""#,
            "\"a\u{1}\"",
            r#""abc"#,
        ] {
            let e = string(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"));
            assert_eq!(e.kind, K::Header, "{bad}");
            assert!(valid(bad).is_err(), "{bad} accepted when skipped");
        }
    }

    #[test]
    fn json_numbers_are_strict() {
        for (text, want) in [("0", 0), ("7", 7), ("18446744073709551615", u64::MAX)] {
            assert_eq!(number(text), Ok(Some(want)), "{text}");
        }
        for text in [
            "18446744073709551616",
            "-0",
            "-1",
            "1.5",
            "1e3",
            "2E-2",
            "0.0",
        ] {
            assert_eq!(number(text), Ok(None), "{text}");
        }
        for text in [
            "01", "-", "1.", ".5", "1e", "1e+", "+1", "--1", "0x10", "1 2", "Infinity", "NaN",
        ] {
            assert!(
                number(text).is_err() && valid(text).is_err(),
                "{text} accepted"
            );
        }
    }

    #[test]
    fn json_structure_and_depth() {
        assert!(valid(" { \"a\" : [ 1 , { } , [ ] , null , true , false , -1.5e3 ] } ").is_ok());
        for bad in [
            "",
            "{",
            "{]",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "{} x",
            "\u{feff}{}",
            "nul",
            "tru",
            "[true false]",
        ] {
            assert!(valid(bad).is_err(), "{bad:?} accepted");
        }
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(valid(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(valid(&deep)
            .unwrap_err()
            .message
            .contains("nested too deeply"));
        // Far deeper than the stack could take if the limit were missing.
        assert!(valid(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn json_string_escapes_like_serde_json() {
        let mut out = String::new();
        json_string(&mut out, "q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀");
        assert_eq!(
            out,
            r#""q\"b\\\b\f\n\r\t\u0001\u001f"#.to_string() + "\u{7f}/é😀\""
        );
        let back = string(&out).unwrap();
        assert_eq!(back, "q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀");
    }
}
