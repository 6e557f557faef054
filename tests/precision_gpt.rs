//! The GPT example under `--precision f32` (docs/precision.md): three steps whose
//! losses stay within 1e-3 (relative) of the f64 run's — a loose sanity bound, f32
//! rounding shows but does not derail training — with f32 checkpoints (F32 entries,
//! about half the bytes of the f64 run's), and the same bits at 1 and 2 threads.

mod common;

use common::Faber;
use std::path::{Path, PathBuf};

const MODEL: &[&str] = &[
    "--layers",
    "1",
    "--embd",
    "16",
    "--block",
    "16",
    "--batch",
    "4",
    "--eval-batches",
    "1",
    "--eval-interval",
    "3",
    "--sample",
    "20",
    "--steps",
    "3",
    "--trace",
];

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("faber-precision-gpt-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// stdout of `faber --threads T run --precision P examples/gpt-shakespeare -- …`.
fn gpt(precision: &str, threads: &str, out: &Path) -> String {
    let o = Faber::new()
        .args(["--threads", threads, "run", "--precision", precision])
        .arg(format!("{}/examples/gpt-shakespeare", common::ROOT))
        .arg("--")
        .args(MODEL)
        .arg("--out")
        .arg(out)
        .output();
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    stdout
}

/// The numbers of the `passus k: damnum x` lines.
fn losses(stdout: &str) -> Vec<f64> {
    stdout
        .lines()
        .filter(|l| l.starts_with("passus "))
        .map(|l| l.rsplit(' ').next().unwrap().parse().unwrap())
        .collect()
}

/// stdout without the tokens/s and timing figures.
fn stable(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|l| !l.contains("steps/s"))
        .map(|l| l.split("  tokens/s").next().unwrap().to_string())
        .collect()
}

/// The dtypes named in a safetensors header.
fn dtypes(bytes: &[u8]) -> Vec<String> {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header = String::from_utf8_lossy(&bytes[8..8 + n]).into_owned();
    header
        .split("\"dtype\":\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_string())
        .collect()
}

#[test]
fn three_f32_steps_track_the_f64_run_and_are_thread_invariant() {
    let (d64, d1, d2) = (tmp("f64"), tmp("f32-1"), tmp("f32-2"));
    let wide = gpt("f64", "1", &d64);
    let one = gpt("f32", "1", &d1);
    let two = gpt("f32", "2", &d2);

    let (l64, l32) = (losses(&wide), losses(&one));
    assert_eq!(l64.len(), 3, "{wide}");
    assert_eq!(l32.len(), 3, "{one}");
    for (a, b) in l64.iter().zip(&l32) {
        assert!(((a - b) / a).abs() < 1e-3, "f64 {a} vs f32 {b}");
    }
    // f32 rounding shows: the losses are not the f64 ones.
    assert_ne!(l64, l32);

    // Same bits at 1 and 2 threads: the trace, evaluations, sample and checkpoint.
    assert_eq!(stable(&one), stable(&two));
    let model = |d: &Path| std::fs::read(d.join("model.safetensors")).unwrap();
    assert_eq!(
        model(&d1),
        model(&d2),
        "model.safetensors at 1 and 2 threads"
    );

    // The f32 run's parameters are F32, the f64 run's F64, at about half the bytes.
    let (m32, m64) = (model(&d1), model(&d64));
    // (the model record's integer fields are I64 either way)
    let floats = |b: &[u8]| -> Vec<String> {
        dtypes(b)
            .into_iter()
            .filter(|d| d.starts_with('F'))
            .collect()
    };
    let (t32, t64) = (floats(&m32), floats(&m64));
    assert!(t32.len() > 10 && t32.iter().all(|d| d == "F32"), "{t32:?}");
    assert_eq!(t64.len(), t32.len());
    assert!(t64.iter().all(|d| d == "F64"), "{t64:?}");
    let ratio = m32.len() as f64 / m64.len() as f64;
    assert!(
        (0.5..0.55).contains(&ratio),
        "{} / {} bytes",
        m32.len(),
        m64.len()
    );
}
