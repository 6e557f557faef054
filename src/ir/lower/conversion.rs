//! The check-time side of the `↦` conversion matrix (src/ir/conversion.rs): a pair
//! of statically known types that the matrix rejects is SEM029 at the conversion.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::conversion::{verdict, Family};
use crate::ir::Ty;
use crate::source::Span;

impl Lowerer<'_> {
    /// Reports `from ↦ to` when both families are known and the matrix rejects it.
    pub(super) fn check_conversion(&mut self, from: &Ty, to: &Ty, span: Span) {
        let (Some(f), Some(t)) = (Family::of(from), Family::of(to)) else {
            return;
        };
        if verdict(f, t) {
            return;
        }
        let hint = match (f, t) {
            (Family::Numerus | Family::Fractus | Family::Bivalens, Family::Octeti) => {
                "a number has no one byte layout: convert it to textus first (`x ↦ textus ↦ octeti`) for its digits"
            }
            (Family::Octeti, _) => "decode the bytes first: `b ↦ textus`",
            (Family::Json, _) => "convert the document to a `valor` first: `d ↦ valor ↦ …`",
            (_, Family::Json) => "box it as a `valor` (`x ↦ valor`), or parse text with `json.solve`",
            (_, Family::Intervallum) => "a range is written `a‥b`, or clamp a number into one: `n ↦ a‥b`",
            _ => "docs/language.md § \"Conversions\" lists the conversions the language defines",
        };
        self.diags.push(
            Diagnostic::error(
                codes::SEM_NO_CONVERSION,
                format!(
                    "there is no conversion from `{}` to `{}`",
                    self.show_ty(from),
                    self.show_ty(to)
                ),
                span,
            )
            .with_hint(hint),
        );
    }
}
