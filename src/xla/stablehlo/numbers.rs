//! The methods of numbers in the function tracer (function.rs), as
//! src/eval/methods.rs computes them: on numbers known when the function is traced,
//! folded the same way; on a number the device computes (a rank-0 tensor), the
//! element-wise op. `radix` is the square root; `potentia` raises to an exponent
//! known now — an integer exponent by repeated squaring (the interpreter's `powi`
//! multiplies too), another through `stablehlo.power`.

use super::bound::Bound;
use super::lower::LowerError;
use super::{Binary, Function, Unary};
use crate::ir::Method;

fn unsupported<T>(what: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported { what: what.into() })
}

/// `x.<m>(args)` for a number `x`.
pub(super) fn method(
    f: &mut Function,
    m: Method,
    x: Bound,
    args: &[Bound],
) -> Result<Bound, LowerError> {
    match (m, args) {
        (Method::Radix, []) => match x {
            Bound::Int(n) => Ok(Bound::Float((n as f64).sqrt())),
            Bound::Float(x) => Ok(Bound::Float(x.sqrt())),
            Bound::Number(v) => Ok(Bound::Number(f.unary(Unary::Sqrt, v))),
            other => unsupported(format!("`radix` of {other:?}")),
        },
        (Method::Potentia, [e]) => potentia(f, x, e),
        _ => unsupported(format!("the method `{}`", m.name())),
    }
}

fn potentia(f: &mut Function, x: Bound, e: &Bound) -> Result<Bound, LowerError> {
    if let (Bound::Int(a), Bound::Int(b)) = (&x, e) {
        if *b >= 0 {
            return match u32::try_from(*b).ok().and_then(|b| a.checked_pow(b)) {
                Some(v) => Ok(Bound::Int(v)),
                None => unsupported(format!("`{a}.potentia({b})`, which overflows")),
            };
        }
    }
    // The exponent as the interpreter takes it: an integer (in i32) by `powi`.
    let (int, float) = match e {
        Bound::Int(n) => (i32::try_from(*n).ok(), *n as f64),
        Bound::Float(y) => (None, *y),
        other => return unsupported(format!("`potentia` with the exponent {other:?}")),
    };
    match x {
        Bound::Int(a) => Ok(Bound::Float(match int {
            Some(n) => (a as f64).powi(n),
            None => (a as f64).powf(float),
        })),
        Bound::Float(a) => Ok(Bound::Float(match int {
            Some(n) => a.powi(n),
            None => a.powf(float),
        })),
        Bound::Number(v) => {
            let elem = f.ty(v).elem;
            let whole = float.fract() == 0.0 && float.abs() <= f64::from(i32::MAX);
            let r = match (int, whole) {
                (Some(n), _) => powers(f, v, n),
                (None, true) => powers(f, v, float as i32),
                _ => {
                    let y = f.constant(elem, float);
                    f.binary(Binary::Power, v, y)
                }
            };
            Ok(Bound::Number(r))
        }
        other => unsupported(format!("`potentia` of {other:?}")),
    }
}

/// `x^n` by repeated squaring (a reciprocal for n < 0; 1 for n = 0).
fn powers(f: &mut Function, x: super::Value, n: i32) -> super::Value {
    let elem = f.ty(x).elem;
    let mut acc: Option<super::Value> = None;
    let mut base = x;
    let mut k = n.unsigned_abs();
    while k > 0 {
        if k & 1 == 1 {
            acc = Some(match acc {
                Some(a) => f.binary(Binary::Multiply, a, base),
                None => base,
            });
        }
        k >>= 1;
        if k > 0 {
            base = f.binary(Binary::Multiply, base, base);
        }
    }
    let one = f.constant(elem, 1.0);
    match (acc, n < 0) {
        (None, _) => one,
        (Some(a), false) => a,
        (Some(a), true) => f.binary(Binary::Divide, one, a),
    }
}
