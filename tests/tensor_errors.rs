//! Every error path of the tensor runtime returns a `TensorError` of the right
//! kind (never a panic), plus copy-on-write and limit behaviour.

use faber::tensor::{self, Limits, SplitMix64, Tensor, TensorErrorKind as K};

fn t(data: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(data, shape).unwrap()
}

fn kind<T: std::fmt::Debug>(r: Result<T, tensor::TensorError>) -> K {
    r.expect_err("expected an error").kind
}

#[test]
fn construction_errors() {
    assert_eq!(kind(Tensor::full(0.0, &[100_000, 100_000])), K::Limit);
    assert_eq!(kind(Tensor::zeros(&[usize::MAX, 2])), K::Limit);
    assert_eq!(kind(Tensor::zeros(&[1 << 40, 1 << 30])), K::Limit);
    assert_eq!(kind(tensor::dims_from_i64(&[2, -1])), K::Shape);
    assert_eq!(kind(tensor::dims_from_i64(&[i64::MAX, i64::MAX])), K::Limit);
    assert_eq!(tensor::dims_from_i64(&[2, 0, 3]).unwrap(), vec![2, 0, 3]);
    assert_eq!(kind(Tensor::from_flat(vec![1.0, 2.0], &[3])), K::Shape);
    assert_eq!(kind(Tensor::from_slice(&[1.0, 2.0], &[])), K::Shape);
    assert!(Tensor::from_slice(&[1.0], &[]).is_ok());
}

#[test]
fn limit_is_configurable_per_thread() {
    let old = Limits::set_current(Limits { max_elements: 10 });
    assert_eq!(kind(Tensor::zeros(&[11])), K::Limit);
    assert!(Tensor::zeros(&[10]).is_ok());
    // Results larger than either input are checked too.
    let a = t(&[1.0, 2.0, 3.0, 4.0], &[4, 1]);
    let b = t(&[1.0, 2.0, 3.0], &[1, 3]);
    assert_eq!(kind(tensor::add(&a, &b)), K::Limit);
    assert_eq!(kind(tensor::matmul(&a, &b)), K::Limit);
    let e = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(
        kind(tensor::embedding(&e, &t(&[0.0, 1.0, 0.0, 1.0], &[4]))),
        K::Limit
    );
    assert_eq!(kind(tensor::concat(&[&e, &e], 0)), K::Limit);
    assert_eq!(kind(SplitMix64::new(1).uniform_tensor(&[11])), K::Limit);
    Limits::set_current(old);
    assert_eq!(Limits::current(), Limits::default());
    assert_eq!(Limits::default().max_elements, 536_870_912);
}

#[test]
fn index_errors() {
    let mut x = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(x.get(&[1, 2]).unwrap(), 6.0);
    assert_eq!(kind(x.get(&[2, 0])), K::Index);
    assert_eq!(kind(x.get(&[0, -1])), K::Index);
    assert_eq!(kind(x.get(&[0])), K::Shape);
    assert_eq!(kind(x.set(&[0, 3], 1.0)), K::Index);
    x.set(&[0, 0], 9.0).unwrap();
    assert_eq!(x.data()[0], 9.0);
    assert_eq!(kind(tensor::slice_rows(&x, 1, 3)), K::Index);
    assert_eq!(kind(tensor::slice_rows(&x, 2, 1)), K::Index);
    assert_eq!(kind(tensor::narrow(&x, 1, 0, 4)), K::Index);
    assert_eq!(kind(tensor::narrow(&x, 2, 0, 1)), K::Shape);
    assert_eq!(kind(x.item()), K::Shape);
    assert_eq!(Tensor::scalar(2.5).item().unwrap(), 2.5);
    let ids = t(&[0.0, 2.0, 1e300], &[3]);
    assert_eq!(kind(ids.to_indices(3, "ids")), K::Index);
    assert_eq!(
        kind(t(&[f64::INFINITY], &[1]).to_indices(3, "ids")),
        K::Index
    );
    assert_eq!(kind(t(&[-0.5], &[1]).to_indices(3, "ids")), K::Index);
    assert_eq!(t(&[-0.0], &[1]).to_indices(3, "ids").unwrap(), vec![0]);
}

#[test]
fn shape_errors() {
    let m = t(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let v = t(&[1.0, 2.0], &[2]);
    assert_eq!(kind(tensor::reshape(&m, &[4])), K::Shape);
    assert_eq!(kind(tensor::transpose(&v)), K::Shape);
    assert_eq!(kind(tensor::permute(&m, &[0])), K::Shape);
    assert_eq!(kind(tensor::permute(&m, &[0, 2])), K::Shape);
    assert_eq!(kind(tensor::concat(&[], 0)), K::Shape);
    assert_eq!(kind(tensor::concat(&[&m, &v], 0)), K::Shape);
    assert_eq!(kind(tensor::concat(&[&m], 2)), K::Shape);
    assert_eq!(kind(tensor::add(&m, &v)), K::Shape);
    assert_eq!(kind(tensor::add_bias(&m, &v)), K::Shape);
    assert_eq!(kind(tensor::add_bias(&Tensor::scalar(1.0), &v)), K::Shape);
    assert_eq!(kind(tensor::matmul(&m, &m)), K::Shape);
    assert_eq!(
        kind(tensor::matmul(&t(&[1.0, 2.0, 3.0], &[3]), &m)),
        K::Shape
    );
    assert_eq!(tensor::matmul(&v, &m).unwrap().shape(), &[3]);
    assert_eq!(kind(tensor::sum_axis(&m, 2, false)), K::Shape);
    assert_eq!(
        kind(tensor::mean_axis(&Tensor::zeros(&[2, 0]).unwrap(), 1, true)),
        K::Shape
    );
    assert_eq!(kind(tensor::mean(&Tensor::zeros(&[0]).unwrap())), K::Shape);
    assert_eq!(
        kind(tensor::argmax(&Tensor::zeros(&[3, 0]).unwrap())),
        K::Shape
    );
    assert_eq!(kind(tensor::softmax(&Tensor::scalar(1.0))), K::Shape);
    assert_eq!(kind(tensor::log_softmax(&Tensor::scalar(1.0))), K::Shape);
    assert_eq!(kind(tensor::layernorm(&m, 1, 1e-5, &v, &v)), K::Shape);
    let z = Tensor::zeros(&[2, 0]).unwrap();
    let e = Tensor::zeros(&[0]).unwrap();
    assert_eq!(kind(tensor::layernorm(&z, 1, 1e-5, &e, &e)), K::Shape);
    assert_eq!(kind(tensor::cross_entropy(&z, &z)), K::Shape);
    assert_eq!(
        kind(tensor::cross_entropy_indices(
            &z,
            &Tensor::zeros(&[2]).unwrap()
        )),
        K::Shape
    );
    assert_eq!(
        kind(tensor::cross_entropy_indices(
            &Tensor::zeros(&[0, 3]).unwrap(),
            &e
        )),
        K::Shape
    );
    assert_eq!(kind(tensor::embedding(&v, &v)), K::Shape);
    assert_eq!(kind(tensor::embedding(&m, &m)), K::Index);
    assert_eq!(kind(tensor::causal_mask(&v, 0.0)), K::Shape);
    let mut r = SplitMix64::new(0);
    assert_eq!(kind(r.multinomial(&Tensor::scalar(1.0))), K::Shape);
    assert_eq!(
        kind(r.multinomial(&Tensor::zeros(&[2, 0]).unwrap())),
        K::Shape
    );
}

fn message<T: std::fmt::Debug>(r: Result<T, tensor::TensorError>) -> String {
    r.expect_err("expected an error").message
}

/// Shape-mismatch messages name the axes that disagree and their sizes (issue 18).
/// Each expectation is read off the operand shapes by hand.
#[test]
fn shape_messages_name_the_disagreeing_axes() {
    let m23 = Tensor::zeros(&[2, 3]).unwrap();
    let m32 = Tensor::zeros(&[3, 2]).unwrap();
    // [2, 3] · [2, 3]: the left's last axis (3) against the right's first (2).
    assert_eq!(
        message(tensor::matmul(&m23, &m23)),
        "matmul: [2, 3] · [2, 3]: the inner dimensions differ (3 against 2: axis 1 of the left, axis 0 of the right)"
    );
    // [3] · [2, 3]: vector-matrix, 3 against axis 0 of the right (2).
    assert_eq!(
        message(tensor::matmul(&Tensor::zeros(&[3]).unwrap(), &m23)),
        "matmul: [3] · [2, 3]: the inner dimensions differ (3 against 2: axis 0 of the left, axis 0 of the right)"
    );
    // a · bᵀ with b = [3, 2]: bᵀ is [2, 3], its inner axis is b's axis 1 (2), against
    // the left's axis 1 (3).
    assert_eq!(
        message(tensor::matmul_t(&m23, &m32, tensor::Trans::B)),
        "matmul: [2, 3] · [3, 2]ᵀ: the inner dimensions differ (3 against 2: axis 1 of the left, axis 1 of the right)"
    );
    // Batched [2, 3, 4] · [3, 4, 5]: inner 4 = 4, batch axes [2] and [3] conflict.
    let a = Tensor::zeros(&[2, 3, 4]).unwrap();
    let b = Tensor::zeros(&[3, 4, 5]).unwrap();
    assert_eq!(
        message(tensor::matmul(&a, &b)),
        "matmul: [2, 3, 4] · [3, 4, 5]: the batch axes [2] and [3] do not broadcast (axis 0: 2 against 3)"
    );
    assert!(
        message(tensor::matmul(&Tensor::scalar(1.0), &m23)).ends_with(
            "ranks 0 and 2 do not combine (vectors are rank 1, matrices and batches rank 2 to 4)"
        )
    );
    // Broadcasting: aligned at the right; both axes of [2, 3] / [3, 2] conflict.
    assert_eq!(
        message(tensor::add(&m23, &m32)),
        "addita: shapes [2, 3] and [3, 2] do not broadcast (axis 0: 2 against 3; axis 1: 3 against 2; sizes must be equal or 1)"
    );
    // [2, 3] and [2]: axis 1 of the first (3) against axis 0 of the second (2).
    assert_eq!(
        message(tensor::mul(&m23, &Tensor::zeros(&[2]).unwrap())),
        "multiplica: shapes [2, 3] and [2] do not broadcast (axis 1 of [2, 3] (3) against axis 0 of [2] (2); sizes must be equal or 1)"
    );
    // Bias [2] for rows of 3.
    assert_eq!(
        message(tensor::add_bias(&m23, &Tensor::zeros(&[2]).unwrap())),
        "addita_bias: bias [2] does not fit the last axis of [2, 3] (the last axis, axis 1, has 3 elements, the bias 2)"
    );
    // Concatenating [2, 3] and [3, 2] along axis 0: axis 1 must agree (2 against 3).
    assert_eq!(
        message(tensor::concat(&[&m23, &m32], 0)),
        "concatena: shape [3, 2] does not fit [2, 3] along axis 0 (axis 1: 2 against 3)"
    );
    assert_eq!(
        message(tensor::concat(&[&m23, &Tensor::zeros(&[2]).unwrap()], 0)),
        "concatena: shape [2] does not fit [2, 3] along axis 0 (rank 1 against rank 2)"
    );
    // Cross-entropy targets [3, 2] for logits [2, 3].
    assert_eq!(
        message(tensor::cross_entropy(&m23, &m32)),
        "crux_entropia: targets [3, 2] do not match logits [2, 3] (axis 0: 3 against 2; axis 1: 2 against 3)"
    );
    // Summing [2, 3] to the shape [4]: axis 0 of [4] against axis 1 of [2, 3].
    assert_eq!(
        message(tensor::sum_to_shape(&m23, &[4])),
        "summa_ad_formam: [4] does not broadcast to [2, 3] (axis 0 of [4] (4) against axis 1 of [2, 3] (3))"
    );
}

#[test]
fn domain_errors() {
    let v = t(&[1.0, 2.0], &[2]);
    assert_eq!(kind(tensor::div(&v, &t(&[0.0], &[1]))), K::Domain);
    assert_eq!(kind(tensor::div(&v, &t(&[-0.0, 1.0], &[2]))), K::Domain);
    assert_eq!(
        kind(tensor::div(&v, &t(&[f64::NEG_INFINITY], &[]))),
        K::Domain
    );
    assert_eq!(kind(tensor::reciprocal(&t(&[f64::NAN], &[1]))), K::Domain);
    assert_eq!(kind(tensor::log(&t(&[-0.0], &[1]))), K::Domain);
    assert_eq!(kind(tensor::sqrt(&t(&[f64::NAN], &[1]))), K::Domain);
    assert_eq!(
        kind(tensor::cross_entropy(&v, &t(&[0.5, f64::NAN], &[2]))),
        K::Domain
    );
    for bad in [f64::INFINITY, f64::NEG_INFINITY] {
        assert_eq!(
            kind(tensor::cross_entropy(&v, &t(&[bad, 0.5], &[2]))),
            K::Domain
        );
    }
    let mut r = SplitMix64::new(0);
    assert_eq!(kind(r.below(0)), K::Domain);
    assert_eq!(kind(r.sample(&[f64::INFINITY, 1.0])), K::Domain);
    assert_eq!(kind(r.sample(&[f64::NAN])), K::Domain);
    assert_eq!(kind(r.sample(&[])), K::Domain);
    assert_eq!(kind(r.sample(&[f64::MAX, f64::MAX])), K::Domain);
}

/// Any finite targets are accepted (issue 18): the loss is `−Σ t·ln(softmax(x) + 1e-7)/C`,
/// here with C = 2 and softmax([1, 2]) = [1/(1 + e), e/(1 + e)].
#[test]
fn cross_entropy_takes_any_finite_targets() {
    let e = 1f64.exp();
    let (p1, p2) = (1.0 / (1.0 + e), e / (1.0 + e));
    let want = -(-0.1 * (p1 + 1e-7).ln() + 2.5 * (p2 + 1e-7).ln()) / 2.0;
    let got = tensor::cross_entropy(&t(&[1.0, 2.0], &[2]), &t(&[-0.1, 2.5], &[2])).unwrap();
    assert!(
        (got.data()[0] - want).abs() < 1e-15,
        "{} against {want}",
        got.data()[0]
    );
}

#[test]
fn copy_on_write() {
    let a = t(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let mut b = a.clone();
    assert!(a.shares_storage(&b));
    let r = tensor::reshape(&a, &[4]).unwrap();
    assert!(r.shares_storage(&a), "forma shares the buffer");
    b.set(&[0, 0], 10.0).unwrap();
    assert!(!a.shares_storage(&b));
    assert_eq!(a.data(), &[1.0, 2.0, 3.0, 4.0]);
    assert_eq!(b.data(), &[10.0, 2.0, 3.0, 4.0]);
    let mut c = a.clone();
    c.fill_with(7.0);
    assert_eq!(a.data()[0], 1.0);
    assert_eq!(c.data(), &[7.0; 4]);
    assert_eq!(c.rank(), 2);
    assert_eq!(Tensor::scalar(1.0).rank(), 0);
}

#[test]
fn parallel_rows_do_not_change_results() {
    // Big enough to take the threaded path; compare 1 thread with 2 and 3.
    let mut r = SplitMix64::new(3);
    let x = r.normal_tensor(&[700, 300], 0.0, 3.0).unwrap();
    let g = r.normal_tensor(&[300], 1.0, 0.1).unwrap();
    let b = r.normal_tensor(&[300], 0.0, 0.1).unwrap();
    let y = r.normal_tensor(&[700, 300], 0.0, 1.0).unwrap();
    let x3 = tensor::reshape(&x, &[70, 10, 300]).unwrap();
    let y3 = tensor::reshape(&y, &[70, 10, 300]).unwrap();
    let b7 = r.normal_tensor(&[700], 0.0, 0.1).unwrap();
    let run = |n| {
        tensor::set_threads(n);
        let out = vec![
            tensor::softmax(&x).unwrap(),
            tensor::log_softmax(&x).unwrap(),
            tensor::layernorm(&x, 1, 1e-5, &g, &b).unwrap(),
            tensor::gelu(&x).unwrap(),
            tensor::exp(&x).unwrap(),
            tensor::matmul_fast(&x, &tensor::transpose(&x).unwrap()).unwrap(),
            tensor::add(&x, &y).unwrap(),
            tensor::mul(&x, &y).unwrap(),
            tensor::scale(&x, 0.3).unwrap(),
            tensor::add_bias(&x, &b).unwrap(),
            tensor::neg(&x).unwrap(),
            tensor::permute(&x3, &[1, 0, 2]).unwrap(),
            tensor::permute(&x3, &[2, 1, 0]).unwrap(),
            tensor::softmax_causal(&x3, 0.7, -1e9).unwrap(),
            tensor::softmax_causal_backward(
                &y3,
                &tensor::softmax_causal(&x3, 0.7, -1e9).unwrap(),
                0.7,
            )
            .unwrap(),
            tensor::gelu_cum_derivata(&x).unwrap().0,
            tensor::gelu_cum_derivata(&x).unwrap().1,
            tensor::gelu_backward_derivata(&y, &x).unwrap(),
            tensor::linear(&x, &tensor::transpose(&x).unwrap(), &b7).unwrap(),
            tensor::sum_axis(&x3, 0, false).unwrap(),
            tensor::sum_axis(&x3, 1, true).unwrap(),
            tensor::mean_axis(&x3, 2, false).unwrap(),
            tensor::max_axis(&x3, 0, false).unwrap(),
            tensor::sum_to_shape(&x3, &[10, 1]).unwrap(),
            Tensor::full(0.25, &[700, 300]).unwrap(),
            tensor::log(&tensor::add_scalar(&tensor::mul(&x, &x).unwrap(), 1.0).unwrap()).unwrap(),
        ];
        tensor::set_threads(0);
        out
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(3));
    // The split elementwise maps against a plain loop.
    let (xd, yd, bd) = (x.data(), y.data(), b.data());
    for (i, (&s, &p)) in one[6].data().iter().zip(one[7].data()).enumerate() {
        assert_eq!(s.to_bits(), (xd[i] + yd[i]).to_bits());
        assert_eq!(p.to_bits(), (xd[i] * yd[i]).to_bits());
        assert_eq!(one[8].data()[i].to_bits(), (xd[i] * 0.3).to_bits());
        assert_eq!(one[9].data()[i].to_bits(), (xd[i] + bd[i % 300]).to_bits());
        assert_eq!(one[10].data()[i].to_bits(), (-xd[i]).to_bits());
    }
}

#[test]
fn matmul_kernels_agree_closely() {
    let mut r = SplitMix64::new(8);
    let a = r.normal_tensor(&[3, 70, 90], 0.0, 1.0).unwrap();
    let b = r.normal_tensor(&[90, 50], 0.0, 1.0).unwrap();
    let exact = tensor::matmul_exact(&a, &b).unwrap();
    let fast = tensor::matmul_fast(&a, &b).unwrap();
    assert_eq!(exact.shape(), &[3, 70, 50]);
    for (x, y) in exact.data().iter().zip(fast.data()) {
        assert!((x - y).abs() <= 1e-12 * y.abs().max(1.0));
    }
    // Small products take the exact kernel automatically.
    let s = r.normal_tensor(&[8, 8], 0.0, 1.0).unwrap();
    assert_eq!(
        tensor::matmul(&s, &s).unwrap(),
        tensor::matmul_exact(&s, &s).unwrap()
    );
}

#[test]
fn rng_is_deterministic() {
    let mut a = SplitMix64::new(99);
    let mut b = SplitMix64::new(99);
    let xs: Vec<f64> = (0..100).map(|_| a.uniform()).collect();
    let ys: Vec<f64> = (0..100).map(|_| b.uniform()).collect();
    assert_eq!(xs, ys);
    assert!(xs.iter().all(|u| (0.0..1.0).contains(u)));
    assert_eq!(a.state(), b.state());
    let p = [0.0, 0.0, 3.0];
    for _ in 0..20 {
        assert_eq!(a.sample(&p).unwrap(), 2);
    }
}
