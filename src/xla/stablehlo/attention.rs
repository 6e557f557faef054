//! The lowerings of the fused causal multi-head attention ops on `[B, T, D]`
//! activations with `H` heads of width `dh = D/H` (src/tensor/attention/): heads are
//! split with a reshape to `[B, T, H, dh]` and a transpose to `[B, H, T, dh]`, the
//! per-head products are `stablehlo.dot_general` with batch axes (B, H), and the
//! weights are `softmax(mask(q·kᵀ·dh^−½, −1e9))` over the last axis — the chain the
//! fused CPU kernels compute in one pass, written out.

use super::lower::{softmax_of, Args, Lowered};
use super::nn::causal_mask;
use super::{Binary, DotDims, Function, Reduction, Value};
use crate::xla::stablehlo::TensorType;

/// `[B, T, D]` → `[B, H, T, dh]`.
fn heads(f: &mut Function, x: Value, h: usize) -> Value {
    let t = f.ty(x).dims.clone();
    let (b, n, d) = (t[0], t[1], t[2]);
    let r = f.reshape(x, &[b, n, h, d / h]);
    f.transpose(r, &[0, 2, 1, 3])
}

/// `[B, H, T, dh]` → `[B, T, D]`.
fn join(f: &mut Function, y: Value) -> Value {
    let t = f.ty(y).dims.clone();
    let (b, h, n, dh) = (t[0], t[1], t[2], t[3]);
    let r = f.transpose(y, &[0, 2, 1, 3]);
    f.reshape(r, &[b, n, h * dh])
}

/// A per-head product contracting axis `ca` of `a` with axis `cb` of `b` (both
/// `[B, H, …]`).
fn per_head(f: &mut Function, a: Value, ca: usize, b: Value, cb: usize) -> Value {
    let d = DotDims {
        lhs_batch: vec![0, 1],
        rhs_batch: vec![0, 1],
        lhs_contract: vec![ca],
        rhs_contract: vec![cb],
    };
    f.dot_general(a, b, &d)
}

/// Checks `q`, `k` (and `v`) are `[B, T, D]` of one type with `H | D`, `T, D > 0`;
/// returns `H` and the type.
fn check(
    f: &Function,
    a: &Args,
    tensors: &[usize],
    heads_at: usize,
) -> Result<(usize, TensorType), super::LowerError> {
    let t0 = a.ty(f, tensors[0])?;
    for &i in tensors {
        let t = a.ty(f, i)?;
        if t != t0 {
            return a.err(format!("{t} does not match {t0}"));
        }
    }
    if t0.rank() != 3 || t0.dims[1] == 0 || t0.dims[2] == 0 {
        return a.err(format!("needs [B, T, D] with T, D > 0, found {t0}"));
    }
    let h = a.index(heads_at, t0.dims[2] + 1, false)?;
    if h == 0 || !t0.dims[2].is_multiple_of(h) {
        return a.err(format!("{h} heads do not divide the width {}", t0.dims[2]));
    }
    Ok((h, t0))
}

/// The weights `P [B, H, T, T]` of `q`, `k`.
fn weights(f: &mut Function, q: Value, k: Value, h: usize) -> Value {
    let t = f.ty(q).clone();
    let dh = t.dims[2] / h;
    let (qh, kh) = (heads(f, q, h), heads(f, k, h));
    let s = per_head(f, qh, 3, kh, 3);
    let st = f.ty(s).clone();
    let scale = f.splat(t.elem, (dh as f64).powf(-0.5), &st.dims);
    let scaled = f.binary(Binary::Multiply, s, scale);
    let v = f.splat(t.elem, -1e9, &st.dims);
    let masked = causal_mask(f, scaled, v);
    softmax_of(f, masked, false)
}

/// `P · v` per head, joined to `[B, T, D]`.
fn apply(f: &mut Function, p: Value, v: Value) -> Value {
    let h = f.ty(p).dims[1];
    let vh = heads(f, v, h);
    let y = per_head(f, p, 3, vh, 2);
    join(f, y)
}

/// `q.attentio_pondera(k, H)`.
pub(super) fn pondera(f: &mut Function, a: &Args) -> Lowered {
    let (h, _) = check(f, a, &[0, 1], 2)?;
    Ok(vec![weights(f, a.tensor(0)?, a.tensor(1)?, h)])
}

/// The weights operand `p` at `at`: `[B, H, T, T]` for activations of type `x`.
fn check_weights(
    f: &Function,
    a: &Args,
    at: usize,
    x: &TensorType,
) -> Result<usize, super::LowerError> {
    let pt = a.ty(f, at)?;
    let n = x.dims[1];
    if pt.rank() != 4 || pt.dims[0] != x.dims[0] || pt.dims[2..] != [n, n] || pt.elem != x.elem {
        return a.err(format!("weights {pt} do not fit activations {x}"));
    }
    let h = pt.dims[1];
    if h == 0 || !x.dims[2].is_multiple_of(h) {
        return a.err(format!("{h} heads do not divide the width {}", x.dims[2]));
    }
    Ok(h)
}

/// `p.attentio_applica(v)`.
pub(super) fn applica(f: &mut Function, a: &Args) -> Lowered {
    let vt = a.ty(f, 1)?;
    if vt.rank() != 3 {
        return a.err(format!("needs [B, T, D] values, found {vt}"));
    }
    check_weights(f, a, 0, &vt)?;
    Ok(vec![apply(f, a.tensor(0)?, a.tensor(1)?)])
}

/// `q.attentio(k, v, H)`, and with `pair` the pair (attention, weights).
pub(super) fn attentio(f: &mut Function, a: &Args, pair: bool) -> Lowered {
    let (h, _) = check(f, a, &[0, 1, 2], 3)?;
    let p = weights(f, a.tensor(0)?, a.tensor(1)?, h);
    let y = apply(f, p, a.tensor(2)?);
    Ok(if pair { vec![y, p] } else { vec![y] })
}

/// `(∂P, ∂v)` from `∂y`: `∂P = ∂y_h · v_hᵀ`, `∂v_h = Pᵀ · ∂y_h`.
fn apply_backward(f: &mut Function, gy: Value, p: Value, v: Value) -> (Value, Value) {
    let h = f.ty(p).dims[1];
    let (gh, vh) = (heads(f, gy, h), heads(f, v, h));
    let dp = per_head(f, gh, 3, vh, 3);
    let dvh = per_head(f, p, 2, gh, 2);
    (dp, join(f, dvh))
}

/// `(∂q, ∂k)` from `∂P`: the causal softmax's VJP with the scale,
/// `∂S = dh^−½ · P ⊙ (∂P − rowsum(∂P ⊙ P))`, then `∂q_h = ∂S · k_h`,
/// `∂k_h = ∂Sᵀ · q_h`.
fn weights_backward(f: &mut Function, gp: Value, p: Value, q: Value, k: Value) -> (Value, Value) {
    let pt = f.ty(p).clone();
    let h = pt.dims[1];
    let dh = f.ty(q).dims[2] / h;
    let gpp = f.binary(Binary::Multiply, gp, p);
    let s = f.reduce(gpp, &[3], Reduction::Sum);
    let s = f.broadcast_in_dim(s, &[0, 1, 2], &pt.dims);
    let d = f.binary(Binary::Subtract, gp, s);
    let ds = f.binary(Binary::Multiply, p, d);
    let scale = f.splat(pt.elem, (dh as f64).powf(-0.5), &pt.dims);
    let ds = f.binary(Binary::Multiply, ds, scale);
    let (qh, kh) = (heads(f, q, h), heads(f, k, h));
    let dq = per_head(f, ds, 3, kh, 2);
    let dk = per_head(f, ds, 2, qh, 2);
    (join(f, dq), join(f, dk))
}

/// `g.retro_attentio_applica(p, v)` → (∂P, ∂v).
pub(super) fn retro_applica(f: &mut Function, a: &Args) -> Lowered {
    let vt = a.ty(f, 2)?;
    if vt.rank() != 3 || a.ty(f, 0)? != vt {
        return a.err(format!("needs ∂y and v of one [B, T, D] type, found {vt}"));
    }
    check_weights(f, a, 1, &vt)?;
    let (dp, dv) = apply_backward(f, a.tensor(0)?, a.tensor(1)?, a.tensor(2)?);
    Ok(vec![dp, dv])
}

/// `g.retro_attentio_pondera(p, q, k, H)` → (∂q, ∂k).
pub(super) fn retro_pondera(f: &mut Function, a: &Args) -> Lowered {
    let (h, qt) = check(f, a, &[2, 3], 4)?;
    if check_weights(f, a, 1, &qt)? != h || a.ty(f, 0)? != a.ty(f, 1)? {
        return a.err("∂P and the weights must be [B, H, T, T] of the given heads");
    }
    let (dq, dk) = weights_backward(f, a.tensor(0)?, a.tensor(1)?, a.tensor(2)?, a.tensor(3)?);
    Ok(vec![dq, dk])
}

/// `g.retro_attentio(p, q, k, v, H)` → (∂q, ∂k, ∂v).
pub(super) fn retro_attentio(f: &mut Function, a: &Args) -> Lowered {
    let (h, qt) = check(f, a, &[0, 2, 3, 4], 5)?;
    if check_weights(f, a, 1, &qt)? != h {
        return a.err("the weights' heads differ from the heads given");
    }
    let (p, q, k) = (a.tensor(1)?, a.tensor(2)?, a.tensor(3)?);
    let (dp, dv) = apply_backward(f, a.tensor(0)?, p, a.tensor(4)?);
    let (dq, dk) = weights_backward(f, dp, p, q, k);
    Ok(vec![dq, dk, dv])
}
