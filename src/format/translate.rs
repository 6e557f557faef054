//! Translation between reader locales: every keyword, primitive type name and
//! intrinsic method is respelled through the reader vocabulary (src/syntax/vocab.rs,
//! `spell`); user names, texts and comments are not touched.
//!
//! Which words are vocabulary is decided by their place, as the compiler decides it:
//! a keyword token; a one-word type name that the file does not declare itself; the
//! method of a call `recv.m(…)` that the checker resolved to a built-in
//! (src/format/resolved.rs, src/format/builtin.rs), or, where the file does not check,
//! whose receiver is not a module (`hospes`, an import) and whose name is no field or
//! method of a genus (those are looked up before the built-ins); a name used as an
//! expression that the file does not declare and that spells `vacua` or `lege`; test
//! modifiers and the `omnia` of `praepara omnia`; `@ privata`; the `argumenta` of `incipit argumenta name` and
//! `functio f() argumenta name`.
//!
//! A translation that would change what the program means is refused with CLI004:
//! a user name that is a keyword of the target locale, a term the target locale has
//! no spelling for, a built-in whose spelling the target reads as another thing, or
//! (where the file does not check) a method name that is both a genus member and a
//! built-in the target spells differently.

use rustc_hash::FxHashSet;

use super::builtin;
use super::layout::Replacements;
use super::names::{Recv, Words};
use super::planner::{Plan, Planner};
use super::resolved::Resolved;
use crate::ir::lower::calls::CallTarget;
use crate::source::FileId;
use crate::syntax::ast::Ident;
use crate::syntax::lexer::Spanned;
use crate::syntax::token::{Kw, Tok};
use crate::syntax::vocab::{vocabulary, Locale, Section};

/// The canonical (Latin) name of a keyword.
pub(super) fn keyword_name(k: Kw) -> String {
    format!("{k:?}").to_lowercase()
}

/// The keyword a token stands for, if it is one.
fn keyword_of(t: &Tok) -> Option<Kw> {
    match t {
        Tok::Kw(k) => Some(*k),
        Tok::ReddeBare => Some(Kw::Redde),
        Tok::DumPost => Some(Kw::Dum),
        _ => None,
    }
}

/// What the translation knows of a file besides its words.
pub(super) struct Context<'a> {
    /// The genus methods the program can see (for calls the checker did not resolve).
    pub members: &'a FxHashSet<String>,
    /// The checker's reading of the file's method calls.
    pub resolved: &'a Resolved,
}

/// Plans the translation of one file from its locale `from` into `to`.
pub(super) fn plan(
    file: FileId,
    text: &str,
    tokens: &[Spanned],
    words: &Words,
    cx: &Context,
    from: Locale,
    to: Locale,
) -> Plan {
    let members = cx.members;
    let v = vocabulary();
    let mut p = Planner {
        file,
        text,
        to,
        plan: Plan {
            repl: Replacements::new(),
            errors: Vec::new(),
        },
    };
    for (i, (lo, t, hi)) in tokens.iter().enumerate() {
        if let Some(k) = keyword_of(t) {
            let name = keyword_name(k);
            match v.spell(Section::Keyword, to, &name) {
                Some(s) => p.replace(*lo, *hi, s),
                None => {
                    let msg = format!(
                        "the keyword `{}` has no spelling in locale `{}`",
                        &text[*lo..*hi],
                        to.code()
                    );
                    p.refuse(
                        *lo,
                        *hi,
                        msg,
                        "the reader pack of that locale declares none; keep the file in a locale that has one",
                    );
                }
            }
        }
        // `incipit argumenta name` and `functio f() argumenta name`: the marker is read
        // by its place.
        if let (
            Tok::Kw(Kw::Incipit) | Tok::RParen,
            Some((alo, Tok::Ident(a), ahi)),
            Some((_, Tok::Ident(_), _)),
        ) = (t, tokens.get(i + 1), tokens.get(i + 2))
        {
            if v.spells_anywhere(Section::Keyword, "argumenta", a) {
                if let Some(s) = v.spell(Section::Keyword, to, "argumenta") {
                    p.replace(*alo, *ahi, s);
                }
            }
        }
    }
    for id in &words.types {
        if words.declared_types.contains(&id.name) {
            continue;
        }
        if let Some(canonical) = v.type_name(from, &id.name) {
            match v.spell(Section::Type, to, canonical) {
                Some(s) => p.replace_ident(id, s),
                None => p.no_spelling(id, "the type"),
            }
        }
    }
    // Latin to Latin: faber's own names and the table's are both Latin; keep them.
    let methods: &[(Ident, Recv)] = if from == Locale::LA && to == Locale::LA {
        &[]
    } else {
        &words.methods
    };
    for (id, recv) in methods {
        // A call the checker resolved is translated by what it names.
        match cx.resolved.site(text, id.span.lo, id.span.hi) {
            Some(CallTarget::Declared) => continue,
            Some(CallTarget::Builtin { faber, recv }) => {
                builtin::respell(&mut p, id, faber, recv, members);
                continue;
            }
            Some(CallTarget::Varies) | None => {}
        }
        // Else by the tokens. In Latin, faber's own method names are accepted beside
        // the table's.
        let row = if from == Locale::LA {
            v.spell(Section::Intrinsic, Locale::LA, &id.name)
                .and_then(|canonical| v.lookup(Section::Intrinsic, Locale::LA, canonical))
        } else {
            v.lookup(Section::Intrinsic, from, &id.name)
        };
        let Some(row) = row else { continue };
        let kind = receiver(words, recv, from);
        let spelled = if to == Locale::LA {
            Some(latin_method(row, matches!(kind, Some(Receiver::Number))))
        } else {
            row.spelling(to)
        }
        .unwrap_or("");
        if members.contains(&id.name) {
            match kind {
                Some(Receiver::Genus) => continue,
                Some(Receiver::Builtin | Receiver::Number) => {}
                None => {
                    if !spelled.is_empty() && spelled != id.name {
                        let (lo, hi) = (id.span.lo as usize, id.span.hi as usize);
                        let msg = format!(
                            "`.{}(…)` may be a genus member or the built-in method, which locale `{}` spells `{spelled}`",
                            id.name,
                            to.code()
                        );
                        p.refuse(lo, hi, msg, "the file does not check, so the call is read from its tokens: fix what `faber check` reports, rename the genus member, or declare the receiver with its type");
                    }
                    continue;
                }
            }
        }
        if spelled.is_empty() {
            p.no_spelling(id, "the method");
        } else {
            p.replace_ident(id, spelled);
        }
    }
    for id in &words.names {
        if words.declared.contains(&id.name) {
            continue;
        }
        if let Some(row) = v.lookup(Section::Keyword, from, &id.name) {
            if matches!(row.canonical, "vacua" | "lege") {
                match row.spelling(to) {
                    Some(s) => p.replace_ident(id, s),
                    None => p.no_spelling(id, "the word"),
                }
            }
        }
    }
    for id in &words.modifiers {
        if let Some(s) = v
            .lookup(Section::Keyword, from, &id.name)
            .and_then(|r| r.spelling(to))
        {
            p.replace_ident(id, s);
        }
    }
    for id in &words.annotations {
        if v.keyword(from, &id.name) == Some(Kw::Privata) {
            if let Some(s) = v.spell(Section::Keyword, to, "privata") {
                p.replace_ident(id, s);
            }
        }
    }
    collisions(&mut p, tokens);
    p.plan
}

enum Receiver {
    Genus,
    Builtin,
    /// A number (`numerus`, `fractus`, …): picks a term's number method.
    Number,
}

/// The Latin spelling of an intrinsic, as Latin reads it whatever the receiver's
/// static type: faber's own name where the term has one (`neg`, `relu`); for a term
/// that is a tensor op and a number method (`a|b`: `exp|exponens`), the method for a
/// number receiver and the op otherwise — what the other locales' one spelling picks.
fn latin_method(row: &crate::syntax::vocab::Row, number: bool) -> &'static str {
    match row.faber.as_slice() {
        [] => row.canonical,
        [one] => one,
        [op, method, ..] => {
            if number {
                method
            } else {
                op
            }
        }
    }
}

/// What a call's receiver is, where the file's declarations tell: a value of a
/// genus (its methods are looked up first) or of a built-in type.
fn receiver(words: &Words, recv: &Recv, from: Locale) -> Option<Receiver> {
    let v = vocabulary();
    match recv {
        Recv::Ego | Recv::Record => Some(Receiver::Genus),
        Recv::Literal => Some(Receiver::Builtin),
        Recv::Number => Some(Receiver::Number),
        Recv::Name(n) => {
            let ty = words.typed.get(n)?.as_ref()?;
            if ty == super::names::NUMBER || ty == super::names::FLOAT {
                return Some(Receiver::Number);
            }
            if words.declared_types.contains(ty) {
                return Some(Receiver::Genus);
            }
            let canonical = v.type_name(from, ty).or_else(|| {
                let scalar = [
                    "f16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
                ];
                scalar.contains(&ty.as_str()).then_some("numerus")
            });
            match canonical {
                Some("numerus" | "fractus") => Some(Receiver::Number),
                Some(_) => Some(Receiver::Builtin),
                None if ty.starts_with('t') && ty.len() <= 4 => Some(Receiver::Builtin),
                None => None,
            }
        }
        Recv::Other => None,
    }
}

/// A user name the translation keeps must not be a keyword of the target locale.
fn collisions(p: &mut Planner, tokens: &[Spanned]) {
    let v = vocabulary();
    for (i, (lo, t, hi)) in tokens.iter().enumerate() {
        let Tok::Ident(name) = t else { continue };
        if p.plan.repl.contains_key(lo) {
            continue;
        }
        let after = i.checked_sub(1).map(|j| &tokens[j].1);
        if matches!(after, Some(Tok::Period | Tok::Kw(Kw::Functio))) {
            continue;
        }
        if let Some(k) = v.keyword(p.to, name) {
            let msg = format!(
                "`{name}` is a name in this file, but locale `{}` reserves it (keyword `{}`)",
                p.to.code(),
                keyword_name(k)
            );
            p.refuse(*lo, *hi, msg, "rename it before translating");
        }
    }
}
