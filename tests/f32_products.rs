//! Native f32 products (issue 21; docs/precision.md): `matmul` (and `·`, `matmul_nt`,
//! `matmul_tn`, `matmul_exact`, `matmul_fast`), `lineare` and the matmul VJPs
//! (`retro_matmul` and its fused epilogues) on f32 tensors give f32 tensors computed in
//! f32 (the sgemm), checked against an f64 product formed independently here (plain
//! loops), within the sgemm's error bound (gemm/sgemm/mod.rs):
//!
//! `|c − a·b| ≤ γ·Σ_p |a[i,p]|·|b[p,j]|`, `γ = k′u / (1 − k′u)`, `k′ = k + ⌈k/256⌉`,
//! `u = 2⁻²⁴`,
//!
//! plus `2u` of the result for each further f32 rounding (the bias add, the epilogue's
//! `⊙ d` / `+ r`, the final rounding of a sum over broadcast axes) and `k·2⁻⁵²` of
//! `Σ|a||b|` for the f64 reference's own rounding. Each result is also checked to be
//! the same bits at 1 and 2 threads, to differ from the f64 product rounded once (so
//! the test sees f32 accumulation, not a widened kernel), and shape errors to stay the
//! f64 path's errors. The last test runs every wired op through the evaluator
//! (`faber run --precision f32`) and finds the bits of these kernels. The fused
//! attention and the causal softmax: tests/f32_attention.rs.

mod common;

use common::f32::{both_threads, f32s, rand32};
use common::Faber;
use faber::tensor::{self as k, DType, SplitMix64, Tensor, Trans, VjpPost};

/// f32's unit roundoff.
const U: f64 = 1.0 / 16_777_216.0;

/// The sgemm's γ for inner dimension `k` (module docs).
fn gamma(k: usize) -> f64 {
    let n = (k + k.div_ceil(256)) as f64 * U;
    n / (1.0 - n)
}

fn bits(t: &Tensor) -> Vec<u32> {
    f32s(t).iter().map(|x| x.to_bits()).collect()
}

/// An f64 matrix product formed here: `(Σ x·y, Σ|x|·|y|)` per element for `m×n`
/// results, `x(i, p)` and `y(p, j)` read through the closures.
fn reference(
    m: usize,
    n: usize,
    kk: usize,
    x: impl Fn(usize, usize) -> f64,
    y: impl Fn(usize, usize) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let (mut v, mut a) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            for p in 0..kk {
                v[i * n + j] += x(i, p) * y(p, j);
                a[i * n + j] += (x(i, p) * y(p, j)).abs();
            }
        }
    }
    (v, a)
}

/// Asserts `|got − want| ≤ bound` element by element; returns how many elements differ
/// from `want` rounded once to f32.
fn within(got: &Tensor, want: &[f64], bound: &[f64], what: &str) -> usize {
    let g = f32s(got);
    assert_eq!(g.len(), want.len(), "{what}: element count");
    let mut off = 0;
    for (i, ((&x, &w), &b)) in g.iter().zip(want).zip(bound).enumerate() {
        let err = (x as f64 - w).abs();
        assert!(
            err <= b,
            "{what}: element {i}: {x} against {w} (error {err:e} > bound {b:e})"
        );
        off += usize::from(x != w as f32);
    }
    off
}

/// The bound of a product with inner dimension `kk` (module docs).
fn product_bound(abs: &[f64], kk: usize) -> Vec<f64> {
    let slack = kk as f64 * f64::EPSILON;
    abs.iter().map(|a| (gamma(kk) + slack) * a).collect()
}

/// Element (i, j) of the matrix `t` (rank 2, or the `b`-th matrix of a batch) read
/// transposed or not.
fn at(t: &Tensor, batch: usize, tr: bool) -> impl Fn(usize, usize) -> f64 + '_ {
    let s = t.shape();
    let (r, c) = (s[s.len() - 2], s[s.len() - 1]);
    let d = f32s(t);
    move |i, j| {
        let (i, j) = if tr { (j, i) } else { (i, j) };
        d[batch * r * c + i * c + j] as f64
    }
}

#[test]
fn matmul_of_f32_matrices_is_the_sgemm_within_its_bound() {
    // (m, k, n): small (one k-block, the unpacked kernel), wide and deep (packed,
    // several k-blocks), and one above the threading threshold (2²² multiply-adds).
    let shapes = [(3, 5, 4), (17, 64, 33), (40, 300, 150), (256, 300, 200)];
    let mut differs = 0;
    for (s, &(m, kk, n)) in shapes.iter().enumerate() {
        for (t, tr) in [Trans::NONE, Trans::A, Trans::B, Trans { a: true, b: true }]
            .into_iter()
            .enumerate()
        {
            let seed = 10 * s as u64 + t as u64;
            let sa = if tr.a { [kk, m] } else { [m, kk] };
            let sb = if tr.b { [n, kk] } else { [kk, n] };
            let (a, b) = (rand32(seed, &sa, 1.0), rand32(seed + 100, &sb, 1.0));
            let what = format!("[{m}×{kk}]·[{kk}×{n}] {tr:?}");
            let c = both_threads(|| k::matmul_t(&a, &b, tr).unwrap(), bits, &what);
            assert_eq!(c.shape(), &[m, n]);
            let (want, abs) = reference(m, n, kk, at(&a, 0, tr.a), at(&b, 0, tr.b));
            differs += within(&c, &want, &product_bound(&abs, kk), &what);
            if tr == Trans::NONE {
                // `matmul` and `matmul_fast` are the same sgemm product.
                assert_eq!(bits(&k::matmul(&a, &b).unwrap()), bits(&c), "{what}");
                assert_eq!(bits(&k::matmul_fast(&a, &b).unwrap()), bits(&c), "{what}");
                // The exact in-order kernel in f32 (no FMA, every step rounded to f32):
                // recursive summation, error ≤ γ_k·Σ|a||b| as well.
                let e = k::matmul_exact(&a, &b).unwrap();
                within(
                    &e,
                    &want,
                    &product_bound(&abs, kk),
                    &format!("exact {what}"),
                );
            }
        }
    }
    assert!(differs > 100, "f32 accumulation shows ({differs} elements)");
}

#[test]
fn batched_and_vector_products_in_f32() {
    // [2, 3, m, k] · [3, k, n]: the batch axes broadcast.
    let (m, kk, n) = (9, 40, 7);
    let a = rand32(1, &[2, 3, m, kk], 1.0);
    let b = rand32(2, &[3, kk, n], 1.0);
    let c = both_threads(|| k::matmul(&a, &b).unwrap(), bits, "batched");
    assert_eq!(c.shape(), &[2, 3, m, n]);
    let mut want = Vec::new();
    let mut abs = Vec::new();
    for i in 0..6 {
        let (w, s) = reference(m, n, kk, at(&a, i, false), at(&b, i % 3, false));
        want.extend(w);
        abs.extend(s);
    }
    within(&c, &want, &product_bound(&abs, kk), "batched");
    // A batch times one matrix (the tall product), read transposed.
    let bt = rand32(3, &[n, kk], 1.0);
    let c = k::matmul_t(&a, &bt, Trans::B).unwrap();
    let (mut want, mut abs) = (Vec::new(), Vec::new());
    for i in 0..6 {
        let (w, s) = reference(m, n, kk, at(&a, i, false), at(&bt, 0, true));
        want.extend(w);
        abs.extend(s);
    }
    within(&c, &want, &product_bound(&abs, kk), "batch · bᵀ");

    // Dot, mat-vec, vec-mat: the sgemm's products of the matrix forms (same bits).
    let kk = 700;
    let x = rand32(4, &[kk], 1.0);
    let y = rand32(5, &[kk], 1.0);
    let mat = rand32(6, &[5, kk], 1.0);
    let mat_t = rand32(7, &[kk, 5], 1.0);
    let as_row = |t: &Tensor| k::reshape(t, &[1, t.numel()]).unwrap();
    let as_col = |t: &Tensor| k::reshape(t, &[t.numel(), 1]).unwrap();
    let dot = k::matmul(&x, &y).unwrap();
    assert_eq!(dot.shape(), &[] as &[usize]);
    assert_eq!(
        bits(&dot),
        bits(&k::matmul(&as_row(&x), &as_col(&y)).unwrap())
    );
    let (w, s) = reference(
        1,
        1,
        kk,
        |_, p| f32s(&x)[p] as f64,
        |p, _| f32s(&y)[p] as f64,
    );
    within(&dot, &w, &product_bound(&s, kk), "dot");
    let mv = k::matmul(&mat, &y).unwrap();
    assert_eq!(mv.shape(), &[5]);
    assert_eq!(bits(&mv), bits(&k::matmul(&mat, &as_col(&y)).unwrap()));
    let (w, s) = reference(5, 1, kk, at(&mat, 0, false), |p, _| f32s(&y)[p] as f64);
    within(&mv, &w, &product_bound(&s, kk), "mat-vec");
    let vm = k::matmul(&x, &mat_t).unwrap();
    assert_eq!(vm.shape(), &[5]);
    let (w, s) = reference(1, 5, kk, |_, p| f32s(&x)[p] as f64, at(&mat_t, 0, false));
    within(&vm, &w, &product_bound(&s, kk), "vec-mat");
    // A matrix read transposed beside a vector (`matmul_tn(a, v)` is aᵀ·v).
    let tv = k::matmul_t(&mat_t, &y, Trans::A).unwrap();
    let (w, s) = reference(5, 1, kk, at(&mat_t, 0, true), |p, _| f32s(&y)[p] as f64);
    within(&tv, &w, &product_bound(&s, kk), "aᵀ·v");
}

#[test]
fn a_matrix_read_transposed_beside_a_vector_is_transposed_in_f64_too() {
    // `matmul_t` used to ignore the transpose when the other operand was a vector.
    let a = SplitMix64::new(1).normal_tensor(&[4, 3], 0.0, 1.0).unwrap();
    let v = SplitMix64::new(2).normal_tensor(&[4], 0.0, 1.0).unwrap();
    let w = SplitMix64::new(3).normal_tensor(&[3], 0.0, 1.0).unwrap();
    let at = k::transpose(&a).unwrap();
    assert_eq!(
        k::matmul_t(&a, &v, Trans::A).unwrap(),
        k::matmul(&at, &v).unwrap()
    );
    assert_eq!(
        k::matmul_t(&w, &a, Trans::B).unwrap(),
        k::matmul(&w, &at).unwrap()
    );
    let err = k::matmul_t(&a, &w, Trans::A).unwrap_err();
    assert!(
        err.message
            .contains("axis 0 of the left, axis 0 of the right"),
        "{}",
        err.message
    );
}

#[test]
fn lineare_in_f32_is_the_product_plus_the_bias_rounded_once() {
    for (rows, kk, n, seed) in [(6, 10, 5, 1u64), (8 * 64, 64, 256, 2)] {
        let x = rand32(seed, &[rows / 2, 2, kk], 1.0);
        let w = rand32(seed + 1, &[kk, n], 0.5);
        let b = rand32(seed + 2, &[n], 1.0);
        let what = format!("lineare {rows}×{kk}×{n}");
        let y = both_threads(|| k::linear(&x, &w, &b).unwrap(), bits, &what);
        assert_eq!(y.shape(), &[rows / 2, 2, n]);
        // the bits of the f32 product followed by the f32 bias add
        let p = k::matmul(&x, &w).unwrap();
        let sum: Vec<u32> = f32s(&p)
            .chunks(n)
            .flat_map(|r| r.iter().zip(f32s(&b)).map(|(v, c)| (v + c).to_bits()))
            .collect();
        assert_eq!(bits(&y), sum, "{what}");
        let xm = k::reshape(&x, &[rows, kk]).unwrap();
        let (mut want, abs) = reference(rows, n, kk, at(&xm, 0, false), at(&w, 0, false));
        let bd = f32s(&b);
        let mut bound = Vec::new();
        for (i, v) in want.iter_mut().enumerate() {
            let c = bd[i % n] as f64;
            *v += c;
            bound.push(
                (gamma(kk) + 2.0 * U) * (abs[i] + c.abs()) + kk as f64 * f64::EPSILON * abs[i],
            );
        }
        within(&y, &want, &bound, &what);
    }
}

/// `(∂a, ∂b)` references of `a · b` for 2-D `a` (`m×k`), `b` (`k×n`) and `g` (`m×n`):
/// `(g·bᵀ, aᵀ·g)` with their bounds.
fn vjp_reference(a: &Tensor, b: &Tensor, g: &Tensor) -> [(Vec<f64>, Vec<f64>); 2] {
    let (m, kk, n) = (a.shape()[0], a.shape()[1], b.shape()[1]);
    let (ga, ga_abs) = reference(m, kk, n, at(g, 0, false), at(b, 0, true));
    let (gb, gb_abs) = reference(kk, n, m, at(a, 0, true), at(g, 0, false));
    [
        (ga, product_bound(&ga_abs, n)),
        (gb, product_bound(&gb_abs, m)),
    ]
}

fn pair_bits(p: &(Tensor, Tensor)) -> Vec<u32> {
    let mut v = bits(&p.0);
    v.extend(bits(&p.1));
    v
}

#[test]
fn matmul_vjps_in_f32_within_the_bound_with_their_epilogues() {
    // 2-D (the fused GEMM path from 2¹⁶ multiply-adds, with its epilogue), a batch of
    // activations times one matrix, and small ones (two separate products).
    for (m, kk, n, seed) in [(96, 80, 72, 1u64), (5, 6, 7, 2), (300, 64, 256, 3)] {
        let a = rand32(seed, &[m, kk], 1.0);
        let b = rand32(seed + 1, &[kk, n], 1.0);
        let g = rand32(seed + 2, &[m, n], 1.0);
        let d = rand32(seed + 3, &[m, kk], 1.0);
        let r = rand32(seed + 4, &[m, kk], 1.0);
        let [(ga, ga_bound), (gb, gb_bound)] = vjp_reference(&a, &b, &g);
        let what = format!("retro_matmul {m}×{kk}×{n}");
        let plain = both_threads(
            || k::matmul_backward(&a, &b, &g, None).unwrap(),
            pair_bits,
            &what,
        );
        let off = within(&plain.0, &ga, &ga_bound, &what) + within(&plain.1, &gb, &gb_bound, &what);
        if m * kk * n > 1000 {
            assert!(off > 0, "{what}: f32 accumulation shows");
        }
        // The same pair as one call of matmul_vjp_2d.
        assert_eq!(
            pair_bits(&k::matmul_vjp_2d(&a, &b, &g).unwrap()),
            pair_bits(&plain)
        );

        // retro_matmul_derivata: ∂a ⊙ d, rounded once more.
        let scaled = both_threads(
            || k::matmul_backward(&a, &b, &g, Some(VjpPost::Scale(&d))).unwrap(),
            pair_bits,
            &what,
        );
        let dd = f32s(&d);
        let want: Vec<f64> = ga.iter().zip(dd).map(|(x, &y)| x * y as f64).collect();
        let bound: Vec<f64> = ga_bound
            .iter()
            .zip(dd)
            .zip(&ga)
            .map(|((e, &y), x)| (e + 2.0 * U * (x.abs() + e)) * (y as f64).abs())
            .collect();
        within(&scaled.0, &want, &bound, &format!("{what} ⊙ d"));
        assert_eq!(bits(&scaled.1), bits(&plain.1));
        // the bits of the separate f32 multiply after the product
        let sep: Vec<u32> = f32s(&plain.0)
            .iter()
            .zip(dd)
            .map(|(x, y)| (x * y).to_bits())
            .collect();
        assert_eq!(bits(&scaled.0), sep, "{what}: fused ⊙ d");

        // retro_matmul_adde: r + ∂a, rounded once more.
        let added = k::matmul_backward(&a, &b, &g, Some(VjpPost::AddTo(&r))).unwrap();
        let rd = f32s(&r);
        let want: Vec<f64> = ga.iter().zip(rd).map(|(x, &y)| x + y as f64).collect();
        let bound: Vec<f64> = ga_bound
            .iter()
            .zip(&want)
            .map(|(e, w)| e + 2.0 * U * (w.abs() + e))
            .collect();
        within(&added.0, &want, &bound, &format!("{what} + r"));
        let sep: Vec<u32> = f32s(&plain.0)
            .iter()
            .zip(rd)
            .map(|(x, y)| (y + x).to_bits())
            .collect();
        assert_eq!(bits(&added.0), sep, "{what}: fused + r");
    }
}

#[test]
fn matmul_vjps_of_batches_and_vectors_in_f32() {
    // [B, T, K] · [K, N]: ∂b over every row at once.
    let (bt, kk, n) = (24, 16, 20);
    let a = rand32(1, &[2, bt / 2, kk], 1.0);
    let b = rand32(2, &[kk, n], 1.0);
    let g = rand32(3, &[2, bt / 2, n], 1.0);
    let (ga, gb) = k::matmul_backward(&a, &b, &g, None).unwrap();
    assert_eq!((ga.shape(), gb.shape()), (a.shape(), b.shape()));
    let af = k::reshape(&a, &[bt, kk]).unwrap();
    let gf = k::reshape(&g, &[bt, n]).unwrap();
    let [(wa, ba), (wb, bb)] = vjp_reference(&af, &b, &gf);
    within(&ga, &wa, &ba, "batched ∂a");
    within(&gb, &wb, &bb, "batched ∂b");

    // Batches broadcast both ways: ∂b summed over the broadcast batch axis, in f64,
    // rounded once (u of the sum besides the products' bounds).
    let a = rand32(4, &[3, 5, 6], 1.0);
    let b = rand32(5, &[1, 6, 4], 1.0);
    let g = rand32(6, &[3, 5, 4], 1.0);
    let (ga, gb) = both_threads(
        || k::matmul_backward(&a, &b, &g, None).unwrap(),
        pair_bits,
        "broadcast batch",
    );
    assert_eq!((ga.shape(), gb.shape()), (a.shape(), b.shape()));
    let (mut wa, mut wa_abs, mut wb, mut wb_abs) = (vec![], vec![], vec![0.0; 24], vec![0.0; 24]);
    for i in 0..3 {
        let (v, s) = reference(5, 6, 4, at(&g, i, false), at(&b, 0, true));
        wa.extend(v);
        wa_abs.extend(s);
        let (v, s) = reference(6, 4, 5, at(&a, i, true), at(&g, i, false));
        for j in 0..24 {
            wb[j] += v[j];
            wb_abs[j] += s[j];
        }
    }
    within(&ga, &wa, &product_bound(&wa_abs, 4), "broadcast ∂a");
    let bound: Vec<f64> = product_bound(&wb_abs, 5)
        .iter()
        .zip(&wb)
        .map(|(e, w)| e + 2.0 * U * (w.abs() + e))
        .collect();
    within(&gb, &wb, &bound, "broadcast ∂b (summed)");

    // Vectors: dot (∂a = b·g, one rounding), mat-vec (∂a the outer product g bᵀ, ∂b =
    // aᵀ g), vec-mat.
    let x = rand32(7, &[8], 1.0);
    let y = rand32(8, &[8], 1.0);
    let s = rand32(9, &[], 1.0);
    let (gx, gy) = k::matmul_backward(&x, &y, &s, None).unwrap();
    let sv = f32s(&s)[0];
    let want: Vec<u32> = f32s(&y).iter().map(|v| (v * sv).to_bits()).collect();
    assert_eq!(bits(&gx), want, "dot ∂a");
    let want: Vec<u32> = f32s(&x).iter().map(|v| (v * sv).to_bits()).collect();
    assert_eq!(bits(&gy), want, "dot ∂b");
    let mat = rand32(10, &[5, 8], 1.0);
    let gv = rand32(11, &[5], 1.0);
    let (gm, gvec) = k::matmul_backward(&mat, &y, &gv, None).unwrap();
    assert_eq!((gm.shape(), gvec.shape()), (&[5, 8][..], &[8][..]));
    let outer: Vec<u32> = f32s(&gv)
        .iter()
        .flat_map(|a| f32s(&y).iter().map(move |b| (a * b).to_bits()))
        .collect();
    assert_eq!(bits(&gm), outer, "mat-vec ∂a");
    let (w, s) = reference(8, 1, 5, at(&mat, 0, true), |p, _| f32s(&gv)[p] as f64);
    within(&gvec, &w, &product_bound(&s, 5), "mat-vec ∂b");
    let gw = rand32(12, &[8], 1.0);
    let mt = rand32(13, &[5, 8], 1.0);
    let xv = rand32(14, &[5], 1.0);
    let (gxv, gmt) = k::matmul_backward(&xv, &mt, &gw, None).unwrap();
    let (w, s) = reference(5, 1, 8, at(&mt, 0, false), |p, _| f32s(&gw)[p] as f64);
    within(&gxv, &w, &product_bound(&s, 8), "vec-mat ∂a");
    assert_eq!(gmt.shape(), &[5, 8]);
    // with an epilogue on a vector ∂a: applied after (the separate f32 op's bits)
    let r = rand32(15, &[5], 1.0);
    let (added, _) = k::matmul_backward(&xv, &mt, &gw, Some(VjpPost::AddTo(&r))).unwrap();
    let sep: Vec<u32> = f32s(&gxv)
        .iter()
        .zip(f32s(&r))
        .map(|(x, y)| (y + x).to_bits())
        .collect();
    assert_eq!(bits(&added), sep);
}

/// `f` on f32 operands and on the same operands widened to f64 give the same error.
fn same_error<R: std::fmt::Debug>(
    f: impl Fn(&[Tensor]) -> Result<R, k::TensorError>,
    ts: &[Tensor],
) {
    let wide: Vec<Tensor> = ts.iter().map(|t| t.to_dtype(DType::F64).unwrap()).collect();
    let e32 = f(ts).expect_err("an error in f32");
    let e64 = f(&wide).expect_err("an error in f64");
    assert_eq!(e32.message, e64.message);
    assert_eq!(e32.kind, e64.kind);
}

#[test]
fn bad_shapes_stay_errors_with_the_f64_messages() {
    let t = |s: &[usize]| rand32(1, s, 1.0);
    same_error(|x| k::matmul(&x[0], &x[1]), &[t(&[2, 3]), t(&[2, 3])]);
    same_error(|x| k::matmul(&x[0], &x[1]), &[t(&[3]), t(&[4])]);
    same_error(|x| k::matmul(&x[0], &x[1]), &[t(&[2, 3]), t(&[4])]);
    same_error(|x| k::matmul(&x[0], &x[1]), &[t(&[4]), t(&[3, 2])]);
    same_error(|x| k::matmul(&x[0], &x[1]), &[t(&[2, 2, 3]), t(&[3, 3, 4])]);
    same_error(
        |x| k::matmul(&x[0], &x[1]),
        &[t(&[1, 1, 1, 1, 1]), t(&[1, 1])],
    );
    same_error(
        |x| k::matmul_t(&x[0], &x[1], Trans::B),
        &[t(&[2, 3]), t(&[3, 2])],
    );
    same_error(
        |x| k::matmul_t(&x[0], &x[1], Trans::A),
        &[t(&[3]), t(&[3, 2])],
    );
    same_error(
        |x| k::linear(&x[0], &x[1], &x[2]),
        &[t(&[2, 3]), t(&[3, 4]), t(&[5])],
    );
    same_error(
        |x| k::linear(&x[0], &x[1], &x[2]),
        &[t(&[2, 3]), t(&[4, 4]), t(&[4])],
    );
    let (a, b, g) = (t(&[4, 3]), t(&[3, 5]), t(&[4, 5]));
    same_error(
        |x| k::matmul_backward(&x[0], &x[1], &x[2], Some(VjpPost::Scale(&x[3]))),
        &[a.clone(), b.clone(), g.clone(), t(&[3, 4])],
    );
    same_error(
        |x| k::matmul_backward(&x[0], &x[1], &x[2], Some(VjpPost::AddTo(&x[3]))),
        &[a.clone(), b.clone(), g, t(&[2, 3])],
    );
    same_error(
        |x| k::matmul_backward(&x[0], &x[1], &x[2], None),
        &[a.clone(), b.clone(), t(&[5, 4])],
    );
    same_error(
        |x| k::matmul_vjp_2d(&x[0], &x[1], &x[2]),
        &[a, b, t(&[4, 6])],
    );
}

#[test]
fn mixed_f32_and_f64_operands_compute_in_f64() {
    let a = rand32(1, &[20, 30], 1.0);
    let b = rand32(2, &[30, 10], 1.0).to_dtype(DType::F64).unwrap();
    let c = k::matmul(&a, &b).unwrap();
    assert_eq!(c.dtype(), DType::F64);
    assert_eq!(c, k::matmul(&a.to_dtype(DType::F64).unwrap(), &b).unwrap());
    let bias = rand32(3, &[10], 1.0);
    let y = k::linear(&a, &b, &bias).unwrap();
    assert_eq!(y.dtype(), DType::F64);
}

// ---- the evaluator's ops -------------------------------------------------------------

/// `semen.strue([…], [shape])` for an f32 tensor (each element written as its shortest
/// decimal, which reads back as the same f32: checked).
fn literal(t: &Tensor) -> String {
    let vals: Vec<String> = f32s(t)
        .iter()
        .map(|&x| {
            let s = format!("{x:?}");
            assert_eq!(s.parse::<f64>().unwrap() as f32, x, "{s} reads back");
            s
        })
        .collect();
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("semen.strue([{}], [{}])", vals.join(", "), dims.join(", "))
}

/// The numbers of one line of `nota` output (an f32 tensor shows each element as the
/// shortest decimal that reads back as that f32).
fn numbers(line: &str) -> Vec<f32> {
    line.split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap_or_else(|_| panic!("a number: {s:?}")))
        .collect()
}

#[test]
fn every_wired_op_runs_its_f32_kernel_in_the_evaluator() {
    let (b, t, d, h) = (2, 12, 16, 2);
    let q = rand32(1, &[b, t, d], 1.0);
    let kk = rand32(2, &[b, t, d], 1.0);
    let v = rand32(3, &[b, t, d], 1.0);
    let gy = rand32(4, &[b, t, d], 1.0);
    let x = rand32(5, &[6, 40], 1.0);
    let w = rand32(6, &[40, 7], 1.0);
    let bias = rand32(7, &[7], 1.0);
    let gx = rand32(8, &[6, 7], 1.0);
    let dx = rand32(9, &[6, 40], 1.0);
    let scores = rand32(10, &[b, h, t, t], 3.0);
    let gp = rand32(11, &[b, h, t, t], 1.0);
    let p = k::attention_weights(&q, &kk, h).unwrap();
    let lets = [
        ("q", &q, "tf32[2, 12, 16]"),
        ("k", &kk, "tf32[2, 12, 16]"),
        ("v", &v, "tf32[2, 12, 16]"),
        ("gy", &gy, "tf32[2, 12, 16]"),
        ("x", &x, "tf32[6, 40]"),
        ("w", &w, "tf32[40, 7]"),
        ("b", &bias, "tf32[7]"),
        ("gx", &gx, "tf32[6, 7]"),
        ("dx", &dx, "tf32[6, 40]"),
        ("s", &scores, "tf32[2, 2, 12, 12]"),
        ("gp", &gp, "tf32[2, 2, 12, 12]"),
    ];
    let mut src = String::from("incipit {\n    fixum tf32[] semen ← vacua\n");
    for (name, t, ty) in lets {
        src += &format!("    fixum {ty} {name} ← {}\n", literal(t));
    }
    src += "    fixum tf32 p ← q.attentio_pondera(k, 2)\n";
    src += "    fixum iuncta<tf32, tf32> par ← q.attentio_cum_ponderibus(k, v, 2)\n";
    // (op, expression, the native kernels' result, the widened path's result)
    let wide = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
    let round = |t: Tensor| t.to_dtype(DType::F32).unwrap();
    let round2 = |(a, b): (Tensor, Tensor)| vec![round(a), round(b)];
    let (qw, kw, vw, gyw, xw, ww) = (wide(&q), wide(&kk), wide(&v), wide(&gy), wide(&x), wide(&w));
    let (bw, gxw, dxw, sw, gpw, pw) = (
        wide(&bias),
        wide(&gx),
        wide(&dx),
        wide(&scores),
        wide(&gp),
        wide(&p),
    );
    let pair = |(a, b): (Tensor, Tensor)| vec![a, b];
    let cases: Vec<(&str, &str, Vec<Tensor>, Vec<Tensor>)> = vec![
        (
            "MatMul",
            "x · w",
            vec![k::matmul(&x, &w).unwrap()],
            vec![round(k::matmul(&xw, &ww).unwrap())],
        ),
        (
            "MatMulNT",
            "x.matmul_nt(dx)",
            vec![k::matmul_t(&x, &dx, Trans::B).unwrap()],
            vec![round(k::matmul_t(&xw, &dxw, Trans::B).unwrap())],
        ),
        (
            "MatMulTN",
            "x.matmul_tn(dx)",
            vec![k::matmul_t(&x, &dx, Trans::A).unwrap()],
            vec![round(k::matmul_t(&xw, &dxw, Trans::A).unwrap())],
        ),
        (
            "Lineare",
            "x.lineare(w, b)",
            vec![k::linear(&x, &w, &bias).unwrap()],
            vec![round(k::linear(&xw, &ww, &bw).unwrap())],
        ),
        (
            "RetroMatMul",
            "x.retro_matmul(w, gx)",
            pair(k::matmul_backward(&x, &w, &gx, None).unwrap()),
            round2(k::matmul_backward(&xw, &ww, &gxw, None).unwrap()),
        ),
        (
            "RetroMatMulDerivata",
            "x.retro_matmul_derivata(w, gx, dx)",
            pair(k::matmul_backward(&x, &w, &gx, Some(VjpPost::Scale(&dx))).unwrap()),
            round2(k::matmul_backward(&xw, &ww, &gxw, Some(VjpPost::Scale(&dxw))).unwrap()),
        ),
        (
            "RetroMatMulAdde",
            "x.retro_matmul_adde(w, gx, dx)",
            pair(k::matmul_backward(&x, &w, &gx, Some(VjpPost::AddTo(&dx))).unwrap()),
            round2(k::matmul_backward(&xw, &ww, &gxw, Some(VjpPost::AddTo(&dxw))).unwrap()),
        ),
        (
            "AttentioPondera",
            "p",
            vec![p.clone()],
            vec![round(k::attention_weights(&qw, &kw, h).unwrap())],
        ),
        (
            "AttentioApplica",
            "p.attentio_applica(v)",
            vec![k::attention_apply(&p, &v).unwrap()],
            vec![round(k::attention_apply(&pw, &vw).unwrap())],
        ),
        (
            "Attentio",
            "q.attentio(k, v, 2)",
            vec![k::attention(&q, &kk, &v, h).unwrap()],
            vec![round(k::attention(&qw, &kw, &vw, h).unwrap())],
        ),
        (
            "AttentioCumPonderibus",
            "par",
            pair(k::attention_with_weights(&q, &kk, &v, h).unwrap()),
            round2(k::attention_with_weights(&qw, &kw, &vw, h).unwrap()),
        ),
        (
            "AttentioExPari",
            "q.attentio_ex_pari(k, v, 2, par)",
            vec![k::attention(&q, &kk, &v, h).unwrap()],
            vec![],
        ),
        (
            "RetroAttentioPondera",
            "gp.retro_attentio_pondera(p, q, k, 2)",
            pair(k::attention_weights_backward(&gp, &p, &q, &kk, h).unwrap()),
            round2(k::attention_weights_backward(&gpw, &pw, &qw, &kw, h).unwrap()),
        ),
        (
            "RetroAttentioApplica",
            "gy.retro_attentio_applica(p, v)",
            pair(k::attention_apply_backward(&gy, &p, &v).unwrap()),
            round2(k::attention_apply_backward(&gyw, &pw, &vw).unwrap()),
        ),
        (
            "RetroAttentio",
            "gy.retro_attentio(p, q, k, v, 2)",
            {
                let (a, b2, c) = k::attention_backward(&gy, &p, &q, &kk, &v, h).unwrap();
                vec![a, b2, c]
            },
            {
                let (a, b2, c) = k::attention_backward(&gyw, &pw, &qw, &kw, &vw, h).unwrap();
                vec![round(a), round(b2), round(c)]
            },
        ),
        (
            "SoftmaxCausalis",
            "s.softmax_causalis(0.3, -1000000000.0)",
            vec![k::softmax_causal(&scores, 0.3, -1e9).unwrap()],
            vec![round(k::softmax_causal(&sw, 0.3, -1e9).unwrap())],
        ),
        (
            "RetroSoftmaxCausalis",
            "gp.retro_softmax_causalis(p, 0.3)",
            vec![k::softmax_causal_backward(&gp, &p, 0.3).unwrap()],
            vec![round(k::softmax_causal_backward(&gpw, &pw, 0.3).unwrap())],
        ),
    ];
    for (_, expr, _, _) in &cases {
        src += &format!("    nota {expr}\n");
    }
    src += "}\n";
    let dir = std::env::temp_dir().join(format!("faber-f32-products-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ops.fab");
    std::fs::write(&file, &src).unwrap();
    for threads in ["1", "2"] {
        let out = Faber::new()
            .args(["--threads", threads, "run", "--precision", "f32"])
            .arg(&file)
            .output();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), cases.len(), "{stdout}");
        for ((op, _, native, widened), line) in cases.iter().zip(&lines) {
            let got = numbers(line);
            let want: Vec<f32> = native.iter().flat_map(|t| f32s(t).to_vec()).collect();
            let gb: Vec<u32> = got.iter().map(|x| x.to_bits()).collect();
            let wb: Vec<u32> = want.iter().map(|x| x.to_bits()).collect();
            assert_eq!(
                gb, wb,
                "{op}: the evaluator's result is the f32 kernel's ({threads} threads)"
            );
            if !widened.is_empty() {
                let ww: Vec<u32> = widened.iter().flat_map(bits).collect();
                assert_ne!(gb, ww, "{op}: not the widened f64 kernel's result");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
