//! The geometry of `[B, T, D]` activations split into heads ([`Heads`]), the kernel a
//! head's products take ([`Kernel`]), and the per-head steps every fused attention op
//! is made of — generic over the element ([`Causal`]: f64 and f32), so that both
//! types run the same code: in f64 the exact in-order kernel for small products and
//! softmax/causal.rs's rows, in f32 the sgemm (tensor/elem.rs) and
//! softmax/causal_f32.rs's rows.

use std::mem::MaybeUninit;

use crate::tensor::elem::Float;
use crate::tensor::gemm::{exact_strided, Strides, Tri};
use crate::tensor::matmul::EXACT_MATMUL_MAX_WORK;
use crate::tensor::par_f32::wide;
use crate::tensor::softmax::causal_f32::{causal_row_backward_f32, causal_rows_f32};
use crate::tensor::softmax::{causal_row_backward, causal_rows};
use crate::tensor::{fmt_shape, shape_difference, TResult, Tensor, TensorError};

/// The mask value of the masked scores (gradus's causal attention uses −1e9; in f32
/// rounded once).
const MASKED: f64 = -1e9;

/// The causal softmax steps of one head, per element type.
pub(super) trait Causal: Float {
    /// The `T×T` scores `p` (entries j ≤ i read) become the causal weights
    /// `softmax(mask(p·s, −1e9))` row by row; `e` is scratch.
    fn causal_rows(p: &mut [Self], t: usize, s: f64, e: &mut Vec<f64>);

    /// The causal softmax VJP of one head with the scale: `ds` from the weights' cotangent
    /// `dp` and the weights `p` (`T×T`). With `causal` (the masked weights are exact
    /// zeros) each row's sum reads `dp` on and below the diagonal only.
    fn causal_rows_backward(
        dp: &[Self],
        p: &[Self],
        ds: &mut [Self],
        t: usize,
        s: f64,
        causal: bool,
    );
}

impl Causal for f64 {
    #[inline(always)]
    fn causal_rows(p: &mut [f64], t: usize, s: f64, _: &mut Vec<f64>) {
        causal_rows(p, t, 0, t, s, MASKED);
    }

    #[inline(always)]
    fn causal_rows_backward(dp: &[f64], p: &[f64], ds: &mut [f64], t: usize, s: f64, causal: bool) {
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
            causal_row_backward(summed, yr, o, i, s);
        }
    }
}

/// In f32 the scale and the mask value are rounded once to f32, as the f32
/// `softmax_causalis(s, v)` takes them (softmax/causal_f32.rs), so a fused head is the
/// bits of the unfused f32 chain.
impl Causal for f32 {
    #[inline(always)]
    fn causal_rows(p: &mut [f32], t: usize, s: f64, e: &mut Vec<f64>) {
        let (s, v) = (s as f32, MASKED as f32);
        wide(
            #[inline(always)]
            || causal_rows_f32(p, t, 0, t, s, v, e),
        );
    }

    #[inline(always)]
    fn causal_rows_backward(dp: &[f32], p: &[f32], ds: &mut [f32], t: usize, s: f64, causal: bool) {
        let s = s as f32;
        wide(
            #[inline(always)]
            || {
                for (i, ((o, gr), yr)) in ds
                    .chunks_exact_mut(t)
                    .zip(dp.chunks_exact(t))
                    .zip(p.chunks_exact(t))
                    .enumerate()
                {
                    let summed = if causal { &gr[..=i] } else { gr };
                    causal_row_backward_f32(summed, yr, o, i, s);
                }
            },
        );
    }
}

/// The geometry of `[B, T, D]` activations split into `h` heads of width `dh`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Heads {
    pub(super) b: usize,
    pub(super) t: usize,
    pub(super) d: usize,
    pub(super) h: usize,
    pub(super) dh: usize,
}

impl Heads {
    /// The heads of `x [B, T, D]`: rank 3, T ≥ 1, `1 ≤ heads` dividing D ≥ 1.
    pub(super) fn of(name: &str, x: &Tensor, heads: usize) -> TResult<Heads> {
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
    pub(super) fn of_qkv(
        name: &str,
        q: &Tensor,
        k: &Tensor,
        v: &Tensor,
        heads: usize,
    ) -> TResult<Heads> {
        let g = Heads::of(name, q, heads)?;
        same_shape(name, "keys", k, q)?;
        same_shape(name, "values", v, q)?;
        Ok(g)
    }

    /// The shape of the attention weights, `[B, H, T, T]`.
    pub(super) fn weights_shape(&self) -> [usize; 4] {
        [self.b, self.h, self.t, self.t]
    }

    /// `[T·T]` elements of one head's weights.
    pub(super) fn block(&self) -> usize {
        self.t * self.t
    }

    /// Head `h` of batch `b` of `x` (`[B, T, D]`) as a `[T, dh]` matrix read in place:
    /// the data from its first element on, and its strides.
    fn head<'a, T>(&self, x: &'a [T], b: usize, h: usize) -> (&'a [T], Strides) {
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
    fn head_t<'a, T>(&self, x: &'a [T], b: usize, h: usize) -> (&'a [T], Strides) {
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
    fn head_mut<T>(&self, out: *mut T, b: usize, h: usize) -> *mut T {
        out.wrapping_add(b * self.t * self.d + h * self.dh)
    }

    /// `dh^−½`, as gradus computes the scale (`(dh ↦ fractus).potentia(-0.5)`).
    fn scale(&self) -> f64 {
        (self.dh as f64).powf(-0.5)
    }

    /// Multiply-adds of one product over every head.
    pub(super) fn work(&self) -> usize {
        self.b
            .saturating_mul(self.h)
            .saturating_mul(self.block())
            .saturating_mul(self.dh)
    }
}

/// `dst = src` for a short row, eight elements at a time (a `memcpy` call per head
/// row costs more than the copy).
#[inline(always)]
fn copy_row<T: Copy>(dst: &mut [T], src: &[T]) {
    let mut d = dst.chunks_exact_mut(8);
    let mut s = src.chunks_exact(8);
    for (d, s) in (&mut d).zip(&mut s) {
        let v: [T; 8] = s.try_into().expect("chunk of 8");
        d.copy_from_slice(&v);
    }
    for (d, s) in d.into_remainder().iter_mut().zip(s.remainder()) {
        *d = *s;
    }
}

/// Which kernel the products take: the in-order one when all of an op's products
/// together are small — `matmul`'s automatic choice for the batched products of the
/// unfused chain (`m·n·k` summed over the batch), so the same bits — else the GEMM
/// (f32: always the sgemm, as `matmul`'s choice).
#[derive(Clone, Copy)]
pub(super) struct Kernel {
    exact: bool,
}

impl Kernel {
    pub(super) fn for_heads<T: Float>(g: &Heads) -> Kernel {
        Kernel {
            exact: T::EXACT_SMALL && g.work() <= EXACT_MATMUL_MAX_WORK,
        }
    }

    /// `c = a·b` (`m×n`, row-major) for `a` (`m×k`) and `b` (`k×n`) given as (data,
    /// strides); `c` holds `m·n` elements. The GEMM's unpacked kernel forms the part
    /// `tri` says ([`Tri`]); the other kernels form all of `c`.
    #[allow(clippy::too_many_arguments)]
    fn product<T: Float>(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: (&[T], Strides),
        b: (&[T], Strides),
        c: &mut [T],
        tri: Tri,
    ) {
        let ((ad, sa), (bd, sb)) = (a, b);
        assert!(c.len() == m * n && sa.covers(m, k, ad.len()) && sb.covers(k, n, bd.len()));
        if !self.exact && tri != Tri::Full {
            let cp = c.as_mut_ptr();
            // SAFETY: c is an exclusive m×n slice (row stride n); the strides address
            // elements of a and b only (asserted).
            if unsafe { T::gemm_unpacked_into(m, n, k, ad, sa, bd, sb, cp, n, tri) } {
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
        unsafe { T::gemm_fast(m, n, k, ad, sa, bd, sb, c.as_mut_ptr(), None) }
    }

    /// [`Kernel::product`] written into the `m×n` matrix at `out` of row stride `ldc`
    /// (a head of a `[B, T, D]` result): directly where the GEMM would take the
    /// product with its unpacked kernel (the same call, so the same bits; the part `tri`
    /// says), else through `scratch`.
    ///
    /// # Safety
    /// `out` addresses that matrix, which no other thread accesses during the call.
    #[allow(clippy::too_many_arguments)]
    unsafe fn product_into<T: Float>(
        self,
        m: usize,
        n: usize,
        k: usize,
        a: (&[T], Strides),
        b: (&[T], Strides),
        out: *mut T,
        ldc: usize,
        scratch: &mut Vec<T>,
        tri: Tri,
    ) {
        if !self.exact {
            let ((ad, sa), (bd, sb)) = (a, b);
            // SAFETY: as required; the strides address elements of a and b only
            // (checked by the callee).
            if unsafe { T::gemm_unpacked_into(m, n, k, ad, sa, bd, sb, out, ldc, tri) } {
                return;
            }
        }
        scratch.resize(m * n, T::ZERO);
        self.product(m, n, k, a, b, scratch, Tri::Full);
        for (i, row) in scratch.chunks_exact(n).enumerate() {
            // SAFETY: row i of the output matrix (as required).
            let dst = unsafe { std::slice::from_raw_parts_mut(out.add(i * ldc), n) };
            copy_row(dst, row);
        }
    }
}

/// The per-head steps every op of mod.rs is made of, so that the fused ops compute each
/// head exactly as the unfused ones do.
impl Heads {
    /// Head (b, h)'s causal weights into `p` (`T×T`): scores `q_bh · k_bhᵀ` (only the
    /// part on and below the diagonal, which is all the softmax rows read), then the
    /// causal softmax rows. Returns whether the masked weights are exact zeros (as
    /// they are unless a row's scores reach ~1e9: see [`Heads::causal_zero`]).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn weights_head<T: Causal>(
        &self,
        kern: Kernel,
        qd: &[T],
        kd: &[T],
        b: usize,
        h: usize,
        p: &mut [T],
        e: &mut Vec<f64>,
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
        T::causal_rows(p, self.t, self.scale(), e);
        // Every masked entry of a row holds the same weight; the last row has none.
        let t = self.t;
        (0..t - 1).all(|i| p[i * t + t - 1] == T::ZERO)
    }

    /// Whether the weights `p` (`T×T`) are zero (+0.0 or −0.0) above the diagonal, so
    /// that the products over them may leave those terms out ([`Tri`]).
    pub(super) fn causal_zero<T: Float>(&self, p: &[T]) -> bool {
        let t = self.t;
        // The magnitude bits of every entry right of the diagonal, or-ed.
        let bits = p
            .chunks_exact(t)
            .enumerate()
            .map(|(i, row)| {
                row[i + 1..]
                    .iter()
                    .fold(0, |acc, &x| acc | x.magnitude_bits())
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
    pub(super) unsafe fn apply_head<T: Float>(
        &self,
        kern: Kernel,
        p: &[T],
        vd: &[T],
        b: usize,
        h: usize,
        y: *mut T,
        scratch: &mut Vec<T>,
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
    unsafe fn block_times_head<T: Float>(
        &self,
        kern: Kernel,
        w: (&[T], Strides),
        xd: &[T],
        b: usize,
        h: usize,
        out: *mut T,
        scratch: &mut Vec<T>,
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
    pub(super) unsafe fn apply_head_backward<T: Float>(
        &self,
        kern: Kernel,
        gd: &[T],
        p: &[T],
        vd: &[T],
        b: usize,
        h: usize,
        dp: &mut [T],
        dv: *mut T,
        scratch: &mut Vec<T>,
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
    pub(super) unsafe fn weights_head_backward<T: Causal>(
        &self,
        kern: Kernel,
        (dp, p): (&[T], &[T]),
        (qd, kd): (&[T], &[T]),
        b: usize,
        h: usize,
        ds: &mut [T],
        (dq, dk): (*mut T, *mut T),
        scratch: &mut Vec<T>,
        causal: bool,
    ) {
        let t = self.t;
        T::causal_rows_backward(dp, p, ds, t, self.scale(), causal);
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

/// A `Shape` error unless `x` has the shape of `like`.
pub(super) fn same_shape(name: &str, what: &str, x: &Tensor, like: &Tensor) -> TResult<()> {
    if x.shape() == like.shape() {
        return Ok(());
    }
    Err(TensorError::shape(format!(
        "{name}: {what} {} do not match {} ({})",
        fmt_shape(x.shape()),
        fmt_shape(like.shape()),
        shape_difference(x.shape(), like.shape())
    )))
}
