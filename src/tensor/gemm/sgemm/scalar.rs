//! The portable f32 GEMM (CPUs without AVX2 + FMA, other architectures): the SIMD
//! kernels' accumulation order element by element — per k-block of KC terms an
//! accumulator from +0.0 takes `acc = fma(a[i,p], b[p,j], acc)` for p in order, the
//! first block stored, later ones added — so the same bits as they give. One row of
//! `c` at a time, the inner loop over its columns (which a compiler vectorises where
//! the target has a vector FMA; without a hardware FMA `mul_add` is exact but slow).

use super::{Strides, Tri, KC};
use crate::tensor::gemm::post::Post;

/// `c = a·b` for `a` (`m×k`, strides `sa`), `b` (`k×n`, strides `sb`), `c` (`m×n`,
/// row stride `ldc` ≥ n), the part `tri` says ([`Tri`]: `LowerOut` writes columns
/// `j ≤ i` only; `LowerA` / `UpperA` leave out the terms `p > i` / `p < i`), then
/// `post` (its matrix laid out as `c`).
///
/// # Safety
/// `k ≥ 1`; `a` and `b` hold every element their strides address; `c` addresses the
/// `m×n` matrix of row stride `ldc` (writable, accessed by nothing else during the
/// call, not overlapping `a` or `b`); so does `post`'s matrix (read only).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm(
    m: usize,
    n: usize,
    k: usize,
    (a, sa): (&[f32], Strides),
    (b, sb): (&[f32], Strides),
    c: *mut f32,
    ldc: usize,
    tri: Tri,
    post: Option<Post<f32>>,
) {
    let mut acc = vec![0.0f32; n];
    let mut brow = vec![0.0f32; n];
    for i in 0..m {
        let cols = match tri {
            Tri::LowerOut => n.min(i + 1),
            _ => n,
        };
        let (lo, hi) = match tri {
            Tri::LowerA => (0, k.min(i + 1)),
            Tri::UpperA => (i.min(k), k),
            _ => (0, k),
        };
        // SAFETY: row i's first `cols` elements of c (as required).
        let crow = unsafe { std::slice::from_raw_parts_mut(c.add(i * ldc), cols) };
        for pc in (0..k).step_by(KC) {
            let acc = &mut acc[..cols];
            acc.fill(0.0);
            for p in pc.max(lo)..(pc + KC).min(k).min(hi) {
                let x = a[i * sa.row + p * sa.col];
                let brow = &mut brow[..cols];
                for (j, y) in brow.iter_mut().enumerate() {
                    *y = b[p * sb.row + j * sb.col];
                }
                for (s, &y) in acc.iter_mut().zip(brow.iter()) {
                    *s = x.mul_add(y, *s);
                }
            }
            if pc == 0 {
                crow.copy_from_slice(acc);
            } else {
                crow.iter_mut().zip(acc.iter()).for_each(|(c, &s)| *c += s);
            }
        }
        if let Some(p) = post {
            // SAFETY: row i's first `cols` elements of c and of post's matrix (laid out
            // as c).
            unsafe { p.at(i * ldc).rows(1, cols, crow.as_mut_ptr(), ldc) };
        }
    }
}
