//! Tensor values in the evaluator: `Rhs::Op` dispatch to the kernels of
//! `crate::tensor`, element access, conversions between lists and tensors, and the
//! mapping of kernel errors to runtime codes.

use std::rc::Rc;

use super::retro;
use super::value::Value;
use super::{fault, FResult, Fault};
use crate::diag::codes;
use crate::ir::ops::Op;
use crate::tensor::{self as k, Tensor, TensorError, TensorErrorKind};

/// A kernel error as a runtime fault: shapes → RUN013, indices → RUN001, values
/// outside the domain → RUN016, sizes beyond the limit → RUN012.
pub(crate) fn kernel_fault(e: TensorError) -> Fault {
    let code = match e.kind {
        TensorErrorKind::Shape => codes::RUN_SHAPE,
        TensorErrorKind::Index => codes::RUN_INDEX,
        TensorErrorKind::Domain => codes::RUN_DOMAIN,
        TensorErrorKind::Limit => codes::RUN_LIMIT,
    };
    Fault::Error(code, e.message)
}

#[inline(always)]
fn kr<T>(r: Result<T, TensorError>) -> FResult<T> {
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
fn tensor_arg(op: Op, v: &Value) -> FResult<&Tensor> {
    match v {
        Value::Tensor(t) => Ok(t),
        other => Err(not_tensor(op, other)),
    }
}

#[cold]
#[inline(never)]
fn not_tensor(op: Op, v: &Value) -> Fault {
    Fault::Error(
        codes::RUN_TYPE,
        format!("`{}` needs a tensor, found {}", op.name(), v.type_name()),
    )
}

/// A tensor operand that may also be given as a number (broadcast as rank 0).
fn tensorish(op: Op, v: &Value) -> FResult<Rc<Tensor>> {
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
fn with_tensorish<R>(op: Op, v: &Value, f: impl FnOnce(&Tensor) -> R) -> FResult<R> {
    match v {
        Value::Tensor(t) => Ok(f(t)),
        _ => Ok(f(&*tensorish(op, v)?)),
    }
}

/// A `lista` of exactly `n` numbers (an op's scalar parameters).
fn coefficients(op: Op, v: &Value, n: usize) -> FResult<Vec<f64>> {
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

fn num(op: Op, v: &Value) -> FResult<f64> {
    match v.as_f64() {
        Some(f) => Ok(f),
        None => fault(
            codes::RUN_TYPE,
            format!("`{}` needs a number, found {}", op.name(), v.type_name()),
        ),
    }
}

fn int(op: Op, v: &Value) -> FResult<i64> {
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

fn axis(op: Op, v: &Value) -> FResult<usize> {
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
fn pair_part(op: Op, x: &Tensor, p: &Value, i: usize) -> FResult<Value> {
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
fn heads(op: Op, v: &Value) -> FResult<usize> {
    let n = int(op, v)?;
    match usize::try_from(n) {
        Ok(h) if h >= 1 => Ok(h),
        _ => fault(
            codes::RUN_SHAPE,
            format!("`{}`: the head count must be ≥ 1, found {n}", op.name()),
        ),
    }
}

fn flag(op: Op, v: &Value) -> FResult<bool> {
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
pub(crate) fn dims(v: &Value) -> FResult<Vec<usize>> {
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
pub(crate) fn flat_numbers(v: &Value, out: &mut Vec<f64>) -> FResult<()> {
    match v {
        Value::Int(i) => out.push(*i as f64),
        Value::Float(f) => out.push(*f),
        Value::List(items) => {
            for x in items.iter() {
                flat_numbers(x, out)?;
            }
        }
        Value::Tensor(t) => out.extend_from_slice(t.data()),
        other => {
            return fault(
                codes::RUN_TYPE,
                format!("a tensor holds numbers, found {}", other.type_name()),
            )
        }
    }
    Ok(())
}

fn float_list(t: &Tensor) -> Value {
    Value::list(t.data().iter().map(|&x| Value::Float(x)).collect())
}

fn scalar_of(t: Tensor) -> FResult<Value> {
    Ok(Value::Float(kr(t.item())?))
}

/// Runs `op` on evaluated operands (receiver first).
///
/// The ops of a small training step with tensor operands are dispatched here, the
/// rest by [`apply_general`] (the same kernels and errors either way).
#[inline(always)]
pub(crate) fn apply(op: Op, a: &[&Value]) -> FResult<Value> {
    if a.len() != op.arity() {
        return Err(arity_fault(op, a.len()));
    }
    let r = match (op, a) {
        (Op::Addita, [Value::Tensor(x), Value::Tensor(y)]) => {
            // A shared zero block (a companion's loop-carried cotangent starts each
            // iteration as `retro_nihil`) plus y is y, bit for bit, unless y holds a
            // −0.0: then no pass and no new buffer.
            if x.same_shape(y) && x.is_shared_zeros() && !has_neg_zero(y) {
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

/// The tuple of an op's tensor results, in order.
fn tensor_tuple<const N: usize>(ts: [Tensor; N]) -> Value {
    Value::Tuple(Rc::new(ts.into_iter().map(Value::tensor).collect()))
}

/// [`apply`] for every op, operand counts already checked.
#[inline(never)]
fn apply_general(op: Op, a: &[&Value]) -> FResult<Value> {
    let t = |i: usize| tensor_arg(op, a[i]);
    let out = match op {
        Op::Crea => kr(Tensor::full(num(op, a[1])?, &dims(a[2])?))?,
        Op::Strue => {
            let mut data = Vec::new();
            flat_numbers(a[1], &mut data)?;
            kr(Tensor::from_flat(data, &dims(a[2])?))?
        }
        Op::Forma => kr(k::reshape(t(0)?, &dims(a[1])?))?,
        Op::Transpone => kr(k::transpose(t(0)?))?,
        Op::Permute => kr(k::permute(t(0)?, &dims(a[1])?))?,
        Op::Sectio => {
            let (s, e) = (range_bound(op, a[1])?, range_bound(op, a[2])?);
            kr(k::slice_rows(t(0)?, s, e))?
        }
        Op::Angusta => {
            let (s, e) = (range_bound(op, a[2])?, range_bound(op, a[3])?);
            kr(k::narrow(t(0)?, axis(op, a[1])?, s, e))?
        }
        Op::Concatena => kr(k::concat(&[t(0)?, t(1)?], axis(op, a[2])?))?,
        // A number operand: one pass over the tensor, no rank-0 tensor to broadcast
        // (the same x ∘ y per element, so the same bits).
        Op::Addita | Op::Subtrahe | Op::Multiplica if a[1].as_f64().is_some() => {
            let y = a[1].as_f64().unwrap_or(0.0);
            kr(match op {
                Op::Addita => k::add_scalar(t(0)?, y),
                Op::Subtrahe => k::sub_scalar(t(0)?, y),
                _ => k::scale(t(0)?, y),
            })?
        }
        Op::Addita => {
            let x = t(0)?;
            kr(with_tensorish(op, a[1], |y| k::add(x, y))?)?
        }
        Op::Subtrahe => {
            let x = t(0)?;
            kr(with_tensorish(op, a[1], |y| k::sub(x, y))?)?
        }
        Op::Multiplica => {
            let x = t(0)?;
            kr(with_tensorish(op, a[1], |y| k::mul(x, y))?)?
        }
        Op::Divide => {
            let x = t(0)?;
            kr(with_tensorish(op, a[1], |y| k::div(x, y))?)?
        }
        Op::AdditaBias => kr(k::add_bias(t(0)?, t(1)?))?,
        Op::MatMul => kr(k::matmul(t(0)?, t(1)?))?,
        Op::Lineare => kr(k::linear(t(0)?, t(1)?, t(2)?))?,
        Op::MatMulNT => kr(k::matmul_t(t(0)?, t(1)?, k::Trans::B))?,
        Op::MatMulTN => kr(k::matmul_t(t(0)?, t(1)?, k::Trans::A))?,
        Op::Neg => kr(k::neg(t(0)?))?,
        Op::Exp => kr(k::exp(t(0)?))?,
        Op::Log => kr(k::log(t(0)?))?,
        Op::Sqrt => kr(k::sqrt(t(0)?))?,
        Op::Tanh => kr(k::tanh(t(0)?))?,
        Op::TanhPerExp => kr(k::tanh_exp_identity(t(0)?))?,
        Op::Gelu => kr(k::gelu(t(0)?))?,
        Op::GeluPerExp => kr(k::gelu_exp_identity(t(0)?))?,
        Op::Relu => kr(k::relu(t(0)?))?,
        Op::Reciproca => kr(k::reciprocal(t(0)?))?,
        Op::Scala => kr(k::scale(t(0)?, num(op, a[1])?))?,
        Op::Summa => return Ok(Value::Float(k::sum_value(t(0)?))),
        Op::Media => return Ok(Value::Float(kr(k::mean_value(t(0)?))?)),
        Op::SummaAxis => kr(k::sum_axis(t(0)?, axis(op, a[1])?, flag(op, a[2])?))?,
        Op::MediaAxis => kr(k::mean_axis(t(0)?, axis(op, a[1])?, flag(op, a[2])?))?,
        Op::MaximumAxis => kr(k::max_axis(t(0)?, axis(op, a[1])?, flag(op, a[2])?))?,
        Op::Argmax => kr(k::argmax(t(0)?))?,
        Op::Softmax => kr(k::softmax(t(0)?))?,
        Op::SoftmaxCausalis => kr(k::softmax_causal(t(0)?, num(op, a[1])?, num(op, a[2])?))?,
        Op::RetroSoftmaxCausalis => kr(k::softmax_causal_backward(t(0)?, t(1)?, num(op, a[2])?))?,
        Op::LogSoftmax => kr(k::log_softmax(t(0)?))?,
        Op::Laminatio => kr(k::layernorm(
            t(0)?,
            axis(op, a[1])?,
            num(op, a[2])?,
            t(3)?,
            t(4)?,
        ))?,
        Op::RmsNorm => kr(k::rms_norm(t(0)?, axis(op, a[1])?, num(op, a[2])?, t(3)?))?,
        Op::RetroRmsNorm => {
            let (gx, gg) = kr(k::rms_norm_backward(t(0)?, t(1)?, num(op, a[2])?, t(3)?))?;
            return Ok(tensor_tuple([gx, gg]));
        }
        Op::Silu => kr(k::silu(t(0)?))?,
        Op::RetroSilu => kr(k::silu_backward(t(0)?, t(1)?))?,
        Op::CruxEntropia => return scalar_of(kr(k::cross_entropy(t(0)?, t(1)?))?),
        Op::CruxEntropiaIndices => return scalar_of(kr(k::cross_entropy_indices(t(0)?, t(1)?))?),
        Op::Collige => kr(k::embedding(t(0)?, t(1)?))?,
        Op::LarvaCausalis => kr(k::causal_mask(t(0)?, num(op, a[1])?))?,
        Op::Normalis => {
            let mut rng = k::SplitMix64::new(seed(op, a[1])?);
            kr(rng.normal_tensor(&dims(a[2])?, num(op, a[3])?, num(op, a[4])?))?
        }
        Op::Uniformis => {
            let mut rng = k::SplitMix64::new(seed(op, a[1])?);
            kr(rng.uniform_tensor(&dims(a[2])?))?
        }
        Op::Multinomialis => {
            let mut rng = k::SplitMix64::new(seed(op, a[1])?);
            kr(rng.multinomial(t(0)?))?
        }
        Op::Numerus => return Ok(Value::Int(t(0)?.numel() as i64)),
        Op::TransponeUltimas => kr(retro::transpose_last(t(0)?))?,
        Op::Positiva => kr(retro::positive(t(0)?))?,
        Op::RetroNihil => return zeros_like(a[0]),
        Op::RetroAdde => return deep_add(a[0], a[1]),
        Op::RetroImple => kr(Tensor::full(num(op, a[1])?, t(0)?.shape()))?,
        Op::RetroAdFormam => {
            let g = tensorish(op, a[0])?;
            match a[1] {
                Value::Tensor(like) => kr(k::sum_to_shape(&g, like.shape()))?,
                // A number operand of a broadcasting op: its gradient is the total.
                _ => return scalar_of(kr(k::sum(&g))?),
            }
        }
        Op::RetroDilata | Op::RetroMaximum => {
            let g = tensorish(op, a[0])?;
            let like = t(1)?;
            let ax = axis(op, a[2])?;
            if op == Op::RetroMaximum {
                kr(retro::maximum(&g, like, ax))?
            } else {
                // a[3]: the reduction was a mean (scale 1/n) or a sum (1).
                let n = like.shape().get(ax).copied().unwrap_or(1) as f64;
                let scale = if flag(op, a[3])? { 1.0 / n } else { 1.0 };
                kr(retro::dilata(&g, like, ax, scale))?
            }
        }
        Op::RetroInpone => {
            let like = t(3)?;
            let ax = axis(op, a[1])?;
            let full = like.shape().get(ax).copied().unwrap_or(0);
            kr(k::pad_axis(t(0)?, ax, range_bound(op, a[2])?, full))?
        }
        Op::RetroSoftmax => kr(retro::softmax(t(0)?, t(1)?))?,
        Op::RetroLogSoftmax => kr(retro::log_softmax(t(0)?, t(1)?))?,
        Op::RetroLaminatio | Op::RetroLaminatioAdde => {
            let addend = if op == Op::RetroLaminatioAdde {
                Some(t(4)?)
            } else {
                None
            };
            let (gx, gg, gb) = kr(retro::layernorm_adde(
                t(0)?,
                t(1)?,
                num(op, a[2])?,
                t(3)?,
                addend,
            ))?;
            return Ok(tensor_tuple([gx, gg, gb]));
        }
        Op::AdamwPassus => {
            let c = coefficients(op, a[4], 8)?;
            let coef = k::AdamCoef {
                beta1: c[0],
                one_minus_beta1: c[1],
                beta2: c[2],
                one_minus_beta2: c[3],
                inv_bc2_sqrt: c[4],
                eps: c[5],
                decay: c[6],
                step: c[7],
            };
            let (p, m, v) = kr(k::adamw_step(t(0)?, t(1)?, t(2)?, t(3)?, &coef))?;
            return Ok(tensor_tuple([p, m, v]));
        }
        Op::RetroMatMul | Op::RetroMatMulDerivata | Op::RetroMatMulAdde => {
            let post = match op {
                Op::RetroMatMulDerivata => Some(k::VjpPost::Scale(t(3)?)),
                Op::RetroMatMulAdde => Some(k::VjpPost::AddTo(t(3)?)),
                _ => None,
            };
            let (ga, gb) = kr(retro::matmul_post(t(0)?, t(1)?, t(2)?, post))?;
            return Ok(tensor_tuple([ga, gb]));
        }
        Op::AttentioPondera => kr(k::attention_weights(t(0)?, t(1)?, heads(op, a[2])?))?,
        Op::AttentioApplica => kr(k::attention_apply(t(0)?, t(1)?))?,
        Op::Attentio => kr(k::attention(t(0)?, t(1)?, t(2)?, heads(op, a[3])?))?,
        Op::AttentioCumPonderibus => {
            let (y, p) = kr(k::attention_with_weights(
                t(0)?,
                t(1)?,
                t(2)?,
                heads(op, a[3])?,
            ))?;
            return Ok(tensor_tuple([y, p]));
        }
        Op::AttentioExPari => {
            // the operands the pair was made from: checked like `attentio`'s
            heads(op, a[3])?;
            return pair_part(op, t(0)?, a[4], 0);
        }
        Op::RetroAttentio => {
            let (gq, gk, gv) = kr(k::attention_backward(
                t(0)?,
                t(1)?,
                t(2)?,
                t(3)?,
                t(4)?,
                heads(op, a[5])?,
            ))?;
            return Ok(tensor_tuple([gq, gk, gv]));
        }
        Op::RetroAttentioPondera | Op::RetroAttentioApplica => {
            let (x, y) = kr(if op == Op::RetroAttentioPondera {
                k::attention_weights_backward(t(0)?, t(1)?, t(2)?, t(3)?, heads(op, a[4])?)
            } else {
                k::attention_apply_backward(t(0)?, t(1)?, t(2)?)
            })?;
            return Ok(tensor_tuple([x, y]));
        }
        Op::RetroGelu => kr(retro::gelu(t(0)?, t(1)?, false))?,
        Op::GeluCumDerivata => {
            let (y, d) = kr(k::gelu_cum_derivata(t(0)?))?;
            return Ok(tensor_tuple([y, d]));
        }
        Op::GeluExPari => return pair_part(op, t(0)?, a[1], 0),
        Op::RetroGeluDerivata => kr(k::gelu_backward_derivata(t(0)?, t(1)?))?,
        Op::RetroGeluPerExp => kr(retro::gelu(t(0)?, t(1)?, true))?,
        Op::RetroCruxEntropia => kr(retro::cross_entropy(num(op, a[0])?, t(1)?, t(2)?))?,
        Op::RetroCruxScopi => kr(retro::cross_entropy_targets(num(op, a[0])?, t(1)?))?,
        Op::RetroCruxIndices => kr(retro::cross_entropy_indices(num(op, a[0])?, t(1)?, t(2)?))?,
        Op::RetroPermute => {
            // The inverse permutation: output axis axes[i] takes input axis i.
            let axes = dims(a[1])?;
            let mut inv = vec![0; axes.len()];
            for (i, &ax) in axes.iter().enumerate() {
                match inv.get_mut(ax) {
                    Some(slot) => *slot = i,
                    None => {
                        return fault(
                            codes::RUN_SHAPE,
                            format!("`permute`: axis {ax} out of range"),
                        )
                    }
                }
            }
            kr(k::permute(t(0)?, &inv))?
        }
        Op::RetroPars => {
            // The part of g that came from operand `which` (0: x, 1: y) of a concatenation.
            let ax = axis(op, a[3])?;
            let nx = t(1)?.shape().get(ax).copied().unwrap_or(0);
            let ny = t(2)?.shape().get(ax).copied().unwrap_or(0);
            let (s, e) = if int(op, a[4])? == 0 {
                (0, nx)
            } else {
                (nx, nx + ny)
            };
            kr(k::narrow(t(0)?, ax, s, e))?
        }
        Op::RetroCollige => {
            let vocab = t(2)?.shape().first().copied().unwrap_or(0);
            kr(k::embedding_backward(t(1)?, t(0)?, vocab))?
        }
        Op::Magnitudines => {
            return Ok(Value::list(
                t(0)?
                    .shape()
                    .iter()
                    .map(|&d| Value::Int(d as i64))
                    .collect(),
            ))
        }
        Op::Planata => return Ok(float_list(t(0)?)),
    };
    Ok(Value::tensor(out))
}

/// A seed: any `numerus`, taken as its 64-bit two's-complement pattern.
fn seed(op: Op, v: &Value) -> FResult<u64> {
    Ok(int(op, v)? as u64)
}

fn range_bound(op: Op, v: &Value) -> FResult<usize> {
    let i = int(op, v)?;
    usize::try_from(i).or_else(|_| {
        fault(
            codes::RUN_INDEX,
            format!("`{}`: bound {i} is negative", op.name()),
        )
    })
}

/// A value of the same structure with every number zero (gradients of parameter
/// trees): tensors → zeros, floats → 0.0, records/lists/tuples element-wise; other
/// leaves (ints, texts) → `nihil`.
pub(crate) fn zeros_like(v: &Value) -> FResult<Value> {
    Ok(match v {
        Value::Tensor(t) => Value::tensor(kr(Tensor::zeros(t.shape()))?),
        Value::Float(_) => Value::Float(0.0),
        Value::List(items) => Value::list(items.iter().map(zeros_like).collect::<FResult<_>>()?),
        Value::Tuple(items) => Value::Tuple(Rc::new(
            items.iter().map(zeros_like).collect::<FResult<_>>()?,
        )),
        Value::Record(r) => {
            let fields = r.fields.iter().map(zeros_like).collect::<FResult<_>>()?;
            Value::Record(Rc::new(super::value::Record {
                genus: r.genus,
                fields,
            }))
        }
        _ => Value::Nihil,
    })
}

/// Accumulations of fewer elements may skip a zero accumulator (see `deep_add`).
const SKIP_ZERO_ADD_BELOW: usize = 1 << 16;

/// Whether `x + y` is `y` bit for bit: every x is ±0.0 (−0.0 + y = y for every y;
/// +0.0 + y = y except y = −0.0) and, if some x is +0.0, no y is −0.0. Stops at x's
/// first non-zero element, so an accumulator already holding gradients costs a
/// glance.
fn adds_nothing(x: &Tensor, y: &Tensor) -> bool {
    // Chunks of 64 with branch-free inner loops (they vectorise), early exit between.
    let mut pos_zero = false;
    for c in x.data().chunks(64) {
        let (mut nonzero, mut pz) = (0u64, 0u64);
        for v in c {
            let b = v.to_bits();
            nonzero |= b << 1;
            pz |= u64::from(b == 0);
        }
        if nonzero != 0 {
            return false;
        }
        pos_zero |= pz != 0;
    }
    !pos_zero || !has_neg_zero(y)
}

/// Whether some element of `y` is −0.0 (chunked, branch-free inner loops; compiled
/// for AVX-512 where the CPU has it — baseline x86-64 has no 64-bit vector compare).
fn has_neg_zero(y: &Tensor) -> bool {
    #[inline(always)]
    fn scan(y: &[f64]) -> bool {
        const NEG_ZERO: u64 = 0x8000_0000_0000_0000;
        y.chunks(64).any(|c| {
            c.iter()
                .fold(0u64, |a, v| a | u64::from(v.to_bits() == NEG_ZERO))
                != 0
        })
    }
    /// # Safety
    /// The CPU has AVX-512F.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn scan_avx512(y: &[f64]) -> bool {
        scan(y)
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f") {
        // SAFETY: the CPU has AVX-512F (checked).
        return unsafe { scan_avx512(y.data()) };
    }
    scan(y.data())
}

/// Element-wise sum of two values of the same structure (gradient accumulation).
pub(crate) fn deep_add(a: &Value, b: &Value) -> FResult<Value> {
    Ok(match (a, b) {
        // The first contribution to a zero accumulator: `0 + y` is y itself, bit for
        // bit, unless y holds a −0.0 that a +0.0 would turn into +0.0; then add. Only
        // below the size from which the add runs on several threads: the check reads
        // both operands on one thread, which costs about what a split add does.
        (Value::Tensor(x), Value::Tensor(y))
            if x.shape() == y.shape()
                && if x.is_shared_zeros() {
                    !has_neg_zero(y)
                } else {
                    x.numel() < SKIP_ZERO_ADD_BELOW && adds_nothing(x, y)
                } =>
        {
            b.clone()
        }
        (Value::Tensor(x), Value::Tensor(y)) => Value::tensor(kr(k::add(x, y))?),
        (Value::Tensor(x), Value::Float(f)) | (Value::Float(f), Value::Tensor(x)) => {
            Value::tensor(kr(k::add(x, &Tensor::scalar(*f)))?)
        }
        (Value::Float(x), Value::Float(y)) => Value::Float(x + y),
        (Value::Nihil, other) | (other, Value::Nihil) => other.clone(),
        (Value::List(x), Value::List(y)) if x.len() == y.len() => Value::list(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?,
        ),
        (Value::Tuple(x), Value::Tuple(y)) if x.len() == y.len() => Value::Tuple(Rc::new(
            x.iter()
                .zip(y.iter())
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?,
        )),
        (Value::Record(x), Value::Record(y)) if x.genus == y.genus => {
            let fields = x
                .fields
                .iter()
                .zip(&y.fields)
                .map(|(p, q)| deep_add(p, q))
                .collect::<FResult<_>>()?;
            Value::Record(Rc::new(super::value::Record {
                genus: x.genus,
                fields,
            }))
        }
        (x, y) => {
            return fault(
                codes::RUN_TYPE,
                format!(
                    "cannot add gradients of {} and {}",
                    x.type_name(),
                    y.type_name()
                ),
            )
        }
    })
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
/// shape keeps the list's nesting as far as it is regular, else a vector.
pub(crate) fn from_list(v: &Value, shape: Option<&[Option<u64>]>) -> FResult<Value> {
    let mut data = Vec::new();
    flat_numbers(v, &mut data)?;
    let known: Option<Vec<usize>> =
        shape.and_then(|s| s.iter().map(|d| d.map(|n| n as usize)).collect());
    let dims = match known {
        Some(d) => d,
        None => vec![data.len()],
    };
    Ok(Value::tensor(kr(Tensor::from_flat(data, &dims))?))
}

/// `t ↦ lista<T>`: the elements in row-major order.
pub(crate) fn to_list(t: &Tensor) -> Value {
    float_list(t)
}

#[cfg(test)]
mod accumulate_tests {
    use super::*;

    fn t(v: &[f64]) -> Tensor {
        Tensor::from_slice(v, &[v.len()]).unwrap()
    }

    /// `0 + y` is skipped exactly when it gives y's bits (IEEE: +0 + −0 = +0).
    #[test]
    fn adds_nothing_only_when_the_sum_is_y() {
        let y = t(&[1.5, -2.0, 0.0, f64::NAN]);
        assert!(adds_nothing(&t(&[0.0; 4]), &y));
        assert!(adds_nothing(&t(&[-0.0; 4]), &t(&[-0.0, 1.0, 0.0, 2.0])));
        assert!(!adds_nothing(
            &t(&[0.0, -0.0, 0.0, 0.0]),
            &t(&[-0.0, 1.0, 0.0, 2.0])
        ));
        assert!(!adds_nothing(&t(&[0.0, 1e-300, 0.0, 0.0]), &y));
        // deep_add gives the bits an add would, both ways
        for (x, y) in [
            (t(&[0.0, 0.0]), t(&[-0.0, 3.0])),
            (t(&[-0.0, -0.0]), t(&[-0.0, 3.0])),
            (t(&[0.0, 0.0]), t(&[0.5, 3.0])),
            (t(&[0.25, 0.0]), t(&[0.5, 3.0])),
        ] {
            let want = k::add(&x, &y).unwrap();
            let got = deep_add(&Value::tensor(x), &Value::tensor(y)).unwrap();
            let Value::Tensor(got) = got else { panic!() };
            let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
        }
    }

    /// `addita` with a shared zero block as its receiver gives y itself (no pass) when y
    /// holds no −0.0, else the add's bits (−0.0 becomes +0.0); other receivers add.
    #[test]
    fn addita_of_shared_zeros() {
        let mut yv: Vec<f64> = (0..64 * 70).map(|i| i as f64 - 100.5).collect();
        let plain = t(&yv);
        yv[9] = -0.0;
        let neg_zero = t(&yv);
        let z = Tensor::zeros(&[64 * 70]).unwrap();
        assert!(z.is_shared_zeros());
        let small = Tensor::zeros(&[4]).unwrap();
        let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        for (y, shared) in [(&plain, true), (&neg_zero, false)] {
            let (zv, yv) = (Value::tensor(z.clone()), Value::tensor(y.clone()));
            let Value::Tensor(got) = apply(Op::Addita, &[&zv, &yv]).unwrap() else {
                panic!()
            };
            assert_eq!(bits(&got), bits(&k::add(&z, y).unwrap()));
            assert_eq!(got.shares_storage(y), shared);
        }
        // Shapes that do not match still go to the add (a broadcast, here).
        let (sv, yv) = (Value::tensor(small), Value::tensor(t(&[1.0])));
        let Value::Tensor(got) = apply(Op::Addita, &[&sv, &yv]).unwrap() else {
            panic!()
        };
        assert_eq!(got.data(), &[1.0; 4]);
    }

    /// Large zero tensors share one block; a write copies it first (the others stay
    /// zero); an accumulation into a shared zero block gives the add's bits.
    #[test]
    fn shared_zeros() {
        let a = Tensor::zeros(&[64, 70]).unwrap();
        let mut b = Tensor::zeros(&[70, 64]).unwrap();
        assert!(a.shares_storage(&b) && a.is_shared_zeros() && b.is_shared_zeros());
        b.data_mut()[5] = 1.0;
        assert!(!b.is_shared_zeros() && a.data().iter().all(|v| v.to_bits() == 0));
        assert!(!Tensor::zeros(&[3, 4]).unwrap().is_shared_zeros());
        let y: Vec<f64> = (0..64 * 70)
            .map(|i| if i == 7 { -0.0 } else { i as f64 })
            .collect();
        for y in [t(&y), t(&vec![0.5; 64 * 70])] {
            let x = Tensor::zeros(&[64 * 70]).unwrap();
            let want = k::add(&x, &y).unwrap();
            let Value::Tensor(got) = deep_add(&Value::tensor(x), &Value::tensor(y)).unwrap() else {
                panic!()
            };
            let bits = |t: &Tensor| t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
        }
    }
}
