//! The fused kernels give the bits of the computations they replace, on one thread and
//! on two, and their shape errors are errors, not panics:
//! * `adamw_step` against the same AdamW step written with the unfused tensor ops
//!   (`scale`, `add`, `mul`, `sqrt`, `add_scalar`, `div`, `sub`);
//! * `gelu_cum_derivata` / `gelu_backward_derivata` (the GELU split a companion's
//!   forward sweep saves, and the VJP `g ⊙ d` that reads it) against `gelu` and
//!   against the scalar correctly rounded `tanh_cr` with GELU's formulas written out
//!   here;
//! * `softmax_causal` and `softmax_causal_backward` (the op `softmax_causalis`) against
//!   the unfused chain (`scale`, `causal_mask`, `softmax`) and its VJPs written out;
//! * `linear` against `matmul` then `add_bias`;
//! * `matmul_vjp_2d` and `matmul_vjp_2d_post` against the two `matmul_t` products (then
//!   `⊙ d` or `r +`);
//! * the attention ops (`attention_weights`, `attention_apply`, `attention`,
//!   `attention_with_weights` and their backward kernels) against the unfused per-head
//!   chain, and the masked terms the fused ops leave out.

use faber::tensor::{self, AdamCoef, SplitMix64, Tensor, TensorErrorKind as K};

fn bits(t: &Tensor) -> Vec<u64> {
    t.data().iter().map(|v| v.to_bits()).collect()
}

fn normal(seed: u64, shape: &[usize], std: f64) -> Tensor {
    SplitMix64::new(seed)
        .normal_tensor(shape, 0.0, std)
        .unwrap()
}

/// The fused AdamW step against the unfused ops: a small leaf, and a leaf large enough
/// to be split over threads (on one thread and on two).
#[test]
fn adamw_step_equals_the_unfused_ops() {
    for threads in [1, 2] {
        let before = tensor::set_threads(threads);
        adamw_case(&[37, 5]);
        adamw_case(&[129, 257]);
        tensor::set_threads(before);
    }
}

fn adamw_case(shape: &[usize]) {
    let p = normal(1, shape, 0.5);
    let g = normal(2, shape, 0.1);
    let m = normal(3, shape, 0.01);
    // second moments are non-negative
    let v = tensor::mul(&normal(4, shape, 0.01), &normal(4, shape, 0.01)).unwrap();
    let (lr, beta1, beta2, eps, wd, t) = (3e-3f64, 0.9f64, 0.99f64, 1e-8, 0.1, 7);
    let bc1 = 1.0 - beta1.powi(t);
    let bc2_sqrt = (1.0 - beta2.powi(t)).sqrt();
    let c = AdamCoef {
        beta1,
        one_minus_beta1: 1.0 - beta1,
        beta2,
        one_minus_beta2: 1.0 - beta2,
        inv_bc2_sqrt: 1.0 / bc2_sqrt,
        eps,
        decay: 1.0 - lr * wd,
        step: lr / bc1,
    };
    let (p1, m1, v1) = tensor::adamw_step(&p, &g, &m, &v, &c).unwrap();

    let s = |x: &Tensor, f: f64| tensor::scale(x, f).unwrap();
    let m2 = tensor::add(&s(&m, c.beta1), &s(&g, c.one_minus_beta1)).unwrap();
    let gg = tensor::mul(&g, &g).unwrap();
    let v2 = tensor::add(&s(&v, c.beta2), &s(&gg, c.one_minus_beta2)).unwrap();
    let denom = tensor::add_scalar(&s(&tensor::sqrt(&v2).unwrap(), c.inv_bc2_sqrt), c.eps).unwrap();
    let upd = s(&tensor::div(&m2, &denom).unwrap(), c.step);
    let p2 = tensor::sub(&s(&p, c.decay), &upd).unwrap();

    assert_eq!(bits(&m1), bits(&m2));
    assert_eq!(bits(&v1), bits(&v2));
    assert_eq!(bits(&p1), bits(&p2));
    assert_eq!(p1.shape(), shape);
    // the update moved the parameters
    assert_ne!(bits(&p1), bits(&p));
}

#[test]
fn adamw_step_shape_mismatch_is_an_error() {
    let a = normal(1, &[3, 4], 1.0);
    let b = normal(2, &[4, 3], 1.0);
    let c = AdamCoef {
        beta1: 0.9,
        one_minus_beta1: 0.1,
        beta2: 0.99,
        one_minus_beta2: 0.01,
        inv_bc2_sqrt: 1.0,
        eps: 1e-8,
        decay: 1.0,
        step: 1e-3,
    };
    for (g, m, v) in [(&b, &a, &a), (&a, &b, &a), (&a, &a, &b)] {
        let e = tensor::adamw_step(&a, g, m, v, &c).expect_err("shape mismatch");
        assert_eq!(e.kind, K::Shape);
    }
}

/// GELU's formulas with the scalar correctly rounded tanh.
fn u_of(x: f64) -> f64 {
    tensor::GELU_C * (x + tensor::GELU_BETA * ((x * x) * x))
}

/// GELU with its derivative: y has `gelu`'s bits, the derivative and the VJP `g ⊙ d`
/// those of the formulas with the scalar `tanh_cr` — on sizes below and above a
/// map chunk and the threading threshold (1 and 2 threads), with saturated and tiny
/// arguments, NaN and ±∞.
#[test]
fn gelu_split_has_the_bits_of_gelu_and_its_vjp() {
    // wide enough to reach both tanh saturation and the tiny-argument path
    let x = normal(11, &[2, 3, 171], 3.0);
    let x = tensor::concat(&[&x, &normal(12, &[2, 3, 171], 1e-6)], 2).unwrap();
    let mut specials = normal(14, &[1, 1, 7], 1.0).data().to_vec();
    specials[..4].copy_from_slice(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0]);
    let specials = Tensor::from_flat(specials, &[1, 1, 7]).unwrap();
    let big = normal(15, &[300, 257], 2.0);
    for x in [x, specials, big] {
        let g = normal(13, x.shape(), 1.0);
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let (y, d) = tensor::gelu_cum_derivata(&x).unwrap();
            let gx = tensor::gelu_backward_derivata(&g, &d).unwrap();
            tensor::set_threads(before);
            assert_eq!(bits(&y), bits(&tensor::gelu(&x).unwrap()));
            for (i, &xv) in x.data().iter().enumerate() {
                let tv = tensor::tanh_cr(u_of(xv));
                let du = tensor::GELU_C * (1.0 + (3.0 * tensor::GELU_BETA) * (xv * xv));
                let dv = 0.5 * (1.0 + tv) + ((0.5 * xv) * (1.0 - tv * tv)) * du;
                assert_eq!(
                    d.data()[i].to_bits(),
                    dv.to_bits(),
                    "derivative at x = {xv:e}"
                );
                let want = g.data()[i] * dv;
                assert_eq!(gx.data()[i].to_bits(), want.to_bits(), "vjp at x = {xv:e}");
            }
        }
    }
}

#[test]
fn gelu_split_shape_mismatch_is_an_error() {
    let x = normal(1, &[2, 5], 1.0);
    let other = normal(2, &[5, 2], 1.0);
    let (_, d) = tensor::gelu_cum_derivata(&x).unwrap();
    assert_eq!(
        tensor::gelu_backward_derivata(&other, &d).unwrap_err().kind,
        K::Shape
    );
}

/// `softmax_causalis` against the unfused chain it replaces, and its VJP against the
/// chain's VJPs written out (per row `d = Σ g·y` in order over every entry,
/// `(y·(g − d))·s`, masked entries `0·s`): square and non-square matrices, a batch, a
/// negative scale, rows whose scores lie below the mask value (so masked entries get
/// weight), a NaN, infinite and NaN cotangents at masked entries (which the VJP must
/// not leave out of `d`), and a batch large enough for two threads (blocks starting
/// mid-matrix) on one and on two threads.
#[test]
fn softmax_causalis_equals_the_unfused_chain() {
    let cases: [(&[usize], f64, f64, usize); 8] = [
        (&[2, 3, 8, 8], 0.25, -1e9, 1),
        (&[5, 7], 0.5, -1e9, 1),
        (&[7, 5], -0.75, -1e9, 1),
        (&[3, 6, 6], 1.0, -3.0, 1),
        (&[1, 1], 2.0, -1e9, 1),
        (&[3, 5, 67, 67], 0.125, -1e9, 1),
        (&[3, 5, 67, 67], 0.125, -1e9, 2),
        (&[2, 20, 20], -0.5, -1e9, 1),
    ];
    for (ci, &(shape, s, v, threads)) in cases.iter().enumerate() {
        let before = tensor::set_threads(threads);
        let mut x = normal(20 + ci as u64, shape, 4.0);
        if ci == 3 {
            // scores far below the mask value: the masked entries dominate
            x = tensor::add_scalar(&x, -40.0).unwrap();
        }
        if ci == 1 {
            let mut d = x.data().to_vec();
            d[9] = f64::NAN;
            x = Tensor::from_flat(d, shape).unwrap();
        }
        if ci == 7 {
            // Rows long enough for the maximum's eight lanes: NaN in a lane (row 19) and in
            // the remainder (row 18), ±∞ (rows 15, 16), a row of zeros of both signs.
            let mut d = x.data().to_vec();
            d[19 * 20 + 11] = f64::NAN;
            d[18 * 20 + 17] = f64::NAN;
            d[15 * 20 + 3] = f64::INFINITY;
            d[16 * 20 + 9] = f64::NEG_INFINITY;
            for (j, e) in d[12 * 20..13 * 20].iter_mut().enumerate() {
                *e = if j % 3 == 0 { -0.0 } else { 0.0 };
            }
            x = Tensor::from_flat(d, shape).unwrap();
        }
        let fused = tensor::softmax_causal(&x, s, v).unwrap();
        let chain =
            tensor::softmax(&tensor::causal_mask(&tensor::scale(&x, s).unwrap(), v).unwrap())
                .unwrap();
        assert_eq!(bits(&fused), bits(&chain), "forward, case {ci}");

        let mut g = normal(40 + ci as u64, shape, 1.0);
        if ci == 0 {
            // masked entries (j > i) of rows 2 and 5 of the first matrix
            let mut d = g.data().to_vec();
            d[2 * 8 + 6] = f64::INFINITY;
            d[5 * 8 + 7] = f64::NAN;
            g = Tensor::from_flat(d, shape).unwrap();
        }
        let back = tensor::softmax_causal_backward(&g, &fused, s).unwrap();
        tensor::set_threads(before);
        let c = shape[shape.len() - 1];
        let t1 = shape[shape.len() - 2];
        let (gd, yd) = (g.data(), fused.data());
        for row in 0..x.numel() / c {
            let i = row % t1;
            let (gr, yr) = (&gd[row * c..(row + 1) * c], &yd[row * c..(row + 1) * c]);
            let mut d = 0.0;
            for j in 0..c {
                d += gr[j] * yr[j];
            }
            for j in 0..c {
                let want = if j <= i {
                    (yr[j] * (gr[j] - d)) * s
                } else {
                    0.0 * s
                };
                assert_eq!(
                    back.data()[row * c + j].to_bits(),
                    want.to_bits(),
                    "backward, case {ci}, row {row}, j {j}"
                );
            }
        }
    }
    let flat = normal(1, &[4], 1.0);
    assert_eq!(
        tensor::softmax_causal(&flat, 1.0, -1e9).unwrap_err().kind,
        K::Shape
    );
    let y = normal(2, &[3, 3], 1.0);
    assert_eq!(
        tensor::softmax_causal_backward(&normal(3, &[3, 4], 1.0), &y, 1.0)
            .unwrap_err()
            .kind,
        K::Shape
    );
}

/// `lineare` is `(x · w).addita_bias(b)`: plain, batched, the unpacked kernel adding
/// the bias as it stores (n a multiple of 16, a masked edge, rows not a multiple of 8,
/// on one and two threads), the packed kernel, and a bias that does not fit.
#[test]
fn linear_equals_matmul_then_bias() {
    let cases: [(&[usize], usize); 7] = [
        (&[3, 5], 4),
        (&[2, 7, 5], 3),
        (&[1024, 64], 64),
        (&[2, 599, 64], 40),
        (&[300, 256], 69),
        (&[100, 33], 120),
        (&[50, 300], 64),
    ];
    for (ci, &(xs, n)) in cases.iter().enumerate() {
        let x = normal(60 + ci as u64, xs, 1.0);
        let k = xs[xs.len() - 1];
        let w = normal(70 + ci as u64, &[k, n], 0.3);
        let b = normal(80 + ci as u64, &[n], 0.5);
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let fused = tensor::linear(&x, &w, &b).unwrap();
            let chain = tensor::add_bias(&tensor::matmul(&x, &w).unwrap(), &b).unwrap();
            tensor::set_threads(before);
            assert_eq!(fused.shape(), chain.shape());
            assert_eq!(bits(&fused), bits(&chain), "case {ci}, {threads} thread(s)");
        }
    }
    let x = normal(1, &[3, 5], 1.0);
    let w = normal(2, &[5, 4], 1.0);
    assert_eq!(
        tensor::linear(&x, &w, &normal(3, &[5], 1.0))
            .unwrap_err()
            .kind,
        K::Shape
    );
    assert_eq!(
        tensor::linear(&x, &normal(4, &[4, 4], 1.0), &normal(5, &[4], 1.0))
            .unwrap_err()
            .kind,
        K::Shape
    );
}

/// `matmul_vjp_2d` (the two products of a 2-D matmul's VJP, side by side on two
/// threads) gives the bits of `matmul_t(g, b, B)` and `matmul_t(a, g, A)`: the GPT's
/// linear-layer shapes, a product small enough for the exact kernel, edge sizes; on
/// one thread and on two. Shapes that do not fit are `Shape` errors.
#[test]
fn matmul_vjp_equals_the_two_products() {
    let shapes = [
        (1024, 64, 64),
        (1024, 64, 256),
        (1024, 256, 64),
        (1024, 64, 65),
        (37, 5, 3),
        (300, 17, 129),
    ];
    for (i, &(m, k, n)) in shapes.iter().enumerate() {
        let seed = 500 + 3 * i as u64;
        let (a, b, g) = (
            normal(seed, &[m, k], 1.0),
            normal(seed + 1, &[k, n], 1.0),
            normal(seed + 2, &[m, n], 1.0),
        );
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let (ga, gb) = tensor::matmul_vjp_2d(&a, &b, &g).unwrap();
            let want_a = tensor::matmul_t(&g, &b, tensor::Trans::B).unwrap();
            let want_b = tensor::matmul_t(&a, &g, tensor::Trans::A).unwrap();
            tensor::set_threads(before);
            let at = format!("{m}×{k}×{n}, {threads} thread(s)");
            assert_eq!(ga.shape(), &[m, k], "{at}");
            assert_eq!(gb.shape(), &[k, n], "{at}");
            assert!(bits(&ga) == bits(&want_a), "∂a, {at}");
            assert!(bits(&gb) == bits(&want_b), "∂b, {at}");
        }
    }
    let (a, b) = (normal(1, &[300, 20], 1.0), normal(2, &[20, 30], 1.0));
    for g in [normal(3, &[300, 31], 1.0), normal(4, &[301, 30], 1.0)] {
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let r = tensor::matmul_vjp_2d(&a, &b, &g);
            tensor::set_threads(before);
            assert!(matches!(r, Err(e) if e.kind == K::Shape), "{:?}", g.shape());
        }
    }
}

/// `[B, T, D]` → `[B, H, T, dh]` as gradus wrote it: `forma` then `permute`.
fn split_heads(x: &Tensor, h: usize) -> Tensor {
    let &[b, t, d] = x.shape() else { panic!() };
    tensor::permute(
        &tensor::reshape(x, &[b, t, h, d / h]).unwrap(),
        &[0, 2, 1, 3],
    )
    .unwrap()
}

/// `[B, H, T, dh]` → `[B, T, D]`.
fn join_heads(x: &Tensor) -> Tensor {
    let &[b, h, t, dh] = x.shape() else { panic!() };
    tensor::reshape(&tensor::permute(x, &[0, 2, 1, 3]).unwrap(), &[b, t, h * dh]).unwrap()
}

/// The unfused chain's weights, output and VJP from `∂y` (`∂P = ∂y·vᵀ` per head through
/// the softmax VJP and the products' VJPs).
struct Chain {
    p: Tensor,
    y: Tensor,
    gq: Tensor,
    gk: Tensor,
    gv: Tensor,
}

fn chain(q: &Tensor, k: &Tensor, v: &Tensor, gy: &Tensor, h: usize) -> Chain {
    let s = ((q.shape()[2] / h) as f64).powf(-0.5);
    let (qp, kp, vp) = (split_heads(q, h), split_heads(k, h), split_heads(v, h));
    let scores = tensor::matmul_t(&qp, &kp, tensor::Trans::B).unwrap();
    let p = tensor::softmax_causal(&scores, s, -1e9).unwrap();
    let y = join_heads(&tensor::matmul(&p, &vp).unwrap());
    let gyp = split_heads(gy, h);
    let gp = tensor::matmul_t(&gyp, &vp, tensor::Trans::B).unwrap();
    let gs = tensor::softmax_causal_backward(&gp, &p, s).unwrap();
    Chain {
        gq: join_heads(&tensor::matmul(&gs, &kp).unwrap()),
        gk: join_heads(&tensor::matmul_t(&gs, &qp, tensor::Trans::A).unwrap()),
        gv: join_heads(&tensor::matmul_t(&p, &gyp, tensor::Trans::A).unwrap()),
        p,
        y,
    }
}

/// The attention ops and their VJPs give the bits of the unfused chain gradus used
/// (`forma`/`permute` per head, `matmul_nt`, `softmax_causalis(dh^−½, −1e9)`, `·`,
/// heads joined; backward: the products' and the softmax's VJPs) — heads of width 1,
/// 3, 16 and 24, one head, T = 1, T = 300 (products with k > 256 take the packed
/// kernel's k-blocks) — on one thread and on two.
#[test]
fn attention_equals_the_unfused_chain() {
    let cases: [(usize, usize, usize, usize); 8] = [
        (2, 8, 8, 8),
        (3, 5, 12, 4),
        (16, 64, 64, 4),
        (2, 1, 6, 2),
        (1, 300, 48, 2),
        (2, 9, 16, 1),
        (4, 37, 32, 2),
        (2, 100, 96, 3),
    ];
    for (ci, &(b, t, d, h)) in cases.iter().enumerate() {
        let seed = 100 + 10 * ci as u64;
        let q = normal(seed, &[b, t, d], 1.0);
        let k = normal(seed + 1, &[b, t, d], 1.0);
        let v = normal(seed + 2, &[b, t, d], 1.0);
        let gy = normal(seed + 3, &[b, t, d], 1.0);
        let gp = normal(seed + 4, &[b, h, t, t], 1.0);
        let s = ((d / h) as f64).powf(-0.5);
        let (qp, kp, vp) = (split_heads(&q, h), split_heads(&k, h), split_heads(&v, h));
        let Chain {
            p,
            y,
            gq: gq_y,
            gk: gk_y,
            gv: gv_chain,
        } = chain(&q, &k, &v, &gy, h);
        let gyp = split_heads(&gy, h);
        let gp_chain = tensor::matmul_t(&gyp, &vp, tensor::Trans::B).unwrap();
        let gs = tensor::softmax_causal_backward(&gp, &p, s).unwrap();
        let gq_chain = join_heads(&tensor::matmul(&gs, &kp).unwrap());
        let gk_chain = join_heads(&tensor::matmul_t(&gs, &qp, tensor::Trans::A).unwrap());
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let pf = tensor::attention_weights(&q, &k, h).unwrap();
            let yf = tensor::attention_apply(&pf, &v).unwrap();
            let (gpf, gvf) = tensor::attention_apply_backward(&gy, &pf, &v).unwrap();
            let (gqf, gkf) = tensor::attention_weights_backward(&gp, &pf, &q, &k, h).unwrap();
            let y_fused = tensor::attention(&q, &k, &v, h).unwrap();
            let (y_kept, p_kept) = tensor::attention_with_weights(&q, &k, &v, h).unwrap();
            let (gq_f, gk_f, gv_f) = tensor::attention_backward(&gy, &pf, &q, &k, &v, h).unwrap();
            tensor::set_threads(before);
            let at = format!("case {ci} ({b}, {t}, {d}, {h} heads), {threads} thread(s)");
            assert_eq!(pf.shape(), p.shape(), "{at}");
            assert_eq!(bits(&pf), bits(&p), "weights, {at}");
            assert_eq!(bits(&yf), bits(&y), "output, {at}");
            assert_eq!(bits(&gpf), bits(&gp_chain), "∂p, {at}");
            assert_eq!(bits(&gvf), bits(&gv_chain), "∂v, {at}");
            assert_eq!(bits(&gqf), bits(&gq_chain), "∂q, {at}");
            assert_eq!(bits(&gkf), bits(&gk_chain), "∂k, {at}");
            assert_eq!(bits(&y_fused), bits(&y), "attentio, {at}");
            assert_eq!(bits(&y_kept), bits(&y), "attentio_cum_ponderibus y, {at}");
            assert_eq!(bits(&p_kept), bits(&p), "attentio_cum_ponderibus p, {at}");
            assert_eq!(bits(&gq_f), bits(&gq_y), "retro_attentio ∂q, {at}");
            assert_eq!(bits(&gk_f), bits(&gk_y), "retro_attentio ∂k, {at}");
            assert_eq!(bits(&gv_f), bits(&gv_chain), "retro_attentio ∂v, {at}");
        }
    }
}

/// The fused ops (`attentio`, `attentio_cum_ponderibus`, `retro_attentio`) leave out the
/// terms of the masked weights, which are exact zeros: an infinite value at the last
/// position of v, where the unfused chain's 0·∞ makes every row NaN, does not reach the
/// other rows of y and ∂q — they are the bits of the same inputs with that value 0
/// (∂k's rows all take the last query's row of ∂S, which it does reach). When the
/// scores are so low (≈ −1e9 and below after scaling) that the masked weights are not
/// zero, every term is formed, and the bits are the chain's.
#[test]
fn fused_attention_leaves_out_masked_terms() {
    // The triangular products are the AVX-512 unpacked kernel's; elsewhere every term
    // is formed (docs/ops.md).
    #[cfg(target_arch = "x86_64")]
    let wide = std::arch::is_x86_feature_detected!("avx512f");
    #[cfg(not(target_arch = "x86_64"))]
    let wide = false;
    if !wide {
        return;
    }
    let (b, t, d, h) = (2, 64, 32, 2);
    let q = normal(7, &[b, t, d], 1.0);
    let k = normal(8, &[b, t, d], 1.0);
    let gy = normal(9, &[b, t, d], 1.0);
    let mut vd = normal(10, &[b, t, d], 1.0).data().to_vec();
    let last = (t - 1) * d; // batch 0, position T − 1, column 0
    vd[last] = 0.0;
    let v0 = Tensor::from_flat(vd.clone(), &[b, t, d]).unwrap();
    vd[last] = f64::INFINITY;
    let v_inf = Tensor::from_flat(vd, &[b, t, d]).unwrap();
    let rows = |x: &Tensor| bits(x)[..last].to_vec(); // batch 0, rows before T − 1
    for threads in [1, 2] {
        let before = tensor::set_threads(threads);
        let y0 = tensor::attention(&q, &k, &v0, h).unwrap();
        let y_inf = tensor::attention(&q, &k, &v_inf, h).unwrap();
        let (y_kept, p) = tensor::attention_with_weights(&q, &k, &v_inf, h).unwrap();
        let (gq0, _, _) = tensor::attention_backward(&gy, &p, &q, &k, &v0, h).unwrap();
        let (gq, _, _) = tensor::attention_backward(&gy, &p, &q, &k, &v_inf, h).unwrap();
        tensor::set_threads(before);
        assert_eq!(rows(&y_inf), rows(&y0), "{threads} thread(s)");
        assert_eq!(rows(&y_kept), rows(&y0), "{threads} thread(s)");
        assert_eq!(rows(&gq), rows(&gq0), "{threads} thread(s)");
        assert!(y_inf.data()[..last].iter().all(|x| x.is_finite()));
    }
    // The chain: NaN in row 0 (0·∞ in P·v).
    assert!(chain(&q, &k, &v_inf, &gy, h).y.data()[0].is_nan());
    // Scores near −4e10: every kept weight underflows to 0, the masked ones are not 0.
    let q = SplitMix64::new(11)
        .normal_tensor(&[b, t, d], 1e5, 1.0)
        .unwrap();
    let k = SplitMix64::new(12)
        .normal_tensor(&[b, t, d], -1e5, 1.0)
        .unwrap();
    let v = normal(13, &[b, t, d], 1.0);
    let c = chain(&q, &k, &v, &gy, h);
    assert!(c.p.data()[1] > 0.0, "a masked weight of row 0 is not zero");
    let y = tensor::attention(&q, &k, &v, h).unwrap();
    let (y_kept, p) = tensor::attention_with_weights(&q, &k, &v, h).unwrap();
    let (gq, gk, gv) = tensor::attention_backward(&gy, &p, &q, &k, &v, h).unwrap();
    for (fused, chained, what) in [
        (&y, &c.y, "y"),
        (&y_kept, &c.y, "kept y"),
        (&p, &c.p, "p"),
        (&gq, &c.gq, "∂q"),
        (&gk, &c.gk, "∂k"),
        (&gv, &c.gv, "∂v"),
    ] {
        assert_eq!(bits(fused), bits(chained), "{what}");
    }
}

/// Shapes that do not fit are `Shape` errors: a rank other than 3, heads that do not
/// divide the width, zero heads, an empty time axis, keys or values of another shape,
/// weights or cotangents that do not fit — for the two ops, the fused one and the VJPs.
#[test]
fn attention_shape_errors() {
    let x = normal(1, &[2, 3, 4], 1.0);
    let p = tensor::attention_weights(&x, &x, 2).unwrap();
    let err = |r: tensor::TResult<Tensor>| r.unwrap_err().kind;
    assert_eq!(
        err(tensor::attention_weights(&normal(2, &[3, 4], 1.0), &x, 2)),
        K::Shape
    );
    assert_eq!(err(tensor::attention_weights(&x, &x, 3)), K::Shape);
    assert_eq!(err(tensor::attention_weights(&x, &x, 0)), K::Shape);
    assert_eq!(
        err(tensor::attention_weights(
            &normal(3, &[2, 0, 4], 1.0),
            &normal(3, &[2, 0, 4], 1.0),
            2
        )),
        K::Shape
    );
    assert_eq!(
        err(tensor::attention_weights(
            &x,
            &normal(4, &[2, 3, 6], 1.0),
            2
        )),
        K::Shape
    );
    assert_eq!(
        err(tensor::attention_apply(&p, &normal(5, &[2, 4, 4], 1.0))),
        K::Shape
    );
    assert_eq!(err(tensor::attention_apply(&x, &x)), K::Shape);
    assert_eq!(
        err(tensor::attention_apply(&p, &normal(6, &[2, 3, 5], 1.0))),
        K::Shape
    );
    let pair = |r: tensor::TResult<(Tensor, Tensor)>| r.unwrap_err().kind;
    assert_eq!(pair(tensor::attention_apply_backward(&p, &p, &x)), K::Shape);
    assert_eq!(
        pair(tensor::attention_weights_backward(&x, &p, &x, &x, 2)),
        K::Shape
    );
    assert_eq!(
        pair(tensor::attention_weights_backward(&p, &p, &x, &x, 1)),
        K::Shape
    );
    // the fused op and its VJP: heads, keys, values, weights and cotangent
    let y = normal(7, &[2, 3, 6], 1.0);
    assert_eq!(err(tensor::attention(&x, &x, &x, 3)), K::Shape);
    assert_eq!(err(tensor::attention(&x, &y, &x, 2)), K::Shape);
    assert_eq!(err(tensor::attention(&x, &x, &y, 2)), K::Shape);
    let pair = |r: tensor::TResult<(Tensor, Tensor)>| r.unwrap_err().kind;
    assert_eq!(
        pair(tensor::attention_with_weights(&x, &x, &y, 2)),
        K::Shape
    );
    assert_eq!(
        pair(tensor::attention_with_weights(&x, &y, &x, 2)),
        K::Shape
    );
    assert_eq!(
        pair(tensor::attention_with_weights(&x, &x, &x, 3)),
        K::Shape
    );
    let triple = |r: tensor::TResult<(Tensor, Tensor, Tensor)>| r.unwrap_err().kind;
    assert_eq!(
        triple(tensor::attention_backward(&x, &p, &x, &x, &x, 1)),
        K::Shape
    );
    assert_eq!(
        triple(tensor::attention_backward(&y, &p, &x, &x, &x, 2)),
        K::Shape
    );
    assert_eq!(
        triple(tensor::attention_backward(&x, &p, &x, &x, &y, 2)),
        K::Shape
    );
    assert_eq!(
        triple(tensor::attention_backward(&x, &x, &x, &x, &x, 2)),
        K::Shape
    );
    assert_eq!(
        triple(tensor::attention_backward(&x, &p, &x, &x, &x, 0)),
        K::Shape
    );
}

/// `matmul_vjp_2d_post` (a linear layer's VJP with the op after it folded into `∂a`, a
/// companion's `retro_matmul_derivata` / `retro_matmul_adde`) gives the bits of
/// `matmul_t(g, b, B) ⊙ d` / `r + matmul_t(g, b, B)` and `matmul_t(a, g, A)`: the GPT's
/// shapes (the packed kernel's 24-wide tiles and the unpacked kernel's 16-wide ones), an
/// inner size over one k-block (300), a product small enough for the exact kernel, with
/// NaN, ±∞ and ±0 in d and r; on one thread and on two. A `d` of another shape is a
/// `Shape` error; an `r` that broadcasts is added as `add` would.
#[test]
fn matmul_vjp_with_post_equals_the_product_then_the_op() {
    use tensor::VjpPost;
    let shapes = [
        (1024, 256, 64),
        (1024, 64, 256),
        (1024, 64, 65),
        (70, 40, 300),
        (37, 5, 3),
    ];
    for (i, &(m, k, n)) in shapes.iter().enumerate() {
        let seed = 700 + 4 * i as u64;
        let (a, b, g) = (
            normal(seed, &[m, k], 1.0),
            normal(seed + 1, &[k, n], 1.0),
            normal(seed + 2, &[m, n], 1.0),
        );
        let mut vv = normal(seed + 3, &[m, k], 1.0).data().to_vec();
        for (j, v) in [f64::NAN, f64::INFINITY, -f64::INFINITY, -0.0, 0.0]
            .into_iter()
            .enumerate()
        {
            vv[(j * 101) % (m * k)] = v;
        }
        let v = Tensor::from_flat(vv, &[m, k]).unwrap();
        for threads in [1, 2] {
            let before = tensor::set_threads(threads);
            let product = tensor::matmul_t(&g, &b, tensor::Trans::B).unwrap();
            let want_b = tensor::matmul_t(&a, &g, tensor::Trans::A).unwrap();
            for (post, want_a) in [
                (VjpPost::Scale(&v), tensor::mul(&product, &v).unwrap()),
                (VjpPost::AddTo(&v), tensor::add(&v, &product).unwrap()),
            ] {
                let (ga, gb) = tensor::matmul_vjp_2d_post(&a, &b, &g, Some(post)).unwrap();
                let at = format!("{post:?}: {m}×{k}×{n}, {threads} thread(s)");
                assert_eq!(ga.shape(), &[m, k], "{at}");
                assert!(bits(&ga) == bits(&want_a), "∂a, {at}");
                assert!(bits(&gb) == bits(&want_b), "∂b, {at}");
            }
            tensor::set_threads(before);
        }
    }
    let (a, b, g) = (
        normal(1, &[300, 20], 1.0),
        normal(2, &[20, 30], 1.0),
        normal(3, &[300, 30], 1.0),
    );
    let row = normal(5, &[20], 1.0);
    for threads in [1, 2] {
        let before = tensor::set_threads(threads);
        let other = normal(4, &[300, 21], 1.0);
        let r = tensor::matmul_vjp_2d_post(&a, &b, &g, Some(tensor::VjpPost::Scale(&other)));
        assert!(matches!(r, Err(e) if e.kind == K::Shape));
        let (ga, _) =
            tensor::matmul_vjp_2d_post(&a, &b, &g, Some(tensor::VjpPost::AddTo(&row))).unwrap();
        let product = tensor::matmul_t(&g, &b, tensor::Trans::B).unwrap();
        assert!(bits(&ga) == bits(&tensor::add(&row, &product).unwrap()));
        tensor::set_threads(before);
    }
}
