//! RMS normalisation (Llama's RMSNorm): `x.rms_norm(axis, ε, γ)` and its VJP
//! `g.retro_rms_norm(x, ε, γ)`, forward and backward side by side. Per last-axis row of
//! length d: `ss = Σ x_j·x_j` from 0.0 left to right, `inv = 1/√(ss/d + ε)` (a true
//! division by d, as `laminatio`'s variance), `y_j = (x_j·inv)·γ_j`. Rows run in
//! order on one thread, so no result depends on the thread count.

use super::rms_f32::{rms_norm_backward_f32, rms_norm_f32};
use crate::tensor::elem::{map_f32, operands, Operands};
use crate::tensor::{alloc, fmt_shape, TResult, Tensor, TensorError};

/// The checks both directions share: `axis` is the last axis of a tensor of rank ≥ 1
/// with a non-empty last axis, and γ is `[d]`. Returns d.
fn row_len(name: &str, x: &Tensor, axis: usize, gamma: &Tensor) -> TResult<usize> {
    let Some(&d) = x.shape().last() else {
        return Err(TensorError::shape(format!(
            "{name}: a rank-0 tensor has no last axis"
        )));
    };
    if axis + 1 != x.rank() {
        return Err(TensorError::shape(format!(
            "{name}: axis {axis} is not the last axis of {}",
            fmt_shape(x.shape())
        )));
    }
    if gamma.shape() != [d] {
        return Err(TensorError::shape(format!(
            "{name}: scale {} must be [{d}], the size of the last axis {axis} of {}",
            fmt_shape(gamma.shape()),
            fmt_shape(x.shape())
        )));
    }
    if d == 0 {
        return Err(TensorError::shape(format!(
            "{name}: the last axis is empty"
        )));
    }
    Ok(d)
}

/// `1/√(Σ x_j² / d + ε)` of one row (the sum in order from 0.0).
#[inline]
fn inv_rms(row: &[f64], eps: f64) -> f64 {
    let mut ss = 0.0;
    for &v in row {
        ss += v * v;
    }
    1.0 / (ss / row.len() as f64 + eps).sqrt()
}

/// `x.rms_norm(axis, ε, γ)`: `y_j = (x_j·inv)·γ_j` per last-axis row (see the module).
/// f32 tensors: rms_f32.rs (f64 inside, each element rounded once).
pub fn rms_norm(x: &Tensor, axis: usize, eps: f64, gamma: &Tensor) -> TResult<Tensor> {
    let d = row_len("rms_norm", x, axis, gamma)?;
    match operands([x, gamma])? {
        Operands::F64 => {}
        Operands::F32 => return map_f32(x, |xd, o| rms_norm_f32(xd, o, eps, gamma.data32())),
        Operands::Widened([x, gamma]) => return rms_norm(&x, axis, eps, &gamma),
    }
    let g = gamma.data();
    let mut out = alloc(x.numel())?;
    for row in x.data().chunks_exact(d) {
        let inv = inv_rms(row, eps);
        out.extend(row.iter().zip(g).map(|(&v, &gj)| (v * inv) * gj));
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `g.retro_rms_norm(x, ε, γ)` → (∂x, ∂γ): per row, with `x̂ = x·inv` and
/// `s = Σ_j (g_j·γ_j)·x̂_j` in order from 0.0, `∂x_j = inv·((g_j·γ_j) − x̂_j·(s/d))`;
/// `∂γ = Σ_rows g ⊙ x̂`, rows added in order from 0.0. (From `y_j = γ_j·x_j·inv` and
/// `∂inv/∂x_k = −inv³·x_k/d`.) f32 tensors: rms_f32.rs (f64 inside, rounded once).
pub fn rms_norm_backward(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
) -> TResult<(Tensor, Tensor)> {
    let d = row_len("retro_rms_norm", x, x.rank().saturating_sub(1), gamma)?;
    if g.shape() != x.shape() {
        return Err(TensorError::shape(format!(
            "retro_rms_norm: cotangent {} does not match x {}",
            fmt_shape(g.shape()),
            fmt_shape(x.shape())
        )));
    }
    match operands([g, x, gamma])? {
        Operands::F64 => {}
        Operands::F32 => {
            let mut gg = vec![0.0f32; d];
            let gx = map_f32(x, |xd, o| {
                rms_norm_backward_f32(g.data32(), xd, eps, gamma.data32(), o, &mut gg)
            })?;
            return Ok((gx, Tensor::from_f32(gg, &[d])?));
        }
        Operands::Widened([g, x, gamma]) => return rms_norm_backward(&g, &x, eps, &gamma),
    }
    let gam = gamma.data();
    let mut gx = alloc(x.numel())?;
    let mut gg = vec![0.0; d];
    for (row, grow) in x.data().chunks_exact(d).zip(g.data().chunks_exact(d)) {
        let inv = inv_rms(row, eps);
        let mut s = 0.0;
        for j in 0..d {
            let xh = row[j] * inv;
            s += (grow[j] * gam[j]) * xh;
            gg[j] += grow[j] * xh;
        }
        let m = s / d as f64;
        gx.extend((0..d).map(|j| inv * ((grow[j] * gam[j]) - (row[j] * inv) * m)));
    }
    let mut gbuf = alloc(d)?;
    gbuf.extend_from_slice(&gg);
    Ok((Tensor::shaped_like(x, gx), Tensor::from_parts([d], gbuf)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f64], s: &[usize]) -> Tensor {
        Tensor::from_slice(v, s).unwrap()
    }

    #[test]
    fn forward_matches_the_formula() {
        // [3, 4]: mean of squares 12.5, 1/√12.5 = 0.282842712474619 (math.sqrt in
        // Python gives the same f64), y = (3·inv)·2, (4·inv)·0.5.
        let y = rms_norm(&t(&[3.0, 4.0], &[1, 2]), 1, 0.0, &t(&[2.0, 0.5], &[2])).unwrap();
        assert_eq!(y.data(), &[1.697056274847714, 0.565685424949238]);
        // ε is added to the mean of squares: [1, 1] with ε = 3 gives 1/√4 = 0.5.
        let y = rms_norm(&t(&[1.0, 1.0], &[2]), 0, 3.0, &t(&[1.0, 1.0], &[2])).unwrap();
        assert_eq!(y.data(), &[0.5, 0.5]);
    }

    #[test]
    fn backward_of_a_balanced_row() {
        // x = [1, 1], γ = 1, ε = 0: inv = 1, x̂ = x; g = [1, −1] gives s = 0, so
        // ∂x = g and ∂γ = g ⊙ x̂ = g.
        let x = t(&[1.0, 1.0], &[1, 2]);
        let g = t(&[1.0, -1.0], &[1, 2]);
        let (gx, gg) = rms_norm_backward(&g, &x, 0.0, &t(&[1.0, 1.0], &[2])).unwrap();
        assert_eq!(gx.data(), &[1.0, -1.0]);
        assert_eq!(gg.data(), &[1.0, -1.0]);
    }

    #[test]
    fn backward_matches_central_differences() {
        let xs = [0.3, -1.2, 0.7, 2.0, -0.4, 0.9];
        let gam = [1.5, -0.5, 0.8];
        let gs = [0.2, 0.1, -0.7, 0.4, -0.3, 0.6];
        let (x, gamma, g) = (t(&xs, &[2, 3]), t(&gam, &[3]), t(&gs, &[2, 3]));
        let eps = 1e-3;
        let loss = |x: &Tensor, gamma: &Tensor| -> f64 {
            let y = rms_norm(x, 1, eps, gamma).unwrap();
            y.data().iter().zip(&gs).map(|(a, b)| a * b).sum()
        };
        let (gx, gg) = rms_norm_backward(&g, &x, eps, &gamma).unwrap();
        let h = 1e-6;
        for i in 0..6 {
            let (mut p, mut m) = (xs, xs);
            p[i] += h;
            m[i] -= h;
            let fd = (loss(&t(&p, &[2, 3]), &gamma) - loss(&t(&m, &[2, 3]), &gamma)) / (2.0 * h);
            assert!(
                (fd - gx.data()[i]).abs() < 1e-8,
                "∂x[{i}]: {fd} vs {}",
                gx.data()[i]
            );
        }
        for j in 0..3 {
            let (mut p, mut m) = (gam, gam);
            p[j] += h;
            m[j] -= h;
            let fd = (loss(&x, &t(&p, &[3])) - loss(&x, &t(&m, &[3]))) / (2.0 * h);
            assert!(
                (fd - gg.data()[j]).abs() < 1e-8,
                "∂γ[{j}]: {fd} vs {}",
                gg.data()[j]
            );
        }
    }

    #[test]
    fn bad_shapes_are_errors() {
        let x = t(&[1.0, 2.0], &[1, 2]);
        assert!(rms_norm(&x, 0, 0.0, &t(&[1.0, 1.0], &[2])).is_err());
        assert!(rms_norm(&x, 1, 0.0, &t(&[1.0], &[1])).is_err());
        assert!(rms_norm(&Tensor::scalar(1.0), 0, 0.0, &x).is_err());
        let empty = Tensor::zeros(&[2, 0]).unwrap();
        assert!(rms_norm(&empty, 1, 0.0, &Tensor::zeros(&[0]).unwrap()).is_err());
        let g = t(&[1.0], &[1, 1]);
        assert!(rms_norm_backward(&g, &x, 0.0, &t(&[1.0, 1.0], &[2])).is_err());
    }
}
