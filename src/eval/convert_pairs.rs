//! The run-time side of the conversion matrix (src/ir/conversion.rs): the refusal of a
//! pair the matrix does not define when the value's type was not known statically,
//! and the pairs that the older arms of `convert` (src/eval/convert.rs, and
//! src/eval/data.rs for `valor`, `copia` and `intervallum`) do not handle. `convert`
//! asks [`convert`] first; `None` means "not a pair of this file, use the other arms".
//!
//! The pairs the language defines but for which no value of the source has an image in
//! the target (a number into a collection, a collection into a number) fail on every
//! value, with a message saying what to write instead (docs/language.md §
//! "Conversions").

use std::rc::Rc;

use super::display::display;
use super::value::Value;
use super::{FResult, Fault};
use crate::ir::conversion::{verdict, Family};
use crate::ir::{print, Program, Ty};

/// The family of a value at run time (`valor` for every JSON value: a document and a
/// `valor` hold the same values).
fn family(v: &Value) -> Option<Family> {
    Some(match v {
        Value::Int(_) => Family::Numerus,
        Value::Float(_) => Family::Fractus,
        Value::Bool(_) => Family::Bivalens,
        Value::Text(_) => Family::Textus,
        Value::Bytes(_) => Family::Octeti,
        Value::Json(_) => Family::Valor,
        Value::List(_) => Family::Lista,
        Value::Map(_) => Family::Tabula,
        Value::Set(_) => Family::Copia,
        Value::Interval(_) => Family::Intervallum,
        Value::Tensor(_) => Family::Tensor,
        Value::Nihil => Family::Nihil,
        _ => return None,
    })
}

fn throw(msg: String) -> FResult<Value> {
    Err(Fault::Throw(Value::text(msg)))
}

/// `v ↦ ty` for a pair of the matrix handled here; `None` for the other arms.
pub(crate) fn convert(
    v: &Value,
    ty: &Ty,
    program: &Program,
    recur: super::value::Convert,
) -> Option<FResult<Value>> {
    let (from, to) = (family(v)?, Family::of(ty)?);
    let cannot = |why: &str| {
        throw(format!(
            "cannot convert {} to {}: {why}",
            shown(v, program),
            print::ty(program, ty)
        ))
    };
    if !verdict(from, to) {
        return Some(cannot(&format!(
            "there is no conversion from {} to {}",
            from.name(),
            to.name()
        )));
    }
    Some(match (v, ty) {
        (Value::Int(i), Ty::Bool) => Ok(Value::Bool(*i != 0)),
        (Value::Float(f), Ty::Bool) => Ok(Value::Bool(*f != 0.0)),
        (Value::Text(t), Ty::Bool) => Ok(Value::Bool(!t.is_empty())),
        (Value::Bool(b), Ty::Int) => Ok(Value::Int(i64::from(*b))),
        (Value::Bool(b), Ty::Float) => Ok(Value::Float(if *b { 1.0 } else { 0.0 })),
        (Value::Text(t), Ty::Bytes) => Ok(Value::Bytes(Rc::new(t.as_bytes().to_vec()))),
        (Value::Bytes(b), Ty::Text) => match std::str::from_utf8(b) {
            Ok(s) => Ok(Value::text(s)),
            Err(e) => throw(format!(
                "cannot convert {} to textus: not UTF-8 (byte {})",
                shown(v, program),
                e.valid_up_to()
            )),
        },
        // The text a `valor` holds, else its display form (a number, an object, …).
        (Value::Json(j), Ty::Text) => Ok(match &**j {
            super::json::Json::Text(t) => Value::text(t.as_str()),
            _ => Value::text(display(v, program)),
        }),
        (Value::List(_) | Value::Map(_) | Value::Tensor(_), Ty::Text) => {
            Ok(Value::text(display(v, program)))
        }
        (Value::Map(m), Ty::List(elem)) => {
            let keys = Value::list(m.keys().map(|k| k.to_value()).collect());
            if matches!(**elem, Ty::Any) {
                Ok(keys)
            } else {
                recur(&keys, ty, program)
            }
        }
        // Truthiness of a collection: it is not empty.
        (
            Value::List(_) | Value::Map(_) | Value::Set(_) | Value::Interval(_) | Value::Tensor(_),
            Ty::Bool,
        ) => Ok(Value::Bool(!is_empty(v))),
        // A text's elements are its characters: one-character texts, or their Unicode
        // scalar values as numbers (what `t[i]` gives).
        (Value::Text(t), Ty::List(_) | Ty::Set(_) | Ty::Tensor { .. }) => {
            let elem = match ty {
                Ty::List(e) | Ty::Set(e) => &**e,
                _ => &Ty::Int,
            };
            let items: Vec<Value> = if matches!(elem, Ty::Text) {
                t.chars().map(|c| Value::text(c.to_string())).collect()
            } else {
                t.chars()
                    .map(|c| Value::Int(i64::from(u32::from(c))))
                    .collect()
            };
            recur(&Value::list(items), ty, program)
        }
        // Bytes as the numbers 0 to 255.
        (Value::Bytes(b), Ty::Set(_) | Ty::Tensor { .. }) => {
            let items = b.iter().map(|x| Value::Int(i64::from(*x))).collect();
            recur(&Value::list(items), ty, program)
        }
        // The elements of a collection as bytes: each an integer from 0 to 255.
        (Value::List(_) | Value::Set(_) | Value::Interval(_) | Value::Tensor(_), Ty::Bytes) => {
            let items = match elements(v) {
                Ok(items) => items,
                Err(e) => return Some(Err(e)),
            };
            let bytes: Option<Vec<u8>> = items.iter().map(byte_of).collect();
            match bytes {
                Some(b) => Ok(Value::Bytes(Rc::new(b))),
                None => cannot("every element must be an integer from 0 to 255"),
            }
        }
        (Value::Interval(_), Ty::Set(_)) => match elements(v) {
            Ok(items) => recur(&Value::list(items), ty, program),
            Err(e) => Err(e),
        },
        (Value::Json(_), Ty::Tensor { .. }) => match plain(v) {
            Some(l) => recur(&l, ty, program),
            None => cannot("the valor is not an array of numbers"),
        },
        // The pairs the language defines with no image for any value.
        (
            Value::Int(_) | Value::Float(_) | Value::Bool(_),
            Ty::List(_) | Ty::Set(_) | Ty::Map(..) | Ty::Tensor { .. },
        ) => cannot("a single value is not a collection: write a literal, `[x]`"),
        (Value::Int(_), Ty::Interval) => {
            cannot("a range is written `a‥b`; `n ↦ a‥b` clamps a number into one")
        }
        (
            Value::List(_) | Value::Map(_) | Value::Set(_) | Value::Interval(_),
            Ty::Int | Ty::Float,
        ) => cannot("a collection has no numeric value: take an element or its `longitudo()`"),
        (Value::Text(_) | Value::Bytes(_) | Value::Interval(_), Ty::Map(..)) => {
            cannot("a tabula is built from a literal, a valor object or with its methods")
        }
        (Value::Map(_), Ty::Bytes) => cannot("a tabula has no byte form"),
        _ => return None,
    })
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::List(items) => items.is_empty(),
        Value::Map(m) => m.is_empty(),
        Value::Set(s) => s.is_empty(),
        Value::Interval(r) => r.len() == 0,
        Value::Tensor(t) => t.numel() == 0,
        _ => false,
    }
}

/// The elements of a list, set, range or tensor (row-major), as values.
fn elements(v: &Value) -> FResult<Vec<Value>> {
    Ok(match v {
        Value::List(items) => items.to_vec(),
        Value::Set(s) => super::set::items(s),
        Value::Interval(r) => r.items()?,
        Value::Tensor(t) => t.values().iter().map(|x| Value::Float(*x)).collect(),
        _ => Vec::new(),
    })
}

fn byte_of(v: &Value) -> Option<u8> {
    match v {
        Value::Int(i) => u8::try_from(*i).ok(),
        Value::Float(f) if f.fract() == 0.0 && (0.0..=255.0).contains(f) => Some(*f as u8),
        _ => None,
    }
}

/// A JSON array of numbers (nested to any depth) as nested lists of numbers; `None`
/// for anything else.
fn plain(v: &Value) -> Option<Value> {
    fn go(j: &super::json::Json) -> Option<Value> {
        use super::json::Json;
        Some(match j {
            Json::Int(i) => Value::Int(*i),
            Json::Float(f) => Value::Float(*f),
            Json::Array(items) => {
                let out: Option<Vec<Value>> = items.iter().map(|x| go(x)).collect();
                Value::list(out?)
            }
            _ => return None,
        })
    }
    match v {
        Value::Json(j) if matches!(**j, super::json::Json::Array(_)) => go(j),
        _ => None,
    }
}

fn shown(v: &Value, program: &Program) -> String {
    match v {
        Value::Text(t) => format!("{:?}", t.as_str()),
        other => display(other, program),
    }
}
