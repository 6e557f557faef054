//! Fast phase of the correctly rounded `tanh` (Ziv's strategy, as in CR-libm):
//! an evaluation in f64/FMA arithmetic with a proven relative error bound,
//! then a rounding test; only the inputs whose rounding that bound cannot
//! decide go to the accurate double-double path ([`tanh_core`], ~2⁻¹⁰⁰).
//!
//! Both phases return the correctly rounded value, so results are
//! bit-identical to the accurate path alone (they could differ only if the
//! exact tanh lay within ~2⁻¹⁰⁰ of a rounding midpoint; no such input is known).
//!
//! [`fast_phase`] is branch-free (selects only), so the maps run it over
//! fixed-size chunks that LLVM vectorises (AVX-512, AVX2, or unrolled
//! scalar FMA code, chosen at run time by `map_tanh_cr`), then redo with
//! [`tanh_core`] only the lanes whose rounding test failed (~0.08% of
//! random inputs).
//!
//! # Method, for `a = |x|` in [2⁻²⁷, 19.1) (other inputs as in `tanh_core`)
//! Write `y = 2a = (64k + j)·ln2/64 + r` with `|r| ≤ R = ln2/128·(1 + 2⁻⁴⁰)`
//! ≈ 2⁻⁷·⁵³, `T = 2^{j/64}` (the double-double table `EXP2_J`), so
//! `e^y = 2ᵏ·T·e^r`. Let `X = 2ᵏ·(B + T·expm1 r)` with `B = T − 1` when
//! k = 0 (then `X = expm1 y`, formed without cancellation: `X ≥ T·|r|/1.011`)
//! and `B = T` when k ≥ 1 (then `X = e^y ≥ 1.98`). Then
//! `tanh a = X/(X + 2)` for k = 0 and `tanh a = 1 − 2/(X + 1)` for k ≥ 1.
//!
//! 1. `n = 64k + j = round(y·64/ln2)` by the 1.5·2⁵² shift (its low bits give
//!    j and k); `r₁ = y − n·A` is exact (n·A has ≤ 52 bits; Sterbenz), and
//!    `rh + rl = r₁ − n·B` exactly (exact product and sum), leaving out
//!    `n·C < 2⁻⁹⁶` (A + B + C is ln2/64 to ~2⁻¹⁶⁰, n < 2¹²).
//! 2. `expm1 r ≈ rh + rh²/2 + rh³·P(rh) + rl·(1 + rh + rh²/2)` with P the
//!    Taylor polynomial 1/3! + … + z⁵/8! (truncation ≤ R⁸/9! < 2⁻⁷⁸ relative
//!    to |r|). `rh + rh²/2` is kept exactly as a double-double (rh² by an
//!    FMA); all other terms are below `L = R²/6·|r|` ≈ 2⁻¹⁷·⁶·|r| and go to
//!    the low part in f64.
//! 3. X, then `X + 2` (or `X + 1`), as double-doubles with exact sums and
//!    products; the quotient by one reciprocal and one correction step.
//!
//! # Error bound
//! With u = 2⁻⁵³ and `λ = u·R²/6` ≈ 2⁻⁷⁰·⁶⁴, the only non-negligible
//! rounding errors are those on the low-part terms, at most u times a multiple
//! of L each: `rh³·P(rh)` carries 2.76u (u for the cube, 1.76u for Horner
//! including the rounding of 1/6), then one rounding each for the FMA that adds
//! it to the low part, for the low part of expm1, for its product with T,
//! and for the sum giving X's low part — 6.76u·L·T in all. For k = 0,
//! `T·|r| ≤ 1.011·X`, so X has relative error ≤ 6.84λ ≈ 2⁻⁶⁷·⁸⁷, plus below
//! 2⁻⁷⁷·⁶ from the rest (truncation, the rl·rh³/6 term ≤ 2⁻⁸⁶ left out of
//! step 2, reduction 2⁻⁹⁶ absolute with X ≥ 2⁻⁷·⁵³ when n ≥ 1, table
//! entries ~2⁻¹⁰⁶, quotient ~2⁻¹⁰⁰). `X ↦ X/(X + 2)` does not amplify
//! relative error (`d ln t/d ln X = 2/(X + 2) ≤ 1`). For k ≥ 1 it does by at
//! most `2X/(X² − 1) ≤ 1.36`, but there the low-part terms are below
//! `R³/6` relative to X, so the error is below 2⁻⁷⁴. Hence
//! `|th + tl − tanh a| < 2⁻⁶⁷·⁸·tanh a`; the rounding test uses [`EPS`] =
//! 2⁻⁶⁴, a 14× margin (the largest error seen against the accurate path over
//! 10⁸ random inputs is 2⁻⁶⁹·¹, near a = ln2/256 where k = 0, j = 1, r ≈ −R).
//!
//! # Rounding test
//! `th + tl` is normalised (`th = RN(th + tl)`), th > 0, and the exact value
//! lies within `err = EPS·th` of `th + tl`. Then RN(exact) = th for sure if
//! that interval stays strictly inside the midpoints to th's neighbours:
//! `tl + err < (succ(th) − th)/2` and `err − tl < (th − pred(th))/2` (the
//! lower gap is half the upper one when th is a power of two). Those gaps are
//! exact and rounding is monotone, so the test passing in f64 implies the
//! exact inequalities. It fails with probability ≈ 2·EPS/(ulp(th)/th)
//! ≤ 2⁻¹⁰.

#![cfg(target_arch = "x86_64")]

use super::accurate::{tanh_core, LN2_64_A, LN2_64_B};
use super::TanhOf;
use crate::tensor::dd::EXP2_J;

/// 2⁻²⁷ and 19.1: below and above these, tanh x rounds to x and to ±1.
const TINY: f64 = 7.450580596923828e-9;
const HUGE: f64 = 19.1;
/// 1.5·2⁵²: adding it rounds a value in [0, 2⁵¹) to an integer held in the
/// low mantissa bits.
const SHIFT: f64 = 6755399441055744.0;
/// 64/ln2.
const INV_LN2_64: f64 = 92.33248261689366;
/// Relative error bound assumed by the rounding test: 2⁻⁶⁴ (module docs).
const EPS: f64 = 5.421010862427522e-20;
/// 1/i! for i = 3…8.
const C3: f64 = 1.0 / 6.0;
const C4: f64 = 1.0 / 24.0;
const C5: f64 = 1.0 / 120.0;
const C6: f64 = 1.0 / 720.0;
const C7: f64 = 1.0 / 5040.0;
const C8: f64 = 1.0 / 40320.0;

/// `a + b = s + e` exactly, for |a| ≥ |b| (or a = 0).
#[inline(always)]
pub(in crate::tensor) fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a + b = s + e` exactly.
#[inline(always)]
pub(in crate::tensor) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// Step 1's reduction: `y − n·(a + b)` as a double-double `rh + rl`, for `n·a` and
/// `y − n·a` exact (the callers' split of ln2/64 and range of n guarantee it); the
/// product `n·b` is exact too, its sum with the rest exact up to the low part's rounding.
#[inline(always)]
pub(in crate::tensor) fn reduce_dd(y: f64, n: f64, a: f64, b: f64) -> (f64, f64) {
    let r1 = (-n).mul_add(a, y);
    let ph = n * b;
    let pl = n.mul_add(b, -ph);
    let (rh, e) = two_sum(r1, -ph);
    (rh, e - pl)
}

/// Step 2 of the method: `expm1(rh + rl) ≈ emh + eml` for |rh| ≤ R, with the
/// low-part terms in f64 (module docs; also the exp fast phase's core).
#[inline(always)]
pub(in crate::tensor) fn expm1_dd(rh: f64, rl: f64) -> (f64, f64) {
    let sq = rh * rh;
    let sqe = rh.mul_add(rh, -sq); // rh² = sq + sqe
    let p = rh.mul_add(rh.mul_add(rh.mul_add(rh.mul_add(C8, C7), C6), C5), C4);
    let p = rh.mul_add(p, C3);
    let cube = sq.mul_add(rh, sqe * rh);
    let corr = rl * ((1.0 + rh) + 0.5 * sq);
    let lo = cube.mul_add(p, 0.5 * sqe + corr);
    let (emh, e1) = fast_two_sum(rh, 0.5 * sq);
    (emh, e1 + lo)
}

/// `tanh a ≈ th + tl`, normalised, with relative error below 2⁻⁶⁷·⁸ for
/// a ∈ [2⁻²⁷, 19.1) (module docs); other `a` (NaN included) give some
/// finite value.
#[inline(always)]
pub(super) fn tanh_dd(a: f64) -> (f64, f64) {
    let a = if a > TINY { a } else { TINY }; // NaN → TINY
    let y = 2.0 * if a < HUGE { a } else { HUGE };
    // Step 1: n = round(y·64/ln2) ∈ [0, 3527], j = n mod 64, k = n div 64.
    let s = y.mul_add(INV_LN2_64, SHIFT);
    let bits = s.to_bits();
    let n = s - SHIFT;
    let j = (bits & 63) as usize;
    let k = (bits >> 6) & 63;
    let (rh, rl) = reduce_dd(y, n, LN2_64_A, LN2_64_B);
    // Step 2: expm1(rh + rl) ≈ emh + eml.
    let (emh, eml) = expm1_dd(rh, rl);
    // Step 3: X = 2ᵏ·(B + T·em) = xh + xl with T = t_hi + t_lo.
    let (t_hi, t_lo) = EXP2_J[j];
    let small = k == 0;
    let b_hi = if small { t_hi - 1.0 } else { t_hi }; // exact
    let pr = t_hi * emh;
    let pre = t_hi.mul_add(emh, -pr);
    // |b_hi| ≥ 2|pr| unless b_hi = 0 (j = k = 0), so fast_two_sum is exact.
    let (xh, xe) = fast_two_sum(b_hi, pr);
    let xl = t_hi.mul_add(eml, t_lo.mul_add(emh, t_lo + pre)) + xe;
    let (xh, xl) = fast_two_sum(xh, xl);
    let scale = f64::from_bits((k + 1023) << 52);
    let (xh, xl) = (xh * scale, xl * scale);
    // q = N/D with N = X, D = X + 2 (k = 0) or N = 2, D = X + 1 (k ≥ 1).
    let (dh, de) = two_sum(xh, if small { 2.0 } else { 1.0 });
    let dl = de + xl;
    let (nh, nl) = if small { (xh, xl) } else { (2.0, 0.0) };
    let inv = 1.0 / dh;
    let q0 = nh * inv;
    // N − q0·D: nh − q0·dh ≈ 2u·nh comes out of one FMA to within u of itself.
    let rem = (-q0).mul_add(dh, nh);
    let q1 = (-q0).mul_add(dl, rem + nl) * inv;
    let (ah, al) = fast_two_sum(1.0, -q0); // q0 ≤ 0.68 when k ≥ 1
    let (ah, al) = if small { (q0, q1) } else { (ah, al - q1) };
    fast_two_sum(ah, al)
}

/// The rounding test (module docs): for a normalised `th + tl` with th > 0 and
/// relative error below [`EPS`], whether the exact value surely rounds to th.
/// Branch-free; wrapping only matters for results the caller discards.
#[inline(always)]
pub(in crate::tensor) fn rounds_to_hi(th: f64, tl: f64) -> bool {
    let err = EPS * th;
    let b = th.to_bits();
    let up = f64::from_bits(b.wrapping_add(1)) - th;
    let down = th - f64::from_bits(b.wrapping_sub(1));
    tl + err < 0.5 * up && err - tl < 0.5 * down
}

/// The fast phase: `(tanh_cr(x), true)` when the rounding test passes, else
/// `(_, false)`. Branch-free; needs FMA hardware to be fast (`mul_add` is
/// exact everywhere).
#[inline(always)]
pub(super) fn fast_phase(x: f64) -> (f64, bool) {
    let a = x.abs();
    let (th, tl) = tanh_dd(a);
    // Rounding test (module docs); wrapping only matters for lanes whose
    // result is replaced below.
    let ok = rounds_to_hi(th, tl);
    if a.is_nan() || a < TINY {
        (x, true)
    } else if a >= HUGE {
        (1.0f64.copysign(x), true)
    } else {
        (th.copysign(x), ok)
    }
}

/// One chunk: `out = M::out(x, tanh_cr(M::arg(x)))` per lane (see [`TanhOf`]: the
/// plain tanh, or GELU and its tangent, whose element functions are inlined here).
///
/// Only called from the `target_feature` maps below, all of which enable FMA.
#[inline(always)]
fn chunk<const L: usize, M: TanhOf>(xs: &[f64; L], out: &mut [f64; L]) {
    let mut u = *xs;
    if !M::ARG_IS_X {
        for v in u.iter_mut() {
            *v = M::arg(*v);
        }
    }
    let mut t = [0.0; L];
    let mut ok = [false; L];
    for ((t, ok), &u) in t.iter_mut().zip(ok.iter_mut()).zip(&u) {
        (*t, *ok) = fast_phase(u);
    }
    if ok.iter().any(|&o| !o) {
        // SAFETY: the CPU has FMA (see above).
        unsafe { fix_up(&u, &mut t, &ok, tanh_core::<true>) };
    }
    if M::OUT_IS_T {
        *out = t;
    } else {
        for ((o, &x), &t) in out.iter_mut().zip(xs).zip(&t) {
            *o = M::out(x, t);
        }
    }
}

/// `accurate` (an FMA-enabled accurate path, inlined here) for the lanes whose
/// rounding test failed; shared with the exp fast phase.
#[cold]
#[inline(never)]
#[target_feature(enable = "fma")]
pub(in crate::tensor) unsafe fn fix_up<const L: usize>(
    u: &[f64; L],
    t: &mut [f64; L],
    ok: &[bool; L],
    accurate: impl Fn(f64) -> f64,
) {
    for ((t, &ok), &u) in t.iter_mut().zip(ok).zip(u) {
        if !ok {
            *t = accurate(u);
        }
    }
}

/// `dst[i]` as `M` says, `L` elements at a time (the tail through a zero-padded
/// chunk).
#[inline(always)]
fn map_chunks<const L: usize, M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    let mut s = src.chunks_exact(L);
    let mut d = dst.chunks_exact_mut(L);
    for (s, d) in (&mut s).zip(&mut d) {
        let s: &[f64; L] = s.try_into().expect("chunk of L");
        let d: &mut [f64; L] = d.try_into().expect("chunk of L");
        chunk::<L, M>(s, d);
    }
    let (s, d) = (s.remainder(), d.into_remainder());
    if !s.is_empty() {
        let (mut xs, mut ys) = ([0.0; L], [0.0; L]);
        xs[..s.len()].copy_from_slice(s);
        chunk::<L, M>(&xs, &mut ys);
        d.copy_from_slice(&ys[..s.len()]);
    }
}

/// [`map_chunks`] for AVX-512: one zmm register per chunk of 8.
#[target_feature(enable = "avx512f,avx2,fma")]
pub(super) unsafe fn map_avx512<M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    map_chunks::<8, M>(src, dst)
}

/// [`map_chunks`] for AVX2 (chunks of 4: larger ones spill registers).
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn map_avx2<M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    map_chunks::<4, M>(src, dst)
}

/// [`map_chunks`] for FMA without AVX2 (chunks of 8 interleave scalar code).
#[target_feature(enable = "fma")]
pub(super) unsafe fn map_fma<M: TanhOf>(src: &[f64], dst: &mut [f64]) {
    map_chunks::<8, M>(src, dst)
}

/// Scalar `tanh_cr`: the fast phase, else the accurate path.
#[target_feature(enable = "fma")]
pub(super) unsafe fn tanh_fma(x: f64) -> f64 {
    match fast_phase(x) {
        (t, true) => t,
        _ => tanh_core::<true>(x),
    }
}
