//! The one dispatch rule for element types (docs/precision.md).
//!
//! [`super::tensors::apply`] scans an op's operands once ([`scan`]). Operands with no
//! f32 tensor run the f64 kernels as before, bit for bit. Otherwise:
//!
//! * **All tensor operands f32** (numbers may be mixed in): the op runs its native f32
//!   kernel ([`native_f32`], one arm per op): f32 storage in, f32 storage out, computed
//!   as each kernel family's module documents (f32 GEMM accumulation; row kernels in
//!   f64 from the widened row and rounded once). Numbers in the result (`summa`,
//!   `media`, the losses) are f64 values.
//! * **f32 and f64 tensor operands mixed**: promotion to the wider type, as in JAX and
//!   PyTorch: the f32 operands (also inside records, tuples and lists: gradient trees)
//!   are widened exactly, the f64 kernel runs, the result is f64.
//! * **No tensor operand** (`vacua`/`crea`/`strue`/`normalis`/`uniformis` from a
//!   `nihil` seed): the result's tensors take the run's precision
//!   ([`crate::tensor::precision`], `--precision`); from a number seed (the lowering's
//!   `vacua` of a declared `tf64`, [`wide_seed`]) they are F64 under every precision.
//!
//! Every f32 kernel gives the same bits at any thread count, as the f64 ones do.

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

/// Whether an op with no tensor operand has a number as its seed (operand 0): the
/// lowering's seed for `vacua` of a declared f64 tensor (`tf64`), which gives F64
/// tensors under every precision, as an f64 seed tensor would.
#[inline(always)]
pub(super) fn wide_seed(a: &[&Value]) -> bool {
    matches!(a.first(), Some(Value::Float(_)))
}

/// An op's run on f64 operands (the registry's kernels).
pub(super) type RunF64 = fn(Op, &[&Value]) -> FResult<Value>;

/// A native f32 kernel: the operands as they are, and the f64 entry.
type Native = fn(Op, &[&Value], RunF64) -> FResult<Value>;

/// The native f32 kernel of `op`: it gets the operands as they are (every tensor among
/// them f32) and returns f32 tensors. One arm per op and no default, so a new op must
/// say how it runs on f32. Almost every op's kernels are dtype-aware (`crate::tensor`'s
/// entries branch on the element type after their checks), so the f64 entry runs them
/// as they are ([`same_kernel`]).
fn native_f32(op: Op) -> Native {
    match op {
        // Shape-only ops move no element: the f64 kernel's code works on either
        // storage (it only re-labels the shape or reads sizes).
        Op::Forma | Op::Magnitudines | Op::Numerus => same_kernel,
        // A fill is one rounding of the fill value: no f64 tensor on the way.
        Op::Crea => crea_f32,
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
        | Op::RetroSoftmaxCausalis => same_kernel,
        // Row kernels: GELU, softmax, LayerNorm, RMSNorm, cross-entropy, embedding.
        // Their Tensor-level entries run the f32 slice kernels on f32 operands
        // (src/tensor/elem/entry.rs); `gelu_ex_pari` only hands on a part of its pair.
        Op::Exp
        | Op::Tanh
        | Op::TanhPerExp
        | Op::Gelu
        | Op::GeluPerExp
        | Op::GeluCumDerivata
        | Op::GeluExPari
        | Op::RetroGelu
        | Op::RetroGeluDerivata
        | Op::RetroGeluPerExp
        | Op::Silu
        | Op::RetroSilu
        | Op::Softmax
        | Op::LogSoftmax
        | Op::RetroSoftmax
        | Op::RetroLogSoftmax
        | Op::Laminatio
        | Op::RetroLaminatio
        | Op::RetroLaminatioAdde
        | Op::RmsNorm
        | Op::RetroRmsNorm
        | Op::CruxEntropia
        | Op::CruxEntropiaIndices
        | Op::RetroCruxEntropia
        | Op::RetroCruxScopi
        | Op::RetroCruxIndices
        | Op::Collige
        | Op::RetroCollige => same_kernel,
        // Element-wise maps, reductions, shape copies, gradient trees, AdamW: their
        // kernels and evaluator functions are dtype-aware (an f32 operand runs the f32
        // code, numbers stay f64 until the one rounding; constructors make their
        // seed's type or, for `nihil`, the run's precision), so the op runs as is.
        Op::Addita
        | Op::Subtrahe
        | Op::Multiplica
        | Op::Divide
        | Op::AdditaBias
        | Op::Neg
        | Op::Log
        | Op::Sqrt
        | Op::Reciproca
        | Op::Relu
        | Op::Positiva
        | Op::Scala
        | Op::Summa
        | Op::Media
        | Op::SummaAxis
        | Op::MediaAxis
        | Op::MaximumAxis
        | Op::Argmax
        | Op::Transpone
        | Op::TransponeUltimas
        | Op::Permute
        | Op::Sectio
        | Op::Angusta
        | Op::Concatena
        | Op::LarvaCausalis
        | Op::Strue
        | Op::Normalis
        | Op::Uniformis
        | Op::Multinomialis
        | Op::Planata
        | Op::RetroNihil
        | Op::RetroAdde
        | Op::RetroImple
        | Op::RetroAdFormam
        | Op::RetroDilata
        | Op::RetroMaximum
        | Op::RetroInpone
        | Op::RetroPermute
        | Op::RetroPars
        | Op::AdamwPassus => same_kernel,
    }
}

/// `seed.crea(fill, shape)` in f32: every element the fill rounded once.
fn crea_f32(op: Op, a: &[&Value], _: RunF64) -> FResult<Value> {
    let fill = num(op, a[1])?;
    let t = kr(Tensor::full_f32(fill as f32, &dims(a[2])?))?;
    Ok(Value::tensor(t))
}

/// For ops whose kernel never reads elements or is dtype-aware (see [`native_f32`]).
fn same_kernel(op: Op, a: &[&Value], run: RunF64) -> FResult<Value> {
    run(op, a)
}

/// `op` on operands holding f32 tensors (`found.f32`), or on operands holding no
/// tensor in an f32 run, as the module documentation says: the native f32 kernel, or,
/// with f64 tensors among the operands, the f64 kernel on the widened operands.
#[inline(never)]
pub(super) fn apply_f32(op: Op, a: &[&Value], found: Found, run: RunF64) -> FResult<Value> {
    if !found.f64 {
        return native_f32(op)(op, a, run);
    }
    promoted(op, a, run)
}

/// f32 and f64 tensors in one op: every f32 tensor operand widened exactly, the f64
/// kernel, an f64 result.
#[cold]
#[inline(never)]
fn promoted(op: Op, a: &[&Value], run: RunF64) -> FResult<Value> {
    let wide: Vec<Value> = a.iter().map(|v| widen(v)).collect::<FResult<_>>()?;
    let refs: Vec<&Value> = wide.iter().collect();
    run(op, &refs)
}

/// `v` with every f32 tensor in it widened (exactly) to f64.
fn widen(v: &Value) -> FResult<Value> {
    convert_tree(v, DType::F32, DType::F64)
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
    fn f32_operands_give_the_correctly_rounded_f32_sum() {
        // 1e8 + 1 is exact in f64 and rounds back to 1e8 in f32 (ulp 8 there); one f32
        // addition is the exact sum rounded once, which the f64 sum of two f32 values
        // rounded once equals (53 ≥ 2·24 + 2: no double-rounding error).
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
