//! Correctly rounded `tanh` in double-double arithmetic, and the exp-identity
//! variant the bert shim's GELU needs.
//!
//! Method ([`tanh_cr`]), for `a = |x|`:
//! * `a < 2⁻²⁷`: the result is `x` (the cubic term is below half an ulp);
//! * `a ≥ 19.1`: the result is `±1` (`1 − tanh a < 2⁻⁵⁴`, below half an ulp of 1);
//! * otherwise `tanh a = E/(E + 2)` with `E = expm1(2a)` computed in
//!   double-double (≈106 bits): `2a = (64k + j)·ln2/64 + r` (ln2/64 split in
//!   three parts so the product is exact to ~150 bits, |r| ≤ ln2/128), a
//!   64-entry double-double table of `2^{j/64}` and `2^{j/64} − 1`, an
//!   11-term Taylor series for `expm1(r)`, then
//!   `E = (2^{j/64} − 1) + 2^{j/64}·expm1(r)` when k = 0 (no cancellation)
//!   or `2ᵏ·2^{j/64}·(1 + expm1(r)) − 1`. The double-double quotient is
//!   rounded to f64 once.
//!
//! The total relative error before that rounding is below ~2⁻¹⁰⁰, so the
//! result is the correctly rounded value unless the exact tanh lies within
//! 2⁻¹⁰⁰ (relative) of a rounding midpoint — no such input is known, and the
//! mpmath comparison in tests/tensor_ops.rs covers thousands of points.
//!
//! That accurate path ([`tanh_core`], ~130 ns) is the second phase only: on
//! x86-64 CPUs with FMA, [`tanh_cr`] and the tensor maps first run the fast
//! phase of [`fast`] (plain f64/FMA, relative error
//! < 2⁻⁶⁷·⁸, vectorised over chunks for the maps), which returns the same
//! correctly rounded value whenever its rounding test passes (all but ~0.08%
//! of inputs); the others go through `tanh_core`.
//!
//! Files: this one holds the entry points and the [`TanhOf`] interface of the maps;
//! accurate.rs the accurate path; fast.rs the fast phase. The double-double arithmetic
//! and the `2^{j/64}` table are `tensor/dd.rs` (shared with `exp_cr`).

mod accurate;
#[cfg(target_arch = "x86_64")]
pub(in crate::tensor) mod fast;
pub(in crate::tensor) mod tanh_f32;

use accurate::tanh_core;
#[cfg(test)]
pub(in crate::tensor) use accurate::tanh_core as tanh_core_for_tests;

/// What a map over `tanh_cr` writes for an input `x`: `out(x, tanh_cr(arg(x)))`. The
/// interface through which a kernel family runs its own element function around the
/// vectorised tanh without the tanh knowing it: [`PlainTanh`] here, GELU and its
/// tangent in `activation/gelu.rs`. Both functions are inlined into the maps' chunks,
/// so what they compute is vectorised with the tanh.
pub(in crate::tensor) trait TanhOf {
    /// Whether [`TanhOf::arg`] is `x` itself (the maps then form no argument).
    const ARG_IS_X: bool = false;
    /// Whether [`TanhOf::out`] is `t` itself (the maps then copy the tangents).
    const OUT_IS_T: bool = false;
    /// The tanh's argument for the input `x`.
    fn arg(x: f64) -> f64;
    /// What is written for the input `x`, given `t = tanh_cr(arg(x))`.
    fn out(x: f64, t: f64) -> f64;
}

/// `tanh_cr(x)` itself.
pub(in crate::tensor) struct PlainTanh;

impl TanhOf for PlainTanh {
    const ARG_IS_X: bool = true;
    const OUT_IS_T: bool = true;
    #[inline(always)]
    fn arg(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn out(_: f64, t: f64) -> f64 {
        t
    }
}

/// Correctly rounded hyperbolic tangent (see the module docs): the fast
/// phase (fast.rs) where the CPU has FMA, with the accurate path for the
/// inputs it cannot round; the accurate path alone otherwise.
pub fn tanh_cr(x: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports FMA (checked above).
            return unsafe { fast::tanh_fma(x) };
        }
    }
    tanh_core::<false>(x)
}

#[inline(always)]
fn map_core<const FMA: bool, M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    for (d, &x) in dst.iter_mut().zip(src) {
        *d = M::out(x, tanh_core::<FMA>(M::arg(x)));
    }
}

/// `dst[i]` = what `M` writes for `src[i]` (see [`TanhOf`]), with the CPU feature
/// check done once per slice: the vectorised fast phase for AVX-512, AVX2 or plain
/// FMA, else `tanh_core` element by element.
pub(in crate::tensor) fn map_tanh_cr<M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        if has!("fma") {
            // SAFETY: each variant runs only on a CPU with its features.
            unsafe {
                if has!("avx512f") && has!("avx2") {
                    fast::map_avx512::<M>(src, dst);
                } else if has!("avx2") {
                    fast::map_avx2::<M>(src, dst);
                } else {
                    fast::map_fma::<M>(src, dst);
                }
            }
            return;
        }
    }
    map_core::<false, M>(src, dst)
}

/// tanh through the exp identity, as the bert shim's GELU computes it:
/// `1 − 2/(e^{2t} + 1)` for t ≥ 0, `2/(e^{−2t} + 1) − 1` for t < 0
/// (platform `exp`).
pub fn tanh_exp(t: f64) -> f64 {
    if t >= 0.0 {
        1.0 - 2.0 / ((2.0 * t).exp() + 1.0)
    } else {
        2.0 / ((-2.0 * t).exp() + 1.0) - 1.0
    }
}

#[cfg(test)]
pub(in crate::tensor) mod tests {
    use super::*;

    #[test]
    fn special_values() {
        assert_eq!(tanh_cr(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(tanh_cr(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(tanh_cr(f64::INFINITY), 1.0);
        assert_eq!(tanh_cr(f64::NEG_INFINITY), -1.0);
        assert!(tanh_cr(f64::NAN).is_nan());
        assert_eq!(tanh_cr(1e-300), 1e-300);
        assert_eq!(tanh_cr(5e-324), 5e-324);
        assert_eq!(tanh_cr(30.0), 1.0);
    }

    #[test]
    fn fma_and_dekker_agree() {
        for i in -3000..3000 {
            let x = i as f64 * 0.0071 + 1e-4;
            assert_eq!(tanh_core::<false>(x).to_bits(), tanh_cr(x).to_bits(), "{x}");
        }
    }

    #[test]
    fn close_to_libm() {
        for i in -2000..2000 {
            let x = i as f64 * 0.01 + 0.003;
            let (a, b) = (tanh_cr(x), x.tanh());
            assert!(
                (a - b).abs() <= 2.0 * f64::EPSILON * b.abs(),
                "{x}: {a} vs {b}"
            );
        }
    }

    /// Inputs for the fast-phase test: 50 000 per range (random signs), then
    /// 100 000 GELU arguments, then the thresholds and special values (also the GELU
    /// map's test in activation/gelu.rs).
    #[cfg(target_arch = "x86_64")]
    pub(in crate::tensor) fn fast_phase_inputs() -> Vec<f64> {
        // GELU's tanh argument `c·(x + β·((x·x)·x))`, c = √(2/π) and β as in
        // activation/gelu.rs (the tanh does not depend on that family).
        const GELU_C: f64 = 0.7978845608028654;
        const GELU_BETA: f64 = 0.044715;
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let unit = |z: u64| (z >> 11) as f64 / (1u64 << 53) as f64;
        // (lo, hi, log-uniform)
        let ranges = [
            (2f64.powi(-32), 2f64.powi(-22), true), // tiny, across 2⁻²⁷
            (2f64.powi(-22), 1.0, true),            // |x| < 1, every binade
            (0.0, 1.0, false),
            (1.0, 5.0, false),
            (5.0, 19.1, false),
            (18.9, 19.3, false),       // across 19.1
            (0.00265, 0.00275, false), // k = 0, j = 1, r ≈ −ln2/128: largest error
        ];
        let mut xs = Vec::new();
        for (lo, hi, log) in ranges {
            for _ in 0..50_000 {
                let v = unit(next());
                let x = if log {
                    (lo.ln() + v * (hi.ln() - lo.ln())).exp()
                } else {
                    lo + v * (hi - lo)
                };
                xs.push(if next() & 1 == 1 { -x } else { x });
            }
        }
        for _ in 0..100_000 {
            let x = 12.0 * unit(next()) - 6.0;
            xs.push(GELU_C * (x + GELU_BETA * ((x * x) * x)));
        }
        let tiny = 7.450580596923828e-9f64;
        for x in [
            tiny,
            f64::from_bits(tiny.to_bits() - 1),
            f64::from_bits(tiny.to_bits() + 1),
        ] {
            xs.extend([x, -x]);
        }
        for x in [
            19.1,
            f64::from_bits(19.1f64.to_bits() - 1),
            0.0,
            -0.0,
            5e-324,
            1.0,
            0.5,
        ] {
            xs.extend([x, -x]);
        }
        xs.extend([
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            f64::MAX,
            f64::MIN_POSITIVE,
        ]);
        xs
    }

    /// The fast phase against the accurate path alone on 450 000 inputs:
    /// bit-identical whenever its rounding test passes, which fails rarely,
    /// and its error within the bound proven in fast.rs (< 2⁻⁶⁷·⁸).
    /// Then the plain map (a length that leaves a partial chunk; the GELU map's part of
    /// this test is in activation/gelu.rs).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fast_phase_matches_accurate_path() {
        use super::accurate::tanh_accurate_dd;
        use super::fast::{fast_phase, tanh_dd};
        let xs = fast_phase_inputs();
        let want: Vec<f64> = xs.iter().map(|&x| tanh_core::<true>(x)).collect();
        let (mut fallbacks, mut worst) = (0usize, 0.0f64);
        for (&x, &w) in xs.iter().zip(&want) {
            let (t, ok) = fast_phase(x);
            if ok {
                assert_eq!(t.to_bits(), w.to_bits(), "fast phase, x = {x:e}");
            } else {
                fallbacks += 1;
            }
            assert_eq!(tanh_cr(x).to_bits(), w.to_bits(), "tanh_cr, x = {x:e}");
            let a = x.abs();
            if (7.450580596923828e-9..19.1).contains(&a) {
                let (h, l) = tanh_dd(a);
                let acc = tanh_accurate_dd::<true>(a);
                worst = worst.max((((h - acc.hi) + (l - acc.lo)) / acc.hi).abs());
            }
        }
        let rate = fallbacks as f64 / xs.len() as f64;
        eprintln!(
            "fast phase: {} inputs, {fallbacks} fallbacks ({:.3}%), largest error 2^{:.2}",
            xs.len(),
            100.0 * rate,
            worst.log2()
        );
        assert!(rate < 0.01, "fallback rate {rate}");
        assert!(
            worst < 2f64.powi(-67),
            "fast-phase error 2^{}",
            worst.log2()
        );

        let n = xs.len() - 3;
        let mut out = vec![0.0; n];
        map_tanh_cr::<PlainTanh>(&xs[..n], &mut out);
        for ((&x, &w), &o) in xs.iter().zip(&want).zip(&out) {
            assert_eq!(o.to_bits(), w.to_bits(), "map tanh, x = {x:e}");
        }
    }
}
