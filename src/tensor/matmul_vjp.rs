//! The VJP of a 2-D matmul as one call (both products, side by side on two threads)
//! and the operations the GEMM kernels apply to a product's elements as they finish
//! ([`Post`]), which a companion's fused VJPs use (docs/autodiff.md § Fusion).

use super::elementwise::SendPtr;
use super::matmul::{gemm_fast, matmul_t, Strides, Trans, EXACT_MATMUL_MAX_WORK};
use super::{TResult, Tensor};

/// What the GEMM kernels do with each finished element `c` of a product besides storing
/// it, reading the element `v` of the same place in a matrix laid out like `c` (same row
/// stride): `Mul` stores `c·v`, `Add` stores `v + c` — each rounded once, the bits of the
/// product followed by `multiplica(c, v)` / `addita(v, c)`. A companion's fused VJPs use
/// them (`retro_matmul_derivata`, `retro_matmul_adde`; docs/autodiff.md § Fusion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PostOp {
    Mul,
    Add,
}

/// A [`PostOp`] with its matrix.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Post {
    pub op: PostOp,
    pub m: *const f64,
}

// SAFETY: the matrix is only read, and only while the product that owns the `Post` runs
// (its callers keep it alive and unwritten for that time).
unsafe impl Send for Post {}
// SAFETY: as above.
unsafe impl Sync for Post {}

impl Post {
    /// The same operation on the matrix `off` elements further on (a block of `c`).
    pub fn at(self, off: usize) -> Post {
        Post {
            m: self.m.wrapping_add(off),
            ..self
        }
    }

    /// `c[i][j] ← op(c[i][j], v[i][j])` for the `rows×cols` block of `c` (row stride
    /// `ld`, the matrix's too).
    ///
    /// # Safety
    /// `c` addresses the `rows×cols` writable elements of row stride `ld`, the matrix
    /// as many readable ones, not overlapping.
    #[inline]
    // `v + c`, not `c += v`: with two NaNs the first operand's payload is kept, as
    // `addita(v, c)` keeps it.
    #[allow(clippy::assign_op_pattern)]
    pub unsafe fn rows(self, rows: usize, cols: usize, c: *mut f64, ld: usize) {
        for i in 0..rows {
            // SAFETY: row i's cols elements of each (as required).
            let (cr, vr) = unsafe {
                (
                    std::slice::from_raw_parts_mut(c.add(i * ld), cols),
                    std::slice::from_raw_parts(self.m.add(i * ld), cols),
                )
            };
            match self.op {
                PostOp::Mul => cr.iter_mut().zip(vr).for_each(|(x, &v)| *x *= v),
                PostOp::Add => cr.iter_mut().zip(vr).for_each(|(x, &v)| *x = v + *x),
            }
        }
    }
}

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

    /// The operation applied to a finished `∂a`, in a pass of its own.
    pub fn apply(self, ga: &Tensor) -> TResult<Tensor> {
        match self {
            VjpPost::Scale(d) => super::gelu_backward_derivata(ga, d),
            VjpPost::AddTo(r) => super::add(r, ga),
        }
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
    let (mut da, mut db) = (super::alloc(m * k)?, super::alloc(k * n)?);
    // SAFETY: each GEMM below writes every element of its output.
    let (pa, pb) = unsafe { (SendPtr(da.assume_filled()), SendPtr(db.assume_filled())) };
    let (ad, bd, gd) = (a.data(), b.data(), g.data());
    let post = post.map(|(op, t)| (op, t.data()));
    let product = |i: usize| {
        // SAFETY: m, n, k ≥ 1 (work > 0); the strides address the stored m×n, k×n and
        // m×k matrices (the post tensor: m×k, checked above); each output is written by this call
        // alone.
        unsafe {
            if i == 0 {
                // g (m×n) · bᵀ (n×k), b stored k×n
                gemm_fast(
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
                gemm_fast(
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
    if super::threads() < 2 {
        // The products `matmul_t` would form, one after the other.
        product(0);
        product(1);
    } else {
        super::pool::run_blocks(2, &|i| {
            let before = super::set_threads(1);
            product(i);
            super::set_threads(before);
        });
    }
    Ok((
        Tensor::from_parts([m, k], da),
        Tensor::from_parts([k, n], db),
    ))
}
