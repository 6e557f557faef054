//! The fused attention ops and the causal softmax on f32 tensors (issue 21;
//! docs/precision.md): `attentio_pondera`, `attentio_applica`, `attentio`,
//! `attentio_cum_ponderibus`, `retro_attentio_pondera`, `retro_attentio_applica`,
//! `retro_attentio`, `softmax_causalis`, `retro_softmax_causalis` give f32 tensors,
//! computed in f32:
//!
//! * against an f64 reference formed here (plain loops) within a bound propagated step
//!   by step (`u = 2⁻²⁴`): a product over `k` terms is off by at most `γ_k·Σ|a||b|`
//!   (the sgemm's bound, `γ_k = k′u/(1 − k′u)`, `k′ = k + ⌈k/256⌉`) plus what its
//!   operands' errors carry; scaling the scores by `s` rounded to f32 adds `2u` of each
//!   score; logits off by at most `Δ` in a row move each softmax weight by at most a
//!   factor `e^{±2Δ}`, and the row kernel (exp to 2⁻⁵⁰ in f64, sums in f64, one rounding
//!   to f32) adds `u + 10⁻¹³` of the weight; the softmax VJP's `P·(∂P − d)·s` is three
//!   f32 roundings (`3u`) after its f64 row sum (`T·2⁻⁵²` of `Σ|∂P·P|`);
//! * the same bits as the unfused f32 chain (`matmul_nt` on the permuted heads, the f32
//!   `softmax_causalis`, `·`, and for the VJPs `matmul`, `matmul_tn` and
//!   `retro_softmax_causalis`), as the f64 fused ops are of the f64 chain;
//! * the same bits at 1 and 2 threads; shape errors are the f64 path's errors.

mod common;

use common::f32::{both_threads, f32s, rand32};
use faber::tensor::{self as k, DType, Tensor, Trans};

/// f32's unit roundoff.
const U: f64 = 1.0 / 16_777_216.0;

/// The row kernels' error beyond the final rounding (exp_core's 2⁻⁵⁰, f64 sums).
const ROW: f64 = 1e-13;

fn gamma(k: usize) -> f64 {
    let n = (k + k.div_ceil(256)) as f64 * U;
    n / (1.0 - n) + k as f64 * f64::EPSILON
}

fn wide(t: &Tensor) -> Vec<f64> {
    f32s(t).iter().map(|&x| x as f64).collect()
}

fn bits(ts: &[&Tensor]) -> Vec<u32> {
    ts.iter()
        .flat_map(|t| f32s(t).iter().map(|x| x.to_bits()))
        .collect()
}

/// Asserts `|got − want| ≤ bound` per element.
fn within(got: &Tensor, want: &[f64], bound: &[f64], what: &str) {
    let g = f32s(got);
    assert_eq!(g.len(), want.len(), "{what}: element count");
    for (i, ((&x, &w), &b)) in g.iter().zip(want).zip(bound).enumerate() {
        let err = (x as f64 - w).abs();
        assert!(
            err <= b,
            "{what}: element {i}: {x} against {w} (error {err:e} > bound {b:e})"
        );
    }
}

/// `[B, T, D]` split into `H` heads of width `dh`.
#[derive(Clone, Copy, Debug)]
struct Geo {
    b: usize,
    t: usize,
    d: usize,
    h: usize,
}

impl Geo {
    fn dh(&self) -> usize {
        self.d / self.h
    }
    /// Offset of (batch, row i, head, column p) in `[B, T, D]`.
    fn x(&self, b: usize, i: usize, h: usize, p: usize) -> usize {
        (b * self.t + i) * self.d + h * self.dh() + p
    }
    /// Offset of (batch, head, i, j) in `[B, H, T, T]`.
    fn w(&self, b: usize, h: usize, i: usize, j: usize) -> usize {
        ((b * self.h + h) * self.t + i) * self.t + j
    }
    fn s(&self) -> f64 {
        (self.dh() as f64).powf(-0.5)
    }
    fn heads(&self) -> impl Iterator<Item = (usize, usize)> {
        let (nb, nh) = (self.b, self.h);
        (0..nb).flat_map(move |b| (0..nh).map(move |h| (b, h)))
    }
}

/// The causal weights and their bound from `q`, `k` (`[B, T, D]`): the scores' product
/// bound, the scale's rounding, the softmax's `e^{2Δ}`.
fn weights_reference(g: Geo, q: &[f64], k: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (t, dh, s) = (g.t, g.dh(), g.s());
    let (mut p, mut bound) = (vec![0.0; g.b * g.h * t * t], vec![0.0; g.b * g.h * t * t]);
    for (b, h) in g.heads() {
        for i in 0..t {
            let mut z = vec![0.0; i + 1];
            let mut delta: f64 = 0.0;
            for (j, zj) in z.iter_mut().enumerate() {
                let (mut sum, mut abs) = (0.0, 0.0);
                for c in 0..dh {
                    let x = q[g.x(b, i, h, c)] * k[g.x(b, j, h, c)];
                    sum += x;
                    abs += x.abs();
                }
                *zj = sum * s;
                delta = delta.max(s * gamma(dh) * abs + 2.01 * U * zj.abs());
            }
            let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = z.iter().map(|&x| (x - m).exp()).collect();
            let total: f64 = e.iter().sum();
            let grow = (2.0 * delta).exp();
            for j in 0..=i {
                let pj = e[j] / total;
                p[g.w(b, h, i, j)] = pj;
                bound[g.w(b, h, i, j)] = pj * ((2.0 * delta).exp_m1() + grow * (U + ROW));
            }
        }
    }
    (p, bound)
}

/// `y = P·v` per head, with its bound for weights `p` off by at most `pb`.
fn apply_reference(g: Geo, p: &[f64], pb: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (t, dh) = (g.t, g.dh());
    let (mut y, mut bound) = (vec![0.0; v.len()], vec![0.0; v.len()]);
    for (b, h) in g.heads() {
        for i in 0..t {
            for c in 0..dh {
                let (mut sum, mut carried, mut abs) = (0.0, 0.0, 0.0);
                for j in 0..t {
                    let (w, vv) = (p[g.w(b, h, i, j)], v[g.x(b, j, h, c)]);
                    sum += w * vv;
                    carried += pb[g.w(b, h, i, j)] * vv.abs();
                    abs += (w.abs() + pb[g.w(b, h, i, j)]) * vv.abs();
                }
                y[g.x(b, i, h, c)] = sum;
                bound[g.x(b, i, h, c)] = carried + gamma(t) * abs;
            }
        }
    }
    (y, bound)
}

/// `(∂P = ∂y·vᵀ, its bound, ∂v = Pᵀ·∂y, its bound)` for exact weights `p`.
fn apply_backward_reference(g: Geo, gy: &[f64], p: &[f64], v: &[f64]) -> [Vec<f64>; 4] {
    let (t, dh) = (g.t, g.dh());
    let n = p.len();
    let (mut dp, mut dpb, mut dv, mut dvb) = (
        vec![0.0; n],
        vec![0.0; n],
        vec![0.0; v.len()],
        vec![0.0; v.len()],
    );
    for (b, h) in g.heads() {
        for i in 0..t {
            for j in 0..t {
                let (mut sum, mut abs) = (0.0, 0.0);
                for c in 0..dh {
                    let x = gy[g.x(b, i, h, c)] * v[g.x(b, j, h, c)];
                    sum += x;
                    abs += x.abs();
                }
                dp[g.w(b, h, i, j)] = sum;
                dpb[g.w(b, h, i, j)] = gamma(dh) * abs;
            }
        }
        for j in 0..t {
            for c in 0..dh {
                let (mut sum, mut abs) = (0.0, 0.0);
                for i in 0..t {
                    let x = p[g.w(b, h, i, j)] * gy[g.x(b, i, h, c)];
                    sum += x;
                    abs += x.abs();
                }
                dv[g.x(b, j, h, c)] = sum;
                dvb[g.x(b, j, h, c)] = gamma(t) * abs;
            }
        }
    }
    [dp, dpb, dv, dvb]
}

/// The causal softmax VJP with the scale, `∂S = s·P·(∂P − d)`, `d = Σ ∂P·P` per row,
/// and its bound when `∂P` is off by at most `dpb` (rows of `t`, `p` the exact
/// weights; the kernel scales by `s` rounded to f32: within the `3u`).
fn softmax_backward_reference(
    t: usize,
    dp: &[f64],
    dpb: &[f64],
    p: &[f64],
    s: f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut ds, mut bound) = (vec![0.0; p.len()], vec![0.0; p.len()]);
    for (r, ((gr, er), yr)) in dp.chunks(t).zip(dpb.chunks(t)).zip(p.chunks(t)).enumerate() {
        let d: f64 = gr.iter().zip(yr).map(|(a, b)| a * b).sum();
        let carried: f64 = er.iter().zip(yr).map(|(e, y)| e * y).sum::<f64>()
            + t as f64
                * f64::EPSILON
                * gr.iter()
                    .zip(er)
                    .zip(yr)
                    .map(|((a, e), y)| (a.abs() + e) * y)
                    .sum::<f64>();
        for j in 0..t {
            let at = r * t + j;
            ds[at] = s * yr[j] * (gr[j] - d);
            bound[at] = s * yr[j] * (er[j] + carried) * (1.0 + 3.01 * U) + 3.01 * U * ds[at].abs();
        }
    }
    (ds, bound)
}

/// `(∂q = ∂S·k, its bound, ∂k = ∂Sᵀ·q, its bound)` per head for `∂S` off by `dsb`.
fn weights_backward_reference(
    g: Geo,
    ds: &[f64],
    dsb: &[f64],
    q: &[f64],
    kk: &[f64],
) -> [Vec<f64>; 4] {
    let (t, dh) = (g.t, g.dh());
    let n = q.len();
    let (mut dq, mut dqb, mut dk, mut dkb) =
        (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for (b, h) in g.heads() {
        for i in 0..t {
            for c in 0..dh {
                let (mut sq, mut eq, mut aq) = (0.0, 0.0, 0.0);
                let (mut sk, mut ek, mut ak) = (0.0, 0.0, 0.0);
                for j in 0..t {
                    let (x, e) = (ds[g.w(b, h, i, j)], dsb[g.w(b, h, i, j)]);
                    let kv = kk[g.x(b, j, h, c)];
                    sq += x * kv;
                    eq += e * kv.abs();
                    aq += (x.abs() + e) * kv.abs();
                    // ∂k_i = Σ_j ∂S[j][i]·q_j
                    let (y, f) = (ds[g.w(b, h, j, i)], dsb[g.w(b, h, j, i)]);
                    let qv = q[g.x(b, j, h, c)];
                    sk += y * qv;
                    ek += f * qv.abs();
                    ak += (y.abs() + f) * qv.abs();
                }
                dq[g.x(b, i, h, c)] = sq;
                dqb[g.x(b, i, h, c)] = eq + gamma(t) * aq;
                dk[g.x(b, i, h, c)] = sk;
                dkb[g.x(b, i, h, c)] = ek + gamma(t) * ak;
            }
        }
    }
    [dq, dqb, dk, dkb]
}

/// `[B, T, D]` → `[B, H, T, dh]` (the permute gradus writes).
fn to_heads(g: Geo, x: &Tensor) -> Tensor {
    let xd = f32s(x);
    let mut out = Vec::with_capacity(xd.len());
    for (b, h) in g.heads() {
        for i in 0..g.t {
            for c in 0..g.dh() {
                out.push(xd[g.x(b, i, h, c)]);
            }
        }
    }
    Tensor::from_f32(out, &[g.b, g.h, g.t, g.dh()]).unwrap()
}

/// `[B, H, T, dh]` → `[B, T, D]`.
fn from_heads(g: Geo, x: &Tensor) -> Tensor {
    let xd = f32s(x);
    let mut out = vec![0.0f32; xd.len()];
    let mut at = 0;
    for (b, h) in g.heads() {
        for i in 0..g.t {
            for c in 0..g.dh() {
                out[g.x(b, i, h, c)] = xd[at];
                at += 1;
            }
        }
    }
    Tensor::from_f32(out, &[g.b, g.t, g.d]).unwrap()
}

const MASK: f64 = -1e9;

/// (B, T, D, H): the GPT's head width 16 (scale ¼, exact), an odd T and a scale that
/// f32 rounds (width 8), and one above the batch-threading threshold (2²⁰ multiply-adds).
const SIZES: [(usize, usize, usize, usize); 3] = [(2, 13, 16, 2), (1, 9, 24, 3), (4, 64, 64, 4)];

#[test]
fn attention_forward_in_f32_within_its_bound_and_the_unfused_chain() {
    for (n, &(b, t, d, h)) in SIZES.iter().enumerate() {
        let g = Geo { b, t, d, h };
        let seed = 10 * n as u64;
        let (q, kk, v) = (
            rand32(seed, &[b, t, d], 1.0),
            rand32(seed + 1, &[b, t, d], 1.0),
            rand32(seed + 2, &[b, t, d], 1.0),
        );
        let what = format!("[{b}, {t}, {d}] with {h} heads");
        let p = both_threads(
            || k::attention_weights(&q, &kk, h).unwrap(),
            |p| bits(&[p]),
            &what,
        );
        assert_eq!(p.shape(), &[b, h, t, t]);
        let (pw, pb) = weights_reference(g, &wide(&q), &wide(&kk));
        within(&p, &pw, &pb, &format!("attentio_pondera {what}"));
        let y = both_threads(
            || k::attention_apply(&p, &v).unwrap(),
            |y| bits(&[y]),
            &what,
        );
        let (yw, yb) = apply_reference(g, &pw, &pb, &wide(&v));
        within(&y, &yw, &yb, &format!("attentio_applica {what}"));
        let fused = both_threads(
            || k::attention(&q, &kk, &v, h).unwrap(),
            |y| bits(&[y]),
            &what,
        );
        assert_eq!(
            bits(&[&fused]),
            bits(&[&y]),
            "attentio = pondera then applica, {what}"
        );
        let (yp, pp) = both_threads(
            || k::attention_with_weights(&q, &kk, &v, h).unwrap(),
            |(a, b)| bits(&[a, b]),
            &what,
        );
        assert_eq!(
            bits(&[&yp, &pp]),
            bits(&[&y, &p]),
            "attentio_cum_ponderibus, {what}"
        );

        // The unfused f32 chain over the permuted heads: the same bits.
        let (qh, kh, vh) = (to_heads(g, &q), to_heads(g, &kk), to_heads(g, &v));
        let scores = k::matmul_t(&qh, &kh, Trans::B).unwrap();
        let chain_p = k::softmax_causal(&scores, g.s(), MASK).unwrap();
        assert_eq!(
            bits(&[&chain_p]),
            bits(&[&p]),
            "weights = unfused chain, {what}"
        );
        let chain_y = from_heads(g, &k::matmul(&chain_p, &vh).unwrap());
        assert_eq!(
            bits(&[&chain_y]),
            bits(&[&y]),
            "output = unfused chain, {what}"
        );
    }
}

#[test]
fn attention_backward_in_f32_within_its_bound_and_the_unfused_chain() {
    for (n, &(b, t, d, h)) in SIZES.iter().enumerate() {
        let g = Geo { b, t, d, h };
        let seed = 10 * n as u64 + 5;
        let (q, kk, v) = (
            rand32(seed, &[b, t, d], 1.0),
            rand32(seed + 1, &[b, t, d], 1.0),
            rand32(seed + 2, &[b, t, d], 1.0),
        );
        let gy = rand32(seed + 3, &[b, t, d], 1.0);
        let gp = rand32(seed + 4, &[b, h, t, t], 1.0);
        let what = format!("[{b}, {t}, {d}] with {h} heads");
        let p = k::attention_weights(&q, &kk, h).unwrap();
        let (pw, qw, kw, vw, gyw) = (wide(&p), wide(&q), wide(&kk), wide(&v), wide(&gy));
        let s = g.s();

        // retro_attentio_applica: ∂P = ∂y·vᵀ, ∂v = Pᵀ·∂y (the weights exact inputs).
        let (dp, dv) = both_threads(
            || k::attention_apply_backward(&gy, &p, &v).unwrap(),
            |(a, b)| bits(&[a, b]),
            &what,
        );
        let [dpw, dpb, dvw, dvb] = apply_backward_reference(g, &gyw, &pw, &vw);
        within(
            &dp,
            &dpw,
            &dpb,
            &format!("retro_attentio_applica ∂P {what}"),
        );
        within(
            &dv,
            &dvw,
            &dvb,
            &format!("retro_attentio_applica ∂v {what}"),
        );

        // retro_attentio_pondera from a given ∂P.
        let (dq, dk) = both_threads(
            || k::attention_weights_backward(&gp, &p, &q, &kk, h).unwrap(),
            |(a, b)| bits(&[a, b]),
            &what,
        );
        let zero = vec![0.0; pw.len()];
        let (ds, dsb) = softmax_backward_reference(t, &wide(&gp), &zero, &pw, s);
        let [dqw, dqb, dkw, dkb] = weights_backward_reference(g, &ds, &dsb, &qw, &kw);
        within(
            &dq,
            &dqw,
            &dqb,
            &format!("retro_attentio_pondera ∂q {what}"),
        );
        within(
            &dk,
            &dkw,
            &dkb,
            &format!("retro_attentio_pondera ∂k {what}"),
        );

        // retro_attentio: ∂P formed inside (its product error carried on).
        let (fq, fk, fv) = both_threads(
            || k::attention_backward(&gy, &p, &q, &kk, &v, h).unwrap(),
            |(a, b, c)| bits(&[a, b, c]),
            &what,
        );
        let (ds, dsb) = softmax_backward_reference(t, &dpw, &dpb, &pw, s);
        let [dqw, dqb, dkw, dkb] = weights_backward_reference(g, &ds, &dsb, &qw, &kw);
        within(&fq, &dqw, &dqb, &format!("retro_attentio ∂q {what}"));
        within(&fk, &dkw, &dkb, &format!("retro_attentio ∂k {what}"));
        within(&fv, &dvw, &dvb, &format!("retro_attentio ∂v {what}"));
        assert_eq!(
            bits(&[&fv]),
            bits(&[&dv]),
            "retro_attentio ∂v = applica's, {what}"
        );

        // The unfused f32 chain: the same bits.
        let (qh, kh, vh, gyh) = (
            to_heads(g, &q),
            to_heads(g, &kk),
            to_heads(g, &v),
            to_heads(g, &gy),
        );
        let chain_dp = k::matmul_t(&gyh, &vh, Trans::B).unwrap();
        assert_eq!(bits(&[&chain_dp]), bits(&[&dp]), "∂P = unfused, {what}");
        let chain_dv = from_heads(g, &k::matmul_t(&p, &gyh, Trans::A).unwrap());
        assert_eq!(bits(&[&chain_dv]), bits(&[&dv]), "∂v = unfused, {what}");
        let chain_ds = k::softmax_causal_backward(&chain_dp, &p, s).unwrap();
        let chain_dq = from_heads(g, &k::matmul(&chain_ds, &kh).unwrap());
        let chain_dk = from_heads(g, &k::matmul_t(&chain_ds, &qh, Trans::A).unwrap());
        assert_eq!(
            bits(&[&chain_dq, &chain_dk]),
            bits(&[&fq, &fk]),
            "retro_attentio = unfused, {what}"
        );
        let gs = k::softmax_causal_backward(&gp, &p, s).unwrap();
        let pond_q = from_heads(g, &k::matmul(&gs, &kh).unwrap());
        let pond_k = from_heads(g, &k::matmul_t(&gs, &qh, Trans::A).unwrap());
        assert_eq!(
            bits(&[&pond_q, &pond_k]),
            bits(&[&dq, &dk]),
            "retro_attentio_pondera = unfused, {what}"
        );
    }
}

#[test]
fn causal_softmax_in_f32_within_its_bound() {
    // Scores [2, 3, 11, 11] and a wide block [5, 7, 12]; the GPT's −1e9 mask and one
    // near the scores (its weights not 0); a scale f32 rounds.
    for (shape, v) in [(&[2usize, 3, 11, 11][..], MASK), (&[5, 7, 12][..], 0.3)] {
        let x = rand32(1, shape, 3.0);
        let gg = rand32(2, shape, 1.0);
        let s = 0.3f64;
        let (t1, c) = (shape[shape.len() - 2], shape[shape.len() - 1]);
        let what = format!("{shape:?}, mask {v}");
        let y = both_threads(
            || k::softmax_causal(&x, s, v).unwrap(),
            |y| bits(&[y]),
            &what,
        );
        assert_eq!(y.shape(), shape);
        let xw = wide(&x);
        let (mut want, mut bound) = (vec![0.0; xw.len()], vec![0.0; xw.len()]);
        for (r, row) in xw.chunks(c).enumerate() {
            let i = r % t1;
            let z: Vec<f64> = (0..c)
                .map(|j| if j <= i { row[j] * s } else { v })
                .collect();
            let delta = z.iter().map(|x| 2.01 * U * x.abs()).fold(0.0, f64::max);
            let m = z.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = z.iter().map(|&x| (x - m).exp()).collect();
            let total: f64 = e.iter().sum();
            for j in 0..c {
                let p = e[j] / total;
                want[r * c + j] = p;
                bound[r * c + j] = p * ((2.0 * delta).exp_m1() + (2.0 * delta).exp() * (U + ROW));
            }
        }
        within(&y, &want, &bound, &format!("softmax_causalis {what}"));
        if v == MASK {
            let masked = f32s(&y)
                .chunks(c)
                .enumerate()
                .all(|(r, row)| row[r % t1 + 1..].iter().all(|&w| w == 0.0));
            assert!(masked, "masked weights are zeros");
        }
        let gx = both_threads(
            || k::softmax_causal_backward(&gg, &y, s).unwrap(),
            |y| bits(&[y]),
            &what,
        );
        let zero = vec![0.0; xw.len()];
        let (mut dw, mut db) = softmax_backward_reference(c, &wide(&gg), &zero, &wide(&y), s);
        for (r, (dr, br)) in dw.chunks_mut(c).zip(db.chunks_mut(c)).enumerate() {
            // masked entries: 0·s
            for j in r % t1 + 1..c {
                dr[j] = 0.0;
                br[j] = 0.0;
            }
        }
        within(&gx, &dw, &db, &format!("retro_softmax_causalis {what}"));
    }
}

/// `f` on f32 operands and on the same widened to f64 give the same error.
fn same_error<R: std::fmt::Debug>(
    f: impl Fn(&[Tensor]) -> Result<R, k::TensorError>,
    ts: &[Tensor],
) {
    let wide: Vec<Tensor> = ts.iter().map(|t| t.to_dtype(DType::F64).unwrap()).collect();
    let e32 = f(ts).expect_err("an error in f32");
    let e64 = f(&wide).expect_err("an error in f64");
    assert_eq!((e32.kind, &e32.message), (e64.kind, &e64.message));
}

#[test]
fn bad_shapes_stay_errors_with_the_f64_messages() {
    let t = |s: &[usize]| rand32(1, s, 1.0);
    let (x, p) = (t(&[2, 4, 6]), t(&[2, 2, 4, 4]));
    same_error(
        |a| k::attention_weights(&a[0], &a[1], 4),
        &[x.clone(), x.clone()],
    );
    same_error(
        |a| k::attention_weights(&a[0], &a[1], 2),
        &[x.clone(), t(&[2, 4, 4])],
    );
    same_error(
        |a| k::attention_weights(&a[0], &a[1], 2),
        &[t(&[4, 6]), t(&[4, 6])],
    );
    same_error(
        |a| k::attention_apply(&a[0], &a[1]),
        &[t(&[2, 2, 4, 5]), x.clone()],
    );
    same_error(
        |a| k::attention_apply(&a[0], &a[1]),
        &[t(&[2, 4, 4]), x.clone()],
    );
    same_error(
        |a| k::attention(&a[0], &a[1], &a[2], 2),
        &[x.clone(), x.clone(), t(&[2, 4, 5])],
    );
    same_error(
        |a| k::attention_with_weights(&a[0], &a[1], &a[2], 0),
        &[x.clone(), x.clone(), x.clone()],
    );
    same_error(
        |a| k::attention_apply_backward(&a[0], &a[1], &a[2]),
        &[t(&[2, 4, 5]), p.clone(), x.clone()],
    );
    same_error(
        |a| k::attention_weights_backward(&a[0], &a[1], &a[2], &a[3], 2),
        &[t(&[2, 2, 4, 3]), p.clone(), x.clone(), x.clone()],
    );
    same_error(
        |a| k::attention_backward(&a[0], &a[1], &a[2], &a[3], &a[4], 2),
        &[x.clone(), t(&[2, 2, 3, 3]), x.clone(), x.clone(), x.clone()],
    );
    same_error(|a| k::softmax_causal(&a[0], 1.0, MASK), &[t(&[5])]);
    same_error(
        |a| k::softmax_causal_backward(&a[0], &a[1], 1.0),
        &[t(&[3, 3]), t(&[3, 4])],
    );
    same_error(
        |a| k::softmax_causal_backward(&a[0], &a[1], 1.0),
        &[t(&[3]), t(&[3])],
    );
}
