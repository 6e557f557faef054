//! The layout pass: re-emits a file's token stream with canonical indentation and
//! spacing, keeping the author's line breaks and comment lines.
//!
//! - Indentation: one level (four spaces) per open bracket that ends its line; a line
//!   that starts with closers is dedented by the ones it closes. A line continuing an
//!   expression (the line before ends with an operator, `←`, `=`, `→`, `∴`, …, or
//!   with `,` outside brackets, or it lies inside a bracket opened mid-line on an
//!   earlier line) gets one more level.
//! - Spacing between tokens on one line: [`super::spacing`].
//! - Comment lines are kept, re-indented to the level of the code around them and with
//!   trailing whitespace removed; runs of blank lines become one; leading and trailing
//!   blank lines go; the file ends with one newline.
//! - Token text is copied from the source (numbers, texts, block texts, glyphs and
//!   annotations byte for byte), except where the translation pass replaces it.

use std::collections::BTreeMap;

use super::spacing::{ends_operand, space_between, Role};
use crate::syntax::lexer::Spanned;
use crate::syntax::token::Tok;

const INDENT: &str = "    ";

/// Source replacements: start offset → (end offset, new text). They never overlap and
/// each lies inside one token.
pub(super) type Replacements = BTreeMap<usize, (usize, String)>;

/// Lays out the code of `text` that starts at `body_start`, after `prefix` (the
/// byte-order mark and frontmatter, already in their final form). `tokens` are the
/// lexer's, without zero-width ones.
pub(super) fn layout(
    text: &str,
    body_start: usize,
    prefix: &str,
    tokens: &[Spanned],
    repl: &Replacements,
) -> String {
    let roles = roles(tokens);
    let mut w = Writer {
        out: String::from(prefix),
        line_open: false,
        wrote_line: !prefix.is_empty(),
        pending_blank: false,
    };
    // Open brackets: whether each ends its line (and so indents what follows).
    let mut stack: Vec<bool> = Vec::new();
    // For each open bracket: whether it is a `{` that holds statements or items.
    let mut blocks: Vec<bool> = Vec::new();
    let mut first_of_line = 0usize;
    let mut first_of_prev_line = 0usize;
    let mut prev_end = body_start;
    let mut last_of_prev_line: Option<usize> = None;
    for (i, (lo, tok, hi)) in tokens.iter().enumerate() {
        let gap = &text[prev_end..*lo];
        let starts_line = i == 0 || gap.contains('\n');
        if starts_line {
            w.gap_lines(gap, i == 0, hanging(&stack));
            let closers = leading_closers(text, tokens, i);
            let kept = stack.len().saturating_sub(closers);
            let mut level = hanging(&stack[..kept]);
            let inside_open = kept > 0 && !stack[kept - 1];
            // A `,` ending a line that starts with a keyword continues that statement
            // (`adfirma c,` then its message; `nota a,` then more values), where a `,`
            // after an item of a list, record or map does not.
            let in_block = kept == 0 || blocks[kept - 1];
            let continues = last_of_prev_line.is_some_and(|p| {
                continues(&tokens[p].1, roles[p])
                    || (matches!(tokens[p].1, Tok::Comma)
                        && in_block
                        && matches!(tokens[first_of_prev_line].1, Tok::Kw(_)))
            });
            first_of_line = i;
            if continues || (inside_open && closers == 0) {
                level += 1;
            }
            w.start_line(level);
        } else if space_between(&tokens[i - 1].1, roles[i - 1], tok, roles[i]) {
            w.out.push(' ');
        }
        w.out.push_str(&token_text(text, *lo, *hi, repl));
        match tok {
            Tok::LParen | Tok::LParenFn | Tok::LBracket | Tok::LBrace | Tok::LBraceRec => {
                let ends_line = tokens
                    .get(i + 1)
                    .is_none_or(|n| text[*hi..n.0].contains('\n'));
                stack.push(ends_line);
                blocks.push(matches!(tok, Tok::LBrace));
            }
            Tok::RParen | Tok::RBracket | Tok::RBrace => {
                stack.pop();
                blocks.pop();
            }
            _ => {}
        }
        let line_ends = tokens
            .get(i + 1)
            .is_none_or(|n| text[*hi..n.0].contains('\n'));
        if line_ends {
            last_of_prev_line = Some(i);
            first_of_prev_line = first_of_line;
        }
        prev_end = *hi;
    }
    let tail = &text[prev_end.min(text.len())..];
    w.gap_lines(&format!("{tail}\n"), tokens.is_empty(), 0);
    if w.line_open {
        w.out.push('\n');
    }
    w.out
}

struct Writer {
    out: String,
    /// A code line has been started and not yet ended.
    line_open: bool,
    /// Some line (code, comment or frontmatter) has been written.
    wrote_line: bool,
    /// A blank line is owed before the next line.
    pending_blank: bool,
}

impl Writer {
    fn end_line(&mut self) {
        if self.line_open {
            self.out.push('\n');
            self.line_open = false;
        }
    }

    fn begin(&mut self, level: usize) {
        self.end_line();
        if self.pending_blank && self.wrote_line {
            self.out.push('\n');
        }
        self.pending_blank = false;
        self.wrote_line = true;
        for _ in 0..level {
            self.out.push_str(INDENT);
        }
    }

    fn start_line(&mut self, level: usize) {
        self.begin(level);
        self.line_open = true;
    }

    /// The whole lines inside a gap between two tokens (or before the first / after
    /// the last): blank lines and comment lines. `at_start`: the gap starts at the
    /// beginning of a line, so its first piece is a whole line too.
    fn gap_lines(&mut self, gap: &str, at_start: bool, level: usize) {
        let pieces: Vec<&str> = gap.split('\n').collect();
        if pieces.len() < 2 {
            return;
        }
        let first = if at_start { 0 } else { 1 };
        for piece in &pieces[first..pieces.len() - 1] {
            let line = piece.trim();
            if line.is_empty() {
                self.end_line();
                self.pending_blank = true;
            } else {
                self.begin(level);
                self.out.push_str(line);
                self.out.push('\n');
            }
        }
    }
}

/// The number of brackets the line starting at token `i` closes before anything
/// else on it.
fn leading_closers(text: &str, tokens: &[Spanned], i: usize) -> usize {
    let mut n = 0;
    let mut j = i;
    while let Some((lo, t, _)) = tokens.get(j) {
        if j > i && text[tokens[j - 1].2..*lo].contains('\n') {
            break;
        }
        if !matches!(t, Tok::RParen | Tok::RBracket | Tok::RBrace) {
            break;
        }
        n += 1;
        j += 1;
    }
    n
}

fn hanging(stack: &[bool]) -> usize {
    stack.iter().filter(|h| **h).count()
}

/// A token after which a line break continues the expression or declaration.
fn continues(t: &Tok, role: Role) -> bool {
    if role == Role::CloseArgs {
        return false;
    }
    t.is_binary_operator()
        || matches!(
            t,
            Tok::Bind
                | Tok::Assign
                | Tok::Arrow
                | Tok::Therefore
                | Tok::Throws
                | Tok::MapsTo
                | Tok::Ascribe
                | Tok::Union
                | Tok::Colon
        )
}

/// Each token's [`Role`]: `>` closing type arguments (the lexer's own pairing: every
/// `>` closes the innermost open `<` of type arguments), unary `-` and `¬`.
fn roles(tokens: &[Spanned]) -> Vec<Role> {
    let mut roles = vec![Role::Plain; tokens.len()];
    let mut open = 0usize;
    for (i, (_, t, _)) in tokens.iter().enumerate() {
        match t {
            Tok::LtArgs => open += 1,
            Tok::Gt if open > 0 => {
                open -= 1;
                roles[i] = Role::CloseArgs;
            }
            Tok::BitNot => roles[i] = Role::Unary,
            Tok::Text(_) | Tok::Ascii(_)
                if i > 0 && matches!(tokens[i - 1].1, Tok::Kw(crate::syntax::token::Kw::Ad)) =>
            {
                roles[i] = Role::Route;
            }
            Tok::Minus => {
                let binary = i > 0 && ends_operand(&tokens[i - 1].1, roles[i - 1]);
                if !binary {
                    roles[i] = Role::Unary;
                }
            }
            _ => {}
        }
    }
    roles
}

/// A token's source text with the replacements that lie inside it applied.
fn token_text(text: &str, lo: usize, hi: usize, repl: &Replacements) -> String {
    let mut out = String::new();
    let mut at = lo;
    for (&start, (end, new)) in repl.range(lo..hi) {
        if start < at || *end > hi {
            continue;
        }
        out.push_str(&text[at..start]);
        out.push_str(new);
        at = *end;
    }
    out.push_str(&text[at..hi]);
    out
}
