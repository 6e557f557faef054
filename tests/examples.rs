//! The gradus example programs (examples/linear-regression, examples/mlp, examples/bert-tiny)
//! run with the faber binary; every loss they print (one per line) must agree with the
//! independent numpy reference tests/reference/examples.json (written by
//! tests/reference/examples_ref.py, hand-written forward and backward passes) to 1e-9
//! relative tolerance.

mod common;

use serde_json::Value;

const RTOL: f64 = 1e-9;

fn reference() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/examples.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("examples.json exists"))
        .expect("examples.json parses")
}

fn check(example: &str) {
    let dir = format!("{}/examples/{example}", env!("CARGO_MANIFEST_DIR"));
    let out = common::faber(&["run", &dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{example}: exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<f64> = reference()[example]
        .as_array()
        .unwrap_or_else(|| panic!("{example} missing from examples.json"))
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect();
    let got: Vec<f64> = stdout
        .lines()
        .map(|l| {
            l.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("{example}: not a loss: {l:?}"))
        })
        .collect();
    assert_eq!(
        got.len(),
        want.len(),
        "{example}: {} losses printed, {} expected\n{stdout}",
        got.len(),
        want.len()
    );
    for (step, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            g.is_finite() && (g - w).abs() <= RTOL * w.abs(),
            "{example}: step {step}: faber {g}, reference {w} (relative error {:e})",
            (g - w).abs() / w.abs()
        );
    }
}

#[test]
fn linear_regression_trace_matches_the_reference() {
    check("linear-regression");
}

#[test]
fn mlp_trace_matches_the_reference() {
    check("mlp");
}

#[test]
fn bert_tiny_trace_matches_the_reference() {
    check("bert-tiny");
}

#[test]
fn each_trace_decreases() {
    // Guards the reference itself: a trace of SGD on these small problems goes down.
    let doc = reference();
    for example in ["linear-regression", "mlp", "bert-tiny"] {
        let v: Vec<f64> = doc[example]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        assert!(v.len() >= 8, "{example}");
        assert!(v.last().unwrap() < &v[0], "{example}: {v:?}");
    }
}
