//! The AVX-512 GEMM's entry points (x86-64 only, chosen at run time when the CPU has
//! `avx512f`): [`gemm`] takes a product that fits one k-block and suits 16-wide tiles
//! to the unpacked kernel (small.rs, on row blocks when threaded), every other one to
//! the packed, cache-blocked kernel (packed.rs) — the same bits either way (each
//! `c[i,j]` is one FMA chain per k-block, see packed.rs); [`gemm_unpacked_into`] is the
//! unpacked kernel alone, into a strided destination, with a causal [`Tri`] form.

use super::layout::{Strides, Tri};
use super::packed::{available, gemm_packed, KC, MR};
use super::post::Post;
use super::small;
use crate::tensor::par::SendPtr;
use crate::tensor::pool;

/// `c = a·b` for `a` (`m×k`, strides `sa`), `b` (`k×n`, strides `sb`), each
/// held in a slice of exactly its `m·k` / `k·n` elements, and row-major `c`
/// (`m×n` at `c`, every element written; it need not be initialised), on up to
/// `threads` threads (rows or columns of `c`
/// split into blocks of whole tiles). Returns `false` (leaving `c` untouched) when the CPU lacks
/// AVX-512F or a packing buffer cannot be allocated; the caller then uses
/// another kernel. The result does not depend on `threads`. With `post` (its matrix
/// `m×n`, row stride n), each element of `c` is that of the product with the
/// [`Post`] operation applied, rounded once — what a separate pass would give, done
/// while the block of `c` is still in cache.
///
/// # Safety
/// `c` addresses `m·n` writable f64 (row stride n) that nothing else reads or
/// writes during the call and that do not overlap `a` or `b`; `post`'s matrix, when
/// given, addresses `m·n` readable f64.
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
    threads: usize,
    post: Option<Post>,
) -> bool {
    assert!(a.len() >= m * k && b.len() >= k * n);
    // Every addressed element must lie inside its slice.
    assert!(sa.covers(m, k, a.len()) && sb.covers(k, n, b.len()));
    if !available() {
        return false;
    }
    if m == 0 || n == 0 {
        return true;
    }
    if k == 0 {
        // SAFETY: c addresses m·n writable elements, post's matrix m·n readable ones
        // (the caller's contract).
        unsafe {
            std::ptr::write_bytes(c, 0, m * n);
            if let Some(p) = post {
                p.rows(m, n, c, n);
            }
        }
        return true;
    }
    let t = threads.max(1);
    if k <= KC && small::suits(n) {
        // One k-block: the unpacked kernel's FMA chains are this kernel's (same bits),
        // on row blocks of c when there are several threads.
        let blocks = t.min(m.div_ceil(MR));
        let per = m.div_ceil(blocks).div_ceil(MR) * MR;
        let (ap, cp) = (SendPtr(a.as_ptr().cast_mut()), SendPtr(c));
        let run = |i: usize| {
            let (ap, cp) = (ap, cp);
            let s = i * per;
            let w = per.min(m - s);
            // SAFETY: AVX-512F is present; rows [s, s+w) of a (strides sa: offsets
            // from s·sa.row, all inside a as asserted above) and of c (disjoint
            // between blocks, row stride n) are this block's; b is only read.
            unsafe {
                let a_rows = std::slice::from_raw_parts(ap.0.add(s * sa.row), a.len() - s * sa.row);
                let p = post.map(|p| p.at(s * n));
                let c = cp.0.add(s * n);
                small::gemm(w, n, k, a_rows, sa, b, sb, c, n, Tri::Full, p)
            };
        };
        if blocks <= 1 {
            run(0);
        } else {
            pool::run_blocks(m.div_ceil(per), &run);
        }
        return true;
    }
    // SAFETY: as this function requires.
    unsafe { gemm_packed(m, n, k, a, sa, b, sb, c, t, post) }
}

/// The product [`gemm`] on one thread computes with the unpacked kernel (same bits),
/// written into `c` with row stride `ldc`, the part `tri` says ([`Tri`]); `false`
/// (nothing written) for a product it does not take that way (no AVX-512F, k = 0,
/// k > KC or n unsuited).
///
/// # Safety
/// As [`gemm`], with `c` addressing the `m×n` matrix of row stride `ldc` ≥ n.
#[allow(clippy::too_many_arguments)]
pub(in crate::tensor) unsafe fn gemm_unpacked_into(
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
) -> bool {
    assert!(sa.covers(m, k, a.len()) && sb.covers(k, n, b.len()));
    if !available() || m == 0 || n == 0 || k == 0 || k > KC || !small::suits(n) || ldc < n {
        return false;
    }
    // SAFETY: as this function requires; AVX-512F is present and 1 ≤ k ≤ KC.
    unsafe { small::gemm(m, n, k, a, sa, b, sb, c, ldc, tri, None) };
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `gemm` into a whole, initialised slice.
    #[allow(clippy::too_many_arguments)]
    fn safe_gemm(
        m: usize,
        n: usize,
        k: usize,
        a: &[f64],
        sa: Strides,
        b: &[f64],
        sb: Strides,
        c: &mut [f64],
        t: usize,
    ) -> bool {
        assert!(c.len() >= m * n);
        // SAFETY: c holds m·n elements, borrowed mutably for the call.
        unsafe { gemm(m, n, k, a, sa, b, sb, c.as_mut_ptr(), t, None) }
    }

    fn lcg(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
            })
            .collect()
    }

    /// Exact in-order reference (separate multiply and add).
    fn reference(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        super::super::exact::gemm_exact(m, n, k, a, b, &mut c);
        c
    }

    fn check(m: usize, n: usize, k: usize) {
        let a = lcg(m as u64 * 31 + k as u64, m * k);
        let b = lcg(n as u64 * 17 + 5, k * n);
        let want = reference(m, n, k, &a, &b);
        for t in [1, 2, 3] {
            let mut c = vec![f64::NAN; m * n];
            assert!(
                safe_gemm(
                    m,
                    n,
                    k,
                    &a,
                    Strides::rows(k),
                    &b,
                    Strides::rows(n),
                    &mut c,
                    t
                ),
                "avx512f missing"
            );
            for (idx, (x, y)) in c.iter().zip(&want).enumerate() {
                assert!(
                    (x - y).abs() <= 1e-12 * y.abs().max(1.0),
                    "{m}×{n}×{k} t={t} at {idx}: {x} vs {y}"
                );
            }
        }
    }

    #[test]
    fn matches_exact_kernel_on_odd_sizes() {
        if !available() {
            return;
        }
        for &(m, n, k) in &[
            (1, 1, 1),
            (1, 1, 300),
            (8, 24, 256),
            (9, 25, 257),
            (17, 33, 65),
            (100, 7, 300),
            (7, 100, 3),
            (3, 1100, 20),
            (257, 129, 511),
            (200, 1040, 530),
        ] {
            check(m, n, k);
        }
    }

    #[test]
    fn thread_count_does_not_change_results() {
        if !available() {
            return;
        }
        for &(m, n, k) in &[(300, 250, 600), (40, 1500, 300), (1000, 30, 100)] {
            let a = lcg(1, m * k);
            let b = lcg(2, k * n);
            let mut one = vec![0.0; m * n];
            assert!(safe_gemm(
                m,
                n,
                k,
                &a,
                Strides::rows(k),
                &b,
                Strides::rows(n),
                &mut one,
                1
            ));
            for t in [2, 3, 4, 7] {
                let mut c = vec![0.0; m * n];
                assert!(safe_gemm(
                    m,
                    n,
                    k,
                    &a,
                    Strides::rows(k),
                    &b,
                    Strides::rows(n),
                    &mut c,
                    t
                ));
                assert!(
                    one.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()),
                    "{m}×{n}×{k}: {t} threads differ from 1"
                );
            }
        }
    }

    /// With a post operation, every thread split (rows or columns of `c`, the unpacked
    /// kernel's row blocks) and k-blocking stores the product's bits times the matrix's
    /// (`Mul`) or the matrix's plus them (`Add`), rounded once — NaN, ±∞ and ±0 in the
    /// matrix included; k = 0 gives `0 · v` and `v + 0`.
    #[test]
    fn post_operations_equal_the_product_then_the_op() {
        use super::super::post::PostOp;
        if !available() {
            return;
        }
        let shapes = [
            (300, 250, 600),
            (40, 1500, 300),
            (1000, 30, 100),
            (13, 7, 0),
        ];
        for &(m, n, k) in &shapes {
            let (a, b) = (lcg(3, m * k), lcg(4, k * n));
            let mut v = lcg(5, m * n);
            let specials = [f64::NAN, f64::INFINITY, -f64::INFINITY, -0.0, 0.0, 1e300];
            for (i, &x) in specials.iter().enumerate() {
                v[(i * 7919) % (m * n)] = x;
            }
            let (sa, sb) = (Strides::rows(k), Strides::rows(n));
            let mut plain = vec![0.0; m * n];
            assert!(safe_gemm(m, n, k, &a, sa, &b, sb, &mut plain, 1));
            for op in [PostOp::Mul, PostOp::Add] {
                let want: Vec<u64> = plain
                    .iter()
                    .zip(&v)
                    .map(|(&x, &y)| match op {
                        PostOp::Mul => (x * y).to_bits(),
                        PostOp::Add => (y + x).to_bits(),
                    })
                    .collect();
                let post = Some(Post { op, m: v.as_ptr() });
                for t in [1, 2, 3] {
                    let mut c = vec![0.0; m * n];
                    // SAFETY: c holds m·n elements, v as many.
                    assert!(unsafe { gemm(m, n, k, &a, sa, &b, sb, c.as_mut_ptr(), t, post) });
                    let got: Vec<u64> = c.iter().map(|x| x.to_bits()).collect();
                    assert!(got == want, "{op:?}, {m}×{n}×{k} on {t} thread(s)");
                }
            }
        }
    }

    /// The transpose of row-major `x` (`r×c`) as a row-major `c×r` matrix.
    fn transpose(r: usize, c: usize, x: &[f64]) -> Vec<f64> {
        (0..c * r).map(|t| x[(t % r) * c + t / r]).collect()
    }

    #[test]
    fn transposed_operands_read_in_place_give_the_same_bits() {
        if !available() {
            return;
        }
        for &(m, n, k) in &[
            (1, 1, 1),
            (9, 25, 257),
            (64, 64, 64),
            (130, 70, 300),
            (7, 100, 3),
        ] {
            let a = lcg(3, m * k);
            let b = lcg(4, k * n);
            let mut want = vec![0.0; m * n];
            assert!(safe_gemm(
                m,
                n,
                k,
                &a,
                Strides::rows(k),
                &b,
                Strides::rows(n),
                &mut want,
                1
            ));
            // aᵀ stored as k×m, bᵀ stored as n×k.
            let (at, bt) = (transpose(m, k, &a), transpose(k, n, &b));
            for t in [1, 2] {
                for (ta, tb) in [(true, false), (false, true), (true, true)] {
                    let (ad, sa) = if ta {
                        (&at, Strides::transposed(m))
                    } else {
                        (&a, Strides::rows(k))
                    };
                    let (bd, sb) = if tb {
                        (&bt, Strides::transposed(k))
                    } else {
                        (&b, Strides::rows(n))
                    };
                    let mut c = vec![f64::NAN; m * n];
                    assert!(safe_gemm(m, n, k, ad, sa, bd, sb, &mut c, t));
                    assert!(
                        want.iter().zip(&c).all(|(x, y)| x.to_bits() == y.to_bits()),
                        "{m}×{n}×{k} ta={ta} tb={tb} t={t}"
                    );
                }
            }
        }
    }
}
