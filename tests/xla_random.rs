//! The seeded random ops `uniformis`, `normalis` and `multinomialis`
//! (src/xla/stablehlo/random.rs: SplitMix64 in `ui64` arithmetic per element)
//! compiled and run on a real PJRT plugin against faber's native SplitMix64
//! (src/tensor/rng.rs), on random seeds (the whole u64 range: an `Int` seed is its
//! two's-complement bits), random shapes and both element types. Runs when a plugin
//! is at hand; otherwise prints `skipped: no PJRT plugin (run scripts/xla-setup.sh)`.
//!
//! What is compared:
//! * `uniformis`: the same bits, f32 and f64, and at a draw made the largest
//!   (`z = 2⁶⁴ − 1`, found by inverting the mix) the f32 clamp to the largest f32
//!   below 1.
//! * `normalis`: within |σ|·2⁻⁴⁴ + ulp, ulp = 2⁻²³·|y| for an f32 tensor, 2⁻⁵¹·|y|
//!   for f64. Why: u₁, u₂, `1 − u₁`, `2π·u₂` are the same bits on both sides; the
//!   device's `log` and `cos` are not libm's. With `ln` within a few ulps relative
//!   and `cos` within a few 2⁻⁵³ absolute, `r = √(−2·ln(1 − u₁)) ≤ 8.6` and
//!   `z = r·cos` move by at most 8.6·(a few)·2⁻⁵³ < 2⁻⁴⁴ (≈ 5.7e-14, room for 16
//!   ulps of error in `ln` and `cos` together), σ·z by |σ| times that; the final
//!   rounding of `μ + σz` (and to f32) of two f64 values that close can differ by one
//!   ulp of y. The largest difference seen is printed.
//! * `multinomialis`: the same indices on rows built so that no running sum lies
//!   within 1e-9·total of the draw `u = uniform·total` (a row near such a tie may
//!   pick the neighbouring index on the device if its sums round otherwise), and
//!   NaN for the rows the native kernel refuses. Random rows without that margin
//!   are run too and their mismatches counted and printed (0 where the plugin adds
//!   in order).
//!
//! Under `faber run --backend xla` (src/xla/offload.rs): a function that draws runs
//! on the device and prints what the CPU backend prints, and `multinomialis` of a
//! device value with a new seed at every call compiles 8 programs, then runs on the
//! host.

mod common;
mod xla_support;

use faber::ir::ops::Op;
use faber::tensor::{DType, SplitMix64, Tensor};
use faber::xla::{Arg, Device};
use xla_support::{device, values};

const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
const MIX1: u64 = 0xBF58_476D_1CE4_E5B9;
const MIX2: u64 = 0x94D0_49BB_1331_11EB;

/// The inverse of SplitMix64's output mix: `mix(unmix(z)) = z`.
fn unmix(z: u64) -> u64 {
    let unshift = |x: u64, s: u32| (0..64 / s + 1).fold(x, |y, _| x ^ (y >> s));
    // m⁻¹ mod 2⁶⁴ by Newton's iteration (m odd).
    let inv = |m: u64| {
        (0..6).fold(m, |i, _| {
            i.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(i)))
        })
    };
    let x = unshift(z, 31).wrapping_mul(inv(MIX2));
    let x = unshift(x, 27).wrapping_mul(inv(MIX1));
    unshift(x, 30)
}

/// The seed whose draw number `k` (1, 2, …) is `z`.
fn seed_for(z: u64, k: u64) -> u64 {
    unmix(z).wrapping_sub(k.wrapping_mul(GAMMA))
}

/// A receiver giving the element type: a one-element tensor of `dtype`.
fn kind(dtype: DType) -> Tensor {
    Tensor::full_of(dtype, 0.0, &[1]).unwrap()
}

fn run(dev: &mut Device, op: Op, args: &[Arg], what: &str) -> Tensor {
    let mut got = dev
        .run_op(op, args)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(got.len(), 1, "{what}");
    got.remove(0)
}

fn bits(t: &Tensor) -> Vec<u64> {
    values(t).iter().map(|x| x.to_bits()).collect()
}

/// Seeds over the whole u64 range, with the ends.
fn seeds(g: &mut SplitMix64, n: usize) -> Vec<u64> {
    let mut s = vec![0, u64::MAX, 1 << 63];
    s.extend((0..n).map(|_| g.next_u64()));
    s
}

/// Random shapes of ranks 0–3 (extents 1–6), an empty one and a large one.
fn shapes(g: &mut SplitMix64, n: usize) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = (0..n)
        .map(|_| {
            let rank = g.below(4).unwrap() as usize;
            (0..rank)
                .map(|_| 1 + g.below(6).unwrap() as usize)
                .collect()
        })
        .collect();
    out.push(vec![2, 0]);
    out.push(vec![129, 257]);
    out
}

#[test]
fn uniformis_gives_the_native_bits() {
    let Some(mut dev) = device("xla_random::uniformis") else {
        return;
    };
    let mut g = SplitMix64::new(2424);
    let seeds = seeds(&mut g, 5);
    let shapes = shapes(&mut g, 5);
    for (i, &seed) in seeds.iter().enumerate() {
        let dims = &shapes[i % shapes.len()];
        for dtype in [DType::F32, DType::F64] {
            let want = SplitMix64::new(seed)
                .uniform_tensor_of(dtype, dims)
                .unwrap();
            let recv = kind(dtype);
            let args = [
                Arg::Tensor(&recv),
                Arg::Int(seed as i64),
                Arg::Dims(dims.clone()),
            ];
            let what = format!("uniformis seed {seed} {dims:?} {dtype:?}");
            let got = run(&mut dev, Op::Uniformis, &args, &what);
            assert_eq!(got.dtype(), dtype, "{what}");
            assert_eq!(got.shape(), &dims[..], "{what}");
            assert_eq!(bits(&got), bits(&want), "{what}");
        }
    }
    // A number receiver (the lowering's mark of a declared f64 tensor) gives f64.
    let args = [Arg::Num(0.0), Arg::Int(-7), Arg::Dims(vec![3, 2])];
    let got = run(&mut dev, Op::Uniformis, &args, "uniformis number");
    let want = SplitMix64::new(-7i64 as u64)
        .uniform_tensor(&[3, 2])
        .unwrap();
    assert_eq!(bits(&got), bits(&want), "uniformis number receiver");
}

/// Draw number 3 made the largest, `(2⁶⁴ − 1 >> 11)·2⁻⁵³ = 1 − 2⁻⁵³`: f64 keeps it,
/// f32 would round it to 1.0 and takes the largest f32 below 1 instead.
#[test]
fn uniformis_keeps_f32_draws_below_one() {
    let Some(mut dev) = device("xla_random::below_one") else {
        return;
    };
    let seed = seed_for(u64::MAX, 3);
    let mut r = SplitMix64::new(seed);
    r.next_u64();
    r.next_u64();
    assert_eq!(r.next_u64(), u64::MAX, "unmix");
    for dtype in [DType::F32, DType::F64] {
        let want = SplitMix64::new(seed)
            .uniform_tensor_of(dtype, &[5])
            .unwrap();
        let top = values(&want)[2];
        let expect = match dtype {
            DType::F32 => f64::from(1.0f32 - f32::EPSILON / 2.0),
            DType::F64 => 1.0 - f64::EPSILON / 2.0,
        };
        assert_eq!(top, expect, "{dtype:?}");
        let recv = kind(dtype);
        let args = [
            Arg::Tensor(&recv),
            Arg::Int(seed as i64),
            Arg::Dims(vec![5]),
        ];
        let got = run(&mut dev, Op::Uniformis, &args, "below one");
        assert_eq!(bits(&got), bits(&want), "{dtype:?}");
    }
}

#[test]
fn normalis_agrees_within_the_device_transcendentals() {
    let Some(mut dev) = device("xla_random::normalis") else {
        return;
    };
    let mut g = SplitMix64::new(4242);
    let mut seeds = seeds(&mut g, 5);
    // u₁ = 1 − 2⁻⁵³ at element 1 (draw 3): the deepest tail, r = √(2·53·ln 2).
    seeds.push(seed_for(u64::MAX, 3));
    let shapes = shapes(&mut g, 5);
    let (mut worst_z, mut same, mut all) = (0.0f64, 0usize, 0usize);
    for (i, &seed) in seeds.iter().enumerate() {
        let dims = &shapes[(i + 3) % shapes.len()];
        let (mean, std) = (g.uniform() * 4.0 - 2.0, 0.01 + g.uniform() * 3.0);
        for dtype in [DType::F32, DType::F64] {
            let want = SplitMix64::new(seed)
                .normal_tensor_of(dtype, dims, mean, std)
                .unwrap();
            let recv = kind(dtype);
            let args = [
                Arg::Tensor(&recv),
                Arg::Int(seed as i64),
                Arg::Dims(dims.clone()),
                Arg::Num(mean),
                Arg::Num(std),
            ];
            let what = format!("normalis seed {seed} {dims:?} μ {mean} σ {std} {dtype:?}");
            let got = run(&mut dev, Op::Normalis, &args, &what);
            assert_eq!(got.dtype(), dtype, "{what}");
            assert_eq!(got.shape(), &dims[..], "{what}");
            let ulp = match dtype {
                DType::F32 => 2f64.powi(-23),
                DType::F64 => 2f64.powi(-51),
            };
            for (j, (x, y)) in values(&got).iter().zip(values(&want)).enumerate() {
                let tol = std * 2f64.powi(-44) + ulp * y.abs();
                assert!(
                    (x - y).abs() <= tol,
                    "{what}: element {j}: device {x} against native {y} (tolerance {tol:e})"
                );
                if dtype == DType::F64 {
                    worst_z = worst_z.max((x - y).abs() / std);
                }
                same += usize::from(x == &y);
                all += 1;
            }
        }
    }
    println!("normalis: {same} of {all} elements the same bits; largest |Δz| (f64) {worst_z:e}");
    // μ and σ as numbers the device holds (rank-0 parameters).
    let recv = kind(DType::F64);
    let args = [
        Arg::Tensor(&recv),
        Arg::Int(99),
        Arg::Dims(vec![4, 3]),
        Arg::Scalar(0.5, faber::xla::ElementType::F64),
        Arg::Scalar(2.0, faber::xla::ElementType::F64),
    ];
    let got = run(&mut dev, Op::Normalis, &args, "normalis scalars");
    let want = SplitMix64::new(99)
        .normal_tensor(&[4, 3], 0.5, 2.0)
        .unwrap();
    for (x, y) in values(&got).iter().zip(values(&want)) {
        assert!((x - y).abs() <= 2.0 * 2f64.powi(-44) + 2f64.powi(-51) * y.abs());
    }
}

/// A probability row of `v` entries (a quarter of them 0, at least one positive) on
/// a random scale, in `dtype`'s values.
fn row(g: &mut SplitMix64, v: usize, dtype: DType) -> Vec<f64> {
    let scale = 10f64.powi(g.below(7).unwrap() as i32 - 3);
    loop {
        let r: Vec<f64> = (0..v)
            .map(|_| {
                let x = if g.below(4).unwrap() == 0 {
                    0.0
                } else {
                    g.uniform() * scale
                };
                match dtype {
                    DType::F32 => f64::from(x as f32),
                    DType::F64 => x,
                }
            })
            .collect();
        if r.iter().any(|&x| x > 0.0) {
            return r;
        }
    }
}

/// The smallest |u − c_j| over the running sums c of `p`, relative to the total,
/// for the draw `uniform` (the native arithmetic).
fn margin(p: &[f64], uniform: f64) -> f64 {
    let total: f64 = p.iter().fold(0.0, |s, &x| s + x);
    let u = uniform * total;
    let mut c = 0.0;
    let mut m = f64::INFINITY;
    for &x in p {
        c += x;
        m = m.min((u - c).abs());
    }
    m / total
}

fn probs(rows: &[Vec<f64>], rank1: bool, dtype: DType) -> Tensor {
    let v = rows[0].len();
    let flat: Vec<f64> = rows.concat();
    let shape = if rank1 { vec![v] } else { vec![rows.len(), v] };
    match dtype {
        DType::F32 => Tensor::from_f32(flat.iter().map(|&x| x as f32).collect(), &shape),
        DType::F64 => Tensor::from_flat(flat, &shape),
    }
    .unwrap()
}

#[test]
fn multinomialis_draws_the_native_indices_away_from_ties() {
    let Some(mut dev) = device("xla_random::multinomialis") else {
        return;
    };
    let mut g = SplitMix64::new(777);
    let (mut mismatched, mut drawn) = (0usize, 0usize);
    for trial in 0..12 {
        let seed = g.next_u64();
        let dtype = if trial % 2 == 0 {
            DType::F32
        } else {
            DType::F64
        };
        let rank1 = trial % 3 == 0;
        let n = if rank1 {
            1
        } else {
            1 + g.below(9).unwrap() as usize
        };
        let v = 1 + g.below(12).unwrap() as usize;
        for away_from_ties in [true, false] {
            // Row r takes draw r + 1: rebuild a row until it is 1e-9 away from a tie.
            let mut draws = SplitMix64::new(seed);
            let rows: Vec<Vec<f64>> = (0..n)
                .map(|_| {
                    let uniform = draws.uniform();
                    loop {
                        let r = row(&mut g, v, dtype);
                        if !away_from_ties || margin(&r, uniform) > 1e-9 {
                            return r;
                        }
                    }
                })
                .collect();
            let p = probs(&rows, rank1, dtype);
            let want = SplitMix64::new(seed).multinomial(&p).unwrap();
            let args = [Arg::Tensor(&p), Arg::Int(seed as i64)];
            let what = format!("multinomialis seed {seed} {:?} {dtype:?}", p.shape());
            let got = run(&mut dev, Op::Multinomialis, &args, &what);
            assert_eq!(got.dtype(), dtype, "{what}");
            assert_eq!(got.shape(), want.shape(), "{what}");
            if away_from_ties {
                assert_eq!(values(&got), values(&want), "{what}: {rows:?}");
            } else {
                let (x, y) = (values(&got), values(&want));
                mismatched += x.iter().zip(&y).filter(|(a, b)| a != b).count();
                drawn += y.len();
            }
        }
    }
    // Many rows without a margin, in one program each.
    for dtype in [DType::F32, DType::F64] {
        let rows: Vec<Vec<f64>> = (0..2000).map(|_| row(&mut g, 50, dtype)).collect();
        let p = probs(&rows, false, dtype);
        let want = SplitMix64::new(31).multinomial(&p).unwrap();
        let got = run(
            &mut dev,
            Op::Multinomialis,
            &[Arg::Tensor(&p), Arg::Int(31)],
            "rows",
        );
        let (x, y) = (values(&got), values(&want));
        mismatched += x.iter().zip(&y).filter(|(a, b)| a != b).count();
        drawn += y.len();
    }
    println!("multinomialis: {mismatched} of {drawn} draws on rows without a margin differ");
    assert!(mismatched * 10 <= drawn, "{mismatched} of {drawn} differ");
}

/// Rows the native kernel refuses (a negative, NaN or infinite probability, a zero
/// total) give the index NaN; the others their native index.
#[test]
fn multinomialis_marks_refused_rows_nan() {
    let Some(mut dev) = device("xla_random::refused") else {
        return;
    };
    let good = vec![0.25, 0.5, 0.25];
    let rows = vec![
        good.clone(),
        vec![0.25, -0.5, 1.0],
        vec![0.25, f64::NAN, 1.0],
        vec![0.25, f64::INFINITY, 1.0],
        vec![0.0, 0.0, 0.0],
        vec![-0.0, 1.0, 0.0],
    ];
    for dtype in [DType::F32, DType::F64] {
        let p = probs(&rows, false, dtype);
        let got = run(
            &mut dev,
            Op::Multinomialis,
            &[Arg::Tensor(&p), Arg::Int(5)],
            "refused",
        );
        let got = values(&got);
        assert!(SplitMix64::new(5).multinomial(&p).is_err());
        let first = SplitMix64::new(5)
            .multinomial(&probs(&rows[..1], false, dtype))
            .unwrap();
        assert_eq!(got[0], values(&first)[0], "{dtype:?}");
        for (r, x) in got.iter().enumerate().take(5).skip(1) {
            assert!(x.is_nan(), "{dtype:?}: row {r} gave {x}");
        }
        // -0 is a valid probability: row 5 takes draw 6 and can only pick index 1.
        assert_eq!(got[5], 1.0, "{dtype:?}");
    }
}

#[test]
fn misfits_are_errors_naming_the_op() {
    let Some(mut dev) = device("xla_random::misfits") else {
        return;
    };
    let recv = kind(DType::F32);
    let e = dev
        .run_op(
            Op::Uniformis,
            &[Arg::Tensor(&recv), Arg::Num(3.0), Arg::Dims(vec![2])],
        )
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`uniformis`: the seed (operand 1) must be an integer"),
        "{e}"
    );
    let e = dev
        .run_op(
            Op::Normalis,
            &[
                Arg::Tensor(&recv),
                Arg::Int(3),
                Arg::Dims(vec![2]),
                Arg::Flag(true),
                Arg::Num(1.0),
            ],
        )
        .unwrap_err();
    assert!(
        e.to_string().starts_with("`normalis`: needs a number"),
        "{e}"
    );
    let cube = Tensor::full_of(DType::F32, 0.5, &[2, 2, 2]).unwrap();
    let e = dev
        .run_op(Op::Multinomialis, &[Arg::Tensor(&cube), Arg::Int(1)])
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with("`multinomialis`: needs [V] or [N, V]"),
        "{e}"
    );
    let e = dev
        .run_op(Op::Uniformis, &[Arg::Tensor(&recv), Arg::Int(1)])
        .unwrap_err();
    assert!(e.to_string().contains("takes 3 operands, 2 given"), "{e}");
}

const DRAWS: &str = r#"
functio trahe(tf32[5] x, numerus semen) → tf32[3] {
    fixum tf32[] z ← vacua
    fixum tf32[3, 5] u ← z.uniformis(semen, [3, 5])
    redde u.multiplica(x).multinomialis(semen + 1)
}

functio probabilitates(tf32[5] x) → tf32[5] {
    redde x.activatio_softmax()
}

incipit {
    fixum tf32[] z ← vacua
    fixum tf32[5] x ← z.strue([0.5, 1.0, 2.0, 0.25, 1.5], [5])
    nota trahe(x, 7)
    fixum tf32[5] p ← probabilitates(x)
    itera ab 0 ‥ 12 fixum k ergo nota p.multinomialis(k)
}
"#;

/// Under `faber run --backend xla`: a function that draws runs on the device with
/// the CPU backend's draws, and an op drawing from a device value with a new seed
/// at every call (sampling) goes back to the host after 8 programs.
#[test]
fn draws_run_on_the_device_and_new_seeds_stop_compiling() {
    let Some(plugin) = common::pjrt_plugin() else {
        common::say_no_plugin("xla_random::run");
        return;
    };
    let dir = common::scratch_dir("xla_random", "run");
    let file = dir.join("draws.fab");
    common::write_file(&file, DRAWS);
    let go = |backend: &str| {
        let o = common::Faber::new()
            .args([
                "--verbose",
                "run",
                "--precision",
                "f32",
                "--backend",
                backend,
            ])
            .arg("--xla-plugin")
            .arg(&plugin)
            .arg(&file)
            .output();
        assert_eq!(o.status.code(), Some(0), "{}", common::text(&o.stderr));
        o
    };
    let (cpu, xla) = (go("cpu"), go("xla"));
    assert_eq!(common::text(&xla.stdout), common::text(&cpu.stdout));
    let err = common::text(&xla.stderr);
    for line in [
        "xla: `draws::trahe` ran on the device 1 time(s)",
        "xla: op `multinomialis` ran on the device 8 time(s) (an operand was there)",
        "xla: op `multinomialis` runs on the CPU: compiled for 8 literal operands",
    ] {
        assert!(err.contains(line), "{line}\n{err}");
    }
}
