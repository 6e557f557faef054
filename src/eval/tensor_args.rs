//! Operands of the tensor ops as the kernels take them, and kernel errors as runtime
//! faults: the argument extraction of [`super::tensors`]'s dispatch (a tensor, a number
//! broadcast as rank 0, an axis, a head count, a shape, a seed…), each with its own
//! `RUN…` error for a value of the wrong kind.

use std::rc::Rc;

use super::value::Value;
use super::{fault, FResult, Fault};
use crate::diag::codes;
use crate::ir::ops::Op;
use crate::tensor::{self as k, Tensor, TensorError, TensorErrorKind};

/// A kernel error as a runtime fault: shapes → RUN013, indices → RUN001, values
/// outside the domain → RUN016, sizes beyond the limit → RUN012.
pub(super) fn kernel_fault(e: TensorError) -> Fault {
    let code = match e.kind {
        TensorErrorKind::Shape => codes::RUN_SHAPE,
        TensorErrorKind::Index => codes::RUN_INDEX,
        TensorErrorKind::Domain => codes::RUN_DOMAIN,
        TensorErrorKind::Limit => codes::RUN_LIMIT,
    };
    Fault::Error(code, e.message)
}

#[inline(always)]
pub(super) fn kr<T>(r: Result<T, TensorError>) -> FResult<T> {
    match r {
        Ok(v) => Ok(v),
        Err(e) => Err(kernel_fault_cold(e)),
    }
}

#[cold]
#[inline(never)]
fn kernel_fault_cold(e: TensorError) -> Fault {
    kernel_fault(e)
}

#[inline(always)]
pub(super) fn tensor_arg(op: Op, v: &Value) -> FResult<&Tensor> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(not_tensor(op, other)),
    }
}

#[cold]
#[inline(never)]
pub(super) fn not_tensor(op: Op, v: &Value) -> Fault {
    Fault::Error(
        codes::RUN_TYPE,
        format!("`{}` needs a tensor, found {}", op.name(), v.type_name()),
    )
}

/// A tensor operand that may also be given as a number (broadcast as rank 0).
pub(super) fn tensorish(op: Op, v: &Value) -> FResult<Rc<Tensor>> {
    match v {
        Value::Tensor(t) => Ok(t.clone()),
        Value::Int(i) => Ok(Rc::new(Tensor::scalar(*i as f64))),
        Value::Float(f) => Ok(Rc::new(Tensor::scalar(*f))),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a tensor or a number, found {}",
                op.name(),
                other.type_name()
            ),
        ),
    }
}

/// `f` on a tensor operand that may also be given as a number (broadcast as rank 0),
/// without touching the operand's reference count.
#[inline(always)]
pub(super) fn with_tensorish<R>(op: Op, v: &Value, f: impl FnOnce(&Tensor) -> R) -> FResult<R> {
    match v {
        Value::Tensor(t) => Ok(f(t)),
        _ => Ok(f(&*tensorish(op, v)?)),
    }
}

/// A `lista` of exactly `n` numbers (an op's scalar parameters).
pub(super) fn coefficients(op: Op, v: &Value, n: usize) -> FResult<Vec<f64>> {
    let nums = match v {
        Value::List(items) if items.len() == n => items.iter().map(|x| x.as_f64()).collect(),
        _ => None,
    };
    match nums {
        Some(c) => Ok(c),
        None => fault(
            codes::RUN_TYPE,
            match v {
                Value::List(items) => format!(
                    "`{}` needs a lista of {n} numbers, found one of {} item(s)",
                    op.name(),
                    items.len()
                ),
                other => format!(
                    "`{}` needs a lista of {n} numbers, found {}",
                    op.name(),
                    other.type_name()
                ),
            },
        ),
    }
}

pub(super) fn num(op: Op, v: &Value) -> FResult<f64> {
    match v.as_f64() {
        Some(f) => Ok(f),
        None => fault(
            codes::RUN_TYPE,
            format!("`{}` needs a number, found {}", op.name(), v.type_name()),
        ),
    }
}

pub(super) fn int(op: Op, v: &Value) -> FResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a numerus, found {}",
                op.name(),
                other.type_name()
            ),
        ),
    }
}

pub(super) fn axis(op: Op, v: &Value) -> FResult<usize> {
    let a = int(op, v)?;
    usize::try_from(a).or_else(|_| {
        fault(
            codes::RUN_SHAPE,
            format!("`{}`: axis {a} is negative", op.name()),
        )
    })
}

/// Part `i` of a helper pair `p` (`x.gelu_cum_derivata()`, `q.attentio_cum_ponderibus(…)`),
/// a tensor of x's shape.
pub(super) fn pair_part(op: Op, x: &Tensor, p: &Value, i: usize) -> FResult<Value> {
    match p {
        Value::Tuple(parts) if parts.len() == 2 => match &parts[i] {
            Value::Tensor(y) if y.shape() == x.shape() => Ok(parts[i].clone()),
            Value::Tensor(y) => fault(
                codes::RUN_SHAPE,
                format!(
                    "`{}`: the pair's tensors {} do not match {} ({})",
                    op.name(),
                    k::fmt_shape(y.shape()),
                    k::fmt_shape(x.shape()),
                    k::shape_difference(y.shape(), x.shape())
                ),
            ),
            other => Err(not_tensor(op, other)),
        },
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs its helper pair (`x.gelu_cum_derivata()`, `q.attentio_cum_ponderibus(k, v, capita)`), found {}",
                op.name(),
                other.type_name()
            ),
        ),
    }
}

/// A head count: a `numerus` ≥ 1.
pub(super) fn heads(op: Op, v: &Value) -> FResult<usize> {
    let n = int(op, v)?;
    match usize::try_from(n) {
        Ok(h) if h >= 1 => Ok(h),
        _ => fault(
            codes::RUN_SHAPE,
            format!("`{}`: the head count must be ≥ 1, found {n}", op.name()),
        ),
    }
}

pub(super) fn flag(op: Op, v: &Value) -> FResult<bool> {
    match v {
        Value::Bool(b) => Ok(*b),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs a bivalens, found {}",
                op.name(),
                other.type_name()
            ),
        ),
    }
}

/// A `lista<numerus>` of dimensions or axes.
pub(super) fn dims(v: &Value) -> FResult<Vec<usize>> {
    let Value::List(items) = v else {
        return fault(
            codes::RUN_TYPE,
            format!("a shape is a lista<numerus>, found {}", v.type_name()),
        );
    };
    let mut raw = Vec::with_capacity(items.len());
    for x in items.iter() {
        match x {
            Value::Int(i) => raw.push(*i),
            other => {
                return fault(
                    codes::RUN_TYPE,
                    format!("a shape holds numerus values, found {}", other.type_name()),
                )
            }
        }
    }
    kr(k::dims_from_i64(&raw))
}

/// The numbers of a (possibly nested) list, flattened row-major.
pub(super) fn flat_numbers(v: &Value, out: &mut Vec<f64>) -> FResult<()> {
    match v {
        Value::Int(i) => out.push(*i as f64),
        Value::Float(f) => out.push(*f),
        Value::List(items) => {
            for x in items.iter() {
                flat_numbers(x, out)?;
            }
        }
        Value::Tensor(t) => out.extend_from_slice(&t.values()),
        other => {
            return fault(
                codes::RUN_TYPE,
                format!("a tensor holds numbers, found {}", other.type_name()),
            )
        }
    }
    Ok(())
}

/// A seed: any `numerus`, taken as its 64-bit two's-complement pattern.
pub(super) fn seed(op: Op, v: &Value) -> FResult<u64> {
    Ok(int(op, v)? as u64)
}

pub(super) fn range_bound(op: Op, v: &Value) -> FResult<usize> {
    let i = int(op, v)?;
    usize::try_from(i).or_else(|_| {
        fault(
            codes::RUN_INDEX,
            format!("`{}`: bound {i} is negative", op.name()),
        )
    })
}
