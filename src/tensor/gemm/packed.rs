//! Packed, cache-blocked f64 GEMM with an AVX-512 microkernel (x86-64 only,
//! chosen at run time when the CPU has `avx512f`).
//!
//! `c[m×n] = a[m×k]·b[k×n]`: `c` row-major with row stride `ldc`; `a` and `b`
//! addressed through a row and a column stride each ([`Strides`]), so a
//! transposed operand (the `aᵀ·g` and `g·bᵀ` of a backward pass) is read in
//! place by the packing routines instead of being copied first. The structure is BLIS's, with the two
//! innermost loops swapped (the small A micro-panel stays in the 48 KiB L1d,
//! B micro-panels stream from the 2 MiB L2; this measured at least as fast as
//! BLIS's order here):
//!
//! ```text
//! for jc in 0..n step NC                   NC = 504 columns
//!   for pc in 0..k step KC                 KC = 256; pack b[pc.., jc..] into
//!                                          NR-wide strips (KC·NC·8 B = 1 MiB, L2)
//!     for ic in 0..m step MC               MC = 192; pack a[ic.., pc..] into
//!                                          MR-tall strips (384 KiB)
//!       for ir in MR strips                A micro-panel KC×MR = 16 KiB, stays in L1
//!         for jr in NR strips              B micro-panel KC×NR streams from L2
//!           8×24 register tile: 24 zmm accumulators, KC rank-1 updates (FMA)
//! ```
//!
//! **Determinism.** Each `c[i,j]` is computed the same way whatever tile,
//! thread or block it lands in: for every KC block of k (fixed boundaries
//! 0, KC, 2·KC, …), an accumulator starting at +0.0 takes
//! `acc = fma(a[i,p], b[p,j], acc)` for p in order; the first block's
//! accumulator is stored, later ones are added (`c += acc`). Edge tiles run the
//! same kernel on zero-padded panels, so padding only touches lanes that are
//! thrown away. The thread split (rows or columns of `c`) and MC/NC therefore
//! never change a result; only KC does, and it is a constant.

use super::layout::Strides;
use super::post::Post;
use crate::tensor::par::SendPtr;
use crate::tensor::pool;
use std::arch::x86_64::{
    __m512d, _mm512_add_pd, _mm512_fmadd_pd, _mm512_load_pd, _mm512_loadu_pd, _mm512_set1_pd,
    _mm512_setzero_pd, _mm512_storeu_pd, _mm_prefetch, _MM_HINT_T0,
};

/// Rows of the register tile (broadcast from packed A).
pub(super) const MR: usize = 8;
/// Columns of the register tile (three zmm vectors of packed B).
const NR: usize = 24;
/// k-block: the packed A micro-panel (KC·MR·8 B = 16 KiB) stays in L1. It
/// fixes where each `c[i,j]`'s sum is split, so it must not depend on the
/// thread count or the shape.
pub(super) const KC: usize = 256;
/// Rows of packed A per block (MC·KC·8 B = 384 KiB, in L2).
const MC: usize = 192;
/// Columns of packed B per block (KC·NC·8 B = 1 MiB, in L2; a multiple of NR).
const NC: usize = 504;

/// Whether this CPU can run the kernel (`is_x86_feature_detected!` caches).
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
}

/// One 64-byte-aligned line of eight f64, the unit of the packing buffers.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f64; 8]);

/// An uninitialised, 64-byte-aligned buffer of at least `n` f64. It is only
/// ever accessed through raw pointers, each element written (by packing)
/// before it is read.
#[derive(Default)]
struct PackBuf {
    v: Vec<Line>,
}

impl PackBuf {
    /// Makes room for at least `n` f64; false if the system refuses.
    fn reserve(&mut self, n: usize) -> bool {
        self.v.try_reserve_exact(n.div_ceil(8)).is_ok()
    }
    fn ptr(&mut self) -> *mut f64 {
        self.v.as_mut_ptr().cast()
    }
}

/// Number of threads and the split for an `m×n` output: `(rows, per)` where
/// `rows` says whether rows (else columns) of `c` are divided, in blocks of
/// `per` (a multiple of MR rows or of 8 columns).
fn split(m: usize, n: usize, t: usize) -> (bool, usize) {
    // Split the dimension that gives the more whole tiles per thread.
    if m / MR >= n / NR {
        (true, m.div_ceil(t).div_ceil(MR) * MR)
    } else {
        (false, n.div_ceil(t).div_ceil(8) * 8)
    }
}

/// [`gemm`] through packed panels and the 8×24 kernel (any k), for `m, n, k ≥ 1`;
/// `post` as there.
///
/// # Safety
/// As [`gemm`].
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm_packed(
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
    if !available() {
        return false;
    }
    let t = threads.max(1);
    let (by_rows, per) = split(m, n, t);
    let total = if by_rows { m } else { n };
    let blocks = total.div_ceil(per);
    // One set of packing buffers per block, reserved up front (so an allocation
    // failure falls back before anything is written) and kept on this thread between
    // calls: fresh multi-100-KiB buffers per call cost page faults that
    // halved the speed at 256×256 in some runs.
    let mut bufs = POOL.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if bufs.len() < blocks {
        bufs.resize_with(blocks, Buffers::default);
    }
    let (mm, nn) = if by_rows {
        (per.min(m), n)
    } else {
        (m, per.min(n))
    };
    if !bufs[..blocks].iter_mut().all(|b| b.reserve(mm, nn, k)) {
        return false;
    }
    let cp = SendPtr(c);
    let (ap, bp) = (
        SendPtr(a.as_ptr().cast_mut()),
        SendPtr(b.as_ptr().cast_mut()),
    );
    let run = move |i: usize, buf: &mut Buffers| {
        let (cp, ap, bp) = (cp, ap, bp);
        let s = i * per;
        let w = per.min(total - s);
        // SAFETY: AVX-512F is present (checked above). Block i covers rows
        // (or columns) [s, s+w) of c, disjoint from every other block; a is
        // m×k with strides sa, b is k×n with strides sb (every addressed
        // element inside the slices, asserted above), c is m×n with row
        // stride n, and the sub-matrices addressed stay inside them. a and b are only read; c does not
        // alias them (it is a distinct &mut slice). The buffers were sized
        // for this block by Buffers::reserve.
        unsafe {
            if by_rows {
                gemm_block(
                    w,
                    n,
                    k,
                    ap.0.add(s * sa.row),
                    sa,
                    bp.0,
                    sb,
                    cp.0.add(s * n),
                    n,
                    buf,
                    post.map(|p| p.at(s * n)),
                )
            } else {
                gemm_block(
                    m,
                    w,
                    k,
                    ap.0,
                    sa,
                    bp.0.add(s * sb.col),
                    sb,
                    cp.0.add(s),
                    n,
                    buf,
                    post.map(|p| p.at(s)),
                )
            }
        }
    };
    if blocks <= 1 {
        run(0, &mut bufs[0]);
    } else {
        // Block i packs into buffer i, whichever thread of the pool runs it.
        let slots: Vec<&mut Buffers> = bufs[..blocks].iter_mut().collect();
        pool::run_each(slots, &|i, buf| run(i, buf));
    }
    POOL.with(|p| *p.borrow_mut() = bufs);
    true
}

thread_local! {
    /// Packing buffers kept between calls on this thread (one set per block
    /// of the last call: at most (384 KiB + 1 MiB) per thread used).
    static POOL: std::cell::RefCell<Vec<Buffers>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Packing buffers for one thread's block.
#[derive(Default)]
struct Buffers {
    a: PackBuf,
    b: PackBuf,
}

impl Buffers {
    /// Makes room for a block of `m×n` with inner size `k`; false if the
    /// system refuses.
    fn reserve(&mut self, m: usize, n: usize, k: usize) -> bool {
        let kc = k.min(KC);
        let mc = m.min(MC).div_ceil(MR) * MR;
        let nc = n.min(NC).div_ceil(NR) * NR;
        self.a.reserve(mc * kc) && self.b.reserve(kc * nc)
    }
}

/// `c = a·b` on one thread.
///
/// # Safety
/// AVX-512F must be available. `a` addresses an `m×k` matrix with strides
/// `sa`, `b` a `k×n` one with strides `sb`, `c` an `m×n` one with row stride
/// `ldc`, none written by anyone else during the call, `c` not overlapping
/// `a` or `b`; `buf` was reserved by `Buffers::reserve(m', n', k)` with `m' ≥ m`,
/// `n' ≥ n`. `k ≥ 1`. `post`'s matrix, when given, addresses an `m×n` matrix of row
/// stride `ldc`; each finished row strip of `c` gets its operation (after the last
/// k-block).
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn gemm_block(
    m: usize,
    n: usize,
    k: usize,
    a: *const f64,
    sa: Strides,
    b: *const f64,
    sb: Strides,
    c: *mut f64,
    ldc: usize,
    buf: &mut Buffers,
    post: Option<Post>,
) {
    let (pa, pb) = (buf.a.ptr(), buf.b.ptr());
    for jc in (0..n).step_by(NC) {
        let nc = NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            let first = pc == 0;
            let last = pc + kc == k;
            // SAFETY: rows [pc, pc+kc) and columns [jc, jc+nc) lie inside b;
            // pb holds kc·round_up(nc, NR) ≤ KC·round_up(min(n, NC), NR) f64.
            unsafe { pack_b(kc, nc, b.add(pc * sb.row + jc * sb.col), sb, pb) };
            for ic in (0..m).step_by(MC) {
                let mc = MC.min(m - ic);
                // SAFETY: rows [ic, ic+mc), columns [pc, pc+kc) lie inside a;
                // pa holds round_up(mc, MR)·kc f64.
                unsafe { pack_a(mc, kc, a.add(ic * sa.row + pc * sa.col), sa, pa) };
                for ir in (0..mc).step_by(MR) {
                    let mr = MR.min(mc - ir);
                    let ap = pa.add(ir * kc);
                    for jr in (0..nc).step_by(NR) {
                        let nr = NR.min(nc - jr);
                        let bp = pb.add(jr * kc);
                        let cp = c.add((ic + ir) * ldc + jc + jr);
                        // SAFETY: ap/bp point at packed, fully written,
                        // 64-byte-aligned micro-panels of kc·MR and kc·NR
                        // f64; the mr×nr tile at cp lies inside c.
                        unsafe {
                            if mr == MR && nr == NR {
                                kernel(kc, ap, bp, cp, ldc, first);
                            } else {
                                kernel_edge(kc, ap, bp, cp, ldc, mr, nr, first);
                            }
                        }
                    }
                    if let (Some(p), true) = (post, last) {
                        let at = (ic + ir) * ldc + jc;
                        // SAFETY: rows [ic+ir, ic+ir+mr), columns [jc, jc+nc) are
                        // finished in c and inside post's matrix (same layout).
                        unsafe { p.at(at).rows(mr, nc, c.add(at), ldc) };
                    }
                }
            }
        }
    }
}

/// Packs `a[0..mc, 0..kc]` (strides `sa`) into MR-row strips: strip s holds,
/// for p = 0..kc, the MR values `a[s·MR + i, p]` (rows past `mc` as 0.0).
///
/// # Safety
/// `a` addresses an `mc×kc` matrix with strides `sa`; `dst` has room for
/// `round_up(mc, MR)·kc` f64.
#[target_feature(enable = "avx512f")]
unsafe fn pack_a(mc: usize, kc: usize, a: *const f64, sa: Strides, dst: *mut f64) {
    for s in 0..mc.div_ceil(MR) {
        let d = dst.add(s * MR * kc);
        let rows = MR.min(mc - s * MR);
        if rows == MR && sa.row == 1 {
            // A transposed operand: the MR values of one p are adjacent.
            for p in 0..kc {
                // SAFETY: rows s·MR..s·MR+MR ≤ mc of column p < kc are in a;
                // d+p·MR is in dst.
                unsafe {
                    let x = _mm512_loadu_pd(a.add(s * MR + p * sa.col));
                    _mm512_storeu_pd(d.add(p * MR), x);
                }
            }
            continue;
        }
        for i in 0..MR {
            if i < rows {
                let src = a.add((s * MR + i) * sa.row);
                for p in 0..kc {
                    // SAFETY: p < kc, row s·MR+i < mc; d+p·MR+i < round_up(mc, MR)·kc.
                    unsafe { *d.add(p * MR + i) = *src.add(p * sa.col) };
                }
            } else {
                for p in 0..kc {
                    // SAFETY: as above (padding row).
                    unsafe { *d.add(p * MR + i) = 0.0 };
                }
            }
        }
    }
}

/// Packs `b[0..kc, 0..nc]` (strides `sb`) into NR-column strips: strip s
/// holds, for p = 0..kc, the NR values `b[p, s·NR + j]` (columns past `nc` as
/// 0.0).
///
/// # Safety
/// `b` addresses a `kc×nc` matrix with strides `sb`; `dst` has room for
/// `kc·round_up(nc, NR)` f64 and is 64-byte aligned.
#[target_feature(enable = "avx512f")]
unsafe fn pack_b(kc: usize, nc: usize, b: *const f64, sb: Strides, dst: *mut f64) {
    for s in 0..nc.div_ceil(NR) {
        let d = dst.add(s * NR * kc);
        let cols = NR.min(nc - s * NR);
        if cols == NR && sb.col == 1 {
            for p in 0..kc {
                let src = b.add(p * sb.row + s * NR);
                // SAFETY: columns s·NR..s·NR+NR ≤ nc of row p < kc are in b;
                // d+p·NR is 64-byte aligned (NR·8 = 192 = 3·64) and in dst.
                unsafe {
                    for v in 0..NR / 8 {
                        let x = _mm512_loadu_pd(src.add(8 * v));
                        std::arch::x86_64::_mm512_store_pd(d.add(p * NR + 8 * v), x);
                    }
                }
            }
        } else if sb.row == 1 {
            // A transposed operand: column j of b is contiguous in p; walk it
            // once per column (reading along memory) and scatter into the strip.
            for j in 0..NR {
                if j < cols {
                    let src = b.add((s * NR + j) * sb.col);
                    for p in 0..kc {
                        // SAFETY: (p, s·NR+j) is in b; the slot is in dst.
                        unsafe { *d.add(p * NR + j) = *src.add(p) };
                    }
                } else {
                    for p in 0..kc {
                        // SAFETY: the slot is in dst (padding column).
                        unsafe { *d.add(p * NR + j) = 0.0 };
                    }
                }
            }
        } else {
            for p in 0..kc {
                let src = b.add(p * sb.row + s * NR * sb.col);
                for j in 0..NR {
                    // SAFETY: column s·NR+j < nc is in b; the slot is in dst.
                    unsafe {
                        *d.add(p * NR + j) = if j < cols { *src.add(j * sb.col) } else { 0.0 }
                    };
                }
            }
        }
    }
}

/// The 8×24 register tile: `acc = Σ_p a[:,p]·b[p,:]` (FMA, p in order, from
/// +0.0), then `c = acc` (`first`) or `c += acc`.
///
/// # Safety
/// `a` and `b` are 64-byte-aligned packed micro-panels of `kc·MR` and `kc·NR`
/// f64; `c` addresses an MR×NR tile with row stride `ldc`.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn kernel(kc: usize, a: *const f64, b: *const f64, c: *mut f64, ldc: usize, first: bool) {
    let mut acc: [[__m512d; 3]; MR] = [[_mm512_setzero_pd(); 3]; MR];
    for i in 0..MR {
        // SAFETY: row i of the tile is in c (prefetch never faults anyway).
        unsafe { _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc).cast()) };
    }
    let (mut a, mut b) = (a, b);
    for _ in 0..kc {
        // SAFETY: a and b advance by MR and NR per step, kc steps: inside
        // the panels; b stays 64-byte aligned (NR·8 = 192 bytes per step).
        unsafe {
            let b0 = _mm512_load_pd(b);
            let b1 = _mm512_load_pd(b.add(8));
            let b2 = _mm512_load_pd(b.add(16));
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = _mm512_set1_pd(*a.add(i));
                row[0] = _mm512_fmadd_pd(ai, b0, row[0]);
                row[1] = _mm512_fmadd_pd(ai, b1, row[1]);
                row[2] = _mm512_fmadd_pd(ai, b2, row[2]);
            }
            a = a.add(MR);
            b = b.add(NR);
        }
    }
    for (i, row) in acc.iter().enumerate() {
        for (v, &x) in row.iter().enumerate() {
            // SAFETY: element (i, 8v..8v+8) of the tile is in c.
            unsafe {
                let p = c.add(i * ldc + 8 * v);
                let y = if first {
                    x
                } else {
                    _mm512_add_pd(_mm512_loadu_pd(p), x)
                };
                _mm512_storeu_pd(p, y);
            }
        }
    }
}

/// An edge tile of `mr×nr` (≤ MR×NR): the full kernel into a scratch tile,
/// then the valid part stored (`first`) or added, exactly as [`kernel`] does.
///
/// # Safety
/// As [`kernel`], with only the `mr×nr` corner of the tile inside `c`.
#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
unsafe fn kernel_edge(
    kc: usize,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
    ldc: usize,
    mr: usize,
    nr: usize,
    first: bool,
) {
    let mut tile = [Line([0.0; 8]); MR * NR / 8];
    let t: *mut f64 = tile.as_mut_ptr().cast();
    // SAFETY: the scratch tile is MR×NR with stride NR; a and b as required.
    unsafe { kernel(kc, a, b, t, NR, true) };
    for i in 0..mr {
        for j in 0..nr {
            // SAFETY: (i, j) is inside both the scratch tile and c's corner.
            unsafe {
                let x = *t.add(i * NR + j);
                let p = c.add(i * ldc + j);
                *p = if first { x } else { *p + x };
            }
        }
    }
}
