//! The lexer adapter: turns source text into the parser's token stream.
//!
//! It never fails: every problem becomes a diagnostic plus, where the parser needs
//! something in its place, a [`Tok::Error`] token. Stages:
//! 1. byte-order mark and `+++` frontmatter (TOML, only `locale` is read);
//! 2. the logos scanner ([`Raw`]) and literal decoding, keyword mapping, annotation
//!    lines folded into one token;
//! 3. context rules that keep the grammar LR(1) without newlines (see docs/syntax.md):
//!    `<` touching a word opens type arguments, `redde` before a closer is bare,
//!    `(` whose `)` is followed by `→`/`∴` opens a closure or function type, and `{`
//!    after a type name opens a record only outside statement headers.
//!
//! Stage 1 lives in `lexer/frontmatter.rs`, the decoding of number, text and byte
//! literals in `lexer/literal.rs`.

mod digits;
mod frontmatter;
mod literal;
mod sugar;

use logos::Logos;

use super::ast::{AnnotArg, Annotation, Ident};
use super::token::{Kw, Raw, Tok};
use super::vocab::{vocabulary, Locale};
use crate::diag::{codes, Diagnostic};
use crate::source::{FileId, Span};

/// Brackets nested deeper than this are rejected (guards every recursive pass).
pub const MAX_NESTING: usize = 200;
/// Operators in one expression run (between braces, `;` and statement keywords).
pub const MAX_OPERATOR_RUN: usize = 4_096;

pub type Spanned = (usize, Tok, usize);

/// The result of lexing one file.
pub struct Lexed {
    pub tokens: Vec<Spanned>,
    pub frontmatter: Option<String>,
    /// The reader locale the file was read in: its frontmatter's, else the default.
    pub locale: Locale,
    pub diagnostics: Vec<Diagnostic>,
}

/// Lexes a file whose default reader locale is Latin.
pub fn lex(file: FileId, text: &str) -> Lexed {
    lex_in(file, text, Locale::LA)
}

/// Lexes a file in its frontmatter's `locale`, else in `default` (the package's
/// `[reader] locale`). Keywords are looked up in that locale's column of the
/// vocabulary (src/syntax/vocab.rs); every other step is the same for all locales.
pub fn lex_in(file: FileId, text: &str, default: Locale) -> Lexed {
    let mut lx = Lexer {
        file,
        text,
        locale: default,
        tokens: Vec::new(),
        diags: Vec::new(),
    };
    let start = if text.starts_with('\u{FEFF}') { 3 } else { 0 };
    let (body_start, frontmatter) = lx.frontmatter(start);
    lx.scan(body_start);
    lx.apply_context_rules();
    lx.mark_bare_closures();
    Lexed {
        tokens: lx.tokens,
        frontmatter,
        locale: lx.locale,
        diagnostics: lx.diags,
    }
}

struct Lexer<'a> {
    file: FileId,
    text: &'a str,
    locale: Locale,
    tokens: Vec<Spanned>,
    diags: Vec<Diagnostic>,
}

struct RawTok {
    raw: Result<Raw, ()>,
    lo: usize,
    hi: usize,
}

impl<'a> Lexer<'a> {
    fn span(&self, lo: usize, hi: usize) -> Span {
        Span::new(self.file, lo, hi)
    }

    fn error(&mut self, code: codes::Code, msg: impl Into<String>, lo: usize, hi: usize) {
        let d = Diagnostic::error(code, msg, self.span(lo, hi));
        self.diags.push(d);
    }

    // ------------------------------------------------------------ scanning

    fn scan(&mut self, start: usize) {
        let src = &self.text[start..];
        let mut raw: Vec<RawTok> = Vec::new();
        let mut lexer = Raw::lexer(src);
        while let Some(r) = lexer.next() {
            let s = lexer.span();
            raw.push(RawTok {
                raw: r,
                lo: start + s.start,
                hi: start + s.end,
            });
        }
        let mut depth = 0usize;
        let mut op_run = 0usize;
        let mut i = 0;
        while i < raw.len() {
            let RawTok { raw: r, lo, hi } = raw[i];
            i += 1;
            let slice = &self.text[lo..hi];
            let tok = match r {
                Err(()) => {
                    // Merge a run of unrecognised characters into one diagnostic.
                    let mut end = hi;
                    while i < raw.len() && raw[i].raw.is_err() && raw[i].lo == end {
                        end = raw[i].hi;
                        i += 1;
                    }
                    let shown = &self.text[lo..end];
                    let msg = if shown.chars().count() == 1 {
                        format!("unexpected character `{shown}`")
                    } else {
                        format!("unexpected characters `{shown}`")
                    };
                    // (`!` is its own token: see `Raw::Bang` below.)
                    let mut d = Diagnostic::error(codes::LEX_UNKNOWN_CHAR, msg, self.span(lo, end));
                    if let Some(n) = digits::as_ascii_number(shown) {
                        d = d.with_hint(format!(
                            "numbers are written in ASCII digits in every reader locale: `{n}`"
                        ));
                    }
                    self.diags.push(d);
                    self.tokens.push((lo, Tok::Error, end));
                    continue;
                }
                Ok(Raw::Comment) => {
                    if !self.at_line_start(lo) {
                        let d = Diagnostic::error(
                            codes::LEX_TRAILING_COMMENT,
                            "a `#` comment must start its own line",
                            self.span(lo, lo + 1),
                        )
                        .with_hint("move the comment to the line above");
                        self.diags.push(d);
                    }
                    continue;
                }
                Ok(Raw::UnicodeSpace) => {
                    let c = slice.chars().next().unwrap_or(' ');
                    self.error(
                        codes::LEX_UNICODE_SPACE,
                        format!("non-ASCII space U+{:04X} outside a literal", c as u32),
                        lo,
                        hi,
                    );
                    continue;
                }
                Ok(Raw::Bang) => {
                    let glued = raw.get(i).is_some_and(|n| {
                        n.lo == hi && matches!(n.raw, Ok(Raw::Period | Raw::LBracket | Raw::LParen))
                    });
                    if glued {
                        Tok::Bang
                    } else {
                        let d = Diagnostic::error(
                            codes::LEX_UNKNOWN_CHAR,
                            "unexpected character `!`",
                            self.span(lo, hi),
                        )
                        .with_hint("negation is `non` (logical) or `¬` (bitwise); `!.`, `![` and `!(` assert a value is not `nihil`");
                        self.diags.push(d);
                        self.tokens.push((lo, Tok::Error, hi));
                        continue;
                    }
                }
                Ok(Raw::At) => {
                    let (tok, next) = self.annotation(&raw, i - 1);
                    i = next;
                    match tok {
                        Some(t) => t,
                        None => continue,
                    }
                }
                Ok(r) => self.convert(r, slice, lo, hi),
            };
            // Nesting and operator-run limits protect the recursive later stages.
            match tok {
                Tok::LParen | Tok::LBracket | Tok::LBrace => {
                    depth += 1;
                    if depth > MAX_NESTING {
                        self.error(
                            codes::LEX_TOO_DEEP,
                            format!("brackets nested more than {MAX_NESTING} deep"),
                            lo,
                            hi,
                        );
                        return;
                    }
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.saturating_sub(1),
                _ => {}
            }
            if matches!(tok, Tok::LBrace | Tok::RBrace | Tok::Semi) || starts_statement(&tok) {
                op_run = 0;
            } else if is_operator(&tok) {
                op_run += 1;
                if op_run > MAX_OPERATOR_RUN {
                    self.error(
                        codes::LEX_TOO_DEEP,
                        format!("more than {MAX_OPERATOR_RUN} operators in one expression"),
                        lo,
                        hi,
                    );
                    return;
                }
            }
            self.tokens.push((lo, tok, hi));
        }
    }

    fn at_line_start(&self, lo: usize) -> bool {
        self.text[..lo]
            .chars()
            .rev()
            .take_while(|&c| c != '\n')
            .all(|c| c == ' ' || c == '\t' || c == '\r' || c == '\u{FEFF}')
    }

    /// Whether the next word stands where `exitus` is the entry's exit code: right after
    /// `incipit` or `incipit argumenta name`. Elsewhere `exitus` (and its spelling in
    /// every locale) is a name, as upstream owns a keyword only in its contexts.
    fn in_entry_header(&self) -> bool {
        let n = self.tokens.len();
        let at = |back: usize| n.checked_sub(back).map(|i| &self.tokens[i].1);
        matches!(at(1), Some(Tok::Kw(Kw::Incipit)))
            || (matches!(at(3), Some(Tok::Kw(Kw::Incipit)))
                && matches!(at(2), Some(Tok::Ident(_)))
                && matches!(at(1), Some(Tok::Ident(_))))
    }

    fn prev_is_word(&self, kinds: &[Kw]) -> bool {
        matches!(self.tokens.last(), Some((_, Tok::Kw(k), _)) if kinds.contains(k))
    }

    fn convert(&mut self, r: Raw, slice: &str, lo: usize, hi: usize) -> Tok {
        match r {
            Raw::Word => {
                let after_period = matches!(self.tokens.last(), Some((_, Tok::Period, _)));
                if after_period || self.prev_is_word(&[Kw::Functio]) {
                    return Tok::Ident(slice.to_string());
                }
                if slice == "aliter"
                    && self.locale == Locale::LA
                    && matches!(self.tokens.last(), Some((_, Tok::RBrace, _)))
                {
                    let d = Diagnostic::error(
                        codes::PARSE_RETIRED_KEYWORD,
                        "`aliter` is a retired spelling",
                        self.span(lo, hi),
                    )
                    .with_hint("write `secus`");
                    self.diags.push(d);
                    return Tok::Kw(Kw::Secus);
                }
                match vocabulary().keyword(self.locale, slice) {
                    Some(Kw::Exitus) if !self.in_entry_header() => Tok::Ident(slice.to_string()),
                    Some(k) => Tok::Kw(k),
                    None => Tok::Ident(slice.to_string()),
                }
            }
            Raw::Underscore => Tok::Underscore,
            Raw::Int => self.int(slice, 10, lo, hi),
            Raw::Hex => self.int(&slice[2..], 16, lo, hi),
            Raw::Bin => self.int(&slice[2..], 2, lo, hi),
            Raw::Oct => self.int(&slice[2..], 8, lo, hi),
            Raw::Float => {
                let clean: String = slice.chars().filter(|&c| c != '_').collect();
                match clean.parse::<f64>() {
                    Ok(v) if v.is_finite() => Tok::Float(v),
                    _ => {
                        self.error(
                            codes::LEX_BAD_NUMBER,
                            format!("number `{slice}` is out of range"),
                            lo,
                            hi,
                        );
                        Tok::Error
                    }
                }
            }
            Raw::BadNumber => {
                let d = Diagnostic::error(
                    codes::LEX_BAD_NUMBER,
                    format!("malformed number `{slice}`"),
                    self.span(lo, hi),
                )
                .with_hint("an exponent needs digits (`1e5`); a name cannot start with a digit");
                self.diags.push(d);
                Tok::Error
            }
            Raw::Text => Tok::Text(self.unescape(&slice[1..slice.len() - 1], lo + 1)),
            Raw::Ascii => Tok::Ascii(self.unescape(&slice[1..slice.len() - 1], lo + 1)),
            Raw::UnterminatedText | Raw::UnterminatedAscii => {
                let q = &slice[..1];
                let d = Diagnostic::error(
                    codes::LEX_UNTERMINATED_TEXT,
                    "unterminated text literal",
                    self.span(lo, hi),
                )
                .with_hint(format!("close it with `{q}` on the same line"));
                self.diags.push(d);
                Tok::Error
            }
            Raw::BlockText => {
                let open = '«'.len_utf8();
                let close = '»'.len_utf8();
                Tok::Text(self.unescape(&slice[open..slice.len() - close], lo + open))
            }
            Raw::UnterminatedBlockText => {
                let d = Diagnostic::error(
                    codes::LEX_UNTERMINATED_TEXT,
                    "unterminated block text: missing the closing `»`",
                    self.span(lo, lo + '«'.len_utf8()),
                )
                .with_hint("close it with `»`; a block text may span several lines");
                self.diags.push(d);
                Tok::Error
            }
            Raw::Bytes => self.bytes(&slice[1..slice.len() - 1], lo, hi),
            Raw::UnterminatedBytes => {
                self.error(
                    codes::LEX_BAD_BYTES,
                    "unterminated byte literal: missing the closing `|`",
                    lo,
                    hi,
                );
                Tok::Error
            }
            Raw::AsciiOperator => {
                let (glyph, tok) = match slice {
                    "==" => ("≡", Tok::Eq),
                    "!=" => ("≠", Tok::Ne),
                    "<=" => ("≤", Tok::Le),
                    ">=" => ("≥", Tok::Ge),
                    "->" => ("→", Tok::Arrow),
                    ".." => ("‥", Tok::RangeExcl),
                    _ => ("et", Tok::Kw(Kw::Et)),
                };
                let d = Diagnostic::error(
                    codes::LEX_ASCII_OPERATOR,
                    format!("`{slice}` is not a Faber operator"),
                    self.span(lo, hi),
                )
                .with_hint(format!("write `{glyph}`"));
                self.diags.push(d);
                tok
            }
            Raw::UnsupportedGlyph => {
                let hint = match slice {
                    "≢" => "write `≠`",
                    "×" | "⊗" => "use `·` (matrix product) or `⊙` (elementwise product)",
                    "⊕" | "⊖" | "↑" | "↓" => "write `x ← x + 1`",
                    "∇" => "declare a companion with `@ radix backward \"name\"`",
                    _ => "this glyph is outside the supported subset",
                };
                let d = Diagnostic::error(
                    codes::LEX_UNSUPPORTED_GLYPH,
                    format!("`{slice}` is not supported"),
                    self.span(lo, hi),
                )
                .with_hint(hint);
                self.diags.push(d);
                Tok::Error
            }
            Raw::Bind => Tok::Bind,
            Raw::Arrow => Tok::Arrow,
            Raw::Throws => Tok::Throws,
            Raw::MapsTo => Tok::MapsTo,
            Raw::Ascribe => Tok::Ascribe,
            Raw::Union => Tok::Union,
            Raw::Therefore => Tok::Therefore,
            Raw::Eq => Tok::Eq,
            Raw::Ne => Tok::Ne,
            Raw::NumEq => Tok::NumEq,
            Raw::NumNe => Tok::NumNe,
            Raw::Lt => Tok::Lt,
            Raw::Gt => Tok::Gt,
            Raw::Le => Tok::Le,
            Raw::Ge => Tok::Ge,
            Raw::RangeExcl => Tok::RangeExcl,
            Raw::RangeIncl => Tok::RangeIncl,
            Raw::Dot => Tok::Dot,
            Raw::Hadamard => Tok::Hadamard,
            Raw::BitAnd => Tok::BitAnd,
            Raw::BitOr => Tok::BitOr,
            Raw::BitXor => Tok::BitXor,
            Raw::BitNot => Tok::BitNot,
            Raw::Shl => Tok::Shl,
            Raw::Shr => Tok::Shr,
            Raw::Plus => Tok::Plus,
            Raw::Minus => Tok::Minus,
            Raw::Star => Tok::Star,
            Raw::Slash => Tok::Slash,
            Raw::Percent => Tok::Percent,
            Raw::Assign => Tok::Assign,
            Raw::Colon => Tok::Colon,
            Raw::Comma => Tok::Comma,
            Raw::Period => Tok::Period,
            Raw::Semi => Tok::Semi,
            Raw::LParen => Tok::LParen,
            Raw::RParen => Tok::RParen,
            Raw::LBracket => Tok::LBracket,
            Raw::RBracket => Tok::RBracket,
            Raw::LBrace => Tok::LBrace,
            Raw::RBrace => Tok::RBrace,
            // Handled by the caller before conversion.
            Raw::Comment | Raw::At | Raw::UnicodeSpace | Raw::Bang => Tok::Error,
        }
    }

    // ------------------------------------------------------------ annotations

    /// Folds `@ name args…` (to end of line) or `@ name { k = v, … }` into one token.
    /// Returns the token (None when malformed) and the index of the next raw token.
    fn annotation(&mut self, raw: &[RawTok], at: usize) -> (Option<Tok>, usize) {
        let at_lo = raw[at].lo;
        let line_end = self.text[at_lo..]
            .find('\n')
            .map_or(self.text.len(), |i| at_lo + i);
        let same_line = |t: &RawTok| t.lo < line_end;
        let mut i = at + 1;
        if !self.at_line_start(at_lo) {
            let d = Diagnostic::error(
                codes::LEX_BAD_ANNOTATION,
                "an annotation must start its own line",
                self.span(at_lo, at_lo + 1),
            );
            self.diags.push(d);
        }
        let name = match raw.get(i) {
            Some(t) if same_line(t) && t.raw == Ok(Raw::Word) => {
                i += 1;
                Ident {
                    name: self.text[t.lo..t.hi].to_string(),
                    span: self.span(t.lo, t.hi),
                }
            }
            _ => {
                let d = Diagnostic::error(
                    codes::LEX_BAD_ANNOTATION,
                    "annotation needs a name after `@`",
                    self.span(at_lo, at_lo + 1),
                )
                .with_hint("for example `@ radix backward \"grad_f\"`");
                self.diags.push(d);
                while i < raw.len() && same_line(&raw[i]) {
                    i += 1;
                }
                return (None, i);
            }
        };
        let mut args = Vec::new();
        let mut end = raw[i - 1].hi;
        if matches!(raw.get(i), Some(t) if same_line(t) && t.raw == Ok(Raw::LBrace)) {
            // Block form: key = value pairs up to the matching `}`.
            let open = raw[i].lo;
            i += 1;
            loop {
                match raw.get(i) {
                    None => {
                        self.error(
                            codes::LEX_BAD_ANNOTATION,
                            "annotation block is not closed with `}`",
                            open,
                            open + 1,
                        );
                        return (None, i);
                    }
                    Some(t) if t.raw == Ok(Raw::RBrace) => {
                        end = t.hi;
                        i += 1;
                        break;
                    }
                    Some(t) if t.raw == Ok(Raw::Comma) => i += 1,
                    Some(t)
                        if t.raw == Ok(Raw::Word)
                            && matches!(raw.get(i + 1), Some(a) if a.raw == Ok(Raw::Assign)) =>
                    {
                        let key = self.text[t.lo..t.hi].to_string();
                        match raw.get(i + 2).and_then(|v| self.annotation_value(v)) {
                            Some(v) => args.push(AnnotArg::Pair(key, Box::new(v))),
                            None => {
                                let lo = raw.get(i + 2).map_or(t.hi, |v| v.lo);
                                let hi = raw.get(i + 2).map_or(t.hi, |v| v.hi);
                                self.error(
                                    codes::LEX_BAD_ANNOTATION,
                                    "annotation value must be a word, text or number",
                                    lo,
                                    hi,
                                );
                            }
                        }
                        i += 3;
                    }
                    Some(t) => {
                        self.error(
                            codes::LEX_BAD_ANNOTATION,
                            "expected `key = value` in annotation block",
                            t.lo,
                            t.hi,
                        );
                        i += 1;
                    }
                }
            }
        } else {
            while let Some(t) = raw.get(i) {
                if !same_line(t) {
                    break;
                }
                // Upstream's sugar form takes any token to the end of the line
                // (`@ radix typus T in textus lista<textus>`): a glyph or a bracket is
                // kept as a word of its own; a comment or a malformed token is not.
                let glyph = matches!(
                    t.raw,
                    Ok(r) if !matches!(
                        r,
                        Raw::Comment
                            | Raw::At
                            | Raw::UnicodeSpace
                            | Raw::BadNumber
                            | Raw::UnterminatedText
                            | Raw::UnterminatedAscii
                            | Raw::UnterminatedBlockText
                            | Raw::UnterminatedBytes
                    )
                );
                match self.annotation_value(t) {
                    Some(v) => args.push(v),
                    None if glyph => args.push(AnnotArg::Word(self.text[t.lo..t.hi].to_string())),
                    None => {
                        self.error(
                            codes::LEX_BAD_ANNOTATION,
                            "annotation arguments must be words, texts, numbers or glyphs",
                            t.lo,
                            t.hi,
                        );
                    }
                }
                end = t.hi;
                i += 1;
            }
        }
        let ann = Annotation {
            name,
            args,
            span: self.span(at_lo, end),
        };
        self.tokens
            .push((at_lo, Tok::Annotation(Box::new(ann)), end));
        (None, i)
    }

    fn annotation_value(&mut self, t: &RawTok) -> Option<AnnotArg> {
        let s = &self.text[t.lo..t.hi];
        match t.raw {
            Ok(Raw::Word) | Ok(Raw::Underscore) => Some(AnnotArg::Word(s.to_string())),
            Ok(Raw::Text) | Ok(Raw::Ascii) => {
                Some(AnnotArg::Text(self.unescape(&s[1..s.len() - 1], t.lo + 1)))
            }
            Ok(Raw::Int) => s.replace('_', "").parse().ok().map(AnnotArg::Int),
            Ok(Raw::Float) => s.replace('_', "").parse().ok().map(AnnotArg::Float),
            _ => None,
        }
    }

    // ------------------------------------------------------------ context rules

    #[allow(clippy::needless_range_loop)] // indexes three parallel views of the tokens
    fn apply_context_rules(&mut self) {
        let n = self.tokens.len();
        // Matching closers for `(`, using one stack over all bracket kinds.
        let mut closer = vec![usize::MAX; n];
        let mut opener = vec![usize::MAX; n];
        let mut stack: Vec<usize> = Vec::new();
        for (i, (_, t, _)) in self.tokens.iter().enumerate() {
            match t {
                Tok::LParen | Tok::LBracket | Tok::LBrace => stack.push(i),
                Tok::RParen | Tok::RBracket | Tok::RBrace => {
                    if let Some(o) = stack.pop() {
                        closer[o] = i;
                        opener[i] = o;
                    }
                }
                _ => {}
            }
        }

        // Headers (`si cond {`, `functio f() → T {`, …) end at their body brace;
        // inside them a `{` at the header's depth is never a record.
        let mut headers: Vec<usize> = Vec::new();
        let mut depth = 0usize;
        let mut functio_params_pending = false;
        // Open `<` of type arguments, and the `>` that close type arguments of a name
        // (`Capsa<numerus>`), after which `{` may open a record.
        let mut type_args_open: Vec<usize> = Vec::new();
        let mut closes_named_args = vec![false; n];
        for i in 0..n {
            let next = self.tokens.get(i + 1).map(|t| &t.1);
            let prev = if i > 0 {
                Some(&self.tokens[i - 1])
            } else {
                None
            };
            let (lo, ref tok, _) = self.tokens[i];
            let mut replace = None;
            match tok {
                Tok::Kw(Kw::Dum) if self.closes_fac(i, &opener) => {
                    replace = Some(Tok::DumPost);
                }
                Tok::Kw(k) => {
                    match k {
                        Kw::Si
                        | Kw::Sin
                        | Kw::Dum
                        | Kw::Itera
                        | Kw::Elige
                        | Kw::Casu
                        | Kw::Incipit
                        | Kw::Proba
                        | Kw::Probandum
                        | Kw::Functio
                        | Kw::Genus
                        | Kw::Cape => headers.push(depth),
                        Kw::Ergo if headers.last() == Some(&depth) => {
                            headers.pop();
                        }
                        Kw::Redde => {
                            let bare = matches!(
                                next,
                                None | Some(Tok::RBrace)
                                    | Some(Tok::Semi)
                                    | Some(Tok::Kw(Kw::Sin | Kw::Secus | Kw::Casu | Kw::Ceterum))
                            );
                            if bare {
                                replace = Some(Tok::ReddeBare);
                            }
                        }
                        _ => {}
                    }
                    if *k == Kw::Functio {
                        functio_params_pending = true;
                    }
                }
                Tok::Lt => {
                    if let Some((_, p, phi)) = prev {
                        if *phi == lo && matches!(p, Tok::Ident(_) | Tok::Kw(_)) {
                            replace = Some(Tok::LtArgs);
                            type_args_open.push(i);
                        }
                    }
                }
                Tok::LParen => {
                    depth += 1;
                    if functio_params_pending {
                        functio_params_pending = false;
                    } else if matches!(prev, Some((_, Tok::Bang, _))) {
                        // `f!(…)` is a call, never a closure's parameter list.
                    } else {
                        let c = closer[i];
                        let after = self.tokens.get(c.wrapping_add(1)).map(|t| &t.1);
                        if c != usize::MAX && matches!(after, Some(Tok::Arrow | Tok::Therefore)) {
                            replace = Some(Tok::LParenFn);
                        }
                    }
                }
                Tok::Gt => {
                    if let Some(o) = type_args_open.pop() {
                        closes_named_args[i] =
                            o > 0 && matches!(self.tokens[o - 1].1, Tok::Ident(_));
                    }
                }
                Tok::LBracket => depth += 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth = depth.saturating_sub(1),
                Tok::LBrace => {
                    if headers.last() == Some(&depth) {
                        headers.pop();
                    } else if matches!(prev, Some((_, Tok::Ident(_), _)))
                        || (i > 0 && closes_named_args[i - 1])
                    {
                        let after = self.tokens.get(i + 2).map(|t| &t.1);
                        let record = match next {
                            Some(Tok::RBrace) => true,
                            // `Name { f ← v }` is the common slip for `=`: read it as a
                            // record so the error lands on the arrow.
                            Some(Tok::Ident(_) | Tok::Kw(_)) => {
                                matches!(after, Some(Tok::Assign | Tok::Bind))
                            }
                            _ => false,
                        };
                        if record {
                            replace = Some(Tok::LBraceRec);
                        }
                    }
                    depth += 1;
                }
                _ => {}
            }
            if let Some(t) = replace {
                self.tokens[i].1 = t;
            }
        }
    }
}

fn starts_statement(t: &Tok) -> bool {
    matches!(
        t,
        Tok::Kw(
            Kw::Fixum
                | Kw::Varia
                | Kw::Sit
                | Kw::Si
                | Kw::Sin
                | Kw::Secus
                | Kw::Dum
                | Kw::Itera
                | Kw::Elige
                | Kw::Casu
                | Kw::Fac
                | Kw::Redde
                | Kw::Iace
                | Kw::Mori
                | Kw::Adfirma
                | Kw::Nota
                | Kw::Scribe
                | Kw::Vide
                | Kw::Mone
                | Kw::Functio
                | Kw::Genus
                | Kw::Incipit
        )
    )
}

/// A token that nests an expression one level deeper (an operator or an opening bracket); runs of them count against `MAX_OPERATOR_RUN` (LEX013).
fn is_operator(t: &Tok) -> bool {
    let range = matches!(t, Tok::RangeExcl | Tok::RangeIncl);
    (t.is_binary_operator() && !range)
        || matches!(
            t,
            Tok::Kw(Kw::Non)
                | Tok::BitNot
                | Tok::MapsTo
                | Tok::Ascribe
                | Tok::Period
                | Tok::LParen
                | Tok::LBracket
        )
}
