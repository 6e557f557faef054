//! The methods of a `valor` (docs/language.md § 7, "JSON values") and the host
//! functions behind `norma:json` (`json_solve`, `json_tempta`, `json_pange`) and
//! `norma:valor` (`valor_genus`).

use std::rc::Rc;

use super::parse::{parse, Bounds, ParseError};
use super::{write, Json};
use crate::diag::codes;
use crate::eval::value::Value;
use crate::eval::{arity, fault, FResult};
use crate::ir::Method;

/// The member at `k`: a text key of an object or a `numerus` index of an array.
fn member(j: &Json, k: &Value) -> Option<Rc<Json>> {
    match (j, k) {
        (Json::Object(m), Value::Text(t)) => m.get(t.as_str()).cloned(),
        (Json::Array(a), Value::Int(i)) => usize::try_from(*i).ok().and_then(|i| a.get(i)).cloned(),
        _ => None,
    }
}

fn len(m: Method, j: &Json) -> FResult<usize> {
    match j {
        Json::Array(a) => Ok(a.len()),
        Json::Object(o) => Ok(o.len()),
        Json::Text(t) => Ok(t.chars().count()),
        other => fault(
            codes::RUN_TYPE,
            format!("`{}` of a valor that is {}", m.name(), other.kind()),
        ),
    }
}

/// A method on a `valor`.
pub(crate) fn call(m: Method, j: &Rc<Json>, args: &[Value]) -> FResult<Value> {
    match m {
        Method::Accipe => {
            arity(m, args, 1)?;
            Ok(member(j, &args[0]).map_or(Value::Nihil, Value::Json))
        }
        Method::Habet => {
            arity(m, args, 1)?;
            Ok(Value::Bool(member(j, &args[0]).is_some()))
        }
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(len(m, j)? as i64))
        }
        Method::Vacua | Method::Nonvacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool((len(m, j)? == 0) == (m == Method::Vacua)))
        }
        Method::Claves => {
            arity(m, args, 0)?;
            match &**j {
                Json::Object(o) => Ok(Value::list(
                    o.keys().map(|k| Value::text(k.clone())).collect(),
                )),
                other => fault(
                    codes::RUN_TYPE,
                    format!("`claves` of a valor that is {}", other.kind()),
                ),
            }
        }
        _ => fault(
            codes::RUN_TYPE,
            format!("valor has no method `{}`", m.name()),
        ),
    }
}

pub(super) fn text_arg(v: &Value) -> FResult<&str> {
    match v {
        Value::Text(t) => Ok(t),
        other => fault(
            codes::RUN_TYPE,
            format!("JSON text must be a textus, found {}", other.type_name()),
        ),
    }
}

/// `json_solve(text)`: the value of a JSON text; bad text is RUN025 (a bound reached
/// is RUN012), both with the line and column in the JSON text.
pub(crate) fn solve(arg: &Value) -> FResult<Value> {
    solved("JSON", parse(text_arg(arg)?, Bounds::current()))
}

/// `json_tempta(text)`: the value of a JSON text, or `nihil` when it does not parse.
pub(crate) fn tempta(arg: &Value) -> FResult<Value> {
    tried("JSON", parse(text_arg(arg)?, Bounds::current()))
}

/// A parsed `kind` text (JSON, TOML) as a `valor`; a failure is RUN025 (RUN012 for a
/// bound reached) with the line and column in the text.
pub(crate) fn solved(kind: &str, r: Result<Json, ParseError>) -> FResult<Value> {
    match r {
        Ok(j) => Ok(Value::Json(Rc::new(j))),
        Err(e) => fault(
            if e.limit {
                codes::RUN_LIMIT
            } else {
                codes::RUN_JSON
            },
            format!("{kind} text at {}:{}: {}", e.line, e.col, e.msg),
        ),
    }
}

/// As [`solved`], but text that does not parse is `nihil` (a bound reached is still
/// RUN012).
pub(crate) fn tried(kind: &str, r: Result<Json, ParseError>) -> FResult<Value> {
    match r {
        Err(e) if !e.limit => Ok(Value::Nihil),
        r => solved(kind, r),
    }
}

/// `json_pange(v)`: the compact JSON text of a `valor`.
pub(crate) fn pange(arg: &Value) -> FResult<Value> {
    let Value::Json(j) = arg else {
        return fault(
            codes::RUN_TYPE,
            format!("json_pange needs a valor, found {}", arg.type_name()),
        );
    };
    let mut out = String::new();
    write(&mut out, j, false, crate::eval::config::text_limit());
    crate::eval::display::within_text_limit(&out)?;
    Ok(Value::text(out))
}

/// `valor_genus(v)`: the kind of a `valor` as the name of the type it unboxes to:
/// `nihil` (null), `bivalens`, `numerus` (an integer), `fractus` (any other number),
/// `textus`, `lista` (an array), `tabula` (an object).
pub(crate) fn genus(arg: &Value) -> FResult<Value> {
    let Value::Json(j) = arg else {
        return fault(
            codes::RUN_TYPE,
            format!("valor_genus needs a valor, found {}", arg.type_name()),
        );
    };
    Ok(Value::text(match &**j {
        Json::Null => "nihil",
        Json::Bool(_) => "bivalens",
        Json::Int(_) => "numerus",
        Json::Float(_) => "fractus",
        Json::Text(_) => "textus",
        Json::Array(_) => "lista",
        Json::Object(_) => "tabula",
    }))
}
