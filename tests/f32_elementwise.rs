//! The native f32 element-wise ops, reductions, shape copies, VJP helpers, seeded
//! constructors and AdamW (issue 21) against an independent reference: numpy float32
//! and exact sums (tests/reference/f32_elementwise.json, written by
//! tests/reference/f32_elementwise.py, whose docs define each comparison and bound).
//!
//! * [`every_op_matches_the_reference`]: the Tensor-level entries (`faber::tensor`) on
//!   f32 tensors give f32 tensors equal to the reference within the stated bound.
//! * [`the_evaluator_runs_every_op_in_f32`]: the same cases as a faber program under
//!   `--precision f32` (inputs loaded from an F32 safetensors file, results saved to
//!   one): every result is stored F32, equal to the reference, and the same bytes at 1
//!   and 2 threads.
//! * [`results_do_not_depend_on_the_thread_count`]: inputs large enough to split over
//!   threads give the same bits at 1 and 2 threads, and the binary ops equal their
//!   definition (one IEEE operation: the f64 result of two f32 rounded once).
//! * [`errors_stay_errors`]: bad shapes and domains are the f64 ops' errors.

mod common;

use common::Faber;
use faber::serialize::safetensors::{read_raw, write_with_dtypes, Dtype};
use faber::tensor::{self as k, AdamCoef, DType, SplitMix64, TResult, Tensor, TensorErrorKind};
use serde_json::Value;

fn cases() -> Vec<Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/f32_elementwise.json"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_u64().unwrap() as usize)
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_f64().unwrap())
        .collect()
}

/// The f32 tensor of a reference `{"shape", "bits"}`.
fn tensor(v: &Value) -> Tensor {
    let bits: Vec<f32> = v["bits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| f32::from_bits(b.as_u64().unwrap() as u32))
        .collect();
    Tensor::from_f32(bits, &usizes(&v["shape"])).unwrap()
}

/// One f32 ulp at `y` (the spacing above |y|; the smallest subnormal at 0).
fn ulp(y: f32) -> f64 {
    let a = y.abs();
    if !a.is_finite() {
        return 0.0;
    }
    (f32::from_bits(a.to_bits() + 1) as f64 - a as f64).max(f32::from_bits(1) as f64)
}

/// What an op gives: a tensor, a number, or AdamW's triple.
enum Got {
    T(Tensor),
    N(f64),
    Three(Tensor, Tensor, Tensor),
}

/// Runs a case's op on its inputs through the Tensor-level entries.
fn run(c: &Value) -> TResult<Got> {
    let ins: Vec<Tensor> = c["inputs"].as_array().unwrap().iter().map(tensor).collect();
    let p = &c["params"];
    let u = |key: &str| p[key].as_u64().unwrap() as usize;
    let f = |key: &str| p[key].as_f64().unwrap();
    let b = |key: &str| p[key].as_bool().unwrap();
    let t = |r: TResult<Tensor>| r.map(Got::T);
    match c["op"].as_str().unwrap() {
        "add" => t(k::add(&ins[0], &ins[1])),
        "sub" => t(k::sub(&ins[0], &ins[1])),
        "mul" => t(k::mul(&ins[0], &ins[1])),
        "div" => t(k::div(&ins[0], &ins[1])),
        "add_scalar" => t(k::add_scalar(&ins[0], f("s"))),
        "sub_scalar" => t(k::sub_scalar(&ins[0], f("s"))),
        "scale" => t(k::scale(&ins[0], f("s"))),
        "div_scalar" => t(k::div_scalar(&ins[0], f("s"))),
        "add_bias" => t(k::add_bias(&ins[0], &ins[1])),
        "neg" => t(k::neg(&ins[0])),
        "relu" => t(k::relu(&ins[0])),
        "positive" => t(k::positive(&ins[0])),
        "sqrt" => t(k::sqrt(&ins[0])),
        "reciprocal" => t(k::reciprocal(&ins[0])),
        "log" => t(k::log(&ins[0])),
        "sum_value" => Ok(Got::N(k::sum_value(&ins[0]))),
        "mean_value" => k::mean_value(&ins[0]).map(Got::N),
        "sum_axis" => t(k::sum_axis(&ins[0], u("axis"), b("keep"))),
        "mean_axis" => t(k::mean_axis(&ins[0], u("axis"), b("keep"))),
        "max_axis" => t(k::max_axis(&ins[0], u("axis"), b("keep"))),
        "argmax" => t(k::argmax(&ins[0])),
        "transpose" => t(k::transpose(&ins[0])),
        "transpose_last" => t(k::transpose_last(&ins[0])),
        "permute" => t(k::permute(&ins[0], &usizes(&p["axes"]))),
        "retro_permute" => {
            let inv = k::inverse_permutation(&usizes(&p["axes"]))?;
            t(k::permute(&ins[0], &inv))
        }
        "zeros_like" => t(Tensor::zeros_of(ins[0].dtype(), ins[0].shape())),
        "planata" => t(Tensor::from_flat_of(
            DType::F32,
            ins[0].values().to_vec(),
            ins[0].shape(),
        )),
        "slice_rows" => t(k::slice_rows(&ins[0], u("start"), u("end"))),
        "narrow" => t(k::narrow(&ins[0], u("axis"), u("start"), u("end"))),
        "concat" => t(k::concat(&[&ins[0], &ins[1]], u("axis"))),
        "causal_mask" => t(k::causal_mask(&ins[0], f("value"))),
        "narrow_backward" => t(k::narrow_backward(&ins[0], u("axis"), u("start"), &ins[1])),
        "concat_part" => t(k::concat_part(
            &ins[0],
            &ins[1],
            &ins[2],
            u("axis"),
            b("first"),
        )),
        "sum_to_shape" => t(k::sum_to_shape(&ins[0], &usizes(&p["shape"]))),
        "sum_axis_backward" => t(k::sum_axis_backward(&ins[0], &ins[1], u("axis"), b("mean"))),
        "max_axis_backward" => t(k::max_axis_backward(&ins[0], &ins[1], u("axis"))),
        "full_of" => t(Tensor::full_of(DType::F32, f("fill"), &usizes(&p["shape"]))),
        "from_flat_of" => t(Tensor::from_flat_of(
            DType::F32,
            floats(&p["data"]),
            &usizes(&p["shape"]),
        )),
        "uniform_tensor_of" => {
            let mut r = SplitMix64::new(p["seed"].as_u64().unwrap());
            t(r.uniform_tensor_of(DType::F32, &usizes(&p["shape"])))
        }
        "normal_tensor_of" => {
            let mut r = SplitMix64::new(p["seed"].as_u64().unwrap());
            t(r.normal_tensor_of(DType::F32, &usizes(&p["shape"]), f("mean"), f("std")))
        }
        "multinomial" => {
            let mut r = SplitMix64::new(p["seed"].as_u64().unwrap());
            t(r.multinomial(&ins[0]))
        }
        "adamw" => {
            let (p1, m1, v1) = k::adamw_step(&ins[0], &ins[1], &ins[2], &ins[3], &coef(c))?;
            Ok(Got::Three(p1, m1, v1))
        }
        other => panic!("unknown op {other}"),
    }
}

fn coef(c: &Value) -> AdamCoef {
    let x = floats(&c["params"]["coef"]);
    AdamCoef {
        beta1: x[0],
        one_minus_beta1: x[1],
        beta2: x[2],
        one_minus_beta2: x[3],
        inv_bc2_sqrt: x[4],
        eps: x[5],
        decay: x[6],
        step: x[7],
    }
}

fn f32s(t: &Tensor, what: &str) -> Vec<f32> {
    assert_eq!(t.dtype(), DType::F32, "{what}: not an f32 tensor");
    t.data_f32().unwrap().to_vec()
}

fn same_bits(got: &[f32], want: &[f32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
        assert!(ok, "{what} [{i}]: {g:e} ({:#x}), want {w:e}", g.to_bits());
    }
}

/// `|got − want| ≤ ulps·ulp(want) + abs` per element (NaN only with NaN).
fn within(got: &[f32], want: &[f32], ulps: f64, abs: impl Fn(usize) -> f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if w.is_nan() || g.is_nan() || w.is_infinite() {
            assert!(
                g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                "{what} [{i}]"
            );
            continue;
        }
        let tol = ulps * ulp(w) + abs(i);
        let d = (g as f64 - w as f64).abs();
        assert!(
            d <= tol,
            "{what} [{i}]: {g:e} vs {w:e} (|Δ| {d:e} > {tol:e})"
        );
    }
}

/// The sum bound: within ½ ulp + n·2⁻⁵³·Σ|t| of the exact value (`n` terms).
fn within_sum(got: &[f32], exact: &[f64], abs: &[f64], n: usize, what: &str) {
    assert_eq!(got.len(), exact.len(), "{what}: element count");
    for i in 0..got.len() {
        let tol = ulp(exact[i] as f32) / 2.0 + n as f64 * 2f64.powi(-53) * abs[i];
        let d = (got[i] as f64 - exact[i]).abs();
        assert!(
            d <= tol,
            "{what} [{i}]: {} vs {} ({d:e} > {tol:e})",
            got[i],
            exact[i]
        );
    }
}

/// Checks what a case's op gave against the reference, as its `cmp` says.
fn check(c: &Value, got: Got) {
    let name = c["name"].as_str().unwrap();
    match (c["cmp"].as_str().unwrap(), got) {
        ("exact", Got::T(t)) => {
            let want = tensor(&c["expect"]);
            assert_eq!(t.shape(), want.shape(), "{name}: shape");
            let g = f32s(&t, name);
            same_bits(&g, want.data_f32().unwrap(), name);
            if !c["np32"].is_null() {
                // The number operand's case: against numpy float32 within its bound.
                let np = tensor(&c["np32"]);
                let (ulps, ab) = (c["ulps"].as_f64().unwrap(), c["abs"].as_f64().unwrap());
                within(&g, np.data_f32().unwrap(), ulps, |_| ab, name);
            }
        }
        ("ulp1", Got::T(t)) => {
            let want = tensor(&c["expect"]);
            assert_eq!(t.shape(), want.shape(), "{name}: shape");
            within(
                &f32s(&t, name),
                want.data_f32().unwrap(),
                1.0,
                |_| 0.0,
                name,
            );
        }
        ("sum", Got::N(x)) => {
            let e = &c["expect"];
            let (want, ab) = (e["value"].as_f64().unwrap(), e["abs"].as_f64().unwrap());
            let n = e["n"].as_u64().unwrap() as f64;
            let tol = n * 2f64.powi(-53) * ab + 2f64.powi(-53) * want.abs();
            assert!((x - want).abs() <= tol, "{name}: {x} vs {want}");
        }
        ("sum", Got::T(t)) => {
            let e = &c["expect"];
            assert_eq!(t.shape(), &usizes(&e["shape"])[..], "{name}: shape");
            let n = e["n"].as_u64().unwrap() as usize;
            within_sum(
                &f32s(&t, name),
                &floats(&e["value"]),
                &floats(&e["abs"]),
                n,
                name,
            );
        }
        ("exact", Got::Three(p, m, v)) => check_adamw(c, &p, &m, &v),
        (cmp, _) => panic!("{name}: cmp {cmp} does not fit the result"),
    }
}

/// AdamW: the f64 step of the widened inputs rounded once (numpy float64) bit for bit,
/// and numpy's float32 replay within the replay's own error (u = 2⁻²⁴ per operation,
/// the coefficients' rounding included: m′ ≤ 3u·(|m·β₁| + |g·(1 − β₁)|),
/// v′ ≤ 4u·(|v·β₂| + g²·(1 − β₂)), p′ ≤ 2u·|p·decay| + 9u·(step/d)·(|m·β₁| +
/// |g·(1 − β₁)| + |m′|)) plus one ulp for the two final roundings.
fn check_adamw(c: &Value, p1: &Tensor, m1: &Tensor, v1: &Tensor) {
    let ins: Vec<Tensor> = c["inputs"].as_array().unwrap().iter().map(tensor).collect();
    let x = |i: usize| {
        ins[i]
            .data_f32()
            .unwrap()
            .iter()
            .map(|&v| v as f64)
            .collect::<Vec<_>>()
    };
    let (p, g, m, v) = (x(0), x(1), x(2), x(3));
    let co = coef(c);
    let (pg, mg, vg) = (f32s(p1, "p′"), f32s(m1, "m′"), f32s(v1, "v′"));
    same_bits(&pg, tensor(&c["expect"]).data_f32().unwrap(), "adamw p′");
    same_bits(&mg, tensor(&c["expect_m"]).data_f32().unwrap(), "adamw m′");
    same_bits(&vg, tensor(&c["expect_v"]).data_f32().unwrap(), "adamw v′");
    let u = 2f64.powi(-24);
    let am = |i: usize| (m[i] * co.beta1).abs() + (g[i] * co.one_minus_beta1).abs();
    let exact_m = |i: usize| m[i] * co.beta1 + g[i] * co.one_minus_beta1;
    let d = |i: usize| {
        let v1 = v[i] * co.beta2 + g[i] * g[i] * co.one_minus_beta2;
        v1.sqrt() * co.inv_bc2_sqrt + co.eps
    };
    let np = |key: &str| tensor(&c[key]).data_f32().unwrap().to_vec();
    within(
        &mg,
        &np("np32_m"),
        1.0,
        |i| 3.0 * u * am(i),
        "adamw m′ vs float32",
    );
    let av = |i: usize| (v[i] * co.beta2).abs() + g[i] * g[i] * co.one_minus_beta2;
    within(
        &vg,
        &np("np32_v"),
        1.0,
        |i| 4.0 * u * av(i),
        "adamw v′ vs float32",
    );
    let bp = |i: usize| {
        2.0 * u * (p[i] * co.decay).abs() + 9.0 * u * (co.step / d(i)) * (am(i) + exact_m(i).abs())
    };
    within(&pg, &np("np32"), 1.0, bp, "adamw p′ vs float32");
}

#[test]
fn every_op_matches_the_reference() {
    let cs = cases();
    assert!(cs.len() > 100);
    for c in &cs {
        let got = run(c).unwrap_or_else(|e| panic!("{}: {}", c["name"], e.message));
        check(c, got);
    }
}

/// The faber expressions for a case (inputs `i[0]`, `i[1]`, …; `z` an f32 seed), each
/// of which must give the case's result, and whether they give a number. `None` for
/// AdamW (a triple).
fn fab(c: &Value) -> Option<(Vec<String>, bool)> {
    let one = fab_one(c)?;
    let also = match c["op"].as_str().unwrap() {
        // The same results by the other spellings the evaluator runs.
        "add" => Some("i[0].retro_adde(i[1])".to_string()),
        "scale" => Some(one.0.replace(".scala(", ".multiplica(")),
        _ => None,
    };
    Some((std::iter::once(one.0).chain(also).collect(), one.1))
}

/// [`fab`]'s first expression.
fn fab_one(c: &Value) -> Option<(String, bool)> {
    let p = &c["params"];
    let n = |key: &str| literal(p[key].as_f64().unwrap());
    let u = |key: &str| p[key].as_u64().unwrap().to_string();
    let b = |key: &str| {
        if p[key].as_bool().unwrap() {
            "verum"
        } else {
            "falsum"
        }
    };
    let list = |key: &str| format!("{:?}", usizes(&p[key]));
    let e = match c["op"].as_str().unwrap() {
        "add" => "i[0].addita(i[1])".to_string(),
        "sub" => "i[0].subtrahe(i[1])".to_string(),
        "mul" => "i[0].multiplica(i[1])".to_string(),
        "div" => "i[0].divide(i[1])".to_string(),
        "add_scalar" => format!("i[0].addita({})", n("s")),
        "sub_scalar" => format!("i[0].subtrahe({})", n("s")),
        "scale" => format!("i[0].scala({})", n("s")),
        "div_scalar" => format!("i[0].divide({})", n("s")),
        "add_bias" => "i[0].addita_bias(i[1])".to_string(),
        "neg" => "i[0].neg()".to_string(),
        "relu" => "i[0].relu()".to_string(),
        "positive" => "i[0].positiva()".to_string(),
        "sqrt" => "i[0].sqrt()".to_string(),
        "reciprocal" => "i[0].reciproca()".to_string(),
        "log" => "i[0].log()".to_string(),
        "sum_value" => return Some(("i[0].summa()".into(), true)),
        "mean_value" => return Some(("i[0].media()".into(), true)),
        "sum_axis" => format!("i[0].summa_axis({}, {})", u("axis"), b("keep")),
        "mean_axis" => format!("i[0].media_axis({}, {})", u("axis"), b("keep")),
        "max_axis" => format!("i[0].maximum_axis({}, {})", u("axis"), b("keep")),
        "argmax" => "i[0].argmax()".to_string(),
        "transpose" => "i[0].transpone()".to_string(),
        "transpose_last" => "i[0].transpone_ultimas()".to_string(),
        "permute" => format!("i[0].permute({})", list("axes")),
        "retro_permute" => format!("i[0].retro_permute({})", list("axes")),
        "zeros_like" => "i[0].retro_nihil()".to_string(),
        "planata" => format!(
            "z.strue(i[0].planata(), {:?})",
            tensor(&c["inputs"][0]).shape()
        ),
        "slice_rows" => format!("i[0].sectio({}, {})", u("start"), u("end")),
        "narrow" => format!("i[0].angusta({}, {}, {})", u("axis"), u("start"), u("end")),
        "concat" => format!("i[0].concatena(i[1], {})", u("axis")),
        "causal_mask" => format!("i[0].larva_causalis({})", n("value")),
        "narrow_backward" => format!("i[0].retro_inpone({}, {}, i[1])", u("axis"), u("start")),
        "concat_part" => format!(
            "i[0].retro_pars(i[1], i[2], {}, {})",
            u("axis"),
            if p["first"].as_bool().unwrap() { 0 } else { 1 }
        ),
        "sum_to_shape" => format!("i[0].retro_ad_formam(z.crea(0.0, {}))", list("shape")),
        "sum_axis_backward" => format!("i[0].retro_dilata(i[1], {}, {})", u("axis"), b("mean")),
        "max_axis_backward" => format!("i[0].retro_maximum(i[1], {}, falsum)", u("axis")),
        "full_of" => format!("z.crea(0.0, {}).retro_imple({})", list("shape"), n("fill")),
        "from_flat_of" => {
            let data: Vec<String> = floats(&p["data"]).into_iter().map(literal).collect();
            format!("z.strue([{}], {})", data.join(", "), list("shape"))
        }
        "uniform_tensor_of" => format!("z.uniformis({}, {})", u("seed"), list("shape")),
        "normal_tensor_of" => format!(
            "z.normalis({}, {}, {}, {})",
            u("seed"),
            list("shape"),
            n("mean"),
            n("std")
        ),
        "multinomial" => format!("i[0].multinomialis({})", u("seed")),
        "adamw" => return None,
        other => panic!("unknown op {other}"),
    };
    Some((e, false))
}

/// A faber float literal of `x` that reads back as `x`.
fn literal(x: f64) -> String {
    let s = format!("{x:?}");
    match s.split_once('e') {
        Some((m, e)) if !m.contains('.') => format!("{m}.0e{e}"),
        _ => s,
    }
}

/// Writes the f32 tensors as an F32 safetensors file (leaves `0`, `1`, …).
fn write_f32(path: &std::path::Path, ts: &[Tensor]) {
    let names: Vec<String> = (0..ts.len()).map(|i| i.to_string()).collect();
    let items: Vec<(&str, &Tensor, Dtype)> = names
        .iter()
        .zip(ts)
        .map(|(n, t)| (n.as_str(), t, Dtype::F32))
        .collect();
    std::fs::write(path, write_with_dtypes(&items, &[]).unwrap()).unwrap();
}

/// The program for `cases`: each case's inputs loaded, its result appended.
fn program(cases: &[&Value]) -> (String, Vec<Tensor>) {
    let mut inputs = Vec::new();
    let mut body = String::new();
    for c in cases {
        let first = inputs.len();
        let ins = c["inputs"].as_array().unwrap();
        inputs.extend(ins.iter().map(tensor));
        // This case's inputs: `i<k>` (z when it has none).
        let mut args: Vec<String> = (0..ins.len())
            .map(|j| format!("e[{}]", first + j))
            .collect();
        if args.is_empty() {
            args.push("z".into());
        }
        let k = body.matches("fixum lista<tf32> i").count();
        body += &format!("    fixum lista<tf32> i{k} ← [{}]\n", args.join(", "));
        let own = |e: String| e.replace("i[", &format!("i{k}["));
        match fab(c) {
            Some((es, number)) => {
                for e in es {
                    let list = if number { "s" } else { "r" };
                    body += &format!("    {list}.appende({})\n", own(e));
                }
            }
            None => {
                body += &own(format!(
                    "    fixum [p1, m1, v1] ← i[0].adamw_passus(i[1], i[2], i[3], [{}])\n",
                    floats(&c["params"]["coef"])
                        .into_iter()
                        .map(literal)
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
                body += "    r.appende(p1)\n    r.appende(m1)\n    r.appende(v1)\n";
            }
        }
    }
    let templates: Vec<String> = inputs
        .iter()
        .map(|t| format!("z.crea(0.0, {:?})", t.shape()))
        .collect();
    let src = format!(
        "incipit {{\n    fixum tf32[] z ← vacua\n    fixum lista<tf32> forma ← [{}]\n    \
         fixum lista<tf32> e ← hospes.carga_tensores(\"in.safetensors\", forma)\n    \
         varia lista<tf32> r ← []\n    varia lista<f32> s ← []\n{body}    \
         hospes.serva_tensores(\"t.safetensors\", r)\n    \
         hospes.serva_tensores(\"n.safetensors\", s)\n}}\n",
        templates.join(", ")
    );
    (src, inputs)
}

#[test]
fn the_evaluator_runs_every_op_in_f32() {
    let all = cases();
    let cs: Vec<&Value> = all.iter().collect();
    let (src, inputs) = program(&cs);
    let dir = std::env::temp_dir().join(format!("faber-f32-elementwise-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("prog.fab"), &src).unwrap();
    write_f32(&dir.join("in.safetensors"), &inputs);
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = Faber::new()
            .args([
                "--threads",
                threads,
                "run",
                "--precision",
                "f32",
                "prog.fab",
            ])
            .current_dir(&dir)
            .output();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}\n{src}",
            String::from_utf8_lossy(&out.stderr)
        );
        outputs.push((
            std::fs::read(dir.join("t.safetensors")).unwrap(),
            std::fs::read(dir.join("n.safetensors")).unwrap(),
        ));
    }
    assert!(outputs[0] == outputs[1], "1 and 2 threads differ");
    let tensors = read_raw(&outputs[0].0).unwrap();
    let numbers = read_raw(&outputs[0].1).unwrap();
    let at = |f: &faber::serialize::safetensors::RawFile, i: usize, dtype: Dtype| {
        let r = f.tensors.iter().find(|r| r.name == i.to_string()).unwrap();
        assert_eq!(r.dtype, dtype, "result {i} is stored {}", r.dtype.name());
        r.to_tensor_as(if dtype == Dtype::F32 {
            DType::F32
        } else {
            DType::F64
        })
        .unwrap()
    };
    let (mut nt, mut nn) = (0, 0);
    for c in &cs {
        match fab(c) {
            Some((es, true)) => {
                for _ in es {
                    nn += 1;
                    check(c, Got::N(at(&numbers, nn - 1, Dtype::F64).item().unwrap()));
                }
            }
            Some((es, false)) => {
                for _ in es {
                    nt += 1;
                    check(c, Got::T(at(&tensors, nt - 1, Dtype::F32)));
                }
            }
            None => {
                nt += 3;
                let t = |i| at(&tensors, nt - 3 + i, Dtype::F32);
                check(c, Got::Three(t(0), t(1), t(2)));
            }
        }
    }
    assert_eq!(tensors.tensors.len(), nt);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A binary Tensor-level op.
type Bin = fn(&Tensor, &Tensor) -> TResult<Tensor>;
/// A unary op under test.
type Unary = dyn Fn(&Tensor) -> TResult<Tensor>;

fn randn(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f32> {
    let mut r = SplitMix64::new(seed);
    (0..n)
        .map(|_| (lo + (hi - lo) * r.uniform()) as f32)
        .collect()
}

fn t32(v: Vec<f32>, shape: &[usize]) -> Tensor {
    Tensor::from_f32(v, shape).unwrap()
}

/// `f` at 1 and at 2 threads: the same bits, returned.
fn both<R: PartialEq + std::fmt::Debug>(what: &str, f: impl Fn() -> R) -> R {
    let before = k::set_threads(1);
    let one = f();
    k::set_threads(2);
    let two = f();
    k::set_threads(before);
    assert!(one == two, "{what}: 1 and 2 threads differ");
    one
}

fn bits(t: TResult<Tensor>) -> Vec<u32> {
    let t = t.unwrap();
    assert_eq!(t.dtype(), DType::F32);
    t.data_f32().unwrap().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    // Above every kernel's split threshold (65 536 elements for the maps).
    let (r, c) = (300, 512);
    let n = r * c;
    let a = t32(randn(1, n, -3.0, 3.0), &[r, c]);
    let b = t32(randn(2, n, 0.5, 2.0), &[r, c]);
    let row = t32(randn(3, c, -1.0, 1.0), &[c]);
    let (ad, bd) = (a.data_f32().unwrap(), b.data_f32().unwrap());
    type Def = fn(f64, f64) -> f64;
    let ops: [(&str, Bin, Def); 4] = [
        ("add", k::add, |x, y| x + y),
        ("sub", k::sub, |x, y| x - y),
        ("mul", k::mul, |x, y| x * y),
        ("div", k::div, |x, y| x / y),
    ];
    for (name, op, def) in ops {
        let got = both(name, || bits(op(&a, &b)));
        for i in (0..n).step_by(97) {
            let want = def(ad[i] as f64, bd[i] as f64) as f32;
            assert_eq!(got[i], want.to_bits(), "{name} [{i}]");
        }
        both(name, || bits(op(&a, &row)));
    }
    both("add_bias", || bits(k::add_bias(&a, &row)));
    for s in [0.5, 0.1] {
        both("scale", || bits(k::scale(&a, s)));
        both("add_scalar", || bits(k::add_scalar(&a, s)));
        both("div_scalar", || bits(k::div_scalar(&a, s)));
    }
    both("neg", || bits(k::neg(&a)));
    both("relu", || bits(k::relu(&a)));
    both("positive", || bits(k::positive(&a)));
    both("sqrt", || bits(k::sqrt(&b)));
    both("reciprocal", || bits(k::reciprocal(&b)));
    both("log", || bits(k::log(&b)));
    for axis in 0..2 {
        both("sum_axis", || bits(k::sum_axis(&a, axis, false)));
        both("mean_axis", || bits(k::mean_axis(&a, axis, true)));
        both("max_axis", || bits(k::max_axis(&a, axis, false)));
    }
    both("sum_value", || k::sum_value(&a).to_bits());
    let a4 = t32(randn(4, n, -1.0, 1.0), &[4, 75, 8, 64]);
    both("permute", || bits(k::permute(&a4, &[0, 2, 1, 3])));
    both("permute last", || bits(k::permute(&a4, &[3, 1, 2, 0])));
    both("transpose", || bits(k::transpose(&a)));
    both("sum_to_shape", || bits(k::sum_to_shape(&a, &[c])));
    let p = t32(randn(5, n, -1.0, 1.0), &[n]);
    let g = t32(randn(6, n, -0.1, 0.1), &[n]);
    let m = t32(randn(7, n, -0.01, 0.01), &[n]);
    let v = t32(randn(8, n, 0.0, 1e-4), &[n]);
    let co = AdamCoef {
        beta1: 0.9,
        one_minus_beta1: 0.1,
        beta2: 0.999,
        one_minus_beta2: 1.0 - 0.999,
        inv_bc2_sqrt: 1.0 / (1.0 - 0.999f64.powi(3)).sqrt(),
        eps: 1e-8,
        decay: 1.0 - 1e-3 * 0.1,
        step: 1e-3 / (1.0 - 0.9f64.powi(3)),
    };
    both("adamw", || {
        let (p1, m1, v1) = k::adamw_step(&p, &g, &m, &v, &co).unwrap();
        (bits(Ok(p1)), bits(Ok(m1)), bits(Ok(v1)))
    });
}

#[test]
fn errors_stay_errors() {
    let x = t32(vec![1.0, -2.0, 3.0, 0.0, 5.0, 6.0], &[2, 3]);
    let y = t32(vec![1.0, 2.0], &[2]);
    let wide = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
    // Shape errors: the f64 op's error, word for word.
    let pairs: [(&str, Bin); 6] = [
        ("add", k::add),
        ("sub", k::sub),
        ("mul", k::mul),
        ("div", |a, b| k::div(a, &k::add_scalar(b, 10.0)?)),
        ("add_bias", k::add_bias),
        ("concat", |a, b| k::concat(&[a, b], 0)),
    ];
    for (name, op) in pairs {
        let e = op(&x, &y).expect_err(name);
        let e64 = op(&wide(&x), &wide(&y)).expect_err(name);
        assert_eq!((e.kind, &e.message), (e64.kind, &e64.message), "{name}");
        assert_eq!(e.kind, TensorErrorKind::Shape, "{name}");
    }
    let singles: [(&str, Box<Unary>); 9] = [
        ("permute", Box::new(|t| k::permute(t, &[0, 0]))),
        ("narrow", Box::new(|t| k::narrow(t, 1, 2, 5))),
        ("sum_axis", Box::new(|t| k::sum_axis(t, 2, false))),
        ("max_axis", Box::new(|t| k::max_axis(t, 3, false))),
        (
            "transpose",
            Box::new(|t| k::transpose(&k::reshape(t, &[6])?)),
        ),
        ("sum_to_shape", Box::new(|t| k::sum_to_shape(t, &[4]))),
        ("argmax", Box::new(|t| k::argmax(&k::narrow(t, 1, 0, 0)?))),
        (
            "causal_mask",
            Box::new(|t| k::causal_mask(&k::reshape(t, &[6])?, 0.0)),
        ),
        (
            "retro_dilata",
            Box::new(|t| k::sum_axis_backward(t, t, 1, true)),
        ),
    ];
    for (name, op) in singles {
        let e = op(&x).expect_err(name);
        let e64 = op(&wide(&x)).expect_err(name);
        assert_eq!((e.kind, &e.message), (e64.kind, &e64.message), "{name}");
    }
    // Domain errors, with the f64 ops' words (the element shown as the f32 it is).
    let domain = |r: TResult<Tensor>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind, TensorErrorKind::Domain);
        e.message
    };
    let zero = t32(vec![1.0, 0.0], &[2]);
    assert_eq!(domain(k::div(&y, &zero)), "divide: divisor element 0");
    assert_eq!(domain(k::div_scalar(&x, 0.0)), "divide: divisor element 0");
    assert_eq!(domain(k::log(&x)), "log: element -2 is not positive");
    assert_eq!(domain(k::sqrt(&x)), "sqrt: element -2 is negative");
    assert_eq!(domain(k::reciprocal(&x)), "reciproca: element 0");
    let tenth = t32(vec![-0.1], &[1]);
    assert_eq!(domain(k::log(&tenth)), "log: element -0.1 is not positive");
    // An empty tensor's mean, and AdamW's shape check.
    let empty = t32(vec![], &[0, 3]);
    assert_eq!(
        k::mean_value(&empty).unwrap_err().message,
        k::mean_value(&wide(&empty)).unwrap_err().message
    );
    let co = AdamCoef {
        beta1: 0.9,
        one_minus_beta1: 0.1,
        beta2: 0.99,
        one_minus_beta2: 0.01,
        inv_bc2_sqrt: 1.0,
        eps: 1e-8,
        decay: 1.0,
        step: 1e-3,
    };
    let e = k::adamw_step(&x, &x, &y, &x, &co).unwrap_err();
    assert_eq!(e.kind, TensorErrorKind::Shape);
    assert!(e.message.contains("first moment"), "{}", e.message);
}

/// Gradient trees: f32 zeros share one block per size, an accumulation into shared
/// zeros keeps its addend (bit for bit the sum) unless the addend holds a −0.0, and an
/// f32 tensor with an f64 one promotes to f64.
#[test]
fn f32_zeros_accumulations_and_promotion() {
    let z = Tensor::zeros_of(DType::F32, &[64, 70]).unwrap();
    let z2 = Tensor::zeros_of(DType::F32, &[70, 64]).unwrap();
    assert!(z.is_shared_zeros() && z.shares_storage(&z2));
    assert_eq!(z.dtype(), DType::F32);
    assert!(z.data_f32().unwrap().iter().all(|v| v.to_bits() == 0));
    let mut yv = randn(9, 64 * 70, -1.0, 1.0);
    let y = t32(yv.clone(), &[64, 70]);
    assert!(k::shared_zeros_add_is_addend(&z, &y));
    assert!(k::accumulation_is_addend(&z, &y));
    yv[17] = -0.0;
    let yn = t32(yv, &[64, 70]);
    assert!(!k::shared_zeros_add_is_addend(&z, &yn));
    let sum = k::add(&z, &yn).unwrap();
    assert_eq!(sum.data_f32().unwrap()[17].to_bits(), 0, "+0 + −0 = +0");
    // A small zero accumulator of −0.0 adds nothing; of +0.0 it does when y has −0.0.
    let small = t32(vec![-0.0; 4], &[4]);
    let w = t32(vec![-0.0, 1.0, 2.0, 3.0], &[4]);
    assert!(k::adds_nothing(&small, &w));
    assert!(!k::adds_nothing(&t32(vec![0.0; 4], &[4]), &w));
    assert!(!k::adds_nothing(&t32(vec![0.0, 1e-45, 0.0, 0.0], &[4]), &w));
    // Mixed types promote: the f32 operand widened exactly, an f64 result.
    let a = t32(vec![0.1, 2.0], &[2]);
    let b = Tensor::from_slice(&[0.1, 1e-20], &[2]).unwrap();
    let s = k::add(&a, &b).unwrap();
    assert_eq!(s.dtype(), DType::F64);
    assert_eq!(s.data(), &[0.1f32 as f64 + 0.1, 2.0 + 1e-20]);
    let c = k::concat(&[&a, &b], 0).unwrap();
    assert_eq!(c.dtype(), DType::F64);
    assert_eq!(c.data(), &[0.1f32 as f64, 2.0, 0.1, 1e-20]);
}
