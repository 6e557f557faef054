//! Many devices (issue 25, src/xla/spmd.rs): programs compiled once for N devices
//! with XLA's SPMD partitioner, the batch sharded along axis 0 and the rest
//! replicated, against the same program compiled for one device (and a host f64
//! computation). Runs when a plugin is at hand (`FABER_PJRT_PLUGIN`, or
//! `.venv-xla/` from scripts/xla-setup.sh; the CPU plugin offers 4 host devices);
//! otherwise prints `skipped: no PJRT plugin (run scripts/xla-setup.sh)`.
//!
//! Tolerances, `u` = 2⁻²⁴ (f32's unit roundoff). On N devices a sum over the batch
//! is N local sums and an all-reduce, a different order than one device's sum. Any
//! order of a sum of k terms is within γₖ·Σ|terms| ≤ (k + 1)·u·Σ|terms| of the
//! exact sum, so two orders differ by at most 2·(k + 1)·u·Σ|terms| — the bound the
//! op tests use (tests/xla_ops.rs); a scaling by a constant adds one rounding,
//! u·|y|. Σ|terms| is computed on the host in f64.
//!
//! `faber run --backend xla --devices N` runs the GPT example's gradient
//! companion `grad_damnum` data-parallel; its first step's gradient (written by
//! `--grads`) on 2 and 4 devices is compared with the 1-device run's, leaf by
//! leaf, within 1e-5·max|leaf| + 1e-10: each element is a sum over the batch's
//! B·T = 64 positions of terms that themselves pass through the model, so no
//! closed-form γₖ is at hand; 1e-5 is 2(k + 1)u for k ≈ 80 terms, and measured
//! (2026-12-06, CPU plugin) the largest difference is 4.3e-7 of its leaf's
//! largest element. The absolute 1e-10 covers the key biases' gradients, zero in
//! exact arithmetic (softmax ignores a per-row constant) and ~5e-12 of rounding
//! noise either way.

mod common;

use std::process::Output;

use common::entries::first_error_code;
use common::spmd_files::{close, safetensors};
use common::{pjrt_plugin, say_no_plugin, Faber};

use faber::xla::spmd::{Input, Sharding, Spmd, SpmdError};
use faber::xla::stablehlo::{Binary, DotDims, Function, Reduction, TensorType};
use faber::xla::{Client, CompileOptions, ElementType, HostArray, Plugin};

const U: f64 = 1.0 / 16_777_216.0;

fn plugin(test: &str) -> Option<&'static Plugin> {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin(test);
        return None;
    };
    Some(Box::leak(Box::new(
        Plugin::load(&path).expect("the plugin"),
    )))
}

/// Deterministic values in [-1, 1).
fn values(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) as f32
        })
        .collect()
}

fn f32s(a: &HostArray) -> &[f32] {
    match a {
        HostArray::F32(v) => v,
        HostArray::F64(_) => panic!("an f64 result"),
    }
}

/// `text` compiled for device 0 alone and run on `inputs`: the reference.
fn one_device(client: &Client, text: &str, inputs: &[(Vec<f32>, Vec<usize>)]) -> Vec<Vec<f32>> {
    let options = CompileOptions {
        device_id: Some(client.addressable_device_id(0).unwrap()),
        ..CompileOptions::default()
    };
    let exe = client
        .compile(text, &options)
        .expect("compiles for one device");
    let bufs: Vec<_> = inputs
        .iter()
        .map(|(v, d)| client.to_device(&HostArray::F32(v.clone()), d, 0).unwrap())
        .collect();
    let refs: Vec<_> = bufs.iter().collect();
    exe.execute(&refs)
        .unwrap()
        .iter()
        .map(|b| f32s(&b.to_host().unwrap().0).to_vec())
        .collect()
}

/// `text` annotated and compiled for `n` devices, run on `inputs`.
fn n_devices(
    plugin: &'static Plugin,
    n: usize,
    text: &str,
    inputs: &[(Vec<f32>, Vec<usize>, Sharding)],
    results: &[Sharding],
) -> Vec<Vec<f32>> {
    n_devices_of(plugin.client().unwrap(), n, text, inputs, results)
}

/// [`n_devices`] on the devices of `client`.
fn n_devices_of(
    client: Client<'static>,
    n: usize,
    text: &str,
    inputs: &[(Vec<f32>, Vec<usize>, Sharding)],
    results: &[Sharding],
) -> Vec<Vec<f32>> {
    let mut spmd = Spmd::new(client, n).expect("enough devices");
    let args: Vec<Sharding> = inputs.iter().map(|i| i.2).collect();
    let annotated = faber::xla::spmd::annotate(text, &args, results, n).unwrap();
    let exe = spmd
        .compile("p", &annotated)
        .expect("compiles for N devices");
    let inputs: Vec<Input> = inputs
        .iter()
        .map(|(v, d, s)| Input {
            data: HostArray::F32(v.clone()),
            dims: d.clone(),
            sharding: *s,
        })
        .collect();
    spmd.run(&exe, &inputs, results)
        .expect("runs on N devices")
        .iter()
        .map(|(a, _)| f32s(a).to_vec())
        .collect()
}

/// The mean over the batch of a [b, f] input: Σ over axis 0, times 1/b.
fn batch_mean(b: usize, f: usize) -> String {
    let t = TensorType::new(ElementType::F32, &[b, f]);
    let (mut func, p) = Function::new(&[t]);
    let s = func.reduce(p[0], &[0], Reduction::Sum);
    let k = func.splat(ElementType::F32, 1.0 / b as f64, &[f]);
    let m = func.binary(Binary::Multiply, s, k);
    func.finish(&[m])
}

/// The bound on [`batch_mean`] of `x` ([b, f]) against `want`: each column's sum
/// of b terms in two orders, then one scaling.
fn mean_bound(x: &[f32], want: &[f32], b: usize, f: usize) -> Vec<f64> {
    (0..f)
        .map(|j| {
            let abs: f64 = (0..b).map(|i| f64::from(x[i * f + j]).abs()).sum();
            2.0 * (b as f64 + 1.0) * U * abs / b as f64 + U * f64::from(want[j]).abs()
        })
        .collect()
}

/// The mean over the batch of a sharded [8, 3] input on 1, 2 and 4 devices.
#[test]
fn a_batch_mean_on_one_two_and_four_devices_equals_one_device() {
    let Some(plugin) = plugin("xla_spmd::batch_mean") else {
        return;
    };
    let client = plugin.client().unwrap();
    let (b, f) = (8, 3);
    let text = batch_mean(b, f);
    let x = values(25, b * f);
    let want = &one_device(&client, &text, &[(x.clone(), vec![b, f])])[0];
    let tol = mean_bound(&x, want, b, f);
    // And the host's f64 mean, within one order's bound.
    let exact: Vec<f32> = (0..f)
        .map(|j| ((0..b).map(|i| f64::from(x[i * f + j])).sum::<f64>() / b as f64) as f32)
        .collect();
    close(want, &exact, &tol, "one device against f64");
    let offered = client.addressable_device_count().unwrap();
    for n in [1, 2, 4] {
        if n > offered {
            continue;
        }
        let got = n_devices(
            plugin,
            n,
            &text,
            &[(x.clone(), vec![b, f], Sharding::Batch)],
            &[Sharding::Replicated],
        );
        close(&got[0], want, &tol, &format!("mean on {n} device(s)"));
    }
}

/// The CPU plugin's `cpu_device_count` client option: 8 host devices, and a batch
/// of 8 rows over 8 of them (one row each; the all-reduce sums 8 partial sums)
/// equals one device's mean within the bound above.
#[test]
fn the_cpu_plugin_presents_eight_devices_when_asked() {
    let Some(plugin) = plugin("xla_spmd::cpu_device_count") else {
        return;
    };
    let default = plugin.client().unwrap();
    if default.platform_name().unwrap() != "cpu" {
        return;
    }
    assert_eq!(default.addressable_device_count().unwrap(), 4);
    let client = plugin.client_with(&[("cpu_device_count", 8)]).unwrap();
    assert_eq!(client.addressable_device_count().unwrap(), 8);
    assert_eq!(client.devices().unwrap().len(), 8);
    let (b, f) = (8, 3);
    let text = batch_mean(b, f);
    let x = values(8, b * f);
    let want = &one_device(&default, &text, &[(x.clone(), vec![b, f])])[0];
    let tol = mean_bound(&x, want, b, f);
    let got = n_devices_of(
        client,
        8,
        &text,
        &[(x, vec![b, f], Sharding::Batch)],
        &[Sharding::Replicated],
    );
    close(&got[0], want, &tol, "mean on 8 devices");
}

/// The loss and the gradient of an MSE of a linear layer, x [8, 3] and y [8, 2]
/// sharded, w [3, 2] replicated: ∂w = (2 / 16)·xᵀ(x·w − y). Each device sees 8 / N
/// rows, so a result equal to one device's needs the all-reduce XLA inserts (the
/// gradient of the first shard alone is checked to differ, beyond the bound).
#[test]
fn an_mse_gradient_sharded_over_the_batch_equals_one_device() {
    let Some(plugin) = plugin("xla_spmd::mse_gradient") else {
        return;
    };
    let client = plugin.client().unwrap();
    let (b, i, o) = (8, 3, 2);
    let f32t = |d: &[usize]| TensorType::new(ElementType::F32, d);
    let (mut func, p) = Function::new(&[f32t(&[b, i]), f32t(&[b, o]), f32t(&[i, o])]);
    let (x, y, w) = (p[0], p[1], p[2]);
    let pred = func.dot_general(
        x,
        w,
        &DotDims {
            lhs_contract: vec![1],
            rhs_contract: vec![0],
            ..DotDims::default()
        },
    );
    let r = func.binary(Binary::Subtract, pred, y);
    let r2 = func.binary(Binary::Multiply, r, r);
    let sum = func.reduce(r2, &[0, 1], Reduction::Sum);
    let inv = func.constant(ElementType::F32, 1.0 / (b * o) as f64);
    let loss = func.binary(Binary::Multiply, sum, inv);
    let xt_r = func.dot_general(
        x,
        r,
        &DotDims {
            lhs_contract: vec![0],
            rhs_contract: vec![0],
            ..DotDims::default()
        },
    );
    let c = func.splat(ElementType::F32, 2.0 / (b * o) as f64, &[i, o]);
    let gw = func.binary(Binary::Multiply, xt_r, c);
    let text = func.finish(&[loss, gw]);
    let (xv, yv, wv) = (values(1, b * i), values(2, b * o), values(3, i * o));
    let want = one_device(
        &client,
        &text,
        &[
            (xv.clone(), vec![b, i]),
            (yv.clone(), vec![b, o]),
            (wv.clone(), vec![i, o]),
        ],
    );
    // Host f64 residuals, for Σ|terms|.
    let res: Vec<f64> = (0..b * o)
        .map(|e| {
            let (row, col) = (e / o, e % o);
            (0..i)
                .map(|k| f64::from(xv[row * i + k]) * f64::from(wv[k * o + col]))
                .sum::<f64>()
                - f64::from(yv[e])
        })
        .collect();
    // The loss: a sum of 16 squares (each residual itself a 3-term dot, computed the
    // same way on every device), one scaling.
    let loss_abs: f64 = res.iter().map(|r| r * r).sum::<f64>() / (b * o) as f64;
    let loss_tol = vec![2.0 * 17.0 * U * loss_abs + U * f64::from(want[0][0]).abs()];
    // ∂w[k, c]: a sum of 8 products x[row, k]·r[row, c], one scaling.
    let grad_tol: Vec<f64> = (0..i * o)
        .map(|e| {
            let (k, col) = (e / o, e % o);
            let abs: f64 = (0..b)
                .map(|row| (f64::from(xv[row * i + k]) * res[row * o + col]).abs())
                .sum();
            2.0 * 9.0 * U * abs * 2.0 / (b * o) as f64 + U * f64::from(want[1][e]).abs()
        })
        .collect();
    let offered = client.addressable_device_count().unwrap();
    for n in [2, 4] {
        if n > offered {
            continue;
        }
        let got = n_devices(
            plugin,
            n,
            &text,
            &[
                (xv.clone(), vec![b, i], Sharding::Batch),
                (yv.clone(), vec![b, o], Sharding::Batch),
                (wv.clone(), vec![i, o], Sharding::Replicated),
            ],
            &[Sharding::Replicated, Sharding::Replicated],
        );
        close(
            &got[0],
            &want[0],
            &loss_tol,
            &format!("loss on {n} devices"),
        );
        close(&got[1], &want[1], &grad_tol, &format!("∂w on {n} devices"));
    }
    // The first shard's gradient alone (its own partial sum) is far from the whole
    // batch's: the equality above is the all-reduce's doing.
    let shard: Vec<f64> = (0..i * o)
        .map(|e| {
            let (k, col) = (e / o, e % o);
            (0..b / 2)
                .map(|row| f64::from(xv[row * i + k]) * res[row * o + col])
                .sum::<f64>()
                * 2.0
                / (b * o) as f64
        })
        .collect();
    assert!(
        shard
            .iter()
            .zip(&want[1])
            .zip(&grad_tol)
            .any(|((s, w), t)| (s - f64::from(*w)).abs() > 100.0 * t),
        "the test data cannot tell a partial sum from the whole"
    );
}

#[test]
fn more_devices_than_offered_and_an_indivisible_batch_are_errors() {
    let Some(plugin) = plugin("xla_spmd::errors") else {
        return;
    };
    let client = plugin.client().unwrap();
    let offered = client.addressable_device_count().unwrap();
    match Spmd::new(plugin.client().unwrap(), offered + 1) {
        Err(SpmdError::TooManyDevices { asked, offered: o }) => {
            assert_eq!((asked, o), (offered + 1, offered));
        }
        other => panic!("expected TooManyDevices, got {:?}", other.err()),
    }
    if offered < 2 {
        return;
    }
    let t = TensorType::new(ElementType::F32, &[3, 2]);
    let (mut func, p) = Function::new(&[t]);
    let s = func.reduce(p[0], &[0], Reduction::Sum);
    let text = func.finish(&[s]);
    let mut spmd = Spmd::new(plugin.client().unwrap(), 2).unwrap();
    let annotated =
        faber::xla::spmd::annotate(&text, &[Sharding::Batch], &[Sharding::Replicated], 2).unwrap();
    let input = Input {
        data: HostArray::F32(values(4, 6)),
        dims: vec![3, 2],
        sharding: Sharding::Batch,
    };
    // XLA itself pads an uneven split; faber refuses it before copying anything.
    let exe = spmd.compile("odd", &annotated);
    if let Ok(exe) = exe {
        match spmd.run(&exe, &[input], &[Sharding::Replicated]) {
            Err(SpmdError::Indivisible { shape, devices }) => {
                assert_eq!((shape, devices), (vec![3, 2], 2));
            }
            other => panic!("expected Indivisible, got {:?}", other.err()),
        }
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

const GPT: &str = "examples/gpt-shakespeare";

/// The tiny GPT on `devices` devices, writing its files under `out`.
fn gpt(plugin: &std::path::Path, devices: usize, out: &std::path::Path, extra: &[&str]) -> Output {
    Faber::new()
        .args(["--verbose", "run", "--precision", "f32", "--backend", "xla"])
        .arg("--xla-plugin")
        .arg(plugin)
        .args([
            "--devices",
            &devices.to_string(),
            GPT,
            "--",
            "--tiny",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
}

/// The GPT's first gradient on 2 and 4 devices against 1 device.
#[test]
fn the_gpt_gradient_on_several_devices_equals_one_device() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_spmd::gpt");
        return;
    };
    let dir = common::scratch_dir("xla_spmd", "gpt");
    let grads = |n: usize| {
        let file = dir.join(format!("g{n}.safetensors"));
        let f = file.to_str().unwrap().to_string();
        let o = gpt(
            &plugin,
            n,
            &dir.join(format!("out{n}")),
            &["--steps", "1", "--sample", "0", "--grads", &f],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        if n > 1 {
            assert!(
                err.contains(&format!(
                    "xla: `model::grad_damnum` ran data-parallel on {n} devices 1 time(s)"
                )),
                "{err}"
            );
        }
        safetensors(&file)
    };
    let one = grads(1);
    assert!(one.len() > 30, "the tiny GPT's leaves: {}", one.len());
    for n in [2, 4] {
        let many = grads(n);
        assert_eq!(
            many.keys().collect::<Vec<_>>(),
            one.keys().collect::<Vec<_>>()
        );
        for (name, want) in &one {
            let got = &many[name];
            let scale = want.iter().fold(0f64, |m, &x| m.max(f64::from(x).abs()));
            let tol = vec![1e-5 * scale + 1e-10; want.len()];
            close(got, want, &tol, &format!("∂{name} on {n} devices"));
        }
    }
}

#[test]
fn too_many_devices_is_cli014_and_an_odd_batch_cli015() {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin("xla_spmd::cli_errors");
        return;
    };
    let offered = Plugin::load(&path)
        .unwrap()
        .client()
        .unwrap()
        .addressable_device_count()
        .unwrap();
    let dir = common::scratch_dir("xla_spmd", "cli_errors");
    let o = gpt(&path, offered + 1, &dir, &["--steps", "1", "--sample", "0"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI014"), "{err}");
    assert!(
        err.contains(&format!(
            "{} devices asked for; the PJRT plugin offers {offered}",
            offered + 1
        )),
        "{err}"
    );
    if offered < 2 {
        return;
    }
    let o = gpt(
        &path,
        2,
        &dir,
        &["--steps", "1", "--sample", "0", "--batch", "3"],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI015"), "{err}");
    assert!(err.contains("`model::grad_damnum` on 2 devices"), "{err}");
    assert!(err.contains("does not split into 2 equal shards"), "{err}");
}

/// On every machine: `--devices` needs `--backend xla`, and is a positive count.
#[test]
fn devices_usage_errors() {
    let o = Faber::new()
        .args(["run", "--devices", "2", "examples/linear-regression"])
        .output();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("use it with `--backend xla`"),
        "{}",
        text(&o.stderr)
    );
    let o = Faber::new()
        .args([
            "run",
            "--backend",
            "xla",
            "--devices",
            "0",
            "examples/linear-regression",
        ])
        .output();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}

/// `[run] devices` in faber.toml is the default of `--devices`; the flag wins.
#[test]
fn run_devices_in_the_manifest() {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin("xla_spmd::manifest");
        return;
    };
    let dir = common::scratch_dir("xla_spmd", "manifest");
    common::write_file(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[run]\ndevices = 99\n",
    );
    common::write_file(
        &dir.join("src/main.fab"),
        "incipit {\n    nota \"salve\"\n}\n",
    );
    let go = |extra: &[&str]| {
        Faber::new()
            .args(["run", "--backend", "xla", "--xla-plugin"])
            .arg(&path)
            .args(extra)
            .arg(&dir)
            .output()
    };
    let o = go(&[]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(first_error_code(&err), Some("CLI014"), "{err}");
    assert!(err.contains("99 devices asked for"), "{err}");
    let o = go(&["--devices", "1"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "salve");
}

/// (bytes to the devices, bytes back) from the `--verbose` summary.
fn traffic(o: &Output) -> (u64, u64) {
    common::xla_traffic(&text(&o.stderr))
}

/// The losses `--trace` prints (`passus N: damnum X`).
fn trace(o: &Output) -> Vec<f64> {
    common::gpt_losses(&text(&o.stdout))
}

/// The data-parallel train step with its values on the devices: the gradient
/// tree comes back replicated on both devices and stays there, the optimizer's
/// leaf update runs replicated on both, so between steps the parameters, the
/// gradients and AdamW's moments stay on every device. Per step only the batch
/// (split: each device its half) and the step's numbers (the seed, AdamW's
/// coefficients, the clipping factor, one copy per device) go in, and a few numbers
/// come back — measured as the difference of a 2-step and a 6-step run, as
/// tests/xla_resident.rs does for one device. The 4-step loss trace equals the
/// one-device run's within 1e-5 relative (the gradient's bound above; measured
/// 2026-12-06: the same digits).
#[test]
fn the_gpt_parameters_stay_replicated_and_only_the_batch_moves() {
    let Some(plugin) = pjrt_plugin() else {
        say_no_plugin("xla_spmd::resident");
        return;
    };
    let dir = common::scratch_dir("xla_spmd", "resident");
    let run = |devices: usize, steps: u32, extra: &[&str]| {
        let steps = steps.to_string();
        let mut args = vec![
            "--steps",
            &steps,
            "--sample",
            "0",
            "--eval-interval",
            "1000",
        ];
        args.extend(extra);
        let o = gpt(
            &plugin,
            devices,
            &dir.join(format!("out{devices}-{steps}")),
            &args,
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        o
    };
    let (short, long) = (run(2, 2, &[]), run(2, 6, &[]));
    let err = text(&long.stderr);
    for f in [
        "model::grad_damnum` ran data-parallel on 2 devices 6 time(s)",
        "gradus:optimize::adamw_folia` ran replicated on 2 devices 6 time(s)",
        "gradus:optimize::norma_gradientum` ran replicated on 2 devices 6 time(s)",
    ] {
        assert!(err.contains(f), "{f}:\n{err}");
    }
    let (params, block, batch) = common::gpt_size(&text(&short.stdout));
    let (a, b) = (traffic(&short), traffic(&long));
    let per_step_in = (b.0 - a.0) / 4;
    let per_step_out = (b.1 - a.1) / 4;
    let batch_bytes = 2 * batch * block * 4; // x and y, f32, split over the devices
    let param_bytes = params * 4;
    println!(
        "2 devices, per step: {per_step_in} B in (batch {batch_bytes} B), {per_step_out} B \
         back; parameters {param_bytes} B"
    );
    assert!(per_step_in >= batch_bytes, "the batch must go in");
    // The parameters (or gradients, or moments) copied to one device would be
    // param_bytes per step; the step's numbers are a few dozen bytes per device.
    assert!(
        per_step_in < batch_bytes + 2 * 64,
        "{per_step_in} B in per step"
    );
    assert!(
        per_step_out < param_bytes / 8,
        "{per_step_out} B back per step"
    );
    // The 4-step trace against one device's.
    let one = trace(&run(1, 4, &["--trace"]));
    let two = trace(&run(2, 4, &["--trace"]));
    assert_eq!(one.len(), 4, "{one:?}");
    assert_eq!(two.len(), 4, "{two:?}");
    for (i, (g, w)) in two.iter().zip(&one).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 * w.abs(),
            "step {i}: {g} on 2 devices against {w} on one"
        );
    }
}

/// `--xla-cpu-devices N` (or `FABER_XLA_CPU_DEVICES`) creates the client with the
/// CPU plugin's `cpu_device_count`: `faber devices` lists N, and `faber run
/// --devices` may ask for up to N.
#[test]
fn the_cpu_device_count_from_the_command_line() {
    let Some(path) = pjrt_plugin() else {
        say_no_plugin("xla_spmd::cpu_devices");
        return;
    };
    let list = |flag: &[&str], env: Option<&str>| {
        let f = Faber::new()
            .args(["devices", "--xla-plugin"])
            .arg(&path)
            .args(flag);
        let f = match env {
            Some(n) => f.env("FABER_XLA_CPU_DEVICES", n),
            None => f.env_remove("FABER_XLA_CPU_DEVICES"),
        };
        let o = f.output();
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let plain = list(&[], None);
    if !plain.contains("platform: cpu") {
        return; // another plugin: the option is the CPU plugin's
    }
    assert!(list(&["--xla-cpu-devices", "6"], None).contains("devices: 6\n"));
    assert!(list(&[], Some("3")).contains("devices: 3\n"));
    assert!(list(&["--xla-cpu-devices", "5"], Some("3")).contains("devices: 5\n"));
    let dir = common::scratch_dir("xla_spmd", "cpu_devices");
    let o = Faber::new()
        .args(["run", "--backend", "xla", "--xla-plugin"])
        .arg(&path)
        .args(["--xla-cpu-devices", "2", "--devices", "3"])
        .arg(GPT)
        .args(["--", "--tiny", "--steps", "1", "--sample", "0", "--out"])
        .arg(&dir)
        .output();
    let err = text(&o.stderr);
    assert_eq!(first_error_code(&err), Some("CLI014"), "{err}");
    assert!(
        err.contains("3 devices asked for; the PJRT plugin offers 2"),
        "{err}"
    );
}

const REPLICATED: &str = r#"
genus Pondus {
    tf32[3] w
}

functio grad_summae(Pondus p, tf32[8, 3] x) → tf32[3] {
    redde x.summa_axis(0, falsum).multiplica(p.w)
}

functio passus(tf32[3] w, tf32[3] g, f32 lr) → tf32[3] {
    redde w.subtrahe(g ⊙ lr)
}

incipit {
}
"#;

/// The library level of the replicated values (src/xla/resident.rs `Mesh`): the
/// data-parallel call's result is one buffer per device, held by the runner; a
/// replicated call takes it without a copy (only the host arguments move in, once
/// per device), and its own result is replicated too and taken the same way; reading
/// one copies the home device's buffer once.
#[test]
fn replicated_results_are_taken_without_copies() {
    use faber::xla::resident::Traffic;
    use faber::xla::FnArg;
    let Some(plugin) = plugin("xla_spmd::replicated") else {
        return;
    };
    let mut sources = faber::source::SourceMap::new();
    let id = sources.add("replicated.fab", REPLICATED.to_string());
    let mut loader = faber::resolve::MemoryLoader {
        files: Default::default(),
    };
    let program = faber::compile(&mut sources, id, &mut loader)
        .unwrap_or_else(|d| panic!("{}", faber::diag::render(&d, &sources, false)));
    let func = |name: &str| {
        let i = program
            .functions
            .iter()
            .position(|f| f.name.ends_with(&format!("::{name}")))
            .unwrap_or_else(|| panic!("no function {name}"));
        faber::ir::FuncId(i as u32)
    };
    let previous = faber::tensor::set_precision(faber::tensor::DType::F32);
    let w0 = [0.5f32, -1.0, 2.0];
    let xs = values(11, 24);
    let w = faber::tensor::Tensor::from_f32(w0.to_vec(), &[3]).unwrap();
    let x = faber::tensor::Tensor::from_f32(xs.clone(), &[8, 3]).unwrap();
    let mut spmd = Spmd::new(plugin.client().unwrap(), 2).expect("two devices");

    let start = Traffic::now();
    let (g, _) = spmd
        .call_function(
            &program,
            func("grad_summae"),
            &[FnArg::Record(vec![FnArg::Tensor(&w)]), FnArg::Tensor(&x)],
            &[],
        )
        .expect("the data-parallel call");
    let moved = Traffic::since(start);
    // w whole to both devices, x split: 2·12 + 96 bytes.
    assert_eq!((moved.bytes_in, moved.bytes_out), (2 * 12 + 96, 0));
    let g = &g[0];
    assert!(spmd.holds(g) && g.on_device_only());

    let start = Traffic::now();
    let (w1, _) = spmd
        .call_replicated(
            &program,
            func("passus"),
            &[FnArg::Tensor(&w), FnArg::Tensor(g), FnArg::Number(0.5)],
            &[],
        )
        .expect("the replicated call");
    let moved = Traffic::since(start);
    // w (host) and lr to both devices; g not at all.
    assert_eq!((moved.bytes_in, moved.bytes_out), (2 * (12 + 4), 0));
    let w1 = &w1[0];
    assert!(spmd.holds(w1));

    let start = Traffic::now();
    let (w2, _) = spmd
        .call_replicated(
            &program,
            func("passus"),
            &[FnArg::Tensor(w1), FnArg::Tensor(g), FnArg::Number(0.5)],
            &[],
        )
        .expect("the replicated call on replicated values");
    let moved = Traffic::since(start);
    assert_eq!(
        (moved.bytes_in, moved.bytes_out),
        (2 * 4, 0),
        "only lr moves"
    );
    assert_eq!(
        spmd.compiles, 2,
        "one program per signature: {}",
        spmd.compiles
    );

    // The values: g = Σ_rows x ⊙ w, then w − g/2 twice.
    let start = Traffic::now();
    let got = w2[0].values().into_owned();
    assert_eq!(
        Traffic::since(start).bytes_out,
        12,
        "one read of the home buffer"
    );
    assert!(!w2[0].on_device_only());
    for j in 0..3 {
        let col: Vec<f32> = (0..8).map(|i| xs[i * 3 + j]).collect();
        let sum: f64 = col.iter().map(|&v| f64::from(v)).sum();
        let abs: f64 = col.iter().map(|&v| f64::from(v).abs()).sum();
        let gj = sum * f64::from(w0[j]);
        let want = f64::from(w0[j]) - gj;
        // Two orders of an 8-term sum (2·9·u·Σ|x|), scaled by |w|, then the updates'
        // roundings.
        let tol = 18.0 * U * abs * f64::from(w0[j]).abs() + 8.0 * U * (want.abs() + gj.abs());
        assert!(
            (got[j] - want).abs() <= tol,
            "w2[{j}] = {} against {want}",
            got[j]
        );
    }
    faber::tensor::set_precision(previous);
}
