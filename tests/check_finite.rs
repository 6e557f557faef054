//! NaN and infinity: `faber run --check-finite` (RUN018 at the first op whose result is
//! not finite, forward or in a generated companion), gradus' optimizer policy (RUN007
//! naming the step and the leaf) and the GPT example stopping on divergence without
//! overwriting its checkpoint.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-finite-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn faber(args: &[&str]) -> Output {
    common::faber(args)
}

fn run_file(dir: &Path, name: &str, src: &str, flags: &[&str]) -> Output {
    let file = dir.join(name);
    std::fs::write(&file, src).unwrap();
    let mut args = vec!["run"];
    args.extend_from_slice(flags);
    args.push(file.to_str().unwrap());
    faber(&args)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `exp` of 800 overflows f64 (e^800 > 1.8e308) on line 4.
const OVERFLOW: &str = "incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 a ← semen.crea(800.0, [2])
    fixum tf32 b ← a.exp()
    nota b.summa()
}
";

/// 1/0 in floating point is +inf (IEEE 754) on line 3.
const DIVISION: &str = "incipit {
    fixum f32 zero ← 0.0
    fixum f32 x ← 1.0 / zero
    nota x
}
";

/// d log(x)/dx = 1/x: finite forward (log 1e-320 ≈ −736.8) but 1/1e-320 overflows in
/// the companion's divide, which was generated from the `log` on line 3.
const COMPANION: &str = "@ radix backward \"grad_log_summa\"
functio log_summa(tf32 x) → f32 {
    fixum tf32 l ← x.log()
    redde l.summa()
}

functio residuum() → vacuum {
    tacet
}

incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2] x ← semen.strue([1e-320, 4.0], [2])
    nota log_summa(x)
    fixum [gx] ← grad_log_summa(x, residuum(), 1.0)
    nota gx
}
";

#[test]
fn off_by_default_the_programs_run_to_the_end() {
    let dir = scratch("off");
    for (name, src, last) in [
        ("overflow.fab", OVERFLOW, "inf"),
        ("division.fab", DIVISION, "inf"),
        ("companion.fab", COMPANION, "[inf, 0.25]"),
    ] {
        let out = run_file(&dir, name, src, &[]);
        assert_eq!(out.status.code(), Some(0), "{name}: {}", text(&out.stderr));
        let stdout = text(&out.stdout);
        assert_eq!(stdout.lines().last(), Some(last), "{name}: {stdout}");
    }
}

#[test]
fn a_tensor_overflow_is_caught_at_its_line() {
    let dir = scratch("overflow");
    let out = run_file(&dir, "overflow.fab", OVERFLOW, &["--check-finite"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error[RUN018]: `exp`"), "{err}");
    assert!(err.contains("+inf at flat index 0"), "{err}");
    assert!(err.contains("overflow.fab:4:20"), "{err}");
    assert!(text(&out.stdout).is_empty(), "nothing after the op runs");
}

#[test]
fn a_scalar_division_by_zero_is_caught_at_its_line() {
    let dir = scratch("division");
    let out = run_file(&dir, "division.fab", DIVISION, &["--check-finite"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error[RUN018]: `/`"), "{err}");
    assert!(err.contains("+inf"), "{err}");
    assert!(err.contains("division.fab:3:19"), "{err}");
}

#[test]
fn a_non_finite_value_born_in_a_companion_names_the_primal_line() {
    let dir = scratch("companion");
    let out = run_file(&dir, "companion.fab", COMPANION, &["--check-finite"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.starts_with("error[RUN018]"), "{err}");
    assert!(err.contains("grad_log_summa"), "{err}");
    // The primal `x.log()` is line 3, column 20; the forward value printed first.
    assert!(err.contains("companion.fab:3:20"), "{err}");
    assert_eq!(
        text(&out.stdout).lines().count(),
        1,
        "{}",
        text(&out.stdout)
    );
}

/// A tree with a bad leaf two levels down: the message must name its dotted path.
const ADAMW: &str = "importa ex \"gradus:optimize\" privata optimize

genus Rete {
    tf32 a
    lista<tf32> strata
}

incipit {
    fixum tf32[] z ← vacua
    fixum Rete p ← Rete { a = z.crea(1.0, [2]), strata = [z.crea(1.0, [3]), z.crea(1.0, [2])] }
    fixum f32 inf ← 1.0 / 0.0
    fixum Rete g ← Rete { a = z.crea(0.5, [2]), strata = [z.crea(0.5, [3]), z.strue([0.5, BAD], [2])] }
    fixum [p1, s1] ← optimize.adamw(p, p, optimize.adam_initium(p), 0.1, 0.9, 0.999, 0.00000001, 0.0)
    fixum [p2, s2] ← optimize.adamw(p1, g, s1, 0.1, 0.9, 0.999, 0.00000001, 0.0)
    nota p2.strata[1]
}
";

#[test]
fn adamw_stops_naming_the_step_and_the_leaf() {
    let dir = scratch("adamw");
    for bad in ["inf", "-inf", "inf - inf"] {
        let src = ADAMW.replace("BAD", bad);
        let out = run_file(&dir, "adamw.fab", &src, &[]);
        assert_eq!(out.status.code(), Some(1), "{bad}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.starts_with("error[RUN007]: adamw step 2: the gradient of `strata.1`"),
            "{bad}: {err}"
        );
        assert!(
            text(&out.stdout).is_empty(),
            "{bad}: no NaN weights printed"
        );
    }
}

#[test]
fn every_optimizer_and_clipping_stops_on_an_infinite_gradient() {
    let dir = scratch("optimizers");
    for (call, who) in [
        ("optimize.sgd(p, g, 0.1)", "sgd"),
        (
            "optimize.momentum(p, g, optimize.momentum_initium(p), 0.1, 0.9)[0]",
            "momentum",
        ),
        (
            "optimize.adam(p, g, optimize.adam_initium(p), 0.1, 0.9, 0.999, 0.00000001)[0]",
            "adamw step 1",
        ),
        ("optimize.tonde_normam(g, 1.0)", "tonde_normam"),
    ] {
        let src = format!(
            "importa ex \"gradus:optimize\" privata optimize

genus Duo {{
    tf32 a
    tf32 b
}}

incipit {{
    fixum tf32[] z ← vacua
    fixum Duo p ← Duo {{ a = z.crea(1.0, [2]), b = z.crea(1.0, [1]) }}
    fixum Duo g ← Duo {{ a = z.crea(1.0, [2]), b = z.crea(1.0 / 0.0, [1]) }}
    fixum Duo r ← {call}
    nota r.b
}}
"
        );
        let out = run_file(&dir, "opt.fab", &src, &[]);
        assert_eq!(out.status.code(), Some(1), "{who}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(
            err.starts_with(&format!("error[RUN007]: {who}: the gradient of `b`")),
            "{who}: {err}"
        );
    }
}

fn gpt(out_dir: &Path, flags: &[&str]) -> Output {
    let pkg = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gpt-shakespeare");
    let mut args = vec!["run", pkg.to_str().unwrap(), "--", "--tiny"];
    args.extend_from_slice(flags);
    args.extend(["--out", out_dir.to_str().unwrap()]);
    faber(&args)
}

#[test]
fn the_gpt_example_stops_on_divergence_and_keeps_its_checkpoint() {
    let dir = scratch("gpt");
    let good = gpt(&dir, &["--steps", "2", "--sample", "4"]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    let model = dir.join("model.safetensors");
    let before = std::fs::read(&model).unwrap();

    let bad = gpt(&dir, &["--steps", "5", "--lr", "1e30"]);
    assert_eq!(bad.status.code(), Some(1), "{}", text(&bad.stdout));
    let err = text(&bad.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one line: {err}");
    assert!(
        lines[0].starts_with("error: training diverged at step "),
        "{err}"
    );
    assert!(lines[0].contains("is not finite"), "{err}");
    assert!(!text(&bad.stdout).contains("NaN"), "{}", text(&bad.stdout));
    assert_eq!(
        std::fs::read(&model).unwrap(),
        before,
        "the good checkpoint was overwritten"
    );
}

#[test]
fn the_gpt_example_runs_clean_under_check_finite_and_divergence_names_an_op() {
    // No false alarm anywhere in gradus or the example when nothing diverges…
    let dir = scratch("gpt-check");
    let pkg = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/gpt-shakespeare");
    let run = |flags: &[&str]| {
        let mut args = vec![
            "run",
            "--check-finite",
            pkg.to_str().unwrap(),
            "--",
            "--tiny",
        ];
        args.extend_from_slice(flags);
        args.extend(["--out", dir.to_str().unwrap()]);
        faber(&args)
    };
    let good = run(&["--steps", "2", "--sample", "4"]);
    assert_eq!(good.status.code(), Some(0), "{}", text(&good.stderr));
    // …and a diverging run stops at the op, inside the generated companion, before the
    // example's own divergence check.
    let bad = run(&["--steps", "5", "--lr", "1e30"]);
    assert_eq!(bad.status.code(), Some(1));
    let err = text(&bad.stderr);
    assert!(err.starts_with("error[RUN018]"), "{err}");
    // The example runs in f32 (its faber.toml): a step of 1e30 overflows f32's range
    // (±inf) where f64 would reach NaN first; either is the divergence.
    assert!(
        ["NaN", "+inf", "-inf"]
            .iter()
            .any(|v| err.contains(&format!("in `model::grad_damnum` produced {v}"))),
        "{err}"
    );
    assert!(!err.contains("training diverged"), "{err}");
}

#[test]
fn the_train_steps_stop_naming_the_parameter() {
    let dir = scratch("train");
    for (call, who) in [
        (
            "train.train_step_2x2(w, w, w, bad, 0.1)[1]",
            "train_step_2x2: the gradient of `b`",
        ),
        (
            "train.train_step_2x2(w, w, w, w, 1.0 / 0.0)[0]",
            "train_step_2x2: the learning rate is inf",
        ),
    ] {
        let src = format!(
            "importa ex \"gradus:train\" privata train
incipit {{
    fixum tf32[] z ← vacua
    fixum tf32[2, 2] w ← z.crea(1.0, [2, 2])
    fixum tf32[2, 2] bad ← z.strue([1.0, 2.0, 0.0 / 0.0, 3.0], [2, 2])
    nota {call}
}}
"
        );
        let out = run_file(&dir, "train.fab", &src, &[]);
        assert_eq!(out.status.code(), Some(1), "{who}: {}", text(&out.stdout));
        let err = text(&out.stderr);
        assert!(err.starts_with(&format!("error[RUN007]: {who}")), "{err}");
    }
}

#[test]
fn a_non_finite_learning_rate_stops_adamw() {
    let dir = scratch("lr");
    let src = ADAMW
        .replace("BAD", "1.0")
        .replace("s1, 0.1, 0.9", "s1, inf - inf, 0.9");
    let out = run_file(&dir, "lr.fab", &src, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.starts_with("error[RUN007]: adamw step 2: a learning rate or coefficient is NaN"),
        "{err}"
    );
}
