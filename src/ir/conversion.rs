//! The `↦` conversion matrix between the type families faber has (docs/language.md
//! § "Conversions"): which source family converts to which target family. One table,
//! read by the checker (a pair it rejects is SEM029 when both types are known,
//! src/ir/lower/conversion.rs) and by the evaluator (a value whose type was not known
//! statically: a thrown conversion failure, RUN005 when not caught,
//! src/eval/convert_pairs.rs). A family added to the language gets a variant here and
//! its row and column in [`verdict`].
//!
//! The verdicts are the upstream language's: the semantic column of its conversion
//! matrix (a pair its type checker refuses is refused here, every other pair is
//! accepted). An accepted pair is a conversion that may still fail on a value — for
//! some pairs on every value, where the language defines the pair but no value of the
//! source has an image in the target (`42 ↦ lista<numerus>`): docs/language.md lists
//! what each accepted pair does at run time.

use super::Ty;

/// A type family of the conversion matrix (`ascii` is `textus` here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Numerus,
    Fractus,
    Bivalens,
    Textus,
    Octeti,
    /// `json`: a JSON document (the declared type `json`).
    Json,
    /// `valor`: one dynamic value.
    Valor,
    Lista,
    Tabula,
    Copia,
    Intervallum,
    Tensor,
    Nihil,
}

impl Family {
    /// The family of a statically known type; `None` where the matrix has no say
    /// (`Any`, unions, genus records, tuples, functions, `vacuum`).
    pub fn of(ty: &Ty) -> Option<Family> {
        Some(match ty {
            Ty::Int => Family::Numerus,
            Ty::Float => Family::Fractus,
            Ty::Bool => Family::Bivalens,
            Ty::Text => Family::Textus,
            Ty::Bytes => Family::Octeti,
            Ty::Json { doc: true } => Family::Json,
            Ty::Json { doc: false } => Family::Valor,
            Ty::List(_) => Family::Lista,
            Ty::Map(_, _) => Family::Tabula,
            Ty::Set(_) => Family::Copia,
            Ty::Interval => Family::Intervallum,
            Ty::Tensor { .. } => Family::Tensor,
            Ty::Nihil => Family::Nihil,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Family::Numerus => "numerus",
            Family::Fractus => "fractus",
            Family::Bivalens => "bivalens",
            Family::Textus => "textus",
            Family::Octeti => "octeti",
            Family::Json => "json",
            Family::Valor => "valor",
            Family::Lista => "lista",
            Family::Tabula => "tabula",
            Family::Copia => "copia",
            Family::Intervallum => "intervallum",
            Family::Tensor => "tensor",
            Family::Nihil => "nihil",
        }
    }
}

/// Whether `from ↦ to` is a conversion the language defines. An accepted pair may
/// still fail on a particular value (`"x" ↦ numerus`); a rejected one never succeeds.
pub fn verdict(from: Family, to: Family) -> bool {
    use Family::*;
    if from == to {
        return true;
    }
    match from {
        // `nihil` is not a family of the upstream matrix: it has a text form and is
        // JSON's null.
        Nihil => matches!(to, Textus | Valor | Json),
        // Bytes decode as text; numbers, truth values and lists have no byte reading.
        Octeti => !matches!(
            to,
            Numerus | Fractus | Bivalens | Json | Lista | Intervallum | Nihil
        ),
        // A JSON document converts to structures, never straight to a scalar.
        Json => matches!(to, Valor | Lista | Tabula | Copia | Tensor | Nihil),
        _ => !rejected_target(from, to),
    }
}

/// The refusals of the rows other than `octeti`, `json` and `nihil`.
fn rejected_target(from: Family, to: Family) -> bool {
    use Family::*;
    match to {
        // Only a JSON value may hold `null`.
        Nihil => from != Valor,
        // Only structures become a JSON document; scalars and text box into `valor`.
        Json => matches!(from, Numerus | Fractus | Bivalens | Textus),
        Octeti => matches!(from, Numerus | Fractus | Bivalens),
        // Ranges come from integers (and ranges) only.
        Intervallum => from != Numerus,
        Tensor => matches!(from, Numerus | Fractus | Tabula | Copia),
        Numerus | Fractus => from == Tensor,
        Tabula => matches!(from, Lista | Copia | Tensor),
        Copia => matches!(from, Tabula | Tensor),
        Bivalens | Textus | Valor | Lista => false,
    }
}
