//! Number helpers shared by values, their display and JSON, with no imports of the
//! evaluator's own (so the JSON tree and `Value` can use them without a circle).

use std::cmp::Ordering;
use std::fmt::Write;

/// A float: integral finite values with one decimal (`16576.0`, `-0.0`), others in
/// Rust's shortest round-trip form, which never uses an exponent.
pub fn float_into(out: &mut String, f: f64) {
    if f.is_finite() && f.fract() == 0.0 {
        let _ = write!(out, "{f:.1}");
    } else {
        let _ = write!(out, "{f}");
    }
}

/// Exact comparison of an i64 with an f64 (no rounding of large ints).
pub fn int_float_eq(a: i64, b: f64) -> bool {
    int_float_cmp(a, b) == Some(Ordering::Equal)
}

pub fn int_float_cmp(a: i64, b: f64) -> Option<Ordering> {
    if b.is_nan() {
        return None;
    }
    // 2^63 as f64; every f64 at or beyond ±2^63 is outside i64.
    const LIM: f64 = 9_223_372_036_854_775_808.0;
    if b >= LIM {
        return Some(Ordering::Less);
    }
    if b < -LIM {
        return Some(Ordering::Greater);
    }
    let t = b.trunc();
    let ti = t as i64; // exact: |t| < 2^63
    match a.cmp(&ti) {
        Ordering::Equal => {
            let frac = b - t;
            Some(if frac > 0.0 {
                Ordering::Less
            } else if frac < 0.0 {
                Ordering::Greater
            } else {
                Ordering::Equal
            })
        }
        o => Some(o),
    }
}
