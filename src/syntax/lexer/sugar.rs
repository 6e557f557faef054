//! Two context rules for forms that an LR(1) grammar without line breaks cannot tell
//! apart by itself (docs/syntax.md):
//!
//! - `fac { … } dum c`: a `dum` on the same line as the `}` that closes a `fac` body (or
//!   the handler of its `cape`) is the loop condition of that `fac` ([`Tok::DumPost`]);
//!   anywhere else `dum` starts a `dum` loop.
//! - `numerus x ∴ x + 1`: a closure whose one parameter has no parentheses. A
//!   zero-width [`Tok::ClosureBare`] is inserted before the parameter's type, found by
//!   walking back from `∴` over `Type name` (and an optional `→ R`).

use super::Lexer;
use crate::syntax::token::{Kw, Tok};

impl Lexer<'_> {
    /// Whether the `dum` at `i` continues a `fac` whose body or handler closes just
    /// before it on the same line. `opener[k]` is the index of the bracket that the
    /// closer at `k` matches.
    pub(super) fn closes_fac(&self, i: usize, opener: &[usize]) -> bool {
        if i == 0 || !matches!(self.tokens[i - 1].1, Tok::RBrace) {
            return false;
        }
        let between = &self.text[self.tokens[i - 1].2..self.tokens[i].0];
        if between.contains('\n') {
            return false;
        }
        let is_fac_body = |close: usize| {
            let o = opener[close];
            o != usize::MAX && o > 0 && matches!(self.tokens[o - 1].1, Tok::Kw(Kw::Fac))
        };
        if is_fac_body(i - 1) {
            return true;
        }
        // `fac { … } cape e { … } dum c`
        let o = opener[i - 1];
        o != usize::MAX
            && o >= 3
            && matches!(self.tokens[o - 1].1, Tok::Ident(_))
            && matches!(self.tokens[o - 2].1, Tok::Kw(Kw::Cape))
            && matches!(self.tokens[o - 3].1, Tok::RBrace)
            && is_fac_body(o - 3)
    }

    /// Inserts [`Tok::ClosureBare`] before the parameter type of every closure written
    /// without parentheses.
    pub(super) fn mark_bare_closures(&mut self) {
        let mut starts: Vec<usize> = Vec::new();
        for t in 0..self.tokens.len() {
            if matches!(self.tokens[t].1, Tok::Therefore) {
                if let Some(s) = self.bare_param_start(t) {
                    starts.push(s);
                }
            }
        }
        if starts.is_empty() {
            return;
        }
        let mut out = Vec::with_capacity(self.tokens.len() + starts.len());
        let mut next = starts.iter().peekable();
        for (k, tok) in std::mem::take(&mut self.tokens).into_iter().enumerate() {
            while next.peek().is_some_and(|&&s| s == k) {
                out.push((tok.0, Tok::ClosureBare, tok.0));
                next.next();
            }
            out.push(tok);
        }
        self.tokens = out;
    }

    /// The index where `Type name (→ R)? ∴` starts, for the `∴` at `t`.
    fn bare_param_start(&self, t: usize) -> Option<usize> {
        let j = t.checked_sub(1)?;
        let name_at = |k: usize| matches!(self.tokens[k].1, Tok::Ident(_));
        // `Type name ∴`
        if name_at(j) && j >= 1 {
            if let Some(s) = self.type_start(j - 1) {
                return Some(s);
            }
        }
        // `Type name → R ∴`
        let r = self.type_start(j)?;
        if r < 3 || !matches!(self.tokens[r - 1].1, Tok::Arrow) || !name_at(r - 2) {
            return None;
        }
        self.type_start(r - 3)
    }

    /// The first token of the type whose last token is at `end`, if the tokens up to
    /// `end` end with a type (`A`, `a.B`, `lista<T>`, `tf32[2]`, `A ∪ B`).
    fn type_start(&self, end: usize) -> Option<usize> {
        let mut j = end;
        loop {
            let s = self.member_start(j)?;
            if s >= 2 && matches!(self.tokens[s - 1].1, Tok::Union) {
                j = s - 2;
                continue;
            }
            return Some(s);
        }
    }

    fn member_start(&self, end: usize) -> Option<usize> {
        let toks = &self.tokens;
        let mut k = match &toks[end].1 {
            Tok::Ident(_) => end,
            Tok::Kw(Kw::Nihil) | Tok::Underscore => return Some(end),
            Tok::Gt | Tok::RBracket => {
                // Back to the matching `<` of type arguments (or `[` of a shape).
                let mut depth = 0usize;
                let mut x = end;
                loop {
                    match &toks[x].1 {
                        Tok::Gt | Tok::RBracket => depth += 1,
                        Tok::LtArgs | Tok::LBracket => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        Tok::Ident(_)
                        | Tok::Comma
                        | Tok::Int(_)
                        | Tok::Underscore
                        | Tok::Period
                        | Tok::Union
                        | Tok::Kw(Kw::Nihil | Kw::Iuncta) => {}
                        _ => return None,
                    }
                    x = x.checked_sub(1)?;
                }
                let head = x.checked_sub(1)?;
                match toks[head].1 {
                    Tok::Ident(_) => head,
                    Tok::Kw(Kw::Iuncta) => return Some(head),
                    _ => return None,
                }
            }
            _ => return None,
        };
        while k >= 2
            && matches!(toks[k - 1].1, Tok::Period)
            && matches!(toks[k - 2].1, Tok::Ident(_))
        {
            k -= 2;
        }
        Some(k)
    }
}

#[cfg(test)]
mod tests {
    use super::super::lex;
    use crate::source::FileId;
    use crate::syntax::token::Tok;

    fn toks(src: &str) -> Vec<Tok> {
        let lexed = lex(FileId(0), src);
        assert!(lexed.diagnostics.is_empty(), "{src}");
        lexed.tokens.into_iter().map(|t| t.1).collect()
    }

    /// The token after the zero-width marker, as the source spells it.
    fn bare_params(src: &str) -> Vec<String> {
        let lexed = lex(FileId(0), src);
        let t = &lexed.tokens;
        (0..t.len())
            .filter(|&i| t[i].1 == Tok::ClosureBare)
            .map(|i| src[t[i + 1].0..t[i + 1].2].to_string())
            .collect()
    }

    #[test]
    fn dum_after_fac_on_its_line_is_the_loop_condition() {
        let same = toks("fac { x } dum c");
        assert!(same.contains(&Tok::DumPost));
        let handler = toks("fac { x } cape e { y } dum c");
        assert!(handler.contains(&Tok::DumPost));
        let next_line = toks("fac { x }\ndum c { y }");
        assert!(!next_line.contains(&Tok::DumPost));
        let after_si = toks("si a { x } dum c { y }");
        assert!(!after_si.contains(&Tok::DumPost));
    }

    #[test]
    fn bare_closure_marker_goes_before_the_parameter_type() {
        assert_eq!(bare_params("f(numerus x ∴ x)"), ["numerus"]);
        assert_eq!(bare_params("f(lista<T> xs ∴ xs)"), ["lista"]);
        assert_eq!(bare_params("f(a.B b ∴ b)"), ["a"]);
        assert_eq!(bare_params("f(tf32[2] t ∴ t)"), ["tf32"]);
        assert_eq!(bare_params("f(textus ∪ nihil s ∴ s)"), ["textus"]);
        assert_eq!(bare_params("f(numerus x → numerus ∴ x)"), ["numerus"]);
        assert_eq!(
            bare_params("numerus a ∴ numerus b ∴ a"),
            ["numerus", "numerus"]
        );
        // Parenthesised parameters and untyped names get no marker.
        assert!(bare_params("f((numerus x) ∴ x)").is_empty());
        assert!(bare_params("f((numerus x) → numerus ∴ x)").is_empty());
        assert!(bare_params("f(x ∴ x)").is_empty());
    }
}
