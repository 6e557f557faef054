//! The f32 GEMM's entry points: [`gemm_fast_f32`] (every element of a product, with an
//! optional [`Post`] epilogue, split over the thread pool above a size) and
//! [`gemm_unpacked_into_f32`] (one thread, into a strided destination, with a causal
//! [`Tri`] form); [`gemm_f32`] is the first with the ISA and thread count chosen by the
//! caller (the tests compare them). Each ISA ([`Isa`]) runs the unpacked kernel for a
//! product of one k-block and `n ≤ MAX_N`, the packed one otherwise; all of them give
//! the same bits (module docs).

use super::scalar;
use super::{Shared, Strides, Tri, KC, MAX_N};
use crate::tensor::gemm::post::{Post, PostOp};
use crate::tensor::{pool, threads};

#[cfg(target_arch = "x86_64")]
use super::{
    lanes::{Avx2, Avx512},
    packed::{gemm_block, gemm_packed, Block, Buffers},
    small,
};

/// One 2-D f32 product is split over threads from this many multiply-adds (twice the
/// f64 kernel's `PAR_MIN_WORK`: an f32 multiply-add takes half the time).
const PAR_MIN_WORK: usize = 1 << 22;

/// The instruction set a product runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::tensor) enum Isa {
    /// AVX-512F: 8×48 packed tile, 8×32 unpacked.
    Avx512,
    /// AVX2 + FMA: 6×16 packed tile, 6×16 unpacked.
    Avx2,
    /// Portable code (scalar.rs).
    Scalar,
}

impl Isa {
    /// The fastest this CPU has (`is_x86_feature_detected!` caches).
    pub(in crate::tensor) fn best() -> Isa {
        [Isa::Avx512, Isa::Avx2]
            .into_iter()
            .find(|i| i.available())
            .unwrap_or(Isa::Scalar)
    }

    /// Whether this CPU can run it.
    pub(in crate::tensor) fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            Isa::Scalar => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// Tuned f32 GEMM writing every element of `c` (which need not be initialised):
/// `c = a·b` for `a` (`m×k`, strides `sa`), `b` (`k×n`, strides `sb`), `c` row-major
/// `m×n` (row stride n), on the best ISA ([`Isa::best`]), on the pool's threads from
/// `PAR_MIN_WORK` multiply-adds. With `post`, each element is the product's followed by
/// `op` with the matrix's element (`m×n`, row-major), rounded once: `c·v` (`Mul`) or
/// `v + c` (`Add`). The result does not depend on the thread count or the ISA.
///
/// # Safety
/// `c` addresses `m·n` writable f32 that nothing else reads or writes during the call
/// and that do not overlap `a` or `b`.
#[allow(clippy::too_many_arguments)]
pub(in crate::tensor) unsafe fn gemm_fast_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    sa: Strides,
    b: &[f32],
    sb: Strides,
    c: *mut f32,
    post: Option<(PostOp, &[f32])>,
) {
    if let Some((_, v)) = post {
        assert!(v.len() >= m * n);
    }
    let post = post.map(|(op, v)| Post { op, m: v.as_ptr() });
    let t = if m * n * k < PAR_MIN_WORK {
        1
    } else {
        threads()
    };
    // SAFETY: c as this function requires; post's matrix holds m·n elements (asserted).
    unsafe { gemm_f32(Isa::best(), m, n, k, (a, sa), (b, sb), c, t, post) }
}

/// [`gemm_fast_f32`] on `isa` and up to `threads` threads (rows or columns of `c` split
/// into blocks of whole tiles), `post` given as a [`Post`].
///
/// # Safety
/// As [`gemm_fast_f32`]; `post`'s matrix, when given, addresses `m·n` readable f32.
#[allow(clippy::too_many_arguments)]
pub(in crate::tensor) unsafe fn gemm_f32(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    (a, sa): (&[f32], Strides),
    (b, sb): (&[f32], Strides),
    c: *mut f32,
    threads: usize,
    post: Option<Post<f32>>,
) {
    assert!(sa.covers(m, k, a.len()) && sb.covers(k, n, b.len()));
    assert!(isa.available(), "{isa:?} is not available on this CPU");
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        // SAFETY: c addresses m·n writable elements, post's matrix m·n readable ones.
        unsafe {
            std::ptr::write_bytes(c, 0, m * n);
            if let Some(p) = post {
                p.rows(m, n, c, n);
            }
        }
        return;
    }
    let t = threads.max(1);
    let cs = Shared(c);
    // `f(s, w)` for the rows [s, s+w) of the product, on row blocks of whole `unit`s,
    // one per thread.
    let row_blocks = |unit: usize, f: &(dyn Fn(usize, usize) + Sync)| {
        let blocks = t.min(m.div_ceil(unit));
        let per = m.div_ceil(blocks).div_ceil(unit) * unit;
        pool::run_blocks(m.div_ceil(per), &|i| f(i * per, per.min(m - i * per)));
    };
    let scalar_rows = |s: usize, w: usize| {
        // SAFETY: s < m, so a's offset s·sa.row is inside a (every addressed element
        // is, asserted above); the w×n rows of c from row s (and of post's matrix, laid
        // out as c) are this block's alone.
        unsafe {
            let (ar, cr) = (&a[s * sa.row..], cs.get().add(s * n));
            let p = post.map(|p| p.at(s * n));
            scalar::gemm(w, n, k, (ar, sa), (b, sb), cr, n, Tri::Full, p)
        }
    };
    match isa {
        #[cfg(target_arch = "x86_64")]
        Isa::Avx512 | Isa::Avx2 => {
            let avx512 = isa == Isa::Avx512;
            if k <= KC && n <= MAX_N {
                let small_rows = |s: usize, w: usize| {
                    let g = small::Geometry {
                        n,
                        k,
                        sa,
                        ldc: n,
                        tri: Tri::Full,
                        post: post.map(|p| p.at(s * n)),
                    };
                    // SAFETY: the ISA is present (asserted); 1 ≤ k ≤ KC; a's rows from
                    // s as in scalar_rows; the w×n rows of c from row s are this block's.
                    unsafe {
                        let (ar, cr) = (&a[s * sa.row..], cs.get().add(s * n));
                        if avx512 {
                            small_avx512(w, ar, b, sb, cr, g)
                        } else {
                            small_avx2(w, ar, b, sb, cr, g)
                        }
                    }
                };
                row_blocks(if avx512 { 8 } else { 6 }, &small_rows);
                return;
            }
            let (tile, run): (_, unsafe fn(Block, &mut Buffers)) = if avx512 {
                ((8, 48, <Avx512 as super::lanes::Lanes>::NC), packed_avx512)
            } else {
                ((6, 16, <Avx2 as super::lanes::Lanes>::NC), packed_avx2)
            };
            // SAFETY: as this function requires; m, n, k ≥ 1; run's ISA is present.
            if unsafe { gemm_packed(m, n, k, (a, sa), (b, sb), c, t, post, tile, run) } {
                return;
            }
            // A packing buffer could not be allocated: the portable kernel, same bits.
            row_blocks(8, &scalar_rows);
        }
        _ => row_blocks(8, &scalar_rows),
    }
}

/// The product [`gemm_f32`] computes for one k-block (`1 ≤ k ≤ KC`, `n ≤ MAX_N`),
/// written into `c` with row stride `ldc`, the part `tri` says ([`Tri`]), on this
/// thread (same bits, every ISA); `false` (nothing written) for a product outside that
/// range (m, n or k = 0 included) or `ldc < n` — the caller then forms the full product
/// another way.
///
/// # Safety
/// `c` addresses the `m×n` matrix of row stride `ldc` (writable f32 that nothing else
/// accesses during the call and that do not overlap `a` or `b`).
#[allow(clippy::too_many_arguments)]
pub(in crate::tensor) unsafe fn gemm_unpacked_into_f32(
    m: usize,
    n: usize,
    k: usize,
    a: &[f32],
    sa: Strides,
    b: &[f32],
    sb: Strides,
    c: *mut f32,
    ldc: usize,
    tri: Tri,
) -> bool {
    // SAFETY: as this function requires.
    unsafe { unpacked_into(Isa::best(), m, n, k, (a, sa), (b, sb), c, ldc, tri) }
}

/// [`gemm_unpacked_into_f32`] on `isa`.
///
/// # Safety
/// As there; `isa` is available.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn unpacked_into(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    (a, sa): (&[f32], Strides),
    (b, sb): (&[f32], Strides),
    c: *mut f32,
    ldc: usize,
    tri: Tri,
) -> bool {
    assert!(sa.covers(m, k, a.len()) && sb.covers(k, n, b.len()));
    assert!(isa.available(), "{isa:?} is not available on this CPU");
    if m == 0 || n == 0 || k == 0 || k > KC || n > MAX_N || ldc < n {
        return false;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let g = small::Geometry {
            n,
            k,
            sa,
            ldc,
            tri,
            post: None,
        };
        match isa {
            Isa::Avx512 => {
                // SAFETY: AVX-512F is present; 1 ≤ k ≤ KC; c as required.
                unsafe { small_avx512(m, a, b, sb, c, g) };
                return true;
            }
            Isa::Avx2 => {
                // SAFETY: AVX2 and FMA are present; the rest as above.
                unsafe { small_avx2(m, a, b, sb, c, g) };
                return true;
            }
            Isa::Scalar => {}
        }
    }
    // SAFETY: 1 ≤ k; c as required.
    unsafe { scalar::gemm(m, n, k, (a, sa), (b, sb), c, ldc, tri, None) };
    true
}

/// [`small::gemm`] with 8-row tiles, compiled for AVX-512F.
///
/// # Safety
/// As there, AVX-512F present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn small_avx512(
    m: usize,
    a: &[f32],
    b: &[f32],
    sb: Strides,
    c: *mut f32,
    g: small::Geometry,
) {
    // SAFETY: as this function requires.
    unsafe { small::gemm::<Avx512, 8>(m, a, b, sb, c, g) }
}

/// [`small::gemm`] with 6-row tiles, compiled for AVX2 + FMA.
///
/// # Safety
/// As there, AVX2 and FMA present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn small_avx2(m: usize, a: &[f32], b: &[f32], sb: Strides, c: *mut f32, g: small::Geometry) {
    // SAFETY: as this function requires.
    unsafe { small::gemm::<Avx2, 6>(m, a, b, sb, c, g) }
}

/// One block of the packed product with the 8×48 tile, compiled for AVX-512F.
///
/// # Safety
/// As [`gemm_block`], AVX-512F present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn packed_avx512(g: Block, buf: &mut Buffers) {
    // SAFETY: as this function requires.
    unsafe { gemm_block::<Avx512, 8, 3>(g, buf) }
}

/// One block of the packed product with the 6×16 tile, compiled for AVX2 + FMA.
///
/// # Safety
/// As [`gemm_block`], AVX2 and FMA present.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn packed_avx2(g: Block, buf: &mut Buffers) {
    // SAFETY: as this function requires.
    unsafe { gemm_block::<Avx2, 6, 2>(g, buf) }
}
