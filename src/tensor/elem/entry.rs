//! What the dtype-aware Tensor-level entries of the row kernels share (issue 21): the
//! element type a call computes in, and the building of its f32 result.
//!
//! An entry such as `layernorm` or `softmax_backward` keeps its checks, then looks at
//! its tensor operands ([`operands`]): all F64 runs the f64 code as before (the same
//! bits), all F32 runs the f32 slice kernel and builds an F32 result ([`new_f32`]), and
//! a mix is promoted as the evaluator promotes it (docs/precision.md): the operands are
//! widened exactly and the f64 code runs, giving F64. Index operands (token ids, class
//! targets) are read with `Tensor::to_indices` whatever their type and do not count.

use crate::tensor::{checked_numel, f32_vec, DType, TResult, Tensor};

/// The element type of a call's tensor operands (see the module docs).
pub(in crate::tensor) enum Operands<const N: usize> {
    /// Every operand is F64: the f64 code as before.
    F64,
    /// Every operand is F32: the f32 kernel.
    F32,
    /// A mix: every operand widened (exactly) to F64, for the f64 code.
    Widened([Tensor; N]),
}

/// Which of [`Operands`] `ts` are.
#[inline(always)]
pub(in crate::tensor) fn operands<const N: usize>(ts: [&Tensor; N]) -> TResult<Operands<N>> {
    let f32s = ts.iter().filter(|t| t.dtype() == DType::F32).count();
    if f32s == 0 {
        return Ok(Operands::F64);
    }
    if f32s == N {
        return Ok(Operands::F32);
    }
    widen(ts).map(Operands::Widened)
}

#[cold]
#[inline(never)]
fn widen<const N: usize>(ts: [&Tensor; N]) -> TResult<[Tensor; N]> {
    let mut out: [Option<Tensor>; N] = std::array::from_fn(|_| None);
    for (o, t) in out.iter_mut().zip(ts) {
        *o = Some(t.to_dtype(DType::F64)?);
    }
    Ok(out.map(|t| t.expect("every operand widened")))
}

/// An F32 tensor of `shape` whose elements `fill` writes (into a zeroed buffer of the
/// shape's element count, allocated against the memory limit).
#[inline]
pub(in crate::tensor) fn new_f32(
    shape: &[usize],
    fill: impl FnOnce(&mut [f32]),
) -> TResult<Tensor> {
    let n = checked_numel(shape)?;
    let mut v = f32_vec(n)?;
    v.resize(n, 0.0);
    fill(&mut v);
    Tensor::from_f32(v, shape)
}

/// An element-wise map of an f32 tensor: `map(x, out)` over its elements.
#[inline]
pub(in crate::tensor) fn map_f32(
    x: &Tensor,
    map: impl FnOnce(&[f32], &mut [f32]),
) -> TResult<Tensor> {
    new_f32(x.shape(), |o| map(x.data32(), o))
}

/// Two F32 tensors of `shape` written by one `fill` (a value and its derivative).
#[inline]
pub(in crate::tensor) fn new_f32_pair(
    shape: &[usize],
    fill: impl FnOnce(&mut [f32], &mut [f32]),
) -> TResult<(Tensor, Tensor)> {
    let n = checked_numel(shape)?;
    let (mut a, mut b) = (f32_vec(n)?, f32_vec(n)?);
    a.resize(n, 0.0);
    b.resize(n, 0.0);
    fill(&mut a, &mut b);
    Ok((Tensor::from_f32(a, shape)?, Tensor::from_f32(b, shape)?))
}

/// A rank-0 F32 tensor holding `v` rounded once.
pub(in crate::tensor) fn scalar_f32(v: f64) -> Tensor {
    Tensor::from_f32(vec![v as f32], &[]).expect("one element for a rank-0 shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_and_promotion() {
        let a = Tensor::from_f32(vec![0.1, 2.0], &[2]).unwrap();
        let b = Tensor::from_flat(vec![0.1, 2.0], &[2]).unwrap();
        assert!(matches!(operands([&a, &a]).unwrap(), Operands::F32));
        assert!(matches!(operands([&b, &b]).unwrap(), Operands::F64));
        let Operands::Widened([x, y]) = operands([&a, &b]).unwrap() else {
            panic!("a mix is widened")
        };
        assert_eq!((x.dtype(), y.dtype()), (DType::F64, DType::F64));
        assert_eq!(x.data(), &[0.1f32 as f64, 2.0]);
        assert!(y.shares_storage(&b));
        let t = new_f32(&[2, 2], |o| o.copy_from_slice(&[1.0, 2.0, 3.0, 4.0])).unwrap();
        assert_eq!((t.dtype(), t.shape()), (DType::F32, &[2usize, 2][..]));
        assert_eq!(scalar_f32(0.1).data_f32().unwrap(), &[0.1f32]);
    }
}
