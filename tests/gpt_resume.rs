//! examples/gpt-shakespeare's training checkpoints through the built binary, on a model
//! small enough for debug builds (1 layer, 2 heads, width 8, block 8, batch 2):
//! * 40 steps straight (`--save-every 20`, so its checkpoint-20 is what a run stopped
//!   after step 20 leaves) and `--resume checkpoint-20 --steps 40` write byte-identical
//!   checkpoint-40 and model.safetensors files, print the same loss of every step from
//!   20 on and the same evaluations, and sample the same text;
//! * a missing resume file (RUN017), a parameters-only file or another layout version
//!   (RUN022), a checkpoint of another model (RUN021), `--steps` below the checkpoint's
//!   step and `--resume` with `--init` each stop with exit 1 and a message naming the
//!   thing at fault, never a panic.

mod common;

use std::path::{Path, PathBuf};

use common::Faber;

use faber::serialize::safetensors::{self, Data, Dtype, Item};

const SMALL: &[&str] = &[
    "--tiny",
    "--layers",
    "1",
    "--embd",
    "8",
    "--block",
    "8",
    "--batch",
    "2",
    "--eval-batches",
    "1",
    "--eval-interval",
    "10",
    "--sample",
    "30",
];

fn tmp(tag: &str) -> PathBuf {
    let d =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-gpt-resume-{tag}"));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// (exit code, stdout, stderr) of the example with the small model, `args` and `--out`.
fn gpt(out: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let o = Faber::new()
        .arg("run")
        .arg(format!("{}/examples/gpt-shakespeare", common::ROOT))
        .arg("--")
        .args(SMALL)
        .args(args)
        .arg("--out")
        .arg(out)
        .output();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The trace lines (`passus k: damnum …`) of steps ≥ `from`, the evaluation lines
/// without their tokens/s figure, and the sampled text after `---`.
fn losses(stdout: &str, from: usize) -> (Vec<String>, Vec<String>, String) {
    let trace = stdout
        .lines()
        .filter(|l| {
            l.strip_prefix("passus ")
                .and_then(|r| r.split(':').next())
                .and_then(|k| k.parse::<usize>().ok())
                .is_some_and(|k| k >= from)
        })
        .map(str::to_string)
        .collect();
    let evals = stdout
        .lines()
        .filter(|l| l.starts_with("step "))
        .map(|l| l.split("  tokens/s").next().unwrap().to_string())
        .collect();
    let sample = stdout.split("\n---\n").nth(1).unwrap_or("").to_string();
    (trace, evals, sample)
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn forty_steps_straight_equal_twenty_resumed_for_twenty_more() {
    let a = tmp("straight");
    let b = tmp("resumed");
    let (code, out_a, err) = gpt(&a, &["--steps", "40", "--save-every", "20", "--trace"]);
    assert_eq!(code, Some(0), "{out_a}\n{err}");
    let ck20 = a.join("checkpoint-20.safetensors");
    let ck20_s = ck20.to_str().unwrap();
    let (code, out_b, err) = gpt(
        &b,
        &[
            "--steps",
            "40",
            "--save-every",
            "20",
            "--trace",
            "--resume",
            ck20_s,
        ],
    );
    assert_eq!(code, Some(0), "{out_b}\n{err}");
    assert!(out_b.contains("resumed at step 20 of 40"), "{out_b}");

    // The files the two runs end with are the same bytes.
    for f in ["checkpoint-40.safetensors", "model.safetensors"] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "{f} differs");
    }
    // … and the run did move between the two checkpoints.
    assert!(read(&ck20) != read(&a.join("checkpoint-40.safetensors")));
    assert!(
        !b.join("checkpoint-20.safetensors").exists(),
        "the resumed run starts after 20"
    );

    let (trace_a, evals_a, sample_a) = losses(&out_a, 20);
    let (trace_b, evals_b, sample_b) = losses(&out_b, 0);
    assert_eq!(trace_a.len(), 20, "{out_a}");
    assert_eq!(trace_b, trace_a, "the losses of steps 20–39");
    assert_eq!(evals_a.len(), 4, "{out_a}");
    assert_eq!(evals_b, evals_a[2..], "the evaluations at steps 30 and 40");
    assert!(sample_a.trim().len() >= 20, "{out_a}");
    assert_eq!(sample_b, sample_a);

    // What checkpoint-20 holds: the header, the parameters and Adam's state at step 20.
    let bytes = read(&ck20);
    let file = safetensors::read_raw(&bytes).unwrap();
    let entry = |n: &str| file.tensors.iter().find(|t| t.name == n);
    assert_eq!(entry("passus").unwrap().integers().unwrap(), vec![20]);
    assert_eq!(
        entry("status.passus").unwrap().integers().unwrap(),
        vec![20]
    );
    assert_eq!(
        entry("semen_ordinis").unwrap().integers().unwrap(),
        vec![1337 * 1000003]
    );
    assert_eq!(entry("versio").unwrap().integers().unwrap(), vec![1]);
    assert!(entry("parametri.strata.0.wq").is_some());
    assert!(entry("status.m.0").is_some() && entry("status.v.0").is_some());
    let _ = std::fs::remove_dir_all(&a);
    let _ = std::fs::remove_dir_all(&b);
}

/// Runs a resume that must be refused: exit 1, each of `needles` on stderr, no panic,
/// and no training step taken.
fn refused(dir: &Path, args: &[&str], needles: &[&str]) {
    let (code, stdout, stderr) = gpt(dir, args);
    assert_eq!(code, Some(1), "{args:?}\n{stdout}\n{stderr}");
    for n in needles {
        assert!(stderr.contains(n), "{args:?}: `{n}` not in\n{stderr}");
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(
        !stdout.contains("passus ") && !stdout.contains("step "),
        "{stdout}"
    );
}

/// `src` rewritten with its `versio` entry set to `versio` (a checkpoint of another
/// layout version, otherwise the same).
fn with_version(src: &Path, dst: &Path, versio: i64) {
    let bytes = read(src);
    let file = safetensors::read_raw(&bytes).unwrap();
    // (f64 elements, f32 elements, integers): each float tensor kept in its own type.
    type Values = (Vec<f64>, Vec<f32>, Vec<i64>);
    let values: Vec<Values> = file
        .tensors
        .iter()
        .map(|t| match t.dtype {
            Dtype::F64 => (t.to_tensor().unwrap().data().to_vec(), vec![], vec![]),
            Dtype::F32 => {
                let x = t.to_tensor_as(faber::tensor::DType::F32).unwrap();
                (vec![], x.data_f32().unwrap().to_vec(), vec![])
            }
            _ if t.name == "versio" => (vec![], vec![], vec![versio]),
            _ => (vec![], vec![], t.integers().unwrap()),
        })
        .collect();
    let items: Vec<Item<'_>> = file
        .tensors
        .iter()
        .zip(&values)
        .map(|(t, (f, f32s, i))| Item {
            name: &t.name,
            dtype: t.dtype,
            shape: &t.shape,
            data: match t.dtype {
                Dtype::F64 => Data::Floats(f),
                Dtype::F32 => Data::Floats32(f32s),
                _ => Data::Integers(i),
            },
        })
        .collect();
    let meta: Vec<(&str, &str)> = file
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    std::fs::write(dst, safetensors::write_items(&items, &meta).unwrap()).unwrap();
}

#[test]
fn a_wrong_resume_file_is_a_diagnostic_naming_it() {
    let a = tmp("source");
    let (code, out, err) = gpt(&a, &["--steps", "4", "--save-every", "2", "--sample", "0"]);
    assert_eq!(code, Some(0), "{out}\n{err}");
    let ck = a.join("checkpoint-2.safetensors");
    let ck = ck.to_str().unwrap();
    let dir = tmp("refused");

    let missing = a.join("no-such-checkpoint.safetensors");
    let missing = missing.to_str().unwrap();
    refused(
        &dir,
        &["--steps", "4", "--resume", missing],
        &["error[RUN017]", missing, "does not exist"],
    );

    // the parameters-only model.safetensors (what --init reads) is not a training checkpoint
    let params = a.join("model.safetensors");
    let params = params.to_str().unwrap();
    refused(
        &dir,
        &["--steps", "4", "--resume", params],
        &["error[RUN022]", params, "`forma`", "scribe_cursum"],
    );

    // another layout version, older or newer
    for (v, age) in [(0, "older"), (2, "newer")] {
        let other = a.join(format!("checkpoint-v{v}.safetensors"));
        with_version(Path::new(ck), &other, v);
        let other = other.to_str().unwrap();
        refused(
            &dir,
            &["--steps", "4", "--resume", other],
            &[
                "error[RUN022]",
                other,
                &format!("layout version {v}, "),
                &format!("{age} layout than the version 1"),
            ],
        );
    }

    // another model: a block more, a block less, another width
    refused(
        &dir,
        &["--steps", "4", "--layers", "2", "--resume", ck],
        &["error[RUN021]", "`parametri.strata.1.", "another model"],
    );
    let (code, _, stderr) = gpt(
        &dir,
        &[
            "--steps",
            "4",
            "--layers",
            "2",
            "--save-every",
            "2",
            "--sample",
            "0",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let two = dir.join("checkpoint-2.safetensors");
    let two_s = two.to_str().unwrap().to_string();
    let dir2 = tmp("refused2");
    refused(
        &dir2,
        &["--steps", "4", "--resume", &two_s],
        &[
            "error[RUN021]",
            "holds `parametri.strata.1.",
            "another model",
        ],
    );
    refused(
        &dir2,
        &["--steps", "4", "--embd", "16", "--resume", ck],
        &[
            "error[RUN021]",
            "`parametri.wte` has shape [69, 8]",
            "[69, 16]",
        ],
    );

    // flags that contradict the checkpoint
    refused(
        &dir2,
        &["--steps", "1", "--resume", ck],
        &["`--steps` is the total", "1 is less than the 2 steps"],
    );
    refused(
        &dir2,
        &["--steps", "4", "--resume", ck, "--init", params],
        &["`--resume` and `--init`"],
    );
    for d in [a, dir, dir2] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn the_example_suites_pass() {
    // examples/gpt-shakespeare/src/*.proba: the KV-cache sampler against the
    // whole-context one, and the checkpoint in PyTorch (interop.proba). Their bounds
    // (1e-12) are float64 ones: the suites run at `--precision f64` (the example's
    // manifest says f32; the flag wins).
    let o = Faber::new()
        .args(["test", "--precision", "f64", "examples/gpt-shakespeare"])
        .current_dir(common::ROOT)
        .output();
    let out = String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("4 passed, 0 failed, 0 blocked"), "{out}");
}
