//! The fused AdamW step for f32 parameter leaves (issue 21): `adamw_passus` on slices.
//! Each element goes through the f64 kernel's operations in its order (optim.rs), in
//! f64 from the exactly widened f32 `p, g, m, v` and the f64 [`AdamCoef`], and the three
//! results are rounded to f32 once each (p′ from the unrounded m′ and v′):
//! `m′ = m·β₁ + g·(1 − β₁)`, `v′ = v·β₂ + (g·g)·(1 − β₂)`, `d = √v′·(1/√(1 − β₂ᵗ)) + ε`,
//! `p′ = p·decay − (m′/d)·step`.
//!
//! Bounds: m′ and v′ within `½ ulp + 2⁻⁵²·(|m·β₁| + |g·(1 − β₁)|)` (resp. for v′) of
//! the exact expression of the f32 inputs — correctly rounded but for f64 double
//! rounding; p′ within `½ ulp + 2⁻⁵⁰·(|p·decay| + |m′/d·step|)`. Blocks of elements
//! split between threads never change an element's result.

use std::mem::MaybeUninit;

use super::elem::{as_slots, f32_like};
use super::par_f32::{par_blocks, wide, SendPtrOf};
use super::{f32_vec, AdamCoef, TResult, Tensor};

/// Elements from which a leaf is split between threads.
const PAR_MIN: usize = 1 << 14;

/// One AdamW step of an f32 leaf in place of new buffers: reads `p, g, m, v` (one
/// length) and writes `p′, m′, v′` into `po, mo, vo` (that length).
#[allow(clippy::too_many_arguments)]
pub fn adamw_step_f32(
    p: &[f32],
    g: &[f32],
    m: &[f32],
    v: &[f32],
    c: &AdamCoef,
    po: &mut [f32],
    mo: &mut [f32],
    vo: &mut [f32],
) {
    adamw_into(p, g, m, v, c, as_slots(po), as_slots(mo), as_slots(vo))
}

/// [`adamw_step_f32`] into slots to write.
#[allow(clippy::too_many_arguments)]
fn adamw_into(
    p: &[f32],
    g: &[f32],
    m: &[f32],
    v: &[f32],
    c: &AdamCoef,
    po: &mut [MaybeUninit<f32>],
    mo: &mut [MaybeUninit<f32>],
    vo: &mut [MaybeUninit<f32>],
) {
    let n = p.len();
    let (pb, mb, vb) = (
        SendPtrOf::new(po.as_mut_ptr()),
        SendPtrOf::new(mo.as_mut_ptr()),
        SendPtrOf::new(vo.as_mut_ptr()),
    );
    par_blocks(n, 1, PAR_MIN, |start, len| {
        // SAFETY: [start, start + len) lies inside the three n-element outputs, no
        // other block covers it, and they outlive `par_blocks`.
        let (pw, mw, vw) = unsafe {
            (
                pb.part(start, len),
                mb.part(start, len),
                vb.part(start, len),
            )
        };
        let r = start..start + len;
        let (pd, gd, md, vd) = (&p[r.clone()], &g[r.clone()], &m[r.clone()], &v[r]);
        wide(
            #[inline(always)]
            || {
                for i in 0..len {
                    let (pv, gv, mv, vv) = (pd[i] as f64, gd[i] as f64, md[i] as f64, vd[i] as f64);
                    let m1 = mv * c.beta1 + gv * c.one_minus_beta1;
                    let v1 = vv * c.beta2 + (gv * gv) * c.one_minus_beta2;
                    let d = v1.sqrt() * c.inv_bc2_sqrt + c.eps;
                    pw[i].write((pv * c.decay - (m1 / d) * c.step) as f32);
                    mw[i].write(m1 as f32);
                    vw[i].write(v1 as f32);
                }
            },
        )
    });
}

/// `p.adamw_passus(g, m, v, c)` of four f32 tensors of one shape (checked by the
/// caller): the triple (p′, m′, v′) of f32 tensors of that shape.
pub(in crate::tensor) fn adamw_t32(
    p: &Tensor,
    g: &Tensor,
    m: &Tensor,
    v: &Tensor,
    c: &AdamCoef,
) -> TResult<(Tensor, Tensor, Tensor)> {
    let n = p.numel();
    let (pd, gd, md, vd) = (p.data32(), g.data32(), m.data32(), v.data32());
    let (mut po, mut mo, mut vo) = (f32_vec(n)?, f32_vec(n)?, f32_vec(n)?);
    adamw_into(
        pd,
        gd,
        md,
        vd,
        c,
        &mut po.spare_capacity_mut()[..n],
        &mut mo.spare_capacity_mut()[..n],
        &mut vo.spare_capacity_mut()[..n],
    );
    // SAFETY: `adamw_into` wrote each of the n slots of the three.
    unsafe {
        po.set_len(n);
        mo.set_len(n);
        vo.set_len(n);
    }
    Ok((f32_like(p, po), f32_like(p, mo), f32_like(p, vo)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::softmax::row_f32::tests::{f32_rows, ulp};
    use crate::tensor::{adamw_step, set_threads, Tensor};

    /// Against the f64 kernel on the widened values (the same f64 operations, so each
    /// f32 result is the f64 kernel's rounded once), on one and two threads; and each
    /// within its bound of the formula (a kernel that rounded m′ before p′ would differ
    /// from the f64 kernel's p′ by more than half an ulp somewhere).
    #[test]
    fn adamw_is_the_f64_step_rounded_once() {
        let n = 40_000;
        let p = f32_rows(1, n, 2.0);
        let g = f32_rows(2, n, 0.1);
        let m = f32_rows(3, n, 0.01);
        let v: Vec<f32> = f32_rows(4, n, 1e-4).iter().map(|x| x.abs()).collect();
        let t = 7i32;
        let (b1, b2, lr, wd) = (0.9f64, 0.999f64, 3e-3, 0.1);
        let c = AdamCoef {
            beta1: b1,
            one_minus_beta1: 1.0 - b1,
            beta2: b2,
            one_minus_beta2: 1.0 - b2,
            inv_bc2_sqrt: 1.0 / (1.0 - b2.powi(t)).sqrt(),
            eps: 1e-8,
            decay: 1.0 - lr * wd,
            step: lr / (1.0 - b1.powi(t)),
        };
        let wid =
            |x: &[f32]| Tensor::from_flat(x.iter().map(|&v| v as f64).collect(), &[n]).unwrap();
        let (pw, mw, vw) = adamw_step(&wid(&p), &wid(&g), &wid(&m), &wid(&v), &c).unwrap();
        let mut outs = Vec::new();
        for threads in [1, 2] {
            set_threads(threads);
            let (mut po, mut mo, mut vo) = (vec![0.0f32; n], vec![0.0f32; n], vec![0.0f32; n]);
            adamw_step_f32(&p, &g, &m, &v, &c, &mut po, &mut mo, &mut vo);
            set_threads(0);
            outs.push((po, mo, vo));
        }
        assert!(outs[0] == outs[1]);
        let (po, mo, vo) = &outs[0];
        for i in 0..n {
            assert_eq!(po[i], pw.data()[i] as f32, "p [{i}]");
            assert_eq!(mo[i], mw.data()[i] as f32, "m [{i}]");
            assert_eq!(vo[i], vw.data()[i] as f32, "v [{i}]");
            let want = p[i] as f64 * c.decay
                - (mw.data()[i] / (vw.data()[i].sqrt() * c.inv_bc2_sqrt + c.eps)) * c.step;
            assert!(
                (po[i] as f64 - want).abs()
                    <= ulp(want as f32) / 2.0 + 1e-15 * want.abs().max(1e-30)
            );
        }
    }
}
