//! Built-in methods (docs/language.md § 7). Text indices count Unicode scalar values.
//!
//! Choices: `sectio(a, b)` requires `0 ≤ a ≤ b ≤ len` (else RUN001); `detrahe()` on
//! an empty list yields `nihil`; `dele(k)` yields whether the key was present;
//! `potentia` of two Ints is an Int when the exponent is ≥ 0 (checked), otherwise a
//! Float; `maximus`/`minimus` of two Ints stay Int, with a Float they promote.

use std::rc::Rc;

use super::arity;
use super::ops::key_of;
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::Method;

#[cold]
#[inline(never)]
fn no_method<T>(m: Method, recv: &Value) -> FResult<T> {
    fault(
        codes::RUN_TYPE,
        format!("{} has no method `{}`", recv.type_name(), m.name()),
    )
}

fn int_arg(m: Method, v: &Value) -> FResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a numerus argument, found {}",
                m.name(),
                other.type_name()
            ),
        ),
    }
}

fn num_arg(m: Method, v: &Value) -> FResult<f64> {
    match v.as_f64() {
        Some(f) => Ok(f),
        None => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a number argument, found {}",
                m.name(),
                v.type_name()
            ),
        ),
    }
}

fn text_arg(m: Method, v: &Value) -> FResult<&str> {
    match v {
        Value::Text(t) => Ok(t),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a textus argument, found {}",
                m.name(),
                other.type_name()
            ),
        ),
    }
}

/// `[a, b)` bounds for `sectio`.
fn range(m: Method, args: &[Value], len: usize) -> FResult<(usize, usize)> {
    arity(m, args, 2)?;
    let a = int_arg(m, &args[0])?;
    let b = int_arg(m, &args[1])?;
    if a < 0 || b < a || b as u64 > len as u64 {
        return fault(
            codes::RUN_INDEX,
            format!("sectio({a}, {b}) is out of range for length {len}"),
        );
    }
    Ok((a as usize, b as usize))
}

/// Methods lists and tensors share: `longitudo` (the rank, as upstream), `accipe`
/// (an element or `nihil`), `sectio` (rows `[a, b)`).
fn tensor_method(
    m: Method,
    recv: &Value,
    t: &crate::tensor::Tensor,
    args: &mut [Value],
) -> FResult<Value> {
    use crate::ir::ops::Op;
    match m {
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(t.rank() as i64))
        }
        Method::Accipe => {
            arity(m, args, 1)?;
            super::tensors::accipe(t, &args[0])
        }
        Method::Sectio => {
            arity(m, args, 2)?;
            super::tensors::apply(Op::Sectio, &[recv, &args[0], &args[1]])
        }
        _ => no_method(m, recv),
    }
}

/// A non-mutating method (mutating ones are applied to a copy of the receiver).
pub(crate) fn call(m: Method, recv: &Value, args: &mut [Value]) -> FResult<Value> {
    if m.mutates() {
        let mut copy = recv.clone();
        return call_mut(m, &mut copy, args);
    }
    if let Method::TextSlice { inclusive } = m {
        return super::slice::text_slice(recv, args, inclusive);
    }
    if let Method::Interval { inclusive } = m {
        arity(m, args, 1)?;
        return super::interval::make(recv, &args[0], inclusive);
    }
    if m == Method::Clamp {
        arity(m, args, 1)?;
        return super::interval::clamp(recv, &args[0]);
    }
    match recv {
        Value::Json(j) => super::json::methods::call(m, j, args),
        Value::Set(s) => super::set::call(m, s, args),
        Value::Interval(r) => super::interval::call(m, r, args),
        Value::Tensor(t) => tensor_method(m, recv, t, args),
        Value::List(items) | Value::Tuple(items) => list_method(m, recv, items, args),
        Value::Text(t) => text_method(m, recv, t, args),
        Value::Map(map) => match m {
            Method::Accipe => {
                arity(m, args, 1)?;
                Ok(map.get(&key_of(&args[0])?).cloned().unwrap_or(Value::Nihil))
            }
            Method::Habet => {
                arity(m, args, 1)?;
                Ok(Value::Bool(map.contains_key(&key_of(&args[0])?)))
            }
            Method::Claves => {
                arity(m, args, 0)?;
                Ok(Value::list(map.keys().map(|k| k.to_value()).collect()))
            }
            Method::Longitudo => {
                arity(m, args, 0)?;
                Ok(Value::Int(map.len() as i64))
            }
            Method::Vacua => {
                arity(m, args, 0)?;
                Ok(Value::Bool(map.is_empty()))
            }
            Method::Nonvacua => {
                arity(m, args, 0)?;
                Ok(Value::Bool(!map.is_empty()))
            }
            _ => no_method(m, recv),
        },
        Value::Int(_) | Value::Float(_) => number_method(m, recv, args),
        Value::Bytes(b) => match m {
            Method::Longitudo => {
                arity(m, args, 0)?;
                Ok(Value::Int(b.len() as i64))
            }
            Method::Accipe => {
                arity(m, args, 1)?;
                let i = int_arg(m, &args[0])?;
                Ok(usize::try_from(i)
                    .ok()
                    .and_then(|i| b.get(i))
                    .map_or(Value::Nihil, |x| Value::Int(*x as i64)))
            }
            _ => no_method(m, recv),
        },
        _ => no_method(m, recv),
    }
}

fn list_method(m: Method, recv: &Value, items: &[Value], args: &[Value]) -> FResult<Value> {
    match m {
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(items.len() as i64))
        }
        Method::Accipe => {
            arity(m, args, 1)?;
            let i = int_arg(m, &args[0])?;
            Ok(usize::try_from(i)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .unwrap_or(Value::Nihil))
        }
        Method::Primus => {
            arity(m, args, 0)?;
            Ok(items.first().cloned().unwrap_or(Value::Nihil))
        }
        Method::Ultimus => {
            arity(m, args, 0)?;
            Ok(items.last().cloned().unwrap_or(Value::Nihil))
        }
        Method::Sectio => {
            let (a, b) = range(m, args, items.len())?;
            Ok(Value::list(items[a..b].to_vec()))
        }
        Method::Vacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(items.is_empty()))
        }
        Method::Nonvacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(!items.is_empty()))
        }
        Method::Inverte => {
            arity(m, args, 0)?;
            Ok(Value::list(items.iter().rev().cloned().collect()))
        }
        Method::Continet => {
            arity(m, args, 1)?;
            Ok(Value::Bool(items.iter().any(|x| x.deep_eq(&args[0]))))
        }
        _ => no_method(m, recv),
    }
}

fn text_method(m: Method, recv: &Value, t: &str, args: &[Value]) -> FResult<Value> {
    match m {
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(t.chars().count() as i64))
        }
        Method::Sectio => {
            let (a, b) = range(m, args, t.chars().count())?;
            Ok(Value::text(
                t.chars().skip(a).take(b - a).collect::<String>(),
            ))
        }
        Method::Continet => {
            arity(m, args, 1)?;
            Ok(Value::Bool(t.contains(text_arg(m, &args[0])?)))
        }
        Method::Initium => {
            arity(m, args, 1)?;
            Ok(Value::Bool(t.starts_with(text_arg(m, &args[0])?)))
        }
        Method::Finis => {
            arity(m, args, 1)?;
            Ok(Value::Bool(t.ends_with(text_arg(m, &args[0])?)))
        }
        Method::Accipe => {
            arity(m, args, 1)?;
            let i = int_arg(m, &args[0])?;
            Ok(usize::try_from(i)
                .ok()
                .and_then(|i| t.chars().nth(i))
                .map_or(Value::Nihil, |c| Value::text(c.to_string())))
        }
        Method::Minuscula => {
            arity(m, args, 0)?;
            Ok(Value::text(t.to_lowercase()))
        }
        Method::Divide => {
            arity(m, args, 1)?;
            match &args[0] {
                Value::Text(sep) if !sep.is_empty() => Ok(Value::list(
                    t.split(sep.as_str()).map(Value::text).collect(),
                )),
                Value::Text(_) => fault(
                    codes::RUN_TYPE,
                    "`divide` needs a separator that is not empty",
                ),
                other => fault(
                    codes::RUN_TYPE,
                    format!(
                        "`divide` takes a textus separator, found {}",
                        other.type_name()
                    ),
                ),
            }
        }
        Method::Recide => {
            arity(m, args, 0)?;
            // Unicode White_Space at both ends, as Rust's `str::trim`.
            Ok(Value::text(t.trim()))
        }
        Method::Vacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(t.is_empty()))
        }
        Method::Nonvacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(!t.is_empty()))
        }
        _ => no_method(m, recv),
    }
}

fn number_method(m: Method, recv: &Value, args: &[Value]) -> FResult<Value> {
    match (m, recv) {
        (Method::Absolutum, Value::Int(i)) => {
            arity(m, args, 0)?;
            match i.checked_abs() {
                Some(a) => Ok(Value::Int(a)),
                None => fault(codes::RUN_OVERFLOW, "integer overflow in absolutum()"),
            }
        }
        (Method::Absolutum, Value::Float(f)) => {
            arity(m, args, 0)?;
            Ok(Value::Float(f.abs()))
        }
        (Method::Maximus | Method::Minimus, _) => {
            arity(m, args, 1)?;
            let max = m == Method::Maximus;
            if let (Value::Int(a), Value::Int(b)) = (recv, &args[0]) {
                return Ok(Value::Int(if max { *a.max(b) } else { *a.min(b) }));
            }
            let a = num_arg(m, recv)?;
            let b = num_arg(m, &args[0])?;
            Ok(Value::Float(if max { a.max(b) } else { a.min(b) }))
        }
        (Method::Pavimentum, _) => {
            arity(m, args, 0)?;
            match recv {
                Value::Int(i) => Ok(Value::Int(*i)),
                _ => {
                    let f = num_arg(m, recv)?.floor();
                    if f.is_finite()
                        && (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f)
                    {
                        Ok(Value::Int(f as i64))
                    } else {
                        fault(
                            codes::RUN_OVERFLOW,
                            format!("pavimentum() of {f} does not fit numerus"),
                        )
                    }
                }
            }
        }
        (Method::Potentia, _) => {
            arity(m, args, 1)?;
            if let (Value::Int(a), Value::Int(b)) = (recv, &args[0]) {
                if *b >= 0 {
                    return match u32::try_from(*b).ok().and_then(|b| a.checked_pow(b)) {
                        Some(v) => Ok(Value::Int(v)),
                        None => fault(
                            codes::RUN_OVERFLOW,
                            format!("integer overflow in {a}.potentia({b})"),
                        ),
                    };
                }
            }
            let a = num_arg(m, recv)?;
            let b = &args[0];
            Ok(Value::Float(match b {
                Value::Int(i) if i32::try_from(*i).is_ok() => a.powi(*i as i32),
                _ => a.powf(num_arg(m, b)?),
            }))
        }
        (
            Method::Radix
            | Method::Exponens
            | Method::Logarithmus
            | Method::Sinus
            | Method::Cosinus,
            _,
        ) => {
            arity(m, args, 0)?;
            let x = num_arg(m, recv)?;
            Ok(Value::Float(match m {
                Method::Radix => x.sqrt(),
                Method::Exponens => crate::tensor::exp_cr(x),
                Method::Logarithmus => x.ln(),
                Method::Sinus => x.sin(),
                _ => x.cos(),
            }))
        }
        (Method::Approximata, _) => {
            arity(m, args, 2)?;
            let a = num_arg(m, recv)?;
            let b = num_arg(m, &args[0])?;
            let tol = num_arg(m, &args[1])?;
            Ok(Value::Bool((a - b).abs() <= tol))
        }
        _ => no_method(m, recv),
    }
}

/// A method applied to a receiver in place (`appende`, `detrahe`, `pone`, `dele`;
/// other methods read the receiver).
pub(crate) fn call_mut(m: Method, recv: &mut Value, args: &mut [Value]) -> FResult<Value> {
    match (m, &mut *recv) {
        (Method::Appende, Value::List(items)) => {
            arity(m, args, 1)?;
            if items.len() >= super::config::list_limit() {
                return fault(
                    codes::RUN_LIMIT,
                    format!("a lista longer than {} items", super::config::list_limit()),
                );
            }
            super::value::check_push(items.len(), items.capacity(), super::value::ITEM_BYTES)?;
            Rc::make_mut(items).push(std::mem::take(&mut args[0]));
            Ok(Value::Vacuum)
        }
        (Method::Detrahe, Value::List(items)) => {
            arity(m, args, 0)?;
            if items.is_empty() {
                return Ok(Value::Nihil);
            }
            Ok(Rc::make_mut(items).pop().unwrap_or(Value::Nihil))
        }
        (Method::Pone, Value::Map(map)) => {
            arity(m, args, 2)?;
            let k = key_of(&args[0])?;
            super::value::check_push(map.len(), map.capacity(), super::value::ENTRY_BYTES)?;
            Rc::make_mut(map).insert(k, std::mem::take(&mut args[1]));
            Ok(Value::Vacuum)
        }
        (Method::Dele, Value::Map(map)) => {
            arity(m, args, 1)?;
            let k = key_of(&args[0])?;
            if !map.contains_key(&k) {
                return Ok(Value::Bool(false));
            }
            Ok(Value::Bool(Rc::make_mut(map).shift_remove(&k).is_some()))
        }
        (Method::Ponde, Value::Tensor(t)) => {
            arity(m, args, 2)?;
            super::tensors::store(t, &args[0], &args[1])?;
            Ok(Value::Vacuum)
        }
        (Method::Adde | Method::Dele, Value::Set(s)) => super::set::call_mut(m, s, args),
        (Method::Ordina, Value::List(items)) => {
            arity(m, args, 0)?;
            super::sort::ordina(items)?;
            Ok(Value::Vacuum)
        }
        (
            Method::Appende
            | Method::Detrahe
            | Method::Pone
            | Method::Dele
            | Method::Ponde
            | Method::Adde
            | Method::Ordina,
            _,
        ) => no_method(m, recv),
        _ => call(m, recv, args),
    }
}
