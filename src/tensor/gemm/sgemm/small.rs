//! f32 products without packing, for `k ≤ KC` and `n ≤ MAX_N` (the attention heads'
//! `[T, hd]·[hd, T]` and `[T, T]·[T, hd]`, narrow projections), generic over the SIMD
//! [`Lanes`]: `R × 2W` tiles (8×32 on AVX-512, 6×16 on AVX2), the last one `R × W`
//! when at most W columns are left. Each accumulator starts at +0.0 and takes one FMA
//! per `p = 0, 1, …, k − 1` in order — the packed kernel's chain for a product of one
//! k-block, so the same bits. Rows of `a` are read through its strides (one broadcast
//! per element); `b` a row at a time, so a `b` read transposed is first copied to
//! row-major order (`k·n` values). A [`Tri`] other than `Full` leaves out the part of
//! a causal product that is not needed or is made of exact zeros (gemm/layout.rs).

use std::cell::RefCell;

use super::lanes::Lanes;
use super::{Strides, Tri};
use crate::tensor::gemm::post::{Post, PostOp};

thread_local! {
    /// Row-major copy of a transposed `b`, kept between calls on this thread.
    static B_ROWS: RefCell<Vec<f32>> = const { RefCell::new(Vec::new()) };
}

/// What every row block shares.
#[derive(Clone, Copy)]
pub(super) struct Geometry {
    pub n: usize,
    pub k: usize,
    pub sa: Strides,
    pub ldc: usize,
    pub tri: Tri,
    pub post: Option<Post<f32>>,
}

/// `c = a·b` for `a` (`m×k`, strides `sa`), `b` (`k×n`, strides `sb`), `c` (`m×n`
/// with row stride `ldc` ≥ n, every element written but those [`Tri::LowerOut`]
/// leaves out), on this thread, with `R`-row tiles; then `post` (its matrix laid out
/// as `c`).
///
/// # Safety
/// The ISA of `L` is present; `1 ≤ k`; `a` and `b` hold every element their strides
/// address; `c` addresses the `m×n` matrix of row stride `ldc` (writable, accessed by
/// nothing else during the call, not overlapping `a` or `b`); so does `post`'s matrix
/// (read only).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) unsafe fn gemm<L: Lanes, const R: usize>(
    m: usize,
    a: &[f32],
    b: &[f32],
    sb: Strides,
    c: *mut f32,
    g: Geometry,
) {
    let (n, k) = (g.n, g.k);
    if sb.col == 1 {
        // SAFETY: as this function requires; rows of b are contiguous.
        unsafe { rows_all::<L, R>(m, g, a.as_ptr(), b.as_ptr(), sb.row, c) };
        return;
    }
    // The copy is taken out of the thread-local for the call (the kernel must not run
    // inside a closure: one without the ISA's target features would not inline it).
    let mut bt = B_ROWS.with(|cell| std::mem::take(&mut *cell.borrow_mut()));
    // Every element is written below: grow (zeroing only the new part), never clear.
    if bt.len() < k * n {
        bt.resize(k * n, 0.0);
    }
    for (p, row) in bt[..k * n].chunks_exact_mut(n).enumerate() {
        for (j, o) in row.iter_mut().enumerate() {
            // SAFETY: element (p, j) of b is inside b (as required).
            *o = unsafe { *b.get_unchecked(p * sb.row + j * sb.col) };
        }
    }
    // SAFETY: bt holds the row-major k×n copy of b; the rest as required.
    unsafe { rows_all::<L, R>(m, g, a.as_ptr(), bt.as_ptr(), n, c) };
    B_ROWS.with(|cell| *cell.borrow_mut() = bt);
}

/// Every row block of `c`: `R` rows at a time, then the remaining ones.
///
/// # Safety
/// As [`gemm`], with `b` row-major of row stride `ldb`.
#[inline(always)]
unsafe fn rows_all<L: Lanes, const R: usize>(
    m: usize,
    g: Geometry,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
) {
    let mut i = 0;
    while i + R <= m {
        // SAFETY: rows i..i+R are inside a and c.
        unsafe { rows::<L, R>(i, g, a, b, ldb, c) };
        i += R;
    }
    // SAFETY: rows i..m (fewer than R ≤ 8) are inside a and c.
    unsafe {
        match m - i {
            0 => {}
            1 => rows::<L, 1>(i, g, a, b, ldb, c),
            2 => rows::<L, 2>(i, g, a, b, ldb, c),
            3 => rows::<L, 3>(i, g, a, b, ldb, c),
            4 => rows::<L, 4>(i, g, a, b, ldb, c),
            5 => rows::<L, 5>(i, g, a, b, ldb, c),
            6 => rows::<L, 6>(i, g, a, b, ldb, c),
            _ => rows::<L, 7>(i, g, a, b, ldb, c),
        }
    }
}

/// Rows `i0..i0+R` of `c`, `2W` columns at a time (the last tile `W` wide when it can
/// be), the columns and terms `g.tri` keeps.
///
/// # Safety
/// As [`rows_all`], with rows `i0..i0+R` inside `a` and `c`.
#[inline(always)]
unsafe fn rows<L: Lanes, const R: usize>(
    i0: usize,
    g: Geometry,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
) {
    let last = i0 + R;
    let n = match g.tri {
        Tri::LowerOut => g.n.min(last),
        _ => g.n,
    };
    let mut j0 = 0;
    while j0 < n {
        let w = (n - j0).min(2 * L::W);
        // SAFETY: columns j0..j0+w of rows i0..i0+R (as required).
        unsafe {
            if w > L::W {
                tile::<L, R, 2>(i0, j0, w, g, a, b, ldb, c);
            } else {
                tile::<L, R, 1>(i0, j0, w, g, a, b, ldb, c);
            }
        }
        j0 += 2 * L::W;
    }
}

/// The `R × NV·W` tile at `(i0, j0)`, its first `w` columns valid.
///
/// # Safety
/// As [`rows`], with columns `j0..j0+w` inside `c` (and the post matrix).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn tile<L: Lanes, const R: usize, const NV: usize>(
    i0: usize,
    j0: usize,
    w: usize,
    g: Geometry,
    a: *const f32,
    b: *const f32,
    ldb: usize,
    c: *mut f32,
) {
    let Geometry {
        k,
        sa,
        ldc,
        tri,
        post,
        ..
    } = g;
    let last = i0 + R;
    // Terms every row of the block takes (`before`, `after`) and, for LowerA / UpperA,
    // the terms of the block's own diagonal square, which row i0 + r takes only on its
    // side of the diagonal (p ≤ i0 + r, or p ≥ i0 + r): p ascending throughout.
    let square = i0.min(k)..last.min(k);
    let (before, square, after) = match tri {
        Tri::Full | Tri::LowerOut => (0..k, 0..0, 0..0),
        Tri::LowerA => (0..i0.min(k), square, 0..0),
        Tri::UpperA => (0..0, square, last.min(k)..k),
    };
    let lower = tri == Tri::LowerA;
    let part = |v: usize| w.saturating_sub(v * L::W).min(L::W);
    let full = w == NV * L::W;
    // SAFETY: the ISA is present; lanes j0..j0+w of the rows of b, of c and of the post
    // matrix, and elements (i0 + r, p < k) of a, are inside them; masked-off lanes
    // are not accessed.
    unsafe {
        let mut acc = [[L::zero(); NV]; R];
        // Terms p of `range` for the rows `takes(r, p)` says.
        macro_rules! terms {
            ($range:expr, $takes:expr) => {
                for p in $range {
                    let bp = b.wrapping_add(p * ldb + j0);
                    let mut bv = [L::zero(); NV];
                    for (q, x) in bv.iter_mut().enumerate() {
                        let at = bp.wrapping_add(q * L::W);
                        *x = if full {
                            L::load(at)
                        } else {
                            L::load_part(at, part(q))
                        };
                    }
                    for (r, row) in acc.iter_mut().enumerate() {
                        if $takes(r, p) {
                            let av = L::splat(*a.add((i0 + r) * sa.row + p * sa.col));
                            for (x, &y) in row.iter_mut().zip(&bv) {
                                *x = L::fma(av, y, *x);
                            }
                        }
                    }
                }
            };
        }
        terms!(before, |_, _| true);
        terms!(square, |r: usize, p: usize| if lower {
            r >= p - i0
        } else {
            r <= p - i0
        });
        terms!(after, |_, _| true);
        if let Some(Post { op, m: d }) = post {
            for (r, row) in acc.iter_mut().enumerate() {
                let dp = d.wrapping_add((i0 + r) * ldc + j0);
                for (q, x) in row.iter_mut().enumerate() {
                    let v = L::load_part(dp.wrapping_add(q * L::W), part(q));
                    *x = match op {
                        PostOp::Mul => L::mul(*x, v),
                        PostOp::Add => L::add(v, *x),
                    };
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            let cp = c.wrapping_add((i0 + r) * ldc + j0);
            for (q, &x) in row.iter().enumerate() {
                let lanes = part(q);
                if lanes == L::W {
                    L::store(cp.wrapping_add(q * L::W), x);
                } else {
                    L::store_part(cp.wrapping_add(q * L::W), lanes, x);
                }
            }
        }
    }
}
