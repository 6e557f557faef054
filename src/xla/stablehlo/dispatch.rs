//! Lowering the Radix IR's tensor ops ([`Op`], src/ir/ops.rs) to StableHLO: one
//! exhaustive `match` over the op registry, so an op added there must be decided
//! here; the ops without a lowering yet return [`LowerError::NoLowering`] naming
//! the op. The primal and helper ops are lowered as their definitions in
//! docs/ops.md, not as faber's fused CPU kernels: XLA fuses for itself. The shared
//! types and helpers are src/xla/stablehlo/lower.rs.

use super::lower::*;
#[cfg(test)]
use super::TensorType;
use super::{attention, cotangent, nn, optim, random, reduce, Binary, Function, Reduction, Unary};
use crate::ir::ops::Op;
#[cfg(test)]
use crate::xla::exec::ElementType;

/// Emits `op` applied to `operands` into `f`; returns its results (one value for a
/// tensor or number result).
pub fn lower_op(f: &mut Function, op: Op, operands: &[Operand]) -> Lowered {
    if operands.len() != op.arity() {
        return Err(LowerError::Shape {
            op: op.name(),
            reason: format!(
                "takes {} operand{}, {} given",
                op.arity(),
                if op.arity() == 1 { "" } else { "s" },
                operands.len()
            ),
        });
    }
    lower_checked(f, op, &Args { op, operands })
}

fn lower_checked(f: &mut Function, op: Op, a: &Args) -> Lowered {
    match op {
        Op::Addita => arith(f, a, Binary::Add),
        Op::Subtrahe => arith(f, a, Binary::Subtract),
        Op::Multiplica => arith(f, a, Binary::Multiply),
        Op::Divide => arith(f, a, Binary::Divide),
        Op::AdditaBias => add_bias(f, a, a.tensor(0)?, a.tensor(1)?),
        Op::Neg => unary(f, a, Unary::Negate),
        Op::Exp => unary(f, a, Unary::Exponential),
        Op::Log => unary(f, a, Unary::Log),
        Op::Sqrt => unary(f, a, Unary::Sqrt),
        Op::Tanh => unary(f, a, Unary::Tanh),
        Op::Relu => {
            let xt = a.ty(f, 0)?;
            let zero = f.splat(xt.elem, 0.0, &xt.dims);
            Ok(vec![f.binary(Binary::Maximum, a.tensor(0)?, zero)])
        }
        Op::Positiva => Ok(vec![f.positive_mask(a.tensor(0)?)]),
        Op::Reciproca => {
            let xt = a.ty(f, 0)?;
            let one = f.splat(xt.elem, 1.0, &xt.dims);
            Ok(vec![f.binary(Binary::Divide, one, a.tensor(0)?)])
        }
        Op::Scala => {
            let xt = a.ty(f, 0)?;
            let s = filled(f, a, 1, xt.elem, &xt.dims)?;
            Ok(vec![f.binary(Binary::Multiply, a.tensor(0)?, s)])
        }
        Op::MatMul => Ok(vec![matmul(f, a, a.tensor(0)?, a.tensor(1)?)?]),
        Op::MatMulNT => {
            let bt = swap_last(f, a, a.tensor(1)?)?;
            Ok(vec![matmul(f, a, a.tensor(0)?, bt)?])
        }
        Op::MatMulTN => {
            let at = swap_last(f, a, a.tensor(0)?)?;
            Ok(vec![matmul(f, a, at, a.tensor(1)?)?])
        }
        Op::Lineare => {
            let p = matmul(f, a, a.tensor(0)?, a.tensor(1)?)?;
            add_bias(f, a, p, a.tensor(2)?)
        }
        Op::Summa | Op::Media => {
            let xt = a.ty(f, 0)?;
            let axes: Vec<usize> = (0..xt.rank()).collect();
            let mut r = f.reduce(a.tensor(0)?, &axes, Reduction::Sum);
            if op == Op::Media {
                if xt.numel() == 0 {
                    return a.err("the mean of no elements");
                }
                let n = f.constant(xt.elem, xt.numel() as f64);
                r = f.binary(Binary::Divide, r, n);
            }
            Ok(vec![r])
        }
        Op::SummaAxis => reduce_axis(f, a, Reduction::Sum, false),
        Op::MediaAxis => reduce_axis(f, a, Reduction::Sum, true),
        Op::MaximumAxis => reduce_axis(f, a, Reduction::Max, false),
        Op::Argmax => reduce::argmax(f, a),
        Op::RetroDilata => reduce::retro_dilata(f, a),
        Op::RetroMaximum => reduce::retro_maximum(f, a),
        Op::Softmax => softmax(f, a, false),
        Op::LogSoftmax => softmax(f, a, true),
        Op::Forma => {
            let (xt, dims) = (a.ty(f, 0)?, a.dims(1)?);
            let n = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
            if n != Some(xt.numel()) {
                return a.err(format!(
                    "{} elements cannot take shape {dims:?}",
                    xt.numel()
                ));
            }
            Ok(vec![f.reshape(a.tensor(0)?, &dims)])
        }
        Op::Transpone => {
            let xt = a.ty(f, 0)?;
            if xt.rank() != 2 {
                return a.err(format!("needs rank 2, found rank {}", xt.rank()));
            }
            Ok(vec![f.transpose(a.tensor(0)?, &[1, 0])])
        }
        Op::TransponeUltimas => Ok(vec![swap_last(f, a, a.tensor(0)?)?]),
        Op::Permute => {
            let perm = a.permutation(1, a.ty(f, 0)?.rank())?;
            Ok(vec![f.transpose(a.tensor(0)?, &perm)])
        }
        Op::Sectio => {
            let xt = a.ty(f, 0)?;
            if xt.rank() == 0 {
                return a.err("needs rank ≥ 1");
            }
            let e = a.index(2, xt.dims[0], true)?;
            let s = a.index(1, e, true)?;
            Ok(vec![narrow(f, a.tensor(0)?, 0, s, e)])
        }
        Op::Angusta => {
            let xt = a.ty(f, 0)?;
            let axis = a.index(1, xt.rank(), false)?;
            let e = a.index(3, xt.dims[axis], true)?;
            let s = a.index(2, e, true)?;
            Ok(vec![narrow(f, a.tensor(0)?, axis, s, e)])
        }
        Op::Concatena => {
            let (xt, yt) = (a.ty(f, 0)?, a.ty(f, 1)?);
            let axis = a.index(2, xt.rank(), false)?;
            let fits = xt.elem == yt.elem
                && xt.rank() == yt.rank()
                && (0..xt.rank()).all(|i| i == axis || xt.dims[i] == yt.dims[i]);
            if !fits {
                return a.err(format!("{xt} and {yt} do not join along axis {axis}"));
            }
            Ok(vec![f.concatenate(a.tensor(0)?, a.tensor(1)?, axis)])
        }
        Op::Crea => {
            let elem = a.seed_elem(f)?;
            Ok(vec![filled(f, a, 1, elem, &a.dims(2)?)?])
        }
        Op::Strue => strue(f, a),
        Op::RetroImple => {
            let xt = a.ty(f, 0)?;
            Ok(vec![filled(f, a, 1, xt.elem, &xt.dims)?])
        }
        Op::RetroNihil => {
            let xt = a.ty(f, 0)?;
            Ok(vec![f.splat(xt.elem, 0.0, &xt.dims)])
        }
        Op::RetroAdde => {
            let (xt, yt) = (a.ty(f, 0)?, a.ty(f, 1)?);
            if xt != yt {
                return a.err(format!("{xt} and {yt} differ"));
            }
            Ok(vec![f.binary(Binary::Add, a.tensor(0)?, a.tensor(1)?)])
        }
        Op::RetroAdFormam => {
            let (g, like) = (a.tensor(0)?, a.ty(f, 1)?);
            let g = f.convert(g, like.elem);
            cotangent::sum_to_shape(f, a, g, &like.dims)
        }
        Op::Gelu => nn::gelu(f, a, false),
        Op::GeluPerExp => nn::gelu(f, a, true),
        Op::TanhPerExp => nn::tanh_per_exp(f, a),
        Op::RetroGelu => nn::retro_gelu(f, a, false),
        Op::RetroGeluPerExp => nn::retro_gelu(f, a, true),
        Op::Silu => nn::silu(f, a),
        Op::RetroSilu => nn::retro_silu(f, a),
        Op::RetroSoftmax => nn::retro_softmax(f, a),
        Op::RetroLogSoftmax => {
            let xt = a.ty(f, 1)?;
            if xt.rank() == 0 {
                return a.err("needs rank ≥ 1");
            }
            let p = softmax_of(f, a.tensor(1)?, false);
            nn::retro_log_softmax(f, a, p)
        }
        Op::LarvaCausalis => nn::larva_causalis(f, a),
        Op::SoftmaxCausalis => {
            let xt = a.ty(f, 0)?;
            if xt.rank() < 2 {
                return a.err(format!("needs rank ≥ 2, found rank {}", xt.rank()));
            }
            let s = f.splat(xt.elem, a.num(1)?, &xt.dims);
            let v = f.splat(xt.elem, a.num(2)?, &xt.dims);
            let scaled = f.binary(Binary::Multiply, a.tensor(0)?, s);
            let masked = nn::causal_mask(f, scaled, v);
            Ok(vec![softmax_of(f, masked, false)])
        }
        Op::Laminatio => nn::laminatio(f, a),
        Op::RmsNorm => nn::rms_norm(f, a),
        Op::RetroRmsNorm => nn::retro_rms_norm(f, a),
        Op::RetroSoftmaxCausalis => nn::retro_softmax_causalis(f, a),
        Op::CruxEntropia => nn::crux_entropia(f, a),
        Op::RetroCruxEntropia => nn::retro_crux_entropia(f, a),
        Op::RetroCruxScopi => nn::retro_crux_scopi(f, a),
        Op::Collige => nn::collige(f, a),
        Op::RetroCollige => nn::retro_collige(f, a),
        Op::CruxEntropiaIndices => {
            let zt = a.ty(f, 0)?;
            if zt.rank() == 0 {
                return a.err("the logits need rank ≥ 1");
            }
            let ls = softmax_of(f, a.tensor(0)?, true);
            nn::crux_entropia_indices(f, a, ls)
        }
        Op::RetroCruxIndices => {
            let zt = a.ty(f, 1)?;
            if zt.rank() == 0 {
                return a.err("the logits need rank ≥ 1");
            }
            let p = softmax_of(f, a.tensor(1)?, false);
            nn::retro_crux_indices(f, a, p)
        }
        Op::GeluCumDerivata => nn::gelu_cum_derivata(f, a),
        Op::GeluExPari => {
            // Operand 1 is the pair's first part: the function tracer passes it for
            // the pair (src/xla/stablehlo/function.rs), the bits of `x.gelu()`.
            let (x, p) = (a.ty(f, 0)?, a.ty(f, 1)?);
            if x != p {
                return a.err(format!("the pair's part {p} does not match {x}"));
            }
            Ok(vec![a.tensor(1)?])
        }
        Op::RetroGeluDerivata => {
            let (g, d) = (a.ty(f, 0)?, a.ty(f, 1)?);
            if g != d {
                return a.err(format!("{g} and {d} differ"));
            }
            Ok(vec![f.binary(Binary::Multiply, a.tensor(0)?, a.tensor(1)?)])
        }
        Op::RetroLaminatio => nn::retro_laminatio(f, a, false),
        Op::RetroLaminatioAdde => nn::retro_laminatio(f, a, true),
        Op::AdamwPassus => optim::adamw_passus(f, a),
        Op::RetroInpone => cotangent::retro_inpone(f, a),
        Op::RetroPermute => cotangent::retro_permute(f, a),
        Op::RetroPars => cotangent::retro_pars(f, a),
        Op::AttentioPondera => attention::pondera(f, a),
        Op::AttentioApplica => attention::applica(f, a),
        Op::Attentio => attention::attentio(f, a, false),
        Op::AttentioCumPonderibus => attention::attentio(f, a, true),
        Op::AttentioExPari => {
            // Operand 4 is the pair's first part, as for `gelu_ex_pari`.
            let (q, y) = (a.ty(f, 0)?, a.ty(f, 4)?);
            if q != y {
                return a.err(format!("the pair's part {y} does not match {q}"));
            }
            Ok(vec![a.tensor(4)?])
        }
        Op::RetroAttentioPondera => attention::retro_pondera(f, a),
        Op::RetroAttentioApplica => attention::retro_applica(f, a),
        Op::RetroAttentio => attention::retro_attentio(f, a),
        Op::RetroMatMul => cotangent::retro_matmul(f, a, None),
        Op::RetroMatMulDerivata => cotangent::retro_matmul(f, a, Some(Binary::Multiply)),
        Op::RetroMatMulAdde => cotangent::retro_matmul(f, a, Some(Binary::Add)),
        // The seeded random tensors: faber's SplitMix64 in `ui64` arithmetic.
        Op::Uniformis => random::uniformis(f, a),
        Op::Normalis => random::normalis(f, a),
        Op::Multinomialis => random::multinomialis(f, a),
        // `magnitudines` and `numerus_elementorum` give host values (the function
        // tracer reads them off the static shape); `planata` a list of numbers, which
        // the tracer makes of one slice per element (function.rs): none is one
        // program's tensor result.
        Op::Magnitudines | Op::Planata | Op::Numerus => {
            Err(LowerError::NoLowering { op: op.name() })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(dims: &[usize]) -> TensorType {
        TensorType::new(ElementType::F32, dims)
    }

    /// The result types of `op` on tensor parameters of `params` and `extra`
    /// literal operands after them.
    fn lowered(
        op: Op,
        params: &[TensorType],
        extra: &[Operand],
    ) -> Result<Vec<TensorType>, LowerError> {
        let (mut f, p) = Function::new(params);
        let mut operands: Vec<Operand> = p.into_iter().map(Operand::Tensor).collect();
        operands.extend_from_slice(extra);
        let r = lower_op(&mut f, op, &operands)?;
        Ok(r.iter().map(|&v| f.ty(v).clone()).collect())
    }

    #[test]
    fn result_types_follow_the_native_shape_rules() {
        let mm = |a: &[usize], b: &[usize]| lowered(Op::MatMul, &[f32s(a), f32s(b)], &[]);
        assert_eq!(mm(&[3], &[3]).unwrap(), [f32s(&[])]);
        assert_eq!(mm(&[3], &[3, 4]).unwrap(), [f32s(&[4])]);
        assert_eq!(mm(&[2, 3], &[3]).unwrap(), [f32s(&[2])]);
        assert_eq!(
            mm(&[2, 1, 5, 3], &[4, 3, 6]).unwrap(),
            [f32s(&[2, 4, 5, 6])]
        );
        let add = lowered(Op::Addita, &[f32s(&[4, 1, 3]), f32s(&[2, 1])], &[]);
        assert_eq!(add.unwrap(), [f32s(&[4, 2, 3])]);
        let keep = [Operand::Int(1), Operand::Flag(true)];
        let s = lowered(Op::SummaAxis, &[f32s(&[2, 5, 3])], &keep);
        assert_eq!(s.unwrap(), [f32s(&[2, 1, 3])]);
        let p = lowered(
            Op::Permute,
            &[f32s(&[2, 5, 3])],
            &[Operand::Dims(vec![2, 0, 1])],
        );
        assert_eq!(p.unwrap(), [f32s(&[3, 2, 5])]);
        let mixed = lowered(
            Op::Multiplica,
            &[f32s(&[2]), TensorType::new(ElementType::F64, &[2])],
            &[],
        );
        assert_eq!(mixed.unwrap(), [TensorType::new(ElementType::F64, &[2])]);
    }

    #[test]
    fn the_added_lowerings_have_the_native_result_types() {
        let x = f32s(&[2, 3, 4]);
        let am = lowered(Op::Argmax, std::slice::from_ref(&x), &[]).unwrap();
        assert_eq!(am, [f32s(&[2, 3])]);
        let d = lowered(
            Op::RetroDilata,
            &[f32s(&[2, 1, 4]), x.clone()],
            &[Operand::Int(1), Operand::Flag(true)],
        );
        assert_eq!(d.unwrap(), std::slice::from_ref(&x));
        let wide = TensorType::new(ElementType::F64, &[8]);
        let m = lowered(
            Op::RetroMaximum,
            &[wide, x.clone()],
            &[Operand::Int(1), Operand::Flag(false)],
        );
        assert_eq!(m.unwrap(), [TensorType::new(ElementType::F64, &[2, 3, 4])]);
        let perm = [Operand::Dims(vec![2, 0, 1])];
        let p = lowered(Op::RetroPermute, &[f32s(&[4, 2, 3])], &perm);
        assert_eq!(p.unwrap(), std::slice::from_ref(&x));
        let part = lowered(
            Op::RetroPars,
            &[f32s(&[2, 5, 4]), x.clone(), f32s(&[2, 2, 4])],
            &[Operand::Int(1), Operand::Int(1)],
        );
        assert_eq!(part.unwrap(), [f32s(&[2, 2, 4])]);
        let rms = lowered(
            Op::RetroRmsNorm,
            &[x.clone(), x.clone()],
            &[Operand::Num(1e-6), Operand::Num(1.0)],
        );
        assert!(rms
            .unwrap_err()
            .to_string()
            .contains("operand 3 must be a tensor"));
        let (mut f, p) = Function::new(&[x.clone(), x.clone(), f32s(&[4])]);
        let operands = [
            Operand::Tensor(p[0]),
            Operand::Tensor(p[1]),
            Operand::Num(1e-6),
            Operand::Tensor(p[2]),
        ];
        let r = lower_op(&mut f, Op::RetroRmsNorm, &operands).unwrap();
        let types: Vec<_> = r.iter().map(|&v| f.ty(v).clone()).collect();
        assert_eq!(types, [x.clone(), f32s(&[4])]);
        let ce = lowered(Op::CruxEntropia, &[x.clone(), x.clone()], &[]);
        assert_eq!(ce.unwrap(), [f32s(&[])]);
        let e = lowered(Op::CruxEntropia, &[x.clone(), f32s(&[2, 3])], &[]).unwrap_err();
        assert!(e.to_string().contains("do not match"), "{e}");
        let e = lowered(
            Op::RetroPars,
            &[x.clone(), x.clone(), x],
            &[Operand::Int(1), Operand::Int(1)],
        );
        assert!(e.unwrap_err().to_string().contains("no elements [3, 6)"));
    }

    #[test]
    fn random_tensors_have_the_native_result_types() {
        let f64s = |dims: &[usize]| TensorType::new(ElementType::F64, dims);
        let shape = Operand::Dims(vec![2, 3]);
        let u = lowered(
            Op::Uniformis,
            &[],
            &[
                Operand::Elem(ElementType::F32),
                Operand::Int(-1),
                shape.clone(),
            ],
        );
        assert_eq!(u.unwrap(), [f32s(&[2, 3])]);
        let normal = [
            Operand::Num(0.0),
            Operand::Int(7),
            shape.clone(),
            Operand::Num(0.0),
            Operand::Num(0.02),
        ];
        let n = lowered(Op::Normalis, &[], &normal);
        assert_eq!(n.unwrap(), [f64s(&[2, 3])]);
        let m = lowered(Op::Multinomialis, &[f32s(&[4, 5])], &[Operand::Int(1)]);
        assert_eq!(m.unwrap(), [f32s(&[4])]);
        let m = lowered(Op::Multinomialis, &[f64s(&[5])], &[Operand::Int(1)]);
        assert_eq!(m.unwrap(), [f64s(&[])]);
        let e = lowered(Op::Multinomialis, &[f32s(&[4, 0])], &[Operand::Int(1)]);
        assert_eq!(e.unwrap_err().to_string(), "`multinomialis`: no classes");
        let e = lowered(
            Op::Uniformis,
            &[],
            &[Operand::Elem(ElementType::F32), Operand::Num(1.0), shape],
        );
        assert!(e
            .unwrap_err()
            .to_string()
            .starts_with("`uniformis`: the seed (operand 1) must be an integer"));
    }

    /// `strue` of literals, a number the device computes and a tensor, in order:
    /// two runs of literals become two constants, joined with the device values.
    #[test]
    fn strue_joins_literal_runs_and_device_values() {
        let (mut f, p) = Function::new(&[f32s(&[]), f32s(&[2])]);
        let flat = Operand::List(vec![
            Operand::Num(1.0),
            Operand::Int(2),
            Operand::Tensor(p[0]),
            Operand::List(vec![Operand::Num(0.5), Operand::Tensor(p[1])]),
        ]);
        let seed = Operand::Elem(ElementType::F32);
        let operands = [seed.clone(), flat, Operand::Dims(vec![2, 3])];
        let r = lower_op(&mut f, Op::Strue, &operands).unwrap();
        assert_eq!(f.ty(r[0]), &f32s(&[2, 3]));
        let text = f.finish(&r);
        assert!(
            text.contains("dense<[0x3F800000, 0x40000000]> : tensor<2xf32>"),
            "{text}"
        );
        assert!(
            text.contains("dense<[0x3F000000]> : tensor<1xf32>"),
            "{text}"
        );
        assert_eq!(text.matches("stablehlo.concatenate").count(), 3, "{text}");
        let bad = [
            seed,
            Operand::List(vec![Operand::Flag(true)]),
            Operand::Dims(vec![1]),
        ];
        let (mut f, _) = Function::new(&[]);
        let e = lower_op(&mut f, Op::Strue, &bad).unwrap_err();
        assert!(
            e.to_string().starts_with("`strue`: a tensor holds numbers"),
            "{e}"
        );
    }

    #[test]
    fn misfits_name_the_op_and_ops_without_a_lowering_say_so() {
        let e = lowered(Op::Planata, &[f32s(&[2])], &[]).unwrap_err();
        assert_eq!(e.to_string(), "no StableHLO lowering for op `planata`");
        let e = lowered(Op::MatMul, &[f32s(&[2, 3]), f32s(&[4, 5])], &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "`matmul`: the inner dimensions differ (3 against 4)"
        );
        let e = lowered(Op::Addita, &[f32s(&[2, 3]), f32s(&[4, 3])], &[]).unwrap_err();
        assert!(e.to_string().contains("do not broadcast"), "{e}");
        let e = lowered(Op::Permute, &[f32s(&[2, 3])], &[Operand::Dims(vec![0, 0])]);
        assert!(e.unwrap_err().to_string().contains("not a permutation"));
        let e = lowered(Op::Forma, &[f32s(&[2, 3])], &[Operand::Dims(vec![4])]);
        assert!(e
            .unwrap_err()
            .to_string()
            .contains("6 elements cannot take shape [4]"));
        let bounds = [Operand::Int(2), Operand::Int(1)];
        let e = lowered(Op::Sectio, &[f32s(&[3, 2])], &bounds).unwrap_err();
        assert!(e.to_string().contains("out of range"), "{e}");
        let e = lowered(Op::Exp, &[f32s(&[2]), f32s(&[2])], &[]).unwrap_err();
        assert!(e.to_string().contains("takes 1 operand, 2 given"), "{e}");
    }
}
