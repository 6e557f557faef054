//! examples/gpt-shakespeare against the independent PyTorch reference
//! (tests/reference/gpt_reference.py), in the `--tiny` configuration (2 layers, 2 heads,
//! width 16, block 16, batch 4), both starting from tests/reference/gpt/init.safetensors
//! and drawing the same batches.
//!
//! **float64** (`--precision f64` against `trace`):
//! * the step-0 gradient of every parameter equals the reference's, element by element,
//!   to 1e-10 relative: |a − b| ≤ 1e-10·|b| + 1e-18 (the absolute floor is for elements
//!   that are exactly 0 in exact arithmetic, e.g. the key biases, whose gradient is
//!   rounding noise of order 1e-21 in both programs; 1e-18 is ~1e-17 of the largest
//!   gradient element);
//! * the batch losses of 50 training steps (AdamW, clipping, warm-up + cosine schedule)
//!   match to 1e-8 relative.
//!
//! **float32** (`--precision f32` against `trace --dtype float32`: PyTorch's float32
//! kernels, the initial parameters rounded once to float32 in both):
//! * step-0 gradients: |a − b| ≤ 1e-4·|b| + 1e-5·max|b| per parameter. Why these
//!   bounds: two correct f32 programs differ by their rounding orders. A sum of k f32
//!   terms is within k·u·Σ|terms| of exact (u = 2⁻²⁴ ≈ 6e-8); the longest sums of the
//!   tiny model are k = 64 (a weight gradient sums over batch × block = 64 rows), so each
//!   program's error is up to ~4e-6 of the terms' magnitude, and the gradient is the
//!   end of a chain of a few dozen such steps. Against an element's own size that is
//!   1e-4 relative (≈ 1 700 ulps: room for the chain, far below any real error, which
//!   moves gradients by their own size); elements that cancel to near zero carry the
//!   absolute error of their terms instead, hence the floor at 1e-5 of the parameter's
//!   largest gradient element. The key biases' gradient is exactly 0 (a softmax row is
//!   invariant to a constant shift), so both programs give rounding noise of order
//!   u·|terms| ≈ 1e-12 there: an absolute floor of 1e-10 covers it, and is 5e-6 of the
//!   smallest parameter's largest gradient element (the query bias, ≈ 2e-5) — the f64
//!   test's 1e-18 floor, for f32.
//! * the 50-step batch-loss trace to 1e-4 relative (the bound: f32 training
//!   drifts by accumulated rounding, and 50 steps of AdamW keep it far below 1e-4).

mod common;

use common::Faber;

use faber::serialize::safetensors;

fn reference_dir() -> String {
    format!("{}/tests/reference/gpt", env!("CARGO_MANIFEST_DIR"))
}

/// What one precision is checked against.
struct Reference {
    precision: &'static str,
    /// File suffix of the reference's outputs (`trace{suffix}.json`).
    suffix: &'static str,
    /// |a − b| ≤ rel·|b| + floor, with floor = abs + max_rel·max|b| (per parameter).
    rel: f64,
    abs: f64,
    max_rel: f64,
    /// Loss trace: |a − b| ≤ trace_rel·|b|.
    trace_rel: f64,
}

fn check(r: &Reference) {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("faber-gpt-ref-{}", r.precision));
    let grads = tmp.join("grads0.safetensors");
    let out = Faber::new()
        .arg("run")
        .args(["--precision", r.precision])
        .arg(format!(
            "{}/examples/gpt-shakespeare",
            env!("CARGO_MANIFEST_DIR")
        ))
        .arg("--")
        .args(["--tiny", "--steps", "50", "--trace", "--sample", "0"])
        .args(["--eval-interval", "1000"])
        .arg("--init")
        .arg(format!("{}/init.safetensors", reference_dir()))
        .arg("--grads")
        .arg(&grads)
        .arg("--out")
        .arg(&tmp)
        .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );

    // Loss trace.
    let trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{}/trace{}.json", reference_dir(), r.suffix)).unwrap(),
    )
    .unwrap();
    let want: Vec<f64> = trace["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    let got: Vec<f64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("passus "))
        .map(|l| l.split("damnum ").nth(1).unwrap().trim().parse().unwrap())
        .collect();
    assert_eq!(got.len(), 50, "{stdout}");
    assert_eq!(want.len(), 50);
    for (i, (a, b)) in got.iter().zip(&want).enumerate() {
        assert!(
            (a - b).abs() <= r.trace_rel * b.abs(),
            "{}: step {i}: faber {a} vs reference {b}",
            r.precision
        );
    }

    // Step-0 gradients, every element of every parameter.
    let ours = safetensors::read(&std::fs::read(&grads).unwrap()).unwrap();
    let theirs = safetensors::read(
        &std::fs::read(format!(
            "{}/grads0{}.safetensors",
            reference_dir(),
            r.suffix
        ))
        .unwrap(),
    )
    .unwrap();
    assert_eq!(ours.len(), theirs.len(), "same parameters");
    assert!(theirs.len() >= 35);
    for (name, b) in &theirs {
        let (_, a) = ours
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("faber wrote no gradient `{name}`"));
        assert_eq!(a.shape(), b.shape(), "{name}");
        assert_eq!(a.dtype(), b.dtype(), "{name}: the run's element type");
        let (a, b) = (a.values(), b.values());
        let top = b.iter().fold(0.0f64, |m, y| m.max(y.abs()));
        let floor = r.abs + r.max_rel * top;
        for (k, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            assert!(
                (x - y).abs() <= r.rel * y.abs() + floor,
                "{} {name}[{k}]: faber {x} vs reference {y}",
                r.precision
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn gpt_matches_the_pytorch_float64_reference() {
    check(&Reference {
        precision: "f64",
        suffix: "",
        rel: 1e-10,
        abs: 1e-18,
        max_rel: 0.0,
        trace_rel: 1e-8,
    });
}

#[test]
fn gpt_f32_matches_the_pytorch_float32_reference() {
    check(&Reference {
        precision: "f32",
        suffix: "_f32",
        rel: 1e-4,
        abs: 1e-10,
        max_rel: 1e-5,
        trace_rel: 1e-4,
    });
}
