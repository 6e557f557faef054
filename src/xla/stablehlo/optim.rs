//! The lowering of the fused optimizer update `p.adamw_passus(g, m, v, c)`: AdamW's
//! step written out per element as src/tensor/optim.rs defines it, with the eight
//! coefficients `c` — literals, or numbers the device computes (the bias
//! corrections of step t), so one program serves every step.

use super::lower::{fill_with, Args, Lowered, Operand};
use super::{Binary, Function, Unary};

/// `m' = m·β₁ + g·(1 − β₁)`, `v' = v·β₂ + (g·g)·(1 − β₂)`,
/// `d = √v'·(1/√(1 − β₂ᵗ)) + ε`, `p' = p·decay − (m'/d)·step` → (p', m', v'), the
/// coefficients in the order (β₁, 1 − β₁, β₂, 1 − β₂, 1/√(1 − β₂ᵗ), ε, decay, step).
pub(super) fn adamw_passus(f: &mut Function, a: &Args) -> Lowered {
    let pt = a.ty(f, 0)?;
    for i in 1..4 {
        let t = a.ty(f, i)?;
        if t != pt {
            return a.err(format!("operand {i} {t} does not match the parameter {pt}"));
        }
    }
    let coefs = match a.get(4)? {
        Operand::List(c) if c.len() == 8 => c.clone(),
        other => return a.err(format!("needs a lista of 8 numbers, found {other:?}")),
    };
    let mut c = Vec::with_capacity(8);
    for o in &coefs {
        c.push(fill_with(f, a, o, pt.elem, &pt.dims)?);
    }
    let (p, g, m, v) = (a.tensor(0)?, a.tensor(1)?, a.tensor(2)?, a.tensor(3)?);
    let mb = f.binary(Binary::Multiply, m, c[0]);
    let gb = f.binary(Binary::Multiply, g, c[1]);
    let m2 = f.binary(Binary::Add, mb, gb);
    let vb = f.binary(Binary::Multiply, v, c[2]);
    let gg = f.binary(Binary::Multiply, g, g);
    let ggb = f.binary(Binary::Multiply, gg, c[3]);
    let v2 = f.binary(Binary::Add, vb, ggb);
    let root = f.unary(Unary::Sqrt, v2);
    let scaled = f.binary(Binary::Multiply, root, c[4]);
    let d = f.binary(Binary::Add, scaled, c[5]);
    let pd = f.binary(Binary::Multiply, p, c[6]);
    let q = f.binary(Binary::Divide, m2, d);
    let qs = f.binary(Binary::Multiply, q, c[7]);
    let p2 = f.binary(Binary::Subtract, pd, qs);
    Ok(vec![p2, m2, v2])
}
