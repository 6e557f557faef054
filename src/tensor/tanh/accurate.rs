//! The accurate path of the correctly rounded `tanh` (module docs of `tanh`):
//! `tanh a = E/(E + 2)` with `E = expm1(2a)` in double-double, rounded once — used
//! alone where FMA is missing and as the fallback of the fast phase (fast.rs).

use crate::tensor::dd::{add, add_f64, div, expm1_small, mul, scale2, two_prod, two_sum, Dd};
use crate::tensor::dd::{EXP2_J, EXP2_J_M1};

/// ln2/64 = LN2_64_A + LN2_64_B + LN2_64_C; LN2_64_A has 40 significant
/// bits, so `n·LN2_64_A` is exact for n < 2¹³.
pub(super) const LN2_64_A: f64 = 0.010830424696251839;
pub(super) const LN2_64_B: f64 = -2.693663207127318e-15;
const LN2_64_C: f64 = 3.0422579568449217e-33;

/// The accurate path (see the module docs), used alone where FMA is
/// missing and as the fallback of the fast phase.
#[inline(always)]
pub(in crate::tensor) fn tanh_core<const FMA: bool>(x: f64) -> f64 {
    let a = x.abs();
    if a.is_nan() {
        return x;
    }
    if a < 7.450580596923828e-9 {
        // 2^-27: tanh x = x·(1 − x²/3 + …), x²/3 < 2^-54.
        return x;
    }
    if a >= 19.1 {
        return 1.0f64.copysign(x);
    }
    let t = tanh_accurate_dd::<FMA>(a);
    (t.hi + t.lo).copysign(x)
}

/// `tanh a` as a double-double (relative error ~2⁻¹⁰⁰), a ∈ [2⁻²⁷, 19.1).
#[inline(always)]
pub(super) fn tanh_accurate_dd<const FMA: bool>(a: f64) -> Dd {
    // 2a = (64k + j)·ln2/64 + r, |r| ≤ ln2/128; e^{2a} = 2^k·2^{j/64}·e^r.
    let y = 2.0 * a;
    let n = (y * (64.0 / std::f64::consts::LN_2)).round();
    let (k, j) = ((n as i64) >> 6, (n as i64 & 63) as usize);
    // r = y − n·ln2/64, exact to ~2^-150 absolute.
    let r = two_sum(y, -n * LN2_64_A);
    let r = add(r, two_prod::<FMA>(-n, LN2_64_B));
    let r = add_f64(r, -n * LN2_64_C);
    let er = expm1_small::<FMA>(r);
    let (hi, lo) = EXP2_J[j];
    let t = Dd { hi, lo };
    let e = if k == 0 {
        // E = (2^{j/64} − 1) + 2^{j/64}·expm1(r): both terms ≥ 0 or the
        // first dominates, so no cancellation (E = expm1(r) when j = 0).
        let (hi, lo) = EXP2_J_M1[j];
        add(Dd { hi, lo }, mul::<FMA>(t, er))
    } else {
        // E = 2^k·(2^{j/64} + 2^{j/64}·expm1(r)) − 1; k ≤ 55, 2^k exact.
        let p = scale2(
            add(t, mul::<FMA>(t, er)),
            f64::from_bits(((k as u64) + 1023) << 52),
        );
        add_f64(p, -1.0)
    };
    div::<FMA>(e, add_f64(e, 2.0))
}
