//! examples/digits against its PyTorch replay (tests/reference/digits_reference.py): the
//! same 64-32-10 MLP in float64 from the same initial weights (faber's seeded Glorot init,
//! written by the program as init.safetensors and committed as
//! tests/reference/digits/init.safetensors) over the same batches (gradus:data's
//! documented split and shuffle, re-implemented in tests/reference/digits_order.py), with
//! torch.optim.Adam. The 780 batch losses agree to 1e-10 relative: the two programs
//! differ only in rounding (matrix-product summation order, Adam's `÷ √(1 − β₂ᵗ)` against
//! faber's `· (1/√(1 − β₂ᵗ))`), which starts at ~1e-16 and had grown to 5e-14 after 780
//! steps when the reference was recorded; 1e-10 leaves a 2 000× margin for other CPUs'
//! kernels while any real difference (a different batch, a wrong gradient) is ≥ 1e-3.
//!
//! The committed trace (tests/reference/digits/trace.json) is always compared; when a
//! Python with torch and safetensors is found (`$FABER_TORCH_PYTHON`, else `python3`), the
//! reference is also rerun live on the init this run wrote.

use std::process::Command;

const RTOL: f64 = 1e-10;

fn losses(text: &str) -> Vec<f64> {
    text.lines()
        .filter_map(|l| l.strip_prefix("damnum "))
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

fn compare(faber: &[f64], torch: &[f64], what: &str) {
    assert_eq!(faber.len(), 780, "{what}: 20 epochs of 39 batches");
    assert_eq!(faber.len(), torch.len(), "{what}");
    for (i, (a, b)) in faber.iter().zip(torch).enumerate() {
        assert!(
            (a - b).abs() <= RTOL * b.abs(),
            "{what}: batch {i}: faber {a} vs torch {b}"
        );
    }
}

fn python_with_torch() -> Option<String> {
    let py = std::env::var("FABER_TORCH_PYTHON").unwrap_or_else(|_| "python3".to_string());
    let ok = Command::new(&py)
        .args(["-c", "import torch, safetensors, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(py)
}

#[test]
fn digits_matches_the_pytorch_reference() {
    let root = env!("CARGO_MANIFEST_DIR");
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-digits-ref");
    let out = Command::new(env!("CARGO_BIN_EXE_faber"))
        .args([
            "run",
            &format!("{root}/examples/digits"),
            "--",
            "--trace",
            "--out",
        ])
        .arg(&tmp)
        .env("NO_COLOR", "1")
        .output()
        .expect("the faber binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The committed reference was computed from this very init.
    let init = std::fs::read(tmp.join("init.safetensors")).unwrap();
    assert_eq!(
        init,
        std::fs::read(format!("{root}/tests/reference/digits/init.safetensors")).unwrap(),
        "faber's seeded init changed: rerun the reference (tests/reference/digits/README.md)"
    );

    let trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(format!("{root}/tests/reference/digits/trace.json")).unwrap(),
    )
    .unwrap();
    let want: Vec<f64> = trace["losses"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().parse().unwrap())
        .collect();
    let got = losses(&stdout);
    compare(&got, &want, "committed trace");

    // The example's own report: 20 epoch lines, a test accuracy of at least 0.95, a plot.
    assert_eq!(
        stdout.lines().filter(|l| l.starts_with("epoch ")).count(),
        20
    );
    let acc: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("test accuracy "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(acc >= 0.95, "test accuracy {acc}");
    let want_acc: f64 = trace["test_accuracy"].as_str().unwrap().parse().unwrap();
    assert_eq!(acc, want_acc, "the same predictions as torch");
    assert!(std::fs::read_to_string(tmp.join("loss.svg"))
        .unwrap()
        .contains("<polyline"));

    match python_with_torch() {
        Some(py) => {
            let r = Command::new(py)
                .arg(format!("{root}/tests/reference/digits_reference.py"))
                .arg(tmp.join("init.safetensors"))
                .output()
                .unwrap();
            assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
            compare(&got, &losses(&String::from_utf8_lossy(&r.stdout)), "live torch run");
        }
        None => eprintln!("digits_reference: no Python with torch, safetensors and numpy (set FABER_TORCH_PYTHON); compared with the committed trace only"),
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
