//! What each method-call site `recv.name(…)` resolved to, recorded while lowering:
//! a name the program declares or a built-in (and which one). Lowering needs none of
//! it; it is kept for tools that rewrite source by meaning, such as the translation
//! of `faber format --locale` (src/format/), which respells a built-in and keeps a
//! user's method.

use rustc_hash::FxHashMap;

use super::intrinsics::{self, Spelled};
use crate::ir::ops::Op;
use crate::ir::{Method, Ty};
use crate::source::Span;
use crate::syntax::vocab::Locale;

/// What the method name of one call site names.
#[derive(Clone, Debug, PartialEq)]
pub enum CallTarget {
    /// A name the program or the host declares: a genus method, a field holding a
    /// function, a module's function, `hospes.*`, `tensor.structa`. Its spelling is
    /// the author's own.
    Declared,
    /// A built-in method: faber's own op or method name (src/ir/ops.rs, `Method`),
    /// and the static type of the receiver that picked it (a number literal's type
    /// for a literal).
    Builtin { faber: String, recv: Ty },
    /// The site was lowered more than once, to different targets (an expression
    /// lowered in several contexts): it names no one thing.
    Varies,
}

/// The call sites of a program, by the span of the method name.
#[derive(Default, Debug)]
pub struct CallSites(FxHashMap<Span, CallTarget>);

impl CallSites {
    /// Records that the method name at `span` names `target`.
    pub(super) fn record(&mut self, span: Span, target: CallTarget) {
        match self.0.get_mut(&span) {
            None => {
                self.0.insert(span, target);
            }
            Some(t) if *t == target => {}
            Some(t) => *t = CallTarget::Varies,
        }
    }

    /// What the method name at `span` names, if a call there was lowered.
    pub fn get(&self, span: Span) -> Option<&CallTarget> {
        self.0.get(&span)
    }

    /// Every recorded site.
    pub fn iter(&self) -> impl Iterator<Item = (&Span, &CallTarget)> {
        self.0.iter()
    }
}

/// The built-in that `.name(…)` names in `locale` on a receiver of static type
/// `recv` (as [`CallTarget::Builtin`]'s `faber`), when it names one: what lowering
/// would pick there, were no genus method of that name in sight.
pub fn builtin_reading(locale: Locale, name: &str, recv: &Ty) -> Option<String> {
    match intrinsics::resolve(locale, name, recv) {
        Spelled::Faber(n) => Some(n.to_string()),
        Spelled::AsWritten
            if Method::from_name(name).is_some() || Op::from_method(name).is_some() =>
        {
            Some(name.to_string())
        }
        Spelled::AsWritten | Spelled::Unimplemented(_) | Spelled::Foreign => None,
    }
}
