//! Kernels of the backward helper ops (`retro_*`) that generated companions call.
//! Fused where docs/autodiff.md gives a bit-exact recipe (softmax, layernorm, GELU,
//! cross-entropy), so the generated code reproduces the reference gradients.

use crate::tensor::{self as k, tanh_exp, TResult, Tensor, TensorError};

fn check_same(name: &str, a: &Tensor, b: &Tensor) -> TResult<()> {
    if a.shape() == b.shape() {
        Ok(())
    } else {
        Err(TensorError::shape(format!(
            "{name}: {} against {} ({})",
            k::fmt_shape(a.shape()),
            k::fmt_shape(b.shape()),
            k::shape_difference(a.shape(), b.shape())
        )))
    }
}

fn last_dim(name: &str, x: &Tensor) -> TResult<usize> {
    match x.shape().last() {
        Some(&d) if d > 0 => Ok(d),
        _ => Err(TensorError::shape(format!(
            "{name}: needs a non-empty last axis"
        ))),
    }
}

/// Softmax of one row, the forward recipe (max, exp, left-to-right sum, divide).
fn softmax_row(x: &[f64], out: &mut Vec<f64>) {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let start = out.len();
    out.extend_from_slice(x);
    let s = k::exp_shifted_sum(&mut out[start..], m);
    for e in &mut out[start..] {
        *e /= s;
    }
}

/// `y ⊙ (g − rowsum(g ⊙ y))`, per row left to right.
pub fn softmax(g: &Tensor, y: &Tensor) -> TResult<Tensor> {
    check_same("retro_softmax", g, y)?;
    let d = last_dim("retro_softmax", y)?;
    let mut out = k::vec_for_tensor(y.numel());
    for (gr, yr) in g.data().chunks_exact(d).zip(y.data().chunks_exact(d)) {
        let mut s = 0.0;
        for (a, b) in gr.iter().zip(yr) {
            s += a * b;
        }
        out.extend(gr.iter().zip(yr).map(|(a, b)| b * (a - s)));
    }
    Tensor::from_flat(out, y.shape())
}

/// `g − softmax(x) ⊙ rowsum(g)`.
pub fn log_softmax(g: &Tensor, x: &Tensor) -> TResult<Tensor> {
    check_same("retro_log_softmax", g, x)?;
    let d = last_dim("retro_log_softmax", x)?;
    let mut out = k::vec_for_tensor(x.numel());
    let mut p = Vec::with_capacity(d);
    for (gr, xr) in g.data().chunks_exact(d).zip(x.data().chunks_exact(d)) {
        p.clear();
        softmax_row(xr, &mut p);
        let s: f64 = gr.iter().fold(0.0, |a, b| a + b);
        out.extend(gr.iter().zip(&p).map(|(a, q)| a - q * s));
    }
    Tensor::from_flat(out, x.shape())
}

/// Layer-norm backward (docs/autodiff.md): returns (∂x, ∂γ, ∂β).
pub fn layernorm(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
) -> TResult<(Tensor, Tensor, Tensor)> {
    layernorm_adde(g, x, eps, gamma, None)
}

/// [`layernorm`] with `∂x` added to `r` (`addita(r, ∂x)`, the bits of the separate op):
/// `g.retro_laminatio_adde(x, eps, γ, r)`, which a companion's cotangent sum after a
/// layernorm becomes (src/autodiff/fuse.rs). An `r` of `x`'s shape is added to each
/// group of rows as soon as it is written; one that broadcasts, in a pass afterwards.
pub fn layernorm_adde(
    g: &Tensor,
    x: &Tensor,
    eps: f64,
    gamma: &Tensor,
    addend: Option<&Tensor>,
) -> TResult<(Tensor, Tensor, Tensor)> {
    if let Some(r) = addend.filter(|r| r.shape() != x.shape()) {
        if k::broadcast_shapes(r.shape(), x.shape()).is_err() {
            return Err(TensorError::shape(format!(
                "retro_laminatio_adde: the addend {} does not broadcast with the operand {} ({})",
                k::fmt_shape(r.shape()),
                k::fmt_shape(x.shape()),
                k::broadcast_conflict(r.shape(), x.shape())
            )));
        }
        let (gx, gg, gb) = layernorm(g, x, eps, gamma)?;
        return Ok((k::add(r, &gx)?, gg, gb));
    }
    let rd = addend.map(Tensor::data);
    check_same("retro_laminatio", g, x)?;
    let d = last_dim("retro_laminatio", x)?;
    if gamma.shape() != [d] {
        return Err(TensorError::shape(format!(
            "retro_laminatio: γ {} for rows of {d} (it must be [{d}])",
            k::fmt_shape(gamma.shape())
        )));
    }
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
    let lanes = k::ln_lanes::available();
    let gx = {
        let sp = k::SendPtr::new(stats.as_mut_ptr());
        k::build(x.numel(), d, |start, dst| {
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
            // tensor/ln_lanes.rs), then the groups below.
            #[cfg(target_arch = "x86_64")]
            if lanes {
                let w = k::ln_lanes::ROWS * d;
                for o in dst.chunks_exact_mut(w) {
                    let rs = r * d..r * d + w;
                    // SAFETY: AVX-512F is available (checked above).
                    unsafe {
                        k::ln_lanes::backward(
                            &xb[rs.clone()],
                            &gb[rs],
                            gm,
                            eps,
                            o,
                            &mut st[2 * r..],
                        )
                    };
                    add(r, o);
                    r += k::ln_lanes::ROWS;
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
    let lanes = k::ln_lanes::available();
    let sums = k::build_from(2 * d, 8, min_par, |start, dst| {
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

/// Step 2 of [`layernorm`] for the sums `start..start + acc.len()` of the 2d (∂γ's
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

/// Rows the layernorm backward processes side by side.
const LN_GROUP: usize = 4;

/// Step 1 of [`layernorm`] for `R` consecutive rows of length `d` (`xr`, `gr`: R·d
/// values): `dst` gets their ∂x (every slot written), `st` their (mean, inv) pairs.
#[inline(always)]
fn ln_backward_rows<const R: usize>(
    xr: &[f64],
    gr: &[f64],
    gm: &[f64],
    eps: f64,
    dst: &mut [std::mem::MaybeUninit<f64>],
    st: &mut [f64],
) {
    let d = gm.len();
    let df = d as f64;
    let stats = k::ln_stats::<R>(xr, d, eps);
    let (mut s1, mut s2) = ([0.0; R], [0.0; R]);
    for j in 0..d {
        for r in 0..R {
            let (mean, inv) = stats[r];
            let h = gr[r * d + j] * gm[j];
            s1[r] += h;
            s2[r] += h * ((xr[r * d + j] - mean) * inv);
        }
    }
    for (r, (mean, inv)) in stats.into_iter().enumerate() {
        st[2 * r] = mean;
        st[2 * r + 1] = inv;
        let (m1, m2) = (s1[r] / df, s2[r] / df);
        let rows = r * d..(r + 1) * d;
        let (x, g, o) = (&xr[rows.clone()], &gr[rows.clone()], &mut dst[rows]);
        k::ln_backward_row(x, g, gm, o, (mean, inv), (m1, m2));
    }
}

/// GELU backward: `g·(0.5·(1+t) + ((0.5·x)·(1−t·t))·du)`, `du = c·(1 + (3β)·(x·x))`
/// (`k::gelu_vjp`), with `t = tanh(u)` recomputed from `x`.
pub fn gelu(g: &Tensor, x: &Tensor, exp_identity: bool) -> TResult<Tensor> {
    check_same("retro_gelu", g, x)?;
    // t = tanh(u) for every element first, through the vectorised correctly rounded
    // map (bit-identical to `tanh_cr` per element), then the derivative.
    let mut t = vec![0.0; x.numel()];
    if exp_identity {
        for (tv, &xv) in t.iter_mut().zip(x.data()) {
            *tv = tanh_exp(k::GELU_C * (xv + k::GELU_BETA * ((xv * xv) * xv)));
        }
    } else {
        k::map_tanh_cr(x.data(), &mut t, k::TanhMap::GeluTanh);
    }
    let mut out = k::vec_for_tensor(x.numel());
    out.extend(
        g.data()
            .iter()
            .zip(x.data())
            .zip(&t)
            .map(|((&gv, &xv), &t)| k::gelu_vjp(gv, xv, t)),
    );
    Tensor::from_flat(out, x.shape())
}

/// `crux_entropia` backward, exact for the forward's `ln(p + 1e-7)`: with
/// `r_j = t_j·p_j/(p_j + 1e-7)`, `∂x_k = (p_k·Σ_j r_j − r_k)·g / C`. (Without the 1e-7
/// this is the familiar `(p·Σt − t)·g / C`; the exact form agrees with finite
/// differences to 1e-9 where the familiar one is off by ~1e-7.)
pub fn cross_entropy(g: f64, x: &Tensor, t: &Tensor) -> TResult<Tensor> {
    check_same("retro_crux_entropia", x, t)?;
    let d = last_dim("retro_crux_entropia", x)?;
    let c = d as f64;
    let mut out = k::vec_for_tensor(x.numel());
    let mut p = Vec::with_capacity(d);
    let mut r = Vec::with_capacity(d);
    for (xr, tr) in x.data().chunks_exact(d).zip(t.data().chunks_exact(d)) {
        p.clear();
        softmax_row(xr, &mut p);
        r.clear();
        r.extend(p.iter().zip(tr).map(|(q, tv)| tv * q / (q + 1e-7)));
        let sr = r.iter().fold(0.0, |a, b| a + b);
        out.extend(p.iter().zip(&r).map(|(q, rv)| (q * sr - rv) * g / c));
    }
    Tensor::from_flat(out, x.shape())
}

/// `crux_entropia` backward to the targets: the loss is linear in `t`, so
/// `∂t_k = −ln(p_k + 1e-7)·g / C` with `p` the row's softmax (the forward's recipe).
pub fn cross_entropy_targets(g: f64, x: &Tensor) -> TResult<Tensor> {
    let d = last_dim("retro_crux_scopi", x)?;
    let c = d as f64;
    let mut out = k::vec_for_tensor(x.numel());
    let mut p = Vec::with_capacity(d);
    for xr in x.data().chunks_exact(d) {
        p.clear();
        softmax_row(xr, &mut p);
        out.extend(p.iter().map(|q| -(q + 1e-7).ln() * g / c));
    }
    Tensor::from_flat(out, x.shape())
}

/// `crux_entropia_indices` backward: `(softmax(z) − onehot(y))·g / rows`.
pub fn cross_entropy_indices(g: f64, z: &Tensor, y: &Tensor) -> TResult<Tensor> {
    let d = last_dim("retro_crux_indices", z)?;
    let rows = z.numel() / d;
    if y.numel() != rows {
        return Err(TensorError::shape(format!(
            "retro_crux_indices: {} targets for {rows} rows",
            y.numel()
        )));
    }
    let ids = y.to_indices(d, "retro_crux_indices")?;
    let n = rows as f64;
    let zd = z.data();
    // Rows are independent: blocks of rows on the pool's threads.
    let out = k::build(z.numel(), d, |start, dst| {
        let mut p = Vec::with_capacity(d);
        for (i, o) in dst.chunks_exact_mut(d).enumerate() {
            let r = start / d + i;
            p.clear();
            softmax_row(&zd[r * d..(r + 1) * d], &mut p);
            p[ids[r]] -= 1.0;
            for (o, &v) in o.iter_mut().zip(&p) {
                o.write(v * g / n);
            }
        }
    })?;
    Ok(Tensor::shaped_like(z, out))
}

/// The gradient of a reduction along `axis` broadcast back to `like`'s shape.
pub fn dilata(g: &Tensor, like: &Tensor, axis: usize, scale: f64) -> TResult<Tensor> {
    let shape = like.shape();
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "retro_dilata: axis {axis} out of range for shape {}",
            k::fmt_shape(shape)
        )));
    }
    let outer: usize = shape[..axis].iter().product();
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    if g.numel() != outer * inner {
        return Err(TensorError::shape(format!(
            "retro_dilata: the gradient {} has {} elements, the shape {} reduced along axis {axis} has {}",
            k::fmt_shape(g.shape()),
            g.numel(),
            k::fmt_shape(shape),
            outer * inner
        )));
    }
    let gd = g.data();
    let mut out = k::vec_for_tensor(like.numel());
    for o in 0..outer {
        let row = &gd[o * inner..(o + 1) * inner];
        for _ in 0..n {
            out.extend(row.iter().map(|v| v * scale));
        }
    }
    Tensor::from_flat(out, shape)
}

/// `maximum_axis` backward: the gradient goes to the first maximum along `axis`.
pub fn maximum(g: &Tensor, x: &Tensor, axis: usize) -> TResult<Tensor> {
    let shape = x.shape();
    if axis >= shape.len() {
        return Err(TensorError::shape(format!(
            "retro_maximum: axis {axis} out of range for shape {}",
            k::fmt_shape(shape)
        )));
    }
    let outer: usize = shape[..axis].iter().product();
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    if g.numel() != outer * inner {
        return Err(TensorError::shape(format!(
            "retro_maximum: the gradient {} has {} elements, the shape {} reduced along axis {axis} has {}",
            k::fmt_shape(g.shape()),
            g.numel(),
            k::fmt_shape(shape),
            outer * inner
        )));
    }
    let (xd, gd) = (x.data(), g.data());
    let mut out = k::vec_for_tensor(x.numel());
    out.resize(x.numel(), 0.0);
    for o in 0..outer {
        for i in 0..inner {
            let mut best = 0;
            for j in 1..n {
                if xd[(o * n + j) * inner + i] > xd[(o * n + best) * inner + i] {
                    best = j;
                }
            }
            if n > 0 {
                out[(o * n + best) * inner + i] = gd[o * inner + i];
            }
        }
    }
    Tensor::from_flat(out, shape)
}

/// Swaps the last two axes (rank ≥ 2).
pub fn transpose_last(x: &Tensor) -> TResult<Tensor> {
    let r = x.rank();
    if r < 2 {
        return Err(TensorError::shape("transpone_ultimas: needs rank ≥ 2"));
    }
    let mut axes: Vec<usize> = (0..r).collect();
    axes.swap(r - 2, r - 1);
    k::permute(x, &axes)
}

/// `1.0` where `x > 0`, else `0.0`.
pub fn positive(x: &Tensor) -> TResult<Tensor> {
    let mut out = k::vec_for_tensor(x.numel());
    out.extend(x.data().iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }));
    Tensor::from_flat(out, x.shape())
}

/// Both cotangents of `a · b` for operands whose ranks are known only at run time
/// (`retro_matmul`): the products the static rule uses (`g · bᵀ`, `aᵀ · g`, outer
/// products for the vector cases), reduced over broadcast batch axes. With `post`,
/// that operation applied to `∂a`: `a.retro_matmul_derivata(b, g, d)` (`∂a ⊙ d`, `d` of
/// `a`'s shape) and `a.retro_matmul_adde(b, g, r)` (`r + ∂a`, as `addita`) — the bits of
/// the separate op after `retro_matmul`, which a companion's GELU backward and cotangent
/// sums after a linear layer become (src/autodiff/fuse.rs). A batched `a` times one
/// matrix, or a 2-D product, goes to the GEMM kernel, which applies the operation block
/// by block; other ranks (and an `r` that broadcasts) apply it afterwards.
pub fn matmul_post(
    a: &Tensor,
    b: &Tensor,
    g: &Tensor,
    post: Option<k::VjpPost>,
) -> TResult<(Tensor, Tensor)> {
    match post {
        Some(k::VjpPost::Scale(d)) if d.shape() != a.shape() => {
            return Err(TensorError::shape(format!(
                "retro_matmul_derivata: the derivative {} does not match the operand {} ({})",
                k::fmt_shape(d.shape()),
                k::fmt_shape(a.shape()),
                k::shape_difference(d.shape(), a.shape())
            )));
        }
        Some(k::VjpPost::AddTo(r)) if k::broadcast_shapes(r.shape(), a.shape()).is_err() => {
            return Err(TensorError::shape(format!(
                "retro_matmul_adde: the addend {} does not broadcast with the operand {} ({})",
                k::fmt_shape(r.shape()),
                k::fmt_shape(a.shape()),
                k::broadcast_conflict(r.shape(), a.shape())
            )));
        }
        _ => {}
    }
    let fits = post.is_none_or(|p| p.tensor().shape() == a.shape());
    match (a.rank(), b.rank()) {
        (ra, 2) if ra >= 3 && fits => {
            // Batched activations times one matrix ([…, M, K] · [K, N]): ∂b is one
            // product over every row, flat(a)ᵀ · flat(g) — not a batch of small
            // products summed afterwards.
            let (kd, nd) = (b.shape()[0], b.shape()[1]);
            let rows = a.numel() / kd.max(1);
            let af = k::reshape(a, &[rows, kd])?;
            let gf = k::reshape(g, &[rows, nd])?;
            let tf = post
                .map(|p| k::reshape(p.tensor(), &[rows, kd]))
                .transpose()?;
            let post = post.zip(tf.as_ref()).map(|(p, t)| p.with(t));
            let (ga, gb) = k::matmul_vjp_2d_post(&af, b, &gf, post)?;
            Ok((k::reshape(&ga, a.shape())?, gb))
        }
        (2, 2) => k::matmul_vjp_2d_post(a, b, g, post),
        _ if post.is_some() => {
            let (ga, gb) = matmul_post(a, b, g, None)?;
            let ga = match post {
                Some(p) => p.apply(&ga)?,
                None => ga,
            };
            Ok((ga, gb))
        }
        (1, 1) => {
            let gs = Tensor::scalar(g.item()?);
            Ok((k::mul(b, &gs)?, k::mul(a, &gs)?))
        }
        (2, 1) => {
            let gcol = k::reshape(g, &[g.numel(), 1])?;
            let brow = k::reshape(b, &[1, b.numel()])?;
            Ok((k::matmul(&gcol, &brow)?, k::matmul(&k::transpose(a)?, g)?))
        }
        (1, 2) => {
            let acol = k::reshape(a, &[a.numel(), 1])?;
            let grow = k::reshape(g, &[1, g.numel()])?;
            Ok((k::matmul(b, g)?, k::matmul(&acol, &grow)?))
        }
        (ra, rb) if ra >= 2 && rb >= 2 => {
            let ga = k::matmul_t(g, b, k::Trans::B)?;
            let gb = k::matmul_t(a, g, k::Trans::A)?;
            Ok((
                k::sum_to_shape(&ga, a.shape())?,
                k::sum_to_shape(&gb, b.shape())?,
            ))
        }
        (ra, rb) => Err(TensorError::shape(format!(
            "retro_matmul: ranks {ra} and {rb}"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layernorm backward against its recipe written out row by row (docs/autodiff.md
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
            let mut rng = k::SplitMix64::new(11);
            let x = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
            let g = rng.normal_tensor(&[rows, d], 0.0, 1.0).unwrap();
            let gamma = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
            k::set_threads(threads);
            let (gx, gg, gb) = layernorm(&g, &x, 1e-5, &gamma).unwrap();
            k::set_threads(0);
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

    /// `layernorm_adde` gives `addita(r, ∂x)` and layernorm's ∂γ, ∂β bit for bit: rows in
    /// lane groups, lockstep groups and single rows, on one and on two threads, NaN, ±∞
    /// and ±0 in r; an r that broadcasts (a row) is added as `add` would; one that does
    /// not broadcast is a shape error.
    #[test]
    fn layernorm_with_an_addend_adds_after_the_rows() {
        let bits = |t: &Tensor| t.data().iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for (rows, d, threads) in [(7, 13, 1), (21, 13, 1), (9, 1, 1), (1100, 64, 2)] {
            let mut rng = k::SplitMix64::new(17);
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
            k::set_threads(threads);
            let (gx, gg, gb) = layernorm(&g, &x, 1e-5, &gamma).unwrap();
            for addend in [&r, &row] {
                let (fx, fg, fb) = layernorm_adde(&g, &x, 1e-5, &gamma, Some(addend)).unwrap();
                let at = format!("{rows}×{d}, addend {:?}", addend.shape());
                assert!(bits(&fx) == bits(&k::add(addend, &gx).unwrap()), "{at}");
                assert!(bits(&fg) == bits(&gg) && bits(&fb) == bits(&gb), "{at}");
            }
            let other = rng.normal_tensor(&[rows + 1, d], 0.0, 1.0).unwrap();
            let e = layernorm_adde(&g, &x, 1e-5, &gamma, Some(&other)).unwrap_err();
            assert_eq!(e.kind, k::TensorErrorKind::Shape);
            k::set_threads(0);
        }
    }
}
