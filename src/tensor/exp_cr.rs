//! Correctly rounded `exp`: the tensor op `exp`, the scalar `exponens`, the softmax
//! family and the losses (docs/tensors.md § Correctly rounded exp) — all but the
//! exp-identity tanh (`tanh_exp`, behind `tanh_per_exp` and `gelu_per_exp`: the bert
//! shim's recipe), which keeps the platform `exp`.
//! An accurate double-double path ([`exp_accurate`], relative error ~2⁻¹⁰⁰ before
//! the one rounding) and, on x86-64 with FMA, the vectorised fast phase of the tanh
//! (`tanh/fast.rs`) applied to `x` itself (Ziv's strategy: its rounding test passes
//! for all but ~2⁻¹⁰ of inputs, the rest go to the accurate path). Both give the
//! same bits.
//!
//! Like the tanh, the result is the correctly rounded value unless the exact
//! `eˣ` lies within ~2⁻¹⁰⁰ (relative) of a rounding midpoint: the hardest
//! binary64 cases of `exp` are known to need ~2⁻¹¹³, so a handful of inputs
//! may round the other way; a triple-double phase would close that.
//!
//! Method, for `x` in (−746, 709.79] (below: +0, above: +∞, NaN: NaN):
//! `x = (64k + j)·ln2/64 + r` with `n = 64k + j = round(x·64/ln2)`, |n| < 2¹⁷,
//! ln2/64 split as A + B + C with A of 35 bits (so `n·A` and `x − n·A` are
//! exact), `eˣ = 2ᵏ·T_j·(1 + expm1 r)` with the double-double table
//! `T_j = 2^{j/64}` shared with the tanh. The scaling by 2ᵏ is exact for a
//! normal result; subnormal results are rounded at their own quantum
//! (2⁻¹⁰⁷⁴) from the double-double.
//!
//! Fast-phase error: the reduction drops `n·C` (< 2⁻⁸⁰ absolute, with |r| ≤
//! ln2/128 and `eʳ ≈ 1` that is < 2⁻⁸⁰ relative); `expm1` and the product
//! with `T_j` are the tanh's k ≥ 1 case (`X = T·(1 + expm1 r)`, low-part
//! terms below R³/6 relative, error < 2⁻⁷⁴), far inside the rounding test's
//! 2⁻⁶⁴. The fast phase takes x in [−707, 709] (normal results, 2ᵏ
//! representable); every other input goes to the accurate path.

use super::dd::{add, add_f64, expm1_small, mul, two_prod, two_sum, Dd, EXP2_J};

/// ln2/64 = A + B + C to ~2⁻¹⁶⁰; A has 35 significant bits, so `n·A` is exact
/// for |n| < 2¹⁸.
const LN2_64_A: f64 = 0.010830424696450791;
const LN2_64_B: f64 = -2.0164562921995537e-13;
const LN2_64_C: f64 = 4.7362076892829156e-30;
/// 64/ln2.
const INV_LN2_64: f64 = 92.33248261689366;
/// Above this eˣ exceeds the largest f64 by more than half an ulp: +∞.
const OVERFLOW: f64 = 709.79;
/// Below this eˣ < 2⁻¹⁰⁷⁶, under half the smallest subnormal: +0.
const UNDERFLOW: f64 = -746.0;

/// Correctly rounded `eˣ` (module docs): the fast phase where the CPU has FMA,
/// the accurate path for the inputs it cannot round or where FMA is missing.
pub fn exp_cr(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports FMA (checked above).
            return unsafe { fast::exp_fma(x) };
        }
    }
    exp_accurate::<false>(x)
}

/// `v[i] = exp_cr(v[i])` over a slice, the CPU feature check done once: the
/// vectorised fast phase for AVX-512, AVX2 or plain FMA, else the accurate path
/// element by element.
pub(in crate::tensor) fn exp_cr_in_place(v: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("fma") {
            // SAFETY: each variant runs only on a CPU with its features.
            unsafe {
                if has!("avx512f") && has!("avx2") {
                    fast::map_avx512(v);
                } else if has!("avx2") {
                    fast::map_avx2(v);
                } else {
                    fast::map_fma(v);
                }
            }
            return;
        }
    }
    for x in v {
        *x = exp_accurate::<false>(*x);
    }
}

/// `dst[i] = exp_cr(src[i])`.
pub(in crate::tensor) fn exp_cr_map(src: &[f64], dst: &mut [f64]) {
    dst.copy_from_slice(src);
    exp_cr_in_place(dst);
}

/// The accurate path: `eˣ` in double-double, rounded once (module docs).
#[inline(always)]
pub(super) fn exp_accurate<const FMA: bool>(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > OVERFLOW {
        return f64::INFINITY;
    }
    if x < UNDERFLOW {
        return 0.0;
    }
    let n = (x * INV_LN2_64).round();
    let ni = n as i64;
    let (k, j) = (ni >> 6, (ni & 63) as usize);
    // r = x − n·ln2/64: x − n·A is exact; the rest to ~2⁻¹⁵⁰ absolute.
    let r = two_sum(x, -n * LN2_64_A);
    let r = add(r, two_prod::<FMA>(-n, LN2_64_B));
    let r = add_f64(r, -n * LN2_64_C);
    let em = expm1_small::<FMA>(r);
    let (hi, lo) = EXP2_J[j];
    let t = Dd { hi, lo };
    // e = T·(1 + expm1 r) ∈ [0.70, 1.42], normalised (hi = RN(hi + lo)).
    let e = add(t, mul::<FMA>(t, em));
    if k >= -1021 {
        // A normal result: scaling by 2ᵏ is exact (or overflows to +∞, which is
        // then the correctly rounded value), in two steps for k = 1024.
        let half = f64::from_bits(((k - 1 + 1023) as u64) << 52);
        return e.hi * half * 2.0;
    }
    // Subnormal (or zero) result: round e·2^{k+1074} to an integer, ties to even,
    // then scale by 2⁻¹⁰⁷⁴ (exact). k ≥ −1077 here, so the scaling is exact.
    let up = f64::from_bits(((k + 1074 + 1023) as u64) << 52);
    let (s, l) = (e.hi * up, e.lo * up);
    let r = s.round_ties_even();
    let d = s - r; // exact, |d| ≤ 1/2
    let q = if d == 0.5 && l > 0.0 {
        r + 1.0
    } else if d == -0.5 && l < 0.0 {
        r - 1.0
    } else {
        r
    };
    q * f64::from_bits(1)
}

#[cfg(target_arch = "x86_64")]
mod fast {
    use super::{exp_accurate, INV_LN2_64, LN2_64_A, LN2_64_B};
    use crate::tensor::dd::EXP2_J;
    use crate::tensor::tanh::fast::{expm1_dd, fast_two_sum, fix_up, reduce_dd, rounds_to_hi};

    /// The fast phase's input range (normal results, 2ᵏ representable).
    const LO: f64 = -707.0;
    const HI: f64 = 709.0;
    /// 1.5·2⁵²: adding it rounds a value in (−2⁵¹, 2⁵¹) to an integer held in the
    /// low mantissa bits.
    const SHIFT: f64 = 6755399441055744.0;

    /// `(exp_cr(x), true)` when the rounding test passes, else `(_, false)`.
    /// Branch-free (selects only).
    #[inline(always)]
    fn fast_phase(x: f64) -> (f64, bool) {
        let inside = (LO..=HI).contains(&x); // false for NaN
        let xc = if inside { x } else { 0.0 };
        let s = xc.mul_add(INV_LN2_64, SHIFT);
        let bits = s.to_bits() as i64;
        let n = s - SHIFT;
        let ni = bits - SHIFT.to_bits() as i64; // n as an integer
        let (j, k) = ((ni & 63) as usize, ni >> 6);
        let (rh, rl) = reduce_dd(xc, n, LN2_64_A, LN2_64_B);
        let (emh, eml) = expm1_dd(rh, rl);
        // X = T + T·em, T ≥ 1 > |T·em|.
        let (t_hi, t_lo) = EXP2_J[j];
        let pr = t_hi * emh;
        let pre = t_hi.mul_add(emh, -pr);
        let (xh, xe) = fast_two_sum(t_hi, pr);
        let xl = t_hi.mul_add(eml, t_lo.mul_add(emh, t_lo + pre)) + xe;
        let (xh, xl) = fast_two_sum(xh, xl);
        let ok = inside && rounds_to_hi(xh, xl);
        let scale = f64::from_bits(((k + 1023) as u64) << 52);
        (xh * scale, ok)
    }

    /// One chunk of L values, in place.
    #[inline(always)]
    fn chunk<const L: usize>(v: &mut [f64; L]) {
        let mut y = [0.0; L];
        let mut ok = [false; L];
        for ((y, ok), &x) in y.iter_mut().zip(ok.iter_mut()).zip(v.iter()) {
            (*y, *ok) = fast_phase(x);
        }
        if ok.iter().any(|&o| !o) {
            // SAFETY: only called from the FMA-enabled maps below.
            unsafe { fix_up(v, &mut y, &ok, exp_accurate::<true>) };
        }
        *v = y;
    }

    #[inline(always)]
    fn map<const L: usize>(v: &mut [f64]) {
        let mut c = v.chunks_exact_mut(L);
        for c in &mut c {
            chunk::<L>(c.try_into().expect("chunk of L"));
        }
        let rest = c.into_remainder();
        if !rest.is_empty() {
            let mut t = [0.0; L];
            t[..rest.len()].copy_from_slice(rest);
            chunk::<L>(&mut t);
            rest.copy_from_slice(&t[..rest.len()]);
        }
    }

    #[target_feature(enable = "avx512f,avx2,fma")]
    pub(super) unsafe fn map_avx512(v: &mut [f64]) {
        map::<8>(v)
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn map_avx2(v: &mut [f64]) {
        map::<4>(v)
    }

    #[target_feature(enable = "fma")]
    pub(super) unsafe fn map_fma(v: &mut [f64]) {
        map::<8>(v)
    }

    /// Scalar: the fast phase, else the accurate path.
    #[target_feature(enable = "fma")]
    pub(super) unsafe fn exp_fma(x: f64) -> f64 {
        match fast_phase(x) {
            (y, true) => y,
            _ => exp_accurate::<true>(x),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        let mut r = super::super::SplitMix64::new(seed);
        (0..n).map(|_| lo + (hi - lo) * r.uniform()).collect()
    }

    /// The fast phase (vector and scalar) and the accurate path agree bit for bit
    /// over random inputs of every range, the edges included.
    #[test]
    fn fast_phase_matches_the_accurate_path() {
        let mut xs = inputs(1, 200_000, -750.0, 712.0);
        xs.extend(inputs(2, 200_000, -1.0, 1.0));
        xs.extend(inputs(3, 100_000, -1e-6, 1e-6));
        xs.extend(inputs(4, 50_000, -746.5, -706.0));
        xs.extend(inputs(5, 50_000, 708.5, 710.0));
        xs.extend([
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            709.782712893384,
            709.7827128933841,
            -745.1332191019411,
            -745.1332191019412,
            -708.3964185322641,
            1e-300,
            -1e-300,
            f64::MIN_POSITIVE,
        ]);
        let mut v = xs.clone();
        exp_cr_in_place(&mut v);
        for (&x, &y) in xs.iter().zip(&v) {
            let a = exp_accurate::<false>(x);
            assert_eq!(y.to_bits(), a.to_bits(), "x = {x:e}: {y:e} vs {a:e}");
            assert_eq!(exp_cr(x).to_bits(), a.to_bits(), "scalar, x = {x:e}");
        }
    }

    /// Values from the definition: exact points, the overflow and underflow
    /// boundaries (eˣ against DBL_MAX + ulp/2 and 2⁻¹⁰⁷⁵), subnormal rounding, and
    /// agreement with libm within one ulp elsewhere.
    #[test]
    fn known_values() {
        assert_eq!(exp_cr(0.0), 1.0);
        assert_eq!(exp_cr(-0.0), 1.0);
        assert_eq!(exp_cr(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp_cr(f64::INFINITY), f64::INFINITY);
        assert!(exp_cr(f64::NAN).is_nan());
        // ln(DBL_MAX) = 709.782712893383996…: the f64 below it is finite, the
        // one above overflows.
        assert_eq!(exp_cr(709.782712893384), 1.7976931348622732e308);
        assert_eq!(exp_cr(709.7827128933841), f64::INFINITY);
        // ln(2⁻¹⁰⁷⁵) = −745.13321910194110842…: e at the f64 just above it is
        // more than half the smallest subnormal (rounds up to it), just below it
        // less (rounds to +0).
        assert_eq!(exp_cr(-745.1332191019411), f64::from_bits(1));
        assert_eq!(exp_cr(-745.1332191019412), 0.0);
        // e^{ln 2·m} for the f64 nearest m·ln2 is 2^m to within a relative
        // 2⁻⁵³·|m|·ln2 — one ulp of 2^m at most.
        for m in [-1070i32, -1030, -1022, -1000, -1, 1, 10, 500, 1023] {
            let y = exp_cr(m as f64 * std::f64::consts::LN_2);
            // 2^m exactly (normal or subnormal; `powi` is not exact below 2⁻¹⁰²²
            // in every build).
            let p = if m >= -1022 {
                f64::from_bits(((m + 1023) as u64) << 52)
            } else {
                f64::from_bits(1u64 << (m + 1074))
            };
            assert!(
                (y - p).abs() <= p * 2e-16 * (m.unsigned_abs() as f64) + f64::from_bits(1),
                "m = {m}"
            );
        }
        for x in inputs(9, 20_000, -700.0, 700.0) {
            let (a, b) = (exp_cr(x), x.exp());
            let ulps = (a.to_bits() as i64 - b.to_bits() as i64).abs();
            assert!(ulps <= 1, "x = {x:e}: {a:e} vs libm {b:e}");
        }
    }
}
