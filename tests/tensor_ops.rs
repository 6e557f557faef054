//! Compares the tensor runtime (src/tensor/) with the reference data written by
//! tests/reference/tensor_ops.py (numpy float64 with the documented recipes,
//! mpmath for tanh). Python is not needed here: only the committed JSON is read.
//!
//! Comparison: `"cmp": "exact"` cases must match bit for bit (NaN matches NaN,
//! and the sign of zero counts); `"cmp": "rel"` cases (GEMM-kernel matmuls
//! against numpy's BLAS) allow `|a − b| ≤ 1e-12·max(1, |b|)`.

use faber::tensor::{self, SplitMix64, TResult, Tensor};
use serde_json::Value;

fn num(v: &Value) -> f64 {
    match v {
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) => match s.as_str() {
            "nan" => f64::NAN,
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            other => panic!("bad number {other}"),
        },
        other => panic!("bad number {other}"),
    }
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn tensor_of(v: &Value) -> Tensor {
    let shape = usizes(&v["shape"]);
    let data = v["data"].as_array().unwrap().iter().map(num).collect();
    Tensor::from_flat(data, &shape).unwrap()
}

fn run(op: &str, ins: &[Tensor], p: &Value) -> TResult<Tensor> {
    let u = |k: &str| p[k].as_u64().unwrap() as usize;
    let f = |k: &str| num(&p[k]);
    let b = |k: &str| p[k].as_bool().unwrap();
    let shape = || usizes(&p["shape"]);
    let rng = || SplitMix64::new(p["seed"].as_u64().unwrap());
    match op {
        "full" => Tensor::full(f("fill"), &shape()),
        "zeros" => Tensor::zeros(&shape()),
        "from_flat" => Tensor::from_flat(ins[0].data().to_vec(), &shape()),
        "reshape" => tensor::reshape(&ins[0], &shape()),
        "transpose" => tensor::transpose(&ins[0]),
        "permute" => tensor::permute(&ins[0], &usizes(&p["axes"])),
        "slice_rows" => tensor::slice_rows(&ins[0], u("start"), u("end")),
        "narrow" => tensor::narrow(&ins[0], u("axis"), u("start"), u("end")),
        "concat" => tensor::concat(&ins.iter().collect::<Vec<_>>(), u("axis")),
        "add" => tensor::add(&ins[0], &ins[1]),
        "sub" => tensor::sub(&ins[0], &ins[1]),
        "mul" => tensor::mul(&ins[0], &ins[1]),
        "div" => tensor::div(&ins[0], &ins[1]),
        "add_bias" => tensor::add_bias(&ins[0], &ins[1]),
        "neg" => tensor::neg(&ins[0]),
        "scale" => tensor::scale(&ins[0], f("factor")),
        "reciprocal" => tensor::reciprocal(&ins[0]),
        "exp" => tensor::exp(&ins[0]),
        "log" => tensor::log(&ins[0]),
        "sqrt" => tensor::sqrt(&ins[0]),
        "relu" => tensor::relu(&ins[0]),
        "tanh" => tensor::tanh(&ins[0]),
        "tanh_exp_identity" => tensor::tanh_exp_identity(&ins[0]),
        "gelu" => tensor::gelu(&ins[0]),
        "gelu_exp_identity" => tensor::gelu_exp_identity(&ins[0]),
        "sum" => tensor::sum(&ins[0]),
        "mean" => tensor::mean(&ins[0]),
        "sum_axis" => tensor::sum_axis(&ins[0], u("axis"), b("keep")),
        "mean_axis" => tensor::mean_axis(&ins[0], u("axis"), b("keep")),
        "max_axis" => tensor::max_axis(&ins[0], u("axis"), b("keep")),
        "argmax" => tensor::argmax(&ins[0]),
        "matmul" => tensor::matmul(&ins[0], &ins[1]),
        "matmul_exact" => tensor::matmul_exact(&ins[0], &ins[1]),
        "matmul_fast" => tensor::matmul_fast(&ins[0], &ins[1]),
        "softmax" => tensor::softmax(&ins[0]),
        "log_softmax" => tensor::log_softmax(&ins[0]),
        "layernorm" => tensor::layernorm(&ins[0], u("axis"), f("eps"), &ins[1], &ins[2]),
        "cross_entropy" => tensor::cross_entropy(&ins[0], &ins[1]),
        "cross_entropy_indices" => tensor::cross_entropy_indices(&ins[0], &ins[1]),
        "embedding" => tensor::embedding(&ins[0], &ins[1]),
        "causal_mask" => tensor::causal_mask(&ins[0], f("value")),
        "sum_to_shape" => tensor::sum_to_shape(&ins[0], &shape()),
        "embedding_backward" => tensor::embedding_backward(&ins[0], &ins[1], u("vocab")),
        "pad_axis" => tensor::pad_axis(&ins[0], u("axis"), u("start"), u("full")),
        "rng_u64" => {
            let mut r = rng();
            Tensor::vector((0..8).map(|_| (r.next_u64() >> 11) as f64).collect())
        }
        "rng_uniform" => rng().uniform_tensor(&shape()),
        "rng_normal" => rng().normal_tensor(&shape(), f("mean"), f("std")),
        "rng_multinomial" => rng().multinomial(&ins[0]),
        "rng_below" => {
            let mut r = rng();
            let n = p["n"].as_u64().unwrap();
            Tensor::vector((0..10).map(|_| r.below(n).unwrap() as f64).collect())
        }
        other => panic!("unknown op {other}"),
    }
}

fn same(a: f64, b: f64, rel: bool) -> bool {
    if a.is_nan() || b.is_nan() {
        return a.is_nan() && b.is_nan();
    }
    if rel {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    } else {
        a.to_bits() == b.to_bits()
    }
}

#[test]
fn reference_cases() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/tensor_ops.json"
    ))
    .unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    let mut failures = Vec::new();
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let ins: Vec<Tensor> = c["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(tensor_of)
            .collect();
        let got = run(c["op"].as_str().unwrap(), &ins, &c["params"]);
        let rel = c["cmp"] == "rel";
        match (got, c.get("error")) {
            (Err(e), Some(kind)) if e.kind.name() == kind.as_str().unwrap() => {}
            (Err(e), Some(kind)) => {
                failures.push(format!("{name}: expected {kind} error, got {e:?}"))
            }
            (Ok(t), Some(kind)) => failures.push(format!(
                "{name}: expected {kind} error, got {:?}",
                t.shape()
            )),
            (Err(e), None) => failures.push(format!("{name}: unexpected error {e:?}")),
            (Ok(t), None) => {
                let want = tensor_of(&c["expect"]);
                if t.shape() != want.shape() {
                    failures.push(format!(
                        "{name}: shape {:?} != {:?}",
                        t.shape(),
                        want.shape()
                    ));
                    continue;
                }
                let bad: Vec<_> = t
                    .data()
                    .iter()
                    .zip(want.data())
                    .enumerate()
                    .filter(|(_, (a, b))| !same(**a, **b, rel))
                    .collect();
                if let Some((i, (a, b))) = bad.first() {
                    failures.push(format!(
                        "{name}: {} of {} differ; first [{i}] {a:?} != {b:?}",
                        bad.len(),
                        t.numel()
                    ));
                }
            }
        }
    }
    assert!(cases.len() > 200, "reference data looks truncated");
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The points of a committed reference file: its `x` list and the `key` list of
/// correctly rounded values.
fn reference_points(file: &str, key: &str) -> (Vec<f64>, Vec<f64>) {
    let path = format!("{}/tests/reference/{file}", env!("CARGO_MANIFEST_DIR"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let list = |k: &str| {
        doc[k]
            .as_array()
            .unwrap()
            .iter()
            .map(num)
            .collect::<Vec<f64>>()
    };
    (list("x"), list(key))
}

#[test]
fn tanh_is_correctly_rounded() {
    let (xs, ys) = reference_points("tensor_tanh.json", "tanh");
    assert!(xs.len() > 5000);
    let (mut wrong, mut libm_differs, mut identity_differs) = (Vec::new(), 0, 0);
    for (&x, &y) in xs.iter().zip(&ys) {
        let got = tensor::tanh_cr(x);
        if got.to_bits() != y.to_bits() {
            wrong.push(format!("tanh({x:e}) = {got:e}, want {y:e}"));
        }
        libm_differs += usize::from(x.tanh().to_bits() != y.to_bits());
        identity_differs += usize::from(tensor::tanh_exp(x).to_bits() != y.to_bits());
        // Odd symmetry is exact too.
        assert_eq!(tensor::tanh_cr(-x).to_bits(), (-got).to_bits());
    }
    eprintln!(
        "tanh: {} points; tanh_cr wrong on {}; f64::tanh differs on {libm_differs}; exp identity differs on {identity_differs}",
        xs.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// `exp_cr` (every tensor `exp` and the softmax family) against mpmath's exp at
/// 300 bits rounded once, subnormal results included; libm's `exp` is reported.
#[test]
fn exp_is_correctly_rounded() {
    let (xs, ys) = reference_points("tensor_exp.json", "exp");
    assert!(xs.len() > 5000);
    let mut wrong = Vec::new();
    let mut libm_differs = 0;
    for (&x, &y) in xs.iter().zip(&ys) {
        let got = tensor::exp_cr(x);
        if got.to_bits() != y.to_bits() {
            wrong.push(format!("exp({x:e}) = {got:e}, want {y:e}"));
        }
        libm_differs += usize::from(x.exp().to_bits() != y.to_bits());
    }
    // The tensor op maps the whole slice through the vectorised path.
    let t = tensor::Tensor::from_slice(&xs, &[xs.len()]).unwrap();
    let e = tensor::exp(&t).unwrap();
    for ((&x, &y), &got) in xs.iter().zip(&ys).zip(e.data()) {
        if got.to_bits() != y.to_bits() {
            wrong.push(format!("tensor exp({x:e}) = {got:e}, want {y:e}"));
        }
    }
    eprintln!(
        "exp: {} points; exp_cr wrong on {}; f64::exp differs on {libm_differs}",
        xs.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A larger offline check: `TENSOR_TANH_BULK=file.json cargo test --test
/// tensor_ops -- --ignored` with a file in tensor_tanh.json's format (e.g.
/// 100 000 random points written by the same mpmath code).
#[test]
#[ignore]
fn tanh_bulk_from_env() {
    let path = std::env::var("TENSOR_TANH_BULK").expect("set TENSOR_TANH_BULK");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let xs: Vec<f64> = doc["x"].as_array().unwrap().iter().map(num).collect();
    let ys: Vec<f64> = doc["tanh"].as_array().unwrap().iter().map(num).collect();
    let wrong = xs
        .iter()
        .zip(&ys)
        .filter(|(x, y)| tensor::tanh_cr(**x).to_bits() != y.to_bits())
        .count();
    let libm = xs
        .iter()
        .zip(&ys)
        .filter(|(x, y)| x.tanh().to_bits() != y.to_bits())
        .count();
    eprintln!(
        "bulk tanh: {} points, tanh_cr wrong on {wrong}, f64::tanh differs on {libm}",
        xs.len()
    );
    assert_eq!(wrong, 0);
}
