//! Element-type generic kernels (issue 21, docs/precision.md): what lets one kernel body
//! serve f64 and f32 tensors, monomorphised for each, so the f64 instance is the code the
//! f64 path always ran (same bits, same speed) and the f32 instance computes natively.
//!
//! * sink.rs — [`Elem`] and [`Sink`]: the result buffers of the kernels that move
//!   elements without arithmetic (transpose, permute, narrow, concat, pad, the causal
//!   mask, the axis maximum and argmax), filled front to back or block by block
//!   ([`build_f32`], [`filled_f32`]), and the f32 tensor builders ([`f32_tensor`],
//!   [`f32_like`]);
//! * float.rs — [`Float`] and [`ResultBuf`]: the product family's element types
//!   (`matmul`, `lineare`, their VJPs, the fused attention), with the GEMM hooks and the
//!   choice of kernel for small products;
//! * entry.rs — [`operands`] / [`Operands`]: the same promotion rule in the form the row
//!   kernels' entries use (their f32 arm, their f64 arm, or both operands widened), and
//!   their f32 result builders ([`new_f32`], [`map_f32`], [`new_f32_pair`],
//!   [`scalar_f32`]);
//! * here: the promotion rule for a kernel given tensors of both types ([`common`],
//!   [`widened`], [`by_dtype!`]), the evaluator's rule at the Rust API.
//!
//! The two traits differ in what their kernels need (raw-pointer GEMM output against
//! push/fill buffers); both use `Out` for f64 and a memory-checked `Vec<f32>` for f32.

mod entry;
mod float;
mod sink;

pub(in crate::tensor) use entry::{map_f32, new_f32, new_f32_pair, operands, scalar_f32, Operands};
#[allow(unused_imports)]
pub(in crate::tensor) use float::{Float, Out32, ResultBuf};
#[allow(unused_imports)]
pub(in crate::tensor) use sink::{
    as_slots, build_f32, f32_like, f32_tensor, filled_f32, Elem, Sink,
};

use super::{DType, TResult, Tensor};

/// The element type an op on `ts` computes in natively: f32 when every one is f32,
/// else f64 (promotion to the wider type, as the evaluator's rule; the f32 ones are
/// then widened by [`widened`]).
#[inline(always)]
pub(in crate::tensor) fn common(ts: &[&Tensor]) -> DType {
    if ts.iter().all(|t| t.dtype() == DType::F32) {
        DType::F32
    } else {
        DType::F64
    }
}

/// `t` as an f64 tensor: itself when it is one, else widened exactly.
#[inline(always)]
pub(in crate::tensor) fn widened(t: &Tensor) -> TResult<std::borrow::Cow<'_, Tensor>> {
    Ok(match t.dtype() {
        DType::F64 => std::borrow::Cow::Borrowed(t),
        DType::F32 => std::borrow::Cow::Owned(t.to_dtype(DType::F64)?),
    })
}

/// `$f::<f32>(tensors…, rest…)` when every one of the tensor operands (plain
/// identifiers, the function's first parameters) is f32, else `$f::<f64>` on them with
/// the f32 ones widened exactly (promotion, as the evaluator's rule): the dtype branch of
/// every public entry of the product family.
macro_rules! by_dtype {
    ($f:ident, [$($t:ident),+] $(, $rest:expr)*) => {{
        if $crate::tensor::elem::common(&[$($t),+]) == $crate::tensor::DType::F32 {
            $f::<f32>($($t),+ $(, $rest)*)
        } else {
            $(let $t = $crate::tensor::elem::widened($t)?;)+
            $f::<f64>($(&$t),+ $(, $rest)*)
        }
    }};
}
pub(in crate::tensor) use by_dtype;
