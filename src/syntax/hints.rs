//! Hints for parse errors that come from common slips: a misspelled keyword, `=`
//! where `←` is meant, an expression left where `redde` was meant. The parser façade
//! (`parser.rs`) asks these after the grammar rejected a token; each looks only at
//! the token stream around the error, never at the grammar's internals.

use super::lexer::Spanned;
use super::token::{Kw, Tok};
use crate::diag::{foreign, suggest};

/// Keywords that can start a statement or a declaration: the candidates for a
/// misspelled word at the head of a statement.
pub const HEAD_KEYWORDS: &[&str] = &[
    "fixum",
    "varia",
    "si",
    "sit",
    "dum",
    "itera",
    "elige",
    "fac",
    "adfirma",
    "redde",
    "tacet",
    "rumpe",
    "perge",
    "iace",
    "mori",
    "nota",
    "scribe",
    "vide",
    "mone",
    "functio",
    "genus",
    "typus",
    "importa",
    "incipit",
    "probandum",
    "proba",
];

/// The built-in type names (besides the width sugar `f32`, `tf32`, `lf32`, …); the
/// lowering resolves them in `ir/lower/types.rs`.
pub const BUILTIN_TYPES: &[&str] = &[
    "numerus", "fractus", "bivalens", "textus", "ascii", "octeti", "vacuum", "lista", "tabula",
    "tensor", "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "tf16",
    "tf32", "tf64", "lf32", "lf64", "li64",
];

/// The keywords among lalrpop's expected terminals (`"functio"` → `functio`).
fn expected_keywords(expected: &[String]) -> Vec<&str> {
    expected
        .iter()
        .map(|x| x.trim_matches('"'))
        .filter(|w| Kw::from_word(w).is_some())
        .collect()
}

/// The token view a hint works on: the source text, every token, and the index of
/// the token the parser rejected.
pub struct At<'a> {
    pub text: &'a str,
    pub tokens: &'a [Spanned],
    pub pos: usize,
}

impl At<'_> {
    fn tok(&self, i: usize) -> Option<&Tok> {
        self.tokens.get(i).map(|t| &t.1)
    }

    /// True when token `i` begins a statement: the first token, or the first after
    /// a `{`, `}`, `;`, `ergo` or `secus`, or the first on its line.
    fn starts_statement(&self, i: usize) -> bool {
        if i == 0 {
            return true;
        }
        let (_, prev, prev_hi) = &self.tokens[i - 1];
        let lo = self.tokens[i].0;
        matches!(
            prev,
            Tok::LBrace | Tok::RBrace | Tok::Semi | Tok::Kw(Kw::Ergo) | Tok::Kw(Kw::Secus)
        ) || self.text[*prev_hi..lo].contains('\n')
    }

    /// The index of the first token of the line's statement holding token `i`: the
    /// nearest token at or before `i` that [`At::starts_statement`].
    fn statement_start(&self, i: usize) -> usize {
        let mut j = i;
        while j > 0 && !self.starts_statement(j) {
            j -= 1;
        }
        j
    }

    /// The byte offset where the statement holding token `i` ends: before a `}` or
    /// `;` at its own nesting depth, or at the end of its last line.
    fn statement_end(&self, i: usize) -> usize {
        let mut depth = 0i32;
        let mut end = self.tokens[i].2;
        for (k, (lo, t, hi)) in self.tokens.iter().enumerate().skip(i) {
            if k > i && depth == 0 && self.text[end..*lo].contains('\n') {
                break;
            }
            match t {
                Tok::LParen | Tok::LParenFn | Tok::LBracket | Tok::LBrace | Tok::LBraceRec => {
                    depth += 1
                }
                Tok::RParen | Tok::RBracket | Tok::RBrace if depth == 0 => break,
                Tok::RParen | Tok::RBracket | Tok::RBrace => depth -= 1,
                Tok::Semi if depth == 0 => break,
                _ => {}
            }
            end = *hi;
        }
        end
    }

    /// The index of the first token of the name chain (`a.b(c)[i]`) that ends at
    /// token `i`, as the grammar reads an expression statement.
    fn chain_start(&self, i: usize) -> usize {
        let mut j = i;
        loop {
            // Skip a bracketed group back to its opener, then the name before it.
            if matches!(self.tok(j), Some(Tok::RParen | Tok::RBracket)) {
                let mut depth = 0i32;
                loop {
                    match self.tok(j) {
                        Some(Tok::RParen | Tok::RBracket) => depth += 1,
                        Some(Tok::LParen | Tok::LParenFn | Tok::LBracket) => depth -= 1,
                        _ => {}
                    }
                    if depth == 0 || j == 0 {
                        break;
                    }
                    j -= 1;
                }
                if j == 0 {
                    return 0;
                }
                j -= 1;
                continue;
            }
            // A name after `.`: the chain goes on to the left.
            if j >= 2 && matches!(self.tok(j - 1), Some(Tok::Period)) {
                j -= 2;
                continue;
            }
            return j;
        }
    }

    /// The source text of the expression the rejected token continues (or starts),
    /// up to the end of its statement.
    fn statement_text(&self, starts_statement: bool) -> &str {
        let first = if starts_statement {
            self.pos
        } else {
            self.chain_start(self.pos - 1)
        };
        let start = self.tokens[first].0;
        self.text[start..self.statement_end(self.pos)].trim()
    }

    /// Whether the innermost function around the rejected token declares a result
    /// type other than `vacuum`. Blocks of `si`, `dum`, … are looked through.
    fn in_typed_function(&self) -> bool {
        let mut depth = 0i32;
        let mut i = self.pos;
        while i > 0 {
            i -= 1;
            match &self.tokens[i].1 {
                Tok::RBrace => depth += 1,
                Tok::LBrace | Tok::LBraceRec if depth > 0 => depth -= 1,
                Tok::LBrace => {
                    if let Some(typed) = self.signature_before(i) {
                        return typed;
                    }
                }
                _ => {}
            }
        }
        false
    }

    /// For the `{` at `brace`: `Some(true)` when it opens the body of a function with
    /// a non-`vacuum` result type, `Some(false)` for a function without one or for
    /// `incipit`, `None` for any other block.
    fn signature_before(&self, brace: usize) -> Option<bool> {
        let mut arrow = None;
        let mut i = brace;
        while i > 0 {
            i -= 1;
            match &self.tokens[i].1 {
                Tok::Arrow => arrow = Some(i),
                Tok::Kw(Kw::Functio) => {
                    let Some(a) = arrow else {
                        return Some(false);
                    };
                    let ret = self.tokens[a + 1..brace]
                        .iter()
                        .take_while(|t| t.1 != Tok::Throws)
                        .map(|t| t.1.clone())
                        .collect::<Vec<_>>();
                    let vacuum = matches!(ret.as_slice(), [Tok::Ident(v)] if v == "vacuum");
                    return Some(!vacuum);
                }
                Tok::Kw(Kw::Incipit) => return Some(false),
                Tok::LBrace | Tok::LBraceRec | Tok::RBrace | Tok::Semi => return None,
                _ => {}
            }
        }
        None
    }
}

/// A keyword the rejected identifier is probably a misspelling of, among the
/// keywords the grammar expected here (`functoi` where a declaration must start).
pub fn misspelled_expected_keyword(name: &str, expected: &[String]) -> Option<String> {
    let keywords = expected_keywords(expected);
    if let Some(k) = foreign::keyword(name).filter(|k| keywords.contains(k)) {
        return Some(format!("Faber writes `{k}` for `{name}`"));
    }
    suggest::hint(name, keywords)
}

/// `reddde x * 2`, `sii x > 0 { … }`, `nta x`: the line's statement starts with two
/// words, the first near a keyword. The grammar reads the first word as an expression
/// statement of its own and rejects a token further on.
pub fn misspelled_head_keyword(at: &At) -> Option<String> {
    let head = at.statement_start(at.pos);
    if head >= at.pos {
        return None;
    }
    let (Some(Tok::Ident(word)), Some(Tok::Ident(_))) = (at.tok(head), at.tok(head + 1)) else {
        return None;
    };
    foreign::keyword_hint(word).or_else(|| suggest::hint(word, HEAD_KEYWORDS.iter().copied()))
}

/// The first word of a statement that starts with two words (where
/// [`misspelled_head_keyword`] looks for a keyword), for the locale-aware hints.
pub fn head_word<'a>(at: &'a At) -> Option<&'a str> {
    let head = at.statement_start(at.pos);
    if head >= at.pos {
        return None;
    }
    match (at.tok(head), at.tok(head + 1)) {
        (Some(Tok::Ident(word)), Some(Tok::Ident(_))) => Some(word),
        _ => None,
    }
}

/// `varia x = 3`, `fixum x ← 3`: the binding lacks its type, so the grammar read
/// `x` as the type and rejects the `=` or `←` where it wants the name.
pub fn binding_without_type(at: &At) -> Option<String> {
    if at.pos < 2 {
        return None;
    }
    let (Some(Tok::Kw(k @ (Kw::Fixum | Kw::Varia))), Some(Tok::Ident(name))) =
        (at.tok(at.pos - 2), at.tok(at.pos - 1))
    else {
        return None;
    };
    let kw = format!("{k:?}").to_lowercase();
    let is_type = BUILTIN_TYPES.contains(&name.as_str())
        || name.chars().next().is_some_and(char::is_uppercase);
    if is_type {
        return Some(format!(
            "the binding has a type but no name: `{kw} {name} x ← …`"
        ));
    }
    let init = if at.tok(at.pos) == Some(&Tok::Assign) {
        "is initialised with `←` and "
    } else {
        ""
    };
    Some(format!(
        "a binding {init}names its type before the name: `{kw} numerus {name} ← …` (or `{kw} _ {name} ← …` to infer it)"
    ))
}

/// `x += 1`: an operator directly followed by `=`. Faber has no compound assignment.
pub fn compound_assign_hint(at: &At) -> Option<String> {
    let (_, t, hi) = at.tokens.get(at.pos)?;
    let (next_lo, next, _) = at.tokens.get(at.pos + 1)?;
    if *next != Tok::Assign || next_lo != hi || !t.is_binary_operator() || at.pos == 0 {
        return None;
    }
    let op = t.spelling();
    let target_lo = at.tokens[at.chain_start(at.pos - 1)].0;
    let target = at.text[target_lo..at.tokens[at.pos].0].trim();
    let value_lo = at.tokens.get(at.pos + 2)?.0;
    let value = at.text[value_lo..at.statement_end(at.pos + 2).max(value_lo)].trim();
    Some(format!(
        "Faber has no `{op}=`: write `{target} ← {target} {op} {value}`"
    ))
}

/// `functio f(x)`: a parameter without its type; the grammar read `x` as the type.
pub fn untyped_parameter(at: &At) -> Option<String> {
    if at.pos < 2 || !matches!(at.tok(at.pos), Some(Tok::RParen | Tok::Comma)) {
        return None;
    }
    let Some(Tok::Ident(name)) = at.tok(at.pos - 1) else {
        return None;
    };
    matches!(
        at.tok(at.pos - 2),
        Some(Tok::LParen | Tok::LParenFn | Tok::Comma)
    )
    .then(|| format!("a parameter is written type, then name: `numerus {name}`"))
}

/// A construct whose keyword is followed by the wrong word: `importa "x"` (no `ex`),
/// `itera xs …` (no `ex`, `de` or `ab`), `secus si` (for `sin`).
pub fn construct_hint(at: &At) -> Option<String> {
    let prev = at.tok(at.pos.checked_sub(1)?)?;
    let t = at.tok(at.pos)?;
    match (prev, t) {
        (Tok::Kw(Kw::Importa), Tok::Text(_)) => Some(
            "an import is written `importa ex \"gradus:nn\" privata nn`".to_string(),
        ),
        (Tok::Kw(Kw::Itera), _) => Some(
            "a loop says how it walks: `itera ex xs fixum x { … }` (elements), `itera de xs fixum i { … }` (indices or keys), `itera ab 0‥n fixum i { … }` (a range)"
                .to_string(),
        ),
        (Tok::Kw(Kw::Secus), Tok::Kw(Kw::Si)) => {
            Some("`secus si` is written `sin`: `sin x < 0 { … }`".to_string())
        }
        _ => None,
    }
}

/// A lone `=` the grammar does not allow here (it is only for genus field defaults,
/// `typus` aliases and record-literal fields).
pub fn assign_hint(at: &At, expected: &[String]) -> String {
    let wants_bind = expected.iter().any(|x| x == "\"←\"");
    if let Some(h) = binding_without_type(at) {
        return h;
    }
    // `numerus x = 3`: a binding without `fixum` or `varia`.
    let head = at.statement_start(at.pos);
    if head + 2 == at.pos {
        if let (Some(Tok::Ident(ty)), Some(Tok::Ident(name))) = (at.tok(head), at.tok(head + 1)) {
            return format!(
                "a binding starts with `fixum` or `varia` and is initialised with `←`: `fixum {ty} {name} ← …`"
            );
        }
    }
    if wants_bind {
        "assignment and initialisation are written `←`, not `=`".to_string()
    } else {
        "`=` is not an operator here: compare with `≡`, assign with `←`".to_string()
    }
}

/// An expression where a statement must be: `{ x * 2 }` (the parser took `x` as an
/// expression statement and rejects `*`) or `{ 2 * x }` (a statement cannot start
/// with a number). In a function with a result type the user almost always meant
/// `redde`; elsewhere, `nota` or a binding.
pub fn expression_statement_hint(at: &At, starts_statement: bool) -> Option<String> {
    let t = at.tok(at.pos)?;
    if !starts_statement && !t.is_binary_operator() {
        return None;
    }
    // The operator must continue the statement, not start a new line of its own.
    if !starts_statement && at.statement_start(at.pos) == at.pos {
        return None;
    }
    // `(x) ← 3`, `7 ← y`: an assignment to something that is not a place, not a
    // value left alone.
    let end = at.statement_end(at.pos);
    let assigns = at.tokens[at.pos..]
        .iter()
        .take_while(|t| t.2 <= end)
        .any(|t| t.1 == Tok::Bind);
    if assigns {
        return None;
    }
    let stmt = at.statement_text(starts_statement);
    if at.in_typed_function() {
        Some(format!(
            "did you mean `redde {stmt}`? A function gives its result with `redde`; an expression alone is not a statement"
        ))
    } else {
        Some(format!(
            "an expression alone is not a statement: print it with `nota {stmt}` or bind it with `fixum _ _ ← {stmt}`"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keywords_are_keywords() {
        for k in HEAD_KEYWORDS {
            assert!(Kw::from_word(k).is_some(), "{k}");
        }
    }
}
