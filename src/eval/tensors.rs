//! Tensor values in the evaluator: `Rhs::Op` dispatch to the kernels of
//! `crate::tensor` — each arm extracts its operands (tensor_args.rs), calls the kernel
//! and maps its error; no kernel logic here. Value trees as gradients are
//! tensor_trees.rs, element access and list conversions tensor_access.rs.

use std::rc::Rc;

use super::tensor_access::float_list;
pub(crate) use super::tensor_access::{accipe, element, from_list, store, to_list};
use super::tensor_args::{
    axis, coefficients, dims, flag, flat_numbers, heads, int, kr, num, pair_part, range_bound,
    seed, tensor_arg, tensorish, with_tensorish,
};
use super::tensor_trees::{deep_add, zeros_like};
use super::value::Value;
use super::{FResult, Fault};
use crate::diag::codes;
use crate::ir::ops::Op;
use crate::tensor::{self as k, Tensor};

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
        Op::TransponeUltimas => kr(k::transpose_last(t(0)?))?,
        Op::Positiva => kr(k::positive(t(0)?))?,
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
                kr(k::max_axis_backward(&g, like, ax))?
            } else {
                // a[3]: the reduction was a mean or a sum.
                kr(k::sum_axis_backward(&g, like, ax, flag(op, a[3])?))?
            }
        }
        Op::RetroInpone => {
            let like = t(3)?;
            let ax = axis(op, a[1])?;
            kr(k::narrow_backward(t(0)?, ax, range_bound(op, a[2])?, like))?
        }
        Op::RetroSoftmax => kr(k::softmax_backward(t(0)?, t(1)?))?,
        Op::RetroLogSoftmax => kr(k::log_softmax_backward(t(0)?, t(1)?))?,
        Op::RetroLaminatio | Op::RetroLaminatioAdde => {
            let addend = if op == Op::RetroLaminatioAdde {
                Some(t(4)?)
            } else {
                None
            };
            let (gx, gg, gb) = kr(k::layernorm_backward_adde(
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
            let (ga, gb) = kr(k::matmul_backward(t(0)?, t(1)?, t(2)?, post))?;
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
        Op::RetroGelu => kr(k::gelu_backward(t(0)?, t(1)?))?,
        Op::GeluCumDerivata => {
            let (y, d) = kr(k::gelu_cum_derivata(t(0)?))?;
            return Ok(tensor_tuple([y, d]));
        }
        Op::GeluExPari => return pair_part(op, t(0)?, a[1], 0),
        Op::RetroGeluDerivata => kr(k::gelu_backward_derivata(t(0)?, t(1)?))?,
        Op::RetroGeluPerExp => kr(k::gelu_exp_identity_backward(t(0)?, t(1)?))?,
        Op::RetroCruxEntropia => kr(k::cross_entropy_backward(num(op, a[0])?, t(1)?, t(2)?))?,
        Op::RetroCruxScopi => kr(k::cross_entropy_targets_backward(num(op, a[0])?, t(1)?))?,
        Op::RetroCruxIndices => kr(k::cross_entropy_indices_backward(
            num(op, a[0])?,
            t(1)?,
            t(2)?,
        ))?,
        Op::RetroPermute => {
            // The inverse permutation: output axis axes[i] takes input axis i.
            let inv = kr(k::inverse_permutation(&dims(a[1])?))?;
            kr(k::permute(t(0)?, &inv))?
        }
        Op::RetroPars => {
            // The part of g that came from operand `which` (0: x, 1: y) of a concatenation.
            let ax = axis(op, a[3])?;
            let (x, y) = (t(1)?, t(2)?);
            let first = int(op, a[4])? == 0;
            kr(k::concat_part(t(0)?, x, y, ax, first))?
        }
        Op::RetroCollige => {
            let table = t(2)?;
            kr(k::embedding_table_backward(t(1)?, t(0)?, table))?
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
