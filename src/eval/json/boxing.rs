//! `↦` between `valor` and the other types (docs/language.md § 6, "Conversions").
//!
//! Boxing (`T ↦ valor`): numbers, texts, `bivalens` and `nihil` become the JSON
//! scalar; `octeti` an array of byte values; lists, `iuncta`, sets and tensors (as
//! nested arrays, row-major) and ranges (their numbers) arrays; maps and records
//! objects (a record's fields by name, a map's non-text keys by their display form). A
//! NaN or infinity, a function and `vacuum` have no JSON form: the conversion fails.
//!
//! Unboxing (`valor ↦ T`) matches the JSON kind exactly: `numerus` takes an integer,
//! `fractus` any number, `textus` a string, `bivalens` a boolean, `nihil` null; `lista`,
//! `iuncta`, `copia` and `octeti` an array; `tabula` and a `genus` an object (a record
//! ignores extra keys; a missing field takes its literal default, else `nihil` when its
//! type admits `nihil`, else the conversion fails). A failed conversion throws (catch
//! with `⇥` or `fac`).

use std::rc::Rc;

use super::{Json, Members, MAX_DEPTH};
use crate::diag::codes;
use crate::eval::display::display;
use crate::eval::machine::const_value;
use crate::eval::value::{Key, Map, Record, Set, Value};
use crate::eval::{fault, FResult, Fault};
use crate::ir::{print, Program, Ty};

fn too_deep<T>() -> FResult<T> {
    fault(
        codes::RUN_LIMIT,
        format!("a value nested more than {MAX_DEPTH} levels deep converted to or from valor"),
    )
}

/// A thrown conversion failure (the same form as src/eval/convert.rs).
fn fail<T>(what: &str, ty: &Ty, program: &Program, why: &str) -> FResult<T> {
    let mut msg = format!("cannot convert {what} to {}", print::ty(program, ty));
    if !why.is_empty() {
        msg.push_str(": ");
        msg.push_str(why);
    }
    Err(Fault::Throw(Value::text(msg)))
}

/// `v ↦ valor`.
pub(crate) fn to_json(v: &Value, program: &Program) -> FResult<Rc<Json>> {
    boxed(v, program, 0)
}

fn boxed(v: &Value, program: &Program, depth: usize) -> FResult<Rc<Json>> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    let no = |why: &str| fail(v.type_name(), &Ty::Json { doc: false }, program, why);
    let array = |items: &mut dyn Iterator<Item = &Value>| -> FResult<Rc<Json>> {
        let out: FResult<Vec<Rc<Json>>> = items.map(|x| boxed(x, program, depth + 1)).collect();
        Ok(Rc::new(Json::Array(out?)))
    };
    Ok(Rc::new(match v {
        Value::Json(j) => return Ok(j.clone()),
        Value::Nihil => Json::Null,
        Value::Bool(b) => Json::Bool(*b),
        Value::Int(i) => Json::Int(*i),
        Value::Float(f) if f.is_finite() => Json::Float(*f),
        Value::Float(_) => return no("NaN and infinities have no JSON form"),
        Value::Text(t) => Json::Text(t.to_string()),
        Value::Bytes(b) => Json::Array(b.iter().map(|x| Rc::new(Json::Int(*x as i64))).collect()),
        Value::List(items) | Value::Tuple(items) => return array(&mut items.iter()),
        Value::Set(s) => Json::Array(s.iter().map(key_json).collect()),
        Value::Map(m) => {
            let mut out = Members::default();
            for (k, x) in m.iter() {
                let name = match k {
                    Key::Text(t) => t.to_string(),
                    other => display(&other.to_value(), program),
                };
                out.insert(name, boxed(x, program, depth + 1)?);
            }
            Json::Object(out)
        }
        Value::Record(r) => {
            let mut out = Members::default();
            let genus = program.genera.get(r.genus.0 as usize);
            for (i, x) in r.fields.iter().enumerate() {
                let name = genus
                    .and_then(|g| g.fields.get(i))
                    .map_or_else(|| i.to_string(), |f| f.name.clone());
                out.insert(name, boxed(x, program, depth + 1)?);
            }
            Json::Object(out)
        }
        Value::Tensor(t) => {
            let data = t.values();
            if data.iter().any(|x| !x.is_finite()) {
                return no("NaN and infinities have no JSON form");
            }
            tensor_json(t.shape(), &data)
        }
        Value::Interval(r) => return array(&mut r.items()?.iter()),
        Value::Func(_) | Value::Vacuum => return no(""),
    }))
}

fn key_json(k: &Key) -> Rc<Json> {
    Rc::new(match k {
        Key::Int(i) => Json::Int(*i),
        Key::Text(t) => Json::Text(t.to_string()),
        Key::Bool(b) => Json::Bool(*b),
    })
}

/// Nested arrays of a row-major block (a rank-0 tensor is its number).
fn tensor_json(shape: &[usize], data: &[f64]) -> Json {
    match shape.split_first() {
        None => Json::Float(data.first().copied().unwrap_or(0.0)),
        Some((&n, rest)) => {
            let step = rest.iter().product::<usize>();
            Json::Array(
                (0..n)
                    .map(|i| Rc::new(tensor_json(rest, &data[i * step..(i + 1) * step])))
                    .collect(),
            )
        }
    }
}

/// `valor ↦ ty`.
pub(crate) fn from_json(j: &Rc<Json>, ty: &Ty, program: &Program) -> FResult<Value> {
    unboxed(j, ty, program, 0)
}

fn unboxed(j: &Rc<Json>, ty: &Ty, program: &Program, depth: usize) -> FResult<Value> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    let what = format!("valor ({})", j.kind());
    let no = |why: &str| fail(&what, ty, program, why);
    let array = |e: &Ty| -> FResult<Vec<Value>> {
        match &**j {
            Json::Array(items) => items
                .iter()
                .map(|x| unboxed(x, e, program, depth + 1))
                .collect(),
            _ => fail(&what, ty, program, ""),
        }
    };
    match (ty, &**j) {
        (Ty::Any | Ty::Json { .. }, _) => Ok(Value::Json(j.clone())),
        (Ty::Vacuum, _) => Ok(Value::Vacuum),
        (Ty::Int, Json::Int(i)) => Ok(Value::Int(*i)),
        (Ty::Float, Json::Int(i)) => Ok(Value::Float(*i as f64)),
        (Ty::Float, Json::Float(f)) => Ok(Value::Float(*f)),
        (Ty::Bool, Json::Bool(b)) => Ok(Value::Bool(*b)),
        (Ty::Text, Json::Text(t)) => Ok(Value::text(t.clone())),
        (Ty::Nihil, Json::Null) => Ok(Value::Nihil),
        (Ty::List(e), _) => Ok(Value::list(array(e)?)),
        (Ty::Tuple(ts), Json::Array(items)) if ts.len() == items.len() => {
            let out: FResult<Vec<Value>> = items
                .iter()
                .zip(ts)
                .map(|(x, t)| unboxed(x, t, program, depth + 1))
                .collect();
            Ok(Value::Tuple(Rc::new(out?)))
        }
        (Ty::Bytes, _) => {
            let items = array(&Ty::Int)?;
            let bytes: Option<Vec<u8>> = items
                .iter()
                .map(|x| match x {
                    Value::Int(i) => u8::try_from(*i).ok(),
                    _ => None,
                })
                .collect();
            match bytes {
                Some(b) => Ok(Value::Bytes(Rc::new(b))),
                None => no("an element is not a byte (0 to 255)"),
            }
        }
        (Ty::Set(e), _) => {
            let mut out = Set::default();
            for x in array(e)? {
                match Key::from_value(&x) {
                    Some(k) => {
                        out.insert(k);
                    }
                    None => return no("a copia element must be numerus, textus or bivalens"),
                }
            }
            Ok(Value::Set(Rc::new(out)))
        }
        (Ty::Map(k, v), Json::Object(members)) => {
            let mut out = Map::default();
            for (name, x) in members {
                let key = match &**k {
                    Ty::Any | Ty::Text => Key::Text(Rc::new(name.clone())),
                    Ty::Int => match name.parse::<i64>() {
                        Ok(i) => Key::Int(i),
                        Err(_) => return no(&format!("the key {name:?} is not a numerus")),
                    },
                    _ => return no("the keys of a tabula from valor are textus or numerus"),
                };
                out.insert(key, unboxed(x, v, program, depth + 1)?);
            }
            Ok(Value::Map(Rc::new(out)))
        }
        (Ty::Record(g), Json::Object(members)) => {
            let Some(genus) = program.genera.get(g.0 as usize) else {
                return no("");
            };
            let literals = program.literal_defaults.get(g.0 as usize);
            let mut fields = Vec::with_capacity(genus.fields.len());
            for (i, f) in genus.fields.iter().enumerate() {
                let literal = literals.and_then(|l| l.get(i)).and_then(Option::as_ref);
                match members.get(&f.name) {
                    Some(x) => fields.push(unboxed(x, &f.ty, program, depth + 1)?),
                    None if literal.is_some() => {
                        fields.push(literal.map_or(Value::Nihil, const_value))
                    }
                    None if admits_nihil(&f.ty) => fields.push(Value::Nihil),
                    None => return no(&format!("the field `{}` is missing", f.name)),
                }
            }
            Ok(Value::Record(Rc::new(Record { genus: *g, fields })))
        }
        (Ty::Union(members), _) => {
            if matches!(**j, Json::Null) && members.contains(&Ty::Nihil) {
                return Ok(Value::Nihil);
            }
            for m in members {
                if let Ok(v) = unboxed(j, m, program, depth) {
                    return Ok(v);
                }
            }
            no("")
        }
        (Ty::Tensor { .. }, _) => no("convert to a lista first (`↦ lista<fractus> ↦ tensor<…>`)"),
        _ => no(""),
    }
}

fn admits_nihil(t: &Ty) -> bool {
    match t {
        Ty::Nihil | Ty::Any => true,
        Ty::Union(ms) => ms.iter().any(admits_nihil),
        _ => false,
    }
}
