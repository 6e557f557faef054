//! `copia<T>`: an insertion-ordered set of `numerus`, `textus` or `bivalens` values
//! (docs/language.md § 7, "Sets"). Methods, display and `↦` to and from lists.

use std::rc::Rc;

use super::ops::key_of;
use super::value::{Key, Set, Value};
use super::{arity, fault, FResult, Fault};
use crate::diag::codes;
use crate::ir::{print, Method, Program, Ty};

/// A method that reads the set.
pub(crate) fn call(m: Method, s: &Set, args: &[Value]) -> FResult<Value> {
    match m {
        Method::Habet | Method::Continet => {
            arity(m, args, 1)?;
            // A value that cannot be an element is simply not one.
            Ok(Value::Bool(
                Key::from_value(&args[0]).is_some_and(|k| s.contains(&k)),
            ))
        }
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(s.len() as i64))
        }
        Method::Vacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(s.is_empty()))
        }
        Method::Nonvacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(!s.is_empty()))
        }
        _ => fault(
            codes::RUN_TYPE,
            format!("copia has no method `{}`", m.name()),
        ),
    }
}

/// A method that changes the set: `adde(x)` (RUN010 when `x` cannot be an element,
/// RUN012 beyond the list limit) and `dele(x)` (whether `x` was there).
pub(crate) fn call_mut(m: Method, s: &mut Rc<Set>, args: &mut [Value]) -> FResult<Value> {
    match m {
        Method::Adde => {
            arity(m, args, 1)?;
            let k = key_of(&args[0]).map_err(|_| {
                Fault::Error(
                    codes::RUN_TYPE,
                    format!(
                        "a copia element must be numerus, textus or bivalens, found {}",
                        args[0].type_name()
                    ),
                )
            })?;
            if s.contains(&k) {
                return Ok(Value::Vacuum);
            }
            if s.len() >= super::config::list_limit() {
                return fault(
                    codes::RUN_LIMIT,
                    format!(
                        "a copia with more than {} elements",
                        super::config::list_limit()
                    ),
                );
            }
            super::value::check_push(s.len(), s.capacity(), super::value::ENTRY_BYTES)?;
            Rc::make_mut(s).insert(k);
            Ok(Value::Vacuum)
        }
        Method::Dele => {
            arity(m, args, 1)?;
            let Some(k) = Key::from_value(&args[0]) else {
                return Ok(Value::Bool(false));
            };
            if !s.contains(&k) {
                return Ok(Value::Bool(false));
            }
            Ok(Value::Bool(Rc::make_mut(s).shift_remove(&k)))
        }
        _ => call(m, s, args),
    }
}

/// `lista ↦ copia<T>` (each element converted to `T` first; repeats collapse) and
/// `copia ↦ copia<T>`.
pub(crate) fn from_items(
    items: &[Value],
    elem: &Ty,
    ty: &Ty,
    program: &Program,
    recur: super::value::Convert,
) -> FResult<Value> {
    let mut out = Set::default();
    for x in items {
        let x = recur(x, elem, program)?;
        match Key::from_value(&x) {
            Some(k) => {
                out.insert(k);
            }
            None => {
                return Err(Fault::Throw(Value::text(format!(
                    "cannot convert {} to {}: a copia element must be numerus, textus or bivalens",
                    x.type_name(),
                    print::ty(program, ty)
                ))))
            }
        }
    }
    Ok(Value::Set(Rc::new(out)))
}

/// The elements as values, in insertion order.
pub(crate) fn items(s: &Set) -> Vec<Value> {
    s.iter().map(Key::to_value).collect()
}
