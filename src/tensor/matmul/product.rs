//! `a · b` / `a.matmul(b)`: dot, mat-vec, vec-mat, matmul and batched matmul
//! (ranks 3 and 4, batch axes broadcast NumPy-style).
//!
//! Two kernels compute each 2-D product `[m,k]·[k,n]`:
//! * **exact** — the oracles' recipe (docs/ops.md), bit-exact with the oracle
//!   captures: `acc = a[i,0]·b[0,j]`, then `acc += a[i,p]·b[p,j]` for
//!   p = 1, 2, … in order (no FMA; k = 0 gives 0.0);
//! * **fast** — on x86-64 CPUs with AVX-512F our packed, cache-blocked GEMM
//!   with an 8×24 AVX-512 FMA microkernel (`gemm/avx512.rs`), elsewhere
//!   `matrixmultiply::dgemm` (blocked, SIMD, FMA); either's rounding differs
//!   from the exact order by a few ulps.
//!
//! [`matmul_t`] computes `op(a) · op(b)` where `op` may transpose the last two
//! axes of an operand (ranks ≥ 2): the backward pass's `g · bᵀ` and `aᵀ · g`
//! without a transposed copy — the fast kernel reads the operand in place; the
//! exact kernel (small products) copies it, so both give the same bits as
//! `matmul(transpose(a), b)`.
//!
//! [`matmul`] uses the exact kernel when `m·n·k ≤ EXACT_MATMUL_MAX_WORK` for
//! each 2-D product, and always for dot, mat-vec and vec-mat; above it the fast
//! kernel. [`matmul_exact`] and [`matmul_fast`] force one kernel.
//!
//! **f32 operands** (every operand f32) compute natively in f32, on the same shape logic
//! (generic over the element, tensor/elem.rs): every product is the sgemm's
//! (`gemm/sgemm/`: f32 FMA accumulation in fixed k-blocks, the same bits on any ISA and
//! thread count, error at most `γ·Σ|a||b|` per element with `γ ≈ (k + ⌈k/256⌉)·2⁻²⁴`).
//! There is no small-product special case: the f64 exact kernel exists to reproduce
//! the f64 oracle captures, and f32 has none. Dot, mat-vec and vec-mat are the sgemm's
//! products of their matrix forms (`[1, k]·[k, 1]`, `[m, k]·[k, 1]`, `[1, k]·[k, n]`),
//! so the same bits as the matrix product. [`matmul_exact`] on f32 operands is the
//! exact in-order kernel in f32 (every product and sum rounded to f32, no FMA).
//! Operands of both types are computed in f64 (the f32 ones widened exactly), as the
//! evaluator promotes them.

use crate::tensor::elem::{by_dtype, Float, ResultBuf};
use crate::tensor::gemm::{exact_strided, gemm_exact, Strides};
use crate::tensor::par_f32::SendPtrOf;
use crate::tensor::shape::broadcast_shapes;
use crate::tensor::{
    broadcast_conflict, checked_numel, fmt_shape, threads, Limits, TResult, Tensor, TensorError,
};

/// Largest `m·n·k` of one 2-D product that [`matmul`] computes with the
/// exact in-order kernel (32·32·64).
pub const EXACT_MATMUL_MAX_WORK: usize = 1 << 16;

/// Batched products split their batch over threads from this many multiply-adds.
const PAR_MIN_BATCHED_WORK: usize = 1 << 20;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Auto,
    Exact,
    Fast,
}

/// Which operands of a product are read with their last two axes swapped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trans {
    pub a: bool,
    pub b: bool,
}

impl Trans {
    pub const NONE: Trans = Trans { a: false, b: false };
    /// `a · bᵀ`
    pub const B: Trans = Trans { a: false, b: true };
    /// `aᵀ · b`
    pub const A: Trans = Trans { a: true, b: false };
}

/// `a · b` with the automatic kernel choice (see the module docs).
pub fn matmul(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    by_dtype(a, b, Mode::Auto, Trans::NONE)
}

/// `op(a) · op(b)` (see the module docs), automatic kernel choice; an operand read
/// transposed must have rank ≥ 2.
pub fn matmul_t(a: &Tensor, b: &Tensor, t: Trans) -> TResult<Tensor> {
    by_dtype(a, b, Mode::Auto, t)
}

/// `a · b` always with the exact in-order kernel.
pub fn matmul_exact(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    by_dtype(a, b, Mode::Exact, Trans::NONE)
}

/// `a · b` always with the GEMM kernel for 2-D products (dot, mat-vec and
/// vec-mat still use the in-order loops in f64).
pub fn matmul_fast(a: &Tensor, b: &Tensor) -> TResult<Tensor> {
    by_dtype(a, b, Mode::Fast, Trans::NONE)
}

/// [`matmul_mode`] in f32 when both operands are f32, else in f64 (an f32 operand
/// widened exactly).
#[inline(always)]
fn by_dtype(a: &Tensor, b: &Tensor, mode: Mode, tr: Trans) -> TResult<Tensor> {
    by_dtype!(matmul_mode, [a, b], mode, tr)
}

/// The error for operands that do not fit, naming the axes that disagree:
/// `matmul: [2, 3] · [2, 3]: the inner dimensions differ (3 against 2: axis 1 of
/// the left, axis 0 of the right)`. Only built on the error path.
#[cold]
#[inline(never)]
fn mismatch(a: &Tensor, b: &Tensor, t: Trans) -> TensorError {
    let mark = |x: bool| if x { "ᵀ" } else { "" };
    TensorError::shape(format!(
        "matmul: {}{} · {}{}: {}",
        fmt_shape(a.shape()),
        mark(t.a),
        fmt_shape(b.shape()),
        mark(t.b),
        mismatch_reason(a.shape(), b.shape(), t)
    ))
}

/// Why shapes `sa`, `sb` (read transposed where `t` says) do not multiply; mirrors
/// the checks of [`matmul_mode`].
fn mismatch_reason(sa: &[usize], sb: &[usize], t: Trans) -> String {
    let (ra, rb) = (sa.len(), sb.len());
    for (side, tr, r) in [("left", t.a, ra), ("right", t.b, rb)] {
        if tr && r < 2 {
            return format!(
                "the {side} operand is read transposed and needs rank ≥ 2, found rank {r}"
            );
        }
    }
    let inner = |ia: usize, ib: usize| {
        format!(
            "the inner dimensions differ ({} against {}: axis {ia} of the left, axis {ib} of the right)",
            sa[ia], sb[ib]
        )
    };
    match (ra, rb) {
        (1, 1) => inner(0, 0),
        (1, 2) => inner(0, if t.b { 1 } else { 0 }),
        (2, 1) => inner(if t.a { 0 } else { 1 }, 0),
        (ra, rb) if (2..=4).contains(&ra) && (2..=4).contains(&rb) => {
            let ia = if t.a { ra - 2 } else { ra - 1 };
            let ib = if t.b { rb - 1 } else { rb - 2 };
            if sa[ia] != sb[ib] {
                return inner(ia, ib);
            }
            let (ba, bb) = (&sa[..ra - 2], &sb[..rb - 2]);
            format!(
                "the batch axes {} and {} do not broadcast ({})",
                fmt_shape(ba),
                fmt_shape(bb),
                broadcast_conflict(ba, bb)
            )
        }
        (ra, rb) => format!(
            "ranks {ra} and {rb} do not combine (vectors are rank 1, matrices and batches rank 2 to 4)"
        ),
    }
}

/// The transpose of row-major `x` (`r×c`) as a row-major `c×r` matrix.
fn transposed_copy<T: Float>(r: usize, c: usize, x: &[T]) -> Vec<T> {
    let mut out = vec![T::ZERO; r * c];
    for (i, row) in x.chunks_exact(c).take(r).enumerate() {
        for (j, &v) in row.iter().enumerate() {
            out[j * r + i] = v;
        }
    }
    out
}

/// The rank-2 tensor `x` (`[r, c]`) transposed (`[c, r]`), a copy.
fn transposed_tensor<T: Float>(x: &Tensor) -> TResult<Tensor> {
    let &[r, c] = x.shape() else {
        unreachable!("transposed_tensor takes rank 2")
    };
    let mut out = T::alloc(r * c)?;
    let xd = T::data(x);
    for j in 0..c {
        for i in 0..r {
            out.push(xd[i * c + j]);
        }
    }
    out.into_tensor(&[c, r])
}

/// Largest `m·n·k` of a plain 2-D product that [`small_2d`] computes directly.
const SMALL_WORK: usize = 512;

/// A small 2-D product `op(a)·op(b)` in the exact kernel's order — `a(i,0)·b(0,j)`,
/// then `+= a(i,p)·b(p,j)` for p = 1, 2, … — read through strides (no transposed
/// copy, no zero-filled output), so the same bits as [`gemm_exact`]. `None` when
/// the product is not a small one with `k ≥ 1` (the general path decides).
#[inline]
fn small_2d<T: Float>(a: &Tensor, b: &Tensor, tr: Trans) -> Option<TResult<Tensor>> {
    let (&[a0, a1], &[b0, b1]) = (a.shape(), b.shape()) else {
        return None;
    };
    let (m, k) = if tr.a { (a1, a0) } else { (a0, a1) };
    let (k2, n) = if tr.b { (b1, b0) } else { (b0, b1) };
    if k != k2 || k == 0 || m > SMALL_WORK || n > SMALL_WORK || m * n * k > SMALL_WORK {
        return None;
    }
    // a(i,p) = ad[i·ra + p·ca], b(p,j) = bd[p·rb + j·cb]
    let (ra, ca) = if tr.a { (1, m) } else { (k, 1) };
    let (rb, cb) = if tr.b { (1, k) } else { (n, 1) };
    // No overflow: k ≥ 1 and m·n·k ≤ SMALL_WORK. Over the thread's limit: its error.
    let total = m * n;
    if total > Limits::current().max_elements {
        if let Err(e) = checked_numel(&[m, n]) {
            return Some(Err(e));
        }
    }
    let mut out = match T::alloc(total) {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    let (ad, bd) = (T::data(a), T::data(b));
    if ad.len() != m * k || bd.len() != k * n {
        return None;
    }
    let (sa, sb) = (Strides { row: ra, col: ca }, Strides { row: rb, col: cb });
    // SAFETY: `i·ra + p·ca ≤ m·k − 1 < ad.len()` and `p·rb + j·cb ≤ k·n − 1 < bd.len()`
    // for either stride pair (lengths checked above); k ≥ 1.
    unsafe { exact_strided(m, n, k, ad, sa, bd, sb, |v| out.push(v)) };
    Some(out.into_tensor(&[m, n]))
}

/// A product with a vector operand in f32 (`T::EXACT_SMALL` false): the product
/// of its matrix forms — a left vector `[k]` as `[1, k]`, a right one as `[k, 1]` —
/// with that axis dropped from the result; `None` for two matrices or batches. Shapes
/// that do not fit give the error of the vector form. A transposed matrix operand
/// beside a vector is read transposed.
fn vector_as_matrix<T: Float>(
    a: &Tensor,
    b: &Tensor,
    mode: Mode,
    tr: Trans,
) -> Option<TResult<Tensor>> {
    let (sa, sb) = (a.shape(), b.shape());
    let (am, bm) = match (sa.len(), sb.len()) {
        (1, 1) => ([1, sa[0]], [sb[0], 1]),
        (2, 1) => ([sa[0], sa[1]], [sb[0], 1]),
        (1, 2) => ([1, sa[0]], [sb[0], sb[1]]),
        _ => return None,
    };
    let ka = if sa.len() == 2 && tr.a { am[0] } else { am[1] };
    let kb = if sb.len() == 2 && tr.b { bm[1] } else { bm[0] };
    if ka != kb || (tr.a && sa.len() < 2) || (tr.b && sb.len() < 2) {
        return Some(Err(mismatch(a, b, tr)));
    }
    let run = || {
        let p = matmul_mode::<T>(
            &Tensor::reshaped(a, &am),
            &Tensor::reshaped(b, &bm),
            mode,
            tr,
        )?;
        let shape: Vec<usize> = match (sa.len(), sb.len()) {
            (1, 1) => vec![],
            (2, 1) => vec![p.shape()[0]],
            _ => vec![p.shape()[1]],
        };
        Ok(Tensor::reshaped(&p, &shape))
    };
    Some(run())
}

fn matmul_mode<T: Float>(a: &Tensor, b: &Tensor, mode: Mode, tr: Trans) -> TResult<Tensor> {
    // f64: the exact kernel for small products unless forced fast; f32 only when forced
    // exact (its automatic choice is the sgemm, elem.rs).
    let exact_small = match mode {
        Mode::Auto => T::EXACT_SMALL,
        Mode::Exact => true,
        Mode::Fast => false,
    };
    if exact_small {
        if let Some(r) = small_2d::<T>(a, b, tr) {
            return r;
        }
    }
    if !T::EXACT_SMALL {
        if let Some(r) = vector_as_matrix::<T>(a, b, mode, tr) {
            return r;
        }
    }
    let (sa, sb) = (a.shape(), b.shape());
    let mismatch = |a, b| mismatch(a, b, tr);
    if (tr.a && sa.len() < 2) || (tr.b && sb.len() < 2) {
        return Err(mismatch(a, b));
    }
    match (sa.len(), sb.len()) {
        (2, 1) | (1, 2) if tr.a || tr.b => {
            // A matrix read transposed beside a vector: its transposed copy, then the
            // in-order vector product.
            let k = if sa.len() == 2 { sa[0] } else { sb[1] };
            if k != if sa.len() == 2 { sb[0] } else { sa[0] } {
                return Err(mismatch(a, b));
            }
            if sa.len() == 2 {
                matmul_mode::<T>(&transposed_tensor::<T>(a)?, b, mode, Trans::NONE)
            } else {
                matmul_mode::<T>(a, &transposed_tensor::<T>(b)?, mode, Trans::NONE)
            }
        }
        (1, 1) => {
            if sa[0] != sb[0] {
                return Err(mismatch(a, b));
            }
            let mut out = T::alloc(1)?;
            out.push(dot(T::data(a), T::data(b)));
            out.into_tensor(&[])
        }
        (2, 1) => {
            let (m, k) = (sa[0], sa[1]);
            if k != sb[0] {
                return Err(mismatch(a, b));
            }
            let mut out = T::alloc_zeros(m)?;
            let (ad, bd) = (T::data(a), T::data(b));
            for (i, o) in out.iter_mut().enumerate() {
                *o = dot(&ad[i * k..(i + 1) * k], bd);
            }
            out.into_tensor(&[m])
        }
        (1, 2) => {
            let (k, n) = (sb[0], sb[1]);
            if k != sa[0] {
                return Err(mismatch(a, b));
            }
            let mut out = T::alloc_zeros(n)?;
            gemm_exact(1, n, k, T::data(a), T::data(b), &mut out);
            out.into_tensor(&[n])
        }
        (ra, rb) if (2..=4).contains(&ra) && (2..=4).contains(&rb) => {
            let (m, k) = if tr.a {
                (sa[ra - 1], sa[ra - 2])
            } else {
                (sa[ra - 2], sa[ra - 1])
            };
            let (k2, n) = if tr.b {
                (sb[rb - 1], sb[rb - 2])
            } else {
                (sb[rb - 2], sb[rb - 1])
            };
            if k != k2 {
                return Err(mismatch(a, b));
            }
            let (ba, bb) = (&sa[..ra - 2], &sb[..rb - 2]);
            let batch = broadcast_shapes(ba, bb).map_err(|_| mismatch(a, b))?;
            let mut out_shape = batch.clone();
            out_shape.extend([m, n]);
            let total = checked_numel(&out_shape)?;
            if total == 0 {
                return T::alloc_zeros(0)?.into_tensor(&out_shape);
            }
            let nb: usize = batch.iter().product();
            // Auto: the exact kernel for small products — judged on the whole batch, so
            // a batch of many small products (attention heads) takes the fast kernel
            // (f32: never, elem.rs).
            let exact = match mode {
                Mode::Exact => true,
                Mode::Fast => false,
                Mode::Auto => {
                    T::EXACT_SMALL
                        && (m * n).saturating_mul(k).saturating_mul(nb) <= EXACT_MATMUL_MAX_WORK
                }
            };
            let exact = exact || k == 0;
            // The exact kernel accumulates into zeros; the fast one stores every element
            // of every product itself (its first k-block stores, later ones add), so its
            // output is not zero-filled first.
            let mut out = if exact {
                T::alloc_zeros(total)?
            } else {
                T::alloc(total)?
            };
            // SAFETY: every slot is written below: the zero-filled buffer already is,
            // and the fast kernel writes each element of each m×n product (the
            // products tile the buffer: the tall one covers nb·m rows, the batched ones
            // nb consecutive m×n blocks).
            let base = SendPtrOf::new(unsafe { out.assume_filled() });
            // `rows` is m, or nb·m for the tall product below (only when a is not
            // transposed); a transposed operand's matrix is stored as [k, rows] / [n, k].
            let kernel = |rows: usize, ad: &[T], bd: &[T], od: *mut T| {
                if exact {
                    // SAFETY: `od` addresses rows·n initialised (zero) elements of `out`
                    // that no other reference covers during this call.
                    let od = unsafe { std::slice::from_raw_parts_mut(od, rows * n) };
                    let (at, bt);
                    let ad = if tr.a {
                        at = transposed_copy(k, rows, ad);
                        &at[..]
                    } else {
                        ad
                    };
                    let bd = if tr.b {
                        bt = transposed_copy(n, k, bd);
                        &bt[..]
                    } else {
                        bd
                    };
                    gemm_exact(rows, n, k, ad, bd, od)
                } else {
                    let sa = if tr.a {
                        Strides::transposed(rows)
                    } else {
                        Strides::rows(k)
                    };
                    let sb = if tr.b {
                        Strides::transposed(k)
                    } else {
                        Strides::rows(n)
                    };
                    // SAFETY: `od` addresses rows·n elements of `out`, written by no one
                    // else during this call and not overlapping a or b.
                    unsafe { T::gemm_fast(rows, n, k, ad, sa, bd, sb, od, None) }
                }
            };
            if !tr.a && bb.iter().product::<usize>() == 1 && ba == batch.as_slice() {
                // b is one matrix: the batch of a is one tall [nb·m, k] matrix.
                kernel(nb * m, T::data(a), T::data(b), base.get());
            } else {
                let ia = batch_offsets(ba, &batch);
                let ib = batch_offsets(bb, &batch);
                let (ad, bd) = (T::data(a), T::data(b));
                // One product per batch index; the indices are split over threads in
                // contiguous groups when the work is large (each result depends only
                // on its own operands, so never on the thread count).
                let run = |first: usize, count: usize| {
                    for t in first..first + count {
                        let (oa, ob) = (ia[t] * m * k, ib[t] * k * n);
                        // SAFETY: product t owns elements [t·m·n, (t+1)·m·n) of `out`.
                        let c = unsafe { base.get().add(t * m * n) };
                        kernel(m, &ad[oa..oa + m * k], &bd[ob..ob + k * n], c);
                    }
                };
                let work = (m * n).saturating_mul(k).saturating_mul(nb);
                let workers = threads().min(nb);
                if workers > 1 && work >= PAR_MIN_BATCHED_WORK {
                    let per = nb.div_ceil(workers);
                    crate::tensor::pool::run_blocks(nb.div_ceil(per), &|i| {
                        run(i * per, per.min(nb - i * per))
                    });
                } else {
                    run(0, nb);
                }
            }
            out.into_tensor(&out_shape)
        }
        _ => Err(mismatch(a, b)),
    }
}

/// For each batch index of `out` (row-major), the matrix index in an operand
/// with batch shape `shape` broadcast to `out`.
fn batch_offsets(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let total: usize = out.iter().product();
    let rank = out.len();
    let mut strides = vec![0usize; rank];
    let mut s = 1;
    for i in (0..shape.len()).rev() {
        let oi = i + rank - shape.len();
        strides[oi] = if shape[i] == 1 { 0 } else { s };
        s *= shape[i];
    }
    (0..total)
        .map(|mut t| {
            let mut off = 0;
            for ax in (0..rank).rev() {
                off += (t % out[ax]) * strides[ax];
                t /= out[ax];
            }
            off
        })
        .collect()
}

/// In-order dot product: `a0·b0`, then `+= ai·bi`; empty → 0.
fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    let Some((&a0, ar)) = a.split_first() else {
        return T::ZERO;
    };
    let mut acc = a0 * b[0];
    for (&x, &y) in ar.iter().zip(&b[1..]) {
        acc += x * y;
    }
    acc
}
