//! What the XLA op tests share (tests/xla_ops.rs, tests/xla_nn.rs): a device on the
//! plugin, random f32 tensors and shapes, the comparison with the native kernel and
//! the stated f32 tolerances (tests/xla_ops.rs's module doc).
#![allow(dead_code)]

use crate::common::{pjrt_plugin, say_no_plugin};
use faber::ir::ops::Op;
use faber::tensor::{self as k, SplitMix64, Tensor};
use faber::xla::{Arg, Device, Plugin};

pub const U: f64 = 1.0 / 16_777_216.0;

/// A native kernel of one or two tensors.
pub type Native1 = fn(&Tensor) -> k::TResult<Tensor>;
pub type Native2 = fn(&Tensor, &Tensor) -> k::TResult<Tensor>;

/// A device on the plugin, or `None` (after saying so) when there is none.
pub fn device(test: &str) -> Option<Device<'static>> {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin(test);
        return None;
    };
    let plugin: &'static Plugin = Box::leak(Box::new(Plugin::load(&path).expect("the plugin")));
    Some(Device::new(plugin.client().expect("a client"), 0).expect("device 0"))
}

/// Random f32 tensors and shapes from one seed.
pub struct Gen(pub SplitMix64);

impl Gen {
    pub fn below(&mut self, n: u64) -> usize {
        self.0.below(n).unwrap() as usize
    }

    /// Extents 1–4 (and rank `rank`).
    pub fn shape(&mut self, rank: usize) -> Vec<usize> {
        (0..rank).map(|_| 1 + self.below(4)).collect()
    }

    /// Uniform in [-1, 1).
    pub fn any(&mut self, shape: &[usize]) -> Tensor {
        self.tensor(shape, |u| 2.0 * u - 1.0)
    }

    /// Uniform in [0.5, 2): inside `log`'s, `sqrt`'s and a divisor's domain.
    pub fn pos(&mut self, shape: &[usize]) -> Tensor {
        self.tensor(shape, |u| 0.5 + 1.5 * u)
    }

    pub fn tensor(&mut self, shape: &[usize], map: impl Fn(f64) -> f64) -> Tensor {
        let n = shape.iter().product();
        let v = (0..n).map(|_| map(self.0.uniform()) as f32).collect();
        Tensor::from_f32(v, shape).unwrap()
    }

    /// `shape` with some leading axes dropped and some extents made 1: a shape that
    /// broadcasts to `shape`.
    pub fn broadcastable(&mut self, shape: &[usize]) -> Vec<usize> {
        let drop = self.below(shape.len() as u64 + 1);
        shape[drop..]
            .iter()
            .map(|&d| if self.below(3) == 0 { 1 } else { d })
            .collect()
    }
}

pub fn values(t: &Tensor) -> Vec<f64> {
    t.values().into_owned()
}

/// Runs `op` on the device; asserts one f32 result of `want`'s shape within `tol`
/// of `want` element by element (`tol[i]`, or `tol[0]` for all).
pub fn check(dev: &mut Device, op: Op, args: &[Arg], want: &Tensor, tol: &[f64], what: &str) {
    let got = dev
        .run_op(op, args)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.len(), 1, "{what}");
    let got = &got[0];
    assert_eq!(got.dtype(), k::DType::F32, "{what}");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for (i, (g, w)) in values(got).iter().zip(values(want)).enumerate() {
        let t = if tol.len() == 1 { tol[0] } else { tol[i] };
        assert!(
            *g == w || (g - w).abs() <= t || (g.is_nan() && w.is_nan()),
            "{what}: element {i}: device {g} against native {w} (tolerance {t:e})"
        );
    }
}

/// Runs `op` on the device; asserts its results are `want`, each within
/// 1e-5·|y| + 1e-5 per element (the composite VJPs: tuples of tensors).
pub fn check_parts(dev: &mut Device, op: Op, args: &[Arg], want: &[Tensor], what: &str) {
    let got = dev
        .run_op(op, args)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.len(), want.len(), "{what}: parts");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert_eq!(g.shape(), w.shape(), "{what}: part {i}'s shape");
        for (j, (x, y)) in values(g).iter().zip(values(w)).enumerate() {
            let t = 1e-5 * y.abs() + 1e-5;
            assert!(
                (x - y).abs() <= t,
                "{what}: part {i} element {j}: device {x} against native {y}"
            );
        }
    }
}

/// Same bits.
pub const EXACT: &[f64] = &[0.0];

/// 2u·|y| per element of `want`.
pub fn rounded(want: &Tensor) -> Vec<f64> {
    values(want).iter().map(|w| 2.0 * U * w.abs()).collect()
}

/// 1e-6·|y| + 1e-7 per element (the transcendental maps).
pub fn approx(want: &Tensor, rel: f64, abs: f64) -> Vec<f64> {
    values(want).iter().map(|w| rel * w.abs() + abs).collect()
}

/// 2·(k + 1)·u·Σ|terms| per element, Σ|terms| the same op on |operands|.
pub fn sum_bound(abs_terms: &Tensor, k: usize) -> Vec<f64> {
    values(abs_terms)
        .iter()
        .map(|s| 2.0 * (k as f64 + 1.0) * U * s + f64::MIN_POSITIVE)
        .collect()
}

pub fn abs(t: &Tensor) -> Tensor {
    let v = t.data_f32().unwrap().iter().map(|x| x.abs()).collect();
    Tensor::from_f32(v, t.shape()).unwrap()
}

pub fn scalar(x: f64) -> Tensor {
    Tensor::from_f32(vec![x as f32], &[]).unwrap()
}
