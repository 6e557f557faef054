//! GELU (tanh form) for f32 tensors (issue 21), forward and backward, computed in f64
//! from the exactly widened f32 input and rounded to f32 once per result.
//!
//! `gelu(x) = ½x·(1 + tanh u)`, `u = c·(x + β·x³)`, c = √(2/π), β = 0.044715 (the f64
//! kernel's constants, activation/gelu.rs). With `z = 2u` and `σ(z) = 1/(1 + e⁻ᶻ)`,
//! `½(1 + tanh u) = σ(z)` exactly, so the forward is `x·σ(z) = x/(1 + e⁻ᶻ)`: no
//! cancellation for negative x (where `1 + tanh u` would cancel), e⁻ᶻ by
//! `exp_f32::exp_core`. The derivative is
//! `σ(z)·(1 + x·(1 − σ(z))·z′)`, `z′ = 2c·(1 + 3β·x²)`, `1 − σ(z) = e⁻ᶻ/(1 + e⁻ᶻ)`.
//! Special values follow the f64 kernel: gelu(+∞) = +∞, gelu(−∞) = NaN (its
//! `(½x)·(1 + tanh u)` is −∞·0), NaN → NaN; large negative x give −0.
//!
//! Error bounds (f64 steps, then one rounding):
//! * forward: relative error before the rounding below 2⁻⁴⁴ (u's three roundings
//!   enter through `|z|·2⁻⁵¹`, |z| ≤ 2·104 where the result is not 0, plus e⁻ᶻ's
//!   2⁻⁵⁰), so [`gelu_f32`] is **faithfully rounded** for every f32 input;
//! * derivative and VJP: absolute error before the rounding below
//!   `2⁻⁴⁴·(σ + |x·σ(1 − σ)·z′|)·|g|`, so faithfully rounded except within a few f32
//!   ulps of the derivative's zero near x ≈ −0.7518 (where the two terms cancel).
//!
//! Tested against mpmath points (tests/reference/f32_transcendentals.py).
//!
//! `gelu_per_exp` and its VJP `retro_gelu_per_exp` keep their f64 twins' recipe (the
//! bert shim's): `u = c·(x + β·((x·x)·x))`, `t` = tanh u through the exp identity
//! (`tanh_f32::tanh_per_exp_core`, within 2⁻⁴⁹ absolute), `y = (½x)·(1 + t)`, the VJP
//! `g·(½(1 + t) + ((½x)·(1 − t²))·du)`, `du = c·(1 + 3β·x²)`, in f64 and rounded once.
//! The recipe cancels (`1 + t` for negative x, the identity near 0), so the bounds are
//! absolute: `y` within `½ ulp + 2⁻⁴⁸·|x|` of GELU, the VJP within
//! `½ ulp + 2⁻⁴⁷·|g|·(1 + |x|·du)` of `g·gelu′(x)`.

use crate::tensor::exp_f32::exp_core;
use crate::tensor::par_f32::{map_each, map_pairs, par_blocks, wide, SendPtrOf, PAR_MIN_F32_MAP};
use crate::tensor::tanh::tanh_f32::tanh_per_exp_core;
use crate::tensor::{GELU_BETA, GELU_C};

/// `(e⁻ᶻ, z′)` for x: GELU's exponential and the derivative of its argument.
#[inline(always)]
fn parts(x: f64) -> (f64, f64) {
    let z = 2.0 * (GELU_C * (x + GELU_BETA * ((x * x) * x)));
    let e = exp_core(-z);
    let dz = 2.0 * GELU_C * (1.0 + (3.0 * GELU_BETA) * (x * x));
    (e, dz)
}

/// GELU of an f64 x from its exponential `e = e⁻ᶻ`: `x/(1 + e)`, NaN at −∞.
#[inline(always)]
fn forward(x: f64, e: f64) -> f64 {
    let y = x / (1.0 + e);
    if x == f64::NEG_INFINITY {
        f64::NAN
    } else {
        y
    }
}

/// GELU's derivative at x from `e = e⁻ᶻ` and `z′`: `σ·(1 + x·(1 − σ)·z′)`.
#[inline(always)]
fn derivative(x: f64, e: f64, dz: f64) -> f64 {
    let one_e = 1.0 + e;
    let s = 1.0 / one_e;
    let one_minus_s = e / one_e;
    s * (1.0 + (x * one_minus_s) * dz)
}

/// GELU of one f32, faithfully rounded (module docs).
#[inline(always)]
pub fn gelu_f32(x: f32) -> f32 {
    let x = x as f64;
    let (e, _) = parts(x);
    forward(x, e) as f32
}

/// GELU's derivative at one f32 (module docs).
#[inline(always)]
pub fn gelu_derivative_f32(x: f32) -> f32 {
    let x = x as f64;
    let (e, dz) = parts(x);
    derivative(x, e, dz) as f32
}

/// `dst[i] = gelu_f32(src[i])`, vectorised, split between threads from
/// `PAR_MIN_F32_MAP` elements.
pub fn gelu_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, gelu_f32);
}

/// GELU and its derivative in one pass (`gelu_cum_derivata`): `y[i] = gelu_f32(x[i])`,
/// `d[i] = gelu_derivative_f32(x[i])` (one exponential for both). The three slices
/// have one length.
pub fn gelu_with_derivative_f32(x: &[f32], y: &mut [f32], d: &mut [f32]) {
    let n = x.len();
    let (yp, dp) = (
        SendPtrOf::new(y.as_mut_ptr()),
        SendPtrOf::new(d.as_mut_ptr()),
    );
    par_blocks(n, 1, PAR_MIN_F32_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside both n-element buffers, no other
        // block covers it, and both outlive `par_blocks`.
        let (yb, db) = unsafe { (yp.part(start, len), dp.part(start, len)) };
        let xb = &x[start..start + len];
        wide(
            #[inline(always)]
            || {
                for ((yo, dout), &xv) in yb.iter_mut().zip(db.iter_mut()).zip(xb) {
                    let xv = xv as f64;
                    let (e, dz) = parts(xv);
                    *yo = forward(xv, e) as f32;
                    *dout = derivative(xv, e, dz) as f32;
                }
            },
        )
    });
}

/// The GELU VJP (`retro_gelu`): `dst[i] = g[i]·gelu′(x[i])`, the product taken in f64
/// before the one rounding. The three slices have one length.
pub fn gelu_backward_f32(g: &[f32], x: &[f32], dst: &mut [f32]) {
    let n = x.len();
    let dp = SendPtrOf::new(dst.as_mut_ptr());
    par_blocks(n, 1, PAR_MIN_F32_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside `dst`, no other block covers it.
        let db = unsafe { dp.part(start, len) };
        let (gb, xb) = (&g[start..start + len], &x[start..start + len]);
        wide(
            #[inline(always)]
            || {
                for ((o, &gv), &xv) in db.iter_mut().zip(gb).zip(xb) {
                    let xv = xv as f64;
                    let (e, dz) = parts(xv);
                    *o = (gv as f64 * derivative(xv, e, dz)) as f32;
                }
            },
        )
    });
}

/// `(t, du)` of the exp-identity recipe at x: tanh u by the identity and `du`.
#[inline(always)]
fn per_exp_parts(x: f64) -> (f64, f64) {
    let u = GELU_C * (x + GELU_BETA * ((x * x) * x));
    let du = GELU_C * (1.0 + (3.0 * GELU_BETA) * (x * x));
    (tanh_per_exp_core(u), du)
}

/// `gelu_per_exp` of one f32 (module docs).
#[inline(always)]
pub fn gelu_per_exp_f32(x: f32) -> f32 {
    let x = x as f64;
    let (t, _) = per_exp_parts(x);
    ((0.5 * x) * (1.0 + t)) as f32
}

/// `dst[i] = gelu_per_exp_f32(src[i])`.
pub fn gelu_per_exp_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, gelu_per_exp_f32);
}

/// `retro_gelu_per_exp`: `dst[i] = g[i]·(½(1 + t) + ((½x)·(1 − t²))·du)` at `x[i]`, in
/// f64, rounded once (module docs). The three slices have one length.
pub fn gelu_per_exp_backward_f32(g: &[f32], x: &[f32], dst: &mut [f32]) {
    map_pairs(g, x, dst, |gv, xv| {
        let xv = xv as f64;
        let (t, du) = per_exp_parts(xv);
        let d = 0.5 * (1.0 + t) + ((0.5 * xv) * (1.0 - t * t)) * du;
        (gv as f64 * d) as f32
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Special values (as the f64 kernel), the one-pass form against the separate
    /// forward and derivative, and the VJP against g times the derivative.
    #[test]
    fn special_values_and_one_pass() {
        assert_eq!(gelu_f32(0.0).to_bits(), 0);
        assert_eq!(gelu_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(gelu_f32(f32::INFINITY), f32::INFINITY);
        assert!(gelu_f32(f32::NEG_INFINITY).is_nan());
        assert!(gelu_f32(f32::NAN).is_nan());
        assert_eq!(gelu_f32(-20.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(gelu_f32(12.0), 12.0);
        assert_eq!(gelu_derivative_f32(0.0), 0.5);
        let xs: Vec<f32> = (0..70_000).map(|i| i as f32 * 3e-4 - 10.5).collect();
        let gs: Vec<f32> = xs.iter().map(|x| 1.0 - x * 0.1).collect();
        let (mut y, mut d, mut b, mut m) = (
            vec![0.0; xs.len()],
            vec![0.0; xs.len()],
            vec![0.0; xs.len()],
            vec![0.0; xs.len()],
        );
        let before = crate::tensor::set_threads(2);
        gelu_with_derivative_f32(&xs, &mut y, &mut d);
        gelu_backward_f32(&gs, &xs, &mut b);
        gelu_f32_map(&xs, &mut m);
        crate::tensor::set_threads(before);
        for i in 0..xs.len() {
            let x = xs[i];
            assert_eq!(y[i].to_bits(), gelu_f32(x).to_bits(), "x = {x:e}");
            assert_eq!(m[i].to_bits(), gelu_f32(x).to_bits(), "x = {x:e}");
            assert_eq!(
                d[i].to_bits(),
                gelu_derivative_f32(x).to_bits(),
                "x = {x:e}"
            );
            let (e, dz) = parts(x as f64);
            let want = (gs[i] as f64 * derivative(x as f64, e, dz)) as f32;
            assert_eq!(b[i].to_bits(), want.to_bits(), "x = {x:e}");
        }
    }

    /// Within 1e-14 (relative to the larger term) of the f64 kernel's own formula with
    /// the correctly rounded tanh, away from its cancellations (the f64 forward cancels
    /// for x < −3, so only x ≥ −3 there).
    #[test]
    fn agrees_with_the_tanh_form() {
        for i in 0..6000 {
            let x = -3.0 + i as f64 * 1e-3;
            let u = GELU_C * (x + GELU_BETA * ((x * x) * x));
            let t = crate::tensor::tanh_cr(u);
            let y = (0.5 * x) * (1.0 + t);
            let (e, dz) = parts(x);
            assert!(
                (forward(x, e) - y).abs() <= 1e-14 * x.abs().max(1e-300),
                "x = {x}"
            );
            let du = GELU_C * (1.0 + (3.0 * GELU_BETA) * (x * x));
            let d = 0.5 * (1.0 + t) + ((0.5 * x) * (1.0 - t * t)) * du;
            assert!((derivative(x, e, dz) - d).abs() <= 1e-14, "x = {x}");
        }
    }
}
