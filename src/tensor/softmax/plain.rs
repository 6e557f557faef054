//! Softmax over the last axis, forward and backward: `activatio_softmax` and
//! `log_softmax` (recipes in docs/ops.md; rows run in parallel above a size
//! threshold, each row's result depending only on that row) and their VJPs
//! `retro_softmax`, `retro_log_softmax` (docs/ops.md).

use super::row::{exp_shifted_sum, row_max, softmax_row};
use super::row_f32::{
    log_softmax_backward_f32, log_softmax_rows_f32, softmax_backward_f32, softmax_rows_f32,
};
use crate::tensor::elem::{map_f32, operands, Operands};
use crate::tensor::par::{par_rows, PAR_MIN_CHEAP};
use crate::tensor::{
    alloc_zeros, check_same, last_axis, nonempty_last_axis, vec_for_tensor, DType, TResult, Tensor,
};

/// Softmax rows of `src` (length `c` each) into `dst`, with AVX2 for the
/// division pass where the CPU has it (same IEEE results, wider vectors).
fn softmax_rows(src: &[f64], dst: &mut [f64], c: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2 (checked above).
            unsafe { softmax_rows_avx2(src, dst, c) };
            return;
        }
    }
    softmax_rows_generic(src, dst, c)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn softmax_rows_avx2(src: &[f64], dst: &mut [f64], c: usize) {
    softmax_rows_generic(src, dst, c)
}

#[inline(always)]
fn softmax_rows_generic(src: &[f64], dst: &mut [f64], c: usize) {
    for (r, o) in src.chunks_exact(c).zip(dst.chunks_exact_mut(c)) {
        softmax_row(r, o);
    }
}

/// `x.activatio_softmax()`: softmax over the last axis (recipe above). An f32 tensor:
/// row_f32.rs's recipe (f64 inside, each element rounded once, faithful).
pub fn softmax(x: &Tensor) -> TResult<Tensor> {
    let c = last_axis("activatio_softmax", x)?;
    if x.dtype() == DType::F32 {
        return map_f32(x, |xd, o| softmax_rows_f32(xd, o, c));
    }
    let mut out = alloc_zeros(x.numel())?;
    if c > 0 {
        par_rows(x.data(), &mut out, c, c, PAR_MIN_CHEAP, |src, dst| {
            softmax_rows(src, dst, c)
        });
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `x.log_softmax()`: per last-axis row, `m = max`, `s = Σ exp(x − m)` left to
/// right, `y = (x − m) − ln s`. An f32 tensor: row_f32.rs's recipe, rounded once.
pub fn log_softmax(x: &Tensor) -> TResult<Tensor> {
    let c = last_axis("log_softmax", x)?;
    if x.dtype() == DType::F32 {
        return map_f32(x, |xd, o| log_softmax_rows_f32(xd, o, c));
    }
    let mut out = alloc_zeros(x.numel())?;
    if c > 0 {
        par_rows(x.data(), &mut out, c, c, PAR_MIN_CHEAP, |src, dst| {
            for (r, o) in src.chunks_exact(c).zip(dst.chunks_exact_mut(c)) {
                let m = row_max(r);
                o.copy_from_slice(r);
                let ls = exp_shifted_sum(o, m).ln();
                for (o, &v) in o.iter_mut().zip(r) {
                    *o = (v - m) - ls;
                }
            }
        });
    }
    Ok(Tensor::shaped_like(x, out))
}

/// `g.retro_softmax(y)`, the VJP of [`softmax`] from its result `y`: `y ⊙ (g −
/// rowsum(g ⊙ y))`, per row left to right. On f32 tensors: row_f32.rs (f64 inside,
/// rounded once).
pub fn softmax_backward(g: &Tensor, y: &Tensor) -> TResult<Tensor> {
    check_same("retro_softmax", g, y)?;
    let d = nonempty_last_axis("retro_softmax", y)?;
    match operands([g, y])? {
        Operands::F64 => {}
        Operands::F32 => return map_f32(y, |yd, o| softmax_backward_f32(g.data32(), yd, o, d)),
        Operands::Widened([g, y]) => return softmax_backward(&g, &y),
    }
    let mut out = vec_for_tensor(y.numel());
    for (gr, yr) in g.data().chunks_exact(d).zip(y.data().chunks_exact(d)) {
        let mut s = 0.0;
        for (a, b) in gr.iter().zip(yr) {
            s += a * b;
        }
        out.extend(gr.iter().zip(yr).map(|(a, b)| b * (a - s)));
    }
    Tensor::from_flat(out, y.shape())
}

/// `g.retro_log_softmax(x)`, the VJP of [`log_softmax`]: `g − softmax(x) ⊙ rowsum(g)`.
/// On f32 tensors: row_f32.rs (f64 inside, rounded once).
pub fn log_softmax_backward(g: &Tensor, x: &Tensor) -> TResult<Tensor> {
    check_same("retro_log_softmax", g, x)?;
    let d = nonempty_last_axis("retro_log_softmax", x)?;
    match operands([g, x])? {
        Operands::F64 => {}
        Operands::F32 => return map_f32(x, |xd, o| log_softmax_backward_f32(g.data32(), xd, o, d)),
        Operands::Widened([g, x]) => return log_softmax_backward(&g, &x),
    }
    let mut out = vec_for_tensor(x.numel());
    let mut p = vec![0.0; d];
    for (gr, xr) in g.data().chunks_exact(d).zip(x.data().chunks_exact(d)) {
        softmax_row(xr, &mut p);
        let s: f64 = gr.iter().fold(0.0, |a, b| a + b);
        out.extend(gr.iter().zip(&p).map(|(a, q)| a - q * s));
    }
    Tensor::from_flat(out, x.shape())
}
