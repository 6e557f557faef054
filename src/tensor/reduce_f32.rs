//! Reductions for f32 tensors (issue 21): the whole-tensor sum, mean and sum of
//! squares (the global gradient norm of clipping), the axis sums and means, the
//! broadcasting VJP `summa_ad_formam` and the axis reductions' VJP `retro_dilata` —
//! and the fixed-order f64 accumulators every f32 row kernel (softmax/row_f32.rs,
//! norm/layernorm_f32.rs) sums with.
//!
//! Accumulation: f32 terms are summed in **f64**, in a fixed order that depends only on
//! the length: eight lanes (term i into lane i mod 8, each lane in index order), then
//! the lanes as ((0+4) + (2+6)) + ((1+5) + (3+7)). No result depends on the thread
//! count (whole-tensor sums run on one thread; axis sums split over output positions,
//! each summed alone) or on the CPU (the same operations at every vector width).
//!
//! Error bounds, for n terms `tᵢ` (each exact in f64: an f32 or a product of two f32):
//! the f64 sum is within `(n − 1)·2⁻⁵³·Σ|tᵢ|` of the exact sum, so the f32 result is
//! within `½ ulp + n·2⁻⁵³·Σ|tᵢ|` of it — correctly rounded unless the exact sum lies
//! that close to a midpoint (for n ≤ 2²⁰ and no heavy cancellation, always within one
//! ulp). The tests check `|ŷ − S| ≤ ulp(S)/2 + n·2⁻⁵³·Σ|tᵢ|` against a compensated f64
//! reference.

use std::mem::MaybeUninit;

use super::elem::{as_slots, f32_tensor, filled_f32};
use super::par_f32::{par_blocks, wide, SendPtrOf};
use super::shape::broadcast_shapes;
use super::{fmt_shape, TResult, Tensor, TensorError};

/// The lanes of a fixed-order sum, combined in their fixed tree (module docs).
#[inline(always)]
fn combine(a: [f64; 8]) -> f64 {
    ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]))
}

/// `Σ term(xᵢ)` in f64 in the fixed lane order (module docs).
#[inline(always)]
pub(in crate::tensor) fn lane_sum_by<T: Copy>(xs: &[T], term: impl Fn(T) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let chunks = xs.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            *a += term(v);
        }
    }
    for (a, &v) in acc.iter_mut().zip(rest) {
        *a += term(v);
    }
    combine(acc)
}

/// `Σ term(aᵢ, bᵢ)` over two slices of one length, in the fixed lane order.
#[inline(always)]
pub(in crate::tensor) fn lane_sum2_by<A: Copy, B: Copy>(
    xs: &[A],
    ys: &[B],
    term: impl Fn(A, B) -> f64,
) -> f64 {
    let mut acc = [0.0f64; 8];
    let n = xs.len().min(ys.len());
    let (xs, ys) = (&xs[..n], &ys[..n]);
    let full = n / 8 * 8;
    for (cx, cy) in xs[..full].chunks_exact(8).zip(ys[..full].chunks_exact(8)) {
        for ((a, &x), &y) in acc.iter_mut().zip(cx).zip(cy) {
            *a += term(x, y);
        }
    }
    for ((a, &x), &y) in acc.iter_mut().zip(&xs[full..]).zip(&ys[full..]) {
        *a += term(x, y);
    }
    combine(acc)
}

/// `Σ term(aᵢ, bᵢ, cᵢ)` over three slices of one length, in the fixed lane order.
#[inline(always)]
pub(in crate::tensor) fn lane_sum3_by<A: Copy, B: Copy, C: Copy>(
    xs: &[A],
    ys: &[B],
    zs: &[C],
    term: impl Fn(A, B, C) -> f64,
) -> f64 {
    let mut acc = [0.0f64; 8];
    let n = xs.len().min(ys.len()).min(zs.len());
    let (xs, ys, zs) = (&xs[..n], &ys[..n], &zs[..n]);
    let full = n / 8 * 8;
    let chunks = xs[..full]
        .chunks_exact(8)
        .zip(ys[..full].chunks_exact(8))
        .zip(zs[..full].chunks_exact(8));
    for ((cx, cy), cz) in chunks {
        for (((a, &x), &y), &z) in acc.iter_mut().zip(cx).zip(cy).zip(cz) {
            *a += term(x, y, z);
        }
    }
    let rest = xs[full..].iter().zip(&ys[full..]).zip(&zs[full..]);
    for (a, ((&x, &y), &z)) in acc.iter_mut().zip(rest) {
        *a += term(x, y, z);
    }
    combine(acc)
}

/// `Σ xᵢ` of f32 values in f64 (fixed order).
#[inline(always)]
pub(in crate::tensor) fn lane_sum_f32(xs: &[f32]) -> f64 {
    lane_sum_by(xs, |v| v as f64)
}

/// `Σ xᵢ` of f64 values (fixed order).
#[inline(always)]
pub(in crate::tensor) fn lane_sum_f64(xs: &[f64]) -> f64 {
    lane_sum_by(xs, |v| v)
}

/// `Σ x` of an f32 tensor's elements in f64 (`summa`; round with `as f32` for the
/// f32 result).
pub fn sum_f32(x: &[f32]) -> f64 {
    wide(
        #[inline(always)]
        || lane_sum_f32(x),
    )
}

/// `Σ x²` in f64 (each square exact), fixed order: a leaf's share of the global
/// gradient norm `√(Σ over leaves)` of `tonde_normam` / `norma_gradientum`.
pub fn sum_squares_f32(x: &[f32]) -> f64 {
    wide(
        #[inline(always)]
        || {
            lane_sum_by(x, |v| {
                let v = v as f64;
                v * v
            })
        },
    )
}

/// `media`: the f64 sum divided by the count, rounded once (`None` for no elements, a
/// `Shape` error at the caller).
pub fn mean_f32(x: &[f32]) -> Option<f32> {
    if x.is_empty() {
        return None;
    }
    Some((sum_f32(x) / x.len() as f64) as f32)
}

/// Output positions of an axis fold from which it is split between threads.
const PAR_MIN_FOLD: usize = 1 << 15;

/// `summa_axis` / `media_axis` on a row-major f32 tensor seen as `[outer, d, inner]`
/// (the axis in the middle): `out[o·inner + i] = Σₖ x[o, k, i]` in f64, k in index
/// order from the first slice, times `scale` (1, or 1/d for the mean) in f64, rounded
/// once. `out` has `outer·inner` elements; d = 0 gives zeros.
pub fn sum_axis_f32(x: &[f32], outer: usize, d: usize, inner: usize, scale: f64, out: &mut [f32]) {
    sum_axis_into(x, outer, d, inner, as_slots(out), move |a| {
        (a * scale) as f32
    })
}

/// [`sum_axis_f32`] into slots to write, each position's f64 sum finished by `fin`
/// (d = 0: `fin(0.0)`).
#[inline(always)]
fn sum_axis_into<F: Fn(f64) -> f32 + Copy + Sync>(
    x: &[f32],
    outer: usize,
    d: usize,
    inner: usize,
    out: &mut [MaybeUninit<f32>],
    fin: F,
) {
    let n = outer * inner;
    debug_assert_eq!(out.len(), n);
    debug_assert_eq!(x.len(), outer * d * inner);
    if d == 0 {
        for o in out.iter_mut() {
            o.write(fin(0.0));
        }
        return;
    }
    let op = SendPtrOf::new(out.as_mut_ptr());
    let min_par = PAR_MIN_FOLD.div_ceil(d);
    par_blocks(n, 1, min_par, |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let dst = unsafe { op.part(start, len) };
        wide(
            #[inline(always)]
            || fold_block(x, d, inner, start, dst, fin),
        )
    });
}

/// Output positions `start..start + dst.len()` of [`sum_axis_f32`], a run of inner
/// positions side by side (vectorised; each position's sum in order).
#[inline(always)]
fn fold_block<F: Fn(f64) -> f32>(
    x: &[f32],
    d: usize,
    inner: usize,
    start: usize,
    dst: &mut [MaybeUninit<f32>],
    fin: F,
) {
    let end = start + dst.len();
    let mut pos = start;
    let mut acc: Vec<f64> = Vec::new();
    while pos < end {
        let (o, i0) = (pos / inner, pos % inner);
        let i1 = inner.min(i0 + (end - pos));
        let block = &x[o * d * inner..(o + 1) * d * inner];
        acc.clear();
        acc.resize(i1 - i0, 0.0);
        for (a, &v) in acc.iter_mut().zip(&block[i0..i1]) {
            *a = v as f64;
        }
        for k in 1..d {
            let row = &block[k * inner + i0..k * inner + i1];
            for (a, &v) in acc.iter_mut().zip(row) {
                *a += v as f64;
            }
        }
        for (o, &a) in dst[pos - start..pos - start + (i1 - i0)]
            .iter_mut()
            .zip(&acc)
        {
            o.write(fin(a));
        }
        pos += i1 - i0;
    }
}

/// `maximum_axis` on a row-major f32 tensor seen as `[outer, d, inner]` (d ≥ 1): the
/// first slice, then `max(acc, x[o, k, i])` for k in index order, a NaN taken over
/// (as the f64 fold). Exact: the result is one of the elements.
#[inline(always)]
fn max_axis_into(x: &[f32], d: usize, inner: usize, out: &mut [MaybeUninit<f32>]) {
    let op = SendPtrOf::new(out.as_mut_ptr());
    par_blocks(out.len(), 1, PAR_MIN_FOLD.div_ceil(d), |start, len| {
        // SAFETY: [start, start + len) lies inside `out`, no other block covers it.
        let dst = unsafe { op.part(start, len) };
        wide(
            #[inline(always)]
            || {
                let end = start + len;
                let mut pos = start;
                while pos < end {
                    let (o, i0) = (pos / inner, pos % inner);
                    let i1 = inner.min(i0 + (end - pos));
                    let block = &x[o * d * inner..(o + 1) * d * inner];
                    let acc = &mut dst[pos - start..pos - start + (i1 - i0)];
                    for (a, &v) in acc.iter_mut().zip(&block[i0..i1]) {
                        a.write(v);
                    }
                    // SAFETY: every slot of `acc` was written just above.
                    let acc = unsafe { &mut *(acc as *mut [MaybeUninit<f32>] as *mut [f32]) };
                    for k in 1..d {
                        let row = &block[k * inner + i0..k * inner + i1];
                        for (a, &v) in acc.iter_mut().zip(row) {
                            if v > *a || v.is_nan() {
                                *a = v;
                            }
                        }
                    }
                    pos += i1 - i0;
                }
            },
        )
    });
}

/// `(outer, d, inner)` of `shape` around `axis`, or a `Shape` error.
pub fn split_axis(name: &str, shape: &[usize], axis: usize) -> TResult<(usize, usize, usize)> {
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "{name}: axis {axis} out of range for shape {}",
            fmt_shape(shape)
        )));
    }
    Ok((
        shape[..axis].iter().product(),
        shape[axis],
        shape[axis + 1..].iter().product(),
    ))
}

/// `g.summa_ad_formam(shape)` for f32: the broadcast result `g` (shape `gs`) summed back
/// to `shape` → the reduced elements (row-major, `shape`'s element count). Like the f64
/// `sum_to_shape`, but in one pass: every output element is the sum, in f64 and in
/// row-major order of `g`, of the elements of `g` that broadcast from it, rounded once
/// (the f64 op sums one axis at a time, rounding between axes).
pub fn sum_to_shape_f32(g: &[f32], gs: &[usize], shape: &[usize]) -> TResult<Vec<f32>> {
    match broadcast_shapes(shape, gs) {
        Ok(b) if b == gs => {}
        _ => {
            return Err(TensorError::shape(format!(
                "summa_ad_formam: {} does not broadcast to {}",
                fmt_shape(shape),
                fmt_shape(gs)
            )))
        }
    }
    let n: usize = shape.iter().product();
    let mut acc = vec![0.0f64; n];
    if g.is_empty() {
        return Ok(vec![0.0; n]);
    }
    // The common case of a bias gradient: `shape` is the last axes of `gs` (leading
    // axes summed away): each output a column sum down the rows, rows in order.
    let lead = gs.len() - shape.len();
    if shape == &gs[lead..] {
        if n > 0 {
            wide(
                #[inline(always)]
                || {
                    for row in g.chunks_exact(n) {
                        for (a, &v) in acc.iter_mut().zip(row) {
                            *a += v as f64;
                        }
                    }
                },
            );
        }
        return Ok(acc.into_iter().map(|a| a as f32).collect());
    }
    // General case: strides of `shape` inside `gs` (0 on broadcast axes), a
    // row-major walk of g.
    let rank = gs.len();
    let mut strides = vec![0usize; rank];
    let mut s = 1usize;
    for i in (0..shape.len()).rev() {
        let oi = i + lead;
        strides[oi] = if shape[i] == 1 && gs[oi] != 1 { 0 } else { s };
        s *= shape[i];
    }
    let mut idx = vec![0usize; rank];
    let mut off = 0usize;
    for &v in g {
        acc[off] += v as f64;
        for ax in (0..rank).rev() {
            idx[ax] += 1;
            off += strides[ax];
            if idx[ax] < gs[ax] {
                break;
            }
            off -= strides[ax] * idx[ax];
            idx[ax] = 0;
        }
    }
    Ok(acc.into_iter().map(|a| a as f32).collect())
}

/// `g.retro_dilata(like, axis, mean)` for f32: the cotangent `g` of an axis sum (or
/// mean over d elements: times 1/d, in f64, rounded once) broadcast back along the axis
/// of a `[outer, d, inner]` operand; `out` has `outer·d·inner` elements.
pub fn sum_axis_backward_f32(
    g: &[f32],
    outer: usize,
    d: usize,
    inner: usize,
    mean: bool,
    out: &mut [f32],
) {
    sum_axis_backward_into(g, outer, d, inner, mean, as_slots(out))
}

/// [`sum_axis_backward_f32`] into slots to write.
fn sum_axis_backward_into(
    g: &[f32],
    outer: usize,
    d: usize,
    inner: usize,
    mean: bool,
    out: &mut [MaybeUninit<f32>],
) {
    debug_assert_eq!(g.len(), outer * inner);
    let inv = if mean { 1.0 / d as f64 } else { 1.0 };
    if inner == 0 || d == 0 {
        return;
    }
    for (o, block) in out.chunks_exact_mut(d * inner).enumerate() {
        let gr = &g[o * inner..(o + 1) * inner];
        for slice in block.chunks_exact_mut(inner) {
            for (s, &v) in slice.iter_mut().zip(gr) {
                s.write(if mean { (v as f64 * inv) as f32 } else { v });
            }
        }
    }
}

// ---- the f32 arms of reduce.rs's Tensor-level entries (shapes checked there) ----

/// `summa_axis` (`mean`: `media_axis`, the f64 sum divided by d) of an f32 tensor seen
/// as `[outer, d, inner]`, each result the f64 sum in index order rounded once (the
/// f64 op's order: the same value the f64 kernel gives on the widened tensor).
pub(in crate::tensor) fn sum_axis_t32(
    x: &Tensor,
    (outer, d, inner): (usize, usize, usize),
    out_shape: &[usize],
    mean: bool,
) -> TResult<Tensor> {
    let xd = x.data32();
    let out = filled_f32(outer * inner, |dst| {
        if mean {
            let n = d as f64;
            sum_axis_into(xd, outer, d, inner, dst, move |a| (a / n) as f32)
        } else {
            sum_axis_into(xd, outer, d, inner, dst, |a| a as f32)
        }
    })?;
    Ok(f32_tensor(out_shape, out))
}

/// `maximum_axis` of an f32 tensor seen as `[outer, d, inner]`, d ≥ 1.
pub(in crate::tensor) fn max_axis_t32(
    x: &Tensor,
    (outer, d, inner): (usize, usize, usize),
    out_shape: &[usize],
) -> TResult<Tensor> {
    let xd = x.data32();
    let out = filled_f32(outer * inner, |dst| max_axis_into(xd, d, inner, dst))?;
    Ok(f32_tensor(out_shape, out))
}

/// `summa_ad_formam` of an f32 cotangent to a `shape` the caller has checked.
pub(in crate::tensor) fn sum_to_shape_t32(g: &Tensor, shape: &[usize]) -> TResult<Tensor> {
    let v = sum_to_shape_f32(g.data32(), g.shape(), shape)?;
    Ok(f32_tensor(shape, v))
}

/// `retro_dilata` of an f32 cotangent `g` (checked: `outer·inner` elements) to `shape`.
pub(in crate::tensor) fn sum_axis_backward_t32(
    g: &Tensor,
    shape: &[usize],
    (outer, d, inner): (usize, usize, usize),
    mean: bool,
) -> TResult<Tensor> {
    let n = outer * d * inner;
    let out = filled_f32(n, |dst| {
        sum_axis_backward_into(g.data32(), outer, d, inner, mean, dst)
    })?;
    Ok(f32_tensor(shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{set_threads, SplitMix64};

    /// Σ of f64 terms by Neumaier's compensated summation (error ≤ 2⁻⁵²·|S| +
    /// n²·2⁻¹⁰⁶·Σ|t|): the reference the f64-accumulated sums are checked against.
    fn compensated(ts: impl Iterator<Item = f64>) -> (f64, f64) {
        let (mut s, mut c, mut abs) = (0.0f64, 0.0f64, 0.0f64);
        for t in ts {
            let u = s + t;
            c += if s.abs() >= t.abs() {
                (s - u) + t
            } else {
                (t - u) + s
            };
            s = u;
            abs += t.abs();
        }
        (s + c, abs)
    }

    fn ulp(y: f32) -> f64 {
        let a = y.abs();
        (f32::from_bits(a.to_bits() + 1) as f64 - a as f64).max(f32::from_bits(1) as f64)
    }

    fn f32s(seed: u64, n: usize, scale: f64) -> Vec<f32> {
        let mut r = SplitMix64::new(seed);
        (0..n)
            .map(|_| ((r.uniform() - 0.3) * scale) as f32)
            .collect()
    }

    /// Sums, means and sums of squares within `½ ulp + n·2⁻⁵³·Σ|t|` of the
    /// compensated reference, at lengths around the lane width and large; an f32
    /// accumulator (error ~n·2⁻²⁴) would fail at n = 100 000.
    #[test]
    fn whole_sums_within_the_bound() {
        for n in [1usize, 7, 8, 9, 63, 1000, 100_000] {
            let x = f32s(n as u64, n, 10.0);
            let (s, abs) = compensated(x.iter().map(|&v| v as f64));
            let got = sum_f32(&x) as f32;
            let tol = ulp(s as f32) / 2.0 + n as f64 * 2f64.powi(-53) * abs;
            assert!((got as f64 - s).abs() <= tol, "n = {n}: {got} vs {s}");
            let (q, qa) = compensated(x.iter().map(|&v| (v as f64) * (v as f64)));
            let got = sum_squares_f32(&x) as f32;
            let tol = ulp(q as f32) / 2.0 + n as f64 * 2f64.powi(-53) * qa;
            assert!((got as f64 - q).abs() <= tol, "n = {n}: {got} vs {q}");
            let m = mean_f32(&x).unwrap();
            let tol = ulp((s / n as f64) as f32) + n as f64 * 2f64.powi(-53) * abs / n as f64;
            assert!((m as f64 - s / n as f64).abs() <= tol);
        }
        assert_eq!(mean_f32(&[]), None);
        // Cancellation: 1e8 + 1 − 1e8 in f32 terms sums to 1 (exact in f64).
        assert_eq!(sum_f32(&[1e8, 1.0, -1e8]), 1.0);
    }

    /// Axis sums and means of a [5, 300, 70] tensor along each axis, on one and two
    /// threads: the same bits, and within the bound of the compensated sum.
    #[test]
    fn axis_sums_within_the_bound_at_any_thread_count() {
        let shape = [5usize, 300, 70];
        let x = f32s(3, shape.iter().product(), 4.0);
        for axis in 0..3 {
            let (outer, d, inner) = split_axis("t", &shape, axis).unwrap();
            for mean in [false, true] {
                let scale = if mean { 1.0 / d as f64 } else { 1.0 };
                let mut a = vec![0.0f32; outer * inner];
                let mut b = vec![0.0f32; outer * inner];
                set_threads(1);
                sum_axis_f32(&x, outer, d, inner, scale, &mut a);
                set_threads(2);
                sum_axis_f32(&x, outer, d, inner, scale, &mut b);
                set_threads(0);
                assert_eq!(a, b, "axis {axis}");
                for o in 0..outer {
                    for i in 0..inner {
                        let terms = (0..d).map(|k| x[(o * d + k) * inner + i] as f64);
                        let (s, abs) = compensated(terms);
                        let (s, abs) = (s * scale, abs * scale);
                        let got = a[o * inner + i] as f64;
                        let tol = ulp(s as f32) / 2.0 + (d + 1) as f64 * 2f64.powi(-53) * abs;
                        assert!((got - s).abs() <= tol, "axis {axis} ({o}, {i})");
                    }
                }
            }
        }
    }

    /// `sum_to_shape_f32` against a direct definition (every element of g added into
    /// the output element it broadcasts from), for trailing, leading-1 and middle-1
    /// target shapes; a shape that does not broadcast is an error.
    #[test]
    fn sum_to_shape_adds_what_broadcast_from_each_element() {
        let gs = [3usize, 4, 5];
        let g = f32s(9, 60, 2.0);
        for shape in [
            vec![5usize],
            vec![4, 5],
            vec![1, 5],
            vec![4, 1],
            vec![3, 1, 5],
            vec![1],
        ] {
            let got = sum_to_shape_f32(&g, &gs, &shape).unwrap();
            let lead = gs.len() - shape.len();
            let mut want = vec![0.0f64; shape.iter().product()];
            for (flat, &v) in g.iter().enumerate() {
                let idx = [flat / 20, (flat / 5) % 4, flat % 5];
                let mut off = 0;
                for (k, &s) in shape.iter().enumerate() {
                    off = off * s + if s == 1 { 0 } else { idx[k + lead] };
                }
                want[off] += v as f64;
            }
            let want: Vec<f32> = want.into_iter().map(|w| w as f32).collect();
            assert_eq!(got, want, "{shape:?}");
        }
        assert!(sum_to_shape_f32(&g, &gs, &[3]).is_err());
        let mut out = vec![0.0f32; 60];
        sum_axis_backward_f32(&g[..15], 3, 4, 5, true, &mut out);
        assert_eq!(out[5 + 2], (g[2] as f64 / 4.0) as f32);
        assert_eq!(out[20 * 2 + 5 * 3 + 4], (g[14] as f64 / 4.0) as f32);
    }
}
