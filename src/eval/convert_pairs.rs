//! The run-time side of the conversion matrix (src/ir/conversion.rs): the pairs that
//! the older arms of `convert` (src/eval/convert.rs) do not handle, and the rejection
//! of a pair the matrix does not define when the value's type was not known
//! statically. `convert` asks [`convert`] first; `None` means "not a matrix pair of
//! this file, use the general arms".

use std::rc::Rc;

use super::display::display;
use super::value::Value;
use super::{FResult, Fault};
use crate::ir::conversion::{verdict, Family};
use crate::ir::{print, Program, Ty};

fn family(v: &Value) -> Option<Family> {
    Some(match v {
        Value::Int(_) => Family::Numerus,
        Value::Float(_) => Family::Fractus,
        Value::Bool(_) => Family::Bivalens,
        Value::Text(_) => Family::Textus,
        Value::Bytes(_) => Family::Octeti,
        Value::List(_) => Family::Lista,
        Value::Map(_) => Family::Tabula,
        Value::Tensor(_) => Family::Tensor,
        Value::Nihil => Family::Nihil,
        _ => return None,
    })
}

fn throw(msg: String) -> FResult<Value> {
    Err(Fault::Throw(Value::text(msg)))
}

/// `v ↦ ty` for a pair of the matrix handled here; `None` for the general arms.
pub(crate) fn convert(
    v: &Value,
    ty: &Ty,
    program: &Program,
    recur: super::value::Convert,
) -> Option<FResult<Value>> {
    let (from, to) = (family(v)?, Family::of(ty)?);
    if !verdict(from, to) {
        return Some(throw(format!(
            "cannot convert {} to {}: there is no conversion from {} to {}",
            shown(v, program),
            print::ty(program, ty),
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
        _ => return None,
    })
}

fn shown(v: &Value, program: &Program) -> String {
    match v {
        Value::Text(t) => format!("{:?}", t.as_str()),
        other => display(other, program),
    }
}
