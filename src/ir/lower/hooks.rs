//! A suite's setup and teardown (docs/language.md § Tests): `praepara { … }` runs before
//! each test of the suite (nested suites included), `postpara { … }` after it, and
//! `praepara omnia` / `postpara omnia` are the once-per-suite forms. faber runs every
//! test on its own, from a fresh program state, so a suite-wide block runs for each
//! test as well (as upstream's Rust backend does, by inlining it into each test):
//! every block is inlined into each test's function, the setups before the body
//! (`omnia` ones first, outer suites before inner) and the teardowns after it (inner
//! suites first, `omnia` ones last). The names a setup binds are the body's. A test
//! that fails stops there: its teardown does not run.

use super::Lowerer;
use crate::diag::codes;
use crate::syntax::ast::Hook;
use crate::syntax::vocab::{vocabulary, Section};

/// Drops the repeats among `diags[start..]` (same code, span and message), keeping the
/// first of each in place.
pub(super) fn dedup(diags: &mut Vec<crate::diag::Diagnostic>, start: usize) {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut i = start;
    while i < diags.len() {
        let d = &diags[i];
        if seen.insert((d.code.id, d.span, d.message.clone())) {
            i += 1;
        } else {
            diags.remove(i);
        }
    }
}

/// The setups of the enclosing suites (`hooks`, outermost first), in running order.
pub(super) fn before<'a>(hooks: &[&'a Hook]) -> Vec<&'a Hook> {
    let setups = hooks.iter().filter(|h| h.before);
    let (all, each): (Vec<&Hook>, Vec<&Hook>) = setups.partition(|h| h.all.is_some());
    all.into_iter().chain(each).collect()
}

/// The teardowns of the enclosing suites, in running order.
pub(super) fn after<'a>(hooks: &[&'a Hook]) -> Vec<&'a Hook> {
    let teardowns = hooks.iter().rev().filter(|h| !h.before);
    let (all, each): (Vec<&Hook>, Vec<&Hook>) = teardowns.partition(|h| h.all.is_some());
    each.into_iter().chain(all).collect()
}

impl Lowerer<'_> {
    /// The word between `praepara` / `postpara` and the block must be `omnia` (as the
    /// module's locale spells it).
    pub(super) fn check_hook(&mut self, m: usize, h: &Hook) {
        let Some(word) = &h.all else { return };
        let locale = self.modules[m].locale;
        let canonical = vocabulary()
            .lookup(Section::Keyword, locale, &word.name)
            .map(|r| r.canonical);
        if canonical != Some("omnia") {
            let omnia = vocabulary()
                .spell(Section::Keyword, locale, "omnia")
                .unwrap_or("omnia");
            self.error(
                codes::SEM_UNSUPPORTED,
                format!(
                    "`{}` after a setup or teardown keyword: only `{omnia}` (once per suite) may stand there",
                    word.name
                ),
                word.span,
            );
        }
    }
}
