//! The f32 row kernels wired into the tensor ops (issue 21): exp, tanh, GELU, SiLU and
//! their VJPs and exp-identity forms, softmax and log-softmax and their VJPs, LayerNorm,
//! RMSNorm, the cross-entropies and the embedding, each called through its Tensor-level
//! entry (`faber::tensor::gelu`, `layernorm`, …) on f32 tensors.
//!
//! * Against an independent reference: tests/reference/f32_rows.json, written by
//!   tests/reference/f32_rows.py with numpy in float64 from the same f32 inputs. Each
//!   result is an F32 tensor (the losses f64 numbers) within its op's stated bound:
//!   faithful rounding (exp, tanh, GELU, SiLU, softmax), or `½ ulp + ε·mag` with `mag`
//!   from the reference script and ε per op ([`eps`]; the f64 reference's own error,
//!   2⁻⁵⁰·mag, is added), or bit for bit (the gather, an f32 product).
//! * The same bits on one and on two threads, at sizes that split between threads.
//! * Bad shapes and ids are the same errors, with the same messages, as in f64.
//! * Mixed f32/f64 operands are promoted to f64, as the evaluator's rule says.
//!
//! The evaluator's side (the ops reach these entries natively in an f32 run) is
//! tests/f32_rows_eval.rs.

use std::collections::HashMap;

use faber::tensor::{self as k, DType, TResult, Tensor};
use serde_json::Value as J;

struct Case {
    op: String,
    inputs: HashMap<String, Tensor>,
    params: HashMap<String, f64>,
    /// Per result: (reference, magnitude) per element.
    outputs: Vec<(Vec<f64>, Vec<f64>)>,
}

impl Case {
    fn t(&self, name: &str) -> &Tensor {
        &self.inputs[name]
    }
    fn p(&self, name: &str) -> f64 {
        self.params[name]
    }
}

fn numbers(v: &J) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn cases() -> Vec<Case> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference/f32_rows.json");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("reference JSON")).unwrap();
    v["cases"]
        .as_array()
        .expect("cases")
        .iter()
        .map(|c| {
            let inputs = c["inputs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, t)| {
                    let shape: Vec<usize> =
                        numbers(&t["shape"]).iter().map(|&d| d as usize).collect();
                    let bits = numbers(&t["bits"]);
                    let data = bits.iter().map(|&b| f32::from_bits(b as u32)).collect();
                    (name.clone(), Tensor::from_f32(data, &shape).unwrap())
                })
                .collect();
            let params = c["params"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, x)| (name.clone(), x.as_f64().unwrap()))
                .collect();
            let outputs = c["outputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| (numbers(&o["ref"]), numbers(&o["mag"])))
                .collect();
            Case {
                op: c["op"].as_str().unwrap().to_string(),
                inputs,
                params,
                outputs,
            }
        })
        .collect()
}

/// What an op gives: tensors, or a number (the losses).
#[derive(Debug)]
enum Got {
    Tensors(Vec<Tensor>),
    Number(f64),
}

impl Got {
    fn bits(&self) -> Vec<u64> {
        match self {
            Got::Number(v) => vec![v.to_bits()],
            Got::Tensors(ts) => ts
                .iter()
                .flat_map(|t| t.values().iter().map(|v| v.to_bits()).collect::<Vec<_>>())
                .collect(),
        }
    }
}

/// The case's op through its Tensor-level entry.
fn run(c: &Case) -> TResult<Got> {
    let one = |t: TResult<Tensor>| t.map(|t| Got::Tensors(vec![t]));
    let two = |t: TResult<(Tensor, Tensor)>| t.map(|(a, b)| Got::Tensors(vec![a, b]));
    let three =
        |t: TResult<(Tensor, Tensor, Tensor)>| t.map(|(a, b, c)| Got::Tensors(vec![a, b, c]));
    match c.op.as_str() {
        "exp" => one(k::exp(c.t("x"))),
        "tanh" => one(k::tanh(c.t("x"))),
        "tanh_per_exp" => one(k::tanh_exp_identity(c.t("x"))),
        "gelu" => one(k::gelu(c.t("x"))),
        "gelu_per_exp" => one(k::gelu_exp_identity(c.t("x"))),
        "gelu_cum_derivata" => two(k::gelu_cum_derivata(c.t("x"))),
        "retro_gelu" => one(k::gelu_backward(c.t("g"), c.t("x"))),
        "retro_gelu_per_exp" => one(k::gelu_exp_identity_backward(c.t("g"), c.t("x"))),
        "retro_gelu_derivata" => one(k::gelu_backward_derivata(c.t("g"), c.t("d"))),
        "silu" => one(k::silu(c.t("x"))),
        "retro_silu" => one(k::silu_backward(c.t("g"), c.t("x"))),
        "softmax" => one(k::softmax(c.t("x"))),
        "log_softmax" => one(k::log_softmax(c.t("x"))),
        "retro_softmax" => one(k::softmax_backward(c.t("g"), c.t("y"))),
        "retro_log_softmax" => one(k::log_softmax_backward(c.t("g"), c.t("x"))),
        "laminatio" => {
            let x = c.t("x");
            one(k::layernorm(
                x,
                x.rank() - 1,
                c.p("eps"),
                c.t("gamma"),
                c.t("beta"),
            ))
        }
        "retro_laminatio" => three(k::layernorm_backward(
            c.t("g"),
            c.t("x"),
            c.p("eps"),
            c.t("gamma"),
        )),
        "retro_laminatio_adde" => three(k::layernorm_backward_adde(
            c.t("g"),
            c.t("x"),
            c.p("eps"),
            c.t("gamma"),
            Some(c.t("r")),
        )),
        "rms_norm" => {
            let x = c.t("x");
            one(k::rms_norm(x, x.rank() - 1, c.p("eps"), c.t("gamma")))
        }
        "retro_rms_norm" => two(k::rms_norm_backward(
            c.t("g"),
            c.t("x"),
            c.p("eps"),
            c.t("gamma"),
        )),
        "crux_entropia" => k::cross_entropy_value(c.t("x"), c.t("t")).map(Got::Number),
        "crux_entropia_indices" => {
            k::cross_entropy_indices_value(c.t("z"), c.t("y")).map(Got::Number)
        }
        "retro_crux_entropia" => one(k::cross_entropy_backward(c.p("g"), c.t("x"), c.t("t"))),
        "retro_crux_scopi" => one(k::cross_entropy_targets_backward(c.p("g"), c.t("x"))),
        "retro_crux_indices" => one(k::cross_entropy_indices_backward(
            c.p("g"),
            c.t("z"),
            c.t("y"),
        )),
        "collige" => one(k::embedding(c.t("table"), c.t("ids"))),
        "retro_collige" => one(k::embedding_table_backward(
            c.t("ids"),
            c.t("g"),
            c.t("table"),
        )),
        other => panic!("no entry for {other}"),
    }
}

/// How a result is compared with its reference.
enum Bound {
    /// One of the two f32 neighbours of the exact value.
    Faithful,
    /// The f32 that numpy's float32 gives, bit for bit.
    Exact,
    /// Within `½ ulp + ε·mag` (numbers: `ε·mag`).
    Eps(f64),
}

/// The stated bound of output `i` of a case (the kernels' module docs; c, d the last
/// axis, `rows` the other elements, N all elements).
fn eps(c: &Case, i: usize) -> Bound {
    let p = |e: i32| 2f64.powi(e);
    let first = c.inputs.values().next().unwrap();
    let x = c.inputs.get("x").or(c.inputs.get("z")).unwrap_or(first);
    let last = *x.shape().last().unwrap_or(&1) as f64;
    let rows = (x.numel() as f64 / last).max(1.0);
    let n = x.numel() as f64;
    match (c.op.as_str(), i) {
        ("exp" | "tanh" | "gelu" | "silu" | "softmax" | "gelu_cum_derivata", 0) => Bound::Faithful,
        ("collige" | "retro_gelu_derivata", _) => Bound::Exact,
        ("tanh_per_exp", _) => Bound::Eps(p(-49)),
        ("gelu_per_exp", _) => Bound::Eps(p(-48)),
        ("gelu_cum_derivata" | "retro_gelu", _) => Bound::Eps(p(-44)),
        ("retro_gelu_per_exp" | "retro_silu" | "log_softmax" | "retro_softmax", _) => {
            Bound::Eps(p(-47))
        }
        ("retro_log_softmax", _) => Bound::Eps((last + 4.0) * p(-50)),
        ("laminatio", _) => Bound::Eps((last / 8.0 + 4.0) * p(-51)),
        ("retro_laminatio" | "retro_laminatio_adde", 0) => Bound::Eps((last / 8.0 + 4.0) * p(-50)),
        ("retro_laminatio" | "retro_laminatio_adde", 1) => {
            Bound::Eps((rows + last / 8.0 + 8.0) * p(-52))
        }
        ("retro_laminatio" | "retro_laminatio_adde", _) => Bound::Eps((rows + 1.0) * p(-53)),
        ("rms_norm", _) => Bound::Eps((last / 8.0 + 6.0) * p(-52)),
        ("retro_rms_norm", 0) => Bound::Eps((last / 8.0 + 6.0) * p(-51)),
        ("retro_rms_norm", _) => Bound::Eps((rows + last / 8.0 + 8.0) * p(-52)),
        ("crux_entropia_indices", _) => Bound::Eps((last / 8.0 + rows + 8.0) * p(-52)),
        ("retro_crux_indices", _) => Bound::Eps((last / 8.0 + 8.0) * p(-50)),
        ("crux_entropia", _) => Bound::Eps((last + n + 8.0) * p(-50)),
        ("retro_crux_entropia", _) => Bound::Eps((last + 4.0) * p(-48)),
        ("retro_crux_scopi", _) => Bound::Eps((last + 4.0) * p(-50)),
        ("retro_collige", _) => Bound::Eps((c.t("ids").numel() as f64 + 1.0) * p(-53)),
        (op, _) => panic!("no bound for {op}"),
    }
}

/// The spacing of the f32 numbers at magnitude `a` (the larger binade's at a power of 2).
fn ulp32(a: f64) -> f64 {
    let a = a.abs();
    if a < f32::MIN_POSITIVE as f64 {
        return 2f64.powi(-149);
    }
    2f64.powi(a.log2().floor() as i32 - 23)
}

fn check(c: &Case, at: usize, got: &Got) -> Result<(), String> {
    let values: Vec<Vec<f64>> = match got {
        Got::Number(v) => vec![vec![*v]],
        Got::Tensors(ts) => {
            for t in ts {
                if t.dtype() != DType::F32 {
                    return Err(format!("{}: an {:?} result", c.op, t.dtype()));
                }
            }
            ts.iter().map(|t| t.values().into_owned()).collect()
        }
    };
    if values.len() != c.outputs.len() {
        return Err(format!("{}: {} results", c.op, values.len()));
    }
    let number = matches!(got, Got::Number(_));
    for (i, (vals, (refs, mags))) in values.iter().zip(&c.outputs).enumerate() {
        if vals.len() != refs.len() {
            return Err(format!(
                "{} #{at} result {i}: {} elements",
                c.op,
                vals.len()
            ));
        }
        let bound = eps(c, i);
        for (j, ((&v, &r), &m)) in vals.iter().zip(refs).zip(mags).enumerate() {
            let err = (v - r).abs();
            let big = v.abs().max(r.abs());
            let ok = match bound {
                Bound::Faithful => err < ulp32(big) + 2f64.powi(-50) * r.abs(),
                Bound::Exact => v.to_bits() == r.to_bits(),
                Bound::Eps(e) => {
                    let mut tol = (e + 2f64.powi(-50)) * m;
                    if !number {
                        tol += ulp32(big) / 2.0;
                    }
                    if c.op == "retro_laminatio_adde" && i == 0 {
                        // ∂x is rounded once before the addend is added.
                        let r_in = c.t("r").values();
                        let ri = r_in[j % r_in.len()];
                        tol += ulp32((r - ri).abs()) / 2.0;
                    }
                    err <= tol
                }
            };
            if !ok {
                return Err(format!(
                    "{} #{at} result {i} [{j}]: {v:e} against the reference {r:e} (error {err:e}, mag {m:e})",
                    c.op
                ));
            }
        }
    }
    Ok(())
}

/// Every case within its bound, on one thread and on two (the same bits), and every op
/// of the JSON covered.
#[test]
fn every_op_matches_the_reference() {
    let cases = cases();
    let mut seen = std::collections::BTreeSet::new();
    let mut failures = Vec::new();
    for (at, c) in cases.iter().enumerate() {
        seen.insert(c.op.clone());
        let before = k::set_threads(1);
        let one = run(c).unwrap_or_else(|e| panic!("{} #{at}: {e:?}", c.op));
        k::set_threads(2);
        let two = run(c).unwrap();
        k::set_threads(before);
        assert_eq!(one.bits(), two.bits(), "{} #{at}: threads", c.op);
        if let Err(e) = check(c, at, &one) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(seen.len(), 27, "{seen:?}");
}

/// The reference check can fail: a result rounded to f32 after an f32 accumulation
/// (here the LayerNorm of a row summed in f32) is outside the bound.
#[test]
fn the_bounds_reject_an_f32_accumulation() {
    let cases = cases();
    let c = cases.iter().find(|c| c.op == "laminatio").unwrap();
    let x = c.t("x");
    let d = *x.shape().last().unwrap();
    let (xs, g, b) = (x.values(), c.t("gamma").values(), c.t("beta").values());
    let mut y = Vec::new();
    for row in xs.chunks(d) {
        let mean = row.iter().map(|&v| v as f32).sum::<f32>() / d as f32;
        let var = row.iter().map(|&v| (v as f32 - mean).powi(2)).sum::<f32>() / d as f32;
        let inv = 1.0 / (var + c.p("eps") as f32).sqrt();
        for j in 0..d {
            y.push(((row[j] as f32 - mean) * inv) * g[j] as f32 + b[j] as f32);
        }
    }
    let naive = Got::Tensors(vec![Tensor::from_f32(y, x.shape()).unwrap()]);
    assert!(check(c, 0, &naive).is_err());
    // and a faithful op rejects a result one ulp off
    let c = cases.iter().find(|c| c.op == "exp").unwrap();
    let Got::Tensors(t) = run(c).unwrap() else {
        unreachable!()
    };
    let mut off = t[0].data_f32().unwrap().to_vec();
    off[7] = f32::from_bits(off[7].to_bits() + 1);
    off[7] = f32::from_bits(off[7].to_bits() + 1);
    let bad = Got::Tensors(vec![Tensor::from_f32(off, t[0].shape()).unwrap()]);
    assert!(check(c, 0, &bad).is_err());
}

/// Pseudo-random f32 values of `shape` (SplitMix64), centred on `loc`.
fn random(seed: u64, shape: &[usize], scale: f64, loc: f64) -> Tensor {
    let mut r = k::SplitMix64::new(seed);
    k::SplitMix64::normal_tensor(&mut r, shape, loc, scale)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
}

/// At sizes every kernel splits between threads (81 920 elements, rows of 80 and 64,
/// 1 024 tokens), each op gives the same bits on one, two and three threads.
#[test]
fn the_same_bits_on_any_thread_count() {
    let (rows, c) = (1024, 80);
    let x = random(1, &[rows, c], 3.0, 0.2);
    let g = random(2, &[rows, c], 1.0, 0.0);
    let gamma = random(3, &[c], 0.2, 1.0);
    let beta = random(4, &[c], 0.2, 0.0);
    let r = random(5, &[rows, c], 1.0, 0.0);
    let rrow = random(6, &[c], 1.0, 0.0);
    let t = random(7, &[rows, c], 0.1, 0.02);
    let ids = Tensor::from_f32(
        (0..rows).map(|i| ((i * 37 + 3) % c) as f32).collect(),
        &[rows],
    )
    .unwrap();
    let table = random(8, &[c, 64], 1.0, 0.0);
    let gt = random(9, &[rows, 64], 1.0, 0.0);
    let y = k::softmax(&x).unwrap();
    let (_, d) = k::gelu_cum_derivata(&x).unwrap();
    let all = || -> Vec<Got> {
        let one = |t: TResult<Tensor>| Got::Tensors(vec![t.unwrap()]);
        let many = |ts: Vec<Tensor>| Got::Tensors(ts);
        let (a, b) = k::gelu_cum_derivata(&x).unwrap();
        let (lx, lg, lb) = k::layernorm_backward(&g, &x, 1e-5, &gamma).unwrap();
        let (ax, _, _) = k::layernorm_backward_adde(&g, &x, 1e-5, &gamma, Some(&r)).unwrap();
        let (bx, _, _) = k::layernorm_backward_adde(&g, &x, 1e-5, &gamma, Some(&rrow)).unwrap();
        let (rx, rg) = k::rms_norm_backward(&g, &x, 1e-5, &gamma).unwrap();
        vec![
            one(k::exp(&x)),
            one(k::tanh(&x)),
            one(k::tanh_exp_identity(&x)),
            one(k::gelu(&x)),
            one(k::gelu_exp_identity(&x)),
            many(vec![a, b]),
            one(k::gelu_backward(&g, &x)),
            one(k::gelu_exp_identity_backward(&g, &x)),
            one(k::gelu_backward_derivata(&g, &d)),
            one(k::silu(&x)),
            one(k::silu_backward(&g, &x)),
            one(k::softmax(&x)),
            one(k::log_softmax(&x)),
            one(k::softmax_backward(&g, &y)),
            one(k::log_softmax_backward(&g, &x)),
            one(k::layernorm(&x, 1, 1e-5, &gamma, &beta)),
            many(vec![lx, lg, lb, ax, bx]),
            one(k::rms_norm(&x, 1, 1e-5, &gamma)),
            many(vec![rx, rg]),
            Got::Number(k::cross_entropy_value(&x, &t).unwrap()),
            Got::Number(k::cross_entropy_indices_value(&x, &ids).unwrap()),
            one(k::cross_entropy_backward(0.5, &x, &t)),
            one(k::cross_entropy_targets_backward(0.5, &x)),
            one(k::cross_entropy_indices_backward(0.5, &x, &ids)),
            one(k::embedding(&table, &ids)),
            one(k::embedding_table_backward(&ids, &gt, &table)),
        ]
    };
    let before = k::set_threads(1);
    let one: Vec<Vec<u64>> = all().iter().map(Got::bits).collect();
    for threads in [2, 3] {
        k::set_threads(threads);
        let other: Vec<Vec<u64>> = all().iter().map(Got::bits).collect();
        for (i, (a, b)) in one.iter().zip(&other).enumerate() {
            assert!(a == b, "op {i}: 1 thread against {threads}");
        }
    }
    k::set_threads(before);
}

/// Bad shapes, axes and ids on f32 tensors are errors (not panics) with the messages the
/// f64 entries give.
#[test]
fn errors_stay_errors_with_their_messages() {
    let f = |v: &[f32], s: &[usize]| Tensor::from_f32(v.to_vec(), s).unwrap();
    let x = f(&[0.5, -1.0, 2.0, 0.25, 1.5, -2.0], &[2, 3]);
    let x4 = f(&[0.5, -1.0, 2.0, 0.25], &[2, 2]);
    let g3 = f(&[1.0, 0.5, 2.0], &[3]);
    let g2 = f(&[1.0, 0.5], &[2]);
    let scalar = f(&[1.0], &[]);
    let ids_out = f(&[1.0, 3.0], &[2]);
    let ids_frac = f(&[1.0, 0.5], &[2]);
    let ids3 = f(&[1.0, 0.0, 2.0], &[3]);
    let nan_t = f(&[0.5, f32::NAN, 0.0, 0.25, 1.5, 0.0], &[2, 3]);
    let wide = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
    type Call<'a> = Box<dyn Fn(&dyn Fn(&Tensor) -> Tensor) -> TResult<Vec<Tensor>> + 'a>;
    let calls: Vec<(&str, Call<'_>)> = vec![
        (
            "softmax rank 0",
            Box::new(|c| k::softmax(&c(&scalar)).map(|t| vec![t])),
        ),
        (
            "log_softmax rank 0",
            Box::new(|c| k::log_softmax(&c(&scalar)).map(|t| vec![t])),
        ),
        (
            "retro_softmax",
            Box::new(|c| k::softmax_backward(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "retro_log_softmax",
            Box::new(|c| k::log_softmax_backward(&c(&x4), &c(&x)).map(|t| vec![t])),
        ),
        (
            "retro_gelu",
            Box::new(|c| k::gelu_backward(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "retro_gelu_per_exp",
            Box::new(|c| k::gelu_exp_identity_backward(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "retro_gelu_derivata",
            Box::new(|c| k::gelu_backward_derivata(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "retro_silu",
            Box::new(|c| k::silu_backward(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "laminatio axis",
            Box::new(|c| k::layernorm(&c(&x), 0, 1e-5, &c(&g3), &c(&g3)).map(|t| vec![t])),
        ),
        (
            "laminatio γ",
            Box::new(|c| k::layernorm(&c(&x), 1, 1e-5, &c(&g2), &c(&g3)).map(|t| vec![t])),
        ),
        (
            "retro_laminatio",
            Box::new(|c| {
                k::layernorm_backward(&c(&x4), &c(&x), 1e-5, &c(&g3)).map(|(a, _, _)| vec![a])
            }),
        ),
        (
            "retro_laminatio γ",
            Box::new(|c| {
                k::layernorm_backward(&c(&x), &c(&x), 1e-5, &c(&g2)).map(|(a, _, _)| vec![a])
            }),
        ),
        (
            "retro_laminatio_adde",
            Box::new(|c| {
                k::layernorm_backward_adde(&c(&x), &c(&x), 1e-5, &c(&g3), Some(&c(&x4)))
                    .map(|(a, _, _)| vec![a])
            }),
        ),
        (
            "rms_norm γ",
            Box::new(|c| k::rms_norm(&c(&x), 1, 1e-5, &c(&g2)).map(|t| vec![t])),
        ),
        (
            "retro_rms_norm",
            Box::new(|c| {
                k::rms_norm_backward(&c(&x4), &c(&x), 1e-5, &c(&g3)).map(|(a, _)| vec![a])
            }),
        ),
        (
            "crux_entropia shape",
            Box::new(|c| k::cross_entropy(&c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "crux_entropia NaN",
            Box::new(|c| k::cross_entropy(&c(&x), &c(&nan_t)).map(|t| vec![t])),
        ),
        (
            "crux_entropia_indices range",
            Box::new(|c| k::cross_entropy_indices(&c(&x), &c(&ids_out)).map(|t| vec![t])),
        ),
        (
            "crux_entropia_indices integer",
            Box::new(|c| k::cross_entropy_indices(&c(&x), &c(&ids_frac)).map(|t| vec![t])),
        ),
        (
            "crux_entropia_indices shape",
            Box::new(|c| k::cross_entropy_indices(&c(&x), &c(&ids3)).map(|t| vec![t])),
        ),
        (
            "retro_crux_entropia",
            Box::new(|c| k::cross_entropy_backward(1.0, &c(&x), &c(&x4)).map(|t| vec![t])),
        ),
        (
            "retro_crux_scopi",
            Box::new(|c| k::cross_entropy_targets_backward(1.0, &c(&scalar)).map(|t| vec![t])),
        ),
        (
            "retro_crux_indices",
            Box::new(|c| {
                k::cross_entropy_indices_backward(1.0, &c(&x), &c(&ids3)).map(|t| vec![t])
            }),
        ),
        (
            "retro_crux_indices range",
            Box::new(|c| {
                k::cross_entropy_indices_backward(1.0, &c(&x), &c(&ids_out)).map(|t| vec![t])
            }),
        ),
        (
            "collige range",
            Box::new(|c| k::embedding(&c(&x), &c(&ids3)).map(|t| vec![t])),
        ),
        (
            "collige rank",
            Box::new(|c| k::embedding(&c(&g3), &c(&ids3)).map(|t| vec![t])),
        ),
        (
            "retro_collige",
            Box::new(|c| k::embedding_table_backward(&c(&ids3), &c(&x), &c(&x)).map(|t| vec![t])),
        ),
    ];
    let same = |t: &Tensor| t.clone();
    for (what, call) in &calls {
        let narrow = call(&same).expect_err(what);
        let widened = call(&wide).expect_err(what);
        assert_eq!(narrow, widened, "{what}");
    }
}

/// f32 and f64 operands in one call compute in f64 and give f64 (the promotion rule),
/// the bits of the call on the widened operands.
#[test]
fn mixed_operands_are_promoted() {
    let x = random(11, &[6, 9], 2.0, 0.5);
    let g = random(12, &[6, 9], 1.0, 0.0);
    let gamma = random(13, &[9], 0.2, 1.0);
    let beta = random(14, &[9], 0.2, 0.0);
    let w = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
    let bits = |t: &Tensor| {
        assert_eq!(t.dtype(), DType::F64);
        t.data().iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    let a = k::layernorm(&x, 1, 1e-5, &w(&gamma), &beta).unwrap();
    let b = k::layernorm(&w(&x), 1, 1e-5, &w(&gamma), &w(&beta)).unwrap();
    assert_eq!(bits(&a), bits(&b));
    let a = k::softmax_backward(&g, &w(&x)).unwrap();
    assert_eq!(
        bits(&a),
        bits(&k::softmax_backward(&w(&g), &w(&x)).unwrap())
    );
    let (a, ..) = k::layernorm_backward_adde(&g, &x, 1e-5, &gamma, Some(&w(&g))).unwrap();
    let (b, ..) =
        k::layernorm_backward_adde(&w(&g), &w(&x), 1e-5, &w(&gamma), Some(&w(&g))).unwrap();
    assert_eq!(bits(&a), bits(&b));
    let a = k::cross_entropy_value(&x, &w(&g)).unwrap();
    assert_eq!(
        a.to_bits(),
        k::cross_entropy_value(&w(&x), &w(&g)).unwrap().to_bits()
    );
    // index operands do not count: f64 ids into an f32 table give f32 rows
    let ids = Tensor::from_flat(vec![2.0, 0.0], &[2]).unwrap();
    assert_eq!(k::embedding(&x, &ids).unwrap().dtype(), DType::F32);
}
