//! The tuned GEMM behind every large product ([`gemm_fast`]): the AVX-512 kernels
//! where the CPU has them, `matrixmultiply::dgemm` elsewhere.

use super::layout::Strides;
use super::post::{Post, PostOp};
use crate::tensor::par::SendPtr;
use crate::tensor::{pool, threads};

/// One 2-D product is split over threads from this many multiply-adds.
const PAR_MIN_WORK: usize = 1 << 21;

/// Tuned GEMM writing every element of `c` (which need not be initialised). With AVX-512F: `avx512::gemm`, which
/// above `PAR_MIN_WORK` splits the rows (or columns) of `c` between threads.
/// Otherwise (or if its packing buffers cannot be allocated): above
/// `PAR_MIN_WORK` the columns of `c` are split into one block per thread
/// (multiples of 8 columns), each computed by `matrixmultiply::dgemm`. Either
/// way every `c[i,j]` is accumulated by the same kernel in the same
/// k-blocking whatever the split, so results do not depend on the thread
/// count (tests/tensor_errors.rs and the gemm/avx512.rs unit tests check this).
///
/// With `post`, a [`Post`] operation on every element (its matrix `m×n`, row-major),
/// with the bits of a separate pass: on the AVX-512 kernel row strip by row strip as
/// they are finished, elsewhere in one pass afterwards.
///
/// # Safety
/// `c` addresses `m·n` writable f64 (row stride n) that nothing else reads or
/// writes during the call and that do not overlap `a` or `b`; the post matrix holds at
/// least `m·n` elements.
#[allow(clippy::too_many_arguments)]
pub(in crate::tensor) unsafe fn gemm_fast(
    m: usize,
    n: usize,
    k: usize,
    a: &[f64],
    sa: Strides,
    b: &[f64],
    sb: Strides,
    c: *mut f64,
    post: Option<(PostOp, &[f64])>,
) {
    if let Some((_, v)) = post {
        assert!(v.len() >= m * n);
    }
    let post = post.map(|(op, v)| Post { op, m: v.as_ptr() });
    #[cfg(target_arch = "x86_64")]
    {
        let t = if m * n * k < PAR_MIN_WORK {
            1
        } else {
            threads()
        };
        // SAFETY: c as this function requires; post's matrix holds m·n elements
        // (asserted).
        if unsafe { super::avx512::gemm(m, n, k, a, sa, b, sb, c, t, post) } {
            return;
        }
    }
    // Elsewhere matrixmultiply, on column blocks of c (multiples of 8 columns) above
    // PAR_MIN_WORK.
    let t = threads().min(n / 8);
    if t <= 1 || m * n * k < PAR_MIN_WORK {
        assert!(a.len() >= m * k && b.len() >= k * n);
        // SAFETY: a and b hold their matrices whole (asserted), c as required; with
        // β = 0 matrixmultiply overwrites c without reading it.
        unsafe { dgemm_raw(m, n, k, a.as_ptr(), sa, b.as_ptr(), sb, c, n) };
    } else {
        let per = n.div_ceil(t).div_ceil(8) * 8;
        let cp = SendPtr(c);
        let block = move |j0: usize| {
            let cp = cp;
            let w = per.min(n - j0);
            // SAFETY: column blocks [j0, j0+w) are disjoint, so no two threads
            // write the same element of c; a, b and c outlive the scope.
            unsafe {
                dgemm_raw(
                    m,
                    w,
                    k,
                    a.as_ptr(),
                    sa,
                    b.as_ptr().add(j0 * sb.col),
                    sb,
                    cp.0.add(j0),
                    n,
                )
            }
        };
        pool::run_blocks(n.div_ceil(per), &|i| block(i * per));
    }
    if let Some(p) = post {
        // SAFETY: c holds the m·n elements just written (as required), p's matrix as
        // many.
        unsafe { p.rows(m, n, c, n) };
    }
}

/// `c[m×n] = a[m×k]·b[k×n]` with operand strides `sa`, `sb` and row stride `ldc`.
///
/// # Safety
/// The pointers must address matrices of those sizes and strides; `c` must
/// not alias `a` or `b` nor be written concurrently elsewhere.
#[allow(clippy::too_many_arguments)]
unsafe fn dgemm_raw(
    m: usize,
    n: usize,
    k: usize,
    a: *const f64,
    sa: Strides,
    b: *const f64,
    sb: Strides,
    c: *mut f64,
    ldc: usize,
) {
    matrixmultiply::dgemm(
        m,
        k,
        n,
        1.0,
        a,
        sa.row as isize,
        sa.col as isize,
        b,
        sb.row as isize,
        sb.col as isize,
        0.0,
        c,
        ldc as isize,
        1,
    );
}
