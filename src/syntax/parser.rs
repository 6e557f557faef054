//! The parser façade: lex, run the generated LR(1) parser with error recovery, and
//! turn every problem into a [`Diagnostic`]. Nothing else in the crate names lalrpop.

use lalrpop_util::{ErrorRecovery, ParseError};

use super::ast::Module;
use super::grammar::ModuleParser;
use super::hints;
use super::lexer::{lex_in, Spanned};
use super::token::Kw;
use super::token::Tok;
use super::vocab::{vocabulary, Locale, Section};
use crate::diag::{codes, suggest, Diagnostic};
use crate::source::{FileId, SourceMap, Span};

/// Parses one file of the source map into its AST, or returns every diagnostic
/// found (lexing and parsing, in source order). The file is Latin unless its
/// frontmatter names another reader locale.
pub fn parse(sources: &SourceMap, file: FileId) -> Result<Module, Vec<Diagnostic>> {
    parse_in(sources, file, Locale::LA)
}

/// [`parse`] with `default` as the reader locale of a file whose frontmatter names
/// none (the package's `[reader] locale`). A file named `NAME.CODE.fab` is read in
/// locale CODE unless its frontmatter says otherwise ([`Locale::from_file_name`]).
pub fn parse_in(
    sources: &SourceMap,
    file: FileId,
    default: Locale,
) -> Result<Module, Vec<Diagnostic>> {
    let default = match Locale::from_file_name(sources.name(file)) {
        // A package's reader pack stays for a file named in its own locale.
        Some(l) if l != default.base() => l,
        _ => default,
    };
    let text = sources.text(file);
    let lexed = lex_in(file, text, default);
    let mut diags = lexed.diagnostics;
    let tokens = lexed.tokens;
    let mut recovered = Vec::new();
    let result = ModuleParser::new().parse(
        file,
        &mut recovered,
        tokens.iter().cloned().map(Ok::<Spanned, Diagnostic>),
    );
    let mut parse_errors: Vec<ParseError<usize, Tok, Diagnostic>> = recovered
        .into_iter()
        .map(|e: ErrorRecovery<_, _, _>| e.error)
        .collect();
    let items = match result {
        Ok(items) => Some(items),
        Err(e) => {
            parse_errors.push(e);
            None
        }
    };
    let mut last_line = None;
    let mut seen_error = !diags.is_empty();
    for e in parse_errors {
        // After a first error, "expected a declaration" at top level is nearly always
        // a cascade: recovery closed a block early and the rest of it reads as items.
        if seen_error && expects_items(&e) {
            continue;
        }
        seen_error = true;
        if let Some(d) = convert(sources, file, &tokens, e, lexed.locale) {
            // One parse error per line: later ones on the same line are usually
            // consequences of the first.
            let line = sources.line_col(d.span).0;
            if last_line == Some(line) {
                continue;
            }
            last_line = Some(line);
            diags.push(d);
        }
    }
    diags.sort_by_key(|d| (d.span.lo, d.span.hi));
    diags.dedup_by(|a, b| a.span == b.span && a.code == b.code);
    match items {
        Some(items) if diags.is_empty() => Ok(Module {
            file,
            frontmatter: lexed.frontmatter,
            locale: lexed.locale,
            items,
        }),
        _ => Err(diags),
    }
}

fn expects_items(e: &ParseError<usize, Tok, Diagnostic>) -> bool {
    match e {
        ParseError::UnrecognizedToken { expected, .. }
        | ParseError::UnrecognizedEof { expected, .. } => {
            expected.iter().any(|x| x == "\"functio\"")
                && expected.iter().any(|x| x == "\"incipit\"")
        }
        _ => false,
    }
}

/// The last `{` left open at the end of the token stream, if any.
fn unclosed_brace(tokens: &[Spanned]) -> Option<(usize, usize)> {
    let mut stack = Vec::new();
    for (l, t, r) in tokens {
        match t {
            Tok::LBrace | Tok::LBraceRec => stack.push((*l, *r)),
            Tok::RBrace => {
                stack.pop();
            }
            _ => {}
        }
    }
    stack.pop()
}

fn convert(
    sources: &SourceMap,
    file: FileId,
    tokens: &[Spanned],
    e: ParseError<usize, Tok, Diagnostic>,
    locale: Locale,
) -> Option<Diagnostic> {
    let span = |l: usize, r: usize| Span::new(file, l, r);
    match e {
        ParseError::User { error } => Some(error),
        ParseError::InvalidToken { location } => Some(Diagnostic::error(
            codes::PARSE_UNEXPECTED,
            "invalid token",
            span(location, location),
        )),
        ParseError::ExtraToken { token: (l, t, r) } => Some(Diagnostic::error(
            codes::PARSE_EXTRA_TOKEN,
            format!(
                "unexpected {} after the end of the file's items",
                describe(&t, locale)
            ),
            span(l, r),
        )),
        ParseError::UnrecognizedEof { expected, .. } => {
            let location = sources.text(file).len();
            let mut d = Diagnostic::error(
                codes::PARSE_UNEXPECTED_EOF,
                format!(
                    "the file ends early: expected {}",
                    expected_list(&expected, locale)
                ),
                span(location, location),
            );
            if expected.iter().any(|x| x == "\"}\"") {
                d = d.with_hint("a `}` is missing");
                if let Some((l, r)) = unclosed_brace(tokens) {
                    d = d.with_label(span(l, r), "this `{` is never closed");
                }
            }
            Some(d)
        }
        ParseError::UnrecognizedToken {
            token: (l, t, r),
            expected,
        } => {
            // An invalid token was already reported by the lexer.
            if t == Tok::Error {
                return None;
            }
            Some(unexpected(
                sources,
                file,
                tokens,
                (l, t, r),
                &expected,
                locale,
            ))
        }
    }
}

fn unexpected(
    sources: &SourceMap,
    file: FileId,
    tokens: &[Spanned],
    (l, t, r): Spanned,
    expected: &[String],
    locale: Locale,
) -> Diagnostic {
    let span = Span::new(file, l, r);
    let text = sources.text(file);
    let statement_position =
        expected.iter().any(|x| x == "\"nota\"") && expected.iter().any(|x| x == "\"fixum\"");
    let pos = tokens.iter().position(|(tl, _, _)| *tl == l);
    let at = pos.map(|pos| hints::At { text, tokens, pos });
    if let Tok::Ident(name) = &t {
        if let Some(canonical) = vocabulary().out_of_subset(locale, name) {
            let also = if canonical == name {
                String::new()
            } else {
                format!(" (canonical `{canonical}`)")
            };
            return Diagnostic::error(
                codes::PARSE_UNSUPPORTED,
                format!("`{name}`{also} is outside the subset faber supports"),
                span,
            )
            .with_hint("docs/language.md § 10 lists what is not supported");
        }
        if name == "aliter" && locale == Locale::LA {
            return Diagnostic::error(
                codes::PARSE_RETIRED_KEYWORD,
                "`aliter` is a retired spelling",
                span,
            )
            .with_hint("write `secus`");
        }
    }
    if statement_position {
        let starts_expr = matches!(
            t,
            Tok::LParen
                | Tok::LParenFn
                | Tok::LBracket
                | Tok::Minus
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Text(_)
                | Tok::Ascii(_)
                | Tok::Bytes(_)
                | Tok::Kw(super::token::Kw::Non)
        );
        if starts_expr {
            let hint = at
                .as_ref()
                .filter(|_| !matches!(t, Tok::Kw(super::token::Kw::Non)))
                .and_then(|at| hints::expression_statement_hint(at, true))
                .unwrap_or_else(|| "an expression statement starts with a name or `ego`; to evaluate an expression, bind it: `fixum _ _ ← …`".to_string());
            return Diagnostic::error(
                codes::PARSE_BAD_STATEMENT_START,
                format!("a statement cannot start with {}", describe(&t, locale)),
                span,
            )
            .with_hint(hint);
        }
    }
    let mut d = Diagnostic::error(
        codes::PARSE_UNEXPECTED,
        format!(
            "unexpected {}, expected {}",
            describe(&t, locale),
            expected_list(expected, locale)
        ),
        span,
    );
    // Slips recognised by the shape of the tokens around the error (src/syntax/hints.rs).
    let shape_hint = at.as_ref().and_then(|at| {
        hints::compound_assign_hint(at)
            .or_else(|| hints::construct_hint(at))
            .or_else(|| hints::untyped_parameter(at).filter(|_| wants_only_ident(expected)))
            .or_else(|| {
                (t == Tok::Bind)
                    .then(|| hints::binding_without_type(at))
                    .flatten()
            })
    });
    if t == Tok::Bind && expected.iter().any(|x| x == "\"=\"") {
        d = d.with_hint("fields are initialised with `=`: `Name { field = value }`");
    } else if let Some(h) = shape_hint {
        d = d.with_hint(h);
    } else if t == Tok::Slash && (text[r..].starts_with('/') || text[..l].ends_with('/')) {
        d = d.with_hint("comments start with `#`, on a line of their own");
    } else if t == Tok::Lt && text[r..].starts_with('-') {
        // `a <- b` lexes as `a < - b`; suggest the arrow.
        d = d.with_hint("assignment is written `←`");
    } else if t == Tok::LtArgs {
        d = d.with_hint(
            "a `<` touching a name opens type arguments; put spaces around a comparison: `a < b`",
        );
    } else if t == Tok::Assign {
        if let Some(at) = &at {
            d = d.with_hint(hints::assign_hint(at, expected));
        }
    } else if let Some(hint) = keyword_hint(&t, expected, at.as_ref(), locale) {
        d = d.with_hint(hint);
    } else if let Some(hint) = at
        .as_ref()
        .filter(|_| statement_position)
        .and_then(|at| hints::expression_statement_hint(at, false))
    {
        d = d.with_hint(hint);
    } else if let Some(pos) = pos {
        // An identifier right after a complete expression: usually a missing operator or `(`.
        if pos > 0 && matches!(t, Tok::Ident(_)) && expected.iter().any(|x| x == "\"(\"") {
            d = d.with_hint("two expressions in a row: is an operator or a comma missing?");
        }
    }
    d
}

/// True when the grammar wanted only a name here (a parameter's name).
fn wants_only_ident(expected: &[String]) -> bool {
    expected.iter().all(|x| x.trim_matches('"') == "identifier")
}

/// A misspelled keyword: the rejected word itself where the grammar wanted a
/// keyword (`functoi` at top level), or the word heading the statement
/// (`reddde x`).
fn keyword_hint(
    t: &Tok,
    expected: &[String],
    at: Option<&hints::At>,
    locale: Locale,
) -> Option<String> {
    if locale != Locale::LA {
        return localized_keyword_hint(t, expected, at, locale);
    }
    if let Tok::Ident(name) = t {
        if let Some(h) = hints::misspelled_expected_keyword(name, expected) {
            return Some(h);
        }
    }
    hints::misspelled_head_keyword(at?)
}

/// [`keyword_hint`] in a file of another reader locale: a Latin keyword gets its
/// spelling in the locale, a misspelling is compared with the locale's keywords.
fn localized_keyword_hint(
    t: &Tok,
    expected: &[String],
    at: Option<&hints::At>,
    locale: Locale,
) -> Option<String> {
    let v = vocabulary();
    let word = match t {
        Tok::Ident(name) => Some(name.as_str()),
        _ => None,
    };
    let head = at.and_then(hints::head_word);
    for w in word.iter().chain(head.iter()) {
        if v.keyword(Locale::LA, w).is_some() {
            if let Some(s) = v.spell(Section::Keyword, locale, w) {
                return Some(format!(
                    "`{w}` is a Latin keyword; this file reads locale `{}`, where it is `{s}`",
                    locale.code()
                ));
            }
        }
    }
    let spelled = |latin: &[&str]| -> Vec<&'static str> {
        latin
            .iter()
            .filter_map(|k| v.spell(Section::Keyword, locale, k))
            .collect()
    };
    if let Some(w) = word {
        let latin: Vec<&str> = expected
            .iter()
            .map(|x| x.trim_matches('"'))
            .filter(|x| Kw::from_word(x).is_some())
            .collect();
        if let Some(h) = suggest::hint(w, spelled(&latin)) {
            return Some(h);
        }
    }
    suggest::hint(head?, spelled(hints::HEAD_KEYWORDS))
}

/// How a token is shown, with keywords in the file's reader locale.
fn describe(t: &Tok, locale: Locale) -> String {
    match t {
        Tok::Kw(_) | Tok::ReddeBare if locale != Locale::LA => localize(&t.describe(), locale),
        _ => t.describe(),
    }
}

/// Rewrites every backticked Latin keyword of a message made from grammar terminals
/// (never from user text) into its spelling in `locale`.
fn localize(message: &str, locale: Locale) -> String {
    if locale == Locale::LA {
        return message.to_string();
    }
    let v = vocabulary();
    let mut out = String::with_capacity(message.len());
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        let spelled = (i % 2 == 1 && Kw::from_word(part).is_some())
            .then(|| v.spell(Section::Keyword, locale, part))
            .flatten();
        out.push_str(spelled.unwrap_or(part));
    }
    out
}

/// Formats lalrpop's expected-terminal list for humans, keywords in `locale`.
fn expected_list(expected: &[String], locale: Locale) -> String {
    localize(&expected_list_latin(expected), locale)
}

fn expected_list_latin(expected: &[String]) -> String {
    let mut names: Vec<String> = expected
        .iter()
        .map(|x| {
            let raw = x.trim_matches('"');
            match raw {
                "identifier" | "integer" | "float" | "text" | "ascii" | "bytes" | "annotation" => {
                    raw.to_string()
                }
                "<args" => "`<`".to_string(),
                "(fn" => "`(`".to_string(),
                "{rec" => String::new(),
                "redde_bare" => "`redde`".to_string(),
                "dum_post" => "`dum`".to_string(),
                // Non-null access and the bare-closure marker are never worth listing.
                "!" | "bare_fn" => String::new(),
                "invalid token" => String::new(),
                other => format!("`{other}`"),
            }
        })
        .filter(|s| !s.is_empty())
        .collect();
    names.dedup();
    if names.iter().filter(|n| is_operator(n)).count() >= 5 {
        names.retain(|n| !is_operator(n));
        names.push("an operator".to_string());
    }
    let has = |n: &str| names.iter().any(|x| x == n);
    if names.len() > 8 {
        if has("`fixum`") && has("`nota`") {
            return "a statement or `}`".to_string();
        }
        if has("integer") && has("identifier") {
            return "an expression".to_string();
        }
        if has("`functio`") {
            return "a declaration (`functio`, `genus`, `importa`, `incipit`, …)".to_string();
        }
        names.truncate(8);
        names.push("…".to_string());
    }
    match names.len() {
        0 => "nothing more".to_string(),
        1 => names.remove(0),
        _ => format!("one of {}", names.join(", ")),
    }
}

/// The operators that `expected_list` folds into "an operator". A `match` rather than
/// a table search: each arm compares against a short constant, which the compiler does
/// inline, where `<[&str]>::contains` calls `bcmp` once per entry of equal length. Under
/// the fuzzer every such call goes through libFuzzer's `memcmp` hook, and the search ran
/// for every name of every "expected …" list: 5 % of the `parser` fuzz target's
/// instructions, of which the `match` saves about half (docs/robustness.md § Throughput,
/// round 4).
fn is_operator(name: &str) -> bool {
    matches!(
        name,
        "`+`"
            | "`-`"
            | "`*`"
            | "`/`"
            | "`%`"
            | "`·`"
            | "`⊙`"
            | "`≡`"
            | "`≠`"
            | "`≈`"
            | "`≉`"
            | "`<`"
            | "`>`"
            | "`≤`"
            | "`≥`"
            | "`∧`"
            | "`∨`"
            | "`⊻`"
            | "`⇐`"
            | "`⇒`"
            | "`‥`"
            | "`…`"
            | "`ante`"
            | "`usque`"
            | "`per`"
            | "`et`"
            | "`aut`"
            | "`non`"
            | "`est`"
            | "`vel`"
            | "`sic`"
            | "`↦`"
            | "`∷`"
            | "`.`"
            | "`[`"
            | "`(`"
    )
}
