//! The lowerings of the neural-network ops (dispatch.rs sends them here): the
//! activations and their VJPs, the causal mask and softmax, the softmax VJPs (the
//! causal one included), LayerNorm and RMSNorm with their VJPs, the embedding gather,
//! the cross-entropy against class ids (through one-hot rows: `iota == id`) and
//! against probability targets, with their VJPs — each written out as its definition in docs/ops.md and
//! src/tensor/ (the GELU constants are the native kernel's, `tensor::GELU_C` and
//! `GELU_BETA`), not as faber's fused CPU kernels.

use super::lower::{filled, softmax_of, Args, Lowered};
use super::{Binary, Compare, DotDims, Function, Reduction, TensorType, Unary, Value};
use crate::tensor::{GELU_BETA, GELU_C};

/// `c` as a tensor of `x`'s type.
fn like(f: &mut Function, x: Value, c: f64) -> Value {
    let t = f.ty(x).clone();
    f.splat(t.elem, c, &t.dims)
}

/// The sums of `x`'s last-axis rows, broadcast back over the rows.
fn row_sums(f: &mut Function, x: Value) -> Value {
    let t = f.ty(x).clone();
    let last = t.rank() - 1;
    let s = f.reduce(x, &[last], Reduction::Sum);
    f.broadcast_in_dim(s, &(0..last).collect::<Vec<_>>(), &t.dims)
}

/// The tensor operand `i`, of rank ≥ `min_rank`.
fn tensor_of_rank(
    a: &Args,
    f: &Function,
    i: usize,
    min_rank: usize,
) -> Result<Value, super::LowerError> {
    let t = a.ty(f, i)?;
    if t.rank() < min_rank {
        return a.err(format!("needs rank ≥ {min_rank}, found rank {}", t.rank()));
    }
    a.tensor(i)
}

/// GELU's tanh argument `u = c·(x + β·x³)` and `t = tanh u` (or, `per_exp`, by the
/// identity `1 − 2/(e^{2u} + 1)`).
fn gelu_tanh(f: &mut Function, x: Value, per_exp: bool) -> Value {
    let x3 = {
        let xx = f.binary(Binary::Multiply, x, x);
        f.binary(Binary::Multiply, xx, x)
    };
    let beta = like(f, x, GELU_BETA);
    let bx3 = f.binary(Binary::Multiply, beta, x3);
    let inner = f.binary(Binary::Add, x, bx3);
    let c = like(f, x, GELU_C);
    let u = f.binary(Binary::Multiply, c, inner);
    if per_exp {
        tanh_by_exp(f, u)
    } else {
        f.unary(Unary::Tanh, u)
    }
}

/// `1 − 2/(e^{2x} + 1)`.
fn tanh_by_exp(f: &mut Function, x: Value) -> Value {
    let two = like(f, x, 2.0);
    let one = like(f, x, 1.0);
    let x2 = f.binary(Binary::Multiply, two, x);
    let e = f.unary(Unary::Exponential, x2);
    let d = f.binary(Binary::Add, e, one);
    let q = f.binary(Binary::Divide, two, d);
    f.binary(Binary::Subtract, one, q)
}

/// `(0.5·x)·(1 + t)`.
fn gelu_from(f: &mut Function, x: Value, t: Value) -> Value {
    let half = like(f, x, 0.5);
    let one = like(f, x, 1.0);
    let hx = f.binary(Binary::Multiply, half, x);
    let s = f.binary(Binary::Add, one, t);
    f.binary(Binary::Multiply, hx, s)
}

/// `gelu` (`per_exp`: `gelu_per_exp`).
pub(super) fn gelu(f: &mut Function, a: &Args, per_exp: bool) -> Lowered {
    let x = a.tensor(0)?;
    let t = gelu_tanh(f, x, per_exp);
    Ok(vec![gelu_from(f, x, t)])
}

/// `tanh_per_exp`.
pub(super) fn tanh_per_exp(f: &mut Function, a: &Args) -> Lowered {
    let x = a.tensor(0)?;
    Ok(vec![tanh_by_exp(f, x)])
}

/// gelu′(x) = ½(1 + t) + ½x·(1 − t²)·c·(1 + 3βx²), t as in [`gelu_tanh`].
fn gelu_derivative(f: &mut Function, x: Value, t: Value) -> Value {
    let (half, one) = (like(f, x, 0.5), like(f, x, 1.0));
    let one_t = f.binary(Binary::Add, one, t);
    let left = f.binary(Binary::Multiply, half, one_t);
    let tt = f.binary(Binary::Multiply, t, t);
    let sech2 = f.binary(Binary::Subtract, one, tt);
    let xx = f.binary(Binary::Multiply, x, x);
    let b3 = like(f, x, 3.0 * GELU_BETA);
    let b3xx = f.binary(Binary::Multiply, b3, xx);
    let du = f.binary(Binary::Add, one, b3xx);
    let c = like(f, x, GELU_C);
    let du = f.binary(Binary::Multiply, c, du);
    let hx = f.binary(Binary::Multiply, half, x);
    let right = f.binary(Binary::Multiply, hx, sech2);
    let right = f.binary(Binary::Multiply, right, du);
    f.binary(Binary::Add, left, right)
}

/// `g.retro_gelu(x)` (`per_exp`: `retro_gelu_per_exp`): g ⊙ gelu′(x).
pub(super) fn retro_gelu(f: &mut Function, a: &Args, per_exp: bool) -> Lowered {
    let (g, x) = (a.tensor(0)?, a.tensor(1)?);
    if f.ty(g) != f.ty(x) {
        return a.err(format!("{} and {} differ", f.ty(g), f.ty(x)));
    }
    let t = gelu_tanh(f, x, per_exp);
    let d = gelu_derivative(f, x, t);
    Ok(vec![f.binary(Binary::Multiply, g, d)])
}

/// `x.gelu_cum_derivata()`: the pair (gelu(x), gelu′(x)) from one tanh.
pub(super) fn gelu_cum_derivata(f: &mut Function, a: &Args) -> Lowered {
    let x = a.tensor(0)?;
    let t = gelu_tanh(f, x, false);
    let y = gelu_from(f, x, t);
    let d = gelu_derivative(f, x, t);
    Ok(vec![y, d])
}

/// `silu`: x·σ(x).
pub(super) fn silu(f: &mut Function, a: &Args) -> Lowered {
    let x = a.tensor(0)?;
    let s = f.unary(Unary::Logistic, x);
    Ok(vec![f.binary(Binary::Multiply, x, s)])
}

/// `g.retro_silu(x)`: g ⊙ σ(x)·(1 + x·(1 − σ(x))).
pub(super) fn retro_silu(f: &mut Function, a: &Args) -> Lowered {
    let (g, x) = (a.tensor(0)?, a.tensor(1)?);
    if f.ty(g) != f.ty(x) {
        return a.err(format!("{} and {} differ", f.ty(g), f.ty(x)));
    }
    let s = f.unary(Unary::Logistic, x);
    let one = like(f, x, 1.0);
    let oms = f.binary(Binary::Subtract, one, s);
    let xo = f.binary(Binary::Multiply, x, oms);
    let inner = f.binary(Binary::Add, one, xo);
    let d = f.binary(Binary::Multiply, s, inner);
    Ok(vec![f.binary(Binary::Multiply, g, d)])
}

/// `g.retro_softmax(y)`: y ⊙ (g − rowsum(g ⊙ y)).
pub(super) fn retro_softmax(f: &mut Function, a: &Args) -> Lowered {
    let (g, y) = (tensor_of_rank(a, f, 0, 1)?, a.tensor(1)?);
    if f.ty(g) != f.ty(y) {
        return a.err(format!("{} and {} differ", f.ty(g), f.ty(y)));
    }
    let gy = f.binary(Binary::Multiply, g, y);
    let s = row_sums(f, gy);
    let d = f.binary(Binary::Subtract, g, s);
    Ok(vec![f.binary(Binary::Multiply, y, d)])
}

/// `g.retro_log_softmax(x)`: g − softmax(x) ⊙ rowsum(g).
pub(super) fn retro_log_softmax(f: &mut Function, a: &Args, softmax: Value) -> Lowered {
    let g = tensor_of_rank(a, f, 0, 1)?;
    if f.ty(g) != f.ty(softmax) {
        return a.err(format!("{} and {} differ", f.ty(g), f.ty(softmax)));
    }
    let s = row_sums(f, g);
    let p = f.binary(Binary::Multiply, softmax, s);
    Ok(vec![f.binary(Binary::Subtract, g, p)])
}

/// `x` with every entry above the diagonal of its last two axes (column > row) set
/// to `v` (a tensor of x's type).
pub(super) fn causal_mask(f: &mut Function, x: Value, v: Value) -> Value {
    let t = f.ty(x).clone();
    let r = t.rank();
    let rows = f.iota(t.elem, &t.dims, r - 2);
    let cols = f.iota(t.elem, &t.dims, r - 1);
    f.select_if(cols, Compare::Gt, rows, v, x)
}

/// `x.larva_causalis(v)`.
pub(super) fn larva_causalis(f: &mut Function, a: &Args) -> Lowered {
    let x = tensor_of_rank(a, f, 0, 2)?;
    let v = like(f, x, a.num(1)?);
    Ok(vec![causal_mask(f, x, v)])
}

/// LayerNorm's checks: `x` (operand 0) of rank ≥ 1 with a non-empty last axis that
/// `axis` (operand `axis_at`) names, and the rank-1 operands `rows` of its width.
/// Returns x's type.
fn norm_operands(
    f: &Function,
    a: &Args,
    x_at: usize,
    axis_at: usize,
    rows: &[usize],
) -> Result<TensorType, super::LowerError> {
    let xt = a.ty(f, x_at)?;
    tensor_of_rank(a, f, x_at, 1)?;
    let axis = a.index(axis_at, xt.rank(), false)?;
    let d = xt.dims[xt.rank() - 1];
    let fits = rows
        .iter()
        .map(|&i| a.ty(f, i))
        .collect::<Result<Vec<_>, _>>()?
        .iter()
        .all(|t| t.dims == [d] && t.elem == xt.elem);
    if axis + 1 != xt.rank() || d == 0 || !fits {
        return a.err(format!(
            "needs the last, non-empty axis of {xt} and rows of shape [{d}]"
        ));
    }
    Ok(xt)
}

/// x̂ = (x − mean)·inv and inv = 1/√(var + ε) (broadcast over the rows), the
/// population variance of each last-axis row.
fn ln_stats(f: &mut Function, x: Value, eps: f64) -> (Value, Value) {
    let d = *f.ty(x).dims.last().expect("rank ≥ 1");
    let n = like(f, x, d as f64);
    let sum = row_sums(f, x);
    let mean = f.binary(Binary::Divide, sum, n);
    let c = f.binary(Binary::Subtract, x, mean);
    let cc = f.binary(Binary::Multiply, c, c);
    let ss = row_sums(f, cc);
    let var = f.binary(Binary::Divide, ss, n);
    let one = like(f, x, 1.0);
    let inv = normalise(f, one, var, eps);
    (f.binary(Binary::Multiply, c, inv), inv)
}

/// LayerNorm of `x` over its last axis (`axis` must name it), then `⊙ γ + β`.
pub(super) fn laminatio(f: &mut Function, a: &Args) -> Lowered {
    let xt = norm_operands(f, a, 0, 1, &[3, 4])?;
    let (x, eps, gamma, beta) = (a.tensor(0)?, a.num(2)?, a.tensor(3)?, a.tensor(4)?);
    let (normed, _) = ln_stats(f, x, eps);
    let last = xt.rank() - 1;
    let g = f.broadcast_in_dim(gamma, &[last], &xt.dims);
    let b = f.broadcast_in_dim(beta, &[last], &xt.dims);
    let y = f.binary(Binary::Multiply, normed, g);
    Ok(vec![f.binary(Binary::Add, y, b)])
}

/// `g.retro_laminatio(x, ε, γ)` (`adde`: `retro_laminatio_adde`, with r added to
/// ∂x): with x̂ and inv of [`ln_stats`] and gy = g ⊙ γ,
/// ∂x = inv·(gy − mean(gy) − x̂·mean(gy ⊙ x̂)), ∂γ = Σ g ⊙ x̂ and ∂β = Σ g over
/// every axis but the last.
pub(super) fn retro_laminatio(f: &mut Function, a: &Args, adde: bool) -> Lowered {
    // (g, x, ε, γ[, r]): no axis operand; x's last axis is the one normalised.
    let (xt, gt) = (a.ty(f, 1)?, a.ty(f, 3)?);
    let d = xt.dims.last().copied().unwrap_or(0);
    if xt.rank() == 0 || d == 0 || gt.dims != [d] || gt.elem != xt.elem {
        return a.err(format!(
            "needs x with a non-empty last axis and γ of its width, found {xt} and {gt}"
        ));
    }
    let (g, x, eps, gamma) = (a.tensor(0)?, a.tensor(1)?, a.num(2)?, a.tensor(3)?);
    if f.ty(g) != &xt {
        return a.err(format!("the cotangent {} is not {xt}", f.ty(g)));
    }
    let last = xt.rank() - 1;
    let d = xt.dims[last];
    let (xhat, inv) = ln_stats(f, x, eps);
    let gb = f.broadcast_in_dim(gamma, &[last], &xt.dims);
    let gy = f.binary(Binary::Multiply, g, gb);
    let n = like(f, x, d as f64);
    let s1 = row_sums(f, gy);
    let m1 = f.binary(Binary::Divide, s1, n);
    let gyx = f.binary(Binary::Multiply, gy, xhat);
    let s2 = row_sums(f, gyx);
    let m2 = f.binary(Binary::Divide, s2, n);
    let t = f.binary(Binary::Subtract, gy, m1);
    let xm2 = f.binary(Binary::Multiply, xhat, m2);
    let t = f.binary(Binary::Subtract, t, xm2);
    let mut dx = f.binary(Binary::Multiply, inv, t);
    if adde {
        let r = a.tensor(4)?;
        let rt = f.ty(r).clone();
        if rt.elem != xt.elem || rt.rank() > xt.rank() {
            return a.err(format!("the addend {rt} does not fit {xt}"));
        }
        let lead = xt.rank() - rt.rank();
        let fits = rt
            .dims
            .iter()
            .zip(&xt.dims[lead..])
            .all(|(&p, &q)| p == q || p == 1);
        if !fits {
            return a.err(format!("the addend {rt} does not broadcast to {xt}"));
        }
        let rb = f.broadcast_in_dim(r, &(lead..xt.rank()).collect::<Vec<_>>(), &xt.dims);
        dx = f.binary(Binary::Add, rb, dx);
    }
    let lead: Vec<usize> = (0..last).collect();
    let gxh = f.binary(Binary::Multiply, g, xhat);
    let dgamma = f.reduce(gxh, &lead, Reduction::Sum);
    let dbeta = f.reduce(g, &lead, Reduction::Sum);
    Ok(vec![dx, dgamma, dbeta])
}

/// `x / √(m + ε)` for the row statistic `m` broadcast over the rows.
fn normalise(f: &mut Function, x: Value, m: Value, eps: f64) -> Value {
    let e = like(f, x, eps);
    let me = f.binary(Binary::Add, m, e);
    let root = f.unary(Unary::Sqrt, me);
    let one = like(f, x, 1.0);
    let inv = f.binary(Binary::Divide, one, root);
    f.binary(Binary::Multiply, x, inv)
}

/// `x.rms_norm(axis, ε, γ)`: `x / √(Σx²/d + ε) ⊙ γ` per last-axis row.
pub(super) fn rms_norm(f: &mut Function, a: &Args) -> Lowered {
    let xt = a.ty(f, 0)?;
    let x = tensor_of_rank(a, f, 0, 1)?;
    let axis = a.index(1, xt.rank(), false)?;
    let (eps, gamma) = (a.num(2)?, a.tensor(3)?);
    let d = xt.dims[xt.rank() - 1];
    let gt = f.ty(gamma).clone();
    if axis + 1 != xt.rank() || d == 0 || gt.dims != [d] || gt.elem != xt.elem {
        return a.err(format!(
            "needs the last, non-empty axis of {xt} and γ of shape [{d}]"
        ));
    }
    let xx = f.binary(Binary::Multiply, x, x);
    let ss = row_sums(f, xx);
    let n = like(f, x, d as f64);
    let ms = f.binary(Binary::Divide, ss, n);
    let normed = normalise(f, x, ms, eps);
    let g = f.broadcast_in_dim(gamma, &[xt.rank() - 1], &xt.dims);
    Ok(vec![f.binary(Binary::Multiply, normed, g)])
}

/// `g.retro_rms_norm(x, ε, γ)` → (∂x, ∂γ): per last-axis row, with
/// inv = 1/√(Σx²/d + ε), x̂ = x·inv and s = Σ (g ⊙ γ) ⊙ x̂,
/// ∂x = inv·(g ⊙ γ − x̂·(s/d)); ∂γ = Σ g ⊙ x̂ over every axis but the last.
pub(super) fn retro_rms_norm(f: &mut Function, a: &Args) -> Lowered {
    let (gt, xt, mt) = (a.ty(f, 0)?, a.ty(f, 1)?, a.ty(f, 3)?);
    let d = xt.dims.last().copied().unwrap_or(0);
    if xt.rank() == 0 || d == 0 || mt.dims != [d] || mt.elem != xt.elem {
        return a.err(format!(
            "needs x with a non-empty last axis and γ of its width, found {xt} and {mt}"
        ));
    }
    if gt != xt {
        return a.err(format!("the cotangent {gt} is not {xt}"));
    }
    let (g, x, eps, gamma) = (a.tensor(0)?, a.tensor(1)?, a.num(2)?, a.tensor(3)?);
    let last = xt.rank() - 1;
    let xx = f.binary(Binary::Multiply, x, x);
    let ss = row_sums(f, xx);
    let n = like(f, x, d as f64);
    let ms = f.binary(Binary::Divide, ss, n);
    let one = like(f, x, 1.0);
    let inv = normalise(f, one, ms, eps);
    let xhat = f.binary(Binary::Multiply, x, inv);
    let gb = f.broadcast_in_dim(gamma, &[last], &xt.dims);
    let gy = f.binary(Binary::Multiply, g, gb);
    let gyx = f.binary(Binary::Multiply, gy, xhat);
    let s = row_sums(f, gyx);
    let m = f.binary(Binary::Divide, s, n);
    let xm = f.binary(Binary::Multiply, xhat, m);
    let t = f.binary(Binary::Subtract, gy, xm);
    let dx = f.binary(Binary::Multiply, inv, t);
    let gxh = f.binary(Binary::Multiply, g, xhat);
    let lead: Vec<usize> = (0..last).collect();
    let dgamma = if lead.is_empty() {
        gxh
    } else {
        f.reduce(gxh, &lead, Reduction::Sum)
    };
    Ok(vec![dx, dgamma])
}

/// `g.retro_softmax_causalis(y, s)`: `softmax_causalis`' VJP for x: per last-axis
/// row d = Σ g ⊙ y, then (y ⊙ (g − d))·s on and below the diagonal of the last two
/// axes and 0·s above it; `s` a number or a number the device computes.
pub(super) fn retro_softmax_causalis(f: &mut Function, a: &Args) -> Lowered {
    let (g, y) = (tensor_of_rank(a, f, 0, 2)?, a.tensor(1)?);
    if f.ty(g) != f.ty(y) {
        return a.err(format!("{} and {} differ", f.ty(g), f.ty(y)));
    }
    let t = f.ty(g).clone();
    let s = filled(f, a, 2, t.elem, &t.dims)?;
    let gy = f.binary(Binary::Multiply, g, y);
    let d = row_sums(f, gy);
    let gd = f.binary(Binary::Subtract, g, d);
    let kept = f.binary(Binary::Multiply, y, gd);
    let kept = f.binary(Binary::Multiply, kept, s);
    let zero = like(f, g, 0.0);
    let masked = f.binary(Binary::Multiply, zero, s);
    Ok(vec![causal_mask(f, kept, masked)])
}

/// One-hot rows of the class ids `ids` (any shape, integral values) over `classes`
/// classes, in `elem`: shape `ids.shape + [classes]`, 1 where the column is the id.
/// An id outside `[0, classes)` gives a row of zeros (the native kernels refuse it).
fn one_hot(f: &mut Function, ids: Value, classes: usize, elem: super::ElementType) -> Value {
    let it = f.ty(ids).clone();
    let mut dims = it.dims.clone();
    dims.push(classes);
    let ids = f.convert(ids, elem);
    let wide = f.broadcast_in_dim(ids, &(0..it.rank()).collect::<Vec<_>>(), &dims);
    let cols = f.iota(elem, &dims, it.rank());
    let one = f.splat(elem, 1.0, &dims);
    let zero = f.splat(elem, 0.0, &dims);
    f.select_if(cols, Compare::Eq, wide, one, zero)
}

/// `E.collige(ids)`: the rows of `E [V, D]` at `ids` → `ids.shape + [D]`, as
/// one-hot rows times `E` (each result element one product by 1 plus zeros: E's
/// value exactly, for finite E).
pub(super) fn collige(f: &mut Function, a: &Args) -> Lowered {
    let (et, ids) = (a.ty(f, 0)?, a.tensor(1)?);
    let &[v, _] = et.dims.as_slice() else {
        return a.err(format!("the table must be rank 2 [V, D], found {et}"));
    };
    let oh = one_hot(f, ids, v, et.elem);
    let r = f.ty(oh).rank();
    let d = DotDims {
        lhs_contract: vec![r - 1],
        rhs_contract: vec![0],
        ..DotDims::default()
    };
    Ok(vec![f.dot_general(oh, a.tensor(0)?, &d)])
}

/// `g.retro_collige(ids, E)`: g's rows summed into the rows of a zero table of E's
/// shape at `ids`, as one-hot rowsᵀ · g.
pub(super) fn retro_collige(f: &mut Function, a: &Args) -> Lowered {
    let (gt, it, et) = (a.ty(f, 0)?, a.ty(f, 1)?, a.ty(f, 2)?);
    let &[v, dd] = et.dims.as_slice() else {
        return a.err(format!("the table must be rank 2 [V, D], found {et}"));
    };
    let mut want = it.dims.clone();
    want.push(dd);
    if gt.dims != want {
        return a.err(format!("{gt} is not ids {it} by the table's width {dd}"));
    }
    let n = it.numel();
    let oh = one_hot(f, a.tensor(1)?, v, gt.elem);
    let oh = f.reshape(oh, &[n, v]);
    let g = f.reshape(a.tensor(0)?, &[n, dd]);
    let d = DotDims {
        lhs_contract: vec![0],
        rhs_contract: vec![0],
        ..DotDims::default()
    };
    Ok(vec![f.dot_general(oh, g, &d)])
}

/// The logits `z [..., V]` and ids `y` (z's shape without the last axis) of a
/// cross-entropy, checked; returns (V, rows).
fn logits_and_ids(
    a: &Args,
    zt: &TensorType,
    yt: &TensorType,
) -> Result<(usize, usize), super::LowerError> {
    let Some((&v, lead)) = zt.dims.split_last() else {
        return a.err("the logits need rank ≥ 1");
    };
    if yt.dims != lead || v == 0 || yt.numel() == 0 {
        return a.err(format!("targets {yt} do not fit logits {zt}"));
    }
    Ok((v, yt.numel()))
}

/// `z.crux_entropia_indices(y)`: the mean over rows of −log_softmax(z)[y], a number.
pub(super) fn crux_entropia_indices(f: &mut Function, a: &Args, log_softmax: Value) -> Lowered {
    let (zt, yt) = (a.ty(f, 0)?, a.ty(f, 1)?);
    let (v, rows) = logits_and_ids(a, &zt, &yt)?;
    let oh = one_hot(f, a.tensor(1)?, v, zt.elem);
    let picked = f.binary(Binary::Multiply, oh, log_softmax);
    let all: Vec<usize> = (0..zt.rank()).collect();
    let total = f.reduce(picked, &all, Reduction::Sum);
    let n = f.constant(zt.elem, -(rows as f64));
    Ok(vec![f.binary(Binary::Divide, total, n)])
}

/// `g.retro_crux_indices(z, y)`: (softmax(z) − onehot(y))·g / rows; g a number or
/// a number the device computes.
pub(super) fn retro_crux_indices(f: &mut Function, a: &Args, softmax: Value) -> Lowered {
    let (zt, yt) = (a.ty(f, 1)?, a.ty(f, 2)?);
    let (v, rows) = logits_and_ids(a, &zt, &yt)?;
    let oh = one_hot(f, a.tensor(2)?, v, zt.elem);
    let diff = f.binary(Binary::Subtract, softmax, oh);
    let g = filled(f, a, 0, zt.elem, &zt.dims)?;
    let scaled = f.binary(Binary::Multiply, diff, g);
    let n = f.splat(zt.elem, rows as f64, &zt.dims);
    Ok(vec![f.binary(Binary::Divide, scaled, n)])
}

/// The logits x (operand `at`) of a cross-entropy against probability targets:
/// rank ≥ 1 with a non-empty last axis; returns x's type and C, the last axis' extent.
fn soft_logits(
    a: &Args,
    f: &Function,
    at: usize,
) -> Result<(TensorType, usize), super::LowerError> {
    let xt = a.ty(f, at)?;
    match xt.dims.last() {
        None => a.err("the logits need rank ≥ 1"),
        Some(0) => a.err(format!("the last axis of the logits {xt} is empty")),
        Some(&c) => Ok((xt.clone(), c)),
    }
}

/// `ln(p + 1e-7)` of the probabilities `p`.
fn log_eps(f: &mut Function, p: Value) -> Value {
    let e = like(f, p, 1e-7);
    let pe = f.binary(Binary::Add, p, e);
    f.unary(Unary::Log, pe)
}

/// `x.crux_entropia(t)`: −(Σ t ⊙ ln(softmax(x) + 1e-7)) / C over every element, C
/// the last axis' extent, a number; t of x's type (any finite targets).
pub(super) fn crux_entropia(f: &mut Function, a: &Args) -> Lowered {
    let (xt, c) = soft_logits(a, f, 0)?;
    let tt = a.ty(f, 1)?;
    if tt != xt {
        return a.err(format!("targets {tt} do not match logits {xt}"));
    }
    let p = softmax_of(f, a.tensor(0)?, false);
    let lp = log_eps(f, p);
    let terms = f.binary(Binary::Multiply, a.tensor(1)?, lp);
    let all: Vec<usize> = (0..xt.rank()).collect();
    let total = f.reduce(terms, &all, Reduction::Sum);
    let n = f.constant(xt.elem, -(c as f64));
    Ok(vec![f.binary(Binary::Divide, total, n)])
}

/// `g.retro_crux_entropia(x, t)`: `crux_entropia`'s cotangent for x, exact for its
/// `ln(p + 1e-7)`: with p = softmax(x) and r = t ⊙ p / (p + 1e-7),
/// ((p·Σ_row r − r)·g) / C; g a number or a number the device computes.
pub(super) fn retro_crux_entropia(f: &mut Function, a: &Args) -> Lowered {
    let (xt, c) = soft_logits(a, f, 1)?;
    let tt = a.ty(f, 2)?;
    if tt != xt {
        return a.err(format!("targets {tt} do not match logits {xt}"));
    }
    let p = softmax_of(f, a.tensor(1)?, false);
    let e = like(f, p, 1e-7);
    let pe = f.binary(Binary::Add, p, e);
    let tp = f.binary(Binary::Multiply, a.tensor(2)?, p);
    let r = f.binary(Binary::Divide, tp, pe);
    let sr = row_sums(f, r);
    let psr = f.binary(Binary::Multiply, p, sr);
    let diff = f.binary(Binary::Subtract, psr, r);
    let g = filled(f, a, 0, xt.elem, &xt.dims)?;
    let scaled = f.binary(Binary::Multiply, diff, g);
    let n = like(f, p, c as f64);
    Ok(vec![f.binary(Binary::Divide, scaled, n)])
}

/// `g.retro_crux_scopi(x)`: `crux_entropia`'s cotangent for its targets,
/// ((−ln(softmax(x) + 1e-7))·g) / C; g a number or a number the device computes.
pub(super) fn retro_crux_scopi(f: &mut Function, a: &Args) -> Lowered {
    let (xt, c) = soft_logits(a, f, 1)?;
    let p = softmax_of(f, a.tensor(1)?, false);
    let lp = log_eps(f, p);
    let neg = f.unary(Unary::Negate, lp);
    let g = filled(f, a, 0, xt.elem, &xt.dims)?;
    let scaled = f.binary(Binary::Multiply, neg, g);
    let n = like(f, p, c as f64);
    Ok(vec![f.binary(Binary::Divide, scaled, n)])
}
