//! Literal decoding for the scanner: integers in any radix, string escapes and
//! `|hex|` byte literals, each problem reported as a diagnostic.

use super::Lexer;
use crate::diag::{codes, Diagnostic};
use crate::syntax::token::Tok;

impl Lexer<'_> {
    pub(super) fn int(&mut self, digits: &str, radix: u32, lo: usize, hi: usize) -> Tok {
        let clean: String = digits.chars().filter(|&c| c != '_').collect();
        if clean.is_empty() {
            self.error(
                codes::LEX_BAD_NUMBER,
                format!("number `{}` has no digits", &self.text[lo..hi]),
                lo,
                hi,
            );
            return Tok::Error;
        }
        match i64::from_str_radix(&clean, radix) {
            Ok(v) => Tok::Int(v),
            Err(_) => {
                let d = Diagnostic::error(
                    codes::LEX_BAD_NUMBER,
                    format!("integer `{}` does not fit in 64 bits", &self.text[lo..hi]),
                    self.span(lo, hi),
                )
                .with_hint(
                    "`numerus` is a signed 64-bit integer; use a float literal for larger values",
                );
                self.diags.push(d);
                Tok::Error
            }
        }
    }

    /// Decodes `\" \\ \n \t \r \0`; reports any other escape.
    pub(super) fn unescape(&mut self, body: &str, offset: usize) -> String {
        let mut out = String::with_capacity(body.len());
        let mut chars = body.char_indices();
        while let Some((i, c)) = chars.next() {
            if c != '\\' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some((_, '"')) => out.push('"'),
                Some((_, '\'')) => out.push('\''),
                Some((_, '\\')) => out.push('\\'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, '0')) => out.push('\0'),
                // Lets a block text `«…»` hold its closing guillemet.
                Some((_, '»')) => out.push('»'),
                Some((_, 'u')) => {
                    let rest = &body[i + 2..];
                    match unicode_escape(rest) {
                        Ok((c, used)) => {
                            out.push(c);
                            // Skip the `{…}` just read.
                            for _ in rest[..used].chars() {
                                chars.next();
                            }
                        }
                        Err(msg) => {
                            let used = rest.find('}').map_or(0, |k| k + 1);
                            let used = if rest.starts_with('{') { used } else { 0 };
                            let d = Diagnostic::error(
                                codes::LEX_BAD_ESCAPE,
                                msg,
                                self.span(offset + i, offset + i + 2 + used),
                            )
                            .with_hint(
                                "write a code point as 1 to 6 hex digits in braces: `\\u{e9}` is é",
                            );
                            self.diags.push(d);
                        }
                    }
                }
                Some((j, other)) => {
                    let end = offset + j + other.len_utf8();
                    let d = Diagnostic::error(
                        codes::LEX_BAD_ESCAPE,
                        format!("unknown escape `\\{other}`"),
                        self.span(offset + i, end),
                    )
                    .with_hint("escapes are \\\" \\\\ \\n \\t \\r \\0 \\u{…}");
                    self.diags.push(d);
                }
                None => out.push('\\'),
            }
        }
        out
    }

    pub(super) fn bytes(&mut self, body: &str, lo: usize, hi: usize) -> Tok {
        let digits: Vec<u8> = body.bytes().filter(|b| !b" \t\r".contains(b)).collect();
        if let Some(bad) = digits.iter().find(|b| !b.is_ascii_hexdigit()) {
            let d = Diagnostic::error(
                codes::LEX_BAD_BYTES,
                format!("byte literal holds `{}`, not a hex digit", *bad as char),
                self.span(lo, hi),
            )
            .with_hint("write bytes as hex pairs: |de ad be ef|");
            self.diags.push(d);
            return Tok::Error;
        }
        if !digits.len().is_multiple_of(2) {
            self.error(
                codes::LEX_BAD_BYTES,
                "byte literal has an odd number of hex digits",
                lo,
                hi,
            );
            return Tok::Error;
        }
        let hex = |b: u8| (b as char).to_digit(16).unwrap_or(0) as u8;
        Tok::Bytes(
            digits
                .chunks(2)
                .map(|p| hex(p[0]) * 16 + hex(p[1]))
                .collect(),
        )
    }
}

/// `{H…}` after `\u`: the character with code point H (1 to 6 hex digits), and how many
/// bytes of `rest` it took; the LEX003 message otherwise.
fn unicode_escape(rest: &str) -> Result<(char, usize), String> {
    let Some(inner) = rest.strip_prefix('{') else {
        return Err("`\\u` needs its code point in braces, as `\\u{41}`".to_string());
    };
    let Some(close) = inner.find('}') else {
        return Err("`\\u{` is not closed with `}`".to_string());
    };
    let hex = &inner[..close];
    let digits_ok = (1..=6).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit());
    let code = if digits_ok {
        u32::from_str_radix(hex, 16).ok()
    } else {
        None
    };
    match code.map(|v| (v, char::from_u32(v))) {
        Some((_, Some(c))) => Ok((c, close + 2)),
        Some((v, None)) => Err(format!(
            "`\\u{{{hex}}}` is not a Unicode scalar value (U+{v:04X})"
        )),
        None => Err(format!("`\\u{{{hex}}}` needs 1 to 6 hex digits")),
    }
}
