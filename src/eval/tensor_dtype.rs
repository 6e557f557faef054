//! The one dispatch rule for element types (docs/precision.md): how an op runs on f32
//! tensors while its kernel exists only in f64, and where a native f32 kernel takes
//! over.
//!
//! [`super::tensors::apply`] scans an op's operands once ([`scan`]). Operands with no
//! f32 tensor run the f64 kernels as before, bit for bit. Otherwise:
//!
//! * **All tensor operands f32** (numbers may be mixed in): the op runs its native f32
//!   kernel when [`native_f32`] names one; else every f32 tensor operand (also inside
//!   records, tuples and lists: gradient trees) is widened exactly to f64, the f64
//!   kernel runs, and every tensor in its result is rounded once to f32 (round to
//!   nearest, ties to even). Numbers in the result (`summa`, `media`, the losses) stay
//!   the f64 values the kernel computed.
//! * **f32 and f64 tensor operands mixed**: promotion to the wider type, as in JAX and
//!   PyTorch: the f32 operands are widened, the f64 kernel runs, the result is f64.
//! * **No tensor operand** (`vacua`/`crea`/`strue`/`normalis`/`uniformis` from a
//!   `nihil` seed): the result's tensors take the run's precision
//!   ([`crate::tensor::precision`], `--precision`).
//!
//! Thread-count invariance follows: widening and rounding are element-wise and exact
//! or correctly rounded, and the f64 kernels give the same bits on any thread count.

use std::rc::Rc;

use super::tensor_args::{dims, kr, num};
use super::value::{Record, Value};
use super::FResult;
use crate::ir::ops::Op;
use crate::tensor::{DType, Tensor};

/// What an op's operands hold: f32 tensors, f64 tensors.
#[derive(Clone, Copy, Default)]
pub(super) struct Found {
    pub f32: bool,
    pub f64: bool,
}

impl Found {
    #[inline(always)]
    pub(super) fn any_tensor(self) -> bool {
        self.f32 || self.f64
    }
}

/// The element types of the tensors among `a` (inside records, tuples and lists too;
/// a list whose first item is a number is taken to hold numbers only).
#[inline(always)]
pub(super) fn scan(a: &[&Value]) -> Found {
    let mut f = Found::default();
    for v in a {
        match v {
            Value::Tensor(t) => match t.dtype() {
                DType::F32 => f.f32 = true,
                DType::F64 => f.f64 = true,
            },
            Value::Int(_) | Value::Float(_) | Value::Nihil | Value::Bool(_) => {}
            other => scan_tree(other, &mut f),
        }
    }
    f
}

#[inline(never)]
fn scan_tree(v: &Value, f: &mut Found) {
    match v {
        Value::Tensor(t) => match t.dtype() {
            DType::F32 => f.f32 = true,
            DType::F64 => f.f64 = true,
        },
        Value::List(items) | Value::Tuple(items) => {
            if matches!(items.first(), Some(Value::Int(_) | Value::Float(_))) {
                return;
            }
            for x in items.iter() {
                scan_tree(x, f);
            }
        }
        Value::Record(r) => {
            for x in &r.fields {
                scan_tree(x, f);
            }
        }
        _ => {}
    }
}

/// An op's run on f64 operands (the registry's kernels).
pub(super) type RunF64 = fn(Op, &[&Value]) -> FResult<Value>;

/// A native f32 kernel: the operands as they are, and the f64 entry.
type Native = fn(Op, &[&Value], RunF64) -> FResult<Value>;

/// The native f32 kernel of `op`, when it has one: it gets the operands as they are
/// (every tensor among them f32) and returns f32 tensors. The hook where the f32
/// kernels are wired in, one arm per op; every other op is widened, run in f64 and
/// rounded ([`apply_f32`]). A native kernel also gets the f64 entry, for the ops whose
/// f64 code works on either storage.
fn native_f32(op: Op) -> Option<Native> {
    match op {
        // Shape-only ops move no element: the f64 kernel's code works on either
        // storage (it only re-labels the shape or reads sizes).
        Op::Forma | Op::Magnitudines | Op::Numerus => Some(same_kernel),
        // A fill is one rounding of the fill value: no f64 tensor on the way.
        Op::Crea => Some(crea_f32),
        // Products: matmul, lineare, their VJPs, the fused attention (src/tensor/matmul,
        // src/tensor/attention/: dtype-aware entries). Their kernels compute in f32 when
        // every tensor operand is f32 (the sgemm, the f32 causal softmax rows), so the
        // f64 entry runs them as they are.
        Op::MatMul
        | Op::MatMulNT
        | Op::MatMulTN
        | Op::Lineare
        | Op::RetroMatMul
        | Op::RetroMatMulAdde
        | Op::RetroMatMulDerivata
        | Op::AttentioPondera
        | Op::AttentioApplica
        | Op::Attentio
        | Op::AttentioCumPonderibus
        | Op::AttentioExPari
        | Op::RetroAttentioPondera
        | Op::RetroAttentioApplica
        | Op::RetroAttentio
        | Op::SoftmaxCausalis
        | Op::RetroSoftmaxCausalis => Some(same_kernel),
        // Row kernels: GELU, softmax, LayerNorm, RMSNorm, cross-entropy, embedding.
        // Element-wise maps, reductions, shape copies, gradient trees, AdamW.
        _ => None,
    }
}

/// `seed.crea(fill, shape)` in f32: every element the fill rounded once.
fn crea_f32(op: Op, a: &[&Value], _: RunF64) -> FResult<Value> {
    let fill = num(op, a[1])?;
    let t = kr(Tensor::full_f32(fill as f32, &dims(a[2])?))?;
    Ok(Value::tensor(t))
}

/// For ops whose kernel never reads elements (see [`native_f32`]).
fn same_kernel(op: Op, a: &[&Value], run: RunF64) -> FResult<Value> {
    run(op, a)
}

/// `op` on operands holding f32 tensors (`found.f32`), or on operands holding no
/// tensor in an f32 run, as the module documentation says.
#[cold]
#[inline(never)]
pub(super) fn apply_f32(op: Op, a: &[&Value], found: Found, run: RunF64) -> FResult<Value> {
    if !found.f64 {
        if let Some(native) = native_f32(op) {
            return native(op, a, run);
        }
    }
    let wide: Vec<Value> = a.iter().map(|v| widen(v)).collect::<FResult<_>>()?;
    let refs: Vec<&Value> = wide.iter().collect();
    let r = run(op, &refs)?;
    if found.f64 {
        Ok(r)
    } else {
        round(r, DType::F32)
    }
}

/// `v` with every f32 tensor in it widened (exactly) to f64.
fn widen(v: &Value) -> FResult<Value> {
    convert_tree(v, DType::F32, DType::F64)
}

/// `v` with every tensor of another type in it converted to `to` (f64 → f32 rounds
/// each element once).
pub(super) fn round(v: Value, to: DType) -> FResult<Value> {
    match &v {
        Value::Tensor(t) if t.dtype() == to => Ok(v),
        Value::Int(_) | Value::Float(_) | Value::Nihil | Value::Bool(_) => Ok(v),
        _ => convert_tree(&v, to.other(), to),
    }
}

trait Other {
    fn other(self) -> DType;
}

impl Other for DType {
    fn other(self) -> DType {
        match self {
            DType::F32 => DType::F64,
            DType::F64 => DType::F32,
        }
    }
}

/// `v` with its `from` tensors converted to `to` (records, tuples and lists walked;
/// unchanged parts shared).
fn convert_tree(v: &Value, from: DType, to: DType) -> FResult<Value> {
    Ok(match v {
        Value::Tensor(t) if t.dtype() == from => Value::tensor(kr(t.to_dtype(to))?),
        Value::List(items) | Value::Tuple(items)
            if !matches!(items.first(), Some(Value::Int(_) | Value::Float(_))) =>
        {
            let out: Vec<Value> = items
                .iter()
                .map(|x| convert_tree(x, from, to))
                .collect::<FResult<_>>()?;
            match v {
                Value::List(_) => Value::list(out),
                _ => Value::Tuple(Rc::new(out)),
            }
        }
        Value::Record(r) => {
            let fields = r
                .fields
                .iter()
                .map(|x| convert_tree(x, from, to))
                .collect::<FResult<_>>()?;
            Value::Record(Rc::new(Record {
                genus: r.genus,
                fields,
            }))
        }
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tensors::apply;
    use super::*;

    fn t32(v: &[f32]) -> Value {
        Value::tensor(Tensor::from_f32(v.to_vec(), &[v.len()]).unwrap())
    }
    fn t64(v: &[f64]) -> Value {
        Value::tensor(Tensor::from_slice(v, &[v.len()]).unwrap())
    }
    fn tensor(v: Value) -> Tensor {
        match v {
            Value::Tensor(t) => (*t).clone(),
            other => panic!("not a tensor: {other:?}"),
        }
    }

    #[test]
    fn f32_operands_give_the_rounded_f64_result() {
        // 1e8 + 1 is exact in f64 and rounds back to 1e8 in f32 (ulp 8 there).
        let x = t32(&[1e8, 0.1]);
        let one = t32(&[1.0, 0.2]);
        let s = tensor(apply(Op::Addita, &[&x, &one]).unwrap());
        assert_eq!(s.dtype(), DType::F32);
        let want = [
            (1e8f32 as f64 + 1.0) as f32,
            (0.1f32 as f64 + 0.2f32 as f64) as f32,
        ];
        assert_eq!(s.data_f32().unwrap(), &want);
        assert_eq!(s.data_f32().unwrap()[0], 1e8f32);
        // a number operand: the same rule
        let s = tensor(apply(Op::Addita, &[&x, &Value::Float(1.0)]).unwrap());
        assert_eq!(s.data_f32().unwrap()[0], 1e8f32);
    }

    #[test]
    fn mixed_f32_and_f64_promote_to_f64() {
        let x = t32(&[0.1, 2.0]);
        let y = t64(&[0.1, 1e-20]);
        let s = tensor(apply(Op::Addita, &[&x, &y]).unwrap());
        assert_eq!(s.dtype(), DType::F64);
        assert_eq!(s.data(), &[0.1f32 as f64 + 0.1, 2.0 + 1e-20]);
        let s = tensor(apply(Op::Multiplica, &[&y, &x]).unwrap());
        assert_eq!(s.dtype(), DType::F64);
    }

    #[test]
    fn f64_operands_are_unchanged() {
        let x = t64(&[1e8, 0.1]);
        let s = tensor(apply(Op::Addita, &[&x, &Value::Float(1.0)]).unwrap());
        assert_eq!(s.dtype(), DType::F64);
        assert_eq!(s.data(), &[1e8 + 1.0, 0.1 + 1.0]);
    }

    #[test]
    fn shape_ops_keep_f32_storage() {
        let x = t32(&[1.0, 2.0, 3.0, 4.0]);
        let shape = Value::list(vec![Value::Int(2), Value::Int(2)]);
        let r = tensor(apply(Op::Forma, &[&x, &shape]).unwrap());
        assert_eq!((r.dtype(), r.shape()), (DType::F32, &[2usize, 2][..]));
        let Value::Tensor(xt) = &x else {
            unreachable!()
        };
        assert!(r.shares_storage(xt));
    }

    #[test]
    fn tuples_of_results_are_rounded_and_errors_stay_errors() {
        let x = Value::tensor(Tensor::from_f32(vec![1.0, 2.0, 3.0, 4.0], &[2, 2]).unwrap());
        let r = apply(Op::MatMul, &[&x, &x]).unwrap();
        assert_eq!(tensor(r).dtype(), DType::F32);
        let bad = t32(&[1.0, 2.0, 3.0]);
        assert!(apply(Op::MatMul, &[&x, &bad]).is_err());
        let sum = apply(Op::Summa, &[&t32(&[0.1, 0.2])]).unwrap();
        assert!(matches!(sum, Value::Float(s) if s == 0.1f32 as f64 + 0.2f32 as f64));
    }

    #[test]
    fn no_tensor_operand_follows_the_run_precision() {
        let shape = Value::list(vec![Value::Int(2)]);
        let fill = Value::Float(0.1);
        let before = crate::tensor::set_precision(DType::F32);
        let made = apply(Op::Crea, &[&Value::Nihil, &fill, &shape]);
        crate::tensor::set_precision(DType::F64);
        let wide = apply(Op::Crea, &[&Value::Nihil, &fill, &shape]);
        crate::tensor::set_precision(before);
        let made = tensor(made.unwrap());
        assert_eq!(made.data_f32().unwrap(), &[0.1f32, 0.1]);
        assert_eq!(tensor(wide.unwrap()).data(), &[0.1, 0.1]);
        // an f32 seed gives f32 whatever the run's precision
        let seed = t32(&[]);
        let t = tensor(apply(Op::Crea, &[&seed, &fill, &shape]).unwrap());
        assert_eq!(t.data_f32().unwrap(), &[0.1f32, 0.1]);
    }
}
