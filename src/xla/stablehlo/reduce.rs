//! The lowerings that find or undo a reduction along one axis: `argmax` (the index of
//! the first maximum of each last-axis row), and the reductions' cotangents
//! `retro_dilata` (`summa_axis`' and `media_axis`' VJP: g spread back along the
//! reduced axis, ÷ n for a mean) and `retro_maximum` (`maximum_axis`' VJP: g sent to
//! the first arg-max of each reduced run) — as docs/ops.md defines them, with
//! `stablehlo.iota` positions, `compare` + `select` and a `minimum` reduction for
//! "the first".

use super::lower::{Args, Lowered, Operand};
use super::{Compare, ElementType, Function, LowerError, Reduction, TensorType, Value};

/// The position along `axis` of the first maximum of each run of `x` (the axis
/// removed), in x's element type; where a run holds a NaN, the first NaN. A run of
/// `n` elements gives a position in `[0, n)`. (The NaN is looked for on its own:
/// the CPU plugin's `maximum` reduction skips NaN rather than propagating it.)
fn first_max(f: &mut Function, x: Value, axis: usize) -> Value {
    let xt = f.ty(x).clone();
    let rest: Vec<usize> = (0..xt.rank()).filter(|&i| i != axis).collect();
    let m = f.reduce(x, &[axis], Reduction::Max);
    let m = f.broadcast_in_dim(m, &rest, &xt.dims);
    let at = f.iota(xt.elem, &xt.dims, axis);
    let past = f.splat(xt.elem, xt.dims[axis] as f64, &xt.dims);
    let at_max = f.select_if(x, Compare::Eq, m, at, past);
    let first_max = f.reduce(at_max, &[axis], Reduction::Min);
    // NaN is the one value unequal to itself.
    let at_nan = f.select_if(x, Compare::Ne, x, at, past);
    let first_nan = f.reduce(at_nan, &[axis], Reduction::Min);
    let none = f.splat(xt.elem, xt.dims[axis] as f64, &f.ty(first_nan).dims.clone());
    f.select_if(none, Compare::Gt, first_nan, first_nan, first_max)
}

/// `x.argmax()`: the index of the first maximum of every last-axis row (the first
/// NaN if the row has one), as a tensor of x's element type and shape without the
/// last axis.
pub(super) fn argmax(f: &mut Function, a: &Args) -> Lowered {
    let xt = a.ty(f, 0)?;
    let Some(&c) = xt.dims.last() else {
        return a.err("a rank-0 tensor has no axis");
    };
    if c == 0 {
        return a.err(format!("the last axis of {xt} is empty"));
    }
    Ok(vec![first_max(f, a.tensor(0)?, xt.rank() - 1)])
}

/// A reduction's cotangent (operand 0, a tensor or a number) against the reduced
/// tensor `x` (operand 1) and `axis` (operand 2): checked to hold one element per
/// run along the axis and returned in the reduced shape (x's without the axis) with
/// the axis and the element type of the result — a number takes x's type, and an
/// f32 tensor meeting an f64 one is widened (the native promotion) when `promote`.
fn reduced_cotangent(
    f: &mut Function,
    a: &Args,
    promote: bool,
) -> Result<(Value, TensorType, usize, ElementType), LowerError> {
    let xt = a.ty(f, 1)?;
    let axis = a.index(2, xt.rank(), false)?;
    let (g, elem) = match a.get(0)? {
        Operand::Num(v) => (f.constant(xt.elem, *v), xt.elem),
        Operand::Int(n) => (f.constant(xt.elem, *n as f64), xt.elem),
        _ => {
            let g = a.tensor(0)?;
            let ge = f.ty(g).elem;
            let elem = match (ge, xt.elem) {
                (ElementType::F32, ElementType::F32) => ElementType::F32,
                _ if !promote => ge,
                _ => ElementType::F64,
            };
            (g, elem)
        }
    };
    let mut reduced = xt.dims.clone();
    reduced.remove(axis);
    let gt = f.ty(g).clone();
    if gt.numel() != reduced.iter().product::<usize>() {
        return a.err(format!(
            "the cotangent {gt} does not hold one element per run of {xt} along axis {axis}"
        ));
    }
    let g = f.convert(g, elem);
    Ok((f.reshape(g, &reduced), xt, axis, elem))
}

/// `g.retro_dilata(x, axis, mean)`: g (one element per run along `axis`) repeated
/// along the axis to x's shape, divided by the axis' extent n when `mean`. The
/// result has g's element type (x's for a number g).
pub(super) fn retro_dilata(f: &mut Function, a: &Args) -> Lowered {
    let (g, xt, axis, elem) = reduced_cotangent(f, a, false)?;
    let mean = a.flag(3)?;
    let rest: Vec<usize> = (0..xt.rank()).filter(|&i| i != axis).collect();
    let spread = f.broadcast_in_dim(g, &rest, &xt.dims);
    if !mean || xt.numel() == 0 {
        return Ok(vec![spread]);
    }
    let n = f.splat(elem, xt.dims[axis] as f64, &xt.dims);
    Ok(vec![f.binary(super::Binary::Divide, spread, n)])
}

/// `g.retro_maximum(x, axis, keep)`: zeros of x's shape with each element of g
/// (one per run along `axis`, whether the axis was kept or not) at the first
/// maximum of its run (a run holding NaN: at its first NaN, the run's maximum).
pub(super) fn retro_maximum(f: &mut Function, a: &Args) -> Lowered {
    let (g, xt, axis, elem) = reduced_cotangent(f, a, true)?;
    let zero = f.splat(elem, 0.0, &xt.dims);
    if xt.numel() == 0 {
        return Ok(vec![zero]);
    }
    let x = a.tensor(1)?;
    let x = f.convert(x, elem);
    let rest: Vec<usize> = (0..xt.rank()).filter(|&i| i != axis).collect();
    let first = first_max(f, x, axis);
    let first = f.broadcast_in_dim(first, &rest, &xt.dims);
    let at = f.iota(elem, &xt.dims, axis);
    let spread = f.broadcast_in_dim(g, &rest, &xt.dims);
    Ok(vec![f.select_if(at, Compare::Eq, first, spread, zero)])
}
