//! `↦` for the data types `valor`, `copia` and `intervallum` (docs/language.md § 6),
//! hooked into src/eval/convert.rs (which hands itself in as `recur`): [`convert`] answers `None` when neither the value
//! nor the target is one of them, and the general rules apply.

use std::rc::Rc;

use super::display::display;
use super::value::Value;
use super::{FResult, Fault};
use crate::ir::{print, Program, Ty};

fn fail<T>(v: &Value, ty: &Ty, program: &Program, why: &str) -> FResult<T> {
    let mut msg = format!(
        "cannot convert {} to {}",
        v.type_name(),
        print::ty(program, ty)
    );
    if !why.is_empty() {
        msg.push_str(": ");
        msg.push_str(why);
    }
    Err(Fault::Throw(Value::text(msg)))
}

pub(crate) fn convert(
    v: &Value,
    ty: &Ty,
    program: &Program,
    recur: super::value::Convert,
) -> Option<FResult<Value>> {
    Some(match (v, ty) {
        (_, Ty::Any | Ty::Vacuum) => return None,
        (Value::Json(j), _) => super::json::boxing::from_json(j, ty, program),
        (_, Ty::Json { .. }) => super::json::boxing::to_json(v, program).map(Value::Json),
        (Value::Set(_), Ty::Set(e)) if matches!(**e, Ty::Any) => Ok(v.clone()),
        (Value::Set(s), Ty::Set(e)) => {
            super::set::from_items(&super::set::items(s), e, ty, program, recur)
        }
        (Value::List(items) | Value::Tuple(items), Ty::Set(e)) => {
            super::set::from_items(items, e, ty, program, recur)
        }
        (Value::Set(s), Ty::List(_) | Ty::Tensor { .. }) => {
            recur(&Value::list(super::set::items(s)), ty, program)
        }
        (Value::Interval(_), Ty::Interval) => Ok(v.clone()),
        (Value::Interval(r), Ty::List(_) | Ty::Tensor { .. }) => match r.items() {
            Ok(items) => recur(&Value::list(items), ty, program),
            Err(e) => Err(e),
        },
        (Value::Set(_) | Value::Interval(_), Ty::Text) => Ok(Value::text(display(v, program))),
        (Value::Set(_) | Value::Interval(_), Ty::Union(_)) => return None,
        (Value::Set(_) | Value::Interval(_), _) | (_, Ty::Set(_) | Ty::Interval) => {
            fail(v, ty, program, "")
        }
        _ => return None,
    })
}

/// The values `itera ex` walks in a set or a JSON array (`None` for other values;
/// ranges are walked without materialising, src/eval/loops.rs).
pub(crate) fn each(v: &Value) -> Option<Vec<Value>> {
    match v {
        Value::Set(s) => Some(super::set::items(s)),
        Value::Json(j) => match &**j {
            super::json::Json::Array(a) => {
                Some(a.iter().map(|x| Value::Json(Rc::clone(x))).collect())
            }
            _ => None,
        },
        _ => None,
    }
}
