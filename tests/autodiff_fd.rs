//! Property tests of the backward transform: for every op and broadcast pattern, the
//! generated companion's gradient equals central finite differences of the primal
//! (f64, step 1e-6) to a relative error ≤ 1e-9, on random inputs from several seeds.

use faber::gradcheck::{check, random_inputs};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;

/// (name, parameters, body expression returning a scalar `f32`)
const CASES: &[(&str, &str, &str)] = &[
    (
        "addita",
        "tf32[2, 3] x, tf32[2, 3] y, tf32[2, 3] w",
        "(x.addita(y) ⊙ w).summa()",
    ),
    (
        "addita_row",
        "tf32[2, 3] x, tf32[3] y, tf32[2, 3] w",
        "(x.addita(y) ⊙ w).summa()",
    ),
    (
        "addita_outer",
        "tf32[2, 1] x, tf32[1, 3] y, tf32[2, 3] w",
        "(x.addita(y) ⊙ w).summa()",
    ),
    (
        "subtrahe_row",
        "tf32[2, 3] x, tf32[3] y, tf32[2, 3] w",
        "(x.subtrahe(y) ⊙ w).summa()",
    ),
    (
        "multiplica_row",
        "tf32[2, 3] x, tf32[3] y, tf32[2, 3] w",
        "(x.multiplica(y) ⊙ w).summa()",
    ),
    (
        "hadamard_scalar",
        "tf32[2, 3] x, f32 s, tf32[2, 3] w",
        "((x ⊙ s) ⊙ w).summa()",
    ),
    (
        "divide",
        "tf32[2, 3] x, tf32[2, 3] y, tf32[2, 3] w",
        "(x.divide(y.exp()) ⊙ w).summa()",
    ),
    (
        "addita_bias",
        "tf32[2, 3] x, tf32[3] b, tf32[2, 3] w",
        "(x.addita_bias(b) ⊙ w).summa()",
    ),
    (
        "matmul",
        "tf32[2, 3] a, tf32[3, 4] b, tf32[2, 4] w",
        "((a · b) ⊙ w).summa()",
    ),
    (
        "matmul_batched",
        "tf32[2, 2, 3] a, tf32[2, 3, 2] b, tf32[2, 2, 2] w",
        "((a · b) ⊙ w).summa()",
    ),
    (
        "matmul_broadcast",
        "tf32[2, 2, 3] a, tf32[3, 2] b, tf32[2, 2, 2] w",
        "((a · b) ⊙ w).summa()",
    ),
    (
        "matvec",
        "tf32[2, 3] a, tf32[3] v, tf32[2] w",
        "((a · v) ⊙ w).summa()",
    ),
    ("dot", "tf32[3] a, tf32[3] b", "(a · b).summa()"),
    (
        "matmul_nt",
        "tf32[2, 3] a, tf32[4, 3] b, tf32[2, 4] w",
        "(a.matmul_nt(b) ⊙ w).summa()",
    ),
    (
        "matmul_tn",
        "tf32[3, 2] a, tf32[3, 4] b, tf32[2, 4] w",
        "(a.matmul_tn(b) ⊙ w).summa()",
    ),
    (
        "matmul_nt_broadcast",
        "tf32[2, 2, 3] a, tf32[4, 3] b, tf32[2, 2, 4] w",
        "(a.matmul_nt(b) ⊙ w).summa()",
    ),
    (
        "matmul_tn_batched",
        "tf32[2, 3, 2] a, tf32[2, 3, 4] b, tf32[2, 2, 4] w",
        "(a.matmul_tn(b) ⊙ w).summa()",
    ),
    (
        "matmul_nt_self",
        "tf32[3, 2] a, tf32[3, 3] w",
        "(a.matmul_nt(a) ⊙ w).summa()",
    ),
    (
        "transpone",
        "tf32[2, 3] x, tf32[3, 2] w",
        "(x.transpone() ⊙ w).summa()",
    ),
    (
        "forma",
        "tf32[2, 3] x, tf32[3, 2] w",
        "(x.forma([3, 2]) ⊙ w).summa()",
    ),
    (
        "neg_scala",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.neg().scala(2.5) ⊙ w).summa()",
    ),
    (
        "exp_log",
        "tf32[2, 3] x, tf32[2, 3] w",
        "((x.exp().addita(x.exp()).log()) ⊙ w).summa()",
    ),
    (
        "sqrt",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.exp().sqrt() ⊙ w).summa()",
    ),
    (
        "tanh",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.tanh() ⊙ w).summa()",
    ),
    (
        "gelu",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.gelu() ⊙ w).summa()",
    ),
    (
        "gelu_per_exp",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.gelu_per_exp() ⊙ w).summa()",
    ),
    (
        "relu",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.relu() ⊙ w).summa()",
    ),
    (
        "reciproca",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.exp().reciproca() ⊙ w).summa()",
    ),
    ("media", "tf32[2, 3] x, tf32[2, 3] w", "(x ⊙ w).media()"),
    (
        "summa_axis_drop",
        "tf32[2, 3] x, tf32[3] w",
        "(x.summa_axis(0, falsum) ⊙ w).summa()",
    ),
    (
        "summa_axis_keep",
        "tf32[2, 3] x, tf32[2, 1] w",
        "(x.summa_axis(1, verum) ⊙ w).summa()",
    ),
    (
        "media_axis",
        "tf32[2, 3] x, tf32[2] w",
        "(x.media_axis(1, falsum) ⊙ w).summa()",
    ),
    (
        "maximum_axis",
        "tf32[2, 3] x, tf32[2] w",
        "(x.maximum_axis(1, falsum) ⊙ w).summa()",
    ),
    (
        "softmax",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.activatio_softmax() ⊙ w).summa()",
    ),
    (
        "log_softmax",
        "tf32[2, 3] x, tf32[2, 3] w",
        "(x.log_softmax() ⊙ w).summa()",
    ),
    (
        "laminatio",
        "tf32[2, 4] x, tf32[4] g, tf32[4] b, tf32[2, 4] w",
        "(x.laminatio(1, 0.00001, g, b) ⊙ w).summa()",
    ),
    (
        "crux_entropia",
        "tf32[2, 3] x",
        "x.crux_entropia(vacua.strue([0.2, 0.3, 0.5, 1.0, 0.0, 0.0], [2, 3]))",
    ),
    // Targets computed from a parameter: ∂t = −ln(softmax(x) + 1e-7)·g / C (issue 18).
    (
        "crux_entropia_targets",
        "tf32[2, 3] x, tf32[2, 3] y",
        "x.crux_entropia(y.activatio_softmax())",
    ),
    // Targets anywhere in [-1, 1): the definition takes any finite targets.
    (
        "crux_entropia_any_targets",
        "tf32[2, 3] x, tf32[2, 3] t",
        "x.crux_entropia(t)",
    ),
    (
        "crux_indices",
        "tf32[3, 4] z",
        "z.crux_entropia_indices(vacua.strue([1.0, 3.0, 1.0], [3]))",
    ),
    (
        "collige",
        "tf32[4, 3] e, tf32[3, 3] w",
        "(e.collige(vacua.strue([2.0, 0.0, 2.0], [3])) ⊙ w).summa()",
    ),
    (
        "larva_softmax",
        "tf32[3, 3] x, tf32[3, 3] w",
        "(x.larva_causalis(-1000000000.0).activatio_softmax() ⊙ w).summa()",
    ),
    (
        "lineare",
        "tf32[2, 3, 4] x, tf32[4, 5] m, tf32[5] b, tf32[2, 3, 5] w",
        "(x.lineare(m, b).tanh() ⊙ w).summa()",
    ),
    (
        "softmax_causalis",
        "tf32[2, 3, 4] x, f32 s, tf32[2, 3, 4] w",
        "(x.softmax_causalis(s, -1000000000.0) ⊙ w).summa()",
    ),
    (
        "attentio",
        "tf32[2, 3, 4] q, tf32[2, 3, 4] k, tf32[2, 3, 4] v, tf32[2, 3, 4] w",
        "(q.attentio_pondera(k, 2).attentio_applica(v) ⊙ w).summa()",
    ),
    (
        "attentio_self",
        "tf32[1, 4, 3] x, tf32[1, 4, 3] w",
        "(x.attentio_pondera(x, 1).attentio_applica(x) ⊙ w).summa()",
    ),
    (
        "attentio_fused",
        "tf32[2, 3, 4] q, tf32[2, 3, 4] k, tf32[2, 3, 4] v, tf32[2, 3, 4] w",
        "(q.attentio(k, v, 2) ⊙ w).summa()",
    ),
    (
        "attentio_fused_self",
        "tf32[1, 4, 3] x, tf32[1, 4, 3] w",
        "(x.attentio(x, x, 1) ⊙ w).summa()",
    ),
    (
        "sectio",
        "tf32[4, 2] x, tf32[2, 2] w",
        "(x.sectio(1, 3) ⊙ w).summa()",
    ),
    (
        "angusta",
        "tf32[2, 4] x, tf32[2, 2] w",
        "(x.angusta(1, 1, 3) ⊙ w).summa()",
    ),
    (
        "fan_out",
        "tf32[2, 3] x, tf32[2, 3] w",
        "((x ⊙ x).addita(x) ⊙ w).summa()",
    ),
    (
        "scalar_chain",
        "f32 a, f32 b",
        "a * b - a / (b * b + 1.0) + -a",
    ),
    (
        "call_inlined",
        "tf32[2, 3] x, tf32[3, 2] m, tf32[2] b, tf32[2, 2] w",
        "(lin(x, m, b).tanh() ⊙ w).summa()",
    ),
];

fn program(name: &str, params: &str, body: &str) -> String {
    // `vacua` inside a body stands for the rank-0 seed; give it a name the parser reads.
    let body = body.replace("vacua.", "semen.");
    format!(
        "functio lin(tf32[2, 3] x, tf32[3, 2] m, tf32[2] b) → tf32[2, 2] {{\n    redde (x · m).addita_bias(b)\n}}\n\n\
         @ radix lane \"air\"\n@ radix backward \"grad_{name}\"\n\
         functio {name}({params}) → f32 {{\n    fixum tf32[] semen ← vacua\n    redde {body}\n}}\n"
    )
}

#[test]
fn companions_match_finite_differences() {
    let mut failures = Vec::new();
    for (name, params, body) in CASES {
        let text = program(name, params, body);
        let mut sources = SourceMap::new();
        let id = sources.add(format!("{name}.fab"), text.clone());
        let mut loader = MemoryLoader {
            files: Default::default(),
        };
        let program = match faber::compile(&mut sources, id, &mut loader) {
            Ok(p) => p,
            Err(d) => {
                failures.push(format!(
                    "{name}: {}\n{text}",
                    faber::diag::render(&d, &sources, false)
                ));
                continue;
            }
        };
        let req = program.backward[0].clone();
        for seed in [1u64, 2, 3] {
            let inputs = random_inputs(&program, &req, seed).unwrap();
            match check(&program, &req, &inputs, 1e-6, &Default::default()) {
                Ok(reports) => {
                    for r in reports {
                        if r.max_rel.is_nan() || r.max_rel > 1e-9 {
                            failures.push(format!(
                                "{name} seed {seed}: ∂{} max rel {:.3e} (abs {:.3e})",
                                r.name, r.max_rel, r.max_abs
                            ));
                        }
                    }
                }
                Err(e) => failures.push(format!("{name} seed {seed}: {e:?}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
