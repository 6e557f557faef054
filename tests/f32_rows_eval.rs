//! The row ops in an f32 run (issue 21): a program with f32 tensors calls each of
//! `exp`, `tanh`, `tanh_per_exp`, the GELU family (`gelu`, `gelu_per_exp`,
//! `gelu_cum_derivata`, `gelu_ex_pari`, `retro_gelu`, `retro_gelu_derivata`,
//! `retro_gelu_per_exp`), `silu`, `retro_silu`, the softmax family, `laminatio` and its
//! VJPs, `rms_norm`, `retro_rms_norm`, the cross-entropies and their VJPs, `collige` and
//! `retro_collige`, under `faber run --precision f32`. What it prints is, bit for bit,
//! what the Tensor-level entries give on the same f32 tensors — the native f32 kernels,
//! whose accuracy tests/f32_rows.rs checks against an independent reference — and not
//! the f64 kernels' results rounded to f32 (which differ in some elements, checked
//! here so that the comparison can fail). The output is the same at 1 and 2 threads,
//! and a bad id is the same error as in an f64 run.

mod common;

use common::Faber;
use faber::tensor::{self as k, DType, TResult, Tensor};

fn random(seed: u64, shape: &[usize], scale: f64, loc: f64) -> Tensor {
    let mut r = k::SplitMix64::new(seed);
    r.normal_tensor(shape, loc, scale)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
}

/// `semen.strue([…], [shape])` holding `t`'s f32 values exactly (each written as the
/// f64 it widens to, which rounds back to itself).
fn literal(t: &Tensor) -> String {
    let vals: Vec<String> = t.values().iter().map(|v| format!("{v:?}")).collect();
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!("semen.strue([{}], [{}])", vals.join(", "), dims.join(", "))
}

fn decl(name: &str, t: &Tensor) -> String {
    let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
    format!(
        "    fixum tf32[{}] {name} ← {}\n",
        dims.join(", "),
        literal(t)
    )
}

/// The inputs, by name.
struct Inputs {
    x: Tensor,
    g: Tensor,
    gm: Tensor,
    bt: Tensor,
    r: Tensor,
    t: Tensor,
    ids: Tensor,
    tb: Tensor,
    gt: Tensor,
}

fn inputs() -> Inputs {
    let (rows, c) = (4, 5);
    Inputs {
        x: random(1, &[rows, c], 3.0, 0.3),
        g: random(2, &[rows, c], 1.0, 0.0),
        gm: random(3, &[c], 0.2, 1.0),
        bt: random(4, &[c], 0.2, 0.0),
        r: random(5, &[rows, c], 1.0, 0.0),
        t: random(6, &[rows, c], 0.3, 0.2),
        ids: Tensor::from_f32(vec![3.0, 0.0, 4.0, 3.0], &[rows]).unwrap(),
        tb: random(7, &[c, 3], 1.0, 0.0),
        gt: random(8, &[rows, 3], 1.0, 0.0),
    }
}

/// One line of the program: what it prints, and the Tensor-level call that gives it.
type Expected = fn(&Inputs) -> TResult<Vec<Value>>;

#[derive(Debug)]
enum Value {
    T(Tensor),
    N(f64),
}

fn t(x: TResult<Tensor>) -> TResult<Vec<Value>> {
    x.map(|t| vec![Value::T(t)])
}

const G: f64 = 0.75;
const EPS: f64 = 1e-5;

/// (the expression `nota` prints, the op it calls, its Tensor-level entry).
const LINES: &[(&str, Expected)] = &[
    ("x.exp()", |i| t(k::exp(&i.x))),
    ("x.tanh()", |i| t(k::tanh(&i.x))),
    ("x.tanh_per_exp()", |i| t(k::tanh_exp_identity(&i.x))),
    ("x.gelu()", |i| t(k::gelu(&i.x))),
    ("x.gelu_per_exp()", |i| t(k::gelu_exp_identity(&i.x))),
    ("x.gelu_cum_derivata()", |i| {
        k::gelu_cum_derivata(&i.x).map(|(a, b)| vec![Value::T(a), Value::T(b)])
    }),
    ("x.gelu_ex_pari(x.gelu_cum_derivata())", |i| {
        t(k::gelu(&i.x))
    }),
    ("g.retro_gelu(x)", |i| t(k::gelu_backward(&i.g, &i.x))),
    ("g.retro_gelu_derivata(x)", |i| {
        t(k::gelu_backward_derivata(&i.g, &i.x))
    }),
    ("g.retro_gelu_per_exp(x)", |i| {
        t(k::gelu_exp_identity_backward(&i.g, &i.x))
    }),
    ("x.silu()", |i| t(k::silu(&i.x))),
    ("g.retro_silu(x)", |i| t(k::silu_backward(&i.g, &i.x))),
    ("x.activatio_softmax()", |i| t(k::softmax(&i.x))),
    ("x.log_softmax()", |i| t(k::log_softmax(&i.x))),
    ("g.retro_softmax(x.activatio_softmax())", |i| {
        t(k::softmax_backward(&i.g, &k::softmax(&i.x)?))
    }),
    ("g.retro_log_softmax(x)", |i| {
        t(k::log_softmax_backward(&i.g, &i.x))
    }),
    ("x.laminatio(1, 0.00001, gm, bt)", |i| {
        t(k::layernorm(&i.x, 1, EPS, &i.gm, &i.bt))
    }),
    ("g.retro_laminatio(x, 0.00001, gm)", |i| {
        k::layernorm_backward(&i.g, &i.x, EPS, &i.gm)
            .map(|(a, b, c)| vec![Value::T(a), Value::T(b), Value::T(c)])
    }),
    ("g.retro_laminatio_adde(x, 0.00001, gm, r)", |i| {
        k::layernorm_backward_adde(&i.g, &i.x, EPS, &i.gm, Some(&i.r))
            .map(|(a, b, c)| vec![Value::T(a), Value::T(b), Value::T(c)])
    }),
    ("g.retro_laminatio_adde(x, 0.00001, gm, bt)", |i| {
        k::layernorm_backward_adde(&i.g, &i.x, EPS, &i.gm, Some(&i.bt))
            .map(|(a, b, c)| vec![Value::T(a), Value::T(b), Value::T(c)])
    }),
    ("x.rms_norm(1, 0.00001, gm)", |i| {
        t(k::rms_norm(&i.x, 1, EPS, &i.gm))
    }),
    ("g.retro_rms_norm(x, 0.00001, gm)", |i| {
        k::rms_norm_backward(&i.g, &i.x, EPS, &i.gm).map(|(a, b)| vec![Value::T(a), Value::T(b)])
    }),
    ("x.crux_entropia(t)", |i| {
        k::cross_entropy_value(&i.x, &i.t).map(|v| vec![Value::N(v)])
    }),
    ("x.crux_entropia_indices(ids)", |i| {
        k::cross_entropy_indices_value(&i.x, &i.ids).map(|v| vec![Value::N(v)])
    }),
    ("c.retro_crux_entropia(x, t)", |i| {
        t(k::cross_entropy_backward(G, &i.x, &i.t))
    }),
    ("c.retro_crux_scopi(x)", |i| {
        t(k::cross_entropy_targets_backward(G, &i.x))
    }),
    ("c.retro_crux_indices(x, ids)", |i| {
        t(k::cross_entropy_indices_backward(G, &i.x, &i.ids))
    }),
    ("tb.collige(ids)", |i| t(k::embedding(&i.tb, &i.ids))),
    ("gt.retro_collige(ids, tb)", |i| {
        t(k::embedding_table_backward(&i.ids, &i.gt, &i.tb))
    }),
];

fn program(i: &Inputs) -> String {
    let mut s = String::from("incipit {\n    fixum tf32[] semen ← vacua\n");
    for (name, v) in [
        ("x", &i.x),
        ("g", &i.g),
        ("gm", &i.gm),
        ("bt", &i.bt),
        ("r", &i.r),
        ("t", &i.t),
        ("ids", &i.ids),
        ("tb", &i.tb),
        ("gt", &i.gt),
    ] {
        s += &decl(name, v);
    }
    s += &format!("    fixum fractus c ← {G}\n");
    for (expr, _) in LINES {
        s += &format!("    nota {expr}\n");
    }
    s + "}\n"
}

fn dir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("faber-f32-rows-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(file: &std::path::Path, precision: &str, threads: &str) -> (Option<i32>, String, String) {
    let out = Faber::new()
        .args(["--threads", threads, "run", "--precision", precision])
        .arg(file)
        .output();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The numbers of one printed line, in order.
fn numbers(line: &str) -> Vec<&str> {
    line.split(|c: char| c == '[' || c == ']' || c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect()
}

#[test]
fn an_f32_run_computes_the_row_ops_natively() {
    let i = inputs();
    let d = dir("native");
    let file = d.join("rows.fab");
    std::fs::write(&file, program(&i)).unwrap();
    let (code, out, err) = run(&file, "f32", "1");
    assert_eq!(code, Some(0), "{err}");
    let (_, out2, _) = run(&file, "f32", "2");
    assert_eq!(out, out2, "1 thread against 2");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), LINES.len(), "{out}");
    let wide = |t: &Tensor| t.to_dtype(DType::F64).unwrap();
    let widened = Inputs {
        x: wide(&i.x),
        g: wide(&i.g),
        gm: wide(&i.gm),
        bt: wide(&i.bt),
        r: wide(&i.r),
        t: wide(&i.t),
        ids: wide(&i.ids),
        tb: wide(&i.tb),
        gt: wide(&i.gt),
    };
    let mut differ_from_widened = 0;
    for ((expr, expected), line) in LINES.iter().zip(&lines) {
        let want = expected(&i).unwrap();
        let f64_kernel = expected(&widened).unwrap();
        let printed = numbers(line);
        let mut at = 0;
        for (w, f) in want.iter().zip(&f64_kernel) {
            match (w, f) {
                (Value::T(w), Value::T(f)) => {
                    assert_eq!(w.dtype(), DType::F32, "{expr}");
                    let rounded = f.to_dtype(DType::F32).unwrap();
                    for (&v, &r) in w
                        .data_f32()
                        .unwrap()
                        .iter()
                        .zip(rounded.data_f32().unwrap())
                    {
                        let p: f32 = printed[at].parse().unwrap();
                        assert_eq!(p.to_bits(), v.to_bits(), "{expr} [{at}]: {line}");
                        differ_from_widened += usize::from(v.to_bits() != r.to_bits());
                        at += 1;
                    }
                }
                (Value::N(w), Value::N(f)) => {
                    let p: f64 = printed[at].parse().unwrap();
                    assert_eq!(p.to_bits(), w.to_bits(), "{expr}: {line}");
                    differ_from_widened += usize::from(w.to_bits() != f.to_bits());
                    at += 1;
                }
                _ => unreachable!(),
            }
        }
        assert_eq!(at, printed.len(), "{expr}: {line}");
    }
    // the f64 kernels rounded to f32 give other bits in some elements: the comparison
    // above tells the two paths apart
    assert!(differ_from_widened > 10, "{differ_from_widened}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bad_id_is_the_same_error_in_f32() {
    let d = dir("error");
    let file = d.join("bad.fab");
    std::fs::write(
        &file,
        "incipit {\n    fixum tf32[] semen ← vacua\n    \
         fixum tf32[2, 3] x ← semen.strue([0.5, -1.0, 2.0, 0.25, 1.5, -2.0], [2, 3])\n    \
         fixum tf32[2] y ← semen.strue([1.0, 3.0], [2])\n    \
         nota x.crux_entropia_indices(y)\n}\n",
    )
    .unwrap();
    let (code32, out32, err32) = run(&file, "f32", "1");
    let (code64, _, err64) = run(&file, "f64", "1");
    assert_eq!((code32, out32.as_str()), (Some(1), ""));
    assert_eq!(code32, code64);
    assert!(
        err32.contains("crux_entropia_indices: id 3 out of range 0..3"),
        "{err32}"
    );
    assert_eq!(err32, err64);
    let _ = std::fs::remove_dir_all(&d);
}
