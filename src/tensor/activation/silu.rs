//! SiLU (swish): `x.silu()` = `x / (1 + e^{−x})` and its VJP `g.retro_silu(x)` =
//! `g·(s·(1 + x·(1 − s)))` with `s = 1/(1 + e^{−x})`, forward and backward side by
//! side. `e^{−x}` is the correctly rounded `exp_cr`, as every exp of the runtime; for
//! x < −709.8 it is +∞, which gives −0 (forward) and 0 (backward) as the limits.

use super::silu_f32::{silu_backward_f32, silu_f32_map};
use crate::tensor::elem::{map_f32, operands, Operands};
use crate::tensor::{alloc, exp_cr, fmt_shape, DType, TResult, Tensor, TensorError};

/// `x.silu()`: `x / (1 + exp_cr(−x))` per element. An f32 tensor: `silu_f32` per
/// element (silu_f32.rs, faithfully rounded).
pub fn silu(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return map_f32(x, silu_f32_map);
    }
    let mut out = alloc(x.numel())?;
    out.extend(x.data().iter().map(|&v| v / (1.0 + exp_cr(-v))));
    Ok(Tensor::shaped_like(x, out))
}

/// `g.retro_silu(x)`: `g·(s·(1 + x·(1 − s)))`, `s = 1/(1 + exp_cr(−x))` — SiLU's
/// derivative `σ(x) + x·σ(x)·(1 − σ(x))` times the cotangent. `g` must have x's shape.
/// On f32 tensors: in f64, rounded once (silu_f32.rs).
pub fn silu_backward(g: &Tensor, x: &Tensor) -> TResult<Tensor> {
    if g.shape() != x.shape() {
        return Err(TensorError::shape(format!(
            "retro_silu: cotangent {} does not match x {}",
            fmt_shape(g.shape()),
            fmt_shape(x.shape())
        )));
    }
    match operands([g, x])? {
        Operands::F64 => {}
        Operands::F32 => return map_f32(x, |xd, o| silu_backward_f32(g.data32(), xd, o)),
        Operands::Widened([g, x]) => return silu_backward(&g, &x),
    }
    let mut out = alloc(x.numel())?;
    out.extend(x.data().iter().zip(g.data()).map(|(&v, &gv)| {
        let s = 1.0 / (1.0 + exp_cr(-v));
        gv * (s * (1.0 + v * (1.0 - s)))
    }));
    Ok(Tensor::shaped_like(x, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(v: &[f64]) -> Tensor {
        Tensor::from_slice(v, &[v.len()]).unwrap()
    }

    #[test]
    fn forward_matches_the_logistic_function() {
        // σ(1) = 1/(1 + e⁻¹) = 0.7310585786300049, σ(−1)·(−1) = −1/(1 + e) =
        // −0.2689414213699951, 2·σ(2) = 1.7615941559557646 (Python's math.exp, which
        // rounds these correctly); silu(0) = 0/2.
        let y = silu(&t(&[0.0, 1.0, -1.0, 2.0])).unwrap();
        assert_eq!(
            y.data(),
            &[
                0.0,
                0.7310585786300049,
                -0.2689414213699951,
                1.7615941559557646
            ]
        );
        // far left the limit −0, far right x itself
        let y = silu(&t(&[-1000.0, 1000.0])).unwrap();
        assert_eq!(y.data()[0].to_bits(), (-0.0f64).to_bits());
        assert_eq!(y.data()[1], 1000.0);
    }

    #[test]
    fn backward_is_the_derivative_times_g() {
        // silu′(0) = σ(0) = 0.5; silu′(1) = σ(1)·(1 + (1 − σ(1))) = 0.9276705118714869.
        let d = silu_backward(&t(&[2.0, 1.0, 3.0]), &t(&[0.0, 1.0, -1000.0])).unwrap();
        assert_eq!(d.data(), &[1.0, 0.9276705118714869, 0.0]);
        // against central differences of the forward
        let xs = [-2.5, -0.3, 0.4, 1.7];
        let g = silu_backward(&t(&[1.0; 4]), &t(&xs)).unwrap();
        let h = 1e-6;
        for (i, &v) in xs.iter().enumerate() {
            let f = |v: f64| silu(&t(&[v])).unwrap().data()[0];
            let fd = (f(v + h) - f(v - h)) / (2.0 * h);
            assert!(
                (fd - g.data()[i]).abs() < 1e-9,
                "{v}: {fd} vs {}",
                g.data()[i]
            );
        }
    }

    #[test]
    fn shapes_must_match() {
        assert!(silu_backward(&t(&[1.0]), &t(&[1.0, 2.0])).is_err());
    }
}
