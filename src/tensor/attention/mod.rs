//! Causal multi-head self-attention as two fused ops on `[B, T, D]` activations
//! with `H` heads of width `dh = D/H`, each head read in place (no split/join copies):
//!
//! * `q.attentio_pondera(k, H)` → `P [B, H, T, T]`: per batch b and head h,
//!   `P_bh = softmax_causalis(q_bh · k_bhᵀ, dh^−½, −1e9)`, where `q_bh` is the
//!   `[T, dh]` block of columns `h·dh…` of batch b;
//! * `p.attentio_applica(v)` → `y [B, T, D]` with `y_bh = P_bh · v_bh`;
//! * their VJPs `retro_attentio_pondera` (∂q, ∂k from ∂P) and `retro_attentio_applica`
//!   (∂P, ∂v from ∂y).
//!
//! Together they compute what gradus wrote as `x.forma([B, T, H, dh]).permute([0, 2,
//! 1, 3])` for q, k, v, `q.matmul_nt(k).softmax_causalis(dh^−½, −1e9) · v`, then the
//! heads permuted back and joined — and with the same bits: every product is the
//! GEMM kernel's 2-D product over the same values in the same order (one FMA chain per
//! element; the gathered head blocks are what the permute wrote), and every softmax
//! row is `softmax/causal.rs`'s row function. What is saved is the permute copies, the
//! `[B, H, T, T]` score tensor between the product and the softmax (a block stays in
//! cache), and the score gradient between the softmax VJP and its two products.
//!
//! The work runs over batches, split over threads in contiguous groups (each batch's
//! outputs depend only on its own inputs, so never on the thread count).
//!
//! **f32.** Every operand f32: the same code on f32 storage (generic over the element,
//! heads.rs's [`Causal`]), each product the sgemm's (`gemm/sgemm/`, its unpacked kernel
//! with the causal forms where the f64 path takes the AVX-512 one), each softmax row
//! softmax/causal_f32.rs's with the scale `dh^−½` and the mask −1e9 rounded once to f32
//! — so the fused f32 ops are the bits of the unfused f32 chain (`matmul_nt` on the
//! permuted heads, the f32 `softmax_causalis`, `·`) as the f64 ones are of the f64
//! chain. Operands of both types are computed in f64 (the f32 ones widened exactly).

mod heads;

use heads::{same_shape, Causal, Heads, Kernel};

use super::elem::{by_dtype, Float, ResultBuf};
use super::par_f32::SendPtrOf;
use super::{checked_numel, fmt_shape, pool, threads, TResult, Tensor, TensorError};

/// Batches go to several threads from this many multiply-adds per call.
const PAR_MIN_WORK: usize = 1 << 20;

/// `f(b)` for every batch b, in contiguous groups over the pool when `work` is large.
fn over_batches(nb: usize, work: usize, f: &(dyn Fn(usize) + Sync)) {
    let workers = threads().min(nb);
    if workers > 1 && work >= PAR_MIN_WORK {
        let per = nb.div_ceil(workers);
        pool::run_blocks(nb.div_ceil(per), &|i| {
            for b in i * per..((i + 1) * per).min(nb) {
                f(b);
            }
        });
    } else {
        for b in 0..nb {
            f(b);
        }
    }
}

/// A new buffer of `n` elements, every one of which the caller writes, and its
/// base pointer.
fn output<T: Float>(n: usize) -> TResult<(T::Out, SendPtrOf<T>)> {
    let mut out = T::alloc(n)?;
    // SAFETY: each caller writes all n elements before the buffer is read.
    let base = SendPtrOf::new(unsafe { out.assume_filled() });
    Ok((out, base))
}

/// `q.attentio_pondera(k, heads)`: the causal attention weights `[B, H, T, T]`.
pub fn attention_weights(q: &Tensor, k: &Tensor, heads: usize) -> TResult<Tensor> {
    by_dtype!(weights_in, [q, k], heads)
}

fn weights_in<T: Causal>(q: &Tensor, k: &Tensor, heads: usize) -> TResult<Tensor> {
    const NAME: &str = "attentio_pondera";
    let g = Heads::of(NAME, q, heads)?;
    same_shape(NAME, "keys", k, q)?;
    let shape = g.weights_shape();
    let (out, base) = output::<T>(checked_numel(&shape)?)?;
    let (qd, kd) = (T::data(q), T::data(k));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work(), &|b| {
        let mut e = Vec::new();
        for h in 0..g.h {
            // SAFETY: block (b, h) of the output is written by this call alone.
            let p = unsafe {
                std::slice::from_raw_parts_mut(base.get().add((b * g.h + h) * g.block()), g.block())
            };
            g.weights_head(kern, qd, kd, b, h, p, &mut e);
        }
    });
    out.into_tensor(&shape)
}

/// `p.attentio_applica(v)`: `y [B, T, D]` with `y_bh = P_bh · v_bh`.
pub fn attention_apply(p: &Tensor, v: &Tensor) -> TResult<Tensor> {
    by_dtype!(apply_in, [p, v])
}

fn apply_in<T: Causal>(p: &Tensor, v: &Tensor) -> TResult<Tensor> {
    const NAME: &str = "attentio_applica";
    let g = weights_and_values(NAME, p, v)?;
    let (out, base) = output::<T>(v.numel())?;
    let (pd, vd) = (T::data(p), T::data(v));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work(), &|b| {
        let mut scratch = Vec::new();
        for h in 0..g.h {
            let ph = &pd[(b * g.h + h) * g.block()..][..g.block()];
            // SAFETY: batch b of the output is written by this call alone.
            unsafe { g.apply_head(kern, ph, vd, b, h, base.get(), &mut scratch, false) };
        }
    });
    out.into_tensor(v.shape())
}

/// `q.attentio(k, v, heads)`: `q.attentio_pondera(k, heads).attentio_applica(v)` with
/// each head's weights kept in a scratch block instead of a `[B, H, T, T]` tensor (the
/// same per-head steps, so the same bits).
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, heads: usize) -> TResult<Tensor> {
    by_dtype!(attention_in, [q, k, v], heads)
}

fn attention_in<T: Causal>(q: &Tensor, k: &Tensor, v: &Tensor, heads: usize) -> TResult<Tensor> {
    const NAME: &str = "attentio";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    let (out, base) = output::<T>(v.numel())?;
    let (qd, kd, vd) = (T::data(q), T::data(k), T::data(v));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let (mut p, mut scratch, mut e) = (vec![T::ZERO; g.block()], Vec::new(), Vec::new());
        for h in 0..g.h {
            let causal = g.weights_head(kern, qd, kd, b, h, &mut p, &mut e);
            // SAFETY: batch b of the output is written by this call alone.
            unsafe { g.apply_head(kern, &p, vd, b, h, base.get(), &mut scratch, causal) };
        }
    });
    out.into_tensor(v.shape())
}

/// `q.attentio_cum_ponderibus(k, v, heads)`: `(y, p)` with `p =
/// q.attentio_pondera(k, heads)` and `y = p.attentio_applica(v)` — the form a companion's
/// forward sweep gives `attentio`, keeping the weights for [`attention_backward`]; each
/// head's product is taken while its weights block is in cache (the same per-head steps,
/// so the same bits).
pub fn attention_with_weights(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor)> {
    by_dtype!(with_weights_in, [q, k, v], heads)
}

fn with_weights_in<T: Causal>(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor)> {
    const NAME: &str = "attentio_cum_ponderibus";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    let shape = g.weights_shape();
    let (p, p_base) = output::<T>(checked_numel(&shape)?)?;
    let (out, base) = output::<T>(v.numel())?;
    let (qd, kd, vd) = (T::data(q), T::data(k), T::data(v));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let (mut scratch, mut e) = (Vec::new(), Vec::new());
        for h in 0..g.h {
            // SAFETY: block (b, h) of the weights and batch b of the output are written
            // by this call alone.
            unsafe {
                let at = (b * g.h + h) * g.block();
                let ph = std::slice::from_raw_parts_mut(p_base.get().add(at), g.block());
                let causal = g.weights_head(kern, qd, kd, b, h, ph, &mut e);
                g.apply_head(kern, ph, vd, b, h, base.get(), &mut scratch, causal);
            }
        }
    });
    Ok((out.into_tensor(v.shape())?, p.into_tensor(&shape)?))
}

/// The VJP of [`attention_apply`]: `(∂P, ∂v)` from `∂y` — per head
/// `∂P_bh = ∂y_bh · v_bhᵀ` and `∂v_bh = P_bhᵀ · ∂y_bh`.
pub fn attention_apply_backward(gy: &Tensor, p: &Tensor, v: &Tensor) -> TResult<(Tensor, Tensor)> {
    by_dtype!(apply_backward_in, [gy, p, v])
}

fn apply_backward_in<T: Causal>(gy: &Tensor, p: &Tensor, v: &Tensor) -> TResult<(Tensor, Tensor)> {
    const NAME: &str = "retro_attentio_applica";
    let g = weights_and_values(NAME, p, v)?;
    same_shape(NAME, "cotangent", gy, v)?;
    let (gp, gp_base) = output::<T>(p.numel())?;
    let (gv, gv_base) = output::<T>(v.numel())?;
    let (pd, vd, gd) = (T::data(p), T::data(v), T::data(gy));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let mut scratch = Vec::new();
        for h in 0..g.h {
            let at = (b * g.h + h) * g.block();
            // SAFETY: block (b, h) of ∂P and batch b of ∂v are written by this call alone.
            unsafe {
                let dp = std::slice::from_raw_parts_mut(gp_base.get().add(at), g.block());
                let ph = &pd[at..at + g.block()];
                let gv = gv_base.get();
                g.apply_head_backward(kern, gd, ph, vd, b, h, dp, gv, &mut scratch, false);
            }
        }
    });
    Ok((gp.into_tensor(p.shape())?, gv.into_tensor(v.shape())?))
}

/// The weights' shape check of the weights VJPs: `p` and, when given, `gp` must be
/// `[B, H, T, T]` for the queries.
fn check_weights(
    name: &str,
    g: &Heads,
    p: &Tensor,
    gp: Option<&Tensor>,
    q: &Tensor,
) -> TResult<()> {
    if p.shape() == g.weights_shape() && gp.is_none_or(|gp| gp.shape() == p.shape()) {
        return Ok(());
    }
    let cot = gp.map_or(String::new(), |gp| {
        format!(" and cotangent {}", fmt_shape(gp.shape()))
    });
    let want = g.weights_shape();
    let why = match gp {
        Some(gp) if p.shape() == want => {
            format!("cotangent: {}", super::shape_difference(gp.shape(), &want))
        }
        _ => format!("weights: {}", super::shape_difference(p.shape(), &want)),
    };
    Err(TensorError::shape(format!(
        "{name}: weights {}{cot} must be {} for queries {} ({why})",
        fmt_shape(p.shape()),
        fmt_shape(&want),
        fmt_shape(q.shape())
    )))
}

/// The VJP of [`attention_weights`]: `(∂q, ∂k)` from `∂P` — per head the causal
/// softmax VJP `∂S` (with the scale), then `∂q_bh = ∂S · k_bh`, `∂k_bh = ∂Sᵀ · q_bh`.
pub fn attention_weights_backward(
    gp: &Tensor,
    p: &Tensor,
    q: &Tensor,
    k: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor)> {
    by_dtype!(weights_backward_in, [gp, p, q, k], heads)
}

fn weights_backward_in<T: Causal>(
    gp: &Tensor,
    p: &Tensor,
    q: &Tensor,
    k: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor)> {
    const NAME: &str = "retro_attentio_pondera";
    let g = Heads::of(NAME, q, heads)?;
    same_shape(NAME, "keys", k, q)?;
    check_weights(NAME, &g, p, Some(gp), q)?;
    let (gq, gq_base) = output::<T>(q.numel())?;
    let (gk, gk_base) = output::<T>(k.numel())?;
    let (pd, gpd, qd, kd) = (T::data(p), T::data(gp), T::data(q), T::data(k));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let (mut scratch, mut ds) = (Vec::new(), vec![T::ZERO; g.block()]);
        for h in 0..g.h {
            let at = (b * g.h + h) * g.block();
            let blocks = (&gpd[at..at + g.block()], &pd[at..at + g.block()]);
            let outs = (gq_base.get(), gk_base.get());
            // SAFETY: batch b of ∂q and of ∂k is written by this call alone.
            unsafe {
                g.weights_head_backward(
                    kern,
                    blocks,
                    (qd, kd),
                    b,
                    h,
                    &mut ds,
                    outs,
                    &mut scratch,
                    false,
                )
            };
        }
    });
    Ok((gq.into_tensor(q.shape())?, gk.into_tensor(k.shape())?))
}

/// `g.retro_attentio(p, q, k, v, heads)`: the VJP of [`attention`] — `(∂q, ∂k, ∂v)`
/// from `∂y` and the kept weights `p` — as [`attention_apply_backward`] then
/// [`attention_weights_backward`] per head, each head's `∂P` in a scratch block
/// instead of a `[B, H, T, T]` tensor (the same per-head steps, so the same bits).
pub fn attention_backward(
    gy: &Tensor,
    p: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor, Tensor)> {
    by_dtype!(backward_in, [gy, p, q, k, v], heads)
}

fn backward_in<T: Causal>(
    gy: &Tensor,
    p: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    heads: usize,
) -> TResult<(Tensor, Tensor, Tensor)> {
    const NAME: &str = "retro_attentio";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    same_shape(NAME, "cotangent", gy, q)?;
    check_weights(NAME, &g, p, None, q)?;
    let (gq, gq_base) = output::<T>(q.numel())?;
    let (gk, gk_base) = output::<T>(k.numel())?;
    let (gv, gv_base) = output::<T>(v.numel())?;
    let (pd, gd, qd, kd, vd) = (T::data(p), T::data(gy), T::data(q), T::data(k), T::data(v));
    let kern = Kernel::for_heads::<T>(&g);
    over_batches(g.b, g.work().saturating_mul(4), &|b| {
        let mut scratch = Vec::new();
        let (mut dp, mut ds) = (vec![T::ZERO; g.block()], vec![T::ZERO; g.block()]);
        for h in 0..g.h {
            let at = (b * g.h + h) * g.block();
            let ph = &pd[at..at + g.block()];
            let outs = (gq_base.get(), gk_base.get());
            let causal = g.causal_zero(ph);
            // SAFETY: batch b of ∂q, ∂k and ∂v is written by this call alone.
            unsafe {
                let gv = gv_base.get();
                g.apply_head_backward(kern, gd, ph, vd, b, h, &mut dp, gv, &mut scratch, causal);
                g.weights_head_backward(
                    kern,
                    (&dp, ph),
                    (qd, kd),
                    b,
                    h,
                    &mut ds,
                    outs,
                    &mut scratch,
                    causal,
                );
            }
        }
    });
    Ok((
        gq.into_tensor(q.shape())?,
        gk.into_tensor(k.shape())?,
        gv.into_tensor(v.shape())?,
    ))
}

/// The heads of values `v [B, T, D]` for weights `p [B, H, T, T]`.
fn weights_and_values(name: &str, p: &Tensor, v: &Tensor) -> TResult<Heads> {
    let &[_, heads, _, _] = p.shape() else {
        return Err(TensorError::shape(format!(
            "{name}: needs weights [B, H, T, T] (rank 4), found {}",
            fmt_shape(p.shape())
        )));
    };
    let g = Heads::of(name, v, heads)?;
    if p.shape() != g.weights_shape() {
        return Err(TensorError::shape(format!(
            "{name}: weights {} do not fit values {} ({} expected: {})",
            fmt_shape(p.shape()),
            fmt_shape(v.shape()),
            fmt_shape(&g.weights_shape()),
            super::shape_difference(p.shape(), &g.weights_shape())
        )));
    }
    Ok(g)
}
