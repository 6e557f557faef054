//! examples/classifier (an MLP trained with integer-target cross-entropy and AdamW through
//! `gradus:gradient` and `gradus:optimize`) runs with the faber binary; every loss it prints
//! (one per line) must agree with the independent numpy reference
//! tests/reference/classifier.json (written by tests/reference/classifier_ref.py: hand-written
//! forward, backward and AdamW) to 1e-9 relative tolerance, and its final `accuratio` line
//! must equal the reference's training accuracy.

mod common;

use serde_json::Value;

const RTOL: f64 = 1e-9;

fn reference() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/classifier.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("classifier.json exists"))
        .expect("classifier.json parses")
}

fn losses(doc: &Value) -> Vec<f64> {
    doc["losses"]
        .as_array()
        .expect("losses is a list")
        .iter()
        .map(|v| v.as_f64().expect("a number"))
        .collect()
}

#[test]
fn classifier_trace_and_accuracy_match_the_reference() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/classifier");
    let out = common::faber(&["run", dir]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "exit {:?}\n{stdout}\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = reference();
    let want = losses(&doc);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines.len(),
        want.len() + 1,
        "{} lines printed, {} losses and one accuracy line expected\n{stdout}",
        lines.len(),
        want.len()
    );
    for (step, (line, w)) in lines.iter().zip(&want).enumerate() {
        let g: f64 = line
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("step {step}: not a loss: {line:?}"));
        assert!(
            g.is_finite() && (g - w).abs() <= RTOL * w.abs(),
            "step {step}: faber {g}, reference {w} (relative error {:e})",
            (g - w).abs() / w.abs()
        );
    }
    let last = lines[want.len()];
    let acc: f64 = last
        .strip_prefix("accuratio ")
        .unwrap_or_else(|| panic!("last line is not `accuratio …`: {last:?}"))
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not an accuracy: {last:?}"));
    let correct = doc["correct"].as_f64().expect("correct");
    let points = doc["points"].as_f64().expect("points");
    assert_eq!(
        acc,
        correct / points,
        "accuracy {acc}, reference {correct}/{points}"
    );
}

#[test]
fn the_reference_trace_learns() {
    // Guards the reference itself: 60 AdamW steps lower the loss from about ln 3 and the
    // trained model classifies most training points correctly.
    let doc = reference();
    let v = losses(&doc);
    assert_eq!(v.len(), 60);
    assert!((v[0] - 3f64.ln()).abs() < 0.1, "{}", v[0]);
    assert!(v.last().unwrap() < &(0.5 * v[0]), "{v:?}");
    assert!(
        doc["accuracy"].as_f64().unwrap() > 0.8,
        "{}",
        doc["accuracy"]
    );
}
