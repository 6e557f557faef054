//! The GELU family, forward and backward: `gelu` (`u = c·(x + β·((x·x)·x))`,
//! `(0.5·x)·(1 + tanh u)` with the correctly rounded tanh), `gelu_cum_derivata` (GELU
//! and its derivative in one pass, the save-split of a companion's forward sweep),
//! `gelu_per_exp` (tanh through the exp identity, the bert shim's recipe), and their
//! VJPs `retro_gelu`, `retro_gelu_per_exp`, `retro_gelu_derivata`. GELU runs inside
//! the vectorised tanh maps through their [`TanhOf`] interface ([`Gelu`],
//! [`GeluTanh`]), so its element function is vectorised with the tanh.

use std::mem::MaybeUninit;

use super::gelu_f32::{
    gelu_backward_f32, gelu_f32_map, gelu_per_exp_backward_f32, gelu_per_exp_f32_map,
    gelu_with_derivative_f32,
};
use crate::tensor::elem::{map_f32, new_f32_pair, operands, Operands};
use crate::tensor::elementwise::{map_slices, mul, unary_par};
use crate::tensor::elementwise_f32::{binary_f32, BinOp};
use crate::tensor::par::{build_from, SendPtr, PAR_MIN_CHEAP};
use crate::tensor::tanh::{map_tanh_cr, tanh_exp, TanhOf};
use crate::tensor::{
    alloc, check_same, fmt_shape, shape_difference, vec_for_tensor, DType, TResult, Tensor,
    TensorError,
};

/// GELU constants: c = √(2/π) computed in f64, β = 0.044715.
pub const GELU_C: f64 = 0.7978845608028654;
pub const GELU_BETA: f64 = 0.044715;

#[inline(always)]
fn gelu_with(x: f64, tanh_fn: impl Fn(f64) -> f64) -> f64 {
    let u = GELU_C * (x + GELU_BETA * ((x * x) * x));
    let t = tanh_fn(u);
    (0.5 * x) * (1.0 + t)
}

/// GELU's tanh argument `u = c·(x + β·((x·x)·x))`.
#[inline(always)]
fn gelu_arg(x: f64) -> f64 {
    GELU_C * (x + GELU_BETA * ((x * x) * x))
}

/// GELU through the tanh maps: `(0.5·x)·(1 + tanh_cr(u))` (the order of
/// [`gelu_with`]).
pub(in crate::tensor) struct Gelu;

impl TanhOf for Gelu {
    #[inline(always)]
    fn arg(x: f64) -> f64 {
        gelu_arg(x)
    }
    #[inline(always)]
    fn out(x: f64, t: f64) -> f64 {
        (0.5 * x) * (1.0 + t)
    }
}

/// GELU's tangent alone: `tanh_cr(u)` (what `gelu_cum_derivata` and the GELU
/// backward's recomputation need).
pub(in crate::tensor) struct GeluTanh;

impl TanhOf for GeluTanh {
    const OUT_IS_T: bool = true;
    #[inline(always)]
    fn arg(x: f64) -> f64 {
        gelu_arg(x)
    }
    #[inline(always)]
    fn out(_: f64, t: f64) -> f64 {
        t
    }
}

/// `x.gelu()`: `u = c·(x + β·((x·x)·x))`, `t = tanh(u)` (correctly rounded),
/// `y = (0.5·x)·(1 + t)`. An f32 tensor: `gelu_f32` per element (gelu_f32.rs,
/// faithfully rounded).
pub fn gelu(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return map_f32(x, gelu_f32_map);
    }
    map_slices(x, map_tanh_cr::<Gelu>)
}

/// `x.gelu_cum_derivata()`: GELU and its derivative in one pass, `(y, d)` with
/// `t = tanh(u)` (correctly rounded, `u = c·(x + β·((x·x)·x))`), `y = (0.5·x)·(1 + t)`
/// (the bits of `x.gelu()`) and `d = 0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du`,
/// `du = c·(1 + (3β)·(x·x))` — the factor [`gelu_vjp`] multiplies the cotangent by. A
/// companion's forward sweep computes GELU this way and keeps `d`, so its backward is
/// `g ⊙ d` ([`gelu_backward_derivata`]): no tanh again, and only `g` and `d` read.
/// An f32 tensor: both from one exponential per element, each rounded once
/// (gelu_f32.rs: `y` faithfully rounded).
pub fn gelu_cum_derivata(x: &Tensor) -> TResult<(Tensor, Tensor)> {
    if x.dtype() == DType::F32 {
        let xd = x.data32();
        return new_f32_pair(x.shape(), |y, d| gelu_with_derivative_f32(xd, y, d));
    }
    /// Elements whose tangents go through one vectorised map call (in L1).
    const CHUNK: usize = 256;
    let xd = x.data();
    let mut dout = alloc(x.numel())?;
    // SAFETY: every slot is written below (the blocks of `build_from` cover them all).
    let dbase = SendPtr(unsafe { dout.assume_filled() });
    #[cfg(target_arch = "x86_64")]
    let wide = std::arch::is_x86_feature_detected!("avx512f");
    let y = build_from(x.numel(), 1, PAR_MIN_CHEAP, |start, dst| {
        // SAFETY: this block's slots of `dout` are written by this call alone.
        let dd = unsafe { std::slice::from_raw_parts_mut(dbase.get().add(start), dst.len()) };
        let xs = &xd[start..start + dst.len()];
        let mut t = [0.0; CHUNK];
        for ((xc, yc), dc) in xs
            .chunks(CHUNK)
            .zip(dst.chunks_mut(CHUNK))
            .zip(dd.chunks_mut(CHUNK))
        {
            let t = &mut t[..xc.len()];
            map_tanh_cr::<GeluTanh>(xc, t);
            #[cfg(target_arch = "x86_64")]
            if wide {
                // SAFETY: the CPU has AVX-512F (checked above).
                unsafe { gelu_parts_avx512(xc, t, yc, dc) };
                continue;
            }
            gelu_parts(xc, t, yc, dc);
        }
    })?;
    Ok((Tensor::shaped_like(x, y), Tensor::shaped_like(x, dout)))
}

/// GELU `y` and its derivative `d` from x and the tangent t, element by element.
#[inline(always)]
fn gelu_parts(xs: &[f64], ts: &[f64], ys: &mut [MaybeUninit<f64>], ds: &mut [f64]) {
    for (((&xv, &tv), yo), d) in xs.iter().zip(ts).zip(ys).zip(ds) {
        yo.write((0.5 * xv) * (1.0 + tv));
        *d = gelu_derivative(xv, tv);
    }
}

/// [`gelu_parts`] compiled for AVX-512 (wider vectors, the same operations per
/// element, no FMA contraction).
///
/// # Safety
/// The CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn gelu_parts_avx512(xs: &[f64], ts: &[f64], ys: &mut [MaybeUninit<f64>], ds: &mut [f64]) {
    gelu_parts(xs, ts, ys, ds)
}

/// GELU's derivative at `x` given its tangent `t = tanh(u)`:
/// `0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du`, `du = c·(1 + (3β)·(x·x))`.
#[inline(always)]
fn gelu_derivative(x: f64, t: f64) -> f64 {
    let du = GELU_C * (1.0 + (3.0 * GELU_BETA) * (x * x));
    0.5 * (1.0 + t) + ((0.5 * x) * (1.0 - t * t)) * du
}

/// GELU's VJP at `x` for the cotangent `g`, given its tangent `t = tanh(u)`:
/// `g·(0.5·(1 + t) + ((0.5·x)·(1 − t·t))·du)` ([`gelu_derivative`] times g).
#[inline(always)]
fn gelu_vjp(g: f64, x: f64, t: f64) -> f64 {
    g * gelu_derivative(x, t)
}

/// `g.retro_gelu_derivata(d)`: `g ⊙ d` for the derivative `d` that
/// [`gelu_cum_derivata`] gave — the bits of `retro_gelu(g, x)`. `g` must have `d`'s
/// shape. On f32 tensors the product of the two f32, correctly rounded: `d` was
/// rounded once already, so this is `retro_gelu(g, x)` within 1½ ulps, not its bits.
pub fn gelu_backward_derivata(g: &Tensor, d: &Tensor) -> TResult<Tensor> {
    if g.shape() != d.shape() {
        return Err(TensorError::shape(format!(
            "retro_gelu_derivata: cotangent {} does not match the derivative {} ({})",
            fmt_shape(g.shape()),
            fmt_shape(d.shape()),
            shape_difference(g.shape(), d.shape())
        )));
    }
    match operands([g, d])? {
        Operands::F64 => mul(g, d),
        Operands::F32 => map_f32(g, |gd, o| {
            let sh = g.shape();
            binary_f32(BinOp::Mul, gd, sh, d.data32(), sh, sh, o)
        }),
        Operands::Widened([g, d]) => mul(&g, &d),
    }
}

/// GELU with tanh through the exp identity (the bert shim's recipe). An f32 tensor: the
/// same recipe in f64, rounded once (gelu_f32.rs).
pub fn gelu_exp_identity(x: &Tensor) -> TResult<Tensor> {
    if x.dtype() == DType::F32 {
        return map_f32(x, gelu_per_exp_f32_map);
    }
    unary_par(x, |v| gelu_with(v, tanh_exp))
}

/// `g.retro_gelu(x)`: GELU backward, `g·(0.5·(1+t) + ((0.5·x)·(1−t·t))·du)`,
/// `du = c·(1 + (3β)·(x·x))` ([`gelu_vjp`]), with `t = tanh(u)` recomputed from `x`.
pub fn gelu_backward(g: &Tensor, x: &Tensor) -> TResult<Tensor> {
    gelu_backward_with(g, x, false)
}

/// `g.retro_gelu_per_exp(x)`: [`gelu_backward`] for [`gelu_exp_identity`], `t` through
/// the exp identity.
pub fn gelu_exp_identity_backward(g: &Tensor, x: &Tensor) -> TResult<Tensor> {
    gelu_backward_with(g, x, true)
}

fn gelu_backward_with(g: &Tensor, x: &Tensor, exp_identity: bool) -> TResult<Tensor> {
    check_same("retro_gelu", g, x)?;
    match operands([g, x])? {
        Operands::F64 => {}
        // g·gelu′(x) in f64, rounded once (gelu_f32.rs).
        Operands::F32 => {
            let (gd, xd) = (g.data32(), x.data32());
            return map_f32(x, |_, o| {
                if exp_identity {
                    gelu_per_exp_backward_f32(gd, xd, o)
                } else {
                    gelu_backward_f32(gd, xd, o)
                }
            });
        }
        Operands::Widened([g, x]) => return gelu_backward_with(&g, &x, exp_identity),
    }
    // t = tanh(u) for every element first, through the vectorised correctly rounded
    // map (bit-identical to `tanh_cr` per element), then the derivative.
    let mut t = vec![0.0; x.numel()];
    if exp_identity {
        for (tv, &xv) in t.iter_mut().zip(x.data()) {
            *tv = tanh_exp(GELU_C * (xv + GELU_BETA * ((xv * xv) * xv)));
        }
    } else {
        map_tanh_cr::<GeluTanh>(x.data(), &mut t);
    }
    let mut out = vec_for_tensor(x.numel());
    out.extend(
        g.data()
            .iter()
            .zip(x.data())
            .zip(&t)
            .map(|((&gv, &xv), &t)| gelu_vjp(gv, xv, t)),
    );
    Tensor::from_flat(out, x.shape())
}

#[cfg(test)]
mod tests {
    #[test]
    fn gelu_c_is_sqrt_two_over_pi() {
        assert_eq!(super::GELU_C, (2.0f64 / std::f64::consts::PI).sqrt());
    }

    /// The GELU map's part of the tanh's fast-phase test (tensor/tanh/mod.rs): on the
    /// same inputs, scaled, the vectorised map gives GELU with the accurate tanh.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn fast_phase_matches_accurate_path() {
        use super::{gelu_with, map_tanh_cr, Gelu};
        use crate::tensor::tanh::tanh_core_for_tests as tanh_core;
        let xs = crate::tensor::tanh::tests::fast_phase_inputs();
        let gx: Vec<f64> = xs.iter().step_by(4).map(|x| x * 0.7).collect();
        let mut out = vec![0.0; gx.len()];
        map_tanh_cr::<Gelu>(&gx, &mut out);
        for (&x, &o) in gx.iter().zip(&out) {
            let w = gelu_with(x, tanh_core::<true>);
            assert_eq!(o.to_bits(), w.to_bits(), "map gelu, x = {x:e}");
        }
    }
}
