//! The spelling of a built-in method call that the checker resolved
//! (src/format/resolved.rs): the word of the target locale that the compiler reads,
//! on a receiver of the same static type, as the same built-in. Into Latin that is
//! faber's own name where Latin reads it so (`radix` for a number's square root,
//! `sqrt` for a tensor's), else the table's (and the table's first for an operator's
//! twin on a number: `x.multiplicata(y)`); into another locale the table's one
//! spelling, which is refused (CLI004) where that locale reads it as something else.

use rustc_hash::FxHashSet;

use super::planner::Planner;
use crate::ir::lower::calls::builtin_reading;
use crate::ir::{Method, Ty};
use crate::syntax::ast::Ident;
use crate::syntax::vocab::{vocabulary, Locale, Section};

/// Respells the method `id` of a call that names the built-in `faber` on a receiver
/// of static type `recv`; `members` are the genus methods the program can see.
pub(super) fn respell(
    p: &mut Planner,
    id: &Ident,
    faber: &str,
    recv: &Ty,
    members: &FxHashSet<String>,
) {
    let v = vocabulary();
    // On a text, faber's `divide` is the split, the row of that canonical name (else
    // the division's row, `divisa`, whose faber name it is).
    let row = if faber == "divide" && *recv == Ty::Text {
        v.by_canonical(Section::Intrinsic, "divide")
    } else {
        v.spell(Section::Intrinsic, Locale::LA, faber)
            .and_then(|canonical| v.lookup(Section::Intrinsic, Locale::LA, canonical))
    };
    // A faber-only op: every locale reads it by its own name.
    let Some(row) = row else { return };
    let to = p.to;
    let reads = |word: &str| builtin_reading(to, word, recv).as_deref() == Some(faber);
    let word = if to == Locale::LA {
        // On a number, an operator's twin is written as the table's word (`addita`,
        // `multiplicata`): faber's own name is its tensor op's (`multiplica`).
        let twin = matches!(recv, Ty::Int | Ty::Float) && crate::ir::lower::twins::is_twin(faber);
        let table_first = twin.then_some(row.canonical);
        table_first
            .into_iter()
            .chain([faber])
            .chain(row.faber.iter().copied())
            .chain([row.canonical])
            .find(|w| reads(w))
    } else {
        let Some(word) = row.spelling(to) else {
            p.no_spelling(id, "the method");
            return;
        };
        reads(word).then_some(word)
    };
    let (lo, hi) = (id.span.lo as usize, id.span.hi as usize);
    let Some(word) = word else {
        let msg = format!(
            "`.{}(…)` is the built-in `{faber}` here, but locale `{}` has no spelling that reads as it on this receiver",
            id.name,
            to.code()
        );
        p.refuse(
            lo,
            hi,
            msg,
            "declare the receiver with its type, so that the call names one thing in every locale",
        );
        return;
    };
    // The compiler looks a genus method up before the built-ins where the receiver is
    // a record, or is of no known type and the built-in is no list or text method.
    let looked_up = match recv {
        Ty::Record(_) => true,
        Ty::Any => Method::from_name(faber).is_none(),
        _ => false,
    };
    if word != id.name && looked_up && members.contains(word) {
        let msg = format!(
            "`.{}(…)` is the built-in `{faber}`, which locale `{}` spells `{word}`, the name of a genus method",
            id.name,
            to.code()
        );
        p.refuse(
            lo,
            hi,
            msg,
            "rename the genus method, or declare the receiver with its type",
        );
        return;
    }
    p.replace_ident(id, word);
}
