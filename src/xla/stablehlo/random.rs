//! The seeded random tensors `uniformis`, `normalis` and `multinomialis` on the
//! device: faber's SplitMix64 (src/tensor/rng.rs, docs/ops.md#random-numbers)
//! computed per element in `ui64` arithmetic. The k-th draw of a stream seeded with
//! s (k = 1, 2, …) mixes the state `s + k·γ` mod 2⁶⁴, so every draw is a function of
//! its counter: element i of `uniformis` is draw i + 1, element i of `normalis` takes
//! draws 2i + 1 and 2i + 2 (u₁, u₂), row r of `multinomialis` draw r + 1.
//!
//! What the device gives, against the native kernels:
//! * `uniformis`: the same bits. The mix is exact integer arithmetic, `z >> 11` is
//!   below 2⁵³ so its conversion to f64 and the product with 2⁻⁵³ are exact; an f32
//!   tensor takes that f64 rounded once, at most the largest f32 below 1, as
//!   `uniform_tensor_of` does.
//! * `normalis`: `μ + σ·√(−2·ln(1 − u₁))·cos(2π·u₂)` from the same u₁, u₂ (`1 − u₁`
//!   is exact), in f64 and rounded once to f32 for an f32 tensor; the device's `log`,
//!   `sqrt` and `cos` are not libm's, so the values agree within a few f64 ulps
//!   (tests/xla_random.rs states the tolerance).
//! * `multinomialis`: the row's running sums (`reduce_window`, added in order), its
//!   total the last of them, `u = uniform·total` and the first index whose running
//!   sum exceeds u — the count of running sums ≤ u. Where the plugin adds in the native order, the indices are
//!   the native ones; a sum rounded otherwise can move a draw within rounding of a
//!   running sum to the neighbouring index. The device raises no error: a row with a
//!   negative or non-finite probability, or whose total is not positive and finite
//!   (a Domain error natively), gives the index NaN.

use super::lower::{fill_with, Args, LowerError, Lowered, Operand};
use super::{Binary, Compare, Function, IntBinary, Reduction, Unary, Value, U64};
use crate::xla::exec::ElementType;

/// SplitMix64's increment γ and its two multipliers (src/tensor/rng.rs).
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const MIX1: u64 = 0xBF58_476D_1CE4_E5B9;
const MIX2: u64 = 0x94D0_49BB_1331_11EB;
/// 2⁻⁵³.
const ULP53: f64 = 1.0 / 9_007_199_254_740_992.0;
/// The largest f32 below 1.
const BELOW_ONE_F32: f64 = 1.0 - f32::EPSILON as f64 / 2.0;

/// The seed (operand 1): an integer known when the program is traced, taken as the
/// native op takes it (its two's-complement bits).
fn seed(a: &Args) -> Result<u64, LowerError> {
    match a.get(1)? {
        Operand::Int(n) => Ok(*n as u64),
        other => a.err(format!(
            "the seed (operand 1) must be an integer known when traced, found {other:?}"
        )),
    }
}

/// The shape (operand 2) and its element count.
fn shape(a: &Args) -> Result<(Vec<usize>, usize), LowerError> {
    let dims = a.dims(2)?;
    match dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d)) {
        Some(n) => Ok((dims, n)),
        None => a.err(format!("shape {dims:?} has too many elements")),
    }
}

/// The counters `stride·i + first` for i in 0..n (rank 1).
fn counters(f: &mut Function, n: usize, stride: u64, first: u64) -> U64 {
    let i = f.iota_u64(&[n], 0);
    let i = if stride == 1 {
        i
    } else {
        let s = f.splat_u64(stride, &[n]);
        f.int_binary(IntBinary::Multiply, i, s)
    };
    let c = f.splat_u64(first, &[n]);
    f.int_binary(IntBinary::Add, i, c)
}

/// The f64 uniforms in [0, 1) of the draws numbered `k` (rank 1) of the stream seeded
/// with `seed`: `(mix(seed + k·γ) >> 11)·2⁻⁵³`.
fn uniforms(f: &mut Function, seed: u64, k: U64) -> Value {
    let dims = f.ty(k.0).dims.clone();
    let splat = |f: &mut Function, v: u64| f.splat_u64(v, &dims);
    let (g, s) = (splat(f, GAMMA), splat(f, seed));
    let kg = f.int_binary(IntBinary::Multiply, k, g);
    let mut z = f.int_binary(IntBinary::Add, kg, s);
    for (shift, mul) in [(30, Some(MIX1)), (27, Some(MIX2)), (31, None)] {
        let by = splat(f, shift);
        let high = f.int_binary(IntBinary::ShiftRightLogical, z, by);
        z = f.int_binary(IntBinary::Xor, z, high);
        if let Some(m) = mul {
            let m = splat(f, m);
            z = f.int_binary(IntBinary::Multiply, z, m);
        }
    }
    let by = splat(f, 11);
    let top = f.int_binary(IntBinary::ShiftRightLogical, z, by);
    let x = f.u64_to_float(top, ElementType::F64);
    let scale = f.splat(ElementType::F64, ULP53, &dims);
    f.binary(Binary::Multiply, x, scale)
}

/// f64 values of a draw in the constructor's element type: rounded once to f32 for
/// an f32 tensor, then laid out in `dims`.
fn finish(f: &mut Function, x: Value, elem: ElementType, dims: &[usize]) -> Value {
    let x = f.convert(x, elem);
    f.reshape(x, dims)
}

/// `seed.uniformis(s, shape)`.
pub(super) fn uniformis(f: &mut Function, a: &Args) -> Lowered {
    let elem = a.seed_elem(f)?;
    let s = seed(a)?;
    let (dims, n) = shape(a)?;
    if n == 0 {
        return Ok(vec![f.splat(elem, 0.0, &dims)]);
    }
    let k = counters(f, n, 1, 1);
    let u = uniforms(f, s, k);
    let mut x = f.convert(u, elem);
    if elem == ElementType::F32 {
        // An f64 draw ≥ 1 − 2⁻²⁵ rounds up to 1.0 in f32: kept below 1.
        let below = f.splat(elem, BELOW_ONE_F32, &[n]);
        x = f.binary(Binary::Minimum, x, below);
    }
    Ok(vec![f.reshape(x, &dims)])
}

/// `seed.normalis(s, shape, μ, σ)`: Box–Muller's cosine branch from draws 2i + 1 and
/// 2i + 2, `μ + σ·z` in f64 (μ and σ literal numbers, or numbers the device holds).
pub(super) fn normalis(f: &mut Function, a: &Args) -> Lowered {
    let elem = a.seed_elem(f)?;
    let s = seed(a)?;
    let (dims, n) = shape(a)?;
    let f64s = |f: &mut Function, v: f64| f.splat(ElementType::F64, v, &[n]);
    let mean = fill_with(f, a, a.get(3)?, ElementType::F64, &[n])?;
    let std = fill_with(f, a, a.get(4)?, ElementType::F64, &[n])?;
    if n == 0 {
        return Ok(vec![f.splat(elem, 0.0, &dims)]);
    }
    let k1 = counters(f, n, 2, 1);
    let u1 = uniforms(f, s, k1);
    let k2 = counters(f, n, 2, 2);
    let u2 = uniforms(f, s, k2);
    let one = f64s(f, 1.0);
    let rest = f.binary(Binary::Subtract, one, u1);
    let ln = f.unary(Unary::Log, rest);
    let m2 = f64s(f, -2.0);
    let r2 = f.binary(Binary::Multiply, m2, ln);
    let r = f.unary(Unary::Sqrt, r2);
    let tau = f64s(f, std::f64::consts::TAU);
    let angle = f.binary(Binary::Multiply, tau, u2);
    let c = f.unary(Unary::Cosine, angle);
    let z = f.binary(Binary::Multiply, r, c);
    let sz = f.binary(Binary::Multiply, std, z);
    let y = f.binary(Binary::Add, mean, sz);
    Ok(vec![finish(f, y, elem, &dims)])
}

/// `p.multinomialis(s)`: one index per last-axis row of a `[V]` (→ rank 0) or
/// `[N, V]` (→ `[N]`) probability tensor, in p's element type (module docs).
pub(super) fn multinomialis(f: &mut Function, a: &Args) -> Lowered {
    let pt = a.ty(f, 0)?;
    let (rows, v) = match pt.dims[..] {
        [v] => (1, v),
        [n, v] => (n, v),
        _ => return a.err(format!("needs [V] or [N, V], found {pt}")),
    };
    if v == 0 {
        return a.err("no classes");
    }
    let s = seed(a)?;
    let out: Vec<usize> = pt.dims[..pt.rank() - 1].to_vec();
    if rows == 0 {
        return Ok(vec![f.splat(pt.elem, 0.0, &out)]);
    }
    let f64 = ElementType::F64;
    let p = f.convert(a.tensor(0)?, f64);
    let p = f.reshape(p, &[rows, v]);
    let (row, all) = ([rows], [rows, v]);
    let row_splat = |f: &mut Function, x: f64| f.splat(f64, x, &row);
    let all_splat = |f: &mut Function, x: f64| f.splat(f64, x, &all);

    // Running sums c, the total c[V − 1], u = uniform·total.
    let c = f.cumulative_sum(p, 1);
    let last = f.slice(c, &[0, v - 1], &[rows, v]);
    let total = f.reshape(last, &row);
    let k = counters(f, rows, 1, 1);
    let uni = uniforms(f, s, k);
    let u = f.binary(Binary::Multiply, uni, total);

    // The first i with u < c[i]: the count of c[i] ≤ u (c never decreases). One
    // exists: uniform ≤ 1 − 2⁻⁵³ makes u < total = c[V − 1] for a positive finite
    // total, so the native fallback (the last i with p[i] > 0) is never taken.
    let ub = f.broadcast_in_dim(u, &[0], &all);
    let (zeros, ones) = (all_splat(f, 0.0), all_splat(f, 1.0));
    let at_or_below = f.select_if(c, Compare::Gt, ub, zeros, ones);
    let idx = f.reduce(at_or_below, &[1], Reduction::Sum);

    // A row the native kernel refuses: NaN. A probability that is negative or NaN
    // fails `p ≥ 0`; an infinite one makes the total infinite or NaN.
    let not_neg = f.select_if(p, Compare::Ge, zeros, zeros, ones);
    let bad = f.reduce(not_neg, &[1], Reduction::Sum);
    let (rzero, rone) = (row_splat(f, 0.0), row_splat(f, 1.0));
    let rinf = row_splat(f, f64::INFINITY);
    let bad = f.select_if(total, Compare::Gt, rzero, bad, rone);
    let bad = f.select_if(total, Compare::Lt, rinf, bad, rone);
    let nan = row_splat(f, f64::NAN);
    let idx = f.select_if(bad, Compare::Gt, rzero, nan, idx);
    Ok(vec![finish(f, idx, pt.elem, &out)])
}
