//! Products without packing, for k ≤ 256 and n that fits 16-wide tiles (n ≤ 128: the
//! attention heads' `[64, 16] · [16, 64]` and `[64, 64] · [64, 16]`, and the model's
//! `[1024, 64] · [64, 64]`-like products, on row blocks when threaded): there the packed
//! GEMM spends more time packing, padding 16-wide edges to its 24-wide tiles and setting
//! up each call than multiplying (12–15 GFLOP/s on the attention heads).
//!
//! Each `8 × 16` tile of `c` keeps 16 AVX-512 accumulators that start at +0.0 and take
//! one fused multiply-add per `p = 0, 1, …, k − 1` in order — the packed kernel's
//! sequence for a product that fits one of its k-blocks (`k ≤ KC`), so the results are
//! bit for bit those of [`super::packed::gemm_packed`]. Rows of `a` are read through its
//! strides (one broadcast per element); `b` is read a row at a time, so a `b` read
//! transposed (`matmul_nt`) is first copied to row-major order (at most `k·n` values).
//!
//! A [`Tri`] other than `Full` leaves out the part of a causal attention product that
//! is not needed or is made of exact zeros (see there).

use std::arch::x86_64::*;
use std::cell::RefCell;

use super::layout::{Strides, Tri};
use super::post::{Post, PostOp};

/// Largest `n` of a product [`gemm`] takes: a k-block (k ≤ 256) of `b` stays in L2
/// without packing while the rows of `a` stream past it.
const MAX_N: usize = 128;

/// Whether a product with `n` columns is better done here than by the packed kernel:
/// `n ≤ MAX_N` and the 16-wide tiles waste no more columns than its 24-wide ones
/// (n = 64: 64 against 72 computed; n = 69: 80 against 72).
pub(super) fn suits(n: usize) -> bool {
    n <= MAX_N && n.div_ceil(16) * 16 <= n.div_ceil(24) * 24
}

thread_local! {
    /// Row-major copy of a transposed `b`, kept between calls on this thread.
    static B_ROWS: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// `c = a·b` for `a` (`m×k`, strides `sa`), `b` (`k×n`, strides `sb`), `c` (`m×n` at
/// `c` with row stride `ldc` ≥ n, every element written — but those [`Tri::LowerOut`]
/// leaves out —, need not be initialised), on this thread; `tri` as [`Tri`] says.
/// With `post`, each element is stored as [`Post`] says (its matrix `m×n`, row stride
/// `ldc`), rounded once: the bits of the product, then that operation.
/// The caller checks AVX-512F and `1 ≤ k ≤ KC`.
///
/// # Safety
/// AVX-512F is available; `a` and `b` hold every element their strides address;
/// `c` addresses the `m×n` matrix of row stride `ldc` (writable f64 that nothing else
/// accesses during the call and that do not overlap `a` or `b`); so does `post`'s matrix
/// (read only) when given.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    sa: Strides,
    b: &[f64],
    sb: Strides,
    c: *mut f64,
    ldc: usize,
    tri: Tri,
    post: Option<Post>,
) {
    let geo = Geometry {
        n,
        k,
        sa,
        ldc,
        tri,
        post,
    };
    if sb.col == 1 {
        // SAFETY: as this function requires; rows of b are contiguous.
        unsafe { rows_all(m, geo, a.as_ptr(), b.as_ptr(), sb.row, c) };
        return;
    }
    B_ROWS.with(|cell| {
        let mut bt = cell.borrow_mut();
        // Every element is written below: grow (zeroing only the new part), never clear.
        if bt.len() < k * n {
            bt.resize(k * n, 0.0);
        }
        let bt = &mut bt[..k * n];
        // SAFETY: AVX-512F is present; sb addresses the k×n elements of b (as
        // required).
        unsafe { copy_rows(k, n, b.as_ptr(), sb, bt) };
        // SAFETY: bt is the row-major k×n copy of b (row stride n); the rest as
        // this function requires.
        unsafe { rows_all(m, geo, a.as_ptr(), bt.as_ptr(), n, c) };
    });
}

/// `bt` (`k×n`, row-major) = the `k×n` matrix `b` of strides `sb`: eight columns of a
/// row at a time by one gather, the rest one by one.
///
/// # Safety
/// AVX-512F is available; `sb` addresses only elements of `b`'s allocation for every
/// `(p, j)` in `k×n`; `bt` holds `k·n` elements.
#[target_feature(enable = "avx512f")]
unsafe fn copy_rows(k: usize, n: usize, b: *const f64, sb: Strides, bt: &mut [f64]) {
    debug_assert!(bt.len() == k * n);
    let lanes: [i64; 8] = std::array::from_fn(|l| (l * sb.col) as i64);
    // SAFETY: reading [i64; 8] as a 512-bit vector (unaligned load).
    let idx = unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) };
    for (p, row) in bt.chunks_exact_mut(n).enumerate() {
        let mut j = 0;
        while j + 8 <= n {
            // SAFETY: elements (p, j…j+8) of b, at offsets p·row + (j + l)·col, are
            // inside b (as required); row[j..j+8] is inside bt.
            unsafe {
                let base = b.add(p * sb.row + j * sb.col);
                let v = _mm512_i64gather_pd::<8>(idx, base.cast());
                _mm512_storeu_pd(row.as_mut_ptr().add(j), v);
            }
            j += 8;
        }
        for (jj, o) in row.iter_mut().enumerate().skip(j) {
            // SAFETY: element (p, jj) of b is inside b (as required).
            *o = unsafe { *b.add(p * sb.row + jj * sb.col) };
        }
    }
}

/// What every row block shares: `n`, `k`, `a`'s strides, `c`'s row stride, the part
/// formed.
#[derive(Clone, Copy)]
struct Geometry {
    n: usize,
    k: usize,
    sa: Strides,
    ldc: usize,
    tri: Tri,
    /// What each element gets before it is stored.
    post: Option<Post>,
}

/// Every row block of `c`: eight rows at a time, then the remaining 1–7.
///
/// # Safety
/// As [`gemm`], with `b` row-major of row stride `ldb`.
#[target_feature(enable = "avx512f")]
unsafe fn rows_all(m: usize, g: Geometry, a: *const f64, b: *const f64, ldb: usize, c: *mut f64) {
    let mut i = 0;
    while i + 8 <= m {
        // SAFETY: rows i..i+8 are inside a and c.
        unsafe { rows::<8>(i, g, a, b, ldb, c) };
        i += 8;
    }
    // SAFETY: rows i..m are inside a and c.
    unsafe {
        match m - i {
            0 => {}
            1 => rows::<1>(i, g, a, b, ldb, c),
            2 => rows::<2>(i, g, a, b, ldb, c),
            3 => rows::<3>(i, g, a, b, ldb, c),
            4 => rows::<4>(i, g, a, b, ldb, c),
            5 => rows::<5>(i, g, a, b, ldb, c),
            6 => rows::<6>(i, g, a, b, ldb, c),
            _ => rows::<7>(i, g, a, b, ldb, c),
        }
    }
}

/// Lanes `0..w` of an 8-lane mask (`w` clamped to 0..8).
#[inline(always)]
fn lanes(w: usize) -> __mmask8 {
    ((1u32 << w.min(8)) - 1) as __mmask8
}

/// Rows `i0..i0+R` of `c`, 16 columns at a time (masked at the right edge), the
/// columns and terms `g.tri` keeps.
///
/// # Safety
/// As [`rows_all`], with rows `i0..i0+R` inside `a` and `c`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn rows<const R: usize>(
    i0: usize,
    g: Geometry,
    a: *const f64,
    b: *const f64,
    ldb: usize,
    c: *mut f64,
) {
    let Geometry {
        n,
        k,
        sa,
        ldc,
        tri,
        post,
    } = g;
    let last = i0 + R;
    // Terms every row of the block takes (`before`, `after`) and, for LowerA / UpperA,
    // the terms of the block's own diagonal square, which row i0 + r takes only on
    // its side of the diagonal (p ≤ i0 + r, or p ≥ i0 + r): p ascending throughout.
    let square = i0.min(k)..last.min(k);
    let (n, before, square, after) = match tri {
        Tri::Full => (n, 0..k, 0..0, 0..0),
        Tri::LowerOut => (n.min(last), 0..k, 0..0, 0..0),
        Tri::LowerA => (n, 0..i0.min(k), square, 0..0),
        Tri::UpperA => (n, 0..0, square, last.min(k)..k),
    };
    let lower = tri == Tri::LowerA;
    let mut j0 = 0;
    while j0 < n {
        let w = (n - j0).min(16);
        let (m0, m1) = (lanes(w), lanes(w.saturating_sub(8)));
        let mut acc = [[_mm512_setzero_pd(); 2]; R];
        // Row p's lanes j0..j0+w of b.
        macro_rules! b_row {
            ($p:expr) => {
                // SAFETY: lanes j0..j0+w of row p are inside b; masked-off lanes are
                // not accessed (the addresses are formed without `add`'s in-bounds
                // promise).
                unsafe {
                    let bp = b.wrapping_add($p * ldb + j0);
                    (
                        _mm512_maskz_loadu_pd(m0, bp),
                        _mm512_maskz_loadu_pd(m1, bp.wrapping_add(8)),
                    )
                }
            };
        }
        // Element (i0 + r, p) of a, broadcast.
        macro_rules! a_at {
            ($r:expr, $p:expr) => {
                // SAFETY: element (i0 + r, p) of a is inside a for r < R, p < k.
                _mm512_set1_pd(unsafe { *a.add((i0 + $r) * sa.row + $p * sa.col) })
            };
        }
        // Terms p of `range` for every row.
        macro_rules! every_row {
            ($range:expr) => {
                for p in $range {
                    let (b0, b1) = b_row!(p);
                    for (r, row) in acc.iter_mut().enumerate() {
                        let av = a_at!(r, p);
                        row[0] = _mm512_fmadd_pd(av, b0, row[0]);
                        row[1] = _mm512_fmadd_pd(av, b1, row[1]);
                    }
                }
            };
        }
        every_row!(before.clone());
        for p in square.clone() {
            let (b0, b1) = b_row!(p);
            let d = p - i0;
            for (r, row) in acc.iter_mut().enumerate() {
                // All lanes, or none (the accumulators kept as they are).
                let takes = if lower { r >= d } else { r <= d };
                let mask: __mmask8 = if takes { 0xff } else { 0 };
                let av = a_at!(r, p);
                row[0] = _mm512_mask3_fmadd_pd(av, b0, row[0], mask);
                row[1] = _mm512_mask3_fmadd_pd(av, b1, row[1], mask);
            }
        }
        every_row!(after.clone());
        if let Some(Post { op, m: d }) = post {
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: lanes j0..j0+w of row i0 + r are inside the post matrix (laid
                // out as c); masked-off lanes are not read.
                let v = unsafe {
                    let dp = d.wrapping_add((i0 + r) * ldc + j0);
                    [
                        _mm512_maskz_loadu_pd(m0, dp),
                        _mm512_maskz_loadu_pd(m1, dp.wrapping_add(8)),
                    ]
                };
                for (x, v) in row.iter_mut().zip(v) {
                    *x = match op {
                        PostOp::Mul => _mm512_mul_pd(*x, v),
                        PostOp::Add => _mm512_add_pd(v, *x),
                    };
                }
            }
        }
        for (r, row) in acc.iter().enumerate() {
            // SAFETY: lanes j0..j0+w of row i0 + r are inside c; masked-off lanes are
            // not written.
            unsafe {
                let cp = c.wrapping_add((i0 + r) * ldc + j0);
                _mm512_mask_storeu_pd(cp, m0, row[0]);
                _mm512_mask_storeu_pd(cp.wrapping_add(8), m1, row[1]);
            }
        }
        j0 += 16;
    }
}

#[cfg(test)]
mod tests {
    use super::super::avx512 as gemm_avx512;
    use super::super::packed::available;
    use super::*;

    fn values(seed: u64, n: usize) -> Vec<f64> {
        let mut r = crate::tensor::SplitMix64::new(seed);
        (0..n).map(|_| r.uniform() * 2.0 - 1.0).collect()
    }

    /// The unpacked kernel gives the packed kernel's bits: every shape with edge rows
    /// and columns, k up to one k-block, each operand plain or read transposed; so does
    /// the dispatcher on two threads.
    #[test]
    fn same_bits_as_the_packed_kernel() {
        if !available() {
            return;
        }
        let shapes = [
            (1, 1, 1),
            (7, 5, 3),
            (8, 16, 16),
            (9, 17, 33),
            (64, 16, 64),
            (64, 64, 16),
            (13, 37, 200),
            (128, 128, 256),
            (300, 48, 100),
            (1024, 64, 256),
        ];
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let a = values(2 * i as u64 + 1, m * k);
            let b = values(2 * i as u64 + 2, k * n);
            for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
                let sa = if ta {
                    Strides::transposed(m)
                } else {
                    Strides::rows(k)
                };
                let sb = if tb {
                    Strides::transposed(k)
                } else {
                    Strides::rows(n)
                };
                let mut small = vec![f64::NAN; m * n];
                let mut split = vec![f64::NAN; m * n];
                let mut packed = vec![f64::NAN; m * n];
                // SAFETY: AVX-512F is present; the strides address exactly the m·k and
                // k·n elements; c holds m·n elements.
                unsafe {
                    gemm(
                        m,
                        n,
                        k,
                        &a,
                        sa,
                        &b,
                        sb,
                        small.as_mut_ptr(),
                        n,
                        Tri::Full,
                        None,
                    );
                    // the dispatcher on two threads (row blocks of this kernel, or the
                    // packed kernel where 24-wide tiles suit n better)
                    assert!(gemm_avx512::gemm(
                        m,
                        n,
                        k,
                        &a,
                        sa,
                        &b,
                        sb,
                        split.as_mut_ptr(),
                        2,
                        None
                    ));
                    // Two threads: the packed path (the unpacked one is single-thread).
                    assert!(gemm_avx512::gemm(
                        m,
                        n,
                        k,
                        &a,
                        sa,
                        &b,
                        sb,
                        packed.as_mut_ptr(),
                        2,
                        None
                    ));
                }
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&small), bits(&packed), "{m}×{n}×{k}, ta {ta}, tb {tb}");
                assert_eq!(bits(&split), bits(&packed), "{m}×{n}×{k}, ta {ta}, tb {tb}");
            }
        }
    }

    /// The triangular forms ([`Tri`]): `LowerOut` gives the full product's bits on and
    /// below the diagonal; `LowerA` and `UpperA` give them everywhere when `a` is zero
    /// (+0.0 and −0.0 mixed) on the other side, `b` finite; with an infinity in `b`
    /// where `a` is zero the full product has NaN and the triangular one does not.
    #[test]
    fn triangular_forms() {
        if !available() {
            return;
        }
        let shapes = [
            (64, 64, 16),
            (64, 16, 64),
            (37, 37, 8),
            (9, 5, 9),
            (100, 32, 100),
            (3, 20, 3),
        ];
        for (i, &(m, n, k)) in shapes.iter().enumerate() {
            let a = values(40 + 2 * i as u64, m * k);
            let mut b = values(41 + 2 * i as u64, k * n);
            // a with zeros right of (LowerA) or left of (UpperA) the diagonal.
            let zeroed = |keep: &dyn Fn(usize, usize) -> bool| -> Vec<f64> {
                (0..m * k)
                    .map(|e| match keep(e / k, e % k) {
                        true => a[e],
                        false if e % 2 == 0 => 0.0,
                        false => -0.0,
                    })
                    .collect()
            };
            let lower = zeroed(&|r, p| p <= r);
            let upper = zeroed(&|r, p| p >= r);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let product = |a: &[f64], b: &[f64], ta: bool, tb: bool, tri: Tri| -> Vec<f64> {
                // a (m×k) is stored transposed when ta, b (k×n) when tb.
                let (a, sa) = if ta {
                    let t: Vec<f64> = (0..m * k).map(|e| a[(e % m) * k + e / m]).collect();
                    (t, Strides::transposed(m))
                } else {
                    (a.to_vec(), Strides::rows(k))
                };
                let (b, sb) = if tb {
                    let t: Vec<f64> = (0..k * n).map(|e| b[(e % k) * n + e / k]).collect();
                    (t, Strides::transposed(k))
                } else {
                    (b.to_vec(), Strides::rows(n))
                };
                let mut c = vec![f64::NAN; m * n];
                // SAFETY: AVX-512F is present; the strides address exactly the m·k and
                // k·n elements; c holds m·n elements.
                unsafe { gemm(m, n, k, &a, sa, &b, sb, c.as_mut_ptr(), n, tri, None) };
                c
            };
            for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
                let at = format!("{m}×{n}×{k}, ta {ta}, tb {tb}");
                let full = product(&a, &b, ta, tb, Tri::Full);
                let low = product(&a, &b, ta, tb, Tri::LowerOut);
                for e in (0..m * n).filter(|e| e % n <= e / n) {
                    assert_eq!(low[e].to_bits(), full[e].to_bits(), "LowerOut {e}, {at}");
                }
                for (a, tri) in [(&lower, Tri::LowerA), (&upper, Tri::UpperA)] {
                    let full = product(a, &b, ta, tb, Tri::Full);
                    assert_eq!(
                        bits(&product(a, &b, ta, tb, tri)),
                        bits(&full),
                        "{tri:?}, {at}"
                    );
                }
            }
            // An infinity in b's last row meets LowerA's zeros in row 0, and one in its
            // first row UpperA's in row m − 1.
            if m >= 2 && k >= 2 {
                b[(k - 1) * n] = f64::INFINITY;
                b[1] = f64::NEG_INFINITY;
                for (a, tri, row) in [(&lower, Tri::LowerA, 0), (&upper, Tri::UpperA, m - 1)] {
                    let (full, part) = (
                        product(a, &b, false, false, Tri::Full),
                        product(a, &b, false, false, tri),
                    );
                    let e = row * n + if tri == Tri::LowerA { 0 } else { 1 };
                    assert!(
                        full[e].is_nan() && part[e].is_finite(),
                        "{tri:?} {m}×{n}×{k}"
                    );
                }
            }
        }
    }
}
