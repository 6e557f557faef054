//! The lowerings of the cotangent helpers that move values between shapes:
//! `retro_ad_formam` (a broadcast's VJP: summed down to an operand's shape) and
//! `retro_inpone` (a slice's VJP: placed into zeros).

use super::lower::{Args, Lowered};
use super::{Function, Reduction, Value};

/// `g` summed down to `dims` (the broadcast VJP, `sum_to_shape`): the leading axes
/// `g` has beyond `dims` and the axes where `dims` has extent 1 are summed.
pub(super) fn sum_to_shape(f: &mut Function, a: &Args, g: Value, dims: &[usize]) -> Lowered {
    let gd = f.ty(g).dims.clone();
    let Some(lead) = gd.len().checked_sub(dims.len()) else {
        return a.err(format!("{gd:?} does not sum down to {dims:?}"));
    };
    let mut axes = Vec::new();
    for (i, &e) in gd.iter().enumerate() {
        let fits = i >= lead && (dims[i - lead] == e || dims[i - lead] == 1);
        if i < lead || (fits && dims[i - lead] == 1 && e != 1) {
            axes.push(i);
        } else if !fits {
            return a.err(format!("{gd:?} does not sum down to {dims:?}"));
        }
    }
    let r = if axes.is_empty() {
        g
    } else {
        f.reduce(g, &axes, Reduction::Sum)
    };
    Ok(vec![f.reshape(r, dims)])
}

/// `g.retro_inpone(axis, start, x)`: g placed at `start` along `axis` in zeros of
/// x's shape (zeros concatenated before and after it).
pub(super) fn retro_inpone(f: &mut Function, a: &Args) -> Lowered {
    let (gt, xt) = (a.ty(f, 0)?, a.ty(f, 3)?);
    let axis = a.index(1, xt.rank(), false)?;
    let fits = gt.rank() == xt.rank()
        && gt.elem == xt.elem
        && (0..xt.rank()).all(|i| i == axis || gt.dims[i] == xt.dims[i]);
    let room = xt.dims[axis].checked_sub(gt.dims.get(axis).copied().unwrap_or(0));
    let (true, Some(room)) = (fits, room) else {
        return a.err(format!("{gt} does not fit into {xt} along axis {axis}"));
    };
    let start = a.index(2, room, true)?;
    let mut r = a.tensor(0)?;
    for (before, n) in [(true, start), (false, room - start)] {
        if n == 0 {
            continue;
        }
        let mut dims = xt.dims.clone();
        dims[axis] = n;
        let z = f.splat(xt.elem, 0.0, &dims);
        r = if before {
            f.concatenate(z, r, axis)
        } else {
            f.concatenate(r, z, axis)
        };
    }
    Ok(vec![r])
}
