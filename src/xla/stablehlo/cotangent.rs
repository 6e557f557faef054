//! The lowerings of the cotangent helpers that move values between shapes:
//! `retro_ad_formam` (a broadcast's VJP: summed down to an operand's shape),
//! `retro_inpone` (a slice's VJP: placed into zeros), `retro_permute` (`permute`'s:
//! the inverse permutation), `retro_pars` (`concatena`'s: one operand's part), and
//! `retro_matmul` with its epilogues (`·`'s VJP for ranks the companion did not know
//! statically; the tracer knows them).

use super::lower::{broadcast_shapes, matmul, narrow, swap_last, Args, Lowered, Operand};
use super::{Binary, DotDims, Function, Reduction, Value};

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

/// `g.retro_permute(axes)`: g permuted back by the inverse of `axes` (output axis
/// `axes[i]` takes input axis i).
pub(super) fn retro_permute(f: &mut Function, a: &Args) -> Lowered {
    let g = a.tensor(0)?;
    let perm = a.permutation(1, f.ty(g).rank())?;
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    Ok(vec![f.transpose(g, &inv)])
}

/// `g.retro_pars(x, y, axis, which)`: the part of the cotangent g of
/// `x.concatena(y, axis)` that came from x (`which` 0: elements `[0, nx)` along the
/// axis) or from y (otherwise: `[nx, nx + ny)`), nx and ny the operands' extents there.
pub(super) fn retro_pars(f: &mut Function, a: &Args) -> Lowered {
    let (gt, xt, yt) = (a.ty(f, 0)?, a.ty(f, 1)?, a.ty(f, 2)?);
    let axis = a.index(3, gt.rank(), false)?;
    let first = match a.get(4)? {
        Operand::Int(w) => *w == 0,
        other => return a.err(format!("operand 4 must be a numerus, found {other:?}")),
    };
    let extent = |t: &super::TensorType| t.dims.get(axis).copied().unwrap_or(0);
    let (nx, ny) = (extent(&xt), extent(&yt));
    let (s, e) = if first { (0, nx) } else { (nx, nx + ny) };
    if e > gt.dims[axis] {
        return a.err(format!(
            "the cotangent {gt} has no elements [{s}, {e}) along axis {axis}"
        ));
    }
    Ok(vec![narrow(f, a.tensor(0)?, axis, s, e)])
}

/// `a.retro_matmul(b, g)` → (∂a, ∂b) of `a · b`: with vectors made matrices
/// (`[K]` → `[1, K]` on the left, `[K, 1]` on the right) and `g` reshaped to the
/// matrix product, `∂a = g · bᵀ` and `∂b = aᵀ · g`, each summed down to its
/// operand's (batch-broadcast) shape. `epilogue`: `retro_matmul_derivata` (∂a ⊙ d)
/// or `retro_matmul_adde` (r + ∂a), d or r operand 3.
pub(super) fn retro_matmul(f: &mut Function, a: &Args, epilogue: Option<Binary>) -> Lowered {
    let (at, bt, gt) = (a.ty(f, 0)?, a.ty(f, 1)?, a.ty(f, 2)?);
    if at.rank() == 0 || bt.rank() == 0 || at.elem != bt.elem || gt.elem != at.elem {
        return a.err(format!("{at} · {bt} with the cotangent {gt}"));
    }
    let (x, y) = (a.tensor(0)?, a.tensor(1)?);
    let a2 = if at.rank() == 1 {
        f.reshape(x, &[1, at.dims[0]])
    } else {
        x
    };
    let b2 = if bt.rank() == 1 {
        f.reshape(y, &[bt.dims[0], 1])
    } else {
        y
    };
    let (ad, bd) = (f.ty(a2).dims.clone(), f.ty(b2).dims.clone());
    let (ra, rb) = (ad.len(), bd.len());
    let Some(mut prod) = broadcast_shapes(&ad[..ra - 2], &bd[..rb - 2]) else {
        return a.err(format!("the batch axes of {at} and {bt} do not broadcast"));
    };
    prod.extend([ad[ra - 2], bd[rb - 1]]);
    let n: usize = prod.iter().product();
    if n != gt.numel() {
        return a.err(format!("the cotangent {gt} does not fit {at} · {bt}"));
    }
    let g2 = f.reshape(a.tensor(2)?, &prod);
    let bt2 = swap_last(f, a, b2)?;
    let da = matmul(f, a, g2, bt2)?;
    let db = if rb == 2 {
        // `b` a matrix: ∂b = Σ over every leading axis of aᵀ·g, one contraction
        // (not a batch of products summed afterwards).
        let lead: Vec<usize> = (0..ra - 1).collect();
        let d = DotDims {
            lhs_contract: lead.clone(),
            rhs_contract: lead,
            ..DotDims::default()
        };
        f.dot_general(a2, g2, &d)
    } else {
        let at2 = swap_last(f, a, a2)?;
        let db = matmul(f, a, at2, g2)?;
        sum_to_shape(f, a, db, &bd)?[0]
    };
    let da = sum_to_shape(f, a, da, &ad)?[0];
    let mut da = f.reshape(da, &at.dims);
    let db = f.reshape(db, &bt.dims);
    if let Some(op) = epilogue {
        let (e, et) = (a.tensor(3)?, a.ty(f, 3)?);
        let dat = f.ty(da).clone();
        let Some(dims) = broadcast_shapes(&dat.dims, &et.dims) else {
            return a.err(format!("{et} does not broadcast with ∂a {dat}"));
        };
        if dims != dat.dims || et.elem != dat.elem {
            return a.err(format!("{et} does not fit ∂a {dat}"));
        }
        let map: Vec<usize> = (dims.len() - et.rank()..dims.len()).collect();
        let eb = f.broadcast_in_dim(e, &map, &dims);
        da = match op {
            Binary::Add => f.binary(Binary::Add, eb, da),
            other => f.binary(other, da, eb),
        };
    }
    Ok(vec![da, db])
}
