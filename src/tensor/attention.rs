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
//! row is `causal.rs`'s row function. What is saved is the permute copies, the
//! `[B, H, T, T]` score tensor between the product and the softmax (a block stays in
//! cache), and the score gradient between the softmax VJP and its two products.
//!
//! The work runs over batches, split over threads in contiguous groups (each batch's
//! outputs depend only on its own inputs, so never on the thread count).

use std::mem::MaybeUninit;

use super::causal::{causal_row_backward, causal_rows};
use super::elementwise::SendPtr;
use super::matmul::{exact_strided, gemm_fast, Strides, EXACT_MATMUL_MAX_WORK};
use super::{alloc, checked_numel, fmt_shape, pool, threads, TResult, Tensor, TensorError};

/// The mask value of the masked scores (gradus's causal attention uses −1e9).
const MASKED: f64 = -1e9;

/// Batches go to several threads from this many multiply-adds per call.
const PAR_MIN_WORK: usize = 1 << 20;

/// The geometry of `[B, T, D]` activations split into `h` heads of width `dh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Heads {
    b: usize,
    t: usize,
    d: usize,
    h: usize,
    dh: usize,
}

impl Heads {
    /// The heads of `x [B, T, D]`: rank 3, T ≥ 1, `1 ≤ heads` dividing D ≥ 1.
    fn of(name: &str, x: &Tensor, heads: usize) -> TResult<Heads> {
        let &[b, t, d] = x.shape() else {
            return Err(TensorError::shape(format!(
                "{name}: needs [B, T, D] activations (rank 3), found {}",
                fmt_shape(x.shape())
            )));
        };
        if t == 0 || d == 0 {
            return Err(TensorError::shape(format!(
                "{name}: needs T ≥ 1 and D ≥ 1, found {}",
                fmt_shape(x.shape())
            )));
        }
        if heads == 0 || d % heads != 0 {
            return Err(TensorError::shape(format!(
                "{name}: {heads} heads do not divide the width {d} of {}",
                fmt_shape(x.shape())
            )));
        }
        Ok(Heads {
            b,
            t,
            d,
            h: heads,
            dh: d / heads,
        })
    }

    /// The shape of the attention weights, `[B, H, T, T]`.
    fn weights_shape(&self) -> [usize; 4] {
        [self.b, self.h, self.t, self.t]
    }

    /// `[T·T]` elements of one head's weights.
    fn block(&self) -> usize {
        self.t * self.t
    }

    /// Head `h` of batch `b` of `x` (`[B, T, D]`) as a `[T, dh]` matrix read in place:
    /// the data from its first element on, and its strides.
    fn head<'a>(&self, x: &'a [f64], b: usize, h: usize) -> (&'a [f64], Strides) {
        let at = b * self.t * self.d + h * self.dh;
        (
            &x[at..],
            Strides {
                row: self.d,
                col: 1,
            },
        )
    }

    /// [`Heads::head`] read transposed (`[dh, T]`).
    fn head_t<'a>(&self, x: &'a [f64], b: usize, h: usize) -> (&'a [f64], Strides) {
        let (data, _) = self.head(x, b, h);
        (
            data,
            Strides {
                row: 1,
                col: self.d,
            },
        )
    }

    /// Head `h` of batch `b` of the `[B, T, D]` buffer at `out`: its first element (a
    /// `[T, dh]` matrix of row stride D).
    fn head_mut(&self, out: *mut f64, b: usize, h: usize) -> *mut f64 {
        out.wrapping_add(b * self.t * self.d + h * self.dh)
    }

    /// `dh^−½`, as gradus computes the scale (`(dh ↦ fractus).potentia(-0.5)`).
    fn scale(&self) -> f64 {
        (self.dh as f64).powf(-0.5)
    }

    /// Multiply-adds of one product over every head.
    fn work(&self) -> usize {
        self.b
            .saturating_mul(self.h)
            .saturating_mul(self.block())
            .saturating_mul(self.dh)
    }
}

/// `dst = src` for a short row, eight elements at a time (a `memcpy` call per head
/// row costs more than the copy).
#[inline(always)]
fn copy_row(dst: &mut [f64], src: &[f64]) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (d, s) in (&mut d).zip(&mut s) {
        let v: [f64; 8] = s.try_into().expect("chunk of 8");
        d.copy_from_slice(&v);
    }
    for (d, s) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *d = *s;
    }
}

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
fn output(n: usize) -> TResult<(super::buf::Out, SendPtr)> {
    let mut out = alloc(n)?;
    // SAFETY: each caller writes all n elements before the buffer is read.
    let base = SendPtr(unsafe { out.assume_filled() });
    Ok((out, base))
}

/// Which kernel the products take: the in-order one when all of an op's products
/// together are small — `matmul`'s automatic choice for the batched products of the
/// unfused chain (`m·n·k` summed over the batch), so the same bits — else the GEMM.
#[derive(Clone, Copy)]
struct Kernel {
    exact: bool,
}

impl Kernel {
    fn for_heads(g: &Heads) -> Kernel {
        Kernel {
            exact: g.work() <= EXACT_MATMUL_MAX_WORK,
        }
    }

    /// `c = a·b` (`m×n`, row-major) for `a` (`m×k`) and `b` (`k×n`) given as (data,
    /// strides); `c` holds `m·n` elements.
    fn product(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: (&[f64], Strides),
        b: (&[f64], Strides),
        c: &mut [f64],
    ) {
        let ((ad, sa), (bd, sb)) = (a, b);
        assert!(c.len() == m * n && sa.covers(m, k, ad.len()) && sb.covers(k, n, bd.len()));
        if self.exact {
            let mut at = 0;
            // SAFETY: k ≥ 1 and the strides address elements of a and b only (asserted).
            unsafe {
                exact_strided(m, n, k, ad, sa, bd, sb, |v| {
                    c[at] = v;
                    at += 1;
                })
            };
            return;
        }
        // SAFETY: the strides address elements of a and b only (asserted; m, n, k ≥ 1
        // for every call here), and c is an exclusive m·n slice.
        unsafe { gemm_fast(m, n, k, ad, sa, bd, sb, c.as_mut_ptr()) }
    }

    /// [`Kernel::product`] written into the `m×n` matrix at `out` of row stride `ldc`
    /// (a head of a `[B, T, D]` result): directly where the GEMM would take the
    /// product with its unpacked kernel (the same call, so the same bits), else through
    /// `scratch`.
    ///
    /// # Safety
    /// `out` addresses that matrix, which no other thread accesses during the call.
    #[allow(clippy::too_many_arguments)]
    unsafe fn product_into(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: (&[f64], Strides),
        b: (&[f64], Strides),
        out: *mut f64,
        ldc: usize,
        scratch: &mut Vec<f64>,
    ) {
        #[cfg(target_arch = "x86_64")]
        if !self.exact {
            let ((ad, sa), (bd, sb)) = (a, b);
            // SAFETY: as required; the strides address elements of a and b only
            // (checked by the callee).
            if unsafe { super::gemm_avx512::gemm_unpacked_into(m, n, k, ad, sa, bd, sb, out, ldc) }
            {
                return;
            }
        }
        scratch.resize(m * n, 0.0);
        self.product(m, n, k, a, b, scratch);
        for (i, row) in scratch.chunks_exact(n).enumerate() {
            // SAFETY: row i of the output matrix (as required).
            let dst = unsafe { std::slice::from_raw_parts_mut(out.add(i * ldc), n) };
            copy_row(dst, row);
        }
    }
}

/// `q.attentio_pondera(k, heads)`: the causal attention weights `[B, H, T, T]`.
pub fn attention_weights(q: &Tensor, k: &Tensor, heads: usize) -> TResult<Tensor> {
    const NAME: &str = "attentio_pondera";
    let g = Heads::of(NAME, q, heads)?;
    same_shape(NAME, "keys", k, q)?;
    let shape = g.weights_shape();
    let (out, base) = output(checked_numel(&shape)?)?;
    let (qd, kd) = (q.data(), k.data());
    let s = g.scale();
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work(), &|b| {
        for h in 0..g.h {
            // SAFETY: block (b, h) of the output is written by this call alone.
            let p = unsafe {
                std::slice::from_raw_parts_mut(base.get().add((b * g.h + h) * g.block()), g.block())
            };
            kern.product(g.t, g.t, g.dh, g.head(qd, b, h), g.head_t(kd, b, h), p);
            causal_rows(p, g.t, 0, g.t, s, MASKED);
        }
    });
    Ok(Tensor::from_parts(shape, out))
}

/// `p.attentio_applica(v)`: `y [B, T, D]` with `y_bh = P_bh · v_bh`.
pub fn attention_apply(p: &Tensor, v: &Tensor) -> TResult<Tensor> {
    const NAME: &str = "attentio_applica";
    let g = weights_and_values(NAME, p, v)?;
    let (out, base) = output(v.numel())?;
    let (pd, vd) = (p.data(), v.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work(), &|b| {
        let mut scratch = Vec::new();
        for h in 0..g.h {
            let ph = (
                &pd[(b * g.h + h) * g.block()..][..g.block()],
                Strides::rows(g.t),
            );
            let y = g.head_mut(base.get(), b, h);
            // SAFETY: batch b of the output is written by this call alone.
            unsafe {
                kern.product_into(g.t, g.dh, g.t, ph, g.head(vd, b, h), y, g.d, &mut scratch)
            };
        }
    });
    Ok(Tensor::shaped_like(v, out))
}

/// The VJP of [`attention_apply`]: `(∂P, ∂v)` from `∂y` — per head
/// `∂P_bh = ∂y_bh · v_bhᵀ` and `∂v_bh = P_bhᵀ · ∂y_bh`.
pub fn attention_apply_backward(gy: &Tensor, p: &Tensor, v: &Tensor) -> TResult<(Tensor, Tensor)> {
    const NAME: &str = "retro_attentio_applica";
    let g = weights_and_values(NAME, p, v)?;
    same_shape(NAME, "cotangent", gy, v)?;
    let (gp, gp_base) = output(p.numel())?;
    let (gv, gv_base) = output(v.numel())?;
    let (pd, vd, gd) = (p.data(), v.data(), gy.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let mut scratch = Vec::new();
        for h in 0..g.h {
            let at = (b * g.h + h) * g.block();
            // SAFETY: block (b, h) of ∂P is written by this call alone.
            let dp = unsafe { std::slice::from_raw_parts_mut(gp_base.get().add(at), g.block()) };
            kern.product(g.t, g.t, g.dh, g.head(gd, b, h), g.head_t(vd, b, h), dp);
            let ph = (&pd[at..at + g.block()], Strides::transposed(g.t));
            let dv = g.head_mut(gv_base.get(), b, h);
            // SAFETY: batch b of ∂v is written by this call alone.
            unsafe {
                kern.product_into(g.t, g.dh, g.t, ph, g.head(gd, b, h), dv, g.d, &mut scratch)
            };
        }
    });
    Ok((Tensor::shaped_like(p, gp), Tensor::shaped_like(v, gv)))
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
    const NAME: &str = "retro_attentio_pondera";
    let g = Heads::of(NAME, q, heads)?;
    same_shape(NAME, "keys", k, q)?;
    if p.shape() != g.weights_shape() || gp.shape() != p.shape() {
        return Err(TensorError::shape(format!(
            "{NAME}: weights {} and cotangent {} must both be {} for queries {}",
            fmt_shape(p.shape()),
            fmt_shape(gp.shape()),
            fmt_shape(&g.weights_shape()),
            fmt_shape(q.shape())
        )));
    }
    let (gq, gq_base) = output(q.numel())?;
    let (gk, gk_base) = output(k.numel())?;
    let (pd, gpd, qd, kd) = (p.data(), gp.data(), q.data(), k.data());
    let s = g.scale();
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let mut scratch = Vec::new();
        let mut ds = vec![0.0; g.block()];
        for h in 0..g.h {
            let at = (b * g.h + h) * g.block();
            let (gr, yr) = (&gpd[at..at + g.block()], &pd[at..at + g.block()]);
            // SAFETY: f64 and MaybeUninit<f64> share their layout; every element is
            // written by the row function.
            let dsu = unsafe { &mut *(ds.as_mut_slice() as *mut [f64] as *mut [MaybeUninit<f64>]) };
            for (i, ((o, gr), yr)) in dsu
                .chunks_exact_mut(g.t)
                .zip(gr.chunks_exact(g.t))
                .zip(yr.chunks_exact(g.t))
                .enumerate()
            {
                causal_row_backward(gr, yr, o, i, s);
            }
            let (dq, dk) = (
                g.head_mut(gq_base.get(), b, h),
                g.head_mut(gk_base.get(), b, h),
            );
            let (ds_rows, ds_t) = (
                (&ds[..], Strides::rows(g.t)),
                (&ds[..], Strides::transposed(g.t)),
            );
            // SAFETY: batch b of ∂q and of ∂k is written by this call alone.
            unsafe {
                kern.product_into(
                    g.t,
                    g.dh,
                    g.t,
                    ds_rows,
                    g.head(kd, b, h),
                    dq,
                    g.d,
                    &mut scratch,
                );
                kern.product_into(
                    g.t,
                    g.dh,
                    g.t,
                    ds_t,
                    g.head(qd, b, h),
                    dk,
                    g.d,
                    &mut scratch,
                );
            }
        }
    });
    Ok((Tensor::shaped_like(q, gq), Tensor::shaped_like(k, gk)))
}

/// A `Shape` error unless `x` has the shape of `like`.
fn same_shape(name: &str, what: &str, x: &Tensor, like: &Tensor) -> TResult<()> {
    if x.shape() == like.shape() {
        return Ok(());
    }
    Err(TensorError::shape(format!(
        "{name}: {what} {} do not match {}",
        fmt_shape(x.shape()),
        fmt_shape(like.shape())
    )))
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
            "{name}: weights {} do not fit values {} ({} expected)",
            fmt_shape(p.shape()),
            fmt_shape(v.shape()),
            fmt_shape(&g.weights_shape())
        )));
    }
    Ok(g)
}
