//! Values that stay on the device (src/tensor/remote.rs, src/xla/resident.rs): a
//! device program's results are device buffers inside the interpreter's values,
//! copied to the host only when read, and passed to the next program as they are.
//! `--verbose` counts the bytes each way; these tests check the counts against what
//! the program must move, computed by hand below. Real plugin only (else the skip
//! line of tests/common).

mod common;

use std::process::Output;

use common::{pjrt_plugin, say_no_plugin, scratch_dir, write_file, Faber};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (bytes to the device, bytes back) from the `--verbose` summary.
fn traffic(o: &Output) -> (u64, u64) {
    common::xla_traffic(&text(&o.stderr))
}

/// Runs `source` (written to a scratch file `name`) with `--backend xla --verbose`
/// under `--precision f32`; `None` without a plugin (after the skip line).
fn run_on_device(name: &str, source: &str) -> Option<Output> {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin(&format!("xla_resident::{name}"));
        return None;
    };
    let dir = scratch_dir("xla_resident", name);
    let file = dir.join(name);
    write_file(&file, source);
    let o = Faber::new()
        .args(["--verbose", "run", "--precision", "f32", "--backend", "xla"])
        .arg("--xla-plugin")
        .arg(&plugin)
        .arg(&file)
        .output();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    Some(o)
}

const NAN: &str = r#"
importa ex "gradus:optimize" privata optimize

genus Duo {
    tf32[2, 3] a
    tf32[3] b
}

functio logarithmi(Duo p) → Duo {
    redde Duo { a = p.a.log(), b = p.b.log() }
}

incipit {
    fixum tf32[] semen ← vacua
    fixum Duo p ← Duo { a = semen.strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3]), b = semen.strue([1.0, -2.0, 3.0], [3]) }
    fixum Duo q ← logarithmi(p)
    nota "primum: §"(optimize.primum_non_finitum(q))
    fixum Duo r ← logarithmi(Duo { a = p.a, b = p.a.summa_axis(0, falsum) })
    nota "primum: §"(optimize.primum_non_finitum(r))
    nota r.b
}
"#;

/// `log` of −2 on the device is NaN (the device makes no domain checks); gradus'
/// divergence check finds it in leaf `b` by asking the device — one number per
/// leaf comes back, not the leaf.
#[test]
fn a_non_finite_leaf_is_found_on_the_device() {
    let Some(o) = run_on_device("nan.fab", NAN) else {
        return;
    };
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "primum: b", "{out}");
    assert_eq!(lines[1].trim_end(), "primum:", "{out}");
    // log 5, log 7, log 9 (the columns of a summed), to f32's precision.
    let r: Vec<f64> = lines[2]
        .trim_matches(|c| c == '[' || c == ']')
        .split(", ")
        .map(|x| x.parse().unwrap())
        .collect();
    for (got, want) in r.iter().zip([5f64.ln(), 7f64.ln(), 9f64.ln()]) {
        assert!((got - want).abs() <= 1e-6 * want, "{got} vs {want}");
    }
    // In: the first call copies its record — 6 + 3 f32 — as the host holds it;
    // the second's record is p.a, already on the device (the same host tensor: its
    // copy is kept), and the host's 3 column sums. Back: each check counts the
    // non-finite elements of leaves a and b in one program, one f32 per leaf; then
    // `nota` reads r.b's 3 elements.
    assert_eq!(traffic(&o), ((6 + 3 + 3) * 4, (2 + 2) * 4 + 3 * 4));
}

/// The GPT's training step with values on the device: per step only the batch,
/// and the numbers of the step (the loss, the gradient norm's parts, the learning
/// rate's coefficients), cross; the parameters, gradients and AdamW's moments stay,
/// and the initial parameters go in once.
#[test]
fn a_gpt_training_step_moves_the_batch_not_the_parameters() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_resident::gpt");
        return;
    };
    let out = scratch_dir("xla_resident", "gpt");
    let run = |steps: u32| {
        let o = Faber::new()
            .args(["--verbose", "run", "--precision", "f32", "--backend", "xla"])
            .arg("--xla-plugin")
            .arg(&plugin)
            .arg("examples/gpt-shakespeare")
            .args(["--", "--tiny", "--sample", "0", "--eval-interval", "1000"])
            .arg("--out")
            .arg(&out)
            .args(["--steps", &steps.to_string()])
            .output();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        o
    };
    let (short, long) = (run(2), run(6));
    // The tiny model's size and batch, as the run prints them.
    let (params, block, batch) = common::gpt_size(&text(&short.stdout));
    let (a, b) = (traffic(&short), traffic(&long));
    let per_step_in = (b.0 - a.0) / 4;
    let per_step_out = (b.1 - a.1) / 4;
    let batch_bytes = 2 * batch * block * 4; // x and y, f32
    let param_bytes = params * 4;
    println!(
        "per step: {per_step_in} B in (batch {batch_bytes} B), {per_step_out} B back; \
         parameters {param_bytes} B"
    );
    assert!(per_step_in >= batch_bytes, "the batch must go in");
    // Copying the parameters (or gradients, or moments) would move param_bytes or
    // more per step; the step's own numbers are a few hundred bytes.
    assert!(
        per_step_in < batch_bytes + param_bytes / 8,
        "{per_step_in} B in per step"
    );
    assert!(
        per_step_out < param_bytes / 8,
        "{per_step_out} B back per step"
    );
    // The whole 2-step run: the initial (host) parameters go to the device once and
    // are kept for the next call that passes them — the loss estimates before the
    // first step (8 calls at `--tiny`), the parameter count, the optimizer's
    // initial state, the first step — so less than twice the parameters go in in
    // all; copying them at each of those calls would move ten times as much.
    assert!(
        a.0 < 2 * param_bytes,
        "{} B in over a 2-step run; parameters {param_bytes} B",
        a.0
    );
}

const NO_LOWERING: &str = r#"
functio dupla(tf32[2, 3] x) → tf32[2, 3] {
    varia tf32[2, 3] y ← x.scala(2.0)
    dum y.summa() < 100.0 {
        y ← y.scala(2.0)
    }
    redde y
}

functio quadrata(tf32[2, 3] x) → f32 {
    varia f32 s ← 0.0
    itera ex x.planata() fixum v ergo s ← s + v * v
    redde s
}

incipit {
    fixum tf32[] z ← vacua
    fixum tf32[2, 3] x ← z.strue([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3])
    nota dupla(x).summa()
    nota quadrata(x)
}
"#;

/// A function with a statement that has no lowering (a `dum` loop on a value the
/// device computes) runs on the CPU; `--verbose` names why, the function's line and
/// the line of the statement. `planata` in a traced function is a list of device
/// numbers: the function that walks it runs on the device.
#[test]
fn what_does_not_lower_is_named_with_its_line() {
    let Some(o) = run_on_device("dupla.fab", NO_LOWERING) else {
        return;
    };
    // 21·2·2 = 84 < 100 ≤ 168; 1 + 4 + 9 + 16 + 25 + 36 = 91.
    assert_eq!(text(&o.stdout), "168.0\n91.0\n");
    let err = text(&o.stderr);
    // Lines of NO_LOWERING: `dupla` on line 2, its `dum` on line 4.
    let line = err
        .lines()
        .find(|l| l.contains("`dupla::dupla`"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        line.contains("dupla.fab:2)") && line.contains("`dum`") && line.ends_with("dupla.fab:4"),
        "{line}"
    );
    assert!(
        err.contains("xla: `dupla::quadrata` ran on the device 1 time(s)"),
        "{err}"
    );
}
