//! The f32 GEMM against an f64 product formed independently (a naive triple loop in
//! f64 on the same f32 values), within the bound of the module docs; and the claims
//! that make it reproducible: the same bits on every ISA this CPU has (AVX-512, AVX2,
//! the portable code), at any thread count, with operands read transposed in place;
//! the [`Tri`] forms and [`Post`] epilogues.

use super::dispatch::{gemm_f32, unpacked_into, Isa};
use super::{Strides, Tri, KC};
use crate::tensor::gemm::post::{Post, PostOp};
use crate::tensor::gemm::{exact_strided as exact_strided_f32, gemm_exact as gemm_exact_f32};

/// Uniform values in [−1, 1), rounded to f32.
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut r = crate::tensor::SplitMix64::new(seed);
    (0..n).map(|_| (r.uniform() * 2.0 - 1.0) as f32).collect()
}

/// The ISAs this CPU runs (the portable code always).
fn isas() -> Vec<Isa> {
    [Isa::Avx512, Isa::Avx2, Isa::Scalar]
        .into_iter()
        .filter(|i| i.available())
        .collect()
}

/// `a·b` in f64 (each product of two f32 exact in f64) and `Σ_p |a||b|` per element.
fn reference(m: usize, n: usize, k: usize, a: &[f32], b: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let (mut c, mut s) = (vec![0.0; m * n], vec![0.0; m * n]);
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                let t = a[i * k + p] as f64 * b[p * n + j] as f64;
                c[i * n + j] += t;
                s[i * n + j] += t.abs();
            }
        }
    }
    (c, s)
}

/// The bound of the module docs (plus the f64 reference's own rounding, far below it).
fn bound(k: usize, abs_sum: f64) -> f64 {
    let r = (k + k.div_ceil(KC)) as f64 * 2f64.powi(-24);
    r / (1.0 - r) * abs_sum + 1e-30
}

/// The transpose of row-major `x` (`r×c`) as a row-major `c×r` matrix.
fn transpose(r: usize, c: usize, x: &[f32]) -> Vec<f32> {
    (0..c * r).map(|t| x[(t % r) * c + t / r]).collect()
}

/// `gemm_f32` into a fresh NaN-filled matrix.
#[allow(clippy::too_many_arguments)]
fn run(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: (&[f32], Strides),
    b: (&[f32], Strides),
    t: usize,
    post: Option<Post<f32>>,
) -> Vec<f32> {
    let mut c = vec![f32::NAN; m * n];
    // SAFETY: c holds m·n elements; post's matrix (the tests') as many.
    unsafe { gemm_f32(isa, m, n, k, a, b, c.as_mut_ptr(), t, post) };
    c
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Shapes with edge tiles for every kernel: 1, tile ± 1 (8×48 and 6×16 packed, 8×32
/// and 6×16 unpacked), k around KC and its multiples, n around MAX_N, k = 0.
const SHAPES: [(usize, usize, usize); 22] = [
    (1, 1, 1),
    (1, 1, 300),
    (7, 5, 3),
    (6, 16, 16),
    (5, 15, 255),
    (7, 17, 257),
    (8, 48, 256),
    (9, 49, 257),
    (8, 32, 64),
    (9, 33, 1),
    (17, 33, 65),
    (64, 16, 64),
    (64, 64, 16),
    (13, 128, 200),
    (13, 129, 200),
    (100, 7, 300),
    (7, 100, 3),
    (3, 1100, 20),
    (61, 129, 511),
    (30, 400, 530),
    (13, 7, 0),
    (0, 5, 4),
];

/// Every ISA and thread count gives the same bits, within the bound of the exact
/// product; with operands read transposed, too.
#[test]
fn same_bits_on_every_isa_and_thread_count_within_the_bound() {
    for (s, &(m, n, k)) in SHAPES.iter().enumerate() {
        let a = values(2 * s as u64 + 1, m * k);
        let b = values(2 * s as u64 + 2, k * n);
        let (exact, abs) = reference(m, n, k, &a, &b);
        let plain = (Strides::rows(k), Strides::rows(n));
        let want = run(Isa::Scalar, m, n, k, (&a, plain.0), (&b, plain.1), 1, None);
        for (e, &x) in want.iter().enumerate() {
            let err = (x as f64 - exact[e]).abs();
            assert!(
                err <= bound(k, abs[e]),
                "{m}×{n}×{k} at {e}: {x} vs {} (bound {})",
                exact[e],
                bound(k, abs[e])
            );
        }
        let (at, bt) = (transpose(m, k, &a), transpose(k, n, &b));
        for isa in isas() {
            for t in [1, 2, 3] {
                for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                    if t > 1 && (ta || tb) {
                        continue;
                    }
                    let sa = match ta {
                        true => (&at[..], Strides::transposed(m)),
                        false => (&a[..], Strides::rows(k)),
                    };
                    let sb = match tb {
                        true => (&bt[..], Strides::transposed(k)),
                        false => (&b[..], Strides::rows(n)),
                    };
                    let got = run(isa, m, n, k, sa, sb, t, None);
                    assert_eq!(
                        bits(&got),
                        bits(&want),
                        "{isa:?} {m}×{n}×{k} t={t} ta={ta} tb={tb}"
                    );
                }
            }
        }
    }
}

/// Large products split over threads by rows and by columns (packed kernel) and by row
/// blocks (unpacked kernel): 1, 2, 3 and 7 threads give the same bits.
#[test]
fn thread_count_does_not_change_results() {
    for &(m, n, k) in &[
        (150, 200, 520),
        (40, 700, 300),
        (500, 30, 100),
        (200, 100, 256),
    ] {
        let (a, b) = (values(7, m * k), values(8, k * n));
        let ops = ((&a[..], Strides::rows(k)), (&b[..], Strides::rows(n)));
        for isa in isas() {
            let one = run(isa, m, n, k, ops.0, ops.1, 1, None);
            for t in [2, 3, 7] {
                let got = run(isa, m, n, k, ops.0, ops.1, t, None);
                assert_eq!(bits(&got), bits(&one), "{isa:?} {m}×{n}×{k} t={t}");
            }
        }
    }
}

/// With a post operation, every ISA, thread split and k-blocking stores the product's
/// bits times the matrix's (`Mul`) or the matrix's plus them (`Add`), rounded once —
/// NaN, ±∞ and ±0 in the matrix included; k = 0 gives `0 · v` and `v + 0`.
#[test]
fn post_operations_equal_the_product_then_the_op() {
    for &(m, n, k) in &[
        (150, 200, 520),
        (40, 700, 300),
        (100, 30, 100),
        (9, 33, 7),
        (13, 7, 0),
    ] {
        let (a, b) = (values(3, m * k), values(4, k * n));
        let mut v = values(5, m * n);
        let specials = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0, 3e38];
        for (i, &x) in specials.iter().enumerate() {
            v[(i * 7919) % (m * n)] = x;
        }
        let ops = ((&a[..], Strides::rows(k)), (&b[..], Strides::rows(n)));
        let plain = run(Isa::Scalar, m, n, k, ops.0, ops.1, 1, None);
        for op in [PostOp::Mul, PostOp::Add] {
            let want: Vec<u32> = plain
                .iter()
                .zip(&v)
                .map(|(&x, &y)| match op {
                    PostOp::Mul => (x * y).to_bits(),
                    PostOp::Add => (y + x).to_bits(),
                })
                .collect();
            let post = Some(Post { op, m: v.as_ptr() });
            for isa in isas() {
                for t in [1, 2, 3] {
                    let got = run(isa, m, n, k, ops.0, ops.1, t, post);
                    assert!(bits(&got) == want, "{isa:?} {op:?} {m}×{n}×{k} t={t}");
                }
            }
        }
    }
}

/// The triangular forms on every ISA: `LowerOut` gives the full product's bits on and
/// below the diagonal; `LowerA` and `UpperA` give them everywhere when `a` is zero
/// (+0.0 and −0.0 mixed) on the other side, `b` finite; with an infinity in `b` where
/// `a` is zero the full product has NaN and the triangular one does not. Products
/// outside the unpacked kernel's range are refused.
#[test]
fn triangular_forms() {
    let shapes = [
        (64, 64, 16),
        (64, 16, 64),
        (37, 37, 8),
        (9, 5, 9),
        (100, 32, 100),
        (3, 20, 3),
        (256, 64, 256),
    ];
    for (s, &(m, n, k)) in shapes.iter().enumerate() {
        let a = values(40 + 2 * s as u64, m * k);
        let mut b = values(41 + 2 * s as u64, k * n);
        let zeroed = |keep: &dyn Fn(usize, usize) -> bool| -> Vec<f32> {
            (0..m * k)
                .map(|e| match keep(e / k, e % k) {
                    true => a[e],
                    false if e % 2 == 0 => 0.0,
                    false => -0.0,
                })
                .collect()
        };
        let lower = zeroed(&|r, p| p <= r);
        let upper = zeroed(&|r, p| p >= r);
        let product = |isa: Isa, a: &[f32], b: &[f32], ta: bool, tb: bool, tri: Tri| {
            let (a, sa) = match ta {
                true => (transpose(m, k, a), Strides::transposed(m)),
                false => (a.to_vec(), Strides::rows(k)),
            };
            let (b, sb) = match tb {
                true => (transpose(k, n, b), Strides::transposed(k)),
                false => (b.to_vec(), Strides::rows(n)),
            };
            // Row stride n + 3: a strided destination.
            let ldc = n + 3;
            let mut c = vec![f32::NAN; m * ldc];
            // SAFETY: c holds the m×n matrix of row stride ldc.
            let done = unsafe {
                unpacked_into(isa, m, n, k, (&a, sa), (&b, sb), c.as_mut_ptr(), ldc, tri)
            };
            assert!(done, "{isa:?} {m}×{n}×{k}");
            (0..m * n)
                .map(|e| c[e / n * ldc + e % n])
                .collect::<Vec<f32>>()
        };
        for isa in isas() {
            for (ta, tb) in [(false, false), (false, true), (true, false), (true, true)] {
                let at = format!("{isa:?} {m}×{n}×{k}, ta {ta}, tb {tb}");
                let full = product(isa, &a, &b, ta, tb, Tri::Full);
                let plain = run(
                    Isa::Scalar,
                    m,
                    n,
                    k,
                    (&a, Strides::rows(k)),
                    (&b, Strides::rows(n)),
                    1,
                    None,
                );
                assert_eq!(bits(&full), bits(&plain), "Full, {at}");
                let low = product(isa, &a, &b, ta, tb, Tri::LowerOut);
                for e in (0..m * n).filter(|e| e % n <= e / n) {
                    assert_eq!(low[e].to_bits(), full[e].to_bits(), "LowerOut {e}, {at}");
                }
                for (z, tri) in [(&lower, Tri::LowerA), (&upper, Tri::UpperA)] {
                    let full = product(isa, z, &b, ta, tb, Tri::Full);
                    assert_eq!(
                        bits(&product(isa, z, &b, ta, tb, tri)),
                        bits(&full),
                        "{tri:?}, {at}"
                    );
                }
            }
        }
        if m >= 2 && k >= 2 {
            b[(k - 1) * n] = f32::INFINITY;
            b[1] = f32::NEG_INFINITY;
            for isa in isas() {
                for (z, tri, row) in [(&lower, Tri::LowerA, 0), (&upper, Tri::UpperA, m - 1)] {
                    let full = product(isa, z, &b, false, false, Tri::Full);
                    let part = product(isa, z, &b, false, false, tri);
                    let e = row * n + if tri == Tri::LowerA { 0 } else { 1 };
                    assert!(
                        full[e].is_nan() && part[e].is_finite(),
                        "{isa:?} {tri:?} {m}×{n}×{k}"
                    );
                }
            }
        }
    }
    // Outside the unpacked kernel's range: refused, nothing written.
    let (a, b) = (values(1, 4 * 300), values(2, 300 * 4));
    let mut c = [f32::NAN; 16];
    for isa in isas() {
        // SAFETY: c holds the 4×4 matrix.
        let done = unsafe {
            unpacked_into(
                isa,
                4,
                4,
                300,
                (&a, Strides::rows(300)),
                (&b, Strides::rows(4)),
                c.as_mut_ptr(),
                4,
                Tri::Full,
            )
        };
        assert!(!done && c.iter().all(|x| x.is_nan()), "{isa:?}");
    }
}

/// The exact kernels: the in-order f32 sum `((a0·b0 + a1·b1) + …)` each step rounded
/// to f32 — a per-element loop here — through strides (transposed operands too) and
/// into a zeroed matrix; within the bound of the exact product.
#[test]
fn exact_kernels_keep_the_in_order_sum() {
    for &(m, n, k) in &[(1, 1, 1), (7, 5, 3), (9, 33, 65), (16, 16, 300)] {
        let (a, b) = (values(11, m * k), values(12, k * n));
        let mut want = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let mut s = a[i * k] * b[j];
                for p in 1..k {
                    s += a[i * k + p] * b[p * n + j];
                }
                want[i * n + j] = s;
            }
        }
        let mut c = vec![0.0f32; m * n];
        gemm_exact_f32(m, n, k, &a, &b, &mut c);
        assert_eq!(bits(&c), bits(&want), "{m}×{n}×{k}");
        let (at, bt) = (transpose(m, k, &a), transpose(k, n, &b));
        let mut got = Vec::new();
        // SAFETY: k ≥ 1; the strides address the stored matrices only.
        unsafe {
            exact_strided_f32(
                m,
                n,
                k,
                &at,
                Strides::transposed(m),
                &bt,
                Strides::transposed(k),
                |v| got.push(v),
            )
        };
        assert_eq!(bits(&got), bits(&want), "strided {m}×{n}×{k}");
        let (exact, abs) = reference(m, n, k, &a, &b);
        for e in 0..m * n {
            assert!(
                (want[e] as f64 - exact[e]).abs() <= bound(k, abs[e]),
                "{m}×{n}×{k} at {e}"
            );
        }
    }
}
