//! Fused optimizer updates: `p.adamw_passus(g, m, v, coefficients)`, one pass over a
//! parameter leaf instead of the fourteen tensor ops the same AdamW step takes when
//! written with `scala`, `addita`, `⊙`, `sqrt` and `divide` (gradus:optimize before
//! this kernel). Each element goes through exactly those operations in that order, so
//! the results are the bits the unfused ops give.

use super::{alloc, fmt_shape, TResult, Tensor, TensorError};

/// The scalars of one AdamW step, as the caller computed them.
#[derive(Clone, Copy, Debug)]
pub struct AdamCoef {
    pub beta1: f64,
    /// `1 − β₁`
    pub one_minus_beta1: f64,
    pub beta2: f64,
    /// `1 − β₂`
    pub one_minus_beta2: f64,
    /// `1 / √(1 − β₂ᵗ)`
    pub inv_bc2_sqrt: f64,
    pub eps: f64,
    /// `1 − lr·wd`
    pub decay: f64,
    /// `lr / (1 − β₁ᵗ)`
    pub step: f64,
}

/// One AdamW step of a leaf: per element
/// `m' = m·β₁ + g·(1 − β₁)`, `v' = v·β₂ + (g·g)·(1 − β₂)`,
/// `d = √v'·(1/√(1 − β₂ᵗ)) + ε`, `p' = p·decay − (m'/d)·step`
/// → `(p', m', v')`. All four tensors must have one shape.
pub fn adamw_step(
    p: &Tensor,
    g: &Tensor,
    m: &Tensor,
    v: &Tensor,
    c: &AdamCoef,
) -> TResult<(Tensor, Tensor, Tensor)> {
    for (what, t) in [("gradient", g), ("first moment", m), ("second moment", v)] {
        if t.shape() != p.shape() {
            return Err(TensorError::shape(format!(
                "adamw_passus: the {what} {} does not match the parameter {}",
                fmt_shape(t.shape()),
                fmt_shape(p.shape())
            )));
        }
    }
    let n = p.numel();
    let (mut po, mut mo, mut vo) = (alloc(n)?, alloc(n)?, alloc(n)?);
    let it = p.data().iter().zip(g.data()).zip(m.data()).zip(v.data());
    for (((&pv, &gv), &mv), &vv) in it {
        let m1 = mv * c.beta1 + gv * c.one_minus_beta1;
        let v1 = vv * c.beta2 + (gv * gv) * c.one_minus_beta2;
        let d = v1.sqrt() * c.inv_bc2_sqrt + c.eps;
        po.push(pv * c.decay - (m1 / d) * c.step);
        mo.push(m1);
        vo.push(v1);
    }
    Ok((
        Tensor::shaped_like(p, po),
        Tensor::shaped_like(p, mo),
        Tensor::shaped_like(p, vo),
    ))
}
