//! Fused optimizer updates: `p.adamw_passus(g, m, v, coefficients)`, one pass over a
//! parameter leaf instead of the fourteen tensor ops the same AdamW step takes when
//! written with `scala`, `addita`, `⊙`, `sqrt` and `divide` (gradus:optimize before
//! this kernel). Each element goes through exactly those operations in that order, so
//! the results are the bits the unfused ops give.
//!
//! Four f32 tensors run the f32 step (optim_f32.rs): the same operations in f64 from
//! the exactly widened elements and the f64 coefficients (they are not rounded to f32),
//! each of p′, m′, v′ rounded once — the bits the f64 step gives on the widened tensors,
//! rounded. Tensors of both types promote to f64.

use super::elem::widened;
use super::optim_f32::adamw_t32;
use super::par::SendPtr;
use super::pool::run_blocks;
use super::{alloc, fmt_shape, threads, DType, TResult, Tensor, TensorError};

/// Leaves split over threads from this many elements (each block's elements depend
/// only on their own index, so the results never depend on the thread count).
const PAR_MIN: usize = 1 << 14;

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
                "adamw_passus: the {what} {} does not match the parameter {} ({})",
                fmt_shape(t.shape()),
                fmt_shape(p.shape()),
                super::shape_difference(t.shape(), p.shape())
            )));
        }
    }
    match [p, g, m, v].map(|t| t.dtype() == DType::F32) {
        [false, false, false, false] => {}
        [true, true, true, true] => return adamw_t32(p, g, m, v, c),
        _ => {
            let (p, g, m, v) = (widened(p)?, widened(g)?, widened(m)?, widened(v)?);
            return adamw_step(&p, &g, &m, &v, c);
        }
    }
    let n = p.numel();
    let (mut po, mut mo, mut vo) = (alloc(n)?, alloc(n)?, alloc(n)?);
    // SAFETY: every element of the three buffers is written below (the blocks cover
    // 0..n).
    let (pb, mb, vb) = unsafe {
        (
            SendPtr(po.assume_filled()),
            SendPtr(mo.assume_filled()),
            SendPtr(vo.assume_filled()),
        )
    };
    let (pd, gd, md, vd) = (p.data(), g.data(), m.data(), v.data());
    let block = |start: usize, len: usize| {
        // SAFETY: [start, start + len) lies inside the n-element buffers and no other
        // block covers it.
        let (pw, mw, vw) = unsafe {
            (
                std::slice::from_raw_parts_mut(pb.get().add(start), len),
                std::slice::from_raw_parts_mut(mb.get().add(start), len),
                std::slice::from_raw_parts_mut(vb.get().add(start), len),
            )
        };
        let r = start..start + len;
        let it = pd[r.clone()]
            .iter()
            .zip(&gd[r.clone()])
            .zip(&md[r.clone()])
            .zip(&vd[r]);
        for ((((&pv, &gv), &mv), &vv), ((po, mo), vo)) in it.zip(pw.iter_mut().zip(mw).zip(vw)) {
            let m1 = mv * c.beta1 + gv * c.one_minus_beta1;
            let v1 = vv * c.beta2 + (gv * gv) * c.one_minus_beta2;
            let d = v1.sqrt() * c.inv_bc2_sqrt + c.eps;
            *po = pv * c.decay - (m1 / d) * c.step;
            *mo = m1;
            *vo = v1;
        }
    };
    let t = if n >= PAR_MIN {
        threads().min(n / (PAR_MIN / 2))
    } else {
        1
    };
    if t > 1 {
        let per = n.div_ceil(t);
        run_blocks(t, &|i| block(i * per, per.min(n - i * per)));
    } else {
        block(0, n);
    }
    Ok((
        Tensor::shaped_like(p, po),
        Tensor::shaped_like(p, mo),
        Tensor::shaped_like(p, vo),
    ))
}
