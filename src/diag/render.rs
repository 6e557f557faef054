//! Turns [`Diagnostic`]s into text. The layout is ours; the source snippet is
//! drawn by ariadne:
//!
//! ```text
//! error[PARSE001]: unexpected `}`
//!   --> main.fab:3:5
//!    │
//!  3 │     }
//!    │     ┬
//!    │     ╰── expected an expression
//! ───╯
//!   = help: …
//! ```
//!
//! ariadne prints its own `Error: …` header and a `╭─[ file:line:col ]` line; both
//! are dropped because our first two lines already say the same thing. Everything
//! here is pure: the caller decides where the text goes. With `color == false` the
//! output contains no escape sequences, and the same input always gives the same text.

use std::fmt;
use std::ops::Range;

use ariadne::{Color, Config, IndexType, Label as SnippetLabel, Report, ReportKind, Source};

use super::{Diagnostic, Severity};
use crate::source::{FileId, SourceMap, Span};

/// Renders every diagnostic, separated by blank lines. When the list holds more than
/// one diagnostic, a summary line follows (`error: 3 errors`, `error: 2 errors,
/// 1 warning`, `warning: 2 warnings`). The result ends with a newline unless empty.
pub fn render(diags: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let mut cache = SnippetCache::new(sources);
    let mut out = String::new();
    for (i, d) in diags.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        render_into(&mut out, d, sources, &mut cache, color);
    }
    if diags.len() > 1 {
        if let Some(line) = summary(diags, color) {
            out.push('\n');
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Renders one diagnostic: header, location, snippet, help. Ends with a newline.
pub fn render_one(d: &Diagnostic, sources: &SourceMap, color: bool) -> String {
    let mut out = String::new();
    render_into(&mut out, d, sources, &mut SnippetCache::new(sources), color);
    out
}

/// The closing line of a multi-diagnostic report, or `None` when it would count
/// nothing (notes only).
fn summary(diags: &[Diagnostic], color: bool) -> Option<String> {
    let errors = diags
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .count();
    let warnings = diags
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .count();
    let plural = |n: usize, word: &str| {
        if n == 1 {
            format!("1 {word}")
        } else {
            format!("{n} {word}s")
        }
    };
    let (severity, text) = match (errors, warnings) {
        (0, 0) => return None,
        (0, w) => (Severity::Warning, plural(w, "warning")),
        (e, 0) => (Severity::Error, plural(e, "error")),
        (e, w) => (
            Severity::Error,
            format!("{}, {}", plural(e, "error"), plural(w, "warning")),
        ),
    };
    Some(format!(
        "{}: {text}",
        paint(severity_word(severity), severity_style(severity), color)
    ))
}

fn severity_word(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Note => "note",
    }
}

// ANSI styles for our own lines (ariadne colours the snippet itself).
const BOLD: &str = "1";
const BLUE_BOLD: &str = "1;34";

fn severity_style(s: Severity) -> &'static str {
    match s {
        Severity::Error => "1;31",
        Severity::Warning => "1;33",
        Severity::Note => "1;36",
    }
}

fn paint(text: &str, style: &str, color: bool) -> String {
    if color {
        format!("\x1b[{style}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

fn render_into(
    out: &mut String,
    d: &Diagnostic,
    sources: &SourceMap,
    cache: &mut SnippetCache<'_>,
    color: bool,
) {
    // error[CODE]: message
    let head = format!("{}[{}]", severity_word(d.severity), d.code.id);
    out.push_str(&paint(&head, severity_style(d.severity), color));
    out.push_str(&paint(&format!(": {}", d.message), BOLD, color));
    out.push('\n');

    //   --> file:line:col
    let arrow = paint("-->", BLUE_BOLD, color);
    if cache.has(d.span.file) {
        let (line, col) = sources.line_col(d.span);
        out.push_str(&format!(
            "  {arrow} {}:{line}:{col}\n",
            sources.name(d.span.file)
        ));
        // An empty file (a placeholder for a path that could not be read, or a
        // truly empty source) has nothing worth drawing.
        if !sources.text(d.span.file).is_empty() {
            out.push_str(&snippet(d, cache, color));
        }
    } else {
        // A span into a file this map never saw: a bug upstream, but still no panic.
        out.push_str(&format!("  {arrow} <unknown file>\n"));
    }

    //   = help: …
    if let Some(hint) = &d.hint {
        let mut lines = hint.lines();
        let first = lines.next().unwrap_or("");
        out.push_str(&format!(
            "  {} {}: {first}\n",
            paint("=", BLUE_BOLD, color),
            paint("help", BOLD, color)
        ));
        for rest in lines {
            out.push_str(&format!("          {rest}\n"));
        }
    }
}

/// The ariadne part: source lines with the primary span underlined and the
/// secondary labels attached, without ariadne's header and location lines.
fn snippet(d: &Diagnostic, cache: &mut SnippetCache<'_>, color: bool) -> String {
    let primary_file = d.span.file;
    let (primary_color, secondary_color) = if color {
        let primary = match d.severity {
            Severity::Error => Color::Red,
            Severity::Warning => Color::Yellow,
            Severity::Note => Color::Cyan,
        };
        (Some(primary), Some(Color::Blue))
    } else {
        (None, None)
    };

    // Primary first among equals; labels in the primary file before other files, each
    // file in source order, so ariadne draws one group per file. Labels into unknown
    // files are dropped.
    // A label on exactly the primary span supplies the primary label's text.
    let primary_text = d.labels.iter().find(|l| l.span == d.span);
    let mut marks: Vec<(Span, Option<&str>, bool)> =
        vec![(d.span, primary_text.map(|l| l.message.as_str()), true)];
    for l in &d.labels {
        if cache.has(l.span.file) && l.span != d.span {
            marks.push((l.span, Some(l.message.as_str()), false));
        }
    }
    marks.sort_by_key(|(span, _, primary)| {
        (span.file != primary_file, span.file, span.lo, !primary)
    });

    // One ariadne report per file: a report locates a group in another file by a
    // character offset that it then uses as a byte offset (ariadne 0.6), which panics
    // on multi-byte text before the label. Each report's span is in its own file.
    let mut out = String::new();
    let mut order = 0i32;
    let mut start = 0;
    while start < marks.len() {
        let file = marks[start].0.file;
        let end = start
            + marks[start..]
                .iter()
                .take_while(|(span, _, _)| span.file == file)
                .count();
        let mut labels = Vec::with_capacity(end - start);
        let mut report_range = None;
        for &(span, message, primary) in &marks[start..end] {
            let range = cache.snippet_range(span);
            if primary || report_range.is_none() {
                report_range = Some(range.clone());
            }
            // ariadne underlines only labels that carry a message, so the primary label
            // gets an empty one unless a secondary label at the same span gives it text.
            let mut label = SnippetLabel::new((span.file, range))
                .with_order(order)
                .with_message(message.unwrap_or(""));
            order += 1;
            let paint = if primary {
                primary_color
            } else {
                secondary_color
            };
            if let Some(c) = paint {
                label = label.with_color(c);
            }
            if primary {
                label = label.with_priority(1);
            }
            labels.push(label);
        }
        let kind = match d.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
            Severity::Note => ReportKind::Advice,
        };
        let report = Report::build(kind, (file, report_range.unwrap_or(0..0)))
            .with_config(
                Config::default()
                    .with_index_type(IndexType::Byte)
                    .with_color(color),
            )
            .with_labels(labels)
            .finish();
        let mut bytes = Vec::new();
        if report.write(&mut *cache, &mut bytes).is_ok() {
            let text = String::from_utf8_lossy(&bytes);
            // Line 0 is ariadne's `Error:` header, line 1 its `╭─[ file:line:col ]`:
            // the primary file's location is our `-->` line; another file keeps it.
            let skip = if file == primary_file { 2 } else { 1 };
            for line in text.lines().skip(skip) {
                out.push_str(line.trim_end());
                out.push('\n');
            }
        }
        start = end;
    }
    out
}

/// ariadne sources built once per file and shared by every diagnostic of a run.
struct SnippetCache<'a> {
    sources: &'a SourceMap,
    snippets: Vec<Option<Source<String>>>,
}

impl<'a> SnippetCache<'a> {
    fn new(sources: &'a SourceMap) -> SnippetCache<'a> {
        SnippetCache {
            sources,
            snippets: sources.files().map(|_| None).collect(),
        }
    }

    fn has(&self, file: FileId) -> bool {
        (file.0 as usize) < self.snippets.len()
    }

    /// Clamps a span to the file and to character boundaries, and widens an empty
    /// span to the character after it, so ariadne always has something to underline.
    /// The snippet text has one extra space at the end (see [`snippet_text`]), so a
    /// span at the very end of the file underlines that space.
    fn snippet_range(&self, span: Span) -> Range<usize> {
        let text = self.sources.text(span.file);
        let len = text.len();
        let mut lo = (span.lo as usize).min(len);
        let mut hi = (span.hi as usize).clamp(lo, len);
        while !text.is_char_boundary(lo) {
            lo -= 1;
        }
        while !text.is_char_boundary(hi) {
            hi += 1;
        }
        if lo == hi {
            hi = match text[lo..].chars().next() {
                Some(c) => lo + c.len_utf8(),
                None => len + 1,
            };
        }
        lo..hi
    }
}

/// The text ariadne draws from. ariadne splits lines at more characters than our
/// `SourceMap` does (lone `\r`, vertical tab, form feed, U+0085, U+2028, U+2029); each
/// of those becomes a whitespace character of the same UTF-8 length so line numbers
/// and byte offsets agree with ours. A trailing space gives end-of-file spans a column.
fn snippet_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 1);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => out.push('\r'),
            '\r' | '\x0B' | '\x0C' => out.push(' '),
            '\u{0085}' => out.push('\u{00A0}'),
            '\u{2028}' | '\u{2029}' => out.push('\u{2000}'),
            c => out.push(c),
        }
    }
    out.push(' ');
    out
}

impl ariadne::Cache<FileId> for SnippetCache<'_> {
    type Storage = String;

    fn fetch(&mut self, id: &FileId) -> Result<&Source<String>, impl fmt::Debug> {
        let sources = self.sources;
        match self.snippets.get_mut(id.0 as usize) {
            Some(slot) => {
                Ok(slot.get_or_insert_with(|| Source::from(snippet_text(sources.text(*id)))))
            }
            None => Err(format!("no source file {}", id.0)),
        }
    }

    fn display<'b>(&self, id: &'b FileId) -> Option<impl fmt::Display + 'b> {
        self.has(*id).then(|| self.sources.name(*id).to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::codes;

    fn one(text: &str, lo: usize, hi: usize) -> (SourceMap, Diagnostic) {
        let mut sm = SourceMap::new();
        let f = sm.add("t.fab", text);
        let d = Diagnostic::error(codes::PARSE_UNEXPECTED, "bad", Span::new(f, lo, hi));
        (sm, d)
    }

    #[test]
    fn header_location_and_help() {
        let (sm, d) = one("incipit {\n    x ← ]\n}\n", 20, 21);
        let d = d.with_hint("remove the `]`");
        let out = render_one(&d, &sm, false);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "error[PARSE001]: bad");
        assert_eq!(lines[1], "  --> t.fab:2:9");
        assert!(out.contains(" 2 │     x ← ]"), "{out}");
        assert_eq!(*lines.last().unwrap(), "  = help: remove the `]`");
        assert!(!out.contains('\x1b'));
    }

    #[test]
    fn colour_only_when_asked() {
        let (sm, d) = one("a ← 1\n", 0, 1);
        assert!(render_one(&d, &sm, true).contains("\x1b["));
        assert!(!render_one(&d, &sm, false).contains("\x1b["));
    }

    #[test]
    fn deterministic() {
        let (sm, d) = one("a ← 1\nb ← 2\n", 6, 7);
        let d = d.with_label(Span::new(FileId(0), 0, 1), "first");
        assert_eq!(render_one(&d, &sm, false), render_one(&d, &sm, false));
    }

    #[test]
    fn end_of_file_spans_do_not_panic() {
        for text in ["\n", "abc", "abc\n", "a\r\nb\r\n", "é", "x\u{2028}y"] {
            let len = text.len();
            let (sm, d) = one(text, len, len);
            let out = render_one(&d, &sm, false);
            assert!(
                out.starts_with("error[PARSE001]: bad\n  --> t.fab:"),
                "{out}"
            );
        }
    }

    #[test]
    fn empty_file_has_no_snippet() {
        let (sm, d) = one("", 0, 0);
        assert_eq!(
            render_one(&d, &sm, false),
            "error[PARSE001]: bad\n  --> t.fab:1:1\n"
        );
    }

    #[test]
    fn odd_spans_do_not_panic() {
        // Inside a multibyte character, reversed, beyond the end, on a newline.
        let text = "fixum é ← 1\nnota é\n";
        for (lo, hi) in [(7, 7), (7, 8), (9, 3), (100, 200), (11, 12), (0, 100)] {
            let (sm, d) = one(text, lo, hi);
            let d = d.with_label(Span::new(FileId(0), hi, lo), "odd");
            let _ = render_one(&d, &sm, false);
            let _ = render_one(&d, &sm, true);
        }
    }

    #[test]
    fn column_counts_chars_after_multibyte() {
        let (sm, d) = one("fixum é ← ]\n", "fixum é ← ".len(), "fixum é ← ]".len());
        let out = render_one(&d, &sm, false);
        assert!(out.contains("  --> t.fab:1:11\n"), "{out}");
    }

    #[test]
    fn secondary_label_in_other_file() {
        let mut sm = SourceMap::new();
        let a = sm.add("a.fab", "importa ex \"./b\"\n");
        let b = sm.add("b.fab", "functio f() {}\n");
        let d = Diagnostic::error(codes::PARSE_UNEXPECTED, "bad", Span::new(a, 11, 16))
            .with_label(Span::new(b, 8, 9), "defined here");
        let out = render_one(&d, &sm, false);
        assert!(out.contains("b.fab:1:9"), "{out}");
        assert!(out.contains("defined here"), "{out}");
    }

    #[test]
    fn secondary_label_after_multibyte_text_in_other_file() {
        let mut sm = SourceMap::new();
        let a = sm.add("a.fab", "importa ex \"./b\"\n");
        let b = sm.add(
            "b.fab",
            "# → → → \u{FFFD}\u{FFFD}\u{FFFD}\nfunctio f() {}\n",
        );
        let lo = "# → → → \u{FFFD}\u{FFFD}\u{FFFD}\nfunctio ".len();
        let d = Diagnostic::error(codes::PARSE_UNEXPECTED, "bad", Span::new(a, 11, 16))
            .with_label(Span::new(b, lo, lo + 1), "defined here");
        let out = render_one(&d, &sm, false);
        assert!(out.contains("b.fab:2:9"), "{out}");
        assert!(out.contains("defined here"), "{out}");
    }

    #[test]
    fn label_on_primary_span_annotates_it() {
        let (sm, d) = one("incipit { ] }\n", 10, 11);
        let d = d.with_label(Span::new(FileId(0), 10, 11), "expected a statement");
        let out = render_one(&d, &sm, false);
        assert_eq!(out.matches("expected a statement").count(), 1, "{out}");
    }

    #[test]
    fn summary_counts() {
        let (sm, d) = one("a\n", 0, 1);
        let w = Diagnostic::warning(codes::PARSE_UNEXPECTED, "meh", d.span);
        assert!(!render(std::slice::from_ref(&d), &sm, false).contains("error: 1"));
        let two = render(&[d.clone(), d.clone()], &sm, false);
        assert!(two.ends_with("\nerror: 2 errors\n"), "{two}");
        let mixed = render(&[d.clone(), w.clone()], &sm, false);
        assert!(mixed.ends_with("\nerror: 1 error, 1 warning\n"), "{mixed}");
        let warns = render(&[w.clone(), w], &sm, false);
        assert!(warns.ends_with("\nwarning: 2 warnings\n"), "{warns}");
        assert_eq!(render(&[], &sm, false), "");
    }
}
