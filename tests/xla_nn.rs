//! The neural-network ops with a StableHLO lowering (src/xla/stablehlo/nn.rs) — the
//! activations and their VJPs, the causal mask and softmax (with its VJP), LayerNorm
//! and RMSNorm (with their VJPs), GELU's save-split pair, the embedding gather and the
//! cross-entropy against class ids and against probability targets with their
//! VJPs — compiled and run on a real PJRT
//! plugin against faber's native f32 kernels on random shapes (fixed seeds), with
//! the tolerances of tests/xla_ops.rs's module doc. Without a plugin it prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)`.

mod common;
mod xla_support;

use faber::ir::ops::Op;
use faber::tensor::{self as k, SplitMix64, Tensor};
use faber::xla::Arg;
use xla_support::*;

#[test]
fn activations_masks_and_norms_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_nn::activations") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(77));
    for trial in 0..3 {
        let shape = g.shape(2 + trial % 2);
        // Values in [-3, 3): GELU's and SiLU's curved part.
        let x = g.tensor(&shape, |u| 6.0 * u - 3.0);
        let gr = g.any(&shape);
        let tol = |want: &Tensor| approx(want, 1e-5, 1e-5);
        let what = |op: Op| format!("{} {shape:?}", op.name());
        let maps: [(Op, Native1); 4] = [
            (Op::Gelu, k::gelu),
            (Op::GeluPerExp, k::gelu_exp_identity),
            (Op::TanhPerExp, k::tanh_exp_identity),
            (Op::Silu, k::silu),
        ];
        for (op, native) in maps {
            let want = native(&x).unwrap();
            check(
                &mut dev,
                op,
                &[Arg::Tensor(&x)],
                &want,
                &tol(&want),
                &what(op),
            );
        }
        let y = k::softmax(&x).unwrap();
        let vjps: [(Op, &Tensor, Native2); 5] = [
            (Op::RetroGelu, &x, k::gelu_backward),
            (Op::RetroGeluPerExp, &x, k::gelu_exp_identity_backward),
            (Op::RetroSilu, &x, k::silu_backward),
            (Op::RetroSoftmax, &y, k::softmax_backward),
            (Op::RetroLogSoftmax, &x, k::log_softmax_backward),
        ];
        for (op, second, native) in vjps {
            let want = native(&gr, second).unwrap();
            let args = [Arg::Tensor(&gr), Arg::Tensor(second)];
            check(&mut dev, op, &args, &want, &tol(&want), &what(op));
        }
        let want = k::causal_mask(&x, -1e9).unwrap();
        let args = [Arg::Tensor(&x), Arg::Num(-1e9)];
        check(
            &mut dev,
            Op::LarvaCausalis,
            &args,
            &want,
            EXACT,
            &what(Op::LarvaCausalis),
        );
        let want = k::softmax_causal(&x, 0.5, -1e9).unwrap();
        let args = [Arg::Tensor(&x), Arg::Num(0.5), Arg::Num(-1e9)];
        let op = Op::SoftmaxCausalis;
        check(&mut dev, op, &args, &want, &tol(&want), &what(op));
        // The weights of `softmax_causalis`, and any y: the entries above the
        // diagonal are 0·s whatever y holds there.
        let op = Op::RetroSoftmaxCausalis;
        for y in [want, g.any(&shape)] {
            let want = k::softmax_causal_backward(&gr, &y, 0.5).unwrap();
            let args = [Arg::Tensor(&gr), Arg::Tensor(&y), Arg::Num(0.5)];
            check(&mut dev, op, &args, &want, &tol(&want), &what(op));
        }
        let d = shape[shape.len() - 1];
        let (gamma, beta) = (g.any(&[d]), g.any(&[d]));
        let axis = Arg::Int(shape.len() as i64 - 1);
        let want = k::layernorm(&x, shape.len() - 1, 1e-5, &gamma, &beta).unwrap();
        let args = [
            Arg::Tensor(&x),
            axis.clone(),
            Arg::Num(1e-5),
            Arg::Tensor(&gamma),
            Arg::Tensor(&beta),
        ];
        check(
            &mut dev,
            Op::Laminatio,
            &args,
            &want,
            &tol(&want),
            &what(Op::Laminatio),
        );
        let (dx, dg, db) = k::layernorm_backward(&gr, &x, 1e-5, &gamma).unwrap();
        let args = [
            Arg::Tensor(&gr),
            Arg::Tensor(&x),
            Arg::Num(1e-5),
            Arg::Tensor(&gamma),
        ];
        check_parts(
            &mut dev,
            Op::RetroLaminatio,
            &args,
            &[dx, dg, db],
            "retro_laminatio",
        );
        let r = g.any(&shape[1..]);
        let (dx, dg, db) = k::layernorm_backward_adde(&gr, &x, 1e-5, &gamma, Some(&r)).unwrap();
        let args = [
            Arg::Tensor(&gr),
            Arg::Tensor(&x),
            Arg::Num(1e-5),
            Arg::Tensor(&gamma),
            Arg::Tensor(&r),
        ];
        let op = Op::RetroLaminatioAdde;
        check_parts(&mut dev, op, &args, &[dx, dg, db], "retro_laminatio_adde");
        let (y, dy) = k::gelu_cum_derivata(&x).unwrap();
        check_parts(
            &mut dev,
            Op::GeluCumDerivata,
            &[Arg::Tensor(&x)],
            &[y, dy.clone()],
            "gelu_cum_derivata",
        );
        let want = k::gelu_backward_derivata(&gr, &dy).unwrap();
        let args = [Arg::Tensor(&gr), Arg::Tensor(&dy)];
        check(
            &mut dev,
            Op::RetroGeluDerivata,
            &args,
            &want,
            &rounded(&want),
            "retro_gelu_derivata",
        );
        let want = k::rms_norm(&x, shape.len() - 1, 1e-6, &gamma).unwrap();
        let args = [Arg::Tensor(&x), axis, Arg::Num(1e-6), Arg::Tensor(&gamma)];
        check(
            &mut dev,
            Op::RmsNorm,
            &args,
            &want,
            &tol(&want),
            &what(Op::RmsNorm),
        );
        let (dx, dg) = k::rms_norm_backward(&gr, &x, 1e-6, &gamma).unwrap();
        let args = [
            Arg::Tensor(&gr),
            Arg::Tensor(&x),
            Arg::Num(1e-6),
            Arg::Tensor(&gamma),
        ];
        check_parts(
            &mut dev,
            Op::RetroRmsNorm,
            &args,
            &[dx, dg],
            "retro_rms_norm",
        );
    }
    // Rows of 5 and 4 (the random shapes above may all have rows of 1); rank 1:
    // ∂γ is g ⊙ x̂ itself (no rows to sum).
    for shape in [vec![5], vec![3, 4], vec![2, 1, 5]] {
        let (x, gr) = (g.any(&shape), g.any(&shape));
        let gamma = g.any(&shape[shape.len() - 1..]);
        let (dx, dg) = k::rms_norm_backward(&gr, &x, 1e-6, &gamma).unwrap();
        let args = [
            Arg::Tensor(&gr),
            Arg::Tensor(&x),
            Arg::Num(1e-6),
            Arg::Tensor(&gamma),
        ];
        let what = format!("retro_rms_norm {shape:?}");
        check_parts(&mut dev, Op::RetroRmsNorm, &args, &[dx, dg], &what);
    }
}

/// Class ids `[0, classes)` as an f32 tensor of `shape` (how programs hold them).
fn ids(g: &mut Gen, shape: &[usize], classes: usize) -> Tensor {
    g.tensor(shape, |u| (u * classes as f64).floor())
}

#[test]
fn embeddings_and_cross_entropy_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_nn::classes") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(31));
    for trial in 0..3 {
        let (v, d) = (2 + g.below(5), 1 + g.below(4));
        let ishape = g.shape(1 + trial % 2);
        let (table, y) = (g.any(&[v, d]), ids(&mut g, &ishape, v));
        let want = k::embedding(&table, &y).unwrap();
        let args = [Arg::Tensor(&table), Arg::Tensor(&y)];
        check(
            &mut dev,
            Op::Collige,
            &args,
            &want,
            EXACT,
            &format!("collige {ishape:?}"),
        );
        let gs = [ishape.clone(), vec![d]].concat();
        let gr = g.any(&gs);
        let want = k::embedding_table_backward(&y, &gr, &table).unwrap();
        let n: usize = ishape.iter().product();
        let bound = sum_bound(
            &k::embedding_table_backward(&y, &abs(&gr), &table).unwrap(),
            n,
        );
        let args = [Arg::Tensor(&gr), Arg::Tensor(&y), Arg::Tensor(&table)];
        check(
            &mut dev,
            Op::RetroCollige,
            &args,
            &want,
            &bound,
            "retro_collige",
        );

        let z = g.tensor(&[ishape.clone(), vec![v]].concat(), |u| 6.0 * u - 3.0);
        let want = scalar(k::cross_entropy_indices_value(&z, &y).unwrap());
        let tol = approx(&want, 1e-5, 1e-5);
        let args = [Arg::Tensor(&z), Arg::Tensor(&y)];
        check(
            &mut dev,
            Op::CruxEntropiaIndices,
            &args,
            &want,
            &tol,
            "crux_entropia_indices",
        );
        let want = k::cross_entropy_indices_backward(0.75, &z, &y).unwrap();
        let tol = approx(&want, 1e-5, 1e-6);
        let args = [Arg::Num(0.75), Arg::Tensor(&z), Arg::Tensor(&y)];
        check(
            &mut dev,
            Op::RetroCruxIndices,
            &args,
            &want,
            &tol,
            "retro_crux_indices",
        );

        // Probability targets (softmax rows) for `crux_entropia` and its VJPs; the
        // native f32 kernels compute in f64 and round once.
        let t = k::softmax(&g.any(z.shape())).unwrap();
        let want = scalar(k::cross_entropy_value(&z, &t).unwrap());
        let tol = approx(&want, 1e-5, 1e-5);
        let args = [Arg::Tensor(&z), Arg::Tensor(&t)];
        check(
            &mut dev,
            Op::CruxEntropia,
            &args,
            &want,
            &tol,
            "crux_entropia",
        );
        let want = k::cross_entropy_backward(0.75, &z, &t).unwrap();
        let tol = approx(&want, 1e-5, 1e-6);
        let args = [Arg::Num(0.75), Arg::Tensor(&z), Arg::Tensor(&t)];
        let what = "retro_crux_entropia";
        check(&mut dev, Op::RetroCruxEntropia, &args, &want, &tol, what);
        let want = k::cross_entropy_targets_backward(0.75, &z).unwrap();
        let tol = approx(&want, 1e-5, 1e-6);
        let args = [Arg::Num(0.75), Arg::Tensor(&z)];
        let what = "retro_crux_scopi";
        check(&mut dev, Op::RetroCruxScopi, &args, &want, &tol, what);
    }
}

/// AdamW's fused step against the native kernel (f64 inside, rounded once): the
/// same operations in f32 on the device, each of p′, m′, v′ within 1e-5·|y| + 1e-5.
#[test]
fn adamw_passus_agrees_with_the_native_step() {
    let Some(mut dev) = device("xla_nn::adamw") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(8));
    for t in 1..4i32 {
        let shape = g.shape(1 + t as usize % 3);
        let (p, gr, m) = (g.any(&shape), g.any(&shape), g.any(&shape));
        let v = g.pos(&shape);
        let (b1, b2, lr, wd, eps) = (0.9, 0.999, 3e-3, 0.01, 1e-8);
        let c = k::AdamCoef {
            beta1: b1,
            one_minus_beta1: 1.0 - b1,
            beta2: b2,
            one_minus_beta2: 1.0 - b2,
            inv_bc2_sqrt: 1.0 / (1.0 - f64::powi(b2, t)).sqrt(),
            eps,
            decay: 1.0 - lr * wd,
            step: lr / (1.0 - f64::powi(b1, t)),
        };
        let (p2, m2, v2) = k::adamw_step(&p, &gr, &m, &v, &c).unwrap();
        let coefs = vec![
            c.beta1,
            c.one_minus_beta1,
            c.beta2,
            c.one_minus_beta2,
            c.inv_bc2_sqrt,
            c.eps,
            c.decay,
            c.step,
        ];
        let args = [
            Arg::Tensor(&p),
            Arg::Tensor(&gr),
            Arg::Tensor(&m),
            Arg::Tensor(&v),
            Arg::Nums(coefs),
        ];
        check_parts(
            &mut dev,
            Op::AdamwPassus,
            &args,
            &[p2, m2, v2],
            &format!("adamw_passus step {t}"),
        );
    }
}

/// The fused causal attention ops and their VJPs against the native kernels
/// (1e-5·|y| + 1e-5: sums of at most 4 products per element, one softmax).
#[test]
fn attention_and_its_vjps_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_nn::attention") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(64));
    for (b, t, d, h) in [(1, 1, 2, 1), (2, 3, 4, 2), (1, 4, 6, 3)] {
        let (q, kk, v) = (g.any(&[b, t, d]), g.any(&[b, t, d]), g.any(&[b, t, d]));
        let what = format!("[{b}, {t}, {d}] with {h} heads");
        let hh = Arg::Int(h as i64);
        let p = k::attention_weights(&q, &kk, h).unwrap();
        let args = [Arg::Tensor(&q), Arg::Tensor(&kk), hh.clone()];
        check_parts(
            &mut dev,
            Op::AttentioPondera,
            &args,
            std::slice::from_ref(&p),
            &what,
        );
        let y = k::attention_apply(&p, &v).unwrap();
        let args = [Arg::Tensor(&p), Arg::Tensor(&v)];
        check_parts(
            &mut dev,
            Op::AttentioApplica,
            &args,
            std::slice::from_ref(&y),
            &what,
        );
        let args = [
            Arg::Tensor(&q),
            Arg::Tensor(&kk),
            Arg::Tensor(&v),
            hh.clone(),
        ];
        let want = k::attention(&q, &kk, &v, h).unwrap();
        check_parts(&mut dev, Op::Attentio, &args, &[want], &what);
        let (y2, p2) = k::attention_with_weights(&q, &kk, &v, h).unwrap();
        check_parts(&mut dev, Op::AttentioCumPonderibus, &args, &[y2, p2], &what);
        let gy = g.any(&[b, t, d]);
        let (dp, dv) = k::attention_apply_backward(&gy, &p, &v).unwrap();
        let args = [Arg::Tensor(&gy), Arg::Tensor(&p), Arg::Tensor(&v)];
        check_parts(
            &mut dev,
            Op::RetroAttentioApplica,
            &args,
            &[dp.clone(), dv],
            &what,
        );
        let (dq, dk) = k::attention_weights_backward(&dp, &p, &q, &kk, h).unwrap();
        let args = [
            Arg::Tensor(&dp),
            Arg::Tensor(&p),
            Arg::Tensor(&q),
            Arg::Tensor(&kk),
            hh.clone(),
        ];
        check_parts(&mut dev, Op::RetroAttentioPondera, &args, &[dq, dk], &what);
        let (dq, dk, dv) = k::attention_backward(&gy, &p, &q, &kk, &v, h).unwrap();
        let args = [
            Arg::Tensor(&gy),
            Arg::Tensor(&p),
            Arg::Tensor(&q),
            Arg::Tensor(&kk),
            Arg::Tensor(&v),
            hh,
        ];
        check_parts(&mut dev, Op::RetroAttentio, &args, &[dq, dk, dv], &what);
    }
}
