//! Intrinsic methods are vocabulary: `.added(…)` in an English file, `.addita(…)` in a
//! Latin one and `.已添加(…)` in a Chinese one name the same faber op. This file maps
//! the spelling after `.` in the module's reader locale onto faber's own op and method
//! names (src/ir/ops.rs, `Method`), through the table in src/syntax/vocabulary.txt.
//! Genus methods and fields are names the user wrote and are looked up before this.

use crate::ir::ops::Op;
use crate::ir::{Method, Ty};
use crate::syntax::vocab::{vocabulary, Intrinsic, Locale, Row, Section};

/// What a method spelling names once the locale is taken into account.
#[derive(Clone, Copy)]
pub enum Spelled {
    /// A faber op or method name (look it up with `Op::from_method` / `Method::from_name`).
    Faber(&'static str),
    /// The user's spelling, unchanged: a faber-only op under its own name, or a
    /// genus method, or nothing at all (the caller reports it).
    AsWritten,
    /// A term of the vocabulary that faber does not implement.
    Unimplemented(&'static Row),
    /// A faber name that this (non-Latin) locale spells another way: unknown here,
    /// like a keyword of another locale.
    Foreign,
}

fn is_faber_name(name: &str) -> bool {
    Op::from_method(name).is_some() || Method::from_name(name).is_some()
}

/// Resolves the spelling `name` after `.` in `locale`, for a receiver of static type
/// `recv` (which picks between a tensor op and a number method sharing one term,
/// such as `exp`: `exp` on tensors and lists, `exponens` on numbers).
///
/// In Latin, faber's own names are always accepted (they are the Latin surface faber
/// has always read); in every locale, a faber op the vocabulary does not cover keeps
/// its own name. A term the table covers must be written in the file's locale.
pub fn resolve(locale: Locale, name: &str, recv: &Ty) -> Spelled {
    let v = vocabulary();
    if locale == Locale::LA && is_faber_name(name) {
        // `t.radix()` on a tensor is the tensor op of the same term (`sqrt`); on
        // anything else the name keeps the meaning faber has always given it.
        if matches!(recv, Ty::Tensor { .. }) && Op::from_method(name).is_none() {
            if let Intrinsic::Known(row) = v.intrinsic(locale, name) {
                if let Some(op) = row.faber.iter().find(|n| Op::from_method(n).is_some()) {
                    return Spelled::Faber(op);
                }
            }
        }
        return Spelled::AsWritten;
    }
    match v.intrinsic(locale, name) {
        Intrinsic::Known(row) => Spelled::Faber(pick(row, recv)),
        Intrinsic::Unimplemented(row) => Spelled::Unimplemented(row),
        Intrinsic::NotInTable if is_faber_name(name) && v.covers(name) => Spelled::Foreign,
        Intrinsic::NotInTable => Spelled::AsWritten,
    }
}

fn pick(row: &'static Row, recv: &Ty) -> &'static str {
    let number = matches!(recv, Ty::Int | Ty::Float);
    let method = row.faber.iter().find(|n| Method::from_name(n).is_some());
    let op = row.faber.iter().find(|n| Op::from_method(n).is_some());
    match (number, method, op) {
        (true, Some(m), _) => m,
        (_, _, Some(o)) => o,
        (_, Some(m), None) => m,
        _ => row.faber[0],
    }
}

/// The spelling of faber name `name` in `locale`, for hints and messages: the
/// vocabulary's, or `name` itself for a faber-only op.
pub fn spell(locale: Locale, name: &str) -> &str {
    if locale == Locale::LA {
        return name;
    }
    vocabulary()
        .spell(Section::Intrinsic, locale, name)
        .unwrap_or(name)
}

impl super::Lowerer<'_> {
    /// An unknown name that is a Latin keyword in a module of another locale: the
    /// hint gives the locale's spelling (`redde` in English is `return`).
    pub(super) fn foreign_keyword_hint(&self, m: usize, name: &str) -> Option<String> {
        let locale = self.modules[m].locale;
        let v = vocabulary();
        if locale == Locale::LA || v.keyword(Locale::LA, name).is_none() {
            return None;
        }
        let spelled = v.spell(Section::Keyword, locale, name)?;
        Some(format!(
            "`{name}` is a Latin keyword; this file reads locale `{}`, where it is `{spelled}`",
            locale.code()
        ))
    }

    /// True when `name` is the empty value `vacua` as module `m`'s locale spells it
    /// (`empty` in English): a word with a meaning that is not reserved.
    pub(super) fn is_vacua(&self, m: usize, name: &str) -> bool {
        self.is_word(m, name, "vacua")
    }

    /// Whether `name` spells the keyword-table term `canonical` in module `m`'s locale
    /// (`vacua`, `lege`: names that faber reads as expressions).
    pub(super) fn is_word(&self, m: usize, name: &str, canonical: &str) -> bool {
        vocabulary()
            .lookup(Section::Keyword, self.modules[m].locale, name)
            .is_some_and(|r| r.canonical == canonical)
    }
}
