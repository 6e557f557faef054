//! Whole Radix IR functions lowered to one StableHLO program each
//! (src/xla/stablehlo/function.rs) and run on a real PJRT plugin, against the
//! interpreter running the same function under `--precision f32`: primal functions
//! (a call inlined, shape literals, operators on tensors) and the backward companions
//! the autodiff pass generates for them (`@ radix backward`: folded scalar
//! arithmetic, `crea` from `nihil`, `retro_ad_formam`, `matmul_nt`/`matmul_tn`,
//! tuple results). Functions the lowering cannot express yet are errors naming what
//! is missing. Runs when a plugin is at hand; otherwise prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)` after checking the lowering
//! errors, which need no plugin.
//!
//! Tolerance per element: 1e-5·(1 + |y|) — each function here sums at most 8 terms of
//! magnitude ≤ 2 per element, so both f32 results lie within a few ulps of the exact
//! value (the op tests, tests/xla_ops.rs, state the per-op bounds).

mod common;
mod xla_fn_support;

use xla_fn_support::{arg_of, close, compile_source, device, func, interpret, interpreted, rand32};

use common::{pjrt_plugin, say_no_plugin};
use faber::eval::Value;
use faber::ir::Program;
use faber::tensor::{self as k, DType, SplitMix64, Tensor};
use faber::xla::stablehlo::{lower_function, Param, TensorType};
use faber::xla::{ElementType, FnArg};

const SOURCE: &str = r#"
functio linearis(tf32[2, 3] x, tf32[3, 2] w, tf32[2] b) → tf32[2, 2] {
    redde (x · w).addita_bias(b)
}

@ radix backward "g_mse"
functio mse(tf32[2, 2] p, tf32[2, 2] t) → f32 {
    fixum tf32[2, 2] d ← p.subtrahe(t)
    redde (d ⊙ d).media()
}

@ radix backward "g_lin"
functio lin(tf32[2, 3] x, tf32[3, 2] w, tf32[2] b) → f32 {
    redde linearis(x, w, b).summa()
}

functio resh(tf32[2, 3] x, f32 s) → tf32[3, 2] {
    fixum f32 c ← s * 2.0 - 1.0 / 4.0
    redde x.forma([3, 2]).addita(x.forma([3, 2]).scala(c)) ⊙ x.transpone()
}

functio ramus(tf32[2, 3] x) → tf32[2, 3] {
    si x.summa() > 0.0 {
        redde x
    }
    redde x.neg()
}

functio duplica(tf32[2] x) → tf32[2] {
    varia tf32[2] y ← x
    itera ab 0 ‥ 3 fixum i {
        y ← y.scala(2.0)
    }
    redde y
}

functio attentio(tf32[2, 4] q, tf32[2, 4] k) → tf32[2, 2] {
    redde (q · k.transpone()).scala(0.5).activatio_softmax()
}

functio passus(tf32[2, 3] p, tf32[2, 3] g, tf32[2, 3] m, tf32[2, 3] v, f32 inv_bc2, f32 step) → tf32[2, 3] {
    fixum [q, m2, v2] ← p.adamw_passus(g, m, v, [0.9, 1.0 - 0.9, 0.999, 1.0 - 0.999, inv_bc2, 0.00000001, 1.0 - 0.001 * 0.01, step])
    redde q.addita(m2).addita(v2)
}

@ radix backward "g_strata"
functio per_strata(tf32[3, 2, 2] ws, tf32[2, 2] x, numerus n) → f32 {
    varia tf32[2, 2] h ← x
    itera ab 0 ‥ n fixum i {
        fixum tf32[2, 2] w ← ws.sectio(i, i + 1).forma([2, 2])
        h ← (h · w).tanh()
    }
    redde h.summa()
}

@ radix backward "g_si"
functio optio(tf32[2, 2] x, bivalens quadra) → f32 {
    varia tf32[2, 2] y ← x
    si quadra {
        y ← x ⊙ x
    } secus {
        y ← x.exp()
    }
    redde (y ⊙ x).summa()
}

functio crescit(tf32[2] x) → tf32[2] {
    varia tf32[2] y ← x
    dum y.summa() < 10.0 {
        y ← y.scala(2.0)
    }
    redde y
}

genus Strata {
    tf32[2, 2] w
    tf32[2] b
}

genus Parametri {
    Strata prima
    Strata secunda
    f32 scala
}

functio strata(Strata s, tf32[3, 2] x) → tf32[3, 2] {
    redde (x · s.w).addita_bias(s.b)
}

@ radix backward "g_arbor"
functio arbor(Parametri p, tf32[3, 2] x) → f32 {
    fixum tf32[3, 2] h ← strata(p.prima, x).tanh()
    fixum tf32[3, 2] o ← strata(p.secunda, h) ⊙ p.scala
    redde (o ⊙ o).media()
}

@ radix backward "g_mlp"
functio mlp(tf32[2, 3] x, tf32[3, 4] w, tf32[4] b, tf32[2] y) → f32 {
    redde x.lineare(w, b).gelu().crux_entropia_indices(y)
}

@ radix backward "g_norma"
functio norma(tf32[2, 4] x, tf32[4] g, tf32[4] b) → f32 {
    redde x.laminatio(1, 0.00001, g, b).silu().summa()
}

incipit {
}
"#;

fn compile() -> Program {
    compile_source("xla_functions.fab", SOURCE)
}

#[test]
fn primal_functions_and_their_companions_agree_with_the_interpreter() {
    let Some(mut dev) = device() else {
        say_no_plugin("xla_functions::agree");
        return;
    };
    let p = compile();
    let before = k::set_precision(DType::F32);
    let mut rng = SplitMix64::new(42);
    let (x, w, b) = (
        rand32(&mut rng, &[2, 3]),
        rand32(&mut rng, &[3, 2]),
        rand32(&mut rng, &[2]),
    );
    let (pp, t) = (rand32(&mut rng, &[2, 2]), rand32(&mut rng, &[2, 2]));
    let tv = |t: &Tensor| Value::Tensor(std::rc::Rc::new(t.clone()));

    for name in ["linearis", "lin"] {
        let f = func(&p, name);
        let got = dev
            .run_function(
                &p,
                f,
                &[FnArg::Tensor(&x), FnArg::Tensor(&w), FnArg::Tensor(&b)],
            )
            .unwrap();
        close(
            &got,
            &interpreted(&p, f, vec![tv(&x), tv(&w), tv(&b)]),
            name,
        );
    }
    let f = func(&p, "mse");
    let got = dev
        .run_function(&p, f, &[FnArg::Tensor(&pp), FnArg::Tensor(&t)])
        .unwrap();
    close(&got, &interpreted(&p, f, vec![tv(&pp), tv(&t)]), "mse");

    // The companions: (primal arguments, residual, upstream) → the gradients.
    let f = func(&p, "g_mse");
    let got = dev
        .run_function(
            &p,
            f,
            &[
                FnArg::Tensor(&pp),
                FnArg::Tensor(&t),
                FnArg::Nihil,
                FnArg::Number(0.75),
            ],
        )
        .unwrap();
    let want = interpreted(
        &p,
        f,
        vec![tv(&pp), tv(&t), Value::Nihil, Value::Float(0.75)],
    );
    assert_eq!(want.len(), 2, "g_mse gives (∂p, ∂t)");
    close(&got, &want, "g_mse");
    let f = func(&p, "g_lin");
    let args = [
        FnArg::Tensor(&x),
        FnArg::Tensor(&w),
        FnArg::Tensor(&b),
        FnArg::Nihil,
        FnArg::Number(1.5),
    ];
    let got = dev.run_function(&p, f, &args).unwrap();
    let want = interpreted(
        &p,
        f,
        vec![tv(&x), tv(&w), tv(&b), Value::Nihil, Value::Float(1.5)],
    );
    assert_eq!(want.len(), 3, "g_lin gives (∂x, ∂w, ∂b)");
    close(&got, &want, "g_lin");

    let f = func(&p, "resh");
    let got = dev
        .run_function(&p, f, &[FnArg::Tensor(&x), FnArg::Number(0.625)])
        .unwrap();
    close(
        &got,
        &interpreted(&p, f, vec![tv(&x), Value::Float(0.625)]),
        "resh",
    );

    let (q, kk) = (rand32(&mut rng, &[2, 4]), rand32(&mut rng, &[2, 4]));
    let f = func(&p, "attentio");
    let got = dev
        .run_function(&p, f, &[FnArg::Tensor(&q), FnArg::Tensor(&kk)])
        .unwrap();
    close(&got, &interpreted(&p, f, vec![tv(&q), tv(&kk)]), "attentio");

    // An MLP layer with GELU and a cross-entropy against class ids, and a
    // LayerNorm + SiLU, with their companions (GELU's save-split, retro_crux_indices,
    // retro_laminatio, retro_silu).
    let (w4, b4) = (rand32(&mut rng, &[3, 4]), rand32(&mut rng, &[4]));
    let ids = Tensor::from_f32(vec![3.0, 1.0], &[2]).unwrap();
    let f = func(&p, "mlp");
    let margs = [
        FnArg::Tensor(&x),
        FnArg::Tensor(&w4),
        FnArg::Tensor(&b4),
        FnArg::Tensor(&ids),
    ];
    let vargs = || vec![tv(&x), tv(&w4), tv(&b4), tv(&ids)];
    let got = dev.run_function(&p, f, &margs).unwrap();
    close(&got, &interpreted(&p, f, vargs()), "mlp");
    let f = func(&p, "g_mlp");
    let mut gargs = margs.to_vec();
    gargs.extend([FnArg::Nihil, FnArg::Number(1.0)]);
    let got = dev.run_function(&p, f, &gargs).unwrap();
    let mut vs = vargs();
    vs.extend([Value::Nihil, Value::Float(1.0)]);
    let want = interpreted(&p, f, vs);
    assert_eq!(want.len(), 4, "g_mlp gives (∂x, ∂w, ∂b, ∂y)");
    close(&got, &want, "g_mlp");
    let (xn, gn, bn) = (
        rand32(&mut rng, &[2, 4]),
        rand32(&mut rng, &[4]),
        rand32(&mut rng, &[4]),
    );
    for name in ["norma", "g_norma"] {
        let f = func(&p, name);
        let mut args = vec![FnArg::Tensor(&xn), FnArg::Tensor(&gn), FnArg::Tensor(&bn)];
        let mut vs = vec![tv(&xn), tv(&gn), tv(&bn)];
        if name == "g_norma" {
            args.extend([FnArg::Nihil, FnArg::Number(0.5)]);
            vs.extend([Value::Nihil, Value::Float(0.5)]);
        }
        let got = dev.run_function(&p, f, &args).unwrap();
        close(&got, &interpreted(&p, f, vs), name);
    }

    // Records of tensors and a number: a two-layer model's parameters, and the
    // companion's record of their gradients (retro_nihil of a record, stores into
    // its fields, retro_adde of records).
    let layer = |rng: &mut SplitMix64| (rand32(rng, &[2, 2]), rand32(rng, &[2]));
    let ((w1, b1), (w2, b2)) = (layer(&mut rng), layer(&mut rng));
    let x32 = rand32(&mut rng, &[3, 2]);
    let genus = |name: &str| {
        let i = p
            .genera
            .iter()
            .position(|g| g.name.ends_with(name))
            .unwrap();
        faber::ir::GenusId(i as u32)
    };
    let record = |name: &str, fields: Vec<Value>| {
        Value::Record(std::rc::Rc::new(faber::eval::Record {
            genus: genus(name),
            fields,
        }))
    };
    let params_value = record(
        "Parametri",
        vec![
            record("Strata", vec![tv(&w1), tv(&b1)]),
            record("Strata", vec![tv(&w2), tv(&b2)]),
            Value::Float(0.75),
        ],
    );
    let params_arg = FnArg::Record(vec![
        FnArg::Record(vec![FnArg::Tensor(&w1), FnArg::Tensor(&b1)]),
        FnArg::Record(vec![FnArg::Tensor(&w2), FnArg::Tensor(&b2)]),
        FnArg::Number(0.75),
    ]);
    let f = func(&p, "arbor");
    let got = dev
        .run_function(&p, f, &[params_arg.clone(), FnArg::Tensor(&x32)])
        .unwrap();
    close(
        &got,
        &interpreted(&p, f, vec![params_value.clone(), tv(&x32)]),
        "arbor",
    );
    let f = func(&p, "g_arbor");
    let args = [
        params_arg,
        FnArg::Tensor(&x32),
        FnArg::Nihil,
        FnArg::Number(1.0),
    ];
    let got = dev.run_function(&p, f, &args).unwrap();
    let want = interpreted(
        &p,
        f,
        vec![params_value, tv(&x32), Value::Nihil, Value::Float(1.0)],
    );
    assert_eq!(
        want.len(),
        6,
        "g_arbor gives ((∂w1, ∂b1), (∂w2, ∂b2), ∂scala), ∂x"
    );
    close(&got, &want, "g_arbor");

    // An AdamW step whose bias corrections are number parameters (one program for
    // every step) and whose other coefficients are folded literals.
    let f = func(&p, "passus");
    let (m23, v23) = (rand32(&mut rng, &[2, 3]), rand32(&mut rng, &[2, 3]));
    let v23 = Tensor::from_f32(
        v23.data_f32().unwrap().iter().map(|x| x * x).collect(),
        &[2, 3],
    )
    .unwrap();
    let g23 = rand32(&mut rng, &[2, 3]);
    for (inv_bc2, step) in [(31.6, 0.03), (22.4, 0.0158)] {
        let args = [
            FnArg::Tensor(&x),
            FnArg::Tensor(&g23),
            FnArg::Tensor(&m23),
            FnArg::Tensor(&v23),
            FnArg::Number(inv_bc2),
            FnArg::Number(step),
        ];
        let got = dev.run_function(&p, f, &args).unwrap();
        let vs = vec![
            tv(&x),
            tv(&g23),
            tv(&m23),
            tv(&v23),
            Value::Float(inv_bc2),
            Value::Float(step),
        ];
        close(&got, &interpreted(&p, f, vs), "passus");
    }

    // Loops with bounds known when traced are unrolled (the companion's lists of
    // per-pass values too); `si` on a known flag takes one branch. The integer and
    // the flag are part of the program's key.
    let ws = rand32(&mut rng, &[3, 2, 2]);
    let x22 = rand32(&mut rng, &[2, 2]);
    for n in [0, 1, 3] {
        for name in ["per_strata", "g_strata"] {
            let f = func(&p, name);
            let mut args = vec![FnArg::Tensor(&ws), FnArg::Tensor(&x22), FnArg::Int(n)];
            let mut vs = vec![tv(&ws), tv(&x22), Value::Int(n)];
            if name == "g_strata" {
                args.extend([FnArg::Nihil, FnArg::Number(1.25)]);
                vs.extend([Value::Nihil, Value::Float(1.25)]);
            }
            let got = dev.run_function(&p, f, &args).unwrap();
            close(&got, &interpreted(&p, f, vs), &format!("{name} n = {n}"));
        }
    }
    for quadra in [true, false] {
        for name in ["optio", "g_si"] {
            let f = func(&p, name);
            let mut args = vec![FnArg::Tensor(&x22), FnArg::Bool(quadra)];
            let mut vs = vec![tv(&x22), Value::Bool(quadra)];
            if name == "g_si" {
                args.extend([FnArg::Nihil, FnArg::Number(0.5)]);
                vs.extend([Value::Nihil, Value::Float(0.5)]);
            }
            let got = dev.run_function(&p, f, &args).unwrap();
            close(&got, &interpreted(&p, f, vs), &format!("{name} {quadra}"));
        }
    }
    let f = func(&p, "duplica");
    let x2 = rand32(&mut rng, &[2]);
    let got = dev.run_function(&p, f, &[FnArg::Tensor(&x2)]).unwrap();
    close(&got, &interpreted(&p, f, vec![tv(&x2)]), "duplica");

    // Each function compiled once; a second call of one is a cache hit.
    let misses = dev.cache().misses();
    let f = func(&p, "g_mse");
    let again = [
        FnArg::Tensor(&t),
        FnArg::Tensor(&pp),
        FnArg::Nihil,
        FnArg::Number(2.0),
    ];
    dev.run_function(&p, f, &again).unwrap();
    assert_eq!(dev.cache().misses(), misses);
    // passus ran twice (one hit), g_mse once more.
    assert_eq!(dev.cache().hits(), 2);
    k::set_precision(before);
}

#[test]
fn what_has_no_lowering_yet_is_named() {
    let p = compile();
    let t23 = Param::Tensor(TensorType::new(ElementType::F32, &[2, 3]));
    // `si` on a number the device computes: control flow on a device value.
    let e = lower_function(
        &p,
        func(&p, "ramus"),
        std::slice::from_ref(&t23),
        ElementType::F32,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no StableHLO lowering for the operator `>` on a value the device computes"
    );
    let t2 = Param::Tensor(TensorType::new(ElementType::F32, &[2]));
    let e = lower_function(&p, func(&p, "crescit"), &[t2], ElementType::F32).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no StableHLO lowering for the statement `dum` (a loop)"
    );
    // A loop bound or a `si` flag the device would compute.
    let t222 = Param::Tensor(TensorType::new(ElementType::F32, &[3, 2, 2]));
    let t22 = Param::Tensor(TensorType::new(ElementType::F32, &[2, 2]));
    let n = Param::Number(ElementType::F32);
    let e = lower_function(
        &p,
        func(&p, "per_strata"),
        &[t222, t22.clone(), n.clone()],
        ElementType::F32,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no StableHLO lowering for `itera` whose bounds the device computes"
    );
    let e = lower_function(&p, func(&p, "optio"), &[t22, n], ElementType::F32).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no StableHLO lowering for `si` on a value the device computes"
    );
    // A shape other than the one the body was written for is refused by the op.
    let t33 = Param::Tensor(TensorType::new(ElementType::F32, &[3, 3]));
    let s = Param::Number(ElementType::F32);
    let e = lower_function(&p, func(&p, "resh"), &[t33, s.clone()], ElementType::F32).unwrap_err();
    assert!(
        e.to_string()
            .contains("9 elements cannot take shape [3, 2]"),
        "{e}"
    );
    // An argument missing.
    let e = lower_function(
        &p,
        func(&p, "resh"),
        std::slice::from_ref(&t23),
        ElementType::F32,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("with 1 arguments for 2 parameters"),
        "{e}"
    );
    let text = lower_function(&p, func(&p, "resh"), &[t23, s], ElementType::F32).unwrap();
    assert!(text.contains("stablehlo.reshape"), "{text}");
    if pjrt_plugin().is_none() {
        say_no_plugin("xla_functions::no_lowering (its device part)");
    }
}

/// gradus' optimizer over a record-of-records parameter tree: `norma_gradientum`,
/// `adam_initium` and `momentum_initium` as gradus writes them; the leaf loops of
/// SGD, SGD with momentum and AdamW as gradus writes them but without their first
/// line, the finiteness check (`hospes.primum_non_finitum`, a `si` on what the
/// device computes), which keeps `sgd`, `momentum` and `adamw` themselves in the
/// interpreter; `tonde_normam`'s scaling loop.
const OPTIMIZE: &str = r#"importa ex "gradus:optimize" privata optimize

genus Stratum {
    tf32[2, 3] w
    tf32[3] b
}

genus Rete {
    Stratum prima
    lista<Stratum> alia
    f32 scala
}

functio folia(Rete g) → lista<tf32> {
    redde hospes.folia(g)
}

functio norma(Rete g) → f32 {
    redde optimize.norma_gradientum(g)
}

functio initium(Rete p) → optimize.StatusAdam {
    redde optimize.adam_initium(p)
}

functio sgd_arboris(Rete p, Rete g, f32 lr) → Rete {
    redde hospes.ex_foliis(p, optimize.sgd_folia(hospes.folia(p), hospes.folia(g), lr))
}

functio momentum_arboris(Rete p, Rete g, optimize.StatusMomenti s, f32 lr, f32 mu) → iuncta<Rete, optimize.StatusMomenti> {
    fixum [r, v] ← optimize.momentum_folia(hospes.folia(p), hospes.folia(g), s.velocitas, lr, mu)
    redde iuncta<Rete, optimize.StatusMomenti>[hospes.ex_foliis(p, r), optimize.StatusMomenti { velocitas = v }]
}

functio velocitates(Rete p) → optimize.StatusMomenti {
    redde optimize.momentum_initium(p)
}

functio tonde(Rete g, f32 coef) → Rete {
    redde hospes.ex_foliis(g, optimize.scala_folia(hospes.folia(g), coef))
}

functio adamw_arboris(Rete p, Rete g, optimize.StatusAdam s, f32 lr, f32 beta1, f32 beta2, f32 eps, f32 wd) → iuncta<Rete, optimize.StatusAdam> {
    fixum numerus t ← s.passus + 1
    fixum f32 bc1 ← 1.0 - beta1.potentia(t ↦ fractus)
    fixum f32 bc2_sqrt ← (1.0 - beta2.potentia(t ↦ fractus)).radix()
    fixum f32 step_size ← lr / bc1
    fixum f32 decay ← 1.0 - lr * wd
    fixum lista<f32> coef ← [beta1, 1.0 - beta1, beta2, 1.0 - beta2, 1.0 / bc2_sqrt, eps, decay, step_size]
    fixum [r, m, v] ← optimize.adamw_folia(hospes.folia(p), hospes.folia(g), s.m, s.v, coef)
    redde iuncta<Rete, optimize.StatusAdam>[hospes.ex_foliis(p, r), optimize.StatusAdam { m = m, v = v, passus = t }]
}

functio sgd(Rete p, Rete g, f32 lr) → Rete {
    redde optimize.sgd(p, g, lr)
}

incipit {
}
"#;

#[test]
fn gradus_optimizer_over_a_parameter_tree_agrees_with_the_interpreter() {
    let p = compile_source("xla_functions.fab", OPTIMIZE);
    // gradus' own `sgd` starts with its finiteness check: a host function that
    // reads values, which does not lower (the interpreter runs it).
    let t = |dims: &[usize]| Param::Tensor(TensorType::new(ElementType::F32, dims));
    let layer = || Param::Record(vec![t(&[2, 3]), t(&[3])]);
    let tree = Param::Record(vec![
        layer(),
        Param::List(vec![layer(), layer()]),
        Param::Number(ElementType::F32),
    ]);
    let e = lower_function(
        &p,
        func(&p, "sgd"),
        &[tree.clone(), tree.clone(), Param::Number(ElementType::F32)],
        ElementType::F32,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "no StableHLO lowering for the host function `hospes.primum_non_finitum`"
    );
    let Some(mut dev) = device() else {
        say_no_plugin("xla_functions::gradus_optimizer");
        return;
    };
    let before = k::set_precision(DType::F32);
    let mut rng = SplitMix64::new(7);
    let genus = |name: &str| {
        let i = p.genera.iter().position(|g| g.name.ends_with(name));
        faber::ir::GenusId(i.unwrap() as u32)
    };
    let record = |name: &str, fields: Vec<Value>| {
        Value::Record(std::rc::Rc::new(faber::eval::Record {
            genus: genus(name),
            fields,
        }))
    };
    let tv = |t: Tensor| Value::Tensor(std::rc::Rc::new(t));
    // Every leaf its own values; `scala` a number, which is no leaf.
    let mut rete = |scala: f64| {
        let mut layer = || {
            record(
                "Stratum",
                vec![tv(rand32(&mut rng, &[2, 3])), tv(rand32(&mut rng, &[3]))],
            )
        };
        let prima = layer();
        let alia = Value::list(vec![layer(), layer()]);
        record("Rete", vec![prima, alia, Value::Float(scala)])
    };
    let (params, grads) = (rete(0.5), rete(3.0));

    // Runs `name` on the device and in the interpreter; compares every output.
    let mut both = |name: &str, args: Vec<Value>| {
        let f = func(&p, name);
        let dargs: Vec<FnArg> = args.iter().map(arg_of).collect();
        let got = dev
            .run_function(&p, f, &dargs)
            .unwrap_or_else(|e| panic!("{name} did not run on the device: {e}"));
        close(&got, &interpreted(&p, f, args.clone()), name);
        interpret(&p, f, args)
    };
    both("folia", vec![grads.clone()]);
    both("norma", vec![grads.clone()]);
    both(
        "sgd_arboris",
        vec![params.clone(), grads.clone(), Value::Float(0.125)],
    );
    both("tonde", vec![grads.clone(), Value::Float(0.25)]);
    // SGD with momentum, two steps: the second from the first's velocities.
    let mut vel = both("velocitates", vec![params.clone()]);
    for _ in 0..2 {
        let args = vec![
            params.clone(),
            grads.clone(),
            vel,
            Value::Float(0.05),
            Value::Float(0.9),
        ];
        let Value::Tuple(out) = both("momentum_arboris", args) else {
            panic!("momentum_folia gives a pair");
        };
        vel = out[1].clone();
    }
    let mut state = both("initium", vec![params.clone()]);
    let mut params = params;
    for step in 1..=2 {
        let args = vec![
            params.clone(),
            grads.clone(),
            state,
            Value::Float(0.01),
            Value::Float(0.9),
            Value::Float(0.999),
            Value::Float(1e-8),
            Value::Float(0.1),
        ];
        let Value::Tuple(out) = both("adamw_arboris", args) else {
            panic!("adamw_folia gives a pair");
        };
        params = out[0].clone();
        state = out[1].clone();
        let Value::Record(s) = &state else {
            panic!("the state is a record")
        };
        assert!(
            matches!(s.fields[2], Value::Int(n) if n == step),
            "the step count"
        );
    }
    k::set_precision(before);
}
