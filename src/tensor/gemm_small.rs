//! Products without packing, for k ≤ 256 and n that fits 16-wide tiles (n ≤ 128: the
//! attention heads' `[64, 16] · [16, 64]` and `[64, 64] · [64, 16]`, and the model's
//! `[1024, 64] · [64, 64]`-like products, on row blocks when threaded): there the packed
//! GEMM spends more time packing, padding 16-wide edges to its 24-wide tiles and setting
//! up each call than multiplying (12–15 GFLOP/s on the attention heads).
//!
//! Each `8 × 16` tile of `c` keeps 16 AVX-512 accumulators that start at +0.0 and take
//! one fused multiply-add per `p = 0, 1, …, k − 1` in order — the packed kernel's
//! sequence for a product that fits one of its k-blocks (`k ≤ KC`), so the results are
//! bit for bit those of [`super::gemm_avx512::gemm_packed`]. Rows of `a` are read through its
//! strides (one broadcast per element); `b` is read a row at a time, so a `b` read
//! transposed (`matmul_nt`) is first copied to row-major order (at most `k·n` values).

use std::arch::x86_64::*;
use std::cell::RefCell;

use super::matmul::Strides;

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
/// `c` with row stride `ldc` ≥ n, every element written, need not be initialised), on
/// this thread.
/// The caller checks AVX-512F and `1 ≤ k ≤ KC`.
///
/// # Safety
/// AVX-512F is available; `a` and `b` hold every element their strides address;
/// `c` addresses the `m×n` matrix of row stride `ldc` (writable f64 that nothing else
/// accesses during the call and that do not overlap `a` or `b`).
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
) {
    if sb.col == 1 {
        // SAFETY: as this function requires; rows of b are contiguous.
        unsafe { rows_all(m, n, k, a.as_ptr(), sa, b.as_ptr(), sb.row, c, ldc) };
        return;
    }
    B_ROWS.with(|cell| {
        let mut bt = cell.borrow_mut();
        // Every element is written below: grow (zeroing only the new part), never clear.
        if bt.len() < k * n {
            bt.resize(k * n, 0.0);
        }
        let bt = &mut bt[..k * n];
        // Column j of b is (for `matmul_nt`) a contiguous row of the operand: read it
        // in order, scatter into row-major order.
        for j in 0..n {
            for (p, row) in bt.chunks_exact_mut(n).enumerate() {
                row[j] = b[p * sb.row + j * sb.col];
            }
        }
        // SAFETY: bt is the row-major k×n copy of b (row stride n); the rest as
        // this function requires.
        unsafe { rows_all(m, n, k, a.as_ptr(), sa, bt.as_ptr(), n, c, ldc) };
    });
}

/// Every row block of `c`: eight rows at a time, then the remaining 1–7.
///
/// # Safety
/// As [`gemm`], with `b` row-major of row stride `ldb`.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn rows_all(
    m: usize,
    n: usize,
    k: usize,
    a: *const f64,
    sa: Strides,
    b: *const f64,
    ldb: usize,
    c: *mut f64,
    ldc: usize,
) {
    let mut i = 0;
    while i + 8 <= m {
        // SAFETY: rows i..i+8 are inside a and c.
        unsafe { rows::<8>(i, n, k, a, sa, b, ldb, c, ldc) };
        i += 8;
    }
    // SAFETY: rows i..m are inside a and c.
    unsafe {
        match m - i {
            0 => {}
            1 => rows::<1>(i, n, k, a, sa, b, ldb, c, ldc),
            2 => rows::<2>(i, n, k, a, sa, b, ldb, c, ldc),
            3 => rows::<3>(i, n, k, a, sa, b, ldb, c, ldc),
            4 => rows::<4>(i, n, k, a, sa, b, ldb, c, ldc),
            5 => rows::<5>(i, n, k, a, sa, b, ldb, c, ldc),
            6 => rows::<6>(i, n, k, a, sa, b, ldb, c, ldc),
            _ => rows::<7>(i, n, k, a, sa, b, ldb, c, ldc),
        }
    }
}

/// Lanes `0..w` of an 8-lane mask (`w` clamped to 0..8).
#[inline(always)]
fn lanes(w: usize) -> __mmask8 {
    ((1u32 << w.min(8)) - 1) as __mmask8
}

/// Rows `i0..i0+R` of `c`, 16 columns at a time (masked at the right edge).
///
/// # Safety
/// As [`rows_all`], with rows `i0..i0+R` inside `a` and `c`.
#[allow(clippy::too_many_arguments)]
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn rows<const R: usize>(
    i0: usize,
    n: usize,
    k: usize,
    a: *const f64,
    sa: Strides,
    b: *const f64,
    ldb: usize,
    c: *mut f64,
    ldc: usize,
) {
    let mut j0 = 0;
    while j0 < n {
        let w = (n - j0).min(16);
        let (m0, m1) = (lanes(w), lanes(w.saturating_sub(8)));
        let mut acc = [[_mm512_setzero_pd(); 2]; R];
        for p in 0..k {
            // SAFETY: lanes j0..j0+w of row p are inside b; masked-off lanes are not
            // accessed (the addresses are formed without `add`'s in-bounds promise).
            let (b0, b1) = unsafe {
                let bp = b.wrapping_add(p * ldb + j0);
                (
                    _mm512_maskz_loadu_pd(m0, bp),
                    _mm512_maskz_loadu_pd(m1, bp.wrapping_add(8)),
                )
            };
            for (r, row) in acc.iter_mut().enumerate() {
                // SAFETY: element (i0 + r, p) of a is inside a.
                let x = unsafe { *a.add((i0 + r) * sa.row + p * sa.col) };
                let av = _mm512_set1_pd(x);
                row[0] = _mm512_fmadd_pd(av, b0, row[0]);
                row[1] = _mm512_fmadd_pd(av, b1, row[1]);
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
    use super::super::gemm_avx512;
    use super::*;

    fn values(seed: u64, n: usize) -> Vec<f64> {
        let mut r = super::super::SplitMix64::new(seed);
        (0..n).map(|_| r.uniform() * 2.0 - 1.0).collect()
    }

    /// The unpacked kernel gives the packed kernel's bits: every shape with edge rows
    /// and columns, k up to one k-block, each operand plain or read transposed; so does
    /// the dispatcher on two threads.
    #[test]
    fn same_bits_as_the_packed_kernel() {
        if !gemm_avx512::available() {
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
                    gemm(m, n, k, &a, sa, &b, sb, small.as_mut_ptr(), n);
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
                        2
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
                        2
                    ));
                }
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&small), bits(&packed), "{m}×{n}×{k}, ta {ta}, tb {tb}");
                assert_eq!(bits(&split), bits(&packed), "{m}×{n}×{k}, ta {ta}, tb {tb}");
            }
        }
    }
}
