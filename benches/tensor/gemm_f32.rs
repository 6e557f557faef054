//! The f32 GEMM against the f64 one on plain slices (`cargo bench --bench tensor --
//! --only gemm_f32`), at one thread, at the GPT's shapes for the three model sizes of
//! issue 21 (`[B·T, E]·[E, 4E]`, `[B·T, 4E]·[4E, E]`, the weight gradient
//! `[B·T, E]ᵀ·[B·T, 4E]`, and one head's `q·kᵀ` `[T, hd]·[hd, T]` and `p·v`
//! `[T, T]·[T, hd]`), with `matrixmultiply::sgemm` (the f64 kernel's fallback
//! library) for comparison, and this CPU's FMA peak measured by a loop of independent
//! FMAs. Each figure is the median of 9 rounds of the thread's CPU time (the machine
//! is shared: the time other processes hold the core is left out).

use crate::tensor::gemm::{gemm_fast, gemm_fast_f32, Strides};
use std::hint::black_box;
use std::time::Instant;

/// Seconds of CPU time this thread has used (Linux's `CLOCK_THREAD_CPUTIME_ID`): on a
/// shared machine the time other processes hold the core is not counted.
fn cpu_time() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime");
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Median CPU seconds per call over 9 rounds of calls lasting about `secs / 9` each.
fn median<F: FnMut()>(mut f: F, secs: f64) -> f64 {
    f();
    let t = Instant::now();
    f();
    let one = t.elapsed().as_secs_f64().max(1e-7);
    let reps = ((secs / 9.0 / one) as usize).clamp(1, 100_000);
    let mut v: Vec<f64> = (0..9)
        .map(|_| {
            let t = cpu_time();
            for _ in 0..reps {
                f();
            }
            (cpu_time() - t) / reps as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[4]
}

/// Uniform values in [−1, 1).
fn values(seed: u64, n: usize) -> Vec<f64> {
    let mut r = faber::tensor::SplitMix64::new(seed);
    (0..n).map(|_| r.uniform() * 2.0 - 1.0).collect()
}

/// Runs `n` iterations of `ACC` independent FMA chains (as many as hide the FMA
/// latency on both pipes) and returns the final vectors' sum.
macro_rules! fma_loop {
    ($name:ident, $feat:literal, $v:ty, $set1:ident, $fma:ident, $add:ident) => {
        #[target_feature(enable = $feat)]
        unsafe fn $name(n: usize, x: f64) -> $v {
            use std::arch::x86_64::*;
            const ACC: usize = 12;
            let mut acc = [$set1(0.0 as _); ACC];
            let (a, b) = ($set1(x as _), $set1((1.0 - x * 1e-9) as _));
            for _ in 0..n {
                for c in acc.iter_mut() {
                    *c = $fma(*c, b, a);
                }
            }
            let mut s = acc[0];
            for c in &acc[1..] {
                s = $add(s, *c);
            }
            s
        }
    };
}
fma_loop!(
    fma_ps256,
    "avx2,fma",
    __m256,
    _mm256_set1_ps,
    _mm256_fmadd_ps,
    _mm256_add_ps
);
fma_loop!(
    fma_pd256,
    "avx2,fma",
    __m256d,
    _mm256_set1_pd,
    _mm256_fmadd_pd,
    _mm256_add_pd
);
fma_loop!(
    fma_ps512,
    "avx512f",
    __m512,
    _mm512_set1_ps,
    _mm512_fmadd_ps,
    _mm512_add_ps
);
fma_loop!(
    fma_pd512,
    "avx512f",
    __m512d,
    _mm512_set1_pd,
    _mm512_fmadd_pd,
    _mm512_add_pd
);
use std::arch::x86_64::{__m256, __m256d, __m512, __m512d};

/// GFLOP/s of `ACC × lanes` FMAs per iteration (2 flops each).
fn peak(secs: f64, lanes: usize, f: &dyn Fn(usize) -> f64) -> f64 {
    let n = 1 << 20;
    let s = median(
        || {
            black_box(f(black_box(n)));
        },
        secs,
    );
    2.0 * 12.0 * lanes as f64 * n as f64 / s / 1e9
}

pub fn run(secs: f64) {
    println!("# FMA peak, one core (median of 9, CPU time), GFLOP/s");
    if is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma") {
        // SAFETY: AVX2 and FMA are present (checked above).
        let f32p = peak(secs, 8, &|n| unsafe {
            black_box(fma_ps256(n, 0.5));
            0.0
        });
        // SAFETY: as above.
        let f64p = peak(secs, 4, &|n| unsafe {
            black_box(fma_pd256(n, 0.5));
            0.0
        });
        println!("fma_peak_avx2_f32 {f32p:.1} GFLOP/s");
        println!("fma_peak_avx2_f64 {f64p:.1} GFLOP/s");
    }
    if is_x86_feature_detected!("avx512f") {
        // SAFETY: AVX-512F is present (checked above).
        let f32p = peak(secs, 16, &|n| unsafe {
            black_box(fma_ps512(n, 0.5));
            0.0
        });
        // SAFETY: as above.
        let f64p = peak(secs, 8, &|n| unsafe {
            black_box(fma_pd512(n, 0.5));
            0.0
        });
        println!("fma_peak_avx512_f32 {f32p:.1} GFLOP/s");
        println!("fma_peak_avx512_f64 {f64p:.1} GFLOP/s");
    }
    println!("# GEMM at one thread (median of 9, CPU time), GFLOP/s");
    println!(
        "{:<34} {:>8} {:>8} {:>9} {:>10}",
        "shape (m×n×k)", "f64", "f32", "mm_sgemm", "f32 / f64"
    );
    // (label, m, n, k, a transposed, b transposed)
    let mut shapes = Vec::new();
    for (e, t, b, heads) in [
        (64usize, 64usize, 16usize, 4usize),
        (128, 64, 12, 4),
        (384, 256, 8, 6),
    ] {
        let (bt, hd) = (b * t, e / heads);
        shapes.push((format!("E{e} fc [BT,E]·[E,4E]"), bt, 4 * e, e, false, false));
        shapes.push((
            format!("E{e} proj [BT,4E]·[4E,E]"),
            bt,
            e,
            4 * e,
            false,
            false,
        ));
        shapes.push((
            format!("E{e} dW [BT,E]ᵀ·[BT,4E]"),
            e,
            4 * e,
            bt,
            true,
            false,
        ));
        shapes.push((format!("E{e} q·kᵀ [T,hd]·[hd,T]"), t, t, hd, false, true));
        shapes.push((format!("E{e} p·v [T,T]·[T,hd]"), t, hd, t, false, false));
    }
    // GEMM_F32_SHAPES=E384 keeps the shapes whose label contains it.
    let keep = std::env::var("GEMM_F32_SHAPES").unwrap_or_default();
    for (label, m, n, k, ta, tb) in shapes {
        if !label.contains(&keep) {
            continue;
        }
        let a64 = values(1, m * k);
        let b64 = values(2, k * n);
        let (a32, b32): (Vec<f32>, Vec<f32>) = (
            a64.iter().map(|&x| x as f32).collect(),
            b64.iter().map(|&x| x as f32).collect(),
        );
        // a (m×k) stored k×m when transposed, b (k×n) stored n×k.
        let sa = if ta {
            Strides::transposed(m)
        } else {
            Strides::rows(k)
        };
        let sb = if tb {
            Strides::transposed(k)
        } else {
            Strides::rows(n)
        };
        let mut c64 = vec![0.0f64; m * n];
        let mut c32 = vec![0.0f32; m * n];
        let flops = 2.0 * (m * n * k) as f64;
        let s64 = median(
            // SAFETY: c64 holds m·n elements; the strides address a's and b's.
            || unsafe { gemm_fast(m, n, k, &a64, sa, &b64, sb, c64.as_mut_ptr(), None) },
            secs,
        );
        let s32 = median(
            // SAFETY: as above, for c32.
            || unsafe { gemm_fast_f32(m, n, k, &a32, sa, &b32, sb, c32.as_mut_ptr(), None) },
            secs,
        );
        let smm = median(
            // SAFETY: as above; β = 0, so c32 is only written.
            || unsafe {
                matrixmultiply::sgemm(
                    m,
                    k,
                    n,
                    1.0,
                    a32.as_ptr(),
                    sa.row as isize,
                    sa.col as isize,
                    b32.as_ptr(),
                    sb.row as isize,
                    sb.col as isize,
                    0.0,
                    c32.as_mut_ptr(),
                    n as isize,
                    1,
                )
            },
            secs,
        );
        black_box((&c64, &c32));
        let (g64, g32, gmm) = (flops / s64 / 1e9, flops / s32 / 1e9, flops / smm / 1e9);
        println!(
            "{:<34} {g64:>8.1} {g32:>8.1} {gmm:>9.1} {:>10.2}",
            format!("{label} {m}×{n}×{k}"),
            g32 / g64
        );
    }
}
