//! Elementwise kernels: binary ops with NumPy broadcasting (`addita`,
//! `subtrahe`, `multiplica`, `divide`), `addita_bias`, and unary maps (`neg`,
//! `scala`, `reciproca`, `exp`, `log`, `sqrt`, `tanh`, `relu`, `gelu`).
//!
//! Each kernel makes one allocation for its result and runs a tight loop the
//! compiler vectorises; the costly transcendental maps run row-parallel above
//! a size threshold (results never depend on the thread count).

use super::tanh::{map_tanh_cr, tanh_exp, TanhMap};
use std::mem::MaybeUninit;

use super::{
    alloc, checked_numel, fmt_shape, threads, Out, TResult, Tensor, TensorError, PAR_MIN_CHEAP,
};

/// NumPy broadcasting: align shapes at the right; each pair of sizes must be
/// equal or one of them 1.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> TResult<Vec<usize>> {
    let rank = a.len().max(b.len());
    let mut out = vec![0usize; rank];
    for i in 0..rank {
        let da = if i + a.len() >= rank {
            a[i + a.len() - rank]
        } else {
            1
        };
        let db = if i + b.len() >= rank {
            b[i + b.len() - rank]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(TensorError::shape(super::broadcast_message(a, b)));
        };
    }
    Ok(out)
}

/// Strides of `shape` viewed inside the broadcast shape `out` (0 on
/// broadcast axes).
fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let rank = out.len();
    let mut strides = vec![0usize; rank];
    let mut s = 1usize;
    for i in (0..shape.len()).rev() {
        let oi = i + rank - shape.len();
        strides[oi] = if shape[i] == 1 && out[oi] != 1 { 0 } else { s };
        s *= shape[i];
    }
    strides
}

/// Elements from which a cheap map (≈ 1 ns per element, memory-bound) is split
/// between threads: below it the hand-off to the pool costs more than it saves.
pub(super) const PAR_MIN_MAP: usize = 1 << 16;

/// A result buffer's base pointer handed to the pool's threads, each of which
/// writes its own disjoint part.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub(super) *mut f64);
// SAFETY: hands disjoint ranges of one result buffer to the pool's threads.
unsafe impl Send for SendPtr {}
// SAFETY: as above; the pointer is only copied.
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// Wraps a buffer's base pointer.
    pub(crate) fn new(p: *mut f64) -> SendPtr {
        SendPtr(p)
    }
    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    pub(crate) fn get(self) -> *mut f64 {
        self.0
    }
}

/// An `n`-element result built by `fill(start, dst)`, which must write every slot of
/// `dst` with elements `start..start + dst.len()`; on several threads in blocks of
/// whole `unit`s (rows) when `n ≥ PAR_MIN_MAP`. Each element depends only on its
/// index, so the result never depends on the thread count.
#[inline(always)]
pub(crate) fn build<F>(n: usize, unit: usize, fill: F) -> TResult<Out>
where
    F: Fn(usize, &mut [MaybeUninit<f64>]) + Sync,
{
    build_from(n, unit, PAR_MIN_MAP, fill)
}

/// [`build`], threaded from `min_par` elements (for results whose elements each
/// take many operations).
#[inline(always)]
pub(crate) fn build_from<F>(n: usize, unit: usize, min_par: usize, fill: F) -> TResult<Out>
where
    F: Fn(usize, &mut [MaybeUninit<f64>]) + Sync,
{
    let mut out = alloc(n)?;
    let unit = unit.max(1);
    let t = if n >= min_par {
        threads().min(n / unit)
    } else {
        1
    };
    // SAFETY: every slot is written below: the blocks cover 0..n and `fill`
    // writes each slot of its block.
    let base = SendPtr(unsafe { out.assume_filled() });
    let per = if t <= 1 {
        n
    } else {
        n.div_ceil(unit).div_ceil(t) * unit
    };
    let block = |i: usize| {
        let start = i * per;
        let len = per.min(n - start);
        // SAFETY: [start, start + len) lies inside the n-slot buffer and no other
        // block covers it; MaybeUninit<f64> has f64's layout.
        let dst = unsafe {
            std::slice::from_raw_parts_mut(base.get().add(start) as *mut MaybeUninit<f64>, len)
        };
        fill(start, dst);
    };
    if n == 0 {
        return Ok(out);
    }
    if t <= 1 {
        block(0);
    } else {
        super::pool::run_blocks(n.div_ceil(per), &block);
    }
    Ok(out)
}

#[inline(always)]
fn binary<F: Fn(f64, f64) -> f64 + Copy + Sync>(
    name: &str,
    a: &Tensor,
    b: &Tensor,
    f: F,
) -> TResult<Tensor> {
    if a.same_shape(b) {
        let (ad, bd) = (a.data(), b.data());
        let out = build(ad.len(), 1, |start, dst| {
            let src = ad[start..].iter().zip(&bd[start..]);
            for (d, (&x, &y)) in dst.iter_mut().zip(src) {
                d.write(f(x, y));
            }
        })?;
        return Ok(Tensor::shaped_like(a, out));
    }
    let shape = broadcast_shapes(a.shape(), b.shape()).map_err(|e| TensorError {
        message: format!("{name}: {}", e.message),
        ..e
    })?;
    let n = checked_numel(&shape)?;
    let mut out = alloc(n)?;
    if b.numel() == 1 && a.numel() == n {
        let y = b.data()[0];
        out.extend(a.data().iter().map(|&x| f(x, y)));
    } else if a.numel() == 1 && b.numel() == n {
        let x = a.data()[0];
        out.extend(b.data().iter().map(|&y| f(x, y)));
    } else if n > 0 {
        let rank = shape.len();
        let sa = broadcast_strides(a.shape(), &shape);
        let sb = broadcast_strides(b.shape(), &shape);
        let (ad, bd) = (a.data(), b.data());
        let inner = shape[rank - 1];
        let (ia, ib) = (sa[rank - 1], sb[rank - 1]);
        let mut idx = vec![0usize; rank];
        let (mut oa, mut ob) = (0usize, 0usize);
        loop {
            match (ia, ib) {
                (1, 1) => out.extend(
                    ad[oa..oa + inner]
                        .iter()
                        .zip(&bd[ob..ob + inner])
                        .map(|(&x, &y)| f(x, y)),
                ),
                (0, 1) => {
                    let x = ad[oa];
                    out.extend(bd[ob..ob + inner].iter().map(|&y| f(x, y)));
                }
                (1, 0) => {
                    let y = bd[ob];
                    out.extend(ad[oa..oa + inner].iter().map(|&x| f(x, y)));
                }
                _ => {
                    let (x, y) = (ad[oa], bd[ob]);
                    out.extend(std::iter::repeat_n(f(x, y), inner));
                }
            }
            let mut ax = rank - 1;
            loop {
                if ax == 0 {
                    return Ok(Tensor::from_parts(shape, out));
                }
                ax -= 1;
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
    }
    Ok(Tensor::from_parts(shape, out))
}

/// `a.addita(b)`: `a + b` with broadcasting.
pub fn add(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("addita", a, b, |x, y| x + y)
}

/// `a.subtrahe(b)`: `a − b` with broadcasting.
pub fn sub(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("subtrahe", a, b, |x, y| x - y)
}

/// `a.multiplica(b)` / `a ⊙ b`: `a · b` elementwise with broadcasting.
pub fn mul(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    binary("multiplica", a, b, |x, y| x * y)
}

/// `a.divide(b)`: checked quotient; any zero (±0) or non-finite element of
/// `b` is a `Domain` error.
pub fn div(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    if let Some(&bad) = b.data().iter().find(|v| **v == 0.0 || !v.is_finite()) {
        return Err(TensorError::domain(format!(
            "divide: divisor element {bad}"
        )));
    }
    binary("divide", a, b, |x, y| x / y)
}

/// Why bias `b` does not fit the last axis of `x` (error wording).
fn bias_conflict(x: &[usize], b: &[usize]) -> String {
    match (x.last(), b) {
        (None, _) => "a rank-0 tensor has no last axis".to_string(),
        (Some(&c), &[bc]) => format!(
            "the last axis, axis {}, has {c} elements, the bias {bc}",
            x.len() - 1
        ),
        (Some(&c), _) => format!(
            "the bias must have rank 1 and {c} elements, found rank {}",
            b.len()
        ),
    }
}

/// `x.addita_bias(b)`: `x[…, C] + b[C]`, the bias added to every last-axis row.
pub fn add_bias(x: &Tensor, b: &Tensor) -> TResult<Tensor> {
    let c = match (x.shape().last(), b.shape()) {
        (Some(&c), &[bc]) if c == bc => c,
        _ => {
            return Err(TensorError::shape(format!(
                "addita_bias: bias {} does not fit the last axis of {} ({})",
                fmt_shape(b.shape()),
                fmt_shape(x.shape()),
                bias_conflict(x.shape(), b.shape())
            )))
        }
    };
    let (xd, bd) = (x.data(), b.data());
    let out = build(if c > 0 { xd.len() } else { 0 }, c, |start, dst| {
        let rows = xd[start..start + dst.len()].chunks_exact(c);
        for (drow, row) in dst.chunks_exact_mut(c).zip(rows) {
            for (d, (&v, &w)) in drow.iter_mut().zip(row.iter().zip(bd)) {
                d.write(v + w);
            }
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// `x.lineare(w, b)`: `(x · w).addita_bias(b)` with the bias added in place to the
/// product's fresh buffer while it is still in cache (one result buffer instead of
/// two; `v + w` per element, the same bits as the two ops).
pub fn linear(x: &Tensor, w: &Tensor, b: &Tensor) -> TResult<Tensor> {
    let mut y = super::matmul(x, w)?;
    let c = match (y.shape().last(), b.shape()) {
        (Some(&c), &[bc]) if c == bc => c,
        _ => {
            return Err(TensorError::shape(format!(
                "lineare: bias {} does not fit the last axis of the product {} ({})",
                fmt_shape(b.shape()),
                fmt_shape(y.shape()),
                bias_conflict(y.shape(), b.shape())
            )))
        }
    };
    if c == 0 {
        return Ok(y);
    }
    let bd = b.data();
    let yd = y.data_mut();
    let rows = yd.len() / c;
    let t = if yd.len() >= PAR_MIN_MAP {
        threads().min(rows)
    } else {
        1
    };
    if t <= 1 {
        for row in yd.chunks_exact_mut(c) {
            for (v, &w) in row.iter_mut().zip(bd) {
                *v += w;
            }
        }
    } else {
        let per = rows.div_ceil(t) * c;
        let blocks: Vec<&mut [f64]> = yd.chunks_mut(per).collect();
        super::pool::run_each(blocks, &|_, block: &mut [f64]| {
            for row in block.chunks_exact_mut(c) {
                for (v, &w) in row.iter_mut().zip(bd) {
                    *v += w;
                }
            }
        });
    }
    Ok(y)
}

#[inline(always)]
fn unary<F: Fn(f64) -> f64 + Copy + Sync>(x: &Tensor, f: F) -> TResult<Tensor> {
    let xd = x.data();
    let out = build(xd.len(), 1, |start, dst| {
        for (d, &v) in dst.iter_mut().zip(&xd[start..]) {
            d.write(f(v));
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// Like `unary` for costly maps: row-parallel above a size threshold.
fn unary_par<F: Fn(f64) -> f64 + Copy + Sync>(x: &Tensor, f: F) -> TResult<Tensor> {
    map_slices(x, |src, dst| {
        for (d, &s) in dst.iter_mut().zip(src) {
            *d = f(s);
        }
    })
}

/// A result of x's shape written by `f(src, dst)` over blocks of x's elements (with
/// `dst` the block's result elements), on several threads from `PAR_MIN_CHEAP`
/// elements. Each block's result is zero-filled by its own thread before `f` runs,
/// where it is in cache anyway — not the whole buffer up front on one thread.
fn map_slices<F: Fn(&[f64], &mut [f64]) + Sync>(x: &Tensor, f: F) -> TResult<Tensor> {
    let xd = x.data();
    let out = build_from(x.numel(), 1, PAR_MIN_CHEAP, |start, dst| {
        for d in dst.iter_mut() {
            d.write(0.0);
        }
        // SAFETY: every element of dst was written just above; MaybeUninit<f64> has
        // f64's layout.
        let dst = unsafe { &mut *(dst as *mut [MaybeUninit<f64>] as *mut [f64]) };
        f(&xd[start..start + dst.len()], dst);
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// `x.neg()`: `−x`.
pub fn neg(x: &Tensor) -> TResult<Tensor> {
    unary(x, |v| -v)
}

/// `x.scala(f)`: `x · f`.
pub fn scale(x: &Tensor, factor: f64) -> TResult<Tensor> {
    unary(x, |v| v * factor)
}

/// `x.addita(y)` for a number `y`: `x + y` per element.
pub fn add_scalar(x: &Tensor, y: f64) -> TResult<Tensor> {
    unary(x, |v| v + y)
}

/// `x.subtrahe(y)` for a number `y`: `x − y` per element.
pub fn sub_scalar(x: &Tensor, y: f64) -> TResult<Tensor> {
    unary(x, |v| v - y)
}

/// `x.reciproca()`: `1 / x`; a zero or non-finite element is a `Domain` error.
pub fn reciprocal(x: &Tensor) -> TResult<Tensor> {
    if let Some(&bad) = x.data().iter().find(|v| **v == 0.0 || !v.is_finite()) {
        return Err(TensorError::domain(format!("reciproca: element {bad}")));
    }
    unary(x, |v| 1.0 / v)
}

/// `x.exp()`: `eˣ`, correctly rounded (`exp_cr`; glibc's `exp`, which the oracles
/// matched, gives the same bits on every reference point).
pub fn exp(x: &Tensor) -> TResult<Tensor> {
    map_slices(x, super::exp_cr_map)
}

/// `x.log()`: natural log; an element ≤ 0 or NaN is a `Domain` error.
pub fn log(x: &Tensor) -> TResult<Tensor> {
    if let Some(&bad) = x.data().iter().find(|v| v.is_nan() || **v <= 0.0) {
        return Err(TensorError::domain(format!(
            "log: element {bad} is not positive"
        )));
    }
    unary_par(x, f64::ln)
}

/// `x.sqrt()`: square root (correctly rounded); an element < 0 or NaN is a
/// `Domain` error (−0.0 gives −0.0).
pub fn sqrt(x: &Tensor) -> TResult<Tensor> {
    if let Some(&bad) = x.data().iter().find(|v| v.is_nan() || **v < 0.0) {
        return Err(TensorError::domain(format!(
            "sqrt: element {bad} is negative"
        )));
    }
    unary(x, f64::sqrt)
}

/// `x.tanh()`: the correctly rounded hyperbolic tangent
/// ([`tanh_cr`](super::tanh_cr)).
pub fn tanh(x: &Tensor) -> TResult<Tensor> {
    tanh_map(x, TanhMap::Tanh)
}

fn tanh_map(x: &Tensor, mode: TanhMap) -> TResult<Tensor> {
    map_slices(x, |src, dst| map_tanh_cr(src, dst, mode))
}

/// tanh through the exp identity ([`tanh_exp`]): `1 − 2/(e^{2t}+1)` for
/// t ≥ 0, `2/(e^{−2t}+1) − 1` for t < 0.
pub fn tanh_exp_identity(x: &Tensor) -> TResult<Tensor> {
    unary_par(x, tanh_exp)
}

/// `x.relu()`: `x` where `x > 0` (NaN stays NaN), else `0.0`.
pub fn relu(x: &Tensor) -> TResult<Tensor> {
    unary(x, |v| if v > 0.0 || v.is_nan() { v } else { 0.0 })
}

/// GELU constants: c = √(2/π) computed in f64, β = 0.044715.
pub const GELU_C: f64 = 0.7978845608028654;
pub const GELU_BETA: f64 = 0.044715;

#[inline(always)]
pub(crate) fn gelu_with(x: f64, tanh_fn: impl Fn(f64) -> f64) -> f64 {
    let u = GELU_C * (x + GELU_BETA * ((x * x) * x));
    let t = tanh_fn(u);
    (0.5 * x) * (1.0 + t)
}

/// `x.gelu()`: `u = c·(x + β·((x·x)·x))`, `t = tanh(u)` (correctly rounded),
/// `y = (0.5·x)·(1 + t)`.
pub fn gelu(x: &Tensor) -> TResult<Tensor> {
    tanh_map(x, TanhMap::Gelu)
}

/// `x.gelu_cum_derivata()`: GELU and its derivative in one pass, `(y, d)` with
/// `t = tanh(u)` (correctly rounded, `u = c·(x + β·((x·x)·x))`), `y = (0.5·x)·(1 + t)`
/// (the bits of `x.gelu()`) and `d = 0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du`,
/// `du = c·(1 + (3β)·(x·x))` — the factor [`gelu_vjp`] multiplies the cotangent by. A
/// companion's forward sweep computes GELU this way and keeps `d`, so its backward is
/// `g ⊙ d` ([`gelu_backward_derivata`]): no tanh again, and only `g` and `d` read.
pub fn gelu_cum_derivata(x: &Tensor) -> TResult<(Tensor, Tensor)> {
    /// Elements whose tangents go through one vectorised map call (in L1).
    const CHUNK: usize = 256;
    let xd = x.data();
    let mut dout = alloc(x.numel())?;
    // SAFETY: every slot is written below (the blocks of `build_from` cover them all).
    let dbase = SendPtr(unsafe { dout.assume_filled() });
    #[cfg(target_arch = "x86_64")]
    let wide = std::arch::is_x86_feature_detected!("avx512f");
    let y = build_from(x.numel(), 1, PAR_MIN_CHEAP, |start, dst| {
        // SAFETY: this block's slots of `dout` are written by this call alone.
        let dd = unsafe { std::slice::from_raw_parts_mut(dbase.get().add(start), dst.len()) };
        let xs = &xd[start..start + dst.len()];
        let mut t = [0.0; CHUNK];
        for ((xc, yc), dc) in xs
            .chunks(CHUNK)
            .zip(dst.chunks_mut(CHUNK))
            .zip(dd.chunks_mut(CHUNK))
        {
            let t = &mut t[..xc.len()];
            map_tanh_cr(xc, t, TanhMap::GeluTanh);
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX-512F (checked above).
                unsafe { gelu_parts_avx512(xc, t, yc, dc) };
                continue;
            }
            gelu_parts(xc, t, yc, dc);
        }
    })?;
    Ok((Tensor::shaped_like(x, y), Tensor::shaped_like(x, dout)))
}

/// GELU `y` and its derivative `d` from x and the tangent t, element by element.
#[inline(always)]
fn gelu_parts(xs: &[f64], ts: &[f64], ys: &mut [MaybeUninit<f64>], ds: &mut [f64]) {
    for (((&xv, &tv), yo), d) in xs.iter().zip(ts).zip(ys).zip(ds) {
        yo.write((0.5 * xv) * (1.0 + tv));
        *d = gelu_derivative(xv, tv);
    }
}

/// [`gelu_parts`] compiled for AVX-512 (wider vectors, the same operations per
/// element, no FMA contraction).
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gelu_parts_avx512(xs: &[f64], ts: &[f64], ys: &mut [MaybeUninit<f64>], ds: &mut [f64]) {
    gelu_parts(xs, ts, ys, ds)
}

/// GELU's derivative at `x` given its tangent `t = tanh(u)`:
/// `0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du`, `du = c·(1 + (3β)·(x·x))`.
#[inline(always)]
fn gelu_derivative(x: f64, t: f64) -> f64 {
    let du = GELU_C * (1.0 + (3.0 * GELU_BETA) * (x * x));
    0.5 * (1.0 + t) + ((0.5 * x) * (1.0 - t * t)) * du
}

/// GELU's VJP at `x` for the cotangent `g`, given its tangent `t = tanh(u)`:
/// `g·(0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du)` ([`gelu_derivative`] times g).
#[inline(always)]
pub(crate) fn gelu_vjp(g: f64, x: f64, t: f64) -> f64 {
    g * gelu_derivative(x, t)
}

/// `g.retro_gelu_derivata(d)`: `g ⊙ d` for the derivative `d` that
/// [`gelu_cum_derivata`] gave — the bits of `retro_gelu(g, x)`. `g` must have `d`'s
/// shape.
pub fn gelu_backward_derivata(g: &Tensor, d: &Tensor) -> TResult<Tensor> {
    if g.shape() != d.shape() {
        return Err(TensorError::shape(format!(
            "retro_gelu_derivata: cotangent {} does not match the derivative {} ({})",
            fmt_shape(g.shape()),
            fmt_shape(d.shape()),
            super::shape_difference(g.shape(), d.shape())
        )));
    }
    mul(g, d)
}

/// GELU with tanh through the exp identity (the bert shim's recipe).
pub fn gelu_exp_identity(x: &Tensor) -> TResult<Tensor> {
    unary_par(x, |v| gelu_with(v, tanh_exp))
}

#[cfg(test)]
mod tests {
    #[test]
    fn gelu_c_is_sqrt_two_over_pi() {
        assert_eq!(super::GELU_C, (2.0f64 / std::f64::consts::PI).sqrt());
    }
}
