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
