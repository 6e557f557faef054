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

use std::mem::MaybeUninit;

use super::gemm::{exact_strided, gemm_fast, Strides, Tri};
use super::matmul::EXACT_MATMUL_MAX_WORK;
use super::par::SendPtr;
use super::softmax::{causal_row_backward, causal_rows};
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

    /// [`Heads::of`] the queries, with keys and values of their shape.
    fn of_qkv(name: &str, q: &Tensor, k: &Tensor, v: &Tensor, heads: usize) -> TResult<Heads> {
        let g = Heads::of(name, q, heads)?;
        same_shape(name, "keys", k, q)?;
        same_shape(name, "values", v, q)?;
        Ok(g)
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
    /// strides); `c` holds `m·n` elements. The GEMM's unpacked kernel forms the part
    /// `tri` says ([`Tri`]); the other kernels form all of `c`.
    #[allow(clippy::too_many_arguments)]
    fn product(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: (&[f64], Strides),
        b: (&[f64], Strides),
        c: &mut [f64],
        tri: Tri,
    ) {
        let ((ad, sa), (bd, sb)) = (a, b);
        assert!(c.len() == m * n && sa.covers(m, k, ad.len()) && sb.covers(k, n, bd.len()));
        #[cfg(target_arch = "x86_64")]
        if !self.exact && tri != Tri::Full {
            let cp = c.as_mut_ptr();
            // SAFETY: c is an exclusive m×n slice (row stride n); the strides address
            // elements of a and b only (asserted).
            if unsafe { super::gemm::gemm_unpacked_into(m, n, k, ad, sa, bd, sb, cp, n, tri) } {
                return;
            }
        }
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
        unsafe { gemm_fast(m, n, k, ad, sa, bd, sb, c.as_mut_ptr(), None) }
    }

    /// [`Kernel::product`] written into the `m×n` matrix at `out` of row stride `ldc`
    /// (a head of a `[B, T, D]` result): directly where the GEMM would take the
    /// product with its unpacked kernel (the same call, so the same bits; the part `tri`
    /// says), else through `scratch`.
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
        tri: Tri,
    ) {
        #[cfg(target_arch = "x86_64")]
        if !self.exact {
            let ((ad, sa), (bd, sb)) = (a, b);
            // SAFETY: as required; the strides address elements of a and b only
            // (checked by the callee).
            if unsafe { super::gemm::gemm_unpacked_into(m, n, k, ad, sa, bd, sb, out, ldc, tri) } {
                return;
            }
        }
        scratch.resize(m * n, 0.0);
        self.product(m, n, k, a, b, scratch, Tri::Full);
        for (i, row) in scratch.chunks_exact(n).enumerate() {
            // SAFETY: row i of the output matrix (as required).
            let dst = unsafe { std::slice::from_raw_parts_mut(out.add(i * ldc), n) };
            copy_row(dst, row);
        }
    }
}

/// The per-head steps every op below is made of, so that the fused ops compute each
/// head exactly as the unfused ones do.
impl Heads {
    /// Head (b, h)'s causal weights into `p` (`T×T`): scores `q_bh · k_bhᵀ` (only the
    /// part on and below the diagonal, which is all the softmax rows read), then the
    /// causal softmax rows. Returns whether the masked weights are exact zeros (as
    /// they are unless a row's scores reach ~1e9: see [`Heads::causal_zero`]).
    fn weights_head(
        &self,
        kern: Kernel,
        qd: &[f64],
        kd: &[f64],
        b: usize,
        h: usize,
        p: &mut [f64],
    ) -> bool {
        kern.product(
            self.t,
            self.t,
            self.dh,
            self.head(qd, b, h),
            self.head_t(kd, b, h),
            p,
            Tri::LowerOut,
        );
        causal_rows(p, self.t, 0, self.t, self.scale(), MASKED);
        // Every masked entry of a row holds the same weight; the last row has none.
        let t = self.t;
        (0..t - 1).all(|i| p[i * t + t - 1] == 0.0)
    }

    /// Whether the weights `p` (`T×T`) are zero (+0.0 or −0.0) above the diagonal, so
    /// that the products over them may leave those terms out ([`Tri`]).
    fn causal_zero(&self, p: &[f64]) -> bool {
        let t = self.t;
        // The magnitude bits of every entry right of the diagonal, or-ed.
        let bits = p
            .chunks_exact(t)
            .enumerate()
            .map(|(i, row)| {
                row[i + 1..]
                    .iter()
                    .fold(0, |acc, x| acc | (x.to_bits() << 1))
            })
            .fold(0u64, |acc, r| acc | r);
        bits == 0
    }

    /// `y_bh = P_bh · v_bh` for head (b, h)'s weights `p` into the `[B, T, D]` buffer at
    /// `y`; with `causal`, `p` is zero above the diagonal and those terms are left out.
    ///
    /// # Safety
    /// Head (b, h) of the buffer at `y` is accessed by this call alone.
    #[allow(clippy::too_many_arguments)]
    unsafe fn apply_head(
        &self,
        kern: Kernel,
        p: &[f64],
        vd: &[f64],
        b: usize,
        h: usize,
        y: *mut f64,
        scratch: &mut Vec<f64>,
        causal: bool,
    ) {
        let (w, tri) = ((p, Strides::rows(self.t)), when(causal, Tri::LowerA));
        // SAFETY: as required.
        unsafe { self.block_times_head(kern, w, vd, b, h, y, scratch, tri) };
    }

    /// A `T×T` block of one head (`w`: data and strides, so possibly read transposed)
    /// times head (b, h) of `xd` (`[B, T, D]`), into head (b, h) of the `[B, T, D]`
    /// buffer at `out`; `tri` says which terms the block's zeros let it leave out.
    ///
    /// # Safety
    /// Head (b, h) of the buffer at `out` is accessed by this call alone.
    #[allow(clippy::too_many_arguments)]
    unsafe fn block_times_head(
        &self,
        kern: Kernel,
        w: (&[f64], Strides),
        xd: &[f64],
        b: usize,
        h: usize,
        out: *mut f64,
        scratch: &mut Vec<f64>,
        tri: Tri,
    ) {
        let (t, x, o) = (self.t, self.head(xd, b, h), self.head_mut(out, b, h));
        // SAFETY: as required.
        unsafe { kern.product_into(t, self.dh, t, w, x, o, self.d, scratch, tri) };
    }

    /// Head (b, h) of the output's VJP: `∂P_bh = ∂y_bh · v_bhᵀ` into `dp` and
    /// `∂v_bh = P_bhᵀ · ∂y_bh` into the `[B, T, D]` buffer at `dv`. With `causal`, `p`
    /// is zero above the diagonal: only `∂P`'s part on and below it is formed (the rest
    /// of `dp` is left as it was) and `∂v` leaves out the zero weights' terms.
    ///
    /// # Safety
    /// Head (b, h) of the buffer at `dv` is accessed by this call alone.
    #[allow(clippy::too_many_arguments)]
    unsafe fn apply_head_backward(
        &self,
        kern: Kernel,
        gd: &[f64],
        p: &[f64],
        vd: &[f64],
        b: usize,
        h: usize,
        dp: &mut [f64],
        dv: *mut f64,
        scratch: &mut Vec<f64>,
        causal: bool,
    ) {
        let (out_tri, pt_tri) = (when(causal, Tri::LowerOut), when(causal, Tri::UpperA));
        kern.product(
            self.t,
            self.t,
            self.dh,
            self.head(gd, b, h),
            self.head_t(vd, b, h),
            dp,
            out_tri,
        );
        let ph = (p, Strides::transposed(self.t));
        // SAFETY: as required.
        unsafe { self.block_times_head(kern, ph, gd, b, h, dv, scratch, pt_tri) };
    }

    /// Head (b, h) of the weights' VJP from their cotangent `dp` and the weights `p`: the
    /// causal softmax VJP `∂S` (with the scale) into `ds`, then `∂q_bh = ∂S · k_bh` and
    /// `∂k_bh = ∂Sᵀ · q_bh` into the `[B, T, D]` buffers at `dq` and `dk`. With
    /// `causal`, `p` is zero above the diagonal: the softmax VJP's row sums read `dp`
    /// on and below it only, and the products leave out the terms of `∂S`'s masked
    /// entries (exact zeros).
    ///
    /// # Safety
    /// Head (b, h) of the buffers at `dq` and `dk` is accessed by this call alone.
    #[allow(clippy::too_many_arguments)]
    unsafe fn weights_head_backward(
        &self,
        kern: Kernel,
        (dp, p): (&[f64], &[f64]),
        (qd, kd): (&[f64], &[f64]),
        b: usize,
        h: usize,
        ds: &mut [f64],
        (dq, dk): (*mut f64, *mut f64),
        scratch: &mut Vec<f64>,
        causal: bool,
    ) {
        let t = self.t;
        // SAFETY: f64 and MaybeUninit<f64> share their layout; every element is
        // written by the row function.
        let dsu = unsafe { &mut *(ds as *mut [f64] as *mut [MaybeUninit<f64>]) };
        for (i, ((o, gr), yr)) in dsu
            .chunks_exact_mut(t)
            .zip(dp.chunks_exact(t))
            .zip(p.chunks_exact(t))
            .enumerate()
        {
            let summed = if causal { &gr[..=i] } else { gr };
            causal_row_backward(summed, yr, o, i, self.scale());
        }
        let (ds_rows, ds_t) = (
            (&ds[..], Strides::rows(t)),
            (&ds[..], Strides::transposed(t)),
        );
        let (rows_tri, t_tri) = (when(causal, Tri::LowerA), when(causal, Tri::UpperA));
        // SAFETY: as required.
        unsafe {
            self.block_times_head(kern, ds_rows, kd, b, h, dq, scratch, rows_tri);
            self.block_times_head(kern, ds_t, qd, b, h, dk, scratch, t_tri);
        }
    }
}

/// `tri` for a product over causal weights that are zero above the diagonal (or their
/// cotangent's masked zeros), else [`Tri::Full`].
fn when(causal: bool, tri: Tri) -> Tri {
    if causal {
        tri
    } else {
        Tri::Full
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
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work(), &|b| {
        for h in 0..g.h {
            // SAFETY: block (b, h) of the output is written by this call alone.
            let p = unsafe {
                std::slice::from_raw_parts_mut(base.get().add((b * g.h + h) * g.block()), g.block())
            };
            g.weights_head(kern, qd, kd, b, h, p);
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
            let ph = &pd[(b * g.h + h) * g.block()..][..g.block()];
            // SAFETY: batch b of the output is written by this call alone.
            unsafe { g.apply_head(kern, ph, vd, b, h, base.get(), &mut scratch, false) };
        }
    });
    Ok(Tensor::shaped_like(v, out))
}

/// `q.attentio(k, v, heads)`: `q.attentio_pondera(k, heads).attentio_applica(v)` with
/// each head's weights kept in a scratch block instead of a `[B, H, T, T]` tensor (the
/// same per-head steps, so the same bits).
pub fn attention(q: &Tensor, k: &Tensor, v: &Tensor, heads: usize) -> TResult<Tensor> {
    const NAME: &str = "attentio";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    let (out, base) = output(v.numel())?;
    let (qd, kd, vd) = (q.data(), k.data(), v.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let (mut p, mut scratch) = (vec![0.0; g.block()], Vec::new());
        for h in 0..g.h {
            let causal = g.weights_head(kern, qd, kd, b, h, &mut p);
            // SAFETY: batch b of the output is written by this call alone.
            unsafe { g.apply_head(kern, &p, vd, b, h, base.get(), &mut scratch, causal) };
        }
    });
    Ok(Tensor::shaped_like(v, out))
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
    const NAME: &str = "attentio_cum_ponderibus";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    let shape = g.weights_shape();
    let (p, p_base) = output(checked_numel(&shape)?)?;
    let (out, base) = output(v.numel())?;
    let (qd, kd, vd) = (q.data(), k.data(), v.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let mut scratch = Vec::new();
        for h in 0..g.h {
            // SAFETY: block (b, h) of the weights and batch b of the output are written
            // by this call alone.
            unsafe {
                let at = (b * g.h + h) * g.block();
                let ph = std::slice::from_raw_parts_mut(p_base.get().add(at), g.block());
                let causal = g.weights_head(kern, qd, kd, b, h, ph);
                g.apply_head(kern, ph, vd, b, h, base.get(), &mut scratch, causal);
            }
        }
    });
    Ok((Tensor::shaped_like(v, out), Tensor::from_parts(shape, p)))
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
            // SAFETY: block (b, h) of ∂P and batch b of ∂v are written by this call alone.
            unsafe {
                let dp = std::slice::from_raw_parts_mut(gp_base.get().add(at), g.block());
                let ph = &pd[at..at + g.block()];
                let gv = gv_base.get();
                g.apply_head_backward(kern, gd, ph, vd, b, h, dp, gv, &mut scratch, false);
            }
        }
    });
    Ok((Tensor::shaped_like(p, gp), Tensor::shaped_like(v, gv)))
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
    const NAME: &str = "retro_attentio_pondera";
    let g = Heads::of(NAME, q, heads)?;
    same_shape(NAME, "keys", k, q)?;
    check_weights(NAME, &g, p, Some(gp), q)?;
    let (gq, gq_base) = output(q.numel())?;
    let (gk, gk_base) = output(k.numel())?;
    let (pd, gpd, qd, kd) = (p.data(), gp.data(), q.data(), k.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(2), &|b| {
        let (mut scratch, mut ds) = (Vec::new(), vec![0.0; g.block()]);
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
    Ok((Tensor::shaped_like(q, gq), Tensor::shaped_like(k, gk)))
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
    const NAME: &str = "retro_attentio";
    let g = Heads::of_qkv(NAME, q, k, v, heads)?;
    same_shape(NAME, "cotangent", gy, q)?;
    check_weights(NAME, &g, p, None, q)?;
    let (gq, gq_base) = output(q.numel())?;
    let (gk, gk_base) = output(k.numel())?;
    let (gv, gv_base) = output(v.numel())?;
    let (pd, gd, qd, kd, vd) = (p.data(), gy.data(), q.data(), k.data(), v.data());
    let kern = Kernel::for_heads(&g);
    over_batches(g.b, g.work().saturating_mul(4), &|b| {
        let mut scratch = Vec::new();
        let (mut dp, mut ds) = (vec![0.0; g.block()], vec![0.0; g.block()]);
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
        Tensor::shaped_like(q, gq),
        Tensor::shaped_like(k, gk),
        Tensor::shaped_like(v, gv),
    ))
}

/// A `Shape` error unless `x` has the shape of `like`.
fn same_shape(name: &str, what: &str, x: &Tensor, like: &Tensor) -> TResult<()> {
    if x.shape() == like.shape() {
        return Ok(());
    }
    Err(TensorError::shape(format!(
        "{name}: {what} {} do not match {} ({})",
        fmt_shape(x.shape()),
        fmt_shape(like.shape()),
        super::shape_difference(x.shape(), like.shape())
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
            "{name}: weights {} do not fit values {} ({} expected: {})",
            fmt_shape(p.shape()),
            fmt_shape(v.shape()),
            fmt_shape(&g.weights_shape()),
            super::shape_difference(p.shape(), &g.weights_shape())
        )));
    }
    Ok(g)
}
