//! Tensor values in the evaluator: `Rhs::Op` dispatch to the kernels of
//! `crate::tensor`. The match of [`apply_general`] is made from the op registry's rows
//! (src/ir/ops.rs): a row's run column names its kernel and how each operand is read
//! (tensor_args.rs), or the function of tensor_custom.rs that runs it; [`apply`] keeps
//! the fast arms of a small training step. No kernel logic here. Value trees as
//! gradients are tensor_trees.rs, element access and list conversions tensor_access.rs.

pub(crate) use super::tensor_access::{accipe, element, from_list, store, to_list};
use super::tensor_args::{axis, dims, flag, heads, kr, num, tensor_arg};
use super::tensor_custom::{self as custom, tensor_tuple};
use super::tensor_dtype as dtype;
use super::value::Value;
use super::{FResult, Fault};
use crate::diag::codes;
use crate::ir::ops::{op_table, Op};
use crate::tensor::{self as k, Tensor};

/// Runs `op` on evaluated operands (receiver first).
///
/// The element-type rule first (tensor_dtype.rs, docs/precision.md): operands holding
/// f32 tensors go to [`dtype::apply_f32`], which runs the op's native f32 kernel or
/// widens them, runs [`apply_f64`] and rounds its tensors; an op with no tensor operand
/// gives its tensors in the run's precision. Operands with only f64 tensors run
/// [`apply_f64`] directly.
#[inline(always)]
pub(crate) fn apply(op: Op, a: &[&Value]) -> FResult<Value> {
    if a.len() != op.arity() {
        return Err(arity_fault(op, a.len()));
    }
    if let Some(r) = super::offload::try_op(op, a) {
        // `faber run --backend xla`: an operand lives on the device, and so does the
        // op (src/eval/offload.rs).
        return r.map_err(|(code, msg)| Fault::Error(code, msg));
    }
    let found = dtype::scan(a);
    if found.f32 || (!found.any_tensor() && k::precision() == k::DType::F32 && !dtype::wide_seed(a))
    {
        return dtype::apply_f32(op, a, found, apply_f64);
    }
    apply_f64(op, a)
}

/// [`apply`] on operands whose tensors are f64 (operand count checked): the ops of a
/// small training step with tensor operands are dispatched here, the rest by
/// [`apply_general`] (the same kernels and errors either way).
#[inline(always)]
pub(super) fn apply_f64(op: Op, a: &[&Value]) -> FResult<Value> {
    let r = match (op, a) {
        (Op::Addita, [Value::Tensor(x), Value::Tensor(y)]) => {
            // A shared zero block (a companion's loop-carried cotangent starts each
            // iteration as `retro_nihil`) plus y is y, bit for bit, unless y holds a
            // −0.0: then no pass and no new buffer.
            if k::shared_zeros_add_is_addend(x, y) {
                return Ok(a[1].clone());
            }
            k::add(x, y)
        }
        (Op::Subtrahe, [Value::Tensor(x), Value::Tensor(y)]) => k::sub(x, y),
        (Op::Multiplica, [Value::Tensor(x), Value::Tensor(y)]) => k::mul(x, y),
        (Op::MatMul, [Value::Tensor(x), Value::Tensor(y)]) => k::matmul(x, y),
        (Op::MatMulNT, [Value::Tensor(x), Value::Tensor(y)]) => k::matmul_t(x, y, k::Trans::B),
        (Op::MatMulTN, [Value::Tensor(x), Value::Tensor(y)]) => k::matmul_t(x, y, k::Trans::A),
        (Op::Neg, [Value::Tensor(x)]) => k::neg(x),
        // As apply_general's number-operand arm: one pass, no rank-0 tensor.
        (Op::Multiplica, [Value::Tensor(x), Value::Float(y)]) => k::scale(x, *y),
        (Op::Addita, [Value::Tensor(x), Value::Float(y)]) => k::add_scalar(x, *y),
        (Op::Subtrahe, [Value::Tensor(x), Value::Float(y)]) => k::sub_scalar(x, *y),
        (Op::Media, [Value::Tensor(x)]) => return Ok(Value::Float(kr(k::mean_value(x))?)),
        _ => return apply_general(op, a),
    };
    Ok(Value::tensor(kr(r)?))
}

#[cold]
#[inline(never)]
fn arity_fault(op: Op, n: usize) -> Fault {
    Fault::Error(
        codes::RUN_TYPE,
        format!("`{}` takes {} operand(s), got {}", op.name(), op.arity(), n),
    )
}

/// A kernel's result as the value of its op: a tensor, a pair or triple of tensors
/// (an `iuncta`), or a number.
trait IntoValue {
    fn into_value(self) -> Value;
}

impl IntoValue for Tensor {
    #[inline(always)]
    fn into_value(self) -> Value {
        Value::tensor(self)
    }
}

impl IntoValue for (Tensor, Tensor) {
    fn into_value(self) -> Value {
        tensor_tuple([self.0, self.1])
    }
}

impl IntoValue for (Tensor, Tensor, Tensor) {
    fn into_value(self) -> Value {
        tensor_tuple([self.0, self.1, self.2])
    }
}

impl IntoValue for f64 {
    fn into_value(self) -> Value {
        Value::Float(self)
    }
}

/// One operand of a `[kernel(K i, …)]` row, read as the kernel takes it.
macro_rules! operand {
    (T, $op:ident, $v:expr) => {
        tensor_arg($op, $v)?
    };
    (Num, $op:ident, $v:expr) => {
        num($op, $v)?
    };
    (Axis, $op:ident, $v:expr) => {
        axis($op, $v)?
    };
    (Flag, $op:ident, $v:expr) => {
        flag($op, $v)?
    };
    (Heads, $op:ident, $v:expr) => {
        heads($op, $v)?
    };
    (Dims, $op:ident, $v:expr) => {
        &dims($v)?
    };
}

/// One arm of [`apply_general`]: a row's run column.
macro_rules! run {
    ($op:ident, $a:ident, [eval $f:ident]) => {
        custom::$f($op, $a)
    };
    ($op:ident, $a:ident, [$k:ident($($kind:ident $i:literal),*)]) => {
        Ok(kr(k::$k($(operand!($kind, $op, $a[$i])),*))?.into_value())
    };
}

/// [`apply_general`] from the registry's rows (src/ir/ops.rs, `op_table!`): one arm
/// per op, as its run column says.
macro_rules! dispatch {
    ($(#[doc = $doc:literal] $variant:ident = $name:literal, $arity:expr, $kind:expr,
       $result:ident, $shape:ident, $probe:expr, $run:tt;)*) => {
        /// [`apply_f64`] for every op, operand counts already checked.
        #[inline(never)]
        fn apply_general(op: Op, a: &[&Value]) -> FResult<Value> {
            match op {
                $(Op::$variant => run!(op, a, $run),)*
            }
        }
    };
}

op_table!(dispatch);
