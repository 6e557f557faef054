//! What the many-device tests share (tests/xla_spmd.rs,
//! tests/xla_tensor_parallel.rs): a gradient file read back as f32 leaves, and the
//! element-wise comparison within per-element bounds.
#![allow(dead_code)]

use std::collections::BTreeMap;

/// The f32 tensors of a safetensors file by name (a gradient written with `--grads`;
/// the parameter record's numbers, not f32, are left out).
pub fn safetensors(path: &std::path::Path) -> BTreeMap<String, Vec<f32>> {
    let bytes = std::fs::read(path).expect("the gradient file");
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    let header: serde_json::Value = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
    let data = &bytes[8 + n..];
    let mut out = BTreeMap::new();
    for (name, v) in header.as_object().unwrap() {
        if name == "__metadata__" {
            continue;
        }
        // The parameter record's numbers (the head count) are no gradient.
        if v["dtype"] != "F32" {
            continue;
        }
        let offsets = v["data_offsets"].as_array().unwrap();
        let (a, b) = (
            offsets[0].as_u64().unwrap() as usize,
            offsets[1].as_u64().unwrap() as usize,
        );
        let values = data[a..b]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        out.insert(name.clone(), values);
    }
    out
}

/// Each `got[i]` within `tol[i]` of `want[i]`.
pub fn close(got: &[f32], want: &[f32], tol: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, ((g, w), t)) in got.iter().zip(want).zip(tol).enumerate() {
        let d = (f64::from(*g) - f64::from(*w)).abs();
        assert!(d <= *t, "{what}[{i}]: {g} against {w}, |Δ| {d:e} > {t:e}");
    }
}
