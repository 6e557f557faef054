//! LayerNorm over the last axis, forward and backward: `laminatio` and its VJPs
//! `retro_laminatio`, `retro_laminatio_adde` (with the cotangent sum that follows it
//! in a companion fused in, src/autodiff/fuse.rs). The row recipes are rows.rs, their
//! AVX-512 eight-row form lanes.rs.

#[cfg(target_arch = "x86_64")]
use super::lanes;
use super::layernorm_f32::{layernorm_backward_f32, layernorm_f32};
use super::rows::{ln_backward_rows, ln_forward_rows, LN_GROUP};
use crate::tensor::elem::{map_f32, new_f32, operands, Operands};
use crate::tensor::elementwise_f32::{binary_f32, BinOp};
use crate::tensor::par::{build, build_from, SendPtr};
use crate::tensor::shape::broadcast_shapes;
use crate::tensor::{
    add, broadcast_conflict, check_same, fmt_shape, last_axis, nonempty_last_axis, TResult, Tensor,
    TensorError,
};

/// `x.laminatio(axis, eps, γ, β)`: LayerNorm over the last axis (`axis` must
/// name it); γ and β have shape `[d]`. Per row: `mean = Σx/d`, `c = x − mean`,
/// `var = Σc²/d`, `inv = 1/√(var + eps)`, `y = (c·inv)·γ + β` (sums left to
/// right from 0.0). f32 tensors: layernorm_f32.rs (f64 inside, each element rounded
/// once).
pub fn layernorm(
    x: &Tensor,
    axis: usize,
    eps: f64,
    gamma: &Tensor,
    beta: &Tensor,
) -> TResult<Tensor> {
    let d = last_axis("laminatio", x)?;
    if axis + 1 != x.rank() {
        return Err(TensorError::shape(format!(
            "laminatio: axis {axis} is not the last axis of {}",
            fmt_shape(x.shape())
        )));
    }
    if gamma.shape() != [d] || beta.shape() != [d] {
        return Err(TensorError::shape(format!(
            "laminatio: scale {} and offset {} must both be [{d}], the size of the last axis {axis} of {}",
            fmt_shape(gamma.shape()),
            fmt_shape(beta.shape()),
            fmt_shape(x.shape())
        )));
    }
    if d == 0 {
        return Err(TensorError::shape("laminatio: the last axis is empty"));
    }
    match operands([x, gamma, beta])? {
        Operands::F64 => {}
        Operands::F32 => {
            let (g, b) = (gamma.data32(), beta.data32());
            return map_f32(x, |xd, o| layernorm_f32(xd, o, eps, g, b));
        }
        Operands::Widened([x, gamma, beta]) => return layernorm(&x, axis, eps, &gamma, &beta),
    }
    let (g, b) = (gamma.data(), beta.data());
    let xd = x.data();
    #[cfg(target_arch = "x86_64")]
    let lanes = lanes::available();
    let out = build(x.numel(), d, |start, dst| {
        let (mut src, mut dst) = (&xd[start..start + dst.len()], dst);
        // Eight rows in AVX-512 lanes where the CPU has them (the same bits, see
        // lanes.rs), then four rows in lockstep: their in-order sums are independent
        // chains, so they overlap instead of waiting on one another (each row's sums
        // unchanged), then single rows.
        #[cfg(target_arch = "x86_64")]
        if lanes {
            let w = lanes::ROWS * d;
            for (r, o) in src.chunks_exact(w).zip(dst.chunks_exact_mut(w)) {
                // SAFETY: AVX-512F is available (checked above).
                unsafe { lanes::forward(r, o, d, eps, g, b) };
            }
            let done = src.len() / w * w;
            (src, dst) = (&src[done..], &mut dst[done..]);
        }
        let mut groups = src.chunks_exact(4 * d).zip(dst.chunks_exact_mut(4 * d));
        for (r, o) in &mut groups {
            ln_forward_rows::<4>(r, o, d, eps, g, b);
        }
        let done = src.len() / (4 * d) * 4 * d;
        for (r, o) in src[done..]
            .chunks_exact(d)
            .zip(dst[done..].chunks_exact_mut(d))
        {
            ln_forward_rows::<1>(r, o, d, eps, g, b);
        }
    })?;
    Ok(Tensor::shaped_like(x, out))
}

/// `g.retro_laminatio(x, eps, γ)`, the layer-norm backward (docs/ops.md): returns
/// (∂x, ∂γ, ∂β).
pub fn layernorm_backward(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
) -> TResult<(Tensor, Tensor, Tensor)> {
    layernorm_backward_adde(g, x, eps, gamma, None)
}

/// [`layernorm_backward`] with `∂x` added to `r` (`addita(r, ∂x)`, the bits of the separate op):
/// `g.retro_laminatio_adde(x, eps, γ, r)`, which a companion's cotangent sum after a
/// layernorm becomes (src/autodiff/fuse.rs). An `r` of `x`'s shape is added to each
/// group of rows as soon as it is written; one that broadcasts, in a pass afterwards.
/// f32 tensors: layernorm_f32.rs (f64 inside, each element rounded once; the addend
/// added in f32 after ∂x's rounding, the bits of the separate `addita`).
pub fn layernorm_backward_adde(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
    addend: Option<&Tensor>,
) -> TResult<(Tensor, Tensor, Tensor)> {
    match operands([g, x, gamma, addend.unwrap_or(x)])? {
        Operands::F64 => {}
        Operands::F32 => return layernorm_backward_adde_f32(g, x, eps, gamma, addend),
        Operands::Widened([g, x, gamma, r]) => {
            return layernorm_backward_adde(&g, &x, eps, &gamma, addend.map(|_| &r))
        }
    }
    if let Some(r) = addend.filter(|r| r.shape() != x.shape()) {
        check_addend(r, x)?;
        let (gx, gg, gb) = layernorm_backward(g, x, eps, gamma)?;
        return Ok((add(r, &gx)?, gg, gb));
    }
    let rd = addend.map(Tensor::data);
    let d = backward_checks(g, x, gamma)?;
    let gm = gamma.data();
    let (gd, xd) = (g.data(), x.data());
    let rows = x.numel() / d;
    // 1. Rows independent, blocks of rows on the pool's threads, LN_GROUP rows in
    //    lockstep (independent in-order sums in flight; each row's order unchanged):
    //    per row (mean, 1/√(var + eps)), then h = g ⊙ γ, s1 = Σ h, s2 = Σ h·x̂ in index
    //    order, ∂x = inv·(h − s1/d − x̂·(s2/d)). The (mean, inv) pairs go to `stats`
    //    for step 2.
    let mut stats = vec![0.0; 2 * rows];
    #[cfg(target_arch = "x86_64")]
    let lanes = lanes::available();
    let gx = {
        let sp = SendPtr::new(stats.as_mut_ptr());
        build(x.numel(), d, |start, dst| {
            let r0 = start / d;
            let n = dst.len() / d;
            // SAFETY: this block's rows [r0, r0 + n) own stats[2·r0 .. 2·(r0 + n)],
            // disjoint from every other block's; `stats` outlives the call.
            let st = unsafe { std::slice::from_raw_parts_mut(sp.get().add(2 * r0), 2 * n) };
            let (xb, gb) = (&xd[r0 * d..(r0 + n) * d], &gd[r0 * d..(r0 + n) * d]);
            // `o ← r + o` for rows [r, r + o.len()/d) of this block, just written.
            let add = |r: usize, o: &mut [std::mem::MaybeUninit<f64>]| {
                if let Some(rd) = rd {
                    let (from, len) = ((r0 + r) * d, o.len());
                    for (o, &v) in o.iter_mut().zip(&rd[from..from + len]) {
                        // SAFETY: the rows of `o` were written just before.
                        let x = unsafe { o.assume_init() };
                        o.write(v + x);
                    }
                }
            };
            let mut r = 0;
            let mut dst = dst;
            // Eight rows in AVX-512 lanes where the CPU has them (the same bits, see
            // norm/lanes.rs), then the groups below.
            #[cfg(target_arch = "x86_64")]
            if lanes {
                let w = lanes::ROWS * d;
                for o in dst.chunks_exact_mut(w) {
                    let rs = r * d..r * d + w;
                    // SAFETY: AVX-512F is available (checked above).
                    unsafe {
                        lanes::backward(&xb[rs.clone()], &gb[rs], gm, eps, o, &mut st[2 * r..])
                    };
                    add(r, o);
                    r += lanes::ROWS;
                }
                dst = &mut dst[r * d..];
            }
            let mut groups = dst.chunks_exact_mut(LN_GROUP * d);
            for o in &mut groups {
                let rs = r * d..(r + LN_GROUP) * d;
                ln_backward_rows::<LN_GROUP>(
                    &xb[rs.clone()],
                    &gb[rs],
                    gm,
                    eps,
                    o,
                    &mut st[2 * r..],
                );
                add(r, o);
                r += LN_GROUP;
            }
            for o in groups.into_remainder().chunks_exact_mut(d) {
                let rs = r * d..(r + 1) * d;
                ln_backward_rows::<1>(&xb[rs.clone()], &gb[rs], gm, eps, o, &mut st[2 * r..]);
                add(r, o);
                r += 1;
            }
        })?
    };
    let stats: &[f64] = &stats;
    // 2. ∂γ = Σ_rows x̂ ⊙ g and ∂β = Σ_rows g, rows in order from the first row's terms:
    //    one result of 2d sums (∂γ's columns, then ∂β's), each column summed down the
    //    rows by one thread (the columns of a row side by side), blocks of columns on
    //    the pool when the work is large.
    let min_par = if rows * d >= 1 << 14 { 16 } else { usize::MAX };
    #[cfg(target_arch = "x86_64")]
    let lanes = lanes::available();
    let sums = build_from(2 * d, 8, min_par, |start, dst| {
        let mut acc = vec![0.0; dst.len()];
        let cols = ColumnSums {
            xd,
            gd,
            stats,
            d,
            start,
        };
        #[cfg(target_arch = "x86_64")]
        if lanes {
            // SAFETY: AVX-512F is available (checked above).
            unsafe { cols.run_avx512(&mut acc) };
        } else {
            cols.run(&mut acc);
        }
        #[cfg(not(target_arch = "x86_64"))]
        cols.run(&mut acc);
        for (o, &a) in dst.iter_mut().zip(&acc) {
            o.write(a);
        }
    })?;
    let (gg, gb) = sums.split_at(d);
    let (gg, gb) = (gg.to_vec(), gb.to_vec());
    Ok((
        Tensor::shaped_like(x, gx),
        Tensor::from_flat(gg, &[d])?,
        Tensor::from_flat(gb, &[d])?,
    ))
}

/// `layernorm_backward_adde` on f32 tensors, with the f64 code's checks and errors: an
/// addend of x's shape is added as the rows are written, one that broadcasts afterwards
/// (`addita`'s f32 broadcast, elementwise_f32.rs); either way each element is `r + ∂x`
/// with ∂x rounded first, the bits of the separate ops.
fn layernorm_backward_adde_f32(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
    addend: Option<&Tensor>,
) -> TResult<(Tensor, Tensor, Tensor)> {
    if let Some(r) = addend.filter(|r| r.shape() != x.shape()) {
        check_addend(r, x)?;
        let (gx, gg, gb) = layernorm_backward_adde_f32(g, x, eps, gamma, None)?;
        let shape = broadcast_shapes(r.shape(), x.shape())?;
        let sum = new_f32(&shape, |o| {
            binary_f32(
                BinOp::Add,
                r.data32(),
                r.shape(),
                gx.data32(),
                gx.shape(),
                &shape,
                o,
            )
        })?;
        return Ok((sum, gg, gb));
    }
    let d = backward_checks(g, x, gamma)?;
    let (mut gg, mut gb) = (vec![0.0f32; d], vec![0.0f32; d]);
    let gx = map_f32(x, |xd, o| {
        layernorm_backward_f32(
            g.data32(),
            xd,
            eps,
            gamma.data32(),
            addend.map(Tensor::data32),
            o,
            &mut gg,
            &mut gb,
        )
    })?;
    Ok((gx, Tensor::from_f32(gg, &[d])?, Tensor::from_f32(gb, &[d])?))
}

/// The error of an addend of another shape than the operand's that does not broadcast
/// with it.
fn check_addend(r: &Tensor, x: &Tensor) -> TResult<()> {
    if broadcast_shapes(r.shape(), x.shape()).is_err() {
        return Err(TensorError::shape(format!(
            "retro_laminatio_adde: the addend {} does not broadcast with the operand {} ({})",
            fmt_shape(r.shape()),
            fmt_shape(x.shape()),
            broadcast_conflict(r.shape(), x.shape())
        )));
    }
    Ok(())
}

/// The backward's checks of its operands, in order: the cotangent has x's shape, x has
/// a non-empty last axis of size d, γ is `[d]`. Returns d.
fn backward_checks(g: &Tensor, x: &Tensor, gamma: &Tensor) -> TResult<usize> {
    check_same("retro_laminatio", g, x)?;
    let d = nonempty_last_axis("retro_laminatio", x)?;
    if gamma.shape() != [d] {
        return Err(TensorError::shape(format!(
            "retro_laminatio: γ {} for rows of {d} (it must be [{d}])",
            fmt_shape(gamma.shape())
        )));
    }
    Ok(d)
}

/// Step 2 of [`layernorm_backward`] for the sums `start..start + acc.len()` of the 2d (∂γ's
/// columns, then ∂β's): each column summed down the rows in order from the first row's
/// term, a row's columns side by side.
struct ColumnSums<'a> {
    xd: &'a [f64],
    gd: &'a [f64],
    stats: &'a [f64],
    d: usize,
    start: usize,
}

impl ColumnSums<'_> {
    #[inline(always)]
    fn run(&self, acc: &mut [f64]) {
        let (d, start) = (self.d, self.start);
        let end = start + acc.len();
        // This block's ∂γ columns [start, gamma_end) and ∂β columns [beta_start, end).
        let gamma_end = end.min(d);
        let beta_start = start.max(d);
        let (ag, ab) = acc.split_at_mut(gamma_end.saturating_sub(start));
        for r in 0..self.stats.len() / 2 {
            let (mean, inv) = (self.stats[2 * r], self.stats[2 * r + 1]);
            let (gr, xr) = (&self.gd[r * d..(r + 1) * d], &self.xd[r * d..(r + 1) * d]);
            if start < gamma_end {
                let cols = start..gamma_end;
                let terms = xr[cols.clone()].iter().zip(&gr[cols]);
                if r == 0 {
                    for (a, (&xv, &gv)) in ag.iter_mut().zip(terms) {
                        *a = ((xv - mean) * inv) * gv;
                    }
                } else {
                    for (a, (&xv, &gv)) in ag.iter_mut().zip(terms) {
                        *a += ((xv - mean) * inv) * gv;
                    }
                }
            }
            if beta_start < end {
                let terms = &gr[beta_start - d..end - d];
                if r == 0 {
                    ab.copy_from_slice(terms);
                } else {
                    for (a, &gv) in ab.iter_mut().zip(terms) {
                        *a += gv;
                    }
                }
            }
        }
    }

    /// [`ColumnSums::run`] compiled for AVX-512 (wider vectors, the same operations
    /// per element).
    ///
    /// # Safety
    /// AVX-512F is available.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f")]
    unsafe fn run_avx512(&self, acc: &mut [f64]) {
        self.run(acc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::{set_threads, SplitMix64, TensorErrorKind};

    /// Rows in lockstep groups give the recipe's bits row by row (7 rows: a group of
    /// four and a tail of three), against the recipe written out here.
    #[test]
    fn layernorm_groups_match_the_recipe() {
        // row counts with and without eight-row lane groups, four-row groups and single
        // rows; d = 1; a size that takes both threads
        for (rows, d, threads) in [
            (7, 13, 1),
            (21, 13, 1),
            (9, 1, 1),
            (1100, 64, 1),
            (1100, 64, 2),
        ] {
            layernorm_case(rows, d, threads);
        }
    }

    fn layernorm_case(rows: usize, d: usize, threads: usize) {
        let eps = 1e-5;
        let mut rng = SplitMix64::new(5);
        let x = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
        let g = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
        let b = rng.normal_tensor(&[d], 0.0, 0.2).unwrap();
        let before = set_threads(threads);
        let y = layernorm(&x, 1, eps, &g, &b).unwrap();
        set_threads(before);
        for r in 0..rows {
            let row = &x.data()[r * d..(r + 1) * d];
            let mut sum = 0.0;
            for &v in row {
                sum += v;
            }
            let mean = sum / d as f64;
            let mut var = 0.0;
            for &v in row {
                var += (v - mean) * (v - mean);
            }
            let inv = 1.0 / (var / d as f64 + eps).sqrt();
            for (j, &v) in row.iter().enumerate() {
                let want = ((v - mean) * inv) * g.data()[j] + b.data()[j];
                assert_eq!(
                    y.data()[r * d + j].to_bits(),
                    want.to_bits(),
                    "{rows}×{d}, row {r}, {j}"
                );
            }
        }
    }

    /// The layernorm backward against its recipe written out row by row (docs/ops.md
    /// rule table: x̂ = (x − mean)·inv, ∂γ = Σ x̂ ⊙ g and ∂β = Σ g over rows in order, ∂x =
    /// inv·(g⊙γ − Σ(g⊙γ)/d − x̂·Σ(g⊙γ⊙x̂)/d)): 7 rows (a lockstep group and a tail), and
    /// 1,100 rows of 64 on one and on two threads (the threaded paths).
    #[test]
    fn layernorm_backward_matches_the_recipe() {
        for (rows, d, threads) in [
            (7, 13, 1),
            (21, 13, 1),
            (9, 1, 1),
            (1100, 64, 1),
            (1100, 64, 2),
            (2000, 13, 2),
            (0, 5, 2),
        ] {
            let mut rng = SplitMix64::new(11);
            let x = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
            let g = rng.normal_tensor(&[rows, d], 0.0, 1.0).unwrap();
            let gamma = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
            set_threads(threads);
            let (gx, gg, gb) = layernorm_backward(&g, &x, 1e-5, &gamma).unwrap();
            set_threads(0);
            let (xd, gd, gm) = (x.data(), g.data(), gamma.data());
            let df = d as f64;
            let (mut gg1, mut gb1) = (vec![0.0; d], vec![0.0; d]);
            for r in 0..rows {
                let (xr, gr) = (&xd[r * d..(r + 1) * d], &gd[r * d..(r + 1) * d]);
                let mut sum = 0.0;
                for &v in xr {
                    sum += v;
                }
                let mean = sum / df;
                let mut var = 0.0;
                for &v in xr {
                    var += (v - mean) * (v - mean);
                }
                let inv = 1.0 / (var / df + 1e-5).sqrt();
                let xh: Vec<f64> = xr.iter().map(|&v| (v - mean) * inv).collect();
                let (mut s1, mut s2) = (0.0, 0.0);
                for j in 0..d {
                    let h = gr[j] * gm[j];
                    s1 += h;
                    s2 += h * xh[j];
                    if r == 0 {
                        gg1[j] = xh[j] * gr[j];
                        gb1[j] = gr[j];
                    } else {
                        gg1[j] += xh[j] * gr[j];
                        gb1[j] += gr[j];
                    }
                }
                for j in 0..d {
                    let want = inv * (gr[j] * gm[j] - s1 / df - xh[j] * (s2 / df));
                    assert_eq!(
                        gx.data()[r * d + j].to_bits(),
                        want.to_bits(),
                        "{rows}×{d}, t {threads}, row {r}"
                    );
                }
            }
            let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(gg.data()), bits(&gg1));
            assert_eq!(bits(gb.data()), bits(&gb1));
        }
    }

    /// `layernorm_backward_adde` gives `addita(r, ∂x)` and layernorm's ∂γ, ∂β bit for bit: rows in
    /// lane groups, lockstep groups and single rows, on one and on two threads, NaN, ±∞
    /// and ±0 in r; an r that broadcasts (a row) is added as `add` would; one that does
    /// not broadcast is a shape error.
    #[test]
    fn layernorm_with_an_addend_adds_after_the_rows() {
        let bits = |t: &Tensor| t.data().iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for (rows, d, threads) in [(7, 13, 1), (21, 13, 1), (9, 1, 1), (1100, 64, 2)] {
            let mut rng = SplitMix64::new(17);
            let x = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
            let g = rng.normal_tensor(&[rows, d], 0.0, 1.0).unwrap();
            let gamma = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
            let mut rv = rng
                .normal_tensor(&[rows, d], 0.0, 1.0)
                .unwrap()
                .data()
                .to_vec();
            for (i, v) in [f64::NAN, f64::INFINITY, -0.0, 0.0].into_iter().enumerate() {
                rv[(i * 5) % (rows * d)] = v;
            }
            let r = Tensor::from_flat(rv, &[rows, d]).unwrap();
            let row = rng.normal_tensor(&[d], 0.0, 1.0).unwrap();
            set_threads(threads);
            let (gx, gg, gb) = layernorm_backward(&g, &x, 1e-5, &gamma).unwrap();
            for addend in [&r, &row] {
                let (fx, fg, fb) =
                    layernorm_backward_adde(&g, &x, 1e-5, &gamma, Some(addend)).unwrap();
                let at = format!("{rows}×{d}, addend {:?}", addend.shape());
                assert!(bits(&fx) == bits(&add(addend, &gx).unwrap()), "{at}");
                assert!(bits(&fg) == bits(&gg) && bits(&fb) == bits(&gb), "{at}");
            }
            let other = rng.normal_tensor(&[rows + 1, d], 0.0, 1.0).unwrap();
            let e = layernorm_backward_adde(&g, &x, 1e-5, &gamma, Some(&other)).unwrap_err();
            assert_eq!(e.kind, TensorErrorKind::Shape);
            set_threads(0);
        }
    }
}
