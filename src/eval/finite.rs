//! Finiteness checks: `faber run --check-finite` (RUN018 at the first tensor op or
//! scalar arithmetic whose result holds a NaN or an infinity) and the host function
//! `hospes.primum_non_finitum` that gradus' optimizers use (docs/gradus.md, "Non-finite
//! values").
//!
//! The flag is `RunConfig::check_finite`, copied into `Machine::check_finite`; with it off, the only
//! cost is one well-predicted branch after each tensor op, scalar float operation and
//! number method.

use super::value::Value;
use crate::tensor::Tensor;

/// Whether every element is finite: one pass, eight independent lanes (`x·0` is 0 for a
/// finite `x` and NaN for NaN or ±∞, so a lane's sum stays 0 until it meets one).
pub(crate) fn all_finite(xs: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let mut chunks = xs.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    let tail = chunks.remainder().iter().fold(0.0, |a, x| a + x * 0.0);
    acc.iter().sum::<f64>() + tail == 0.0
}

/// [`all_finite`] of f32 elements, read as they are (sixteen lanes of f32: `x·0` is an
/// exact 0 for every finite f32 too).
fn all_finite_f32(xs: &[f32]) -> bool {
    let mut acc = [0.0f32; 16];
    let mut chunks = xs.chunks_exact(16);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    let tail = chunks.remainder().iter().fold(0.0, |a, x| a + x * 0.0);
    acc.iter().sum::<f32>() + tail == 0.0
}

/// Whether every element of a tensor of either element type is finite (no widened copy
/// of an f32 tensor; a tensor only on a device is asked there, src/tensor/remote.rs).
pub(crate) fn tensor_finite(t: &Tensor) -> bool {
    if t.on_device_only() {
        return t.all_finite();
    }
    match t.data_f32() {
        Some(xs) => all_finite_f32(xs),
        None => all_finite(t.data()),
    }
}

/// The first element that is NaN or ±∞, with its flat index.
fn first_bad(t: &Tensor) -> Option<(usize, f64)> {
    if tensor_finite(t) {
        return None;
    }
    (0..t.numel())
        .filter_map(|i| t.value_at(i).map(|x| (i, x)))
        .find(|(_, x)| !x.is_finite())
}

/// What is not finite in an op's result: a tensor, a number, or a pair/triple of them.
fn describe(v: &Value) -> Option<String> {
    match v {
        Value::Float(f) if !f.is_finite() => Some(format!("the value {}", show(*f))),
        Value::Tensor(t) => first_bad(t).map(|(i, x)| {
            format!(
                "{} at flat index {i} of a tensor of shape {:?}",
                show(x),
                t.shape()
            )
        }),
        Value::Tuple(items) => items.iter().enumerate().find_map(|(k, item)| {
            describe(item).map(|d| format!("{d} (result {} of the tuple)", k))
        }),
        _ => None,
    }
}

fn show(x: f64) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "+inf"
    } else {
        "-inf"
    }
}

/// The RUN018 message when `v`, the result of `what` in function `func`, holds a NaN
/// or an infinity; `None` when it is finite.
pub(super) fn non_finite_message(what: &str, func: &str, v: &Value) -> Option<String> {
    let d = describe(v)?;
    Some(format!(
        "`{what}` in `{func}` produced {d} (--check-finite)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_finite_finds_every_kind_anywhere() {
        for n in [0usize, 1, 7, 8, 9, 31] {
            let ok: Vec<f64> = (0..n).map(|i| i as f64 * 1e300).collect();
            assert!(all_finite(&ok), "n = {n}");
            for at in 0..n {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut xs = ok.clone();
                    xs[at] = bad;
                    assert!(!all_finite(&xs), "n = {n}, at = {at}, {bad}");
                    let t = Tensor::from_slice(&xs, &[n]).unwrap();
                    assert_eq!(first_bad(&t).map(|(i, _)| i), Some(at));
                    // f32: finite values up to f32's largest, one bad at `at`.
                    let mut ys: Vec<f32> = (0..n).map(|i| f32::MAX / (i + 1) as f32).collect();
                    ys[at] = bad as f32;
                    let t32 = Tensor::from_f32(ys, &[n]).unwrap();
                    assert!(!tensor_finite(&t32), "f32: n = {n}, at = {at}, {bad}");
                    assert_eq!(first_bad(&t32).map(|(i, _)| i), Some(at));
                }
            }
            assert!(first_bad(&Tensor::from_slice(&ok, &[n]).unwrap()).is_none());
            let big: Vec<f32> = (0..n).map(|i| f32::MAX / (i + 1) as f32).collect();
            assert!(tensor_finite(&Tensor::from_f32(big, &[n]).unwrap()));
        }
    }
}
