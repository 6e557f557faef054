//! Canonical spacing between two tokens on one line: binary operators, arrows and
//! `←` spaced; nothing inside brackets, before `,` `;` `:` `.` or after `.`; calls,
//! indexing and type arguments glued to what they apply to; unary `-` and `¬` glued
//! to their operand; one space everywhere else.
//!
//! Two adjacency rules of the lexer decide tokens, so spacing keeps them as they
//! were: a `<` touching the word before it opens type arguments (`lista<numerus>`)
//! and stays glued on both sides, while a comparison `<` is always spaced; `!` of
//! `e!.x` is glued to both neighbours.

use crate::syntax::token::{Kw, Tok};

/// What the layout knows about one token when it chooses the space before the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Any token not listed below.
    Plain,
    /// A `>` that closes type arguments (`lista<numerus>`).
    CloseArgs,
    /// A `-` or `¬` that applies to the operand after it.
    Unary,
    /// The route of `ad 'route' (arg)`: its argument is not a template call.
    Route,
}

/// Whether a token ends an operand, so that a `-` after it is binary and a `(` or
/// `[` after it applies to it.
pub(super) fn ends_operand(t: &Tok, role: Role) -> bool {
    role == Role::CloseArgs
        || matches!(
            t,
            Tok::Ident(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::Text(_)
                | Tok::Ascii(_)
                | Tok::Bytes(_)
                | Tok::Underscore
                | Tok::RParen
                | Tok::RBracket
                | Tok::Kw(Kw::Verum | Kw::Falsum | Kw::Nihil | Kw::Ego)
        )
}

/// Whether one space goes between `a` and the following `b` on the same line.
pub(super) fn space_between(a: &Tok, ra: Role, b: &Tok, rb: Role) -> bool {
    use Tok::*;
    // Type arguments: `name<T, U>` glued inside and to the name.
    if matches!(a, LtArgs) || matches!(b, LtArgs) || rb == Role::CloseArgs {
        return false;
    }
    if matches!(a, LParen | LParenFn | LBracket | Period | Bang) || ra == Role::Unary {
        return false;
    }
    if matches!(b, RParen | RBracket | Comma | Semi | Colon | Period | Bang) {
        return false;
    }
    // `{}`: an empty block or record.
    if matches!(a, LBrace | LBraceRec) && matches!(b, RBrace) {
        return false;
    }
    // A call, an index, a shape or a tuple applied to what precedes it.
    if matches!(b, LParen | LParenFn | LBracket) {
        let literal = matches!(a, Text(_) | Ascii(_)) && ra != Role::Route;
        let applies = literal
            || matches!(a, Ident(_) | RParen | RBracket)
            || matches!(a, Tok::Kw(crate::syntax::token::Kw::Ego))
            || ra == Role::CloseArgs;
        return !applies;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Tok {
        Tok::Ident(s.into())
    }

    #[test]
    fn operators_are_spaced_and_brackets_are_not() {
        assert!(space_between(
            &id("a"),
            Role::Plain,
            &Tok::Plus,
            Role::Plain
        ));
        assert!(space_between(
            &Tok::Bind,
            Role::Plain,
            &Tok::Int(1),
            Role::Plain
        ));
        assert!(!space_between(
            &id("f"),
            Role::Plain,
            &Tok::LParen,
            Role::Plain
        ));
        assert!(!space_between(
            &Tok::LParen,
            Role::Plain,
            &id("x"),
            Role::Plain
        ));
        assert!(!space_between(
            &id("x"),
            Role::Plain,
            &Tok::Comma,
            Role::Plain
        ));
        assert!(space_between(
            &Tok::Comma,
            Role::Plain,
            &id("y"),
            Role::Plain
        ));
        assert!(space_between(
            &Tok::Kw(Kw::Si),
            Role::Plain,
            &Tok::LParen,
            Role::Plain
        ));
        assert!(!space_between(
            &Tok::Minus,
            Role::Unary,
            &id("x"),
            Role::Plain
        ));
        assert!(space_between(
            &Tok::Minus,
            Role::Plain,
            &id("x"),
            Role::Plain
        ));
        // A template call is glued; the argument of `ad 'route'` is not.
        let text = Tok::Text("a §".into());
        assert!(!space_between(
            &text,
            Role::Plain,
            &Tok::LParen,
            Role::Plain
        ));
        assert!(space_between(&text, Role::Route, &Tok::LParen, Role::Plain));
    }

    #[test]
    fn type_arguments_stay_glued() {
        assert!(!space_between(
            &id("lista"),
            Role::Plain,
            &Tok::LtArgs,
            Role::Plain
        ));
        assert!(!space_between(
            &Tok::LtArgs,
            Role::Plain,
            &id("T"),
            Role::Plain
        ));
        assert!(!space_between(
            &id("T"),
            Role::Plain,
            &Tok::Gt,
            Role::CloseArgs
        ));
        assert!(space_between(
            &Tok::Gt,
            Role::CloseArgs,
            &id("x"),
            Role::Plain
        ));
        assert!(!space_between(
            &Tok::Gt,
            Role::CloseArgs,
            &Tok::LParen,
            Role::Plain
        ));
        // A comparison `<` is spaced, so it never touches a word and stays one.
        assert!(space_between(&id("a"), Role::Plain, &Tok::Lt, Role::Plain));
    }

    #[test]
    fn operands_end_where_expected() {
        assert!(ends_operand(&Tok::RParen, Role::Plain));
        assert!(ends_operand(&Tok::Gt, Role::CloseArgs));
        assert!(!ends_operand(&Tok::Gt, Role::Plain));
        assert!(!ends_operand(&Tok::Bind, Role::Plain));
    }
}
