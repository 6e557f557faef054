//! Tensor kernel benchmarks (harness = false). Prints one line per figure:
//! `<name> <value> <unit>`, read by benches/tensor/run.sh, which runs numpy
//! on the same sizes and prints ratios.
//!
//!   cargo bench --bench tensor                         # 1 thread
//!   TENSOR_THREADS=2 cargo bench --bench tensor        # GEMM and row kernels on 2 threads
//!
//!   cargo bench --bench tensor -- --only gemm        # only figures whose name starts with "gemm"
//!   cargo bench --bench tensor -- --only gemm_f32    # f32 vs f64 GEMM on slices (tensor/gemm_f32.rs)
//!
//! Figures: f64 GEMM at 64, 256, 1024 (GFLOP/s, the tuned kernel; plus the
//! exact in-order kernel at 64 and 256), elementwise add and softmax on 1M
//! elements (GB/s of array traffic: add moves 3·8·N bytes, softmax 2·8·N).
//! `f32_*`: the f32 row and element-wise kernels (issue 21) against the f64 ops at the
//! GPT example's sizes (µs per call, f32 then f64, and the f32/f64 ratio); the f32
//! timings include allocating the output, as the f64 ops do.

use std::hint::black_box;
use std::time::Instant;

/// The crate's GEMM kernels (src/tensor/gemm/, private to the crate) compiled into this
/// benchmark, so that the f32 and f64 kernels are timed on plain slices: a `tensor`
/// module with the few items of the crate's they use (one thread).
#[allow(dead_code, unused_imports)]
mod tensor {
    pub mod par {
        #[derive(Clone, Copy)]
        pub struct SendPtr(pub *mut f64);
        // SAFETY: as the crate's (tensor/par.rs): disjoint ranges of one buffer.
        unsafe impl Send for SendPtr {}
        // SAFETY: as above.
        unsafe impl Sync for SendPtr {}
        impl SendPtr {
            pub fn get(self) -> *mut f64 {
                self.0
            }
        }
    }
    pub mod pool {
        pub fn run_blocks(n: usize, f: &(dyn Fn(usize) + Sync)) {
            (0..n).for_each(f)
        }
        pub fn run_each<T: Send>(items: Vec<T>, f: &(dyn Fn(usize, T) + Sync)) {
            for (i, t) in items.into_iter().enumerate() {
                f(i, t)
            }
        }
    }
    pub fn threads() -> usize {
        1
    }
    pub use faber::tensor::SplitMix64;
    #[path = "../../src/tensor/gemm/mod.rs"]
    pub mod gemm;
    /// The figures (inside this module: the kernels are visible in it only).
    #[path = "gemm_f32.rs"]
    pub mod gemm_f32;
}

/// Best seconds per call over `rounds` rounds of `reps` calls.
fn time<F: FnMut()>(mut f: F, target_secs: f64) -> f64 {
    f();
    let t = Instant::now();
    f();
    let one = t.elapsed().as_secs_f64().max(1e-7);
    let reps = ((target_secs / 5.0 / one) as usize).clamp(1, 100_000);
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        best = best.min(t.elapsed().as_secs_f64() / reps as f64);
    }
    best
}

fn main() {
    use faber::tensor::{self, SplitMix64, Tensor};
    let threads: usize = std::env::var("TENSOR_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    tensor::set_threads(threads);
    let quick = std::env::args().any(|a| a == "--quick");
    let secs = if quick { 0.2 } else { 1.0 };
    let args: Vec<String> = std::env::args().collect();
    let only = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1).cloned())
        .unwrap_or_default();
    let want = |name: &str| name.starts_with(&only);
    if only.starts_with("gemm_f32") {
        crate::tensor::gemm_f32::run(secs);
        return;
    }
    let mut rng = SplitMix64::new(1);
    for n in [64usize, 256, 1024] {
        let a = rng.normal_tensor(&[n, n], 0.0, 1.0).unwrap();
        let b = rng.normal_tensor(&[n, n], 0.0, 1.0).unwrap();
        if !want(&format!("gemm_{n}")) {
            continue;
        }
        let s = time(
            || drop(black_box(tensor::matmul_fast(&a, &b).unwrap())),
            secs,
        );
        println!("gemm_{n} {:.2} GFLOP/s", 2.0 * (n as f64).powi(3) / s / 1e9);
        if n <= 256 && want("gemm_exact") {
            let s = time(
                || drop(black_box(tensor::matmul_exact(&a, &b).unwrap())),
                secs,
            );
            println!(
                "gemm_exact_{n} {:.2} GFLOP/s",
                2.0 * (n as f64).powi(3) / s / 1e9
            );
        }
    }
    if want("f32") {
        f32_vs_f64(&mut rng, secs);
    }
    if !want("add") {
        return;
    }
    let n = 1 << 20;
    let x = rng.normal_tensor(&[n], 0.0, 1.0).unwrap();
    let y = rng.normal_tensor(&[n], 0.0, 1.0).unwrap();
    let s = time(|| drop(black_box(tensor::add(&x, &y).unwrap())), secs);
    println!("add_1M {:.2} GB/s", 3.0 * 8.0 * n as f64 / s / 1e9);
    let xm = tensor::reshape(&x, &[1024, 1024]).unwrap();
    let s = time(|| drop(black_box(tensor::softmax(&xm).unwrap())), secs);
    println!("softmax_1M {:.2} GB/s", 2.0 * 8.0 * n as f64 / s / 1e9);
    // Informational: per-element cost of the correctly rounded tanh and GELU.
    let small = Tensor::from_slice(&x.data()[..1 << 16], &[1 << 16]).unwrap();
    let s = time(|| drop(black_box(tensor::tanh(&small).unwrap())), secs);
    println!("tanh_cr {:.2} ns/elem", s / (1 << 16) as f64 * 1e9);
    let s = time(|| drop(black_box(tensor::gelu(&small).unwrap())), secs);
    println!("gelu {:.2} ns/elem", s / (1 << 16) as f64 * 1e9);
    let s = time(|| drop(black_box(tensor::exp(&small).unwrap())), secs);
    println!("exp {:.2} ns/elem", s / (1 << 16) as f64 * 1e9);
}

/// `f32_<kernel> <f32 µs> µs f64 <f64 µs> µs ratio <f32/f64>` at the GPT example's
/// default sizes (batch 16, block 64, width 64, 4 heads, vocabulary 65).
fn f32_vs_f64(rng: &mut faber::tensor::SplitMix64, secs: f64) {
    use faber::tensor::f32ops as f;
    use faber::tensor::Tensor;
    let report = |name: &str, a: f64, b: f64| {
        println!(
            "f32_{name} {:.1} µs f64 {:.1} µs ratio {:.2}",
            a * 1e6,
            b * 1e6,
            a / b
        )
    };
    let narrow = |t: &Tensor| t.data().iter().map(|&v| v as f32).collect::<Vec<f32>>();
    // exp over the attention scores' element count (B·H·T·T = 262 144).
    let n = 16 * 4 * 64 * 64;
    let x = rng.normal_tensor(&[16, 4, 64, 64], 0.0, 2.0).unwrap();
    let x32 = narrow(&x);
    let a = time(
        || {
            let mut o = vec![0.0f32; n];
            f::exp_f32_map(&x32, &mut o);
            black_box(o);
        },
        secs,
    );
    let b = time(|| drop(black_box(faber::tensor::exp(&x).unwrap())), secs);
    report("exp_262k", a, b);
    // Row softmax and its VJP, rows of 64.
    let a = time(
        || {
            let mut o = vec![0.0f32; n];
            f::softmax_rows_f32(&x32, &mut o, 64);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || drop(black_box(faber::tensor::softmax(&x).unwrap())),
        secs,
    );
    report("softmax_4096x64", a, b);
    let y = faber::tensor::softmax(&x).unwrap();
    let y32 = narrow(&y);
    let g = rng.normal_tensor(&[16, 4, 64, 64], 0.0, 1.0).unwrap();
    let g32 = narrow(&g);
    let a = time(
        || {
            let mut o = vec![0.0f32; n];
            f::softmax_backward_f32(&g32, &y32, &mut o, 64);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || drop(black_box(faber::tensor::softmax_backward(&g, &y).unwrap())),
        secs,
    );
    report("softmax_backward_4096x64", a, b);
    // The causal softmax of attention, [16, 4, 64, 64], forward and backward.
    let s = 0.125f32;
    let a = time(
        || {
            let mut o = vec![0.0f32; n];
            f::softmax_causal_f32(&x32, &mut o, 64, 64, s, -1e9);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || {
            drop(black_box(
                faber::tensor::softmax_causal(&x, s as f64, -1e9).unwrap(),
            ))
        },
        secs,
    );
    report("softmax_causal_16x4x64x64", a, b);
    let yc = faber::tensor::softmax_causal(&x, s as f64, -1e9).unwrap();
    let yc32 = narrow(&yc);
    let a = time(
        || {
            let mut o = vec![0.0f32; n];
            f::softmax_causal_backward_f32(&g32, &yc32, &mut o, 64, 64, s);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || {
            drop(black_box(
                faber::tensor::softmax_causal_backward(&g, &yc, s as f64).unwrap(),
            ))
        },
        secs,
    );
    report("softmax_causal_backward_16x4x64x64", a, b);
    // LayerNorm over [B·T, D] = [1024, 64], forward and backward.
    let (rows, d) = (1024, 64);
    let xl = rng.normal_tensor(&[rows, d], 0.5, 2.0).unwrap();
    let gl = rng.normal_tensor(&[rows, d], 0.0, 1.0).unwrap();
    let gamma = rng.normal_tensor(&[d], 1.0, 0.2).unwrap();
    let beta = rng.normal_tensor(&[d], 0.0, 0.2).unwrap();
    let (xl32, gl32, gm32, bt32) = (narrow(&xl), narrow(&gl), narrow(&gamma), narrow(&beta));
    let a = time(
        || {
            let mut o = vec![0.0f32; rows * d];
            f::layernorm_f32(&xl32, &mut o, 1e-5, &gm32, &bt32);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || {
            drop(black_box(
                faber::tensor::layernorm(&xl, 1, 1e-5, &gamma, &beta).unwrap(),
            ))
        },
        secs,
    );
    report("layernorm_1024x64", a, b);
    let a = time(
        || {
            let (mut gx, mut gg, mut gb) =
                (vec![0.0f32; rows * d], vec![0.0f32; d], vec![0.0f32; d]);
            f::layernorm_backward_f32(&gl32, &xl32, 1e-5, &gm32, None, &mut gx, &mut gg, &mut gb);
            black_box((gx, gg, gb));
        },
        secs,
    );
    let b = time(
        || {
            drop(black_box(
                faber::tensor::layernorm_backward(&gl, &xl, 1e-5, &gamma).unwrap(),
            ))
        },
        secs,
    );
    report("layernorm_backward_1024x64", a, b);
    // GELU of the MLP's hidden layer [B·T, 4D] = [1024, 256]: the forward with its
    // derivative (what a companion's forward sweep runs), and the VJP from x.
    let xg = rng.normal_tensor(&[1024, 256], 0.0, 1.5).unwrap();
    let gg = rng.normal_tensor(&[1024, 256], 0.0, 1.0).unwrap();
    let (xg32, gg32) = (narrow(&xg), narrow(&gg));
    let m = xg32.len();
    let a = time(
        || {
            let mut o = vec![0.0f32; m];
            f::gelu_f32_map(&xg32, &mut o);
            black_box(o);
        },
        secs,
    );
    let b = time(|| drop(black_box(faber::tensor::gelu(&xg).unwrap())), secs);
    report("gelu_1024x256", a, b);
    let a = time(
        || {
            let (mut y, mut dd) = (vec![0.0f32; m], vec![0.0f32; m]);
            f::gelu_with_derivative_f32(&xg32, &mut y, &mut dd);
            black_box((y, dd));
        },
        secs,
    );
    let b = time(
        || drop(black_box(faber::tensor::gelu_cum_derivata(&xg).unwrap())),
        secs,
    );
    report("gelu_with_derivative_1024x256", a, b);
    let a = time(
        || {
            let mut o = vec![0.0f32; m];
            f::gelu_backward_f32(&gg32, &xg32, &mut o);
            black_box(o);
        },
        secs,
    );
    let b = time(
        || drop(black_box(faber::tensor::gelu_backward(&gg, &xg).unwrap())),
        secs,
    );
    report("gelu_backward_1024x256", a, b);
    // Cross-entropy over [B·T, V] = [1024, 65] logits, loss and gradient.
    let z = rng.normal_tensor(&[1024, 65], 0.0, 2.0).unwrap();
    let ids: Vec<usize> = (0..1024).map(|i| (i * 37 + 5) % 65).collect();
    let idt = Tensor::from_flat(ids.iter().map(|&i| i as f64).collect(), &[1024]).unwrap();
    let z32 = narrow(&z);
    let a = time(
        || {
            let l = f::cross_entropy_indices_f32(&z32, &ids, 65);
            let mut o = vec![0.0f32; z32.len()];
            f::cross_entropy_indices_backward_f32(1.0, &z32, &ids, 65, &mut o);
            black_box((l, o));
        },
        secs,
    );
    let b = time(
        || {
            black_box(faber::tensor::cross_entropy_indices(&z, &idt).unwrap());
            black_box(faber::tensor::cross_entropy_indices_backward(1.0, &z, &idt).unwrap());
        },
        secs,
    );
    report("cross_entropy_1024x65", a, b);
    // AdamW over one [4D, D] = [256, 64]·4 leaf of 65 536 elements.
    let k = 1 << 16;
    let leaves: Vec<Tensor> = (0..4)
        .map(|_| rng.normal_tensor(&[k], 0.0, 0.1).unwrap())
        .collect();
    let v = faber::tensor::mul(&leaves[3], &leaves[3]).unwrap();
    let (p32, g32b, m32, v32) = (
        narrow(&leaves[0]),
        narrow(&leaves[1]),
        narrow(&leaves[2]),
        narrow(&v),
    );
    let c = faber::tensor::AdamCoef {
        beta1: 0.9,
        one_minus_beta1: 0.1,
        beta2: 0.99,
        one_minus_beta2: 0.01,
        inv_bc2_sqrt: 1.3,
        eps: 1e-8,
        decay: 0.9999,
        step: 1e-3,
    };
    let a = time(
        || {
            let (mut po, mut mo, mut vo) = (vec![0.0f32; k], vec![0.0f32; k], vec![0.0f32; k]);
            f::adamw_step_f32(&p32, &g32b, &m32, &v32, &c, &mut po, &mut mo, &mut vo);
            black_box((po, mo, vo));
        },
        secs,
    );
    let b = time(
        || {
            drop(black_box(
                faber::tensor::adamw_step(&leaves[0], &leaves[1], &leaves[2], &v, &c).unwrap(),
            ))
        },
        secs,
    );
    report("adamw_65536", a, b);
}
