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
                Some((j, other)) => {
                    let end = offset + j + other.len_utf8();
                    let d = Diagnostic::error(
                        codes::LEX_BAD_ESCAPE,
                        format!("unknown escape `\\{other}`"),
                        self.span(offset + i, end),
                    )
                    .with_hint("escapes are \\\" \\\\ \\n \\t \\r \\0");
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
