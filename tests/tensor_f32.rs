//! The f32 transcendental kernels (issue 21) against high-precision reference points:
//! tests/reference/f32_transcendentals.json, written by
//! tests/reference/f32_transcendentals.py with mpmath at 300 bits (regenerate with
//! `python3 tests/reference/f32_transcendentals.py`). Each point is (x, lo, hi, cr) as f32
//! bits: lo ≤ f(x) ≤ hi adjacent f32, cr the correctly rounded one. The kernels promise
//! faithful rounding (lo or hi) for every input — edge cases included: ±0, subnormals,
//! the overflow and underflow thresholds, large |x|, ±∞, NaN — and the correctly
//! rounded value on all but rare inputs (their error before the one rounding is below
//! 2⁻⁴⁴…2⁻⁵⁰ relative), which the test checks too (at most one miss in 200 points).

use faber::tensor::f32ops::{
    exp_f32, exp_f32_map, gelu_derivative_f32, gelu_f32, gelu_f32_map, silu_derivative_f32,
    silu_f32, silu_f32_map, tanh_f32, tanh_f32_map, unary_f32, UnaryOp,
};

type Point = [u32; 4];

/// A slice map of a kernel.
type Map = fn(&[f32], &mut [f32]);

fn points(name: &str) -> Vec<Point> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/f32_transcendentals.json"
    );
    let text = std::fs::read_to_string(path).expect("reference JSON");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let rows = v[name].as_array().expect("function's points");
    rows.iter()
        .map(|r| {
            let r = r.as_array().expect("a point");
            let mut p = [0u32; 4];
            for (o, x) in p.iter_mut().zip(r) {
                *o = x.as_u64().expect("bits") as u32;
            }
            p
        })
        .collect()
}

/// Checks `f` (and the map `map`, when given, over all inputs at once) on every point:
/// faithful always, correctly rounded on all but ≤ 1/200 of the points. Returns the
/// count of correctly rounded results.
fn check(name: &str, f: impl Fn(f32) -> f32, map: Option<Map>) -> usize {
    let pts = points(name);
    assert!(pts.len() > 400, "{name}: {} points", pts.len());
    let xs: Vec<f32> = pts.iter().map(|p| f32::from_bits(p[0])).collect();
    let mapped = map.map(|m| {
        let mut out = vec![0.0f32; xs.len()];
        m(&xs, &mut out);
        out
    });
    let mut correct = 0;
    for (k, (p, &x)) in pts.iter().zip(&xs).enumerate() {
        let y = f(x);
        let (lo, hi, cr) = (
            f32::from_bits(p[1]),
            f32::from_bits(p[2]),
            f32::from_bits(p[3]),
        );
        if cr.is_nan() {
            assert!(y.is_nan(), "{name}({x:e}) = {y:e}, want NaN");
            correct += 1;
        } else {
            assert!(
                y.to_bits() == lo.to_bits() || y.to_bits() == hi.to_bits(),
                "{name}({x:e} = {:#x}) = {y:e} ({:#x}), not faithful: exact in [{lo:e}, {hi:e}]",
                p[0],
                y.to_bits()
            );
            if y.to_bits() == cr.to_bits() {
                correct += 1;
            } else {
                eprintln!("{name}({x:e}) = {y:e}, correctly rounded {cr:e} (faithful)");
            }
        }
        if let Some(m) = &mapped {
            assert_eq!(m[k].to_bits(), y.to_bits(), "{name} map at {x:e}");
        }
    }
    eprintln!(
        "{name}: {correct} of {} points correctly rounded",
        pts.len()
    );
    assert!(
        (pts.len() - correct) * 200 <= pts.len(),
        "{name}: only {correct} of {} correctly rounded",
        pts.len()
    );
    correct
}

#[test]
fn exp_is_faithful_at_every_reference_point() {
    check("exp", exp_f32, Some(exp_f32_map));
}

#[test]
fn tanh_is_faithful_at_every_reference_point() {
    check("tanh", tanh_f32, Some(tanh_f32_map));
}

#[test]
fn gelu_is_faithful_at_every_reference_point() {
    check("gelu", gelu_f32, Some(gelu_f32_map));
}

#[test]
fn gelu_derivative_is_faithful_at_every_reference_point() {
    check("gelu_derivative", gelu_derivative_f32, None);
}

#[test]
fn silu_is_faithful_at_every_reference_point() {
    check("silu", silu_f32, Some(silu_f32_map));
}

#[test]
fn silu_derivative_is_faithful_at_every_reference_point() {
    check("silu_derivative", silu_derivative_f32, None);
}

#[test]
fn log_is_faithful_at_every_reference_point() {
    fn log_map(x: &[f32], out: &mut [f32]) {
        unary_f32(UnaryOp::Log, x, out)
    }
    check("log", |x| UnaryOp::Log.apply(x), Some(log_map));
}
