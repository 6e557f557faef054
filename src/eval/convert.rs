//! `e ↦ T` (docs/language.md § 6), declared-type coercion (§ 3) and `e est T`.
//!
//! A failed conversion is a *thrown* text message (`Fault::Throw`), which a
//! `fac … cape` can catch; uncaught it becomes RUN005.

use std::rc::Rc;

use super::display::display;
use super::value::Value;
use super::{FResult, Fault};
use crate::ir::{print, IsTest, Program, Ty};

fn fail<T>(v: &Value, ty: &Ty, program: &Program, why: &str) -> FResult<T> {
    let shown = match v {
        Value::Text(t) => format!("{:?}", t.as_str()),
        other => display(other, program),
    };
    let mut msg = format!("cannot convert {shown} to {}", print::ty(program, ty));
    if !why.is_empty() {
        msg.push_str(": ");
        msg.push_str(why);
    }
    Err(Fault::Throw(Value::text(msg)))
}

/// `v ↦ ty`.
pub(crate) fn convert(v: &Value, ty: &Ty, program: &Program) -> FResult<Value> {
    // The matrix of src/ir/conversion.rs (its refusals, and the pairs the arms below
    // do not cover), then `valor`, `copia` and `intervallum` (src/eval/data.rs).
    if let Some(r) = super::convert_pairs::convert(v, ty, program, convert) {
        return r;
    }
    if let Some(r) = super::data::convert(v, ty, program, convert) {
        return r;
    }
    match ty {
        Ty::Any => Ok(v.clone()),
        Ty::Vacuum => Ok(Value::Vacuum),
        Ty::Text => match v {
            Value::Text(_) => Ok(v.clone()),
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Nihil => {
                Ok(Value::text(display(v, program)))
            }
            _ => fail(v, ty, program, ""),
        },
        Ty::Int => match v {
            Value::Int(_) => Ok(v.clone()),
            Value::Float(f) => {
                let t = f.trunc();
                if f.is_finite()
                    && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&t)
                {
                    Ok(Value::Int(t as i64))
                } else {
                    fail(v, ty, program, "out of range")
                }
            }
            Value::Text(t) => match t.parse::<i64>() {
                Ok(i) => Ok(Value::Int(i)),
                Err(_) => fail(v, ty, program, ""),
            },
            _ => fail(v, ty, program, ""),
        },
        Ty::Float => match v {
            Value::Float(_) => Ok(v.clone()),
            Value::Int(i) => Ok(Value::Float(*i as f64)),
            Value::Text(t) => match t.parse::<f64>() {
                Ok(f) => Ok(Value::Float(f)),
                Err(_) => fail(v, ty, program, ""),
            },
            _ => fail(v, ty, program, ""),
        },
        Ty::List(elem) if matches!(v, Value::Tensor(_)) => match v {
            // Row-major elements, each converted to the list's element type
            // (`↦ lista<numerus>` gives numerus values, truncated as `↦ numerus` does).
            Value::Tensor(t) => match **elem {
                Ty::Any | Ty::Float => Ok(super::tensors::to_list(t)),
                _ => convert(&super::tensors::to_list(t), ty, program),
            },
            _ => fail(v, ty, program, ""),
        },
        Ty::List(elem) => match v {
            Value::List(items) => {
                if matches!(**elem, Ty::Any) {
                    return Ok(v.clone());
                }
                let out: FResult<Vec<Value>> =
                    items.iter().map(|x| convert(x, elem, program)).collect();
                Ok(Value::list(out?))
            }
            _ => fail(v, ty, program, ""),
        },
        Ty::Tensor { shape, wide, .. } => match v {
            Value::Tensor(t) => match shape {
                Some(dims) if dims.iter().all(|d| d.is_some()) => {
                    let want: Vec<usize> = dims.iter().map(|d| d.unwrap_or(0) as usize).collect();
                    if t.shape() == want.as_slice() {
                        Ok(v.clone())
                    } else {
                        match super::tensors::from_list(v, Some(dims), *wide) {
                            Ok(t) => Ok(t),
                            Err(Fault::Error(_, why)) => fail(v, ty, program, &why),
                            Err(other) => Err(other),
                        }
                    }
                }
                _ => Ok(v.clone()),
            },
            Value::List(_) => match super::tensors::from_list(v, shape.as_deref(), *wide) {
                Ok(t) => Ok(t),
                Err(Fault::Error(_, why)) => fail(v, ty, program, &why),
                Err(other) => Err(other),
            },
            _ => fail(v, ty, program, ""),
        },
        Ty::Union(members) => {
            if is_type(v, ty) {
                return Ok(v.clone());
            }
            for m in members {
                if let Ok(x) = convert(v, m, program) {
                    return Ok(x);
                }
            }
            fail(v, ty, program, "")
        }
        _ => {
            if is_type(v, ty) {
                Ok(v.clone())
            } else {
                fail(v, ty, program, "")
            }
        }
    }
}

/// Declared-type coercion: Int → Float where `ty` is a float type, element-wise for
/// `lista<fractus>`; anything else passes through. Never fails.
pub(crate) fn coerce(v: Value, ty: &Ty) -> Value {
    match (ty, v) {
        (Ty::Float, Value::Int(i)) => Value::Float(i as f64),
        (Ty::List(elem), Value::List(mut items))
            if matches!(**elem, Ty::Float | Ty::List(_))
                && items
                    .iter()
                    .any(|x| matches!(x, Value::Int(_) | Value::List(_))) =>
        {
            for x in Rc::make_mut(&mut items).iter_mut() {
                *x = coerce(std::mem::take(x), elem);
            }
            Value::List(items)
        }
        (Ty::Union(members), v) => {
            if members.iter().any(|m| is_type(&v, m)) {
                v
            } else if let Some(m) = members.iter().find(|m| matches!(m, Ty::Float)) {
                coerce(v, m)
            } else {
                v
            }
        }
        (_, v) => v,
    }
}

/// `v est test`.
pub(crate) fn is(v: &Value, test: &IsTest) -> bool {
    match test {
        IsTest::Nihil => matches!(v, Value::Nihil),
        IsTest::Verum => matches!(v, Value::Bool(true)),
        IsTest::Falsum => matches!(v, Value::Bool(false)),
        IsTest::Type(t) => is_type(v, t),
    }
}

/// Whether `v` has the (shallowly checked) type `ty`.
pub(crate) fn is_type(v: &Value, ty: &Ty) -> bool {
    match ty {
        Ty::Any => true,
        Ty::Int => matches!(v, Value::Int(_)),
        Ty::Float => matches!(v, Value::Float(_)),
        Ty::Bool => matches!(v, Value::Bool(_)),
        Ty::Text => matches!(v, Value::Text(_)),
        Ty::Bytes => matches!(v, Value::Bytes(_)),
        Ty::Nihil => matches!(v, Value::Nihil),
        Ty::Vacuum => matches!(v, Value::Vacuum),
        Ty::List(_) => matches!(v, Value::List(_)),
        Ty::Map(_, _) => matches!(v, Value::Map(_)),
        Ty::Tuple(_) => matches!(v, Value::Tuple(_)),
        Ty::Record(g) => matches!(v, Value::Record(r) if r.genus == *g),
        Ty::Func(_, _) => matches!(v, Value::Func(_)),
        Ty::Tensor { shape, .. } => match (v, shape) {
            (Value::Tensor(t), Some(dims)) => {
                t.rank() == dims.len()
                    && t.shape()
                        .iter()
                        .zip(dims)
                        .all(|(a, d)| d.is_none_or(|d| d as usize == *a))
            }
            (Value::Tensor(_), None) => true,
            _ => false,
        },
        Ty::Union(ms) => ms.iter().any(|m| is_type(v, m)),
        Ty::Json { .. } => matches!(v, Value::Json(_)),
        Ty::Set(_) => matches!(v, Value::Set(_)),
        Ty::Interval => matches!(v, Value::Interval(_)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(v: Value, ty: Ty) -> Result<String, String> {
        let p = Program::default();
        match convert(&v, &ty, &p) {
            Ok(x) => Ok(display(&x, &p)),
            Err(Fault::Throw(m)) => Err(display(&m, &p)),
            Err(Fault::Error(c, m)) => Err(format!("{}: {m}", c.id)),
            Err(Fault::Exit(n)) => Err(format!("exit {n}")),
        }
    }

    #[test]
    fn conversions() {
        assert_eq!(conv(Value::Float(2.0), Ty::Text).unwrap(), "2.0");
        assert_eq!(conv(Value::Int(-5), Ty::Text).unwrap(), "-5");
        assert_eq!(conv(Value::text("42"), Ty::Int).unwrap(), "42");
        assert_eq!(conv(Value::text("2.5"), Ty::Float).unwrap(), "2.5");
        assert_eq!(conv(Value::text("1e3"), Ty::Float).unwrap(), "1000.0");
        assert_eq!(
            conv(Value::text(" 42"), Ty::Int).unwrap_err(),
            "cannot convert \" 42\" to numerus"
        );
        assert_eq!(conv(Value::Float(-2.7), Ty::Int).unwrap(), "-2");
        assert!(conv(Value::Float(f64::NAN), Ty::Int).is_err());
        assert_eq!(conv(Value::Int(3), Ty::Float).unwrap(), "3.0");
        assert_eq!(conv(Value::list(vec![]), Ty::Vacuum).unwrap(), "vacuum");
    }

    #[test]
    fn coercion() {
        let l = coerce(
            Value::list(vec![Value::Int(1), Value::Float(2.5)]),
            &Ty::List(Box::new(Ty::Float)),
        );
        assert_eq!(display(&l, &Program::default()), "[1.0, 2.5]");
        assert!(matches!(coerce(Value::Int(1), &Ty::Int), Value::Int(1)));
    }
}
