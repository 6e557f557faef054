//! The cross-entropy losses, forward and backward: `crux_entropia` (probability
//! targets), `crux_entropia_indices` (integer targets), and their VJPs
//! `retro_crux_entropia`, `retro_crux_scopi` (to the targets), `retro_crux_indices` —
//! each row's softmax the family's one row recipe (row.rs).

use super::cross_entropy_f32::{
    cross_entropy_backward_f32, cross_entropy_f32, cross_entropy_indices_backward_f32,
    cross_entropy_indices_mean_f32, cross_entropy_targets_backward_f32,
};
use super::row::{exp_shifted_sum, row_max, softmax_row};
use crate::tensor::elem::{map_f32, operands, scalar_f32, Operands};
use crate::tensor::par::build;
use crate::tensor::{
    check_same, fmt_shape, last_axis, nonempty_last_axis, shape_difference, vec_for_tensor, DType,
    TResult, Tensor, TensorError,
};

/// `x.crux_entropia(t)`: `−(Σ t·ln(softmax(x) + 1e-7)) / C` → rank 0, with
/// `C` the last-axis size, the sum over every element in row-major order
/// from 0.0. `t` must have `x`'s shape and be finite (else `Domain`); any finite
/// targets are accepted, not only probabilities. For an f32 `x` and `t` the rank-0
/// tensor is f32: [`cross_entropy_value`] rounded once.
pub fn cross_entropy(x: &Tensor, t: &Tensor) -> TResult<Tensor> {
    let loss = cross_entropy_value(x, t)?;
    Ok(if x.dtype() == DType::F32 && t.dtype() == DType::F32 {
        scalar_f32(loss)
    } else {
        Tensor::scalar(loss)
    })
}

/// [`cross_entropy`]'s loss as a number (what `crux_entropia` gives). For f32 `x` and `t`
/// it is computed in f64 from their values (cross_entropy_f32.rs, its bound there) and
/// not rounded to f32.
pub fn cross_entropy_value(x: &Tensor, t: &Tensor) -> TResult<f64> {
    let c = last_axis("crux_entropia", x)?;
    if x.shape() != t.shape() {
        return Err(TensorError::shape(format!(
            "crux_entropia: targets {} do not match logits {} ({})",
            fmt_shape(t.shape()),
            fmt_shape(x.shape()),
            shape_difference(t.shape(), x.shape())
        )));
    }
    if c == 0 {
        return Err(TensorError::shape("crux_entropia: the last axis is empty"));
    }
    // Any finite targets (the definition is linear in them); NaN and ±∞ have no loss.
    match operands([x, t])? {
        Operands::F64 => {}
        Operands::F32 => {
            if let Some(&bad) = t.data32().iter().find(|v| !v.is_finite()) {
                return Err(not_finite(bad as f64));
            }
            return Ok(cross_entropy_f32(x.data32(), t.data32(), c));
        }
        Operands::Widened([x, t]) => return cross_entropy_value(&x, &t),
    }
    if let Some(&bad) = t.data().iter().find(|v| !v.is_finite()) {
        return Err(not_finite(bad));
    }
    let mut p = vec![0.0; c];
    let mut s = 0.0;
    for (r, tr) in x.data().chunks_exact(c).zip(t.data().chunks_exact(c)) {
        softmax_row(r, &mut p);
        for (&pv, &tv) in p.iter().zip(tr) {
            s += tv * (pv + 1e-7).ln();
        }
    }
    Ok(-s / c as f64)
}

fn not_finite(bad: f64) -> TensorError {
    TensorError::domain(format!(
        "crux_entropia: target {bad} is not a finite number"
    ))
}

/// `z.crux_entropia_indices(y)`: mean over rows of `lse(z_r) − z_r[y_r]` with
/// `lse = m + ln(Σ exp(z − m))` (m the row max, sums left to right) → rank 0;
/// the row losses are summed in order from 0.0 and divided by the row count.
/// `y` has shape `z.shape[..rank-1]` and holds integers in `[0, V)`. For an f32 `z` the
/// rank-0 tensor is f32: [`cross_entropy_indices_value`] rounded once.
pub fn cross_entropy_indices(z: &Tensor, y: &Tensor) -> TResult<Tensor> {
    let loss = cross_entropy_indices_value(z, y)?;
    Ok(if z.dtype() == DType::F32 {
        scalar_f32(loss)
    } else {
        Tensor::scalar(loss)
    })
}

/// [`cross_entropy_indices`]'s loss as a number (what `crux_entropia_indices` gives).
/// For an f32 `z` it is computed in f64 from its values (cross_entropy_f32.rs, its bound
/// there) and not rounded to f32; `y` may be of either type.
pub fn cross_entropy_indices_value(z: &Tensor, y: &Tensor) -> TResult<f64> {
    let v = last_axis("crux_entropia_indices", z)?;
    if y.shape() != &z.shape()[..z.rank() - 1] {
        return Err(TensorError::shape(format!(
            "crux_entropia_indices: targets {} do not match logits {} (the targets must have the logits' shape without the last axis, {}: {})",
            fmt_shape(y.shape()),
            fmt_shape(z.shape()),
            fmt_shape(&z.shape()[..z.rank() - 1]),
            shape_difference(y.shape(), &z.shape()[..z.rank() - 1])
        )));
    }
    if v == 0 || y.numel() == 0 {
        return Err(TensorError::shape(format!(
            "crux_entropia_indices: logits {} have no rows or no classes",
            fmt_shape(z.shape())
        )));
    }
    let ids = y.to_indices(v, "crux_entropia_indices")?;
    if z.dtype() == DType::F32 {
        return Ok(cross_entropy_indices_mean_f32(z.data32(), &ids, v));
    }
    let mut total = 0.0;
    let mut e = vec![0.0; v];
    for (r, &id) in z.data().chunks_exact(v).zip(&ids) {
        let m = row_max(r);
        e.copy_from_slice(r);
        let s = exp_shifted_sum(&mut e, m);
        total += (m + s.ln()) - r[id];
    }
    Ok(total / ids.len() as f64)
}

/// `retro_crux_entropia(g, x, t)`, the `crux_entropia` backward, exact for the forward's
/// `ln(p + 1e-7)`: with
/// `r_j = t_j·p_j/(p_j + 1e-7)`, `∂x_k = (p_k·Σ_j r_j − r_k)·g / C`. (Without the 1e-7
/// this is the familiar `(p·Σt − t)·g / C`; the exact form agrees with finite
/// differences to 1e-9 where the familiar one is off by ~1e-7.) f32 tensors:
/// cross_entropy_f32.rs (f64 inside, rounded once).
pub fn cross_entropy_backward(g: f64, x: &Tensor, t: &Tensor) -> TResult<Tensor> {
    check_same("retro_crux_entropia", x, t)?;
    let d = nonempty_last_axis("retro_crux_entropia", x)?;
    match operands([x, t])? {
        Operands::F64 => {}
        Operands::F32 => {
            return map_f32(x, |xd, o| {
                cross_entropy_backward_f32(g, xd, t.data32(), d, o)
            })
        }
        Operands::Widened([x, t]) => return cross_entropy_backward(g, &x, &t),
    }
    let c = d as f64;
    let mut out = vec_for_tensor(x.numel());
    let mut p = vec![0.0; d];
    let mut r = Vec::with_capacity(d);
    for (xr, tr) in x.data().chunks_exact(d).zip(t.data().chunks_exact(d)) {
        softmax_row(xr, &mut p);
        r.clear();
        r.extend(p.iter().zip(tr).map(|(q, tv)| tv * q / (q + 1e-7)));
        let sr = r.iter().fold(0.0, |a, b| a + b);
        out.extend(p.iter().zip(&r).map(|(q, rv)| (q * sr - rv) * g / c));
    }
    Tensor::from_flat(out, x.shape())
}

/// `retro_crux_scopi(g, x)`, the `crux_entropia` backward to the targets: the loss is
/// linear in `t`, so
/// `∂t_k = −ln(p_k + 1e-7)·g / C` with `p` the row's softmax (the forward's recipe).
/// An f32 `x`: cross_entropy_f32.rs (f64 inside, rounded once).
pub fn cross_entropy_targets_backward(g: f64, x: &Tensor) -> TResult<Tensor> {
    let d = nonempty_last_axis("retro_crux_scopi", x)?;
    if x.dtype() == DType::F32 {
        return map_f32(x, |xd, o| cross_entropy_targets_backward_f32(g, xd, d, o));
    }
    let c = d as f64;
    let mut out = vec_for_tensor(x.numel());
    let mut p = vec![0.0; d];
    for xr in x.data().chunks_exact(d) {
        softmax_row(xr, &mut p);
        out.extend(p.iter().map(|q| -(q + 1e-7).ln() * g / c));
    }
    Tensor::from_flat(out, x.shape())
}

/// `retro_crux_indices(g, z, y)`, the `crux_entropia_indices` backward:
/// `(softmax(z) − onehot(y))·g / rows`. An f32 `z`: cross_entropy_f32.rs (f64 inside,
/// rounded once); `y` may be of either type.
pub fn cross_entropy_indices_backward(g: f64, z: &Tensor, y: &Tensor) -> TResult<Tensor> {
    let d = nonempty_last_axis("retro_crux_indices", z)?;
    let rows = z.numel() / d;
    if y.numel() != rows {
        return Err(TensorError::shape(format!(
            "retro_crux_indices: {} targets for {rows} rows",
            y.numel()
        )));
    }
    let ids = y.to_indices(d, "retro_crux_indices")?;
    if z.dtype() == DType::F32 {
        return map_f32(z, |zd, o| {
            cross_entropy_indices_backward_f32(g, zd, &ids, d, o)
        });
    }
    let n = rows as f64;
    let zd = z.data();
    // Rows are independent: blocks of rows on the pool's threads.
    let out = build(z.numel(), d, |start, dst| {
        let mut p = vec![0.0; d];
        for (i, o) in dst.chunks_exact_mut(d).enumerate() {
            let r = start / d + i;
            softmax_row(&zd[r * d..(r + 1) * d], &mut p);
            p[ids[r]] -= 1.0;
            for (o, &v) in o.iter_mut().zip(&p) {
                o.write(v * g / n);
            }
        }
    })?;
    Ok(Tensor::shaped_like(z, out))
}
