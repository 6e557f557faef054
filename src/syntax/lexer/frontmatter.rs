//! Stage 1 of the lexer: the `+++` frontmatter block (TOML) at the top of a file.
//! Only `locale` is read: a code of the vocabulary's locales (src/syntax/vocab.rs)
//! sets the file's reader locale, overriding the package default.

use super::Lexer;
use crate::diag::{codes, Diagnostic};
use crate::syntax::vocab::Locale;

impl Lexer<'_> {
    /// Returns where code starts and the frontmatter text, if any.
    pub(super) fn frontmatter(&mut self, start: usize) -> (usize, Option<String>) {
        let text = self.text;
        let first_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        if text[start..first_end].trim() != "+++" {
            return (start, None);
        }
        let content_start = (first_end + 1).min(text.len());
        let mut pos = content_start;
        while pos < text.len() {
            let end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
            if text[pos..end].trim() == "+++" {
                let content = &text[content_start..pos];
                self.check_frontmatter(content, content_start);
                return ((end + 1).min(text.len()), Some(content.to_string()));
            }
            pos = end + 1;
        }
        self.error(
            codes::LEX_BAD_FRONTMATTER,
            "frontmatter is not closed: no line `+++` ends it",
            start,
            first_end,
        );
        (text.len(), None)
    }

    fn check_frontmatter(&mut self, content: &str, offset: usize) {
        match content.parse::<toml::Table>() {
            Err(e) => {
                let (lo, hi) = e
                    .span()
                    .map_or((offset, offset), |r| (offset + r.start, offset + r.end));
                let msg = e.message().trim().to_string();
                self.error(
                    codes::LEX_BAD_FRONTMATTER,
                    format!("frontmatter is not valid TOML: {msg}"),
                    lo,
                    hi,
                );
            }
            Ok(table) => {
                if let Some(locale) = table.get("locale") {
                    match locale.as_str().and_then(Locale::from_code) {
                        // The package's reader pack stays for its own locale.
                        Some(l) if l == self.locale.base() => {}
                        Some(l) => self.locale = l,
                        None => {
                            let shown = locale.to_string();
                            let (lo, hi) = locale_value_span(content)
                                .map_or((offset, offset), |(a, b)| (offset + a, offset + b));
                            let d = Diagnostic::error(
                                codes::LEX_UNSUPPORTED_LOCALE,
                                format!("unknown reader locale {shown}"),
                                self.span(lo, hi),
                            )
                            .with_hint(format!("the known locales are {}", Locale::known_list()));
                            self.diags.push(d);
                        }
                    }
                }
            }
        }
    }
}

/// Byte range of the value in the frontmatter line `locale = …`.
fn locale_value_span(content: &str) -> Option<(usize, usize)> {
    let mut pos = 0;
    for line in content.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("locale") {
            if let Some(eq) = rest.trim_start().strip_prefix('=') {
                let value = eq.trim();
                let start = pos + line.len() - eq.len() + (eq.len() - eq.trim_start().len());
                return Some((start, start + value.len()));
            }
        }
        pos += line.len();
    }
    None
}
