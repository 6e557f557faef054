//! Shape operations: `forma` (reshape), `transpone`, `permuta`, `sectio`,
//! `angusta` (narrow), `concatena`, NumPy broadcasting of two shapes, and the
//! backward helpers of these ops (`transpone_ultimas`, the inverse permutation,
//! `retro_pars`, `retro_inpone`).
//!
//! The copies move elements without arithmetic, so each is one body generic over the
//! element type (elem.rs): an f64 tensor runs it on f64 (the code it always ran), an
//! f32 tensor on f32, the result of the operand's type. A `concatena` of an f32 and an
//! f64 tensor promotes the f32 one (exactly) and gives f64.

use super::elem::{widened, Elem, Sink};
use super::{checked_numel, fmt_shape, DType, TResult, Tensor, TensorError};

/// Strides of `shape` viewed inside the broadcast shape `out` (0 on
/// broadcast axes): how the element-wise kernels of both types
/// (elementwise.rs, elementwise_f32.rs) read a broadcast operand.
pub(in crate::tensor) fn broadcast_strides(shape: &[usize], out: &[usize]) -> Vec<usize> {
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

/// `x.forma(shape)`: same elements, new shape; the element count must match.
/// Shares the buffer (no copy).
pub fn reshape(x: &Tensor, shape: &[usize]) -> TResult<Tensor> {
    let n = checked_numel(shape)?;
    if n != x.numel() {
        return Err(TensorError::shape(format!(
            "forma: cannot reshape {} ({} elements) to {} ({n} elements)",
            fmt_shape(x.shape()),
            x.numel(),
            fmt_shape(shape)
        )));
    }
    Ok(Tensor::reshaped(x, shape))
}

/// `x.transpone()`: rank-2 `[r, c] → [c, r]`.
pub fn transpose(x: &Tensor) -> TResult<Tensor> {
    let &[r, c] = x.shape() else {
        return Err(TensorError::shape(format!(
            "transpone: needs a rank-2 tensor, found shape {}",
            fmt_shape(x.shape())
        )));
    };
    match x.dtype() {
        DType::F64 => transpose_of::<f64>(x, r, c),
        DType::F32 => transpose_of::<f32>(x, r, c),
    }
}

fn transpose_of<T: Elem>(x: &Tensor, r: usize, c: usize) -> TResult<Tensor> {
    let src = T::of(x);
    let mut out = T::buf(r * c)?;
    out.fill_to(r * c, T::ZERO);
    // Blocked so both sides stay in cache.
    const B: usize = 32;
    for i0 in (0..r).step_by(B) {
        for j0 in (0..c).step_by(B) {
            for i in i0..(i0 + B).min(r) {
                for j in j0..(j0 + B).min(c) {
                    out[j * r + i] = src[i * c + j];
                }
            }
        }
    }
    Ok(T::finish(&[c, r], out))
}

/// `x.permuta(axes)`: output axis `i` is input axis `axes[i]`; `axes` must be
/// a permutation of `0..rank`.
pub fn permute(x: &Tensor, axes: &[usize]) -> TResult<Tensor> {
    let rank = x.rank();
    let mut seen = vec![false; rank];
    let bad = || {
        TensorError::shape(format!(
            "permuta: {axes:?} is not a permutation of the {rank} axes of {}",
            fmt_shape(x.shape())
        ))
    };
    if axes.len() != rank {
        return Err(bad());
    }
    for &a in axes {
        if a >= rank || seen[a] {
            return Err(bad());
        }
        seen[a] = true;
    }
    if rank == 2 && axes == [1, 0] {
        return transpose(x);
    }
    match x.dtype() {
        DType::F64 => permute_of::<f64>(x, axes),
        DType::F32 => permute_of::<f32>(x, axes),
    }
}

/// [`permute`] of a checked permutation `axes` (not the rank-2 transpose).
fn permute_of<T: Elem>(x: &Tensor, axes: &[usize]) -> TResult<Tensor> {
    let rank = x.rank();
    let shape = x.shape();
    let mut in_strides = vec![1usize; rank];
    for i in (0..rank.saturating_sub(1)).rev() {
        in_strides[i] = in_strides[i + 1] * shape[i + 1];
    }
    let out_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
    let strides: Vec<usize> = axes.iter().map(|&a| in_strides[a]).collect();
    let n = x.numel();
    if n == 0 || rank == 0 {
        let mut out = T::buf(n)?;
        out.put_slice(T::of(x));
        return Ok(T::finish(&out_shape, out));
    }
    let src = T::of(x);
    let last = rank - 1;
    let (inner, inner_stride) = (out_shape[last], strides[last]);
    // Blocks of whole output runs (one run = the last axis) on the pool's threads;
    // each block finds its first run's source offset from its index.
    let out = T::build(n, inner, super::par::PAR_MIN_MAP, |start, dst| {
        let mut idx = vec![0usize; rank];
        let mut q = start / inner;
        let mut base = 0usize;
        for ax in (0..last).rev() {
            idx[ax] = q % out_shape[ax];
            q /= out_shape[ax];
            base += idx[ax] * strides[ax];
        }
        for run in dst.chunks_exact_mut(inner) {
            if inner_stride == 1 {
                // The last axis stays last (e.g. splitting heads [B,T,H,d] → [B,H,T,d]):
                // contiguous runs copy as slices.
                for (d, &v) in run.iter_mut().zip(&src[base..base + inner]) {
                    d.write(v);
                }
            } else {
                for (j, d) in run.iter_mut().enumerate() {
                    d.write(src[base + j * inner_stride]);
                }
            }
            // Advance the odometer over the outer axes.
            let mut ax = last;
            while ax > 0 {
                ax -= 1;
                idx[ax] += 1;
                base += strides[ax];
                if idx[ax] < out_shape[ax] {
                    break;
                }
                base -= strides[ax] * idx[ax];
                idx[ax] = 0;
            }
        }
    })?;
    Ok(T::finish(&out_shape, out))
}

/// `x.angusta(axis, a, b)`: indices `[a, b)` along `axis` (general narrow).
pub fn narrow(x: &Tensor, axis: usize, start: usize, end: usize) -> TResult<Tensor> {
    let shape = x.shape();
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "angusta: axis {axis} out of range for shape {}",
            fmt_shape(shape)
        )));
    }
    let d = shape[axis];
    if start > end || end > d {
        return Err(TensorError::index(format!(
            "angusta: range [{start}, {end}) out of range for axis {axis} of size {d}"
        )));
    }
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let mut out_shape = shape.to_vec();
    out_shape[axis] = end - start;
    match x.dtype() {
        DType::F64 => narrow_of::<f64>(x, &out_shape, (outer, d, inner), start, end),
        DType::F32 => narrow_of::<f32>(x, &out_shape, (outer, d, inner), start, end),
    }
}

/// [`narrow`] of checked bounds: `x` seen as `[outer, d, inner]` around the axis.
fn narrow_of<T: Elem>(
    x: &Tensor,
    out_shape: &[usize],
    (outer, d, inner): (usize, usize, usize),
    start: usize,
    end: usize,
) -> TResult<Tensor> {
    let mut out = T::buf(outer * (end - start) * inner)?;
    let src = T::of(x);
    for o in 0..outer {
        let base = (o * d + start) * inner;
        out.put_slice(&src[base..base + (end - start) * inner]);
    }
    Ok(T::finish(out_shape, out))
}

/// `x.sectio(a, b)`: rows `[a, b)` of axis 0.
pub fn slice_rows(x: &Tensor, start: usize, end: usize) -> TResult<Tensor> {
    if x.rank() == 0 {
        return Err(TensorError::shape("sectio: a rank-0 tensor has no rows"));
    }
    narrow(x, 0, start, end).map_err(|e| TensorError {
        message: e.message.replace("angusta", "sectio"),
        ..e
    })
}

/// Where a part's shape disagrees with the first part's off the joined axis.
fn concat_conflict(p: &[usize], first: &[usize], axis: usize) -> String {
    if p.len() != first.len() {
        return format!("rank {} against rank {}", p.len(), first.len());
    }
    let diffs: Vec<String> = p
        .iter()
        .zip(first)
        .enumerate()
        .filter(|&(i, (a, b))| i != axis && a != b)
        .map(|(i, (a, b))| format!("axis {i}: {a} against {b}"))
        .collect();
    diffs.join("; ")
}

/// `concatena(parts, axis)`: joins tensors of equal rank whose shapes agree
/// except along `axis`. At least one part.
pub fn concat(parts: &[&Tensor], axis: usize) -> TResult<Tensor> {
    let Some(first) = parts.first() else {
        return Err(TensorError::shape("concatena: no tensors to join"));
    };
    let rank = first.rank();
    if axis >= rank {
        return Err(TensorError::shape(format!(
            "concatena: axis {axis} out of range for shape {}",
            fmt_shape(first.shape())
        )));
    }
    let mut total = 0usize;
    for p in parts {
        let ok = p.rank() == rank
            && p.shape()
                .iter()
                .zip(first.shape())
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b);
        if !ok {
            return Err(TensorError::shape(format!(
                "concatena: shape {} does not fit {} along axis {axis} ({})",
                fmt_shape(p.shape()),
                fmt_shape(first.shape()),
                concat_conflict(p.shape(), first.shape(), axis)
            )));
        }
        total = total
            .checked_add(p.shape()[axis])
            .ok_or_else(|| TensorError::limit("concatena: result too large"))?;
    }
    let mut out_shape = first.shape().to_vec();
    out_shape[axis] = total;
    let n = checked_numel(&out_shape)?;
    let f32s = parts.iter().filter(|p| p.dtype() == DType::F32).count();
    if f32s == 0 {
        concat_of::<f64>(parts, axis, &out_shape, n)
    } else if f32s == parts.len() {
        concat_of::<f32>(parts, axis, &out_shape, n)
    } else {
        // Both types: the f32 parts widened (exactly), an f64 result.
        let wide: Vec<Tensor> = parts
            .iter()
            .map(|p| widened(p).map(std::borrow::Cow::into_owned))
            .collect::<TResult<_>>()?;
        let refs: Vec<&Tensor> = wide.iter().collect();
        concat_of::<f64>(&refs, axis, &out_shape, n)
    }
}

/// [`concat`] of checked parts of one element type into `n` elements of `out_shape`.
fn concat_of<T: Elem>(
    parts: &[&Tensor],
    axis: usize,
    out_shape: &[usize],
    n: usize,
) -> TResult<Tensor> {
    let outer: usize = out_shape[..axis].iter().product();
    let inner: usize = out_shape[axis + 1..].iter().product();
    let mut out = T::buf(n)?;
    for o in 0..outer {
        for p in parts {
            let w = p.shape()[axis] * inner;
            out.put_slice(&T::of(p)[o * w..(o + 1) * w]);
        }
    }
    Ok(T::finish(out_shape, out))
}

/// `angusta`/`sectio` VJP *(helper)*: places `g` at `[start, start + len)`
/// along `axis` of a zero tensor whose `axis` has size `full`.
pub fn pad_axis(g: &Tensor, axis: usize, start: usize, full: usize) -> TResult<Tensor> {
    let shape = g.shape();
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "pad: axis {axis} out of range for shape {}",
            fmt_shape(shape)
        )));
    }
    let len = shape[axis];
    if start.checked_add(len).is_none_or(|e| e > full) {
        return Err(TensorError::index(format!(
            "pad: [{start}, {start}+{len}) does not fit an axis of size {full}"
        )));
    }
    let mut out_shape = shape.to_vec();
    out_shape[axis] = full;
    let n = checked_numel(&out_shape)?;
    match g.dtype() {
        DType::F64 => pad_of::<f64>(g, axis, start, &out_shape, n),
        DType::F32 => pad_of::<f32>(g, axis, start, &out_shape, n),
    }
}

/// [`pad_axis`] of checked bounds into `n` elements of `out_shape`.
fn pad_of<T: Elem>(
    g: &Tensor,
    axis: usize,
    start: usize,
    out_shape: &[usize],
    n: usize,
) -> TResult<Tensor> {
    let shape = g.shape();
    let full = out_shape[axis];
    let mut out = T::zeros(n)?;
    let outer: usize = shape[..axis].iter().product();
    let inner: usize = shape[axis + 1..].iter().product();
    let w = shape[axis] * inner;
    let src = T::of(g);
    for o in 0..outer {
        let dst = (o * full + start) * inner;
        out[dst..dst + w].copy_from_slice(&src[o * w..(o + 1) * w]);
    }
    Ok(T::finish(out_shape, out))
}

/// `x.transpone_ultimas()`: the last two axes swapped (rank ≥ 2).
pub fn transpose_last(x: &Tensor) -> TResult<Tensor> {
    let r = x.rank();
    if r < 2 {
        return Err(TensorError::shape("transpone_ultimas: needs rank ≥ 2"));
    }
    let mut axes: Vec<usize> = (0..r).collect();
    axes.swap(r - 2, r - 1);
    permute(x, &axes)
}

/// The inverse of the permutation `axes` (output axis `axes[i]` takes input axis i):
/// what `retro_permute` permutes the cotangent by. An axis past the end is a `Shape`
/// error.
pub fn inverse_permutation(axes: &[usize]) -> TResult<Vec<usize>> {
    let mut inv = vec![0; axes.len()];
    for (i, &ax) in axes.iter().enumerate() {
        match inv.get_mut(ax) {
            Some(slot) => *slot = i,
            None => {
                return Err(TensorError::shape(format!(
                    "`permute`: axis {ax} out of range"
                )))
            }
        }
    }
    Ok(inv)
}

/// `g.retro_pars(x, y, axis, which)`: the part of the cotangent `g` of
/// `concatena([x, y], axis)` that belongs to `x` (`first`) or to `y`.
pub fn concat_part(
    g: &Tensor,
    x: &Tensor,
    y: &Tensor,
    axis: usize,
    first: bool,
) -> TResult<Tensor> {
    let nx = x.shape().get(axis).copied().unwrap_or(0);
    let ny = y.shape().get(axis).copied().unwrap_or(0);
    let (s, e) = if first { (0, nx) } else { (nx, nx + ny) };
    narrow(g, axis, s, e)
}

/// `g.retro_inpone(axis, start, like)`: the cotangent of a narrow (`angusta`,
/// `sectio`) of `like`: `g` placed at `start` along `axis` of zeros of `like`'s size
/// there ([`pad_axis`]).
pub fn narrow_backward(g: &Tensor, axis: usize, start: usize, like: &Tensor) -> TResult<Tensor> {
    let full = like.shape().get(axis).copied().unwrap_or(0);
    pad_axis(g, axis, start, full)
}
