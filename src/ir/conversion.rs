//! The `↦` conversion matrix between the type families faber has (docs/language.md
//! § "Conversions"): which source family converts to which target family. One table,
//! read by the checker (a pair it rejects is SEM029 when both types are known,
//! src/ir/lower/conversion.rs) and by the evaluator (a value whose type was not known
//! statically: a thrown conversion failure, RUN005 when not caught,
//! src/eval/convert_pairs.rs). A family added to the language gets a variant here and
//! its row and column in [`verdict`].

use super::Ty;

/// A type family of the conversion matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Numerus,
    Fractus,
    Bivalens,
    Textus,
    Octeti,
    Lista,
    Tabula,
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
            Ty::List(_) => Family::Lista,
            Ty::Map(_, _) => Family::Tabula,
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
            Family::Lista => "lista",
            Family::Tabula => "tabula",
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
    match to {
        // Every value has a text form: its display form; octeti decode as UTF-8.
        Textus => true,
        Numerus | Fractus => matches!(from, Numerus | Fractus | Bivalens | Textus),
        // Truthiness: a number other than 0, a text other than "".
        Bivalens => matches!(from, Numerus | Fractus | Textus),
        // UTF-8 encoding of a text; numbers have no one byte layout.
        Octeti => from == Textus,
        // Row-major elements of a tensor; the keys of a map.
        Lista => matches!(from, Tensor | Tabula),
        Tensor => from == Lista,
        Tabula | Nihil => false,
    }
}
