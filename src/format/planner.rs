//! The edits a translation plans (src/format/translate.rs, src/format/builtin.rs): the
//! replacements of words, and the refusals (CLI004) where a word cannot be written in
//! the target locale.

use super::layout::Replacements;
use crate::diag::{codes, Diagnostic};
use crate::source::{FileId, Span};
use crate::syntax::ast::Ident;
use crate::syntax::vocab::Locale;

pub(super) struct Plan {
    pub repl: Replacements,
    pub errors: Vec<Diagnostic>,
}

pub(super) struct Planner<'a> {
    pub file: FileId,
    pub text: &'a str,
    pub to: Locale,
    pub plan: Plan,
}

impl Planner<'_> {
    pub(super) fn replace(&mut self, lo: usize, hi: usize, new: &str) {
        if &self.text[lo..hi] != new {
            self.plan.repl.insert(lo, (hi, new.to_string()));
        }
    }

    pub(super) fn replace_ident(&mut self, id: &Ident, new: &str) {
        self.replace(id.span.lo as usize, id.span.hi as usize, new);
    }

    pub(super) fn refuse(&mut self, lo: usize, hi: usize, msg: String, hint: &str) {
        let span = Span::new(self.file, lo, hi);
        let d = Diagnostic::error(codes::CLI_UNTRANSLATABLE, msg, span).with_hint(hint);
        self.plan.errors.push(d);
    }

    pub(super) fn no_spelling(&mut self, id: &Ident, what: &str) {
        let (lo, hi) = (id.span.lo as usize, id.span.hi as usize);
        let msg = format!(
            "{what} `{}` has no spelling in locale `{}`",
            id.name,
            self.to.code()
        );
        self.refuse(
            lo,
            hi,
            msg,
            "the reader pack of that locale declares none; keep the file in a locale that has one",
        );
    }
}
