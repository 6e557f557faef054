//! Element-wise f32 kernels (issue 21): the broadcast binary ops `addita`, `subtrahe`,
//! `multiplica`/`⊙`, `divide`, the bias add `addita_bias` and the scaling `scala`, on
//! row-major slices with their shapes.
//!
//! Each result is the IEEE single-precision operation on the two f32 operands —
//! correctly rounded (½ ulp), as numpy float32 computes it; `scala` by an f32 factor
//! likewise. Blocks of elements split between threads never change an element's
//! result. The divisor checks (`divide`'s Domain error on a zero or non-finite
//! divisor) stay with the caller, as the f64 `div` does them before its loop.

use super::elementwise::broadcast_strides;
use super::par::PAR_MIN_MAP;
use super::par_f32::{par_blocks, wide, SendPtrOf};

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
    out: &mut [f32],
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
                        *o = f(x, y);
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
                    *o = f(x, y);
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
                    *o = f(x, y);
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
                            *o = f(x, y);
                        }
                    }
                    (0, 1) => {
                        let x = a[oa];
                        for (o, &y) in run.iter_mut().zip(&b[ob..ob + inner]) {
                            *o = f(x, y);
                        }
                    }
                    (1, 0) => {
                        let y = b[ob];
                        for (o, &x) in run.iter_mut().zip(&a[oa..oa + inner]) {
                            *o = f(x, y);
                        }
                    }
                    _ => run.fill(f(a[oa], b[ob])),
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
                        *o = v + w;
                    }
                }
            },
        )
    });
}

/// `x.scala(s)` for an f32 factor: `out = x·s`, each product correctly rounded.
pub fn scale_f32(x: &[f32], s: f32, out: &mut [f32]) {
    let op = SendPtrOf::new(out.as_mut_ptr());
    par_blocks(x.len(), 1, PAR_MIN_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let o = unsafe { op.part(start, len) };
        wide(
            #[inline(always)]
            || {
                for (o, &v) in o.iter_mut().zip(&x[start..start + len]) {
                    *o = v * s;
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
    let o = SendPtrOf::new(out.as_mut_ptr());
    par_blocks(x.len(), 1, PAR_MIN_MAP, |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let dst = unsafe { o.part(start, len) };
        let src = &x[start..start + len];
        match op {
            UnaryOp::Log => {
                for (d, &v) in dst.iter_mut().zip(src) {
                    *d = UnaryOp::Log.apply(v);
                }
            }
            _ => wide(
                #[inline(always)]
                || {
                    for (d, &v) in dst.iter_mut().zip(src) {
                        *d = op.apply(v);
                    }
                },
            ),
        }
    });
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
