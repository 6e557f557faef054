//! `faber run --backend xla` (src/cli/run_xla.rs, src/xla/offload.rs): the examples'
//! loss traces under `--precision f32` equal the interpreter's within 1e-4 relative
//! (the bound), with the loss and gradient functions running on the device
//! (`--verbose` counts the calls); the usage errors and the missing plugin are
//! checked on every machine, the device runs only with a plugin (otherwise
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)`).

mod common;

use std::process::Output;

use common::entries::first_error_code;
use common::{pjrt_plugin, say_no_plugin, Faber};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The numbers a run printed, one per line.
fn trace(o: &Output) -> Vec<f64> {
    common::printed_numbers(&o.stdout)
}

fn run(example: &str, extra: &[&str]) -> Output {
    Faber::new()
        .args(["--verbose", "run", "--precision", "f32"])
        .args(extra)
        .arg(example)
        .output()
}

/// Offloaded calls counted by `--verbose`.
fn offloaded(o: &Output) -> u64 {
    common::xla_offloaded(&text(&o.stderr))
}

#[test]
fn example_traces_on_the_device_equal_the_interpreters() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_run::example_traces");
        return;
    };
    let plugin = plugin.to_str().unwrap();
    for (example, min_calls) in [("examples/linear-regression", 16), ("examples/mlp", 100)] {
        let cpu = run(example, &["--backend", "cpu"]);
        assert_eq!(cpu.status.code(), Some(0), "{}", text(&cpu.stderr));
        let xla = run(example, &["--backend", "xla", "--xla-plugin", plugin]);
        assert_eq!(xla.status.code(), Some(0), "{}", text(&xla.stderr));
        let (a, b) = (trace(&cpu), trace(&xla));
        assert!(!a.is_empty());
        assert_eq!(a.len(), b.len(), "{example}");
        for (i, (x, y)) in a.iter().zip(&b).enumerate() {
            assert!(
                (x - y).abs() <= 1e-4 * x.abs(),
                "{example} line {i}: cpu {x}, xla {y}"
            );
        }
        let n = offloaded(&xla);
        assert!(n >= min_calls, "{example}: {n} calls on the device");
        // `--verbose` names the device, and each function left to the CPU with the
        // file and line where it is written.
        let err = text(&xla.stderr);
        assert!(err.contains("xla: device 0 ("), "{err}");
        let declined: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("runs on the CPU"))
            .collect();
        assert!(!declined.is_empty(), "{err}");
        for line in declined {
            let at = line
                .split_once("` (")
                .and_then(|(_, rest)| rest.split_once(") runs on the CPU: "))
                .map(|(at, _)| at)
                .unwrap_or_else(|| panic!("no file:line in {line}"));
            let (file, n) = at.rsplit_once(':').unwrap_or_else(|| panic!("{line}"));
            assert!(file.ends_with(".fab"), "{line}");
            assert!(n.parse::<u32>().is_ok_and(|n| n > 0), "{line}");
        }
        println!("{example}: {n} calls on the device; traces agree to 1e-4");
    }
}

/// The GPT example's per-step loss (`--trace`) with its gradient companion
/// (`grad_damnum`, the whole model's backward) on the device.
#[test]
fn the_gpt_gradient_runs_on_the_device_and_the_trace_agrees() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_run::gpt");
        return;
    };
    let example = "examples/gpt-shakespeare";
    let out = common::scratch_dir("xla_run", "gpt");
    let out = out.to_str().unwrap();
    let args = ["--", "--tiny", "--steps", "4", "--trace", "--out", out];
    let go = |backend: &[&str]| {
        let o = Faber::new()
            .args(["--verbose", "run", "--precision", "f32"])
            .args(backend)
            .arg(example)
            .args(args)
            .output();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        o
    };
    let cpu = go(&["--backend", "cpu"]);
    let xla = go(&["--backend", "xla", "--xla-plugin", plugin.to_str().unwrap()]);
    let losses = |o: &Output| common::gpt_losses(&text(&o.stdout));
    let (a, b) = (losses(&cpu), losses(&xla));
    assert_eq!(a.len(), 4, "{}", text(&cpu.stdout));
    assert_eq!(a.len(), b.len());
    for (i, (x, y)) in a.iter().zip(&b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-4 * x.abs(),
            "step {i}: cpu {x}, xla {y}"
        );
    }
    let err = text(&xla.stderr);
    assert!(
        err.contains("xla: `model::grad_damnum` ran on the device 4 time(s)"),
        "{err}"
    );
    // The compile cache (benches/xla/run.sh reads this line): every offloaded call
    // either compiled or found its program; the gradient compiles once for 4 steps.
    let (misses, hits) = err
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("xla: compile cache: ")?;
            let (m, rest) = rest.split_once(" miss(es) (programs compiled), ")?;
            let (h, _) = rest.split_once(" hit(s)")?;
            Some((m.parse::<u64>().ok()?, h.parse::<u64>().ok()?))
        })
        .unwrap_or_else(|| panic!("no compile cache line in:\n{err}"));
    assert!(misses >= 1 && hits >= 3, "{err}");
    assert_eq!(misses + hits, offloaded(&xla), "{err}");
}

#[test]
fn backend_usage_errors_and_a_missing_plugin() {
    let o = run("examples/linear-regression", &["--backend", "tpu"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("backend `tpu` is not available: `cpu` or `xla`"));
    let o = run(
        "examples/linear-regression",
        &["--backend", "xla", "--check-finite"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("`--check-finite`"));
    let o = run(
        "examples/linear-regression",
        &["--backend", "xla", "--xla-plugin", "/nonexistent/xla.so"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI006"), "{err}");
    assert!(o.stdout.is_empty());
}
