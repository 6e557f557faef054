//! `matmul_t` (an operand read with its last two axes swapped, in place) against the
//! plain product of an explicitly transposed copy: the same bits, on the exact
//! in-order kernel (small products) and on the GEMM kernel (large ones), 2-D, batched
//! and with a broadcast batch, at 1 and 2 threads. `matmul` and `permute` themselves
//! are checked against numpy by tests/tensor_ops.rs.

use faber::tensor::{self, SplitMix64, Tensor, Trans};

fn swap_last(x: &Tensor) -> Tensor {
    let r = x.shape().len();
    let mut axes: Vec<usize> = (0..r).collect();
    axes.swap(r - 2, r - 1);
    tensor::permute(x, &axes).unwrap()
}

fn random(seed: u64, shape: &[usize]) -> Tensor {
    SplitMix64::new(seed)
        .normal_tensor(shape, 0.0, 1.0)
        .unwrap()
}

fn same_bits(x: &Tensor, y: &Tensor) -> bool {
    x.shape() == y.shape()
        && x.data()
            .iter()
            .zip(y.data())
            .all(|(a, b)| a.to_bits() == b.to_bits())
}

#[test]
fn transposed_operands_give_the_bits_of_an_explicit_transpose() {
    // (shape of a as stored, shape of b as stored, transposes)
    let cases: &[(&[usize], &[usize], Trans)] = &[
        (&[3, 4], &[5, 4], Trans::B),
        (&[4, 3], &[4, 5], Trans::A),
        (&[4, 3], &[5, 4], Trans { a: true, b: true }),
        (&[130, 70], &[90, 70], Trans::B),
        (&[300, 70], &[300, 90], Trans::A),
        (&[2, 3, 64, 16], &[2, 3, 64, 16], Trans::B),
        (&[2, 3, 64, 16], &[2, 3, 64, 64], Trans::A),
        (&[4, 64, 48], &[40, 48], Trans::B),
        (&[4, 64, 48], &[64, 40], Trans::A),
        (&[1, 2], &[7, 2], Trans::B),
    ];
    for threads in [1, 2] {
        tensor::set_threads(threads);
        for (i, &(sa, sb, t)) in cases.iter().enumerate() {
            let a = random(2 * i as u64 + 1, sa);
            let b = random(2 * i as u64 + 2, sb);
            let got = tensor::matmul_t(&a, &b, t).unwrap();
            let ea = if t.a { swap_last(&a) } else { a.clone() };
            let eb = if t.b { swap_last(&b) } else { b.clone() };
            let want = tensor::matmul(&ea, &eb).unwrap();
            assert!(
                same_bits(&got, &want),
                "case {i} ({sa:?}, {sb:?}, {t:?}), {threads} threads"
            );
        }
    }
}

#[test]
fn mismatched_or_low_rank_operands_are_shape_errors() {
    let a = random(1, &[3, 4]);
    assert!(tensor::matmul_t(&a, &random(2, &[4, 5]), Trans::B).is_err());
    assert!(tensor::matmul_t(&random(3, &[4]), &a, Trans::A).is_err());
    assert!(tensor::matmul_t(&a, &random(4, &[4]), Trans::B).is_err());
}
