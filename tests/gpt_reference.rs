//! examples/gpt-shakespeare against the independent PyTorch float64 reference
//! (tests/reference/gpt_reference.py), in the `--tiny` configuration (2 layers, 2 heads,
//! width 16, block 16, batch 4), both starting from tests/reference/gpt/init.safetensors
//! and drawing the same batches:
//! * the step-0 gradient of every parameter equals the reference's, element by element,
//!   to 1e-10 relative: |a − b| ≤ 1e-10·|b| + 1e-18 (the absolute floor is for elements
//!   that are exactly 0 in exact arithmetic, e.g. the key biases, whose gradient is
//!   rounding noise of order 1e-21 in both programs; 1e-18 is ~1e-17 of the largest
//!   gradient element);
//! * the batch losses of 50 training steps (AdamW, clipping, warm-up + cosine schedule)
//!   match to 1e-8 relative.

mod common;

use common::Faber;

use faber::serialize::safetensors;

fn reference_dir() -> String {
    format!("{}/tests/reference/gpt", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn gpt_matches_the_pytorch_reference() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-gpt-ref");
    let grads = tmp.join("grads0.safetensors");
    let out = Faber::new()
        .arg("run")
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
        &std::fs::read_to_string(format!("{}/trace.json", reference_dir())).unwrap(),
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
            (a - b).abs() <= 1e-8 * b.abs(),
            "step {i}: faber {a} vs reference {b}"
        );
    }

    // Step-0 gradients, every element of every parameter.
    let ours = safetensors::read(&std::fs::read(&grads).unwrap()).unwrap();
    let theirs = safetensors::read(
        &std::fs::read(format!("{}/grads0.safetensors", reference_dir())).unwrap(),
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
        for (k, (x, y)) in a.data().iter().zip(b.data()).enumerate() {
            assert!(
                (x - y).abs() <= 1e-10 * y.abs() + 1e-18,
                "{name}[{k}]: faber {x} vs reference {y}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
