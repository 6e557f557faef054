//! The VJP of a matmul: of a 2-D product as one call (both products, side by side on
//! two threads, [`matmul_vjp_2d`]), with an operation fused onto `∂a` ([`VjpPost`]),
//! and for operands whose ranks are known only at run time ([`matmul_backward`],
//! `retro_matmul`).
//!
//! Every operand f32: computed natively in f32 on the same code (generic over the
//! element, tensor/elem.rs): the sgemm's products with its fused epilogues (`∂a ⊙ d`
//! and `r + ∂a` each rounded once to f32, the bits of the f32 `multiplica` / `addita`
//! after the product), the other ranks' element-wise steps from vjp_f32.rs. Operands
//! of both types are computed in f64 (the f32 ones widened exactly).

use std::borrow::Cow;

use super::product::{matmul, matmul_t, Trans, EXACT_MATMUL_MAX_WORK};
use super::vjp_f32;
use crate::tensor::elem::{common, widened, Float, ResultBuf};
use crate::tensor::gemm::{PostOp, Strides};
use crate::tensor::par_f32::SendPtrOf;
use crate::tensor::shape::broadcast_shapes;
use crate::tensor::{
    add, broadcast_conflict, fmt_shape, gelu_backward_derivata, mul, pool, reshape, set_threads,
    shape_difference, sum_to_shape, threads, transpose, DType, TResult, Tensor, TensorError,
};

/// The two products of the VJP of a 2-D `a · b` (`a` `m×k`, `b` `k×n`) for the
/// cotangent `g` (`m×n`): `(g · bᵀ, aᵀ · g)`, i.e. `(matmul_t(g, b, B), matmul_t(a, g,
/// A))` with their bits. Both have the same work `m·n·k`; when it takes the GEMM kernel
/// and this thread may use several threads, the two run side by side, each whole on
/// one thread (instead of one after the other, each split in two): nothing to
/// synchronise inside them, and each core reads its own product's operands. Shapes
/// that do not fit give `matmul_t`'s errors.
pub fn matmul_vjp_2d(a: &Tensor, b: &Tensor, g: &Tensor) -> TResult<(Tensor, Tensor)> {
    matmul_vjp_2d_post(a, b, g, None)
}

/// What [`matmul_vjp_2d_post`] does to `∂a = g · bᵀ` besides forming it.
#[derive(Clone, Copy, Debug)]
pub enum VjpPost<'a> {
    /// `∂a ⊙ d` (`d` of `∂a`'s shape; another shape is an error) — the GELU backward
    /// after a linear layer, a companion's `retro_matmul_derivata`.
    Scale(&'a Tensor),
    /// `r + ∂a` (`addita`, broadcasting) — a cotangent summed with the one before, a
    /// companion's `retro_matmul_adde`.
    AddTo(&'a Tensor),
}

impl<'a> VjpPost<'a> {
    /// The tensor the operation reads.
    pub fn tensor(self) -> &'a Tensor {
        let (VjpPost::Scale(t) | VjpPost::AddTo(t)) = self;
        t
    }

    /// The same operation reading `t` instead (a reshaped view of its tensor).
    pub fn with(self, t: &Tensor) -> VjpPost<'_> {
        match self {
            VjpPost::Scale(_) => VjpPost::Scale(t),
            VjpPost::AddTo(_) => VjpPost::AddTo(t),
        }
    }

    /// The operation applied to a finished `∂a`, in a pass of its own (in f32 when
    /// both tensors are f32).
    pub fn apply(self, ga: &Tensor) -> TResult<Tensor> {
        if common(&[ga, self.tensor()]) == DType::F32 {
            return match self {
                VjpPost::Scale(d) => vjp_f32::scaled_by(ga, d),
                VjpPost::AddTo(r) => vjp_f32::added_to(r, ga),
            };
        }
        match self {
            VjpPost::Scale(d) => gelu_backward_derivata(ga, d),
            VjpPost::AddTo(r) => add(r, ga),
        }
    }
}

/// The operands of a VJP in one element type: themselves when all are f32 or all f64,
/// else every one widened to f64 (promotion).
struct Same<'a> {
    a: Cow<'a, Tensor>,
    b: Cow<'a, Tensor>,
    g: Cow<'a, Tensor>,
    post: Option<Cow<'a, Tensor>>,
    dtype: DType,
}

impl<'a> Same<'a> {
    fn of(a: &'a Tensor, b: &'a Tensor, g: &'a Tensor, post: Option<VjpPost<'a>>) -> TResult<Self> {
        let p = post.map(|p| p.tensor());
        let all: &[&Tensor] = match p {
            Some(p) => &[a, b, g, p],
            None => &[a, b, g],
        };
        if common(all) == DType::F32 {
            return Ok(Same {
                a: Cow::Borrowed(a),
                b: Cow::Borrowed(b),
                g: Cow::Borrowed(g),
                post: p.map(Cow::Borrowed),
                dtype: DType::F32,
            });
        }
        Ok(Same {
            a: widened(a)?,
            b: widened(b)?,
            g: widened(g)?,
            post: p.map(widened).transpose()?,
            dtype: DType::F64,
        })
    }
}

/// [`matmul_vjp_2d`] with `post` applied to `∂a`, the bits of the separate op after it
/// (`gelu_backward_derivata(∂a, d)`, `add(r, ∂a)`): where the GEMM kernel forms `∂a` and
/// the post tensor has its shape, each finished block of `∂a` gets the operation while
/// it is still in cache, instead of a pass of its own over two matrices.
pub fn matmul_vjp_2d_post(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    post: Option<VjpPost>,
) -> TResult<(Tensor, Tensor)> {
    let s = Same::of(a, b, g, post)?;
    let post = post.zip(s.post.as_deref()).map(|(p, t)| p.with(t));
    match s.dtype {
        DType::F32 => vjp_2d_post::<f32>(&s.a, &s.b, &s.g, post),
        DType::F64 => vjp_2d_post::<f64>(&s.a, &s.b, &s.g, post),
    }
}

/// [`matmul_vjp_2d_post`] on operands of one element type `T`.
fn vjp_2d_post<T: Float>(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    post: Option<VjpPost>,
) -> TResult<(Tensor, Tensor)> {
    let apart = |a: &Tensor, b: &Tensor, g: &Tensor| {
        let ga = matmul_t(g, b, Trans::B)?;
        let ga = match post {
            Some(p) => p.apply(&ga)?,
            None => ga,
        };
        Ok((ga, matmul_t(a, g, Trans::A)?))
    };
    let (&[m, k], &[k2, n], &[gm, gn]) = (a.shape(), b.shape(), g.shape()) else {
        return apart(a, b, g);
    };
    let work = (m * n).saturating_mul(k);
    let post = post.map(|p| match p {
        VjpPost::Scale(_) => (PostOp::Mul, p.tensor()),
        VjpPost::AddTo(_) => (PostOp::Add, p.tensor()),
    });
    let fits = post.is_none_or(|(_, t)| t.shape() == [m, k]);
    if k != k2 || (gm, gn) != (m, n) || work <= EXACT_MATMUL_MAX_WORK || !fits {
        return apart(a, b, g);
    }
    let (mut da, mut db) = (T::alloc(m * k)?, T::alloc(k * n)?);
    // SAFETY: each GEMM below writes every element of its output.
    let (pa, pb) = unsafe {
        (
            SendPtrOf::new(da.assume_filled()),
            SendPtrOf::new(db.assume_filled()),
        )
    };
    let (ad, bd, gd) = (T::data(a), T::data(b), T::data(g));
    let post = post.map(|(op, t)| (op, T::data(t)));
    let product = |i: usize| {
        // SAFETY: m, n, k ≥ 1 (work > 0); the strides address the stored m×n, k×n and
        // m×k matrices (the post tensor: m×k, checked above); each output is written by this call
        // alone.
        unsafe {
            if i == 0 {
                // g (m×n) · bᵀ (n×k), b stored k×n
                T::gemm_fast(
                    m,
                    k,
                    n,
                    gd,
                    Strides::rows(n),
                    bd,
                    Strides::transposed(n),
                    pa.get(),
                    post,
                )
            } else {
                // aᵀ (k×m) · g (m×n), a stored m×k
                T::gemm_fast(
                    k,
                    n,
                    m,
                    ad,
                    Strides::transposed(k),
                    gd,
                    Strides::rows(n),
                    pb.get(),
                    None,
                )
            }
        }
    };
    if threads() < 2 {
        // The products `matmul_t` would form, one after the other.
        product(0);
        product(1);
    } else {
        pool::run_blocks(2, &|i| {
            let before = set_threads(1);
            product(i);
            set_threads(before);
        });
    }
    Ok((da.into_tensor(&[m, k])?, db.into_tensor(&[k, n])?))
}

/// Both cotangents of `a · b` for operands whose ranks are known only at run time
/// (`retro_matmul`): the products the static rule uses (`g · bᵀ`, `aᵀ · g`, outer
/// products for the vector cases), reduced over broadcast batch axes. With `post`,
/// that operation applied to `∂a`: `a.retro_matmul_derivata(b, g, d)` (`∂a ⊙ d`, `d` of
/// `a`'s shape) and `a.retro_matmul_adde(b, g, r)` (`r + ∂a`, as `addita`) — the bits of
/// the separate op after `retro_matmul`, which a companion's GELU backward and cotangent
/// sums after a linear layer become (src/autodiff/fuse.rs). A batched `a` times one
/// matrix, or a 2-D product, goes to the GEMM kernel, which applies the operation block
/// by block; other ranks (and an `r` that broadcasts) apply it afterwards.
pub fn matmul_backward(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    post: Option<VjpPost>,
) -> TResult<(Tensor, Tensor)> {
    match post {
        Some(VjpPost::Scale(d)) if d.shape() != a.shape() => {
            return Err(TensorError::shape(format!(
                "retro_matmul_derivata: the derivative {} does not match the operand {} ({})",
                fmt_shape(d.shape()),
                fmt_shape(a.shape()),
                shape_difference(d.shape(), a.shape())
            )));
        }
        Some(VjpPost::AddTo(r)) if broadcast_shapes(r.shape(), a.shape()).is_err() => {
            return Err(TensorError::shape(format!(
                "retro_matmul_adde: the addend {} does not broadcast with the operand {} ({})",
                fmt_shape(r.shape()),
                fmt_shape(a.shape()),
                broadcast_conflict(r.shape(), a.shape())
            )));
        }
        _ => {}
    }
    let s = Same::of(a, b, g, post)?;
    let post = post.zip(s.post.as_deref()).map(|(p, t)| p.with(t));
    backward(&s.a, &s.b, &s.g, post)
}

/// [`matmul_backward`] after its checks, on operands of one element type.
fn backward(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    post: Option<VjpPost>,
) -> TResult<(Tensor, Tensor)> {
    let fits = post.is_none_or(|p| p.tensor().shape() == a.shape());
    match (a.rank(), b.rank()) {
        (ra, 2) if ra >= 3 && fits => {
            // Batched activations times one matrix ([…, M, K] · [K, N]): ∂b is one
            // product over every row, flat(a)ᵀ · flat(g) — not a batch of small
            // products summed afterwards.
            let (kd, nd) = (b.shape()[0], b.shape()[1]);
            let rows = a.numel() / kd.max(1);
            let af = reshape(a, &[rows, kd])?;
            let gf = reshape(g, &[rows, nd])?;
            let tf = post.map(|p| reshape(p.tensor(), &[rows, kd])).transpose()?;
            let post = post.zip(tf.as_ref()).map(|(p, t)| p.with(t));
            let (ga, gb) = matmul_vjp_2d_post(&af, b, &gf, post)?;
            Ok((reshape(&ga, a.shape())?, gb))
        }
        (2, 2) => matmul_vjp_2d_post(a, b, g, post),
        _ if post.is_some() => {
            let (ga, gb) = matmul_backward(a, b, g, None)?;
            let ga = match post {
                Some(p) => p.apply(&ga)?,
                None => ga,
            };
            Ok((ga, gb))
        }
        (1, 1) => {
            let gs = g.item()?;
            Ok((times(b, gs)?, times(a, gs)?))
        }
        (2, 1) => {
            let gcol = reshape(g, &[g.numel(), 1])?;
            let brow = reshape(b, &[1, b.numel()])?;
            Ok((matmul(&gcol, &brow)?, matmul(&transposed(a)?, g)?))
        }
        (1, 2) => {
            let acol = reshape(a, &[a.numel(), 1])?;
            let grow = reshape(g, &[1, g.numel()])?;
            Ok((matmul(b, g)?, matmul(&acol, &grow)?))
        }
        (ra, rb) if ra >= 2 && rb >= 2 => {
            let ga = matmul_t(g, b, Trans::B)?;
            let gb = matmul_t(a, g, Trans::A)?;
            Ok((summed_to(&ga, a.shape())?, summed_to(&gb, b.shape())?))
        }
        (ra, rb) => Err(TensorError::shape(format!(
            "retro_matmul: ranks {ra} and {rb}"
        ))),
    }
}

/// `x · s` for the number `s` (`x.multiplica(s)` as a rank-0 tensor; in f32 `s` is the
/// f32 element it was read from).
fn times(x: &Tensor, s: f64) -> TResult<Tensor> {
    match x.dtype() {
        DType::F64 => mul(x, &Tensor::scalar(s)),
        DType::F32 => vjp_f32::times(x, s as f32),
    }
}

/// The rank-2 `x` transposed (`transpone`).
fn transposed(x: &Tensor) -> TResult<Tensor> {
    match x.dtype() {
        DType::F64 => transpose(x),
        DType::F32 => vjp_f32::transposed(x),
    }
}

/// `g` summed back to `shape` over its broadcast axes (`summa_ad_formam`).
fn summed_to(g: &Tensor, shape: &[usize]) -> TResult<Tensor> {
    match g.dtype() {
        DType::F64 => sum_to_shape(g, shape),
        DType::F32 => vjp_f32::summed_to(g, shape),
    }
}
