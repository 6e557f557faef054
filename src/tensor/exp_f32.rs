//! `exp` for f32 tensors (issue 21): computed in f64 from the (exactly widened) f32
//! input and rounded to f32 once. Also the f64 `eˣ` core ([`exp_core`]) the other f32
//! kernels build on: the softmax family, the f32 tanh (tanh/f32.rs) and GELU
//! (activation/gelu_f32.rs).
//!
//! Method, for `x` in [−708, 709] (below: +0; above: the value at 709, which every
//! f32 caller rounds to +∞ or treats as "huge"; NaN: NaN): `n = round(x/ln 2)` (the
//! 1.5·2⁵² shift), `r = x − n·ln2` with ln 2 split in two f64 (two FMAs; |r| ≤ 0.347,
//! error < 2⁻⁵⁴ absolute), `eʳ` by its Taylor polynomial of degree 12 in Horner form
//! (truncation < 0.347¹³/13! < 2⁻⁵²), `eˣ = 2ⁿ·eʳ` (exact scaling, a normal f64).
//!
//! Error bound: `exp_core(x)` is within 2⁻⁵⁰ (relative) of `eˣ` on [−708, 709] (the
//! truncation, the reduction and ~4 roundings of the Horner steps, each ≤ 2⁻⁵³). So
//! [`exp_f32`] is **faithfully rounded** for every f32 input (|error| < 1 ulp, the
//! result one of the two f32 neighbours of `eˣ`), and it is the correctly rounded
//! value unless `eˣ` lies within 2⁻⁵⁰ (relative) of a midpoint between two f32 —
//! about one input in 2²⁶ at random; overflow (x > 88.72…: +∞), the f32 subnormal
//! range and underflow to +0 are decided by that one rounding, as for a correctly
//! rounded exp. Tested against mpmath points (tests/reference/f32_transcendentals.py).
//! The whole computation is FMAs, adds and multiplies in a fixed order, so the bits
//! are the same on every CPU (the vector widths of `par_f32::wide` only).

use super::par_f32::map_each;

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln 2 = LN2_HI + LN2_LO to ~2⁻¹⁰⁶.
const LN2_HI: f64 = std::f64::consts::LN_2;
const LN2_LO: f64 = 2.3190468138462996e-17;
/// 1.5·2⁵²: adding it rounds a value in (−2⁵¹, 2⁵¹) to an integer held in the low
/// mantissa bits.
const SHIFT: f64 = 6755399441055744.0;
/// The reduced range of [`exp_core`].
const LO: f64 = -708.0;
const HI: f64 = 709.0;

/// 1/k! for k = 2 … 12 (the Taylor coefficients of eʳ beyond 1 + r).
const INV_FACT: [f64; 11] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40320.0,
    1.0 / 362880.0,
    1.0 / 3628800.0,
    1.0 / 39916800.0,
    1.0 / 479001600.0,
];

/// `(n, r, 2ⁿ)` with `x = n·ln2 + r`, for x already in [LO, HI].
#[inline(always)]
fn reduce(x: f64) -> (f64, f64) {
    let s = x.mul_add(LOG2E, SHIFT);
    let n = s - SHIFT;
    let ni = (s.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    let scale = f64::from_bits((ni.wrapping_add(1023) as u64) << 52);
    (r, scale)
}

/// `expm1(r)/r − 1 … ` as the polynomial `r²/2 + r³/6 + … + r¹²/12!`, Horner.
#[inline(always)]
fn poly_tail(r: f64) -> f64 {
    let mut p = INV_FACT[10];
    for &c in INV_FACT[..10].iter().rev() {
        p = p.mul_add(r, c);
    }
    (p * r) * r
}

/// `eˣ` in f64 to 2⁻⁵⁰ relative for x in [−708, 709] (module docs); +0 below, the
/// value at 709 above (a finite ~8.2e307), NaN for NaN.
#[inline(always)]
pub(in crate::tensor) fn exp_core(x: f64) -> f64 {
    let xc = if x > HI { HI } else { x };
    let xc = if xc < LO { 0.0 } else { xc };
    let (r, scale) = reduce(xc);
    let e = (1.0 + (r + poly_tail(r))) * scale;
    if x < LO {
        0.0
    } else {
        e
    }
}

/// `expm1(x) = eˣ − 1` in f64 for x ≥ 0 in the same range, to 2⁻⁴⁹ relative (for
/// n = 0 the polynomial `r + tail(r)` itself, no cancellation; for n ≥ 1, x ≥ 0.34 and
/// `(2ⁿ − 1) + 2ⁿ·(r + tail)` loses at most a factor 1.5 to cancellation).
#[inline(always)]
pub(in crate::tensor) fn expm1_core(x: f64) -> f64 {
    let xc = if x > HI { HI } else { x };
    let (r, scale) = reduce(xc);
    let q = r + poly_tail(r);
    (scale - 1.0) + scale * q
}

/// `eˣ` of one f32, faithfully rounded (module docs).
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    exp_core(x as f64) as f32
}

/// `dst[i] = exp_f32(src[i])`, vectorised, rows of the input split between threads
/// from `par_f32::PAR_MIN_F32_MAP` elements (each element depends only on itself).
pub fn exp_f32_map(src: &[f32], dst: &mut [f32]) {
    map_each(src, dst, exp_f32);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Against the definition where the answer is exact: e⁰ = 1, ±∞, NaN, and the
    /// over/underflow decided by one rounding (ln of the f32 overflow threshold
    /// (2 − 2⁻²⁴)·2¹²⁷ is 88.7228390…, ln of 2⁻¹⁵⁰ is −103.972077…).
    #[test]
    fn special_values() {
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY).to_bits(), 0);
        assert!(exp_f32(f32::NAN).is_nan());
        // ln((2 − 2⁻²⁴)·2¹²⁷) = 88.72283906… lies between these two adjacent f32.
        // 88.72283172607421875 and 88.72283935546875:
        let (below, above) = (f32::from_bits(0x42B1_7217), f32::from_bits(0x42B1_7218));
        assert_eq!(below.to_bits() + 1, above.to_bits());
        assert!(exp_f32(below).is_finite() && exp_f32(below) > 3.4e38);
        assert_eq!(exp_f32(above), f32::INFINITY);
        assert_eq!(exp_f32(-103.97), f32::from_bits(1));
        assert_eq!(exp_f32(-103.98).to_bits(), 0);
        // The map gives the scalar's bits (and one thread vs two: rows independent).
        let xs: Vec<f32> = (0..100_000)
            .map(|i| (i as f32 - 50_000.0) * 0.002)
            .collect();
        let mut a = vec![0.0f32; xs.len()];
        let before = crate::tensor::set_threads(2);
        exp_f32_map(&xs, &mut a);
        crate::tensor::set_threads(before);
        for (&x, &y) in xs.iter().zip(&a) {
            assert_eq!(y.to_bits(), exp_f32(x).to_bits(), "x = {x:e}");
        }
    }

    /// Over 200 000 inputs of the whole finite range, `exp_core` against the
    /// correctly rounded f64 `exp_cr` within the stated 2⁻⁵⁰ relative bound.
    #[test]
    fn core_within_its_bound() {
        let mut r = crate::tensor::SplitMix64::new(21);
        for _ in 0..200_000 {
            let x = -708.0 + 1417.0 * r.uniform();
            let (a, b) = (exp_core(x), crate::tensor::exp_cr(x));
            assert!(
                ((a - b) / b).abs() <= 2f64.powi(-50),
                "x = {x:e}: {a:e} vs {b:e}"
            );
        }
        // expm1 against libm's (within an ulp), small arguments included.
        for k in 0..40_000 {
            let x = [40.0, 1.0, 1e-3, 1e-30][k % 4] * r.uniform();
            let (a, b) = (expm1_core(x), x.exp_m1());
            let tol = 2f64.powi(-49) + 2f64.powi(-52);
            assert!(((a - b) / b).abs() <= tol, "x = {x:e}: {a:e} vs {b:e}");
        }
    }
}
