//! Element-wise f32 kernels (issue 21): the broadcast binary ops `addita`, `subtrahe`,
//! `multiplica`/`⊙`, `divide`, the bias add `addita_bias`, the maps by a number
//! (`scala`, and `addita`/`subtrahe`/`multiplica`/`divide` with a number operand) and
//! the unary maps `neg`, `relu`, `positiva`, `sqrt`, `reciproca`, `log` — on row-major
//! slices with their shapes, and as the f32 arms of the Tensor-level entries of
//! elementwise.rs (`*_t32`, every result written once, never zero-filled first).
//!
//! Bounds:
//! * Two f32 tensor operands: each result is the IEEE single-precision operation —
//!   correctly rounded (½ ulp), as numpy float32 computes it.
//! * **A number operand** (an f64: `x.scala(0.1)`, `x.addita(1e-6)`) **is not rounded to
//!   f32 first**: each result is the f64 operation on the exactly widened element and
//!   the number, rounded once to f32. That is the value the widen-compute-round path
//!   gave before these kernels (docs/precision.md), and it is within
//!   `½ ulp + 2⁻⁵³·|exact|` of the exact result (two roundings, the first at f64). When
//!   the number is an f32 value (0.5, 2, −1e9, any `(s as f32) as f64 == s`) it is the
//!   f32 operation, computed so: the correctly rounded result, bit for bit what numpy
//!   float32 and PyTorch give for an f32 tensor and that number. Otherwise PyTorch
//!   (which rounds the number to f32 first) can differ by an ulp.
//! * `neg`, `relu`, `positiva` are exact; `sqrt` and `reciproca` correctly rounded;
//!   `log` is ln in f64 (glibc, < 1 ulp of f64) rounded once — faithfully rounded,
//!   tested against mpmath points (tests/tensor_f32.rs).
//!
//! Blocks of elements split between threads never change an element's result. The
//! domain checks (`divide`'s zero or non-finite divisor, `log` of x ≤ 0, `sqrt` of
//! x < 0, `reciproca` of 0 or a non-finite x) are the f64 ops' errors with the same
//! words; the offending element is shown as the f32 it is (its shortest decimal).

use std::mem::MaybeUninit;

use super::elem::{as_slots, f32_like, f32_tensor, filled_f32};
use super::par::{PAR_MIN_CHEAP, PAR_MIN_MAP};
use super::par_f32::{par_blocks, wide, SendPtrOf};
use super::shape::broadcast_strides;
use super::{TResult, Tensor, TensorError};

/// A binary element-wise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinOp {
    #[inline(always)]
    /// The operation on two f32 (the IEEE single-precision result).
    pub fn apply(self, x: f32, y: f32) -> f32 {
        match self {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
        }
    }
}

/// `out = a op b` with NumPy broadcasting: `out_shape` is the broadcast of `ash` and
/// `bsh` (`shape::broadcast_shapes`, which the caller has checked), `out` its element
/// count.
pub fn binary_f32(
    op: BinOp,
    a: &[f32],
    ash: &[usize],
    b: &[f32],
    bsh: &[usize],
    out_shape: &[usize],
    out: &mut [f32],
) {
    binary_into(op, a, ash, b, bsh, out_shape, as_slots(out))
}

/// [`binary_f32`] into slots to write.
fn binary_into(
    op: BinOp,
    a: &[f32],
    ash: &[usize],
    b: &[f32],
    bsh: &[usize],
    out_shape: &[usize],
    out: &mut [MaybeUninit<f32>],
) {
    match op {
        BinOp::Add => binary_with(a, ash, b, bsh, out_shape, out, |x, y| x + y),
        BinOp::Sub => binary_with(a, ash, b, bsh, out_shape, out, |x, y| x - y),
        BinOp::Mul => binary_with(a, ash, b, bsh, out_shape, out, |x, y| x * y),
        BinOp::Div => binary_with(a, ash, b, bsh, out_shape, out, |x, y| x / y),
    }
}

#[inline(always)]
fn binary_with<F: Fn(f32, f32) -> f32 + Copy + Sync>(
    a: &[f32],
    ash: &[usize],
    b: &[f32],
    bsh: &[usize],
    shape: &[usize],
    out: &mut [MaybeUninit<f32>],
    f: F,
) {
    let n = out.len();
    if n == 0 {
        return;
    }
    let op = SendPtrOf::new(out.as_mut_ptr());
    if ash == bsh {
        par_blocks(n, 1, PAR_MIN_MAP, |start, len| {
            // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
            let o = unsafe { op.part(start, len) };
            let (x, y) = (&a[start..start + len], &b[start..start + len]);
            wide(
                #[inline(always)]
                || {
                    for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                        o.write(f(x, y));
                    }
                },
            )
        });
        return;
    }
    if b.len() == 1 && a.len() == n {
        let y = b[0];
        return wide(
            #[inline(always)]
            || {
                for (o, &x) in out.iter_mut().zip(a) {
                    o.write(f(x, y));
                }
            },
        );
    }
    if a.len() == 1 && b.len() == n {
        let x = a[0];
        return wide(
            #[inline(always)]
            || {
                for (o, &y) in out.iter_mut().zip(b) {
                    o.write(f(x, y));
                }
            },
        );
    }
    // General case: a row-major walk over the output, the last axis a contiguous run.
    let rank = shape.len();
    let (sa, sb) = (broadcast_strides(ash, shape), broadcast_strides(bsh, shape));
    let inner = shape[rank - 1];
    let (ia, ib) = (sa[rank - 1], sb[rank - 1]);
    let mut idx = vec![0usize; rank];
    let (mut oa, mut ob) = (0usize, 0usize);
    wide(
        #[inline(always)]
        || {
            for run in out.chunks_exact_mut(inner) {
                match (ia, ib) {
                    (1, 1) => {
                        for ((o, &x), &y) in run
                            .iter_mut()
                            .zip(&a[oa..oa + inner])
                            .zip(&b[ob..ob + inner])
                        {
                            o.write(f(x, y));
                        }
                    }
                    (0, 1) => {
                        let x = a[oa];
                        for (o, &y) in run.iter_mut().zip(&b[ob..ob + inner]) {
                            o.write(f(x, y));
                        }
                    }
                    (1, 0) => {
                        let y = b[ob];
                        for (o, &x) in run.iter_mut().zip(&a[oa..oa + inner]) {
                            o.write(f(x, y));
                        }
                    }
                    _ => {
                        let v = f(a[oa], b[ob]);
                        for o in run.iter_mut() {
                            o.write(v);
                        }
                    }
                }
                for ax in (0..rank - 1).rev() {
                    idx[ax] += 1;
                    oa += sa[ax];
                    ob += sb[ax];
                    if idx[ax] < shape[ax] {
                        break;
                    }
                    oa -= sa[ax] * idx[ax];
                    ob -= sb[ax] * idx[ax];
                    idx[ax] = 0;
                }
            }
        },
    );
}

/// `x.addita_bias(b)`: `out = x[…, c] + b[c]` for every row of `c = b.len()` elements.
pub fn add_bias_f32(x: &[f32], b: &[f32], out: &mut [f32]) {
    add_bias_into(x, b, as_slots(out))
}

/// [`add_bias_f32`] into slots to write.
fn add_bias_into(x: &[f32], b: &[f32], out: &mut [MaybeUninit<f32>]) {
    let c = b.len();
    if c == 0 {
        return;
    }
    let op = SendPtrOf::new(out.as_mut_ptr());
    par_blocks(x.len(), c, PAR_MIN_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let o = unsafe { op.part(start, len) };
        wide(
            #[inline(always)]
            || {
                for (orow, xrow) in o
                    .chunks_exact_mut(c)
                    .zip(x[start..start + len].chunks_exact(c))
                {
                    for ((o, &v), &w) in orow.iter_mut().zip(xrow).zip(b) {
                        o.write(v + w);
                    }
                }
            },
        )
    });
}

/// `x.scala(s)` for an f32 factor: `out = x·s`, each product correctly rounded.
pub fn scale_f32(x: &[f32], s: f32, out: &mut [f32]) {
    map_into(x, as_slots(out), PAR_MIN_MAP, move |v| v * s)
}

/// `out[i] = f(x[i])` (one length), blocks split between threads from `min_par`
/// elements, each compiled for the widest vectors the CPU has.
#[inline(always)]
fn map_into<F: Fn(f32) -> f32 + Copy + Sync>(
    x: &[f32],
    out: &mut [MaybeUninit<f32>],
    min_par: usize,
    f: F,
) {
    let o = SendPtrOf::new(out.as_mut_ptr());
    par_blocks(x.len(), 1, min_par, |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let dst = unsafe { o.part(start, len) };
        let src = &x[start..start + len];
        wide(
            #[inline(always)]
            || {
                for (d, &v) in dst.iter_mut().zip(src) {
                    d.write(f(v));
                }
            },
        )
    });
}

/// A unary element-wise map of f32 tensors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `−x` (exact).
    Neg,
    /// `relu`: x where x > 0 (NaN stays NaN), else 0 (exact).
    Relu,
    /// `positiva`, ReLU's mask: 1 where x > 0, else 0.
    Positive,
    /// `sqrt`: the IEEE single square root (correctly rounded).
    Sqrt,
    /// `reciproca`: 1/x (correctly rounded).
    Reciprocal,
    /// `log`: ln x in f64 (glibc's `log`, < 1 ulp of f64) rounded once — faithfully
    /// rounded, tested against mpmath points.
    Log,
}

impl UnaryOp {
    /// The map of one f32. The domain checks (`log` of x ≤ 0, `sqrt` of x < 0,
    /// `reciproca` of 0 or a non-finite x: Domain errors) stay with the caller, as in
    /// the f64 ops.
    #[inline(always)]
    pub fn apply(self, x: f32) -> f32 {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Relu => {
                if x > 0.0 || x.is_nan() {
                    x
                } else {
                    0.0
                }
            }
            UnaryOp::Positive => {
                if x > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Reciprocal => 1.0 / x,
            UnaryOp::Log => (x as f64).ln() as f32,
        }
    }
}

/// `out[i] = op(x[i])` (one length), blocks split between threads for large inputs.
pub fn unary_f32(op: UnaryOp, x: &[f32], out: &mut [f32]) {
    unary_into(op, x, as_slots(out))
}

/// [`unary_f32`] into slots to write: one loop per op (the op chosen outside it).
fn unary_into(op: UnaryOp, x: &[f32], out: &mut [MaybeUninit<f32>]) {
    match op {
        UnaryOp::Neg => map_into(x, out, PAR_MIN_MAP, |v| UnaryOp::Neg.apply(v)),
        UnaryOp::Relu => map_into(x, out, PAR_MIN_MAP, |v| UnaryOp::Relu.apply(v)),
        UnaryOp::Positive => map_into(x, out, PAR_MIN_MAP, |v| UnaryOp::Positive.apply(v)),
        UnaryOp::Sqrt => map_into(x, out, PAR_MIN_MAP, |v| UnaryOp::Sqrt.apply(v)),
        UnaryOp::Reciprocal => map_into(x, out, PAR_MIN_MAP, |v| 1.0 / v),
        UnaryOp::Log => {
            // A libm call per element: no wider vectors to gain, more threads sooner.
            let o = SendPtrOf::new(out.as_mut_ptr());
            par_blocks(x.len(), 1, PAR_MIN_CHEAP, |start, len| {
                // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
                let dst = unsafe { o.part(start, len) };
                for (d, &v) in dst.iter_mut().zip(&x[start..start + len]) {
                    d.write(UnaryOp::Log.apply(v));
                }
            })
        }
    }
}

// ---- the f32 arms of elementwise.rs's Tensor-level entries ----

/// `a op b` of two f32 tensors, `shape` their checked broadcast shape (`a`'s when the
/// shapes agree) of `n` elements.
pub(in crate::tensor) fn binary_t32(
    op: BinOp,
    a: &Tensor,
    b: &Tensor,
    shape: &[usize],
    n: usize,
) -> TResult<Tensor> {
    let (ad, bd) = (a.data32(), b.data32());
    let out = filled_f32(n, |dst| {
        binary_into(op, ad, a.shape(), bd, b.shape(), shape, dst)
    })?;
    Ok(f32_tensor(shape, out))
}

/// `x op s` per element for a number `s` (module docs: the f32 operation when `s` is
/// an f32 value, else the f64 operation rounded once — the same results).
pub(in crate::tensor) fn scalar_t32(op: BinOp, x: &Tensor, s: f64) -> TResult<Tensor> {
    let s32 = s as f32;
    if s32 as f64 == s {
        match op {
            BinOp::Add => map_t32(x, move |v| v + s32),
            BinOp::Sub => map_t32(x, move |v| v - s32),
            BinOp::Mul => map_t32(x, move |v| v * s32),
            BinOp::Div => map_t32(x, move |v| v / s32),
        }
    } else {
        match op {
            BinOp::Add => map_t32(x, move |v| (v as f64 + s) as f32),
            BinOp::Sub => map_t32(x, move |v| (v as f64 - s) as f32),
            BinOp::Mul => map_t32(x, move |v| (v as f64 * s) as f32),
            BinOp::Div => map_t32(x, move |v| (v as f64 / s) as f32),
        }
    }
}

#[inline(always)]
fn map_t32<F: Fn(f32) -> f32 + Copy + Sync>(x: &Tensor, f: F) -> TResult<Tensor> {
    let xd = x.data32();
    let out = filled_f32(xd.len(), |dst| map_into(xd, dst, PAR_MIN_MAP, f))?;
    Ok(f32_like(x, out))
}

/// `x.addita_bias(b)` of f32 tensors whose shapes the caller has checked.
pub(in crate::tensor) fn add_bias_t32(x: &Tensor, b: &Tensor) -> TResult<Tensor> {
    let (xd, bd) = (x.data32(), b.data32());
    let out = filled_f32(xd.len(), |dst| add_bias_into(xd, bd, dst))?;
    Ok(f32_like(x, out))
}

/// `op(x)` of an f32 tensor, with the f64 op's domain check and words.
pub(in crate::tensor) fn unary_t32(op: UnaryOp, x: &Tensor) -> TResult<Tensor> {
    let xd = x.data32();
    let bad = |pred: fn(f32) -> bool| xd.iter().copied().find(|&v| pred(v));
    let err = match op {
        UnaryOp::Sqrt => {
            bad(|v| v.is_nan() || v < 0.0).map(|v| format!("sqrt: element {v} is negative"))
        }
        UnaryOp::Log => {
            bad(|v| v.is_nan() || v <= 0.0).map(|v| format!("log: element {v} is not positive"))
        }
        UnaryOp::Reciprocal => {
            bad(|v| v == 0.0 || !v.is_finite()).map(|v| format!("reciproca: element {v}"))
        }
        _ => None,
    };
    if let Some(message) = err {
        return Err(TensorError::domain(message));
    }
    let out = filled_f32(xd.len(), |dst| unary_into(op, xd, dst))?;
    Ok(f32_like(x, out))
}

/// `divide`'s check of an f32 divisor: a zero (±0) or non-finite element is a `Domain`
/// error (the f64 op's words).
pub(in crate::tensor) fn check_divisor_t32(b: &Tensor) -> TResult<()> {
    match b.data32().iter().find(|v| **v == 0.0 || !v.is_finite()) {
        Some(bad) => Err(TensorError::domain(format!(
            "divide: divisor element {bad}"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::shape::broadcast_shapes;

    /// Broadcast results against the definition (each output the op of the operand
    /// elements its index selects, computed in f64 and rounded once: for +, −, ×, ÷ of
    /// two f32 that is the correctly rounded f32 result); f32 rounding shows where it
    /// must: 1e8 + 1 − 1e8 is 0 in f32.
    #[test]
    fn broadcast_ops_are_the_rounded_exact_ops() {
        let cases: [(&[usize], &[usize]); 6] = [
            (&[3, 4], &[3, 4]),
            (&[3, 4], &[4]),
            (&[3, 1], &[1, 4]),
            (&[2, 3, 4], &[3, 1]),
            (&[1], &[2, 5]),
            (&[2, 1, 4], &[1]),
        ];
        for (ash, bsh) in cases {
            let (na, nb) = (ash.iter().product::<usize>(), bsh.iter().product::<usize>());
            let a: Vec<f32> = (0..na).map(|i| (i as f32 * 0.37 - 1.1).exp()).collect();
            let b: Vec<f32> = (0..nb).map(|i| 1.3 + (i as f32 * 0.71).sin()).collect();
            let shape = broadcast_shapes(ash, bsh).unwrap();
            let n: usize = shape.iter().product();
            let at = |sh: &[usize], flat: usize| {
                // the operand's element for output index `flat`
                let mut rem = flat;
                let mut coords = vec![0; shape.len()];
                for ax in (0..shape.len()).rev() {
                    coords[ax] = rem % shape[ax];
                    rem /= shape[ax];
                }
                let lead = shape.len() - sh.len();
                let mut off = 0;
                for (k, &s) in sh.iter().enumerate() {
                    off = off * s + if s == 1 { 0 } else { coords[k + lead] };
                }
                off
            };
            for op in [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div] {
                let mut out = vec![0.0f32; n];
                binary_f32(op, &a, ash, &b, bsh, &shape, &mut out);
                for (i, &o) in out.iter().enumerate() {
                    let (x, y) = (a[at(ash, i)] as f64, b[at(bsh, i)] as f64);
                    let want = match op {
                        BinOp::Add => x + y,
                        BinOp::Sub => x - y,
                        BinOp::Mul => x * y,
                        BinOp::Div => x / y,
                    } as f32;
                    assert_eq!(o.to_bits(), want.to_bits(), "{op:?} {ash:?} {bsh:?} [{i}]");
                    assert_eq!(
                        o.to_bits(),
                        op.apply(a[at(ash, i)], b[at(bsh, i)]).to_bits()
                    );
                }
            }
        }
        let mut t = [0.0f32; 1];
        binary_f32(BinOp::Add, &[1e8], &[1], &[1.0], &[1], &[1], &mut t);
        let mut u = [0.0f32; 1];
        binary_f32(BinOp::Sub, &t, &[1], &[1e8], &[1], &[1], &mut u);
        assert_eq!(u[0], 0.0);
        let mut o = vec![0.0f32; 6];
        add_bias_f32(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[0.5, -1.0, 1e-8], &mut o);
        assert_eq!(o, [1.5, 1.0, 3.0, 4.5, 4.0, 6.0]);
        scale_f32(&[3.0, 1e-45, -2.0], 1.0 / 3.0, &mut o[..3]);
        assert_eq!(&o[..3], &[1.0, 0.0, -2.0 / 3.0]);
    }

    /// The exact unary maps, and sqrt and the reciprocal as their correctly rounded
    /// f64 values rounded once (exact for sqrt and 1/x of an f32: no double rounding).
    #[test]
    fn unary_maps() {
        let xs = [2.0f32, -0.0, 0.0, -3.5, f32::NAN, 1e-45, 7.0, f32::INFINITY];
        let mut o = [0.0f32; 8];
        unary_f32(UnaryOp::Relu, &xs, &mut o);
        assert_eq!(o[..4], [2.0, 0.0, 0.0, 0.0]);
        assert!(o[4].is_nan());
        unary_f32(UnaryOp::Positive, &xs, &mut o);
        assert_eq!(o[..4], [1.0, 0.0, 0.0, 0.0]);
        assert_eq!(o[4], 0.0);
        unary_f32(UnaryOp::Neg, &xs, &mut o);
        assert_eq!(o[1].to_bits(), 0.0f32.to_bits());
        let ys: Vec<f32> = (1..5000).map(|i| i as f32 * 0.731).collect();
        let mut a = vec![0.0f32; ys.len()];
        let mut b = vec![0.0f32; ys.len()];
        unary_f32(UnaryOp::Sqrt, &ys, &mut a);
        unary_f32(UnaryOp::Reciprocal, &ys, &mut b);
        for (k, &y) in ys.iter().enumerate() {
            assert_eq!(a[k], (y as f64).sqrt() as f32);
            assert_eq!(b[k], (1.0 / y as f64) as f32);
        }
    }
}
