//! Packed, cache-blocked f32 GEMM (x86-64), generic over the SIMD [`Lanes`] and the
//! register tile `MR × NV·W`: 8×48 (24 zmm accumulators) on AVX-512, 6×16 (12 ymm)
//! on AVX2 + FMA. The structure is the f64 kernel's (gemm/packed.rs):
//!
//! ```text
//! for jc in 0..n step NC                   NC = 960 (AVX-512) / 768 (AVX2) columns
//!   for pc in 0..k step KC                 KC = 256; pack b[pc.., jc..] into
//!                                          NR-wide strips (KC·NC·4 B: 960 / 768 KiB)
//!     for ic in 0..m step MC               MC = 192; pack a[ic.., pc..] into
//!                                          MR-tall strips (192 KiB)
//!       for ir in MR strips                A micro-panel KC×MR (8 / 6 KiB) stays in L1
//!         for jr in NR strips              B micro-panel KC×NR (48 / 16 KiB) from L2
//!           MR×NR register tile: KC rank-1 updates (FMA)
//! ```
//!
//! Each `c[i,j]` is one FMA chain from +0.0 per k-block, the first block stored, later
//! ones added (module docs of `sgemm`); edge tiles run the same chains on zero-padded
//! panels and store only their valid part, so MC, NC, the tile and the thread split
//! never change a result.

use super::lanes::Lanes;
use super::{Shared, Strides, KC};
use crate::tensor::gemm::post::Post;
use crate::tensor::pool;
use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};

/// Rows of packed A per block (MC·KC·4 B = 192 KiB; a multiple of 8 and of 6).
const MC: usize = 192;

/// One 64-byte-aligned line of sixteen f32, the unit of the packing buffers.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([f32; 16]);

/// An uninitialised, 64-byte-aligned buffer of at least `n` f32, only accessed through
/// raw pointers, each element written (by packing) before it is read.
#[derive(Default)]
struct PackBuf {
    v: Vec<Line>,
}

impl PackBuf {
    /// Makes room for at least `n` f32; false if the system refuses.
    fn reserve(&mut self, n: usize) -> bool {
        self.v.try_reserve_exact(n.div_ceil(16)).is_ok()
    }
    fn ptr(&mut self) -> *mut f32 {
        self.v.as_mut_ptr().cast()
    }
}

/// Packing buffers for one block of the thread split.
#[derive(Default)]
pub(super) struct Buffers {
    a: PackBuf,
    b: PackBuf,
}

impl Buffers {
    /// Makes room for a block of `m×n` with inner size `k`, tile `mr×nr` and column
    /// block `nc_max`; false if the system refuses.
    fn reserve(
        &mut self,
        m: usize,
        n: usize,
        k: usize,
        mr: usize,
        nr: usize,
        nc_max: usize,
    ) -> bool {
        let kc = k.min(KC);
        let mc = m.min(MC).div_ceil(mr) * mr;
        let nc = n.min(nc_max).div_ceil(nr) * nr;
        self.a.reserve(mc * kc) && self.b.reserve(kc * nc)
    }
}

thread_local! {
    /// Packing buffers kept between calls on this thread (one set per block of the
    /// last call), as the f64 kernel keeps its own.
    static POOL: std::cell::RefCell<Vec<Buffers>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What one block of the thread split computes: `c = a·b` for `a` (`m×k`, strides
/// `sa`), `b` (`k×n`, strides `sb`), `c` (`m×n`, row stride `ldc`), then `post`.
#[derive(Clone, Copy)]
pub(super) struct Block {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: *const f32,
    pub sa: Strides,
    pub b: *const f32,
    pub sb: Strides,
    pub c: *mut f32,
    pub ldc: usize,
    pub post: Option<Post<f32>>,
}

/// The packed product on up to `threads` threads (rows or columns of `c`, row stride
/// `n`, split into blocks of whole tiles), each block by `run_block` (one ISA's
/// [`gemm_block`]); `false` (nothing written) when a packing buffer cannot be
/// allocated. `mr×nr` is the tile `run_block` uses, `nc` its column block.
///
/// # Safety
/// `a`, `b` hold every element their strides address for `m×k`, `k×n`; `c` addresses
/// `m·n` writable f32 that nothing else accesses during the call and that do not
/// overlap `a` or `b`; `post`'s matrix `m·n` readable ones; `m, n, k ≥ 1`; `run_block`
/// may be called (its ISA is present).
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn gemm_packed(
    m: usize,
    n: usize,
    k: usize,
    (a, sa): (&[f32], Strides),
    (b, sb): (&[f32], Strides),
    c: *mut f32,
    threads: usize,
    post: Option<Post<f32>>,
    (mr, nr, nc): (usize, usize, usize),
    run_block: unsafe fn(Block, &mut Buffers),
) -> bool {
    let t = threads.max(1);
    // Split the dimension that gives the more whole tiles per thread.
    let by_rows = m / mr >= n / nr;
    let (total, unit) = if by_rows { (m, mr) } else { (n, 16) };
    let per = total.div_ceil(t).div_ceil(unit) * unit;
    let blocks = total.div_ceil(per);
    let mut bufs = POOL.with(|p| std::mem::take(&mut *p.borrow_mut()));
    if bufs.len() < blocks {
        bufs.resize_with(blocks, Buffers::default);
    }
    let (mm, nn) = if by_rows {
        (per.min(m), n)
    } else {
        (m, per.min(n))
    };
    if !bufs[..blocks]
        .iter_mut()
        .all(|b| b.reserve(mm, nn, k, mr, nr, nc))
    {
        return false;
    }
    let (cp, ap, bp) = (
        Shared(c),
        Shared(a.as_ptr().cast_mut()),
        Shared(b.as_ptr().cast_mut()),
    );
    let run = move |i: usize, buf: &mut Buffers| {
        let (cp, ap, bp) = (cp.get(), ap.get(), bp.get());
        let s = i * per;
        let w = per.min(total - s);
        // SAFETY: block i covers rows (or columns) [s, s+w) of c, disjoint from every
        // other block; the sub-matrices of a, b, c and post's matrix addressed stay
        // inside them (as required); the buffers were reserved for this block's size.
        unsafe {
            let blk = if by_rows {
                Block {
                    m: w,
                    n,
                    k,
                    a: ap.add(s * sa.row),
                    sa,
                    b: bp,
                    sb,
                    c: cp.add(s * n),
                    ldc: n,
                    post: post.map(|p| p.at(s * n)),
                }
            } else {
                Block {
                    m,
                    n: w,
                    k,
                    a: ap,
                    sa,
                    b: bp.add(s * sb.col),
                    sb,
                    c: cp.add(s),
                    ldc: n,
                    post: post.map(|p| p.at(s)),
                }
            };
            run_block(blk, buf)
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

/// `c = a·b` (then `post`) for one block, on this thread, with the `MR × NV·W` tile.
///
/// # Safety
/// The ISA of `L` is present; the block's pointers as [`gemm_packed`] requires for its
/// sub-matrices, `k ≥ 1`; `buf` was reserved for at least this block's size with this
/// tile and `L::NC`.
#[inline(always)]
pub(super) unsafe fn gemm_block<L: Lanes, const MR: usize, const NV: usize>(
    g: Block,
    buf: &mut Buffers,
) {
    let Block {
        m,
        n,
        k,
        a,
        sa,
        b,
        sb,
        c,
        ldc,
        post,
    } = g;
    let nr = NV * L::W;
    let (pa, pb) = (buf.a.ptr(), buf.b.ptr());
    for jc in (0..n).step_by(L::NC) {
        let nc = L::NC.min(n - jc);
        for pc in (0..k).step_by(KC) {
            let kc = KC.min(k - pc);
            let first = pc == 0;
            let last = pc + kc == k;
            // SAFETY: rows [pc, pc+kc) and columns [jc, jc+nc) lie inside b; pb holds
            // kc·round_up(nc, nr) f32.
            unsafe { pack_b(kc, nc, nr, b.add(pc * sb.row + jc * sb.col), sb, pb) };
            for ic in (0..m).step_by(MC) {
                let mc = MC.min(m - ic);
                // SAFETY: rows [ic, ic+mc), columns [pc, pc+kc) lie inside a; pa holds
                // round_up(mc, MR)·kc f32.
                unsafe { pack_a::<MR>(mc, kc, a.add(ic * sa.row + pc * sa.col), sa, pa) };
                for ir in (0..mc).step_by(MR) {
                    let mr = MR.min(mc - ir);
                    // SAFETY: strip ir / MR of packed A, strips of packed B, and the
                    // mr×w corner of the tile at c's (ic+ir, jc+jr), all inside their
                    // buffers and c.
                    unsafe {
                        let ap = pa.add(ir * kc);
                        for jr in (0..nc).step_by(nr) {
                            let w = nr.min(nc - jr);
                            let cp = c.add((ic + ir) * ldc + jc + jr);
                            kernel::<L, MR, NV>(kc, ap, pb.add(jr * kc), cp, ldc, mr, w, first);
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

/// Packs `a[0..mc, 0..kc]` (strides `sa`) into MR-row strips: strip s holds, for
/// p = 0..kc, the MR values `a[s·MR + i, p]` (rows past `mc` as 0.0).
///
/// # Safety
/// `a` addresses an `mc×kc` matrix with strides `sa`; `dst` has room for
/// `round_up(mc, MR)·kc` f32.
#[inline(always)]
unsafe fn pack_a<const MR: usize>(mc: usize, kc: usize, a: *const f32, sa: Strides, dst: *mut f32) {
    for s in 0..mc.div_ceil(MR) {
        // SAFETY: strip s of dst and rows s·MR.. of a (as required).
        unsafe {
            let d = dst.add(s * MR * kc);
            let rows = MR.min(mc - s * MR);
            if rows == MR && sa.row == 1 {
                // A transposed operand: the MR values of one p are adjacent.
                for p in 0..kc {
                    std::ptr::copy_nonoverlapping(a.add(s * MR + p * sa.col), d.add(p * MR), MR);
                }
                continue;
            }
            for i in 0..MR {
                if i < rows {
                    let src = a.add((s * MR + i) * sa.row);
                    for p in 0..kc {
                        *d.add(p * MR + i) = *src.add(p * sa.col);
                    }
                } else {
                    for p in 0..kc {
                        *d.add(p * MR + i) = 0.0;
                    }
                }
            }
        }
    }
}

/// Packs `b[0..kc, 0..nc]` (strides `sb`) into `nr`-column strips: strip s holds, for
/// p = 0..kc, the nr values `b[p, s·nr + j]` (columns past `nc` as 0.0).
///
/// # Safety
/// `b` addresses a `kc×nc` matrix with strides `sb`; `dst` has room for
/// `kc·round_up(nc, nr)` f32.
#[inline(always)]
unsafe fn pack_b(kc: usize, nc: usize, nr: usize, b: *const f32, sb: Strides, dst: *mut f32) {
    for s in 0..nc.div_ceil(nr) {
        // SAFETY: strip s of dst and columns s·nr.. of b (as required).
        unsafe {
            let d = dst.add(s * nr * kc);
            let cols = nr.min(nc - s * nr);
            if sb.col == 1 {
                for p in 0..kc {
                    let src = b.add(p * sb.row + s * nr);
                    std::ptr::copy_nonoverlapping(src, d.add(p * nr), cols);
                    for j in cols..nr {
                        *d.add(p * nr + j) = 0.0;
                    }
                }
            } else if sb.row == 1 {
                // A transposed operand: column j of b is contiguous in p; walk it once
                // per column (reading along memory) and scatter into the strip.
                for j in 0..nr {
                    if j < cols {
                        let src = b.add((s * nr + j) * sb.col);
                        for p in 0..kc {
                            *d.add(p * nr + j) = *src.add(p);
                        }
                    } else {
                        for p in 0..kc {
                            *d.add(p * nr + j) = 0.0;
                        }
                    }
                }
            } else {
                for p in 0..kc {
                    let src = b.add(p * sb.row + s * nr * sb.col);
                    for j in 0..nr {
                        *d.add(p * nr + j) = if j < cols { *src.add(j * sb.col) } else { 0.0 };
                    }
                }
            }
        }
    }
}

/// The `MR × NV·W` register tile: `acc = Σ_p a[:,p]·b[p,:]` (FMA, p in order, from
/// +0.0), then for the `mr×w` corner `c = acc` (`first`) or `c = c + acc`.
///
/// # Safety
/// The ISA of `L` is present; `a` and `b` are packed micro-panels of `kc·MR` and
/// `kc·NV·W` f32; `c` addresses the `mr×w` corner (`mr ≤ MR`, `w ≤ NV·W`) of a tile
/// with row stride `ldc`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn kernel<L: Lanes, const MR: usize, const NV: usize>(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    mr: usize,
    w: usize,
    first: bool,
) {
    let nr = NV * L::W;
    // SAFETY: the ISA is present; every pointer stays inside the panels and the tile's
    // valid corner (prefetching never faults).
    unsafe {
        let mut acc = [[L::zero(); NV]; MR];
        for i in 0..mr {
            _mm_prefetch::<_MM_HINT_T0>(c.add(i * ldc).cast());
        }
        let (mut a, mut b) = (a, b);
        for _ in 0..kc {
            let mut bv = [L::zero(); NV];
            for (v, x) in bv.iter_mut().enumerate() {
                *x = L::load(b.add(v * L::W));
            }
            for (i, row) in acc.iter_mut().enumerate() {
                let ai = L::splat(*a.add(i));
                for (x, &y) in row.iter_mut().zip(&bv) {
                    *x = L::fma(ai, y, *x);
                }
            }
            a = a.add(MR);
            b = b.add(nr);
        }
        for (i, row) in acc.iter().enumerate().take(mr) {
            for (v, &x) in row.iter().enumerate() {
                let lanes = w.saturating_sub(v * L::W);
                let p = c.add(i * ldc + v * L::W);
                if lanes >= L::W {
                    let y = if first { x } else { L::add(L::load(p), x) };
                    L::store(p, y);
                } else if lanes > 0 {
                    let y = if first {
                        x
                    } else {
                        L::add(L::load_part(p, lanes), x)
                    };
                    L::store_part(p, lanes, y);
                }
            }
        }
    }
}
