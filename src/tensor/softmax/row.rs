//! The one-row recipes of the softmax family (docs/ops.md § Network kernels), shared
//! by the softmax, its VJPs, the causal softmax and the cross-entropies: the row
//! maximum, the shifted exponentials and their sum, the softmax of one row.

use crate::tensor::{exp_cr, exp_cr_in_place};

/// Largest element of a non-empty row, NaN if any element is NaN. Four
/// running maxima (max is exact in any order; only the sign of a zero
/// maximum may depend on the order, which no caller observes: `x − m` and
/// `m + ln s` give the same results for m = ±0).
#[inline(always)]
pub(super) fn row_max(row: &[f64]) -> f64 {
    let mut lanes = [row[0]; 4];
    let mut nan = false;
    let chunks = row.chunks_exact(4);
    let rest = chunks.remainder();
    for c in chunks {
        for (l, &v) in lanes.iter_mut().zip(c) {
            *l = if v > *l { v } else { *l };
            nan |= v.is_nan();
        }
    }
    for &v in rest {
        lanes[0] = if v > lanes[0] { v } else { lanes[0] };
        nan |= v.is_nan();
    }
    if nan {
        return f64::NAN;
    }
    let a = if lanes[1] > lanes[0] {
        lanes[1]
    } else {
        lanes[0]
    };
    let b = if lanes[3] > lanes[2] {
        lanes[3]
    } else {
        lanes[2]
    };
    if b > a {
        b
    } else {
        a
    }
}

/// Below this, `exp` rounds to +0: e^x < 2⁻¹⁰⁷⁵ (half the least subnormal) for
/// x < −1075·ln 2 ≈ −745.13, so round-to-nearest gives 0 (glibc's `exp` returns
/// +0 there too, after a slow underflow path that sets `errno`).
const EXP_ZERO_BELOW: f64 = -746.0;

/// `exp_cr(d)`, with the inputs whose result is +0 answered at once (the masked
/// entries of causal attention, `x − m ≈ −1e9`). Same bits as `exp_cr(d)` for every
/// `d`, NaN included (`NaN < c` is false).
#[inline(always)]
pub(in crate::tensor) fn exp_or_zero(d: f64) -> f64 {
    if d < EXP_ZERO_BELOW {
        0.0
    } else {
        exp_cr(d)
    }
}

/// `row[i] = exp_cr(row[i] − m)` in place, then their sum left to right: the
/// exponentials of a softmax row through the vectorised map.
#[inline(always)]
pub(super) fn exp_shifted_sum(row: &mut [f64], m: f64) -> f64 {
    for v in row.iter_mut() {
        *v -= m;
    }
    exp_cr_in_place(row);
    let mut s = 0.0;
    for &e in row.iter() {
        s += e;
    }
    s
}

/// Softmax of one row into `out` (of the row's length): `m = max` ([`row_max`]: NaN
/// when the row holds one, so a NaN anywhere makes the whole row NaN), `e = exp(x −
/// m)`, `s = Σ e` left to right, `y = e / s`. The one softmax row of the forward, its
/// VJPs and the cross-entropies.
#[inline(always)]
pub(super) fn softmax_row(row: &[f64], out: &mut [f64]) {
    if row.is_empty() {
        return;
    }
    let m = row_max(row);
    out.copy_from_slice(row);
    let s = exp_shifted_sum(out, m);
    for o in out.iter_mut() {
        *o /= s;
    }
}

#[cfg(test)]
mod tests {
    use super::{exp_cr, exp_or_zero, row_max, softmax_row};

    /// The shortcut gives `exp_cr`'s own bits on both sides of the threshold, at the
    /// underflow boundary, far below it and for the special values.
    #[test]
    fn exp_or_zero_matches_exp() {
        let mut xs = vec![
            f64::NAN,
            f64::NEG_INFINITY,
            -1e9,
            -1e300,
            -0.0,
            0.0,
            1.0,
            709.0,
        ];
        let mut d = -760.0;
        while d < -700.0 {
            xs.push(d);
            d += 0.015625 / 3.0;
        }
        for x in [-746.0f64, -745.1332191019412, -745.1332191019411] {
            xs.extend([
                x,
                f64::from_bits(x.to_bits() - 1),
                f64::from_bits(x.to_bits() + 1),
            ]);
        }
        for x in xs {
            assert_eq!(exp_or_zero(x).to_bits(), exp_cr(x).to_bits(), "x = {x:e}");
        }
    }

    /// A NaN anywhere in a row — first, inside a four-lane chunk, in the remainder,
    /// beside ±∞ — makes its maximum NaN and so every element of its softmax NaN (the
    /// VJPs and the cross-entropies use the same row). A maximum that skipped NaN (as
    /// `f64::max` does) would give the largest other element instead. Rows without NaN
    /// keep their bits: the maximum is the largest element.
    #[test]
    fn a_nan_in_a_row_propagates() {
        for len in [1, 3, 4, 5, 8, 9, 13] {
            for at in 0..len {
                for other in [0.5, f64::INFINITY, f64::NEG_INFINITY, -1e300] {
                    let mut row: Vec<f64> = (0..len).map(|i| i as f64 * 0.25 - 1.0).collect();
                    row[(at + 1) % len] = other;
                    row[at] = f64::NAN;
                    assert!(row_max(&row).is_nan(), "max of {row:?}");
                    let mut out = vec![0.0; len];
                    softmax_row(&row, &mut out);
                    assert!(
                        out.iter().all(|v| v.is_nan()),
                        "softmax of {row:?}: {out:?}"
                    );
                }
            }
            let row: Vec<f64> = (0..len).map(|i| ((i * 7) % 5) as f64 - 2.0).collect();
            let want = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(row_max(&row).to_bits(), want.to_bits(), "{row:?}");
        }
    }
}
