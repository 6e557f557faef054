//! SiLU for f32 tensors (issue 21), forward and backward, in f64 from the exactly
//! widened f32 input (e⁻ˣ by `exp_f32::exp_core`, 2⁻⁵⁰ relative), rounded once.
//!
//! Forward `x/(1 + e⁻ˣ)`: relative error below 2⁻⁴⁹ before the rounding, so
//! **faithfully rounded** for every f32 input. Derivative `s·(1 + x·(1 − s))` with
//! `s = 1/(1 + e⁻ˣ)` and `1 − s = e⁻ˣ/(1 + e⁻ˣ)` (no cancellation in 1 − s): faithful
//! but within a few ulps of its zero near x ≈ −1.2785 (the two terms cancel). The VJP
//! `g·s·(1 + x·(1 − s))` in f64, rounded once: within
//! `½ ulp + 2⁻⁴⁷·|g|·(s + |x·s·(1 − s)|)` (tests/f32_rows.rs). Special values as the
//! f64 kernel (activation/silu.rs): silu(+∞) = +∞, silu(−∞) = NaN (−∞/∞ there), NaN →
//! NaN. Tested against mpmath points
//! (tests/reference/f32_transcendentals.py).

use crate::tensor::exp_f32::exp_core;
use crate::tensor::par_f32::{map_each, map_pairs};

/// SiLU of one f32, faithfully rounded.
#[inline(always)]
pub fn silu_f32(x: f32) -> f32 {
    let x = x as f64;
    let y = x / (1.0 + exp_core(-x));
    (if x == f64::NEG_INFINITY { f64::NAN } else { y }) as f32
}

/// SiLU's derivative in f64 at an f64 x (NaN at −∞, as the f64 kernel).
#[inline(always)]
fn derivative(x: f64) -> f64 {
    let e = exp_core(-x);
    let one_e = 1.0 + e;
    let s = 1.0 / one_e;
    let d = s * (1.0 + x * (e / one_e));
    if x == f64::NEG_INFINITY {
        f64::NAN
    } else {
        d
    }
}

/// SiLU's derivative at one f32.
#[inline(always)]
pub fn silu_derivative_f32(x: f32) -> f32 {
    derivative(x as f64) as f32
}

/// `dst[i] = silu_f32(src[i])`.
pub fn silu_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, silu_f32);
}

/// `g.retro_silu(x)`: `dst[i] = g[i]·silu′(x[i])`, the product in f64, rounded once.
pub fn silu_backward_f32(g: &[f32], x: &[f32], dst: &mut [f32]) {
    map_pairs(g, x, dst, |gv, xv| {
        (gv as f64 * derivative(xv as f64)) as f32
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Special values as the f64 kernel, the map and the VJP against the scalars.
    #[test]
    fn special_values_and_maps() {
        assert_eq!(silu_f32(0.0), 0.0);
        assert_eq!(silu_f32(f32::INFINITY), f32::INFINITY);
        assert!(silu_f32(f32::NEG_INFINITY).is_nan());
        assert!(silu_f32(f32::NAN).is_nan());
        assert_eq!(silu_f32(-200.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(silu_f32(100.0), 100.0);
        assert_eq!(silu_derivative_f32(0.0), 0.5);
        let xs: Vec<f32> = (0..4000).map(|i| i as f32 * 0.01 - 20.0).collect();
        let gs: Vec<f32> = xs.iter().map(|x| 0.5 + x * 0.01).collect();
        let (mut y, mut b) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
        silu_f32_map(&xs, &mut y);
        silu_backward_f32(&gs, &xs, &mut b);
        for i in 0..xs.len() {
            assert_eq!(y[i].to_bits(), silu_f32(xs[i]).to_bits());
            let want = (gs[i] as f64 * derivative(xs[i] as f64)) as f32;
            assert_eq!(b[i].to_bits(), want.to_bits());
        }
    }
}
