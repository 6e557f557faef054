//! Tensor parallel (issue 25, `[run.sharding]`, src/xla/spmd.rs): the train step's
//! named parameters split along their last ("columns") or first ("rows") axis over N
//! devices with XLA's SPMD partitioner, against the one-device run of the same build.
//! Runs when a plugin is at hand (`FABER_PJRT_PLUGIN`, or `.venv-xla/` from
//! scripts/xla-setup.sh; the CPU plugin offers 4 host devices); otherwise prints
//! `skipped: no PJRT plugin (run scripts/xla-setup.sh)`. The bound is the
//! data-parallel gradient's of tests/xla_spmd.rs (1e-5·max|leaf| + 1e-10), for the
//! same reason: a split matmul's partial sums and their all-reduce are another
//! order of the same sum.

mod common;

use std::process::Output;

use common::entries::first_error_code;
use common::spmd_files::{close, safetensors};
use common::{pjrt_plugin, say_no_plugin, Faber};

const GPT: &str = "examples/gpt-shakespeare";

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn trace(o: &Output) -> Vec<f64> {
    common::gpt_losses(&text(&o.stdout))
}

/// The column-then-row split of the tiny GPT's attention projections and MLP.
const SPLIT: &str = "\"strata.*.wq\" = \"columns\"\n\"strata.*.wk\" = \"columns\"\n\
     \"strata.*.wv\" = \"columns\"\n\"strata.*.wo\" = \"rows\"\n\
     \"strata.*.wf\" = \"columns\"\n\"strata.*.bf\" = \"columns\"\n\
     \"strata.*.wp\" = \"rows\"\n";

/// A copy of the GPT example under `dir` whose faber.toml gives `[run.sharding]`
/// the table `sharding` (its lines).
fn sharded_gpt(dir: &std::path::Path, sharding: &str) -> std::path::PathBuf {
    let root = dir.join("gpt");
    for sub in ["src", "data"] {
        let from = std::path::Path::new(GPT).join(sub);
        for entry in std::fs::read_dir(&from).expect("the example") {
            let entry = entry.unwrap();
            let to = root.join(sub).join(entry.file_name());
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
    let manifest = std::fs::read_to_string(std::path::Path::new(GPT).join("faber.toml")).unwrap();
    common::write_file(
        &root.join("faber.toml"),
        &format!("{manifest}\n[run.sharding]\n{sharding}"),
    );
    root
}

/// `faber run` of the program at `at` (the tiny GPT) on `devices` devices.
fn gpt_at(
    plugin: &std::path::Path,
    at: &std::path::Path,
    devices: usize,
    extra: &[&str],
) -> Output {
    Faber::new()
        .args(["--verbose", "run", "--precision", "f32", "--backend", "xla"])
        .arg("--xla-plugin")
        .arg(plugin)
        .args(["--devices", &devices.to_string()])
        .arg(at)
        .args(["--", "--tiny", "--sample", "0", "--eval-interval", "1000"])
        .args(extra)
        .output()
}

/// Tensor parallel (`[run.sharding]`): the tiny GPT's attention projections and MLP
/// weights split column-then-row over 2 devices (wq, wk, wv, wf and bf by columns,
/// wo and wp by rows), the batch split too. Its step-0 gradient equals the
/// one-device run's leaf by leaf within the bound of the data-parallel gradient
/// above (1e-5·max|leaf| + 1e-10: a split matmul is two partial sums and an
/// all-reduce, another order of the same sum), and its 4-step loss trace within
/// 1e-5 relative. A weight of 3 columns split over 2 devices is CLI018, exit 1.
#[test]
fn the_gpt_with_sharded_weights_equals_one_device() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_tensor_parallel");
        return;
    };
    let dir = common::scratch_dir("xla_tensor_parallel", "ok");
    let at = sharded_gpt(&dir, SPLIT);
    let run = |devices: usize, name: &str| {
        let g = dir.join(format!("{name}.safetensors"));
        let o = gpt_at(
            &plugin,
            &at,
            devices,
            &[
                "--steps",
                "4",
                "--trace",
                "--grads",
                g.to_str().unwrap(),
                "--out",
                dir.join(name).to_str().unwrap(),
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (trace(&o), safetensors(&g), text(&o.stderr))
    };
    let (one_trace, one, _) = run(1, "one");
    let (two_trace, two, err) = run(2, "two");
    assert!(
        err.contains("xla: `model::grad_damnum` ran data-parallel on 2 devices 4 time(s)"),
        "{err}"
    );
    assert_eq!(one_trace.len(), 4, "{one_trace:?}");
    assert_eq!(two_trace.len(), 4, "{two_trace:?}");
    for (i, (g, w)) in two_trace.iter().zip(&one_trace).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs(),
            "step {i}: {g} with sharded weights on 2 devices against {w} on one"
        );
    }
    assert_eq!(
        two.keys().collect::<Vec<_>>(),
        one.keys().collect::<Vec<_>>()
    );
    assert!(one.contains_key("strata.0.wf"), "{:?}", one.keys());
    for (name, want) in &one {
        let scale = want.iter().fold(0f64, |m, &x| m.max(f64::from(x).abs()));
        let tol = vec![1e-5 * scale + 1e-10; want.len()];
        close(
            &two[name],
            want,
            &tol,
            &format!("∂{name} sharded on 2 devices"),
        );
    }

    // A parameter the device count does not divide: the tiny GPT's 2 heads of
    // width 16 hold 16 columns, so 3 devices cannot split wq.
    let bad = sharded_gpt(
        &common::scratch_dir("xla_tensor_parallel", "bad"),
        "\"strata.*.wq\" = \"columns\"\n",
    );
    let o = gpt_at(&plugin, &bad, 3, &["--steps", "1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI018"), "{err}");
    // The first call that takes the parameter finds it (here the parameter count).
    assert!(
        err.contains(
            "on 3 devices: `[run.sharding]` splits the columns of parameter `strata.0.wq`"
        ),
        "{err}"
    );

    // A key that names no parameter (`w1`: the blocks' MLP weights are `wf`, `wp`).
    let typo = sharded_gpt(
        &common::scratch_dir("xla_tensor_parallel", "typo"),
        "\"strata.*.w1\" = \"columns\"\n",
    );
    let o = gpt_at(&plugin, &typo, 2, &["--steps", "1"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI018"), "{err}");
    assert!(err.contains("key `strata.*.w1` names none"), "{err}");
}

/// What lets a model larger than one device train: the split parameters stay split
/// on the devices between steps — their gradients, their AdamW moments and their
/// updates too — and no device ever holds them whole.
///
/// The tiny GPT on 2 devices, data parallel (every parameter replicated) against
/// the same split as above. A step holds the parameters p, their gradient g, and
/// while AdamW updates them the moments m, v and the new p', m', v': 7 copies of
/// the parameters (the data-parallel run holds 7 × 36 224 bytes on each device).
/// With the named leaves (S bytes, read from the checkpoint) split in two, each of
/// the seven copies holds S/2 of them on a device, about 7·S/2 less; the test asks
/// for 3·S, room for a value in flight. Gathering the split leaves whole between
/// steps (the optimizer run replicated) holds as much as data parallelism, and
/// AdamW's first moments made whole (zeros `t.crea(0.0, …)` have no operand to take
/// a sharding from) 2.5·S less: both fail it.
///
/// Per step (a 6-step run less a 2-step one, over 4) the devices take the batch and
/// the step's numbers — the batch whole to each device for the loss estimate, split
/// for the gradient: 3 × 512 bytes and less than a quarter of the parameters
/// (9 057 bytes) in all — and give back the loss and the finiteness counts (under
/// 1 KiB): the split weights (25 088 bytes) do not move.
#[test]
fn split_parameters_stay_split_on_the_devices() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_tensor_parallel");
        return;
    };
    let dir = common::scratch_dir("xla_tensor_parallel", "resident");
    let at = sharded_gpt(&dir, SPLIT);
    let run = |at: &std::path::Path, steps: usize, name: &str| {
        let o = gpt_at(
            &plugin,
            at,
            2,
            &[
                "--steps",
                &steps.to_string(),
                "--out",
                dir.join(name).to_str().unwrap(),
            ],
        );
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        err
    };
    let split6 = run(&at, 6, "split6");
    let split2 = run(&at, 2, "split2");
    let whole6 = run(std::path::Path::new(GPT), 6, "whole6");
    assert!(
        split6.contains(
            "`gradus:optimize::adamw_folia` ran on 2 devices with split values 6 time(s)"
        ),
        "{split6}"
    );

    // S: the bytes of the leaves `[run.sharding]` names, from the checkpoint.
    let model = safetensors(&dir.join("split6").join("model.safetensors"));
    let named = |k: &str| {
        let parts: Vec<&str> = k.split('.').collect();
        matches!(parts.as_slice(), ["strata", _, w] if ["wq", "wk", "wv", "wo", "wf", "bf", "wp"].contains(w))
    };
    let s: u64 = model
        .iter()
        .filter(|(k, _)| named(k))
        .map(|(_, v)| 4 * v.len() as u64)
        .sum();
    let all: u64 = model.values().map(|v| 4 * v.len() as u64).sum();
    assert!(s > all / 2, "S = {s} of {all} bytes");

    let split = common::xla_held(&split6);
    let whole = common::xla_held(&whole6);
    assert_eq!((split.len(), whole.len()), (2, 2), "{split:?} {whole:?}");
    let most = *split.iter().max().unwrap();
    let least = *whole.iter().min().unwrap();
    assert!(
        most + 3 * s <= least,
        "split: at most {most} bytes on a device; replicated: at least {least}; S = {s}"
    );

    let (in6, out6) = common::xla_traffic(&split6);
    let (in2, out2) = common::xla_traffic(&split2);
    let (per_in, per_out) = ((in6 - in2) / 4, (out6 - out2) / 4);
    assert!(
        per_in < all / 4 && per_out < 1024,
        "per step {per_in} bytes in, {per_out} back (parameters: {all} bytes)"
    );
}

/// A package whose record leaf `a` (2 × 4) `[run.sharding]` splits by columns over
/// 2 devices: `logarithmi` takes the record, so it runs on both devices with `a` in
/// halves, and its result's `a` comes back split (log is elementwise: XLA keeps the
/// split). gradus' divergence check then counts the non-finite elements of the
/// split leaf over both devices — log −3 is NaN on the device, which makes no domain
/// checks — and `nota` joins the halves on the host in order.
const SPLIT_NAN: &str = r#"
importa ex "gradus:optimize" privata optimize

genus Duo {
    tf32[2, 4] a
    tf32[3] b
}

functio logarithmi(Duo p) → Duo {
    redde Duo { a = p.a.log(), b = p.b.log() }
}

incipit {
    fixum tf32[] semen ← vacua
    fixum Duo p ← Duo { a = semen.strue([1.0, 2.0, 4.0, 8.0, 16.0, 32.0, -3.0, 64.0], [2, 4]), b = semen.strue([1.0, 2.0, 3.0], [3]) }
    fixum Duo q ← logarithmi(p)
    nota "primum: §"(optimize.primum_non_finitum(q))
    nota q.a
}
"#;

#[test]
fn a_non_finite_element_of_a_split_leaf_is_found_and_the_halves_join_in_order() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_tensor_parallel");
        return;
    };
    let dir = common::scratch_dir("xla_tensor_parallel", "nan");
    common::write_file(
        &dir.join("faber.toml"),
        "[package]\nname = \"split-nan\"\nversion = \"0.1.0\"\nedition = \"2026\"\n\n\
         [run]\nprecision = \"f32\"\n\n[run.sharding]\n\"a\" = \"columns\"\n",
    );
    common::write_file(&dir.join("src").join("main.fab"), SPLIT_NAN);
    let run = |log: Option<&str>| {
        let f = Faber::new()
            .args(["--verbose", "run", "--backend", "xla"])
            .arg("--xla-plugin")
            .arg(&plugin)
            .args(["--devices", "2"])
            .arg(&dir);
        match log {
            Some(level) => f.env("TF_CPP_MIN_LOG_LEVEL", level),
            None => f.env_remove("TF_CPP_MIN_LOG_LEVEL"),
        }
        .output()
    };
    let o = run(None);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    // The plugin's own warnings (the GSPMD partitioner's deprecation notice) stay
    // quiet unless the environment asks for them.
    assert!(!err.contains("GSPMD"), "{err}");
    let loud = run(Some("0"));
    assert!(
        text(&loud.stderr).contains("GSPMD"),
        "{}",
        text(&loud.stderr)
    );
    assert!(
        err.contains("logarithmi` ran on 2 devices with split values 1 time(s)"),
        "{err}"
    );
    let out = text(&o.stdout);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "primum: a", "{out}");
    // ln of 1, 2, 4, 8 and 16, 32, NaN, 64, row by row: the columns' halves joined.
    let joined = lines[1..].concat();
    let got: Vec<&str> = joined
        .split(|c: char| "[], ".contains(c))
        .filter(|x| !x.is_empty())
        .collect();
    assert_eq!(got.len(), 8, "{out}");
    for (i, (g, x)) in got
        .iter()
        .zip([1f64, 2., 4., 8., 16., 32., f64::NAN, 64.])
        .enumerate()
    {
        if x.is_nan() {
            assert!(g.eq_ignore_ascii_case("nan"), "element {i}: {g}\n{out}");
        } else {
            let g: f64 = g
                .parse()
                .unwrap_or_else(|_| panic!("element {i}: {g}\n{out}"));
            assert!(
                (g - x.ln()).abs() <= 1e-6 * (1.0 + x.ln().abs()),
                "element {i}: {g} vs ln {x}"
            );
        }
    }
    // Back to the host: the check's one count per leaf, then `a`'s 8 elements.
    let (_, back) = common::xla_traffic(&err);
    assert_eq!(back, 2 * 4 + 8 * 4, "{err}");
}
