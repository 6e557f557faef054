//! Each Radix IR op with a StableHLO lowering (src/xla/stablehlo/lower.rs), compiled
//! and run on a real PJRT plugin, against faber's native f32 kernel on random shapes
//! (fixed seeds). Runs when a plugin is at hand (`FABER_PJRT_PLUGIN`, or `.venv-xla/`
//! from scripts/xla-setup.sh); otherwise prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)`.
//!
//! Tolerances, per element, `u` = 2⁻²⁴ (f32's unit roundoff):
//! * data movement (`forma`, `transpone`, `permute`, slices, `concatena`, `strue`,
//!   `retro_permute`, `retro_pars`, `retro_maximum`, a sum's `retro_dilata`) and the
//!   exact maps (`neg`, `relu`, `positiva`): the same bits; `argmax` the same indices
//!   (rows without ties, then ties and NaN by hand);
//! * one rounded operation (`+ − × ÷`, `reciproca`, `scala`, `addita_bias`, a mean's
//!   `retro_dilata`): 2u·|y|;
//! * `exp`, `log`, `sqrt`, `tanh` (XLA's f32 approximations against faber's correctly
//!   rounded ones): 1e-6·|y| + 1e-7 — a few ulps;
//! * sums and products of k terms: 2·(k + 1)·u·Σ|terms| — the standard bound γₖ for
//!   each of the two summation orders, Σ|terms| computed natively from |operands|;
//! * `activatio_softmax`, `log_softmax`: 1e-5·|y| + 1e-6;
//! * the composite activations, their VJPs, the causal softmax and the norms (several
//!   roundings and one `exp`/`tanh`/`sqrt` each; rows of at most 4): 1e-5·|y| + 1e-5.

mod common;
mod xla_support;

use common::{pjrt_plugin, say_no_plugin};
use faber::ir::ops::Op;
use faber::tensor::{self as k, SplitMix64, Tensor, Trans};
use faber::xla::{Arg, Device, Plugin, XlaError};
use xla_support::*;

#[test]
fn elementwise_ops_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_ops::elementwise") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(24));
    for trial in 0..4 {
        let out = g.shape(trial % 4);
        let (sa, sb) = (g.broadcastable(&out), g.broadcastable(&out));
        let (sa, sb) = if trial % 2 == 0 {
            (out.clone(), sb)
        } else {
            (sa, out.clone())
        };
        let (a, b, p) = (g.any(&sa), g.any(&sb), g.pos(&sb));
        let what = |op: Op| format!("{} {sa:?} {sb:?}", op.name());
        let binaries: [(Op, &Tensor, Native2); 4] = [
            (Op::Addita, &b, k::add),
            (Op::Subtrahe, &b, k::sub),
            (Op::Multiplica, &b, k::mul),
            (Op::Divide, &p, k::div),
        ];
        for (op, y, native) in binaries {
            let want = native(&a, y).unwrap();
            let args = [Arg::Tensor(&a), Arg::Tensor(y)];
            check(&mut dev, op, &args, &want, &rounded(&want), &what(op));
        }
        let want = k::add_scalar(&a, 0.375).unwrap();
        let args = [Arg::Tensor(&a), Arg::Num(0.375)];
        check(
            &mut dev,
            Op::Addita,
            &args,
            &want,
            &rounded(&want),
            "addita number",
        );
        let want = k::scale(&a, -1.5).unwrap();
        let args = [Arg::Tensor(&a), Arg::Num(-1.5)];
        check(&mut dev, Op::Scala, &args, &want, &rounded(&want), "scala");

        let pa = g.pos(&sa);
        let exact: [(Op, Native1); 3] = [
            (Op::Neg, k::neg),
            (Op::Relu, k::relu),
            (Op::Positiva, k::positive),
        ];
        for (op, native) in exact {
            let want = native(&a).unwrap();
            check(&mut dev, op, &[Arg::Tensor(&a)], &want, EXACT, &what(op));
        }
        let maps: [(Op, &Tensor, Native1); 5] = [
            (Op::Exp, &a, k::exp),
            (Op::Tanh, &a, k::tanh),
            (Op::Log, &pa, k::log),
            (Op::Sqrt, &pa, k::sqrt),
            (Op::Reciproca, &pa, k::reciprocal),
        ];
        for (op, x, native) in maps {
            let want = native(x).unwrap();
            let tol = approx(&want, 1e-6, 1e-7);
            check(&mut dev, op, &[Arg::Tensor(x)], &want, &tol, &what(op));
        }
        // retro_ad_formam: a cotangent of the result's shape summed down to an
        // operand's; retro_imple: an operand's shape filled with a number.
        let (g2, like) = (g.any(&out), g.any(&sb));
        let want = k::sum_to_shape(&g2, &sb).unwrap();
        let summed = out.iter().product::<usize>() / sb.iter().product::<usize>();
        let bound = sum_bound(&k::sum_to_shape(&abs(&g2), &sb).unwrap(), summed);
        let args = [Arg::Tensor(&g2), Arg::Tensor(&like)];
        check(
            &mut dev,
            Op::RetroAdFormam,
            &args,
            &want,
            &bound,
            &format!("retro_ad_formam {out:?} → {sb:?}"),
        );
        let want = Tensor::full_of(k::DType::F32, -0.75, &sb).unwrap();
        let args = [Arg::Tensor(&like), Arg::Num(-0.75)];
        check(&mut dev, Op::RetroImple, &args, &want, EXACT, "retro_imple");
        // addita_bias: a bias along the last axis.
        let xs = g.shape(1 + trial % 3);
        let (x, bias) = (g.any(&xs), g.any(&xs[xs.len() - 1..]));
        let want = k::add_bias(&x, &bias).unwrap();
        let args = [Arg::Tensor(&x), Arg::Tensor(&bias)];
        check(
            &mut dev,
            Op::AdditaBias,
            &args,
            &want,
            &rounded(&want),
            "addita_bias",
        );
    }
}

#[test]
fn products_agree_with_the_native_matmul() {
    let Some(mut dev) = device("xla_ops::products") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(2024));
    let (m, kk, n) = (2 + g.below(5), 1 + g.below(9), 2 + g.below(5));
    // (left, right): dot, vec-mat, mat-vec, matrices, batched with broadcast batches.
    let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![kk], vec![kk]),
        (vec![kk], vec![kk, n]),
        (vec![m, kk], vec![kk]),
        (vec![m, kk], vec![kk, n]),
        (vec![3, m, kk], vec![3, kk, n]),
        (vec![3, m, kk], vec![kk, n]),
        (vec![m, kk], vec![2, kk, n]),
        (vec![2, 1, m, kk], vec![3, kk, n]),
    ];
    for (sa, sb) in cases {
        let (a, b) = (g.any(&sa), g.any(&sb));
        let want = k::matmul(&a, &b).unwrap();
        let bound = sum_bound(&k::matmul(&abs(&a), &abs(&b)).unwrap(), kk);
        let args = [Arg::Tensor(&a), Arg::Tensor(&b)];
        check(
            &mut dev,
            Op::MatMul,
            &args,
            &want,
            &bound,
            &format!("matmul {sa:?}·{sb:?}"),
        );
    }
    for batch in [vec![], vec![2]] {
        let shape = |x: usize, y: usize| [batch.clone(), vec![x, y]].concat();
        // a · bᵀ with b [n, k]; aᵀ · b with a [k, m].
        let (a, bt) = (g.any(&shape(m, kk)), g.any(&shape(n, kk)));
        let want = k::matmul_t(&a, &bt, Trans::B).unwrap();
        let bound = sum_bound(&k::matmul_t(&abs(&a), &abs(&bt), Trans::B).unwrap(), kk);
        let args = [Arg::Tensor(&a), Arg::Tensor(&bt)];
        check(&mut dev, Op::MatMulNT, &args, &want, &bound, "matmul_nt");
        let (at, b) = (g.any(&shape(kk, m)), g.any(&shape(kk, n)));
        let want = k::matmul_t(&at, &b, Trans::A).unwrap();
        let bound = sum_bound(&k::matmul_t(&abs(&at), &abs(&b), Trans::A).unwrap(), kk);
        let args = [Arg::Tensor(&at), Arg::Tensor(&b)];
        check(&mut dev, Op::MatMulTN, &args, &want, &bound, "matmul_tn");
    }
    for xs in [vec![m, kk], vec![2, m, kk]] {
        let (x, w, b) = (g.any(&xs), g.any(&[kk, n]), g.any(&[n]));
        let want = k::linear(&x, &w, &b).unwrap();
        let terms = k::linear(&abs(&x), &abs(&w), &abs(&b)).unwrap();
        let args = [Arg::Tensor(&x), Arg::Tensor(&w), Arg::Tensor(&b)];
        let bound = sum_bound(&terms, kk + 1);
        check(
            &mut dev,
            Op::Lineare,
            &args,
            &want,
            &bound,
            &format!("lineare {xs:?}"),
        );
    }
}

#[test]
fn reductions_and_softmax_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_ops::reductions") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(7));
    for trial in 0..4 {
        let shape = g.shape(1 + trial % 3);
        let x = g.any(&shape);
        let n: usize = shape.iter().product();
        let sum_abs = k::sum_value(&abs(&x));
        let want = scalar(k::sum_value(&x));
        let bound = [2.0 * (n as f64 + 1.0) * U * sum_abs + 2.0 * U * want.values()[0].abs()];
        check(
            &mut dev,
            Op::Summa,
            &[Arg::Tensor(&x)],
            &want,
            &bound,
            "summa",
        );
        let want = scalar(k::mean_value(&x).unwrap());
        let bound = [bound[0] / n as f64 + 2.0 * U * want.values()[0].abs()];
        check(
            &mut dev,
            Op::Media,
            &[Arg::Tensor(&x)],
            &want,
            &bound,
            "media",
        );
        for axis in 0..shape.len() {
            for keep in [false, true] {
                let args = [Arg::Tensor(&x), Arg::Int(axis as i64), Arg::Flag(keep)];
                let what = format!("{shape:?} axis {axis} keep {keep}");
                let d = shape[axis];
                let terms = k::sum_axis(&abs(&x), axis, keep).unwrap();
                let want = k::sum_axis(&x, axis, keep).unwrap();
                let bound = sum_bound(&terms, d);
                check(&mut dev, Op::SummaAxis, &args, &want, &bound, &what);
                let want = k::mean_axis(&x, axis, keep).unwrap();
                let bound: Vec<f64> = bound
                    .iter()
                    .zip(values(&want))
                    .map(|(b, w)| b / d as f64 + 2.0 * U * w.abs())
                    .collect();
                check(&mut dev, Op::MediaAxis, &args, &want, &bound, &what);
                let want = k::max_axis(&x, axis, keep).unwrap();
                check(&mut dev, Op::MaximumAxis, &args, &want, EXACT, &what);
            }
        }
        let want = k::softmax(&x).unwrap();
        let tol = approx(&want, 1e-5, 1e-6);
        check(
            &mut dev,
            Op::Softmax,
            &[Arg::Tensor(&x)],
            &want,
            &tol,
            "softmax",
        );
        let want = k::log_softmax(&x).unwrap();
        let tol = approx(&want, 1e-5, 1e-6);
        check(
            &mut dev,
            Op::LogSoftmax,
            &[Arg::Tensor(&x)],
            &want,
            &tol,
            "log_softmax",
        );
    }
    // NaN propagates through `maximum_axis` as natively (the plugin's reduction
    // alone skips it); ±∞ stay themselves.
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let x = Tensor::from_f32(vec![1.0, nan, 3.0, -inf, 2.0, inf], &[2, 3]).unwrap();
    for axis in 0..2 {
        let want = k::max_axis(&x, axis, false).unwrap();
        let args = [Arg::Tensor(&x), Arg::Int(axis as i64), Arg::Flag(false)];
        let what = format!("maximum_axis with NaN, axis {axis}");
        check(&mut dev, Op::MaximumAxis, &args, &want, EXACT, &what);
    }
}

/// `shape` filled with the values 0, 1, …, n − 1 in a random order, mapped into
/// [-1, 1): rows without ties, so "the first maximum" is the only one.
fn distinct(g: &mut Gen, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let mut v: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        v.swap(i, g.below(i as u64 + 1));
    }
    let v = v
        .iter()
        .map(|&i| ((i as f64 + 0.5) / n as f64 * 2.0 - 1.0) as f32)
        .collect();
    Tensor::from_f32(v, shape).unwrap()
}

/// `argmax` and the reductions' cotangents against the native kernels, on tensors
/// without ties (`distinct`): `argmax` the same indices, `retro_maximum` the same
/// bits (g moved, zeros elsewhere), `retro_dilata` the same bits for a sum (g
/// copied) and 2u·|y| for a mean (one rounded division against the native
/// `(g·(1/n))` rounded once from f64). Then ties and a NaN: the first maximum, the
/// first NaN, as natively.
#[test]
fn argmax_and_the_reduction_cotangents_agree_with_the_native_kernels() {
    let Some(mut dev) = device("xla_ops::argmax") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(41));
    for trial in 0..4 {
        let shape = g.shape(1 + trial % 3);
        let x = distinct(&mut g, &shape);
        let want = k::argmax(&x).unwrap();
        let what = format!("argmax {shape:?}");
        check(
            &mut dev,
            Op::Argmax,
            &[Arg::Tensor(&x)],
            &want,
            EXACT,
            &what,
        );
        for axis in 0..shape.len() {
            let mut reduced = shape.clone();
            reduced.remove(axis);
            let gr = g.any(&reduced);
            let what = format!("{shape:?} axis {axis}");
            for mean in [false, true] {
                let want = k::sum_axis_backward(&gr, &x, axis, mean).unwrap();
                let tol = if mean { rounded(&want) } else { EXACT.to_vec() };
                let args = [
                    Arg::Tensor(&gr),
                    Arg::Tensor(&x),
                    Arg::Int(axis as i64),
                    Arg::Flag(mean),
                ];
                let what = format!("retro_dilata {what} mean {mean}");
                check(&mut dev, Op::RetroDilata, &args, &want, &tol, &what);
            }
            // The cotangent of a `keep` reduction: the axis kept as extent 1.
            let mut kept = shape.clone();
            kept[axis] = 1;
            for (gg, keep) in [(gr.clone(), false), (k::reshape(&gr, &kept).unwrap(), true)] {
                let want = k::max_axis_backward(&gg, &x, axis).unwrap();
                let args = [
                    Arg::Tensor(&gg),
                    Arg::Tensor(&x),
                    Arg::Int(axis as i64),
                    Arg::Flag(keep),
                ];
                let what = format!("retro_maximum {what} keep {keep}");
                check(&mut dev, Op::RetroMaximum, &args, &want, EXACT, &what);
            }
        }
    }
    let ties = Tensor::from_f32(vec![1.0, 3.0, 3.0, 2.0, 2.0, 0.0], &[2, 3]).unwrap();
    let want = k::argmax(&ties).unwrap();
    check(
        &mut dev,
        Op::Argmax,
        &[Arg::Tensor(&ties)],
        &want,
        EXACT,
        "ties",
    );
    let gr = g.any(&[2]);
    let want = k::max_axis_backward(&gr, &ties, 1).unwrap();
    let args = [
        Arg::Tensor(&gr),
        Arg::Tensor(&ties),
        Arg::Int(1),
        Arg::Flag(false),
    ];
    check(&mut dev, Op::RetroMaximum, &args, &want, EXACT, "ties");
    let nan = f32::NAN;
    let x = Tensor::from_f32(vec![1.0, nan, 3.0, nan, 2.0, 0.5, 4.0, 5.0, nan], &[3, 3]).unwrap();
    let want = k::argmax(&x).unwrap();
    assert_eq!(values(&want), [1.0, 0.0, 2.0]);
    check(
        &mut dev,
        Op::Argmax,
        &[Arg::Tensor(&x)],
        &want,
        EXACT,
        "NaN",
    );
}

#[test]
fn shape_ops_move_the_same_bits() {
    let Some(mut dev) = device("xla_ops::shapes") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(99));
    for trial in 0..3 {
        let shape = g.shape(2 + trial % 2);
        let x = g.any(&shape);
        let r = shape.len();
        let n: usize = shape.iter().product();
        let flat = [n];
        let want = k::reshape(&x, &flat).unwrap();
        let args = [Arg::Tensor(&x), Arg::Dims(flat.to_vec())];
        check(&mut dev, Op::Forma, &args, &want, EXACT, "forma");
        let want = k::transpose_last(&x).unwrap();
        check(
            &mut dev,
            Op::TransponeUltimas,
            &[Arg::Tensor(&x)],
            &want,
            EXACT,
            "transpone_ultimas",
        );
        let mut perm: Vec<usize> = (0..r).collect();
        perm.rotate_left(1 + trial % (r - 1));
        let want = k::permute(&x, &perm).unwrap();
        let args = [Arg::Tensor(&x), Arg::Dims(perm.clone())];
        check(
            &mut dev,
            Op::Permute,
            &args,
            &want,
            EXACT,
            &format!("permute {perm:?}"),
        );
        let (s, e) = (g.below(shape[0] as u64), shape[0]);
        let want = k::slice_rows(&x, s, e).unwrap();
        let args = [Arg::Tensor(&x), Arg::Int(s as i64), Arg::Int(e as i64)];
        check(&mut dev, Op::Sectio, &args, &want, EXACT, "sectio");
        let axis = r - 1;
        let (s, e) = (g.below(shape[axis] as u64), shape[axis]);
        let want = k::narrow(&x, axis, s, e).unwrap();
        let args = [
            Arg::Tensor(&x),
            Arg::Int(axis as i64),
            Arg::Int(s as i64),
            Arg::Int(e as i64),
        ];
        check(&mut dev, Op::Angusta, &args, &want, EXACT, "angusta");
        let mut ys = shape.clone();
        ys[trial % r] = 1 + g.below(3);
        let y = g.any(&ys);
        let want = k::concat(&[&x, &y], trial % r).unwrap();
        let args = [
            Arg::Tensor(&x),
            Arg::Tensor(&y),
            Arg::Int((trial % r) as i64),
        ];
        check(&mut dev, Op::Concatena, &args, &want, EXACT, "concatena");
    }
    let m = g.any(&[3, 5]);
    let want = k::transpose(&m).unwrap();
    check(
        &mut dev,
        Op::Transpone,
        &[Arg::Tensor(&m)],
        &want,
        EXACT,
        "transpone",
    );
}

/// The shape ops' cotangents — `retro_permute` (the inverse permutation) and
/// `retro_pars` (one operand's part of a `concatena`) — and `strue` (f64 numbers
/// rounded once to f32, as `Tensor::from_flat_of`): the same bits.
#[test]
fn shape_cotangents_and_strue_move_the_same_bits() {
    let Some(mut dev) = device("xla_ops::shape_cotangents") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(57));
    for trial in 0..4 {
        let shape = g.shape(2 + trial % 3);
        let r = shape.len();
        let mut perm: Vec<usize> = (0..r).collect();
        perm.rotate_left(1 + trial % (r - 1));
        if trial % 2 == 1 {
            perm.swap(0, r - 1);
        }
        let permuted: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let gr = g.any(&permuted);
        let want = k::permute(&gr, &k::inverse_permutation(&perm).unwrap()).unwrap();
        assert_eq!(want.shape(), shape.as_slice());
        let args = [Arg::Tensor(&gr), Arg::Dims(perm.clone())];
        let what = format!("retro_permute {perm:?}");
        check(&mut dev, Op::RetroPermute, &args, &want, EXACT, &what);

        let axis = trial % r;
        let mut ys = shape.clone();
        ys[axis] = 1 + g.below(3);
        let (x, y) = (g.any(&shape), g.any(&ys));
        let joined = k::concat(&[&x, &y], axis).unwrap();
        let gj = g.any(joined.shape());
        for which in 0..2 {
            let want = k::concat_part(&gj, &x, &y, axis, which == 0).unwrap();
            let args = [
                Arg::Tensor(&gj),
                Arg::Tensor(&x),
                Arg::Tensor(&y),
                Arg::Int(axis as i64),
                Arg::Int(which),
            ];
            let what = format!("retro_pars {shape:?} {ys:?} axis {axis} part {which}");
            check(&mut dev, Op::RetroPars, &args, &want, EXACT, &what);
        }

        let n: usize = shape.iter().product();
        let flat: Vec<f64> = (0..n).map(|_| 2.0 * g.0.uniform() - 1.0).collect();
        let want = Tensor::from_flat_of(k::DType::F32, flat.clone(), &shape).unwrap();
        let seed = g.any(&[1]);
        let args = [
            Arg::Tensor(&seed),
            Arg::Nums(flat),
            Arg::Dims(shape.clone()),
        ];
        check(&mut dev, Op::Strue, &args, &want, EXACT, "strue");
    }
}

/// `retro_matmul` and its epilogues against the native `matmul_backward` for every
/// rank pair `·` takes (the ranks a companion did not know statically).
#[test]
fn retro_matmul_agrees_with_the_native_backward() {
    let Some(mut dev) = device("xla_ops::retro_matmul") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(12));
    let (m, kk, n) = (2, 3, 4);
    let cases: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![kk], vec![kk]),
        (vec![kk], vec![kk, n]),
        (vec![m, kk], vec![kk]),
        (vec![m, kk], vec![kk, n]),
        (vec![2, m, kk], vec![kk, n]),
        (vec![2, m, kk], vec![2, kk, n]),
    ];
    for (sa, sb) in cases {
        let (a, b) = (g.any(&sa), g.any(&sb));
        let y = k::matmul(&a, &b).unwrap();
        let gy = g.any(y.shape());
        let what = format!("retro_matmul {sa:?}·{sb:?}");
        let (da, db) = k::matmul_backward(&a, &b, &gy, None).unwrap();
        let args = [Arg::Tensor(&a), Arg::Tensor(&b), Arg::Tensor(&gy)];
        let got = dev.run_op(Op::RetroMatMul, &args).unwrap();
        assert_eq!(got.len(), 2, "{what}");
        for (x, w) in got.iter().zip([&da, &db]) {
            assert_eq!(x.shape(), w.shape(), "{what}");
            for (p, q) in values(x).iter().zip(values(w)) {
                assert!(
                    (p - q).abs() <= 1e-5 * (1.0 + q.abs()),
                    "{what}: {p} against {q}"
                );
            }
        }
        // The epilogues: ∂a ⊙ d and r + ∂a.
        let d = g.any(&sa);
        let (dad, _) = k::matmul_backward(&a, &b, &gy, Some(k::VjpPost::Scale(&d))).unwrap();
        let (dar, _) = k::matmul_backward(&a, &b, &gy, Some(k::VjpPost::AddTo(&d))).unwrap();
        for (op, want) in [(Op::RetroMatMulDerivata, dad), (Op::RetroMatMulAdde, dar)] {
            let args = [
                Arg::Tensor(&a),
                Arg::Tensor(&b),
                Arg::Tensor(&gy),
                Arg::Tensor(&d),
            ];
            let got = dev.run_op(op, &args).unwrap();
            for (p, q) in values(&got[0]).iter().zip(values(&want)) {
                assert!(
                    (p - q).abs() <= 1e-5 * (1.0 + q.abs()),
                    "{}: {p} against {q}",
                    op.name()
                );
            }
        }
    }
}

#[test]
fn f64_operands_compute_in_f64() {
    let Some(mut dev) = device("xla_ops::f64") else {
        return;
    };
    let mut rng = SplitMix64::new(5);
    let a = rng.normal_tensor(&[4, 6], 0.0, 1.0).unwrap();
    let b = rng.normal_tensor(&[6, 3], 0.0, 1.0).unwrap();
    let got = dev
        .run_op(Op::MatMul, &[Arg::Tensor(&a), Arg::Tensor(&b)])
        .unwrap();
    let want = k::matmul(&a, &b).unwrap();
    assert_eq!(got[0].dtype(), k::DType::F64);
    for (g, w) in values(&got[0]).iter().zip(values(&want)) {
        assert!((g - w).abs() <= 1e-14 * (1.0 + w.abs()), "{g} against {w}");
    }
}

/// One executable per (program, shapes, element types): the same op on the same
/// shapes again is a hit; other shapes, another literal operand or another op
/// compile anew.
#[test]
fn the_compile_cache_hits_on_the_same_program_and_shapes() {
    let Some(mut dev) = device("xla_ops::cache") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(1));
    let (a, b) = (g.any(&[2, 3]), g.any(&[2, 3]));
    let c = g.any(&[3, 2]);
    let add = |dev: &mut Device, x: &Tensor, y: &Tensor| {
        dev.run_op(Op::Addita, &[Arg::Tensor(x), Arg::Tensor(y)])
            .unwrap()
    };
    let first = add(&mut dev, &a, &b);
    assert_eq!((dev.cache().hits(), dev.cache().misses()), (0, 1));
    // Other values, same shapes: a hit, and the new values are used.
    let second = add(&mut dev, &b, &b);
    assert_eq!((dev.cache().hits(), dev.cache().misses()), (1, 1));
    assert_ne!(values(&first[0]), values(&second[0]));
    assert_eq!(values(&second[0]), values(&k::add(&b, &b).unwrap()));
    add(&mut dev, &c, &c);
    assert_eq!((dev.cache().hits(), dev.cache().misses()), (1, 2));
    for s in [2.0, 3.0, 2.0] {
        dev.run_op(Op::Scala, &[Arg::Tensor(&a), Arg::Num(s)])
            .unwrap();
    }
    assert_eq!((dev.cache().hits(), dev.cache().misses()), (2, 4));
    assert_eq!(dev.cache().len(), 4);
}

#[test]
fn misfits_and_ops_without_a_lowering_are_errors_not_programs() {
    let Some(mut dev) = device("xla_ops::errors") else {
        return;
    };
    let mut g = Gen(SplitMix64::new(3));
    let (a, b) = (g.any(&[2, 3]), g.any(&[4, 3]));
    let e = dev.run_op(Op::Planata, &[Arg::Tensor(&a)]).unwrap_err();
    assert_eq!(e.to_string(), "no StableHLO lowering for op `planata`");
    let one = g.any(&[]);
    let e = dev.run_op(Op::Argmax, &[Arg::Tensor(&one)]).unwrap_err();
    assert!(e.to_string().contains("`argmax`: a rank-0 tensor"), "{e}");
    let args = [
        Arg::Tensor(&a),
        Arg::Nums(vec![1.0; 5]),
        Arg::Dims(vec![2, 3]),
    ];
    let e = dev.run_op(Op::Strue, &args).unwrap_err();
    assert!(
        e.to_string().contains("5 numbers cannot take shape [2, 3]"),
        "{e}"
    );
    let args = [Arg::Tensor(&a), Arg::Dims(vec![0, 2])];
    let e = dev.run_op(Op::RetroPermute, &args).unwrap_err();
    assert!(e.to_string().contains("not a permutation"), "{e}");
    let args = [
        Arg::Tensor(&a),
        Arg::Tensor(&b),
        Arg::Int(1),
        Arg::Flag(false),
    ];
    let e = dev.run_op(Op::RetroDilata, &args).unwrap_err();
    assert!(e.to_string().contains("one element per run"), "{e}");
    let e = dev
        .run_op(Op::MatMul, &[Arg::Tensor(&a), Arg::Tensor(&b)])
        .unwrap_err();
    assert!(matches!(e, XlaError::Lower(_)), "{e}");
    assert!(
        e.to_string()
            .contains("inner dimensions differ (3 against 4)"),
        "{e}"
    );
    let e = dev
        .run_op(Op::Addita, &[Arg::Tensor(&a), Arg::Tensor(&b)])
        .unwrap_err();
    assert!(e.to_string().contains("do not broadcast"), "{e}");
    // Nothing was compiled for them.
    assert_eq!(dev.cache().misses(), 0);
}

/// A program compiled with the device assignment of addressable device N runs
/// there, on tensors copied there (without the assignment, the CPU plugin places
/// every program on device 0 and refuses buffers of device 1); a device the client
/// does not address is an error.
#[test]
fn every_addressable_device_runs_its_programs() {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin("xla_ops::devices");
        return;
    };
    let plugin: &'static Plugin = Box::leak(Box::new(Plugin::load(&path).unwrap()));
    let n = plugin.client().unwrap().devices().unwrap().len();
    let mut g = Gen(SplitMix64::new(11));
    let (a, b) = (g.any(&[3, 2]), g.any(&[2]));
    let want = k::add(&a, &b).unwrap();
    for ordinal in 0..n {
        let mut dev = Device::new(plugin.client().unwrap(), ordinal).unwrap();
        let got = dev
            .run_op(Op::Addita, &[Arg::Tensor(&a), Arg::Tensor(&b)])
            .unwrap();
        assert_eq!(values(&got[0]), values(&want), "device {ordinal}");
    }
    let e = Device::new(plugin.client().unwrap(), n).err().unwrap();
    assert!(
        e.to_string()
            .contains(&format!("device {n} asked for; the client addresses {n}")),
        "{e}"
    );
}
