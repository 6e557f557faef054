//! `tanh` for f32 tensors (issue 21), forward and backward: computed in f64 from the
//! exactly widened f32 input, rounded to f32 once.
//!
//! Method, `a = min(|x|, 20)`: `E = expm1(2a)` by `exp_f32::expm1_core` (2⁻⁴⁹
//! relative, no cancellation for small a), `tanh a = E/(E + 2)` (the quotient's
//! sensitivity to E's relative error is `2/(E + 2) ≤ 1`), the sign of x copied back
//! (so tanh(−0) = −0). Above 20, tanh rounds to ±1 in f64 already (and in f32 from
//! 9.01). An f32 subnormal x stays x (`E = 2a` exactly, E/(E + 2) = a in f64).
//!
//! Error bound: relative error below 2⁻⁴⁸ before the rounding, so [`tanh_f32`] is
//! **faithfully rounded** for every f32 input, and the correctly rounded value unless
//! `tanh x` lies within 2⁻⁴⁸ of a midpoint between two f32. Tested against mpmath
//! points (tests/reference/f32_transcendentals.py).
//!
//! `tanh_per_exp` (the exp identity of the bert shim, tanh/mod.rs's `tanh_exp`):
//! `r = 1 − 2/(e^{2a} + 1)`, `a = |t|`, e^{2a} by `exp_f32::exp_core`, and `r` for
//! t ≥ 0, `−r` otherwise (the f64 twin's `2/(e^{−2t} + 1) − 1` is exactly `−r`), rounded
//! once. The identity cancels near 0, as its f64 twin does: before the rounding the
//! result is within **2⁻⁴⁹ absolute** of tanh t (e^{2a}'s 2⁻⁵⁰ and three roundings, all
//! scaled by `2/(e^{2a} + 1) ≤ 1`), so it is faithful only where |tanh t| ≥ 2⁻²⁴ or so
//! (the plain `tanh` is faithful everywhere).
//!
//! Backward: `g·(1 − y²)` in f64 from the f32 `g` and `y` (y² exact in f64), rounded
//! once: the correctly rounded value of that expression except within 2⁻⁵² of a
//! midpoint (two f64 roundings).

use crate::tensor::exp_f32::{exp_core, expm1_core};
use crate::tensor::par_f32::{map_each, wide};

/// `tanh x` in f64 to 2⁻⁴⁸ relative for any f64 x (module docs); NaN for NaN.
#[inline(always)]
pub(in crate::tensor) fn tanh_core_f64(x: f64) -> f64 {
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    let e = expm1_core(2.0 * a);
    let t = e / (e + 2.0);
    t.copysign(x)
}

/// `tanh x` of one f32, faithfully rounded (module docs).
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    tanh_core_f64(x as f64) as f32
}

/// `dst[i] = tanh_f32(src[i])`, vectorised, split between threads from
/// `PAR_MIN_F32_MAP` elements.
pub fn tanh_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, tanh_f32);
}

/// tanh through the exp identity in f64 (module docs): within 2⁻⁴⁹ absolute.
#[inline(always)]
pub(in crate::tensor) fn tanh_per_exp_core(t: f64) -> f64 {
    let r = 1.0 - 2.0 / (exp_core(2.0 * t.abs()) + 1.0);
    if t >= 0.0 {
        r
    } else {
        -r
    }
}

/// `dst[i] = tanh_per_exp(src[i])` rounded once (module docs).
pub fn tanh_per_exp_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, |x| tanh_per_exp_core(x as f64) as f32);
}

/// The tanh VJP from its result: `dst[i] = g[i]·(1 − y[i]²)` (module docs). The three
/// slices have one length.
pub fn tanh_backward_f32(g: &[f32], y: &[f32], dst: &mut [f32]) {
    wide(
        #[inline(always)]
        || {
            for ((d, &gv), &yv) in dst.iter_mut().zip(g).zip(y) {
                let yv = yv as f64;
                *d = (gv as f64 * (1.0 - yv * yv)) as f32;
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact answers: ±0 keep their sign, ±∞ and large arguments give ±1, NaN stays
    /// NaN, a subnormal or tiny argument is its own tanh, odd symmetry holds bit for bit,
    /// and the map is the scalar.
    #[test]
    fn special_values_and_symmetry() {
        assert_eq!(tanh_f32(0.0).to_bits(), 0.0f32.to_bits());
        assert_eq!(tanh_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(tanh_f32(9.1), 1.0);
        assert!(tanh_f32(f32::NAN).is_nan());
        for x in [f32::from_bits(1), 1e-40, f32::MIN_POSITIVE, 1e-5] {
            assert_eq!(tanh_f32(x), x, "x = {x:e}");
        }
        let xs: Vec<f32> = (0..5000).map(|i| i as f32 * 0.0037 - 9.0).collect();
        let mut y = vec![0.0; xs.len()];
        tanh_f32_map(&xs, &mut y);
        for (&x, &t) in xs.iter().zip(&y) {
            assert_eq!(t.to_bits(), tanh_f32(x).to_bits());
            assert_eq!((-t).to_bits(), tanh_f32(-x).to_bits());
        }
    }

    /// The f64 core against the correctly rounded f64 tanh within 2⁻⁴⁸ relative.
    #[test]
    fn core_within_its_bound() {
        let mut r = crate::tensor::SplitMix64::new(22);
        for k in 0..100_000 {
            let x = [25.0, 1.0, 1e-4, 1e-20][k % 4] * (2.0 * r.uniform() - 1.0);
            let (a, b) = (tanh_core_f64(x), crate::tensor::tanh_cr(x));
            assert!(
                ((a - b) / b).abs() <= 2f64.powi(-48),
                "x = {x:e}: {a:e} vs {b:e}"
            );
        }
    }

    /// The exp identity within its 2⁻⁴⁹ absolute bound of the correctly rounded tanh,
    /// and the f64 twin's signs: +0 at +0, odd elsewhere.
    #[test]
    fn per_exp_within_its_bound() {
        let mut r = crate::tensor::SplitMix64::new(23);
        for k in 0..100_000 {
            let x = [25.0, 1.0, 1e-4, 1e-20][k % 4] * (2.0 * r.uniform() - 1.0);
            let (a, b) = (tanh_per_exp_core(x), crate::tensor::tanh_cr(x));
            assert!((a - b).abs() <= 2f64.powi(-49), "x = {x:e}: {a:e} vs {b:e}");
            assert_eq!((-a).to_bits(), tanh_per_exp_core(-x).to_bits());
        }
        assert_eq!(tanh_per_exp_core(0.0).to_bits(), 0);
        assert_eq!(tanh_per_exp_core(f64::INFINITY), 1.0);
        assert_eq!(tanh_per_exp_core(f64::NEG_INFINITY), -1.0);
        assert!(tanh_per_exp_core(f64::NAN).is_nan());
    }

    /// The backward against its formula in f64, with y = tanh(x) rounded.
    #[test]
    fn backward_is_the_rounded_formula() {
        let g = [1.0f32, -2.5, 0.125, 3.0];
        let y = [0.5f32, -0.999, 0.0, 1.0];
        let mut d = [0.0f32; 4];
        tanh_backward_f32(&g, &y, &mut d);
        assert_eq!(
            d,
            [
                0.75,
                (-2.5f64 * (1.0 - 0.999f32 as f64 * 0.999f32 as f64)) as f32,
                0.125,
                0.0
            ]
        );
    }
}
