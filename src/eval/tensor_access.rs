//! Tensor elements and lists: `t[i]`, `accipe`, `ponde`/`t[i] ← v`, and the
//! conversions between (nested) lists and tensors.

use std::rc::Rc;

use super::tensor_args::{flat_numbers, kr};
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::tensor::Tensor;

pub(super) fn float_list(t: &Tensor) -> Value {
    // An f32 tensor's elements widened one by one (no widened copy first).
    match t.data_f32() {
        Some(d) => Value::list(d.iter().map(|&x| Value::Float(x as f64)).collect()),
        None => Value::list(t.data().iter().map(|&x| Value::Float(x)).collect()),
    }
}

/// Coordinates from an index value: one Int (rank 1) or a list of Ints.
fn coordinates(i: &Value) -> FResult<Vec<i64>> {
    match i {
        Value::Int(n) => Ok(vec![*n]),
        Value::List(items) => items
            .iter()
            .map(|x| match x {
                Value::Int(n) => Ok(*n),
                other => fault(
                    codes::RUN_TYPE,
                    format!(
                        "a tensor index holds numerus values, found {}",
                        other.type_name()
                    ),
                ),
            })
            .collect(),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "a tensor index is a numerus or a lista, found {}",
                other.type_name()
            ),
        ),
    }
}

/// `t[i]`, `t[[r, c]]`: one element (out of range → RUN001).
pub(crate) fn element(t: &Tensor, i: &Value) -> FResult<Value> {
    Ok(Value::Float(kr(t.get(&coordinates(i)?))?))
}

/// `t.accipe(idx)`: the element, or `nihil` outside the tensor.
pub(crate) fn accipe(t: &Tensor, i: &Value) -> FResult<Value> {
    let c = coordinates(i)?;
    Ok(t.get(&c).map_or(Value::Nihil, Value::Float))
}

/// `t[idx] ← v` and `t.ponde(idx, v)`.
pub(crate) fn store(t: &mut Rc<Tensor>, i: &Value, v: &Value) -> FResult<()> {
    let c = coordinates(i)?;
    let x = match v.as_f64() {
        Some(x) => x,
        None => {
            return fault(
                codes::RUN_TYPE,
                format!("a tensor element is a number, found {}", v.type_name()),
            )
        }
    };
    kr(Rc::make_mut(t).set(&c, x))
}

/// `list ↦ tensor<T, shape>`: counts must match a fully known shape; an unknown
/// shape keeps the list's nesting as far as it is regular, else a vector. The result
/// is in the run's precision, F64 where the declared element type is (`wide`: `tf64`);
/// a tensor given (a reshape by conversion) keeps its own element type
/// (docs/precision.md).
pub(crate) fn from_list(v: &Value, shape: Option<&[Option<u64>]>, wide: bool) -> FResult<Value> {
    let dtype = match v {
        Value::Tensor(t) => t.dtype(),
        _ if wide => crate::tensor::DType::F64,
        _ => crate::tensor::precision(),
    };
    let mut data = Vec::new();
    flat_numbers(v, &mut data)?;
    let known: Option<Vec<usize>> =
        shape.and_then(|s| s.iter().map(|d| d.map(|n| n as usize)).collect());
    let dims = match known {
        Some(d) => d,
        None => vec![data.len()],
    };
    let t = kr(Tensor::from_flat(data, &dims))?;
    Ok(Value::tensor(kr(t.to_dtype(dtype))?))
}

/// `t ↦ lista<T>`: the elements in row-major order.
pub(crate) fn to_list(t: &Tensor) -> Value {
    float_list(t)
}
