//! The precision policy (docs/precision.md): `--precision f32|f64`, `[run] precision`
//! in faber.toml, f32 tensors stored and rounded as f32, literals rounded once, f32
//! checkpoints written as F32 and read back bit for bit. Every expected value is
//! computed here with Rust's own f32 arithmetic, independently of faber.

mod common;

use common::Faber;
use std::path::{Path, PathBuf};

fn tmp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faber-precision-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// (exit code, stdout, stderr) of `faber <verb> [flags] <path>` in `dir`.
fn faber(dir: &Path, verb: &str, flags: &[&str], path: &Path) -> (Option<i32>, String, String) {
    let out = Faber::new()
        .arg(verb)
        .args(flags)
        .arg(path)
        .current_dir(dir)
        .output();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn program(dir: &Path, src: &str) -> PathBuf {
    let file = dir.join("prog.fab");
    std::fs::write(&file, src).unwrap();
    file
}

/// Prints `(1e8 + 1) − 1e8` computed in a tf32 tensor.
const CANCEL: &str = r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[1] x ← semen.crea(100000000.0, [1])
    fixum tf32[1] z ← x.addita(1.0).subtrahe(100000000.0)
    nota z
}
"#;

#[test]
fn one_plus_1e8_minus_1e8_is_0_in_f32_and_1_in_f64() {
    // The reference: in f32, 1e8 + 1 rounds back to 1e8 (the spacing of f32 there is 8).
    let f32_result = (1e8f32 + 1.0f32) - 1e8f32;
    assert_eq!(f32_result, 0.0);
    assert_eq!((1e8f64 + 1.0) - 1e8, 1.0);
    let dir = tmp("cancel");
    let file = program(&dir, CANCEL);
    let (code, out, err) = faber(&dir, "run", &["--precision", "f32"], &file);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "[0.0]");
    let (code, out, err) = faber(&dir, "run", &["--precision", "f64"], &file);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "[1.0]");
    // No flag, no manifest: f64 (the default, docs/precision.md).
    let (code, out, _) = faber(&dir, "run", &[], &file);
    assert_eq!((code, out.trim()), (Some(0), "[1.0]"));
}

#[test]
fn a_literal_in_an_f32_tensor_reads_back_as_the_nearest_f32() {
    let dir = tmp("literal");
    let file = program(
        &dir,
        r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2] t ← semen.strue([0.1, 2.0], [2])
    fixum fractus a ← t[0]
    nota a
    fixum tf32[1] c ← semen.crea(0.1, [1])
    fixum fractus b ← c[0]
    nota b
    fixum tf32[1] l ← [0.7] ↦ tf32[1]
    fixum fractus d ← l[0]
    nota d
    nota t
}
"#,
    );
    let (code, out, err) = faber(&dir, "run", &["--precision", "f32"], &file);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    let near = |x: f32| (x as f64).to_string();
    assert_ne!(near(0.1), "0.1");
    assert_eq!(lines[0], near(0.1), "strue");
    assert_eq!(lines[1], near(0.1), "crea");
    assert_eq!(lines[2], near(0.7), "list ↦ tensor");
    // A tensor of f32 elements shows each as its shortest f32 decimal.
    assert_eq!(lines[3], "[0.1, 2.0]");
    let (code, out, _) = faber(&dir, "run", &["--precision", "f64"], &file);
    assert_eq!(code, Some(0));
    assert_eq!(
        out.lines().take(3).collect::<Vec<_>>(),
        ["0.1", "0.1", "0.7"]
    );
}

/// Saves a tensor of `n` elements, loads it back and saves it again.
const SAVE: &str = r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] w ← semen.strue([0.1, -2.5, 3.0e-8, 1.0e30, 0.3333333333333333, -0.0], [2, 3])
    hospes.serva_tensores("w.safetensors", w)
    fixum tf32[2, 3] r ← hospes.carga_tensores("w.safetensors", w)
    hospes.serva_tensores("r.safetensors", r)
    nota r.subtrahe(w).summa()
}
"#;

const SAVED: [f64; 6] = [0.1, -2.5, 3.0e-8, 1.0e30, 0.3333333333333333, -0.0];

/// (the header's JSON text, the data bytes) of a safetensors file.
fn split(bytes: &[u8]) -> (String, &[u8]) {
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (
        String::from_utf8(bytes[8..8 + n].to_vec()).unwrap(),
        &bytes[8 + n..],
    )
}

#[test]
fn an_f32_checkpoint_is_f32_half_the_size_and_round_trips_bit_for_bit() {
    let dir = tmp("checkpoint");
    let file = program(&dir, SAVE);
    let (code, out, err) = faber(&dir, "run", &["--precision", "f32"], &file);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(out.trim(), "0.0");
    let f32_file = std::fs::read(dir.join("w.safetensors")).unwrap();
    let (header, data) = split(&f32_file);
    assert!(header.contains(r#""dtype":"F32""#), "{header}");
    // The elements: each literal rounded once to f32, little-endian.
    let want: Vec<u8> = SAVED
        .iter()
        .flat_map(|&x| (x as f32).to_le_bytes())
        .collect();
    assert_eq!(data, &want[..]);
    // Loaded and saved again: the same bytes.
    assert_eq!(std::fs::read(dir.join("r.safetensors")).unwrap(), f32_file);

    let (code, _, err) = faber(&dir, "run", &["--precision", "f64"], &file);
    assert_eq!(code, Some(0), "{err}");
    let f64_file = std::fs::read(dir.join("w.safetensors")).unwrap();
    let (header64, data64) = split(&f64_file);
    assert!(header64.contains(r#""dtype":"F64""#), "{header64}");
    let want64: Vec<u8> = SAVED.iter().flat_map(|x| x.to_le_bytes()).collect();
    assert_eq!(data64, &want64[..]);
    assert_eq!(data64.len(), 2 * data.len());
    assert_eq!(f64_file.len() - f32_file.len(), 4 * SAVED.len());
}

#[test]
fn an_f64_checkpoint_loads_into_an_f32_run_rounded_once() {
    let dir = tmp("load-f64");
    let file = program(&dir, SAVE);
    let (code, _, err) = faber(&dir, "run", &["--precision", "f64"], &file);
    assert_eq!(code, Some(0), "{err}");
    std::fs::rename(dir.join("w.safetensors"), dir.join("wide.safetensors")).unwrap();
    let load = dir.join("load.fab");
    std::fs::write(
        &load,
        r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] w ← semen.crea(0.0, [2, 3])
    fixum tf32[2, 3] r ← hospes.carga_tensores("wide.safetensors", w)
    hospes.serva_tensores("narrow.safetensors", r)
}
"#,
    )
    .unwrap();
    let (code, _, err) = faber(&dir, "run", &["--precision", "f32"], &load);
    assert_eq!(code, Some(0), "{err}");
    let bytes = std::fs::read(dir.join("narrow.safetensors")).unwrap();
    let (header, data) = split(&bytes);
    assert!(header.contains(r#""dtype":"F32""#), "{header}");
    let want: Vec<u8> = SAVED
        .iter()
        .flat_map(|&x| (x as f32).to_le_bytes())
        .collect();
    assert_eq!(data, &want[..]);
}

fn package(dir: &Path, manifest_run: &str) -> PathBuf {
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(pkg.join("src")).unwrap();
    std::fs::write(
        pkg.join("faber.toml"),
        format!("[package]\nname = \"p\"\n{manifest_run}"),
    )
    .unwrap();
    std::fs::write(pkg.join("src/main.fab"), CANCEL).unwrap();
    pkg
}

#[test]
fn the_flag_beats_the_manifest() {
    let dir = tmp("manifest");
    let pkg = package(&dir, "[run]\nprecision = \"f32\"\n");
    let (code, out, err) = faber(&dir, "run", &[], &pkg);
    assert_eq!((code, out.trim()), (Some(0), "[0.0]"), "{err}");
    let (code, out, err) = faber(&dir, "run", &["--precision", "f64"], &pkg);
    assert_eq!((code, out.trim()), (Some(0), "[1.0]"), "{err}");

    let dir = tmp("manifest64");
    let pkg = package(&dir, "[run]\nprecision = \"f64\"\n");
    let (code, out, _) = faber(&dir, "run", &[], &pkg);
    assert_eq!((code, out.trim()), (Some(0), "[1.0]"));
    let (code, out, _) = faber(&dir, "run", &["--precision", "f32"], &pkg);
    assert_eq!((code, out.trim()), (Some(0), "[0.0]"));
}

#[test]
fn faber_test_follows_the_policy() {
    let dir = tmp("test-verb");
    let pkg = package(&dir, "[run]\nprecision = \"f32\"\n");
    std::fs::write(
        pkg.join("src/cancel.proba"),
        r#"
proba "f32 cancels" {
    fixum tf32[] semen ← vacua
    fixum tf32[1] x ← semen.crea(100000000.0, [1])
    fixum tf32[1] z ← x.addita(1.0).subtrahe(100000000.0)
    adfirma z[0] ≡ 0.0
}
"#,
    )
    .unwrap();
    let case = pkg.join("src/cancel.proba");
    let (code, out, err) = faber(&dir, "test", &[], &case);
    assert_eq!(code, Some(0), "{out}{err}");
    let (code, out, _) = faber(&dir, "test", &["--precision", "f64"], &case);
    assert_eq!(code, Some(1), "{out}");
    let (code, _, _) = faber(&dir, "test", &["--precision", "f32"], &case);
    assert_eq!(code, Some(0));
}

#[test]
fn bad_precisions_are_refused() {
    let dir = tmp("bad");
    let file = program(&dir, CANCEL);
    let (code, _, err) = faber(&dir, "run", &["--precision", "f16"], &file);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("f32 or f64"), "{err}");
    let pkg = package(&dir, "[run]\nprecision = \"half\"\n");
    let (code, _, err) = faber(&dir, "run", &[], &pkg);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("CLI002") && err.contains("`half`"), "{err}");
}

/// Every program of tests/run (and tests/run/fail) under `--precision f32`: whatever it
/// prints, no input makes faber hit an f64-only path with an f32 tensor (an internal
/// error, exit 101).
#[test]
fn every_run_program_runs_under_f32_without_an_internal_error() {
    let root = Path::new(common::ROOT).join("tests/run");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [root.clone(), root.join("fail")] {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "fab") {
                files.push(p);
            }
        }
    }
    files.sort();
    assert!(files.len() > 100, "{} programs", files.len());
    for f in &files {
        let out = Faber::new()
            .args(["run", "--precision", "f32"])
            .arg(f)
            .current_dir(&root)
            .deadline(std::time::Duration::from_secs(60))
            .output();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.code() != Some(101) && !err.contains("internal error"),
            "{}: {err}",
            f.display()
        );
    }
}

#[test]
fn an_f32_checkpoint_loads_into_an_f64_run_exactly() {
    let dir = tmp("load-f32");
    let file = program(&dir, SAVE);
    let (code, _, err) = faber(&dir, "run", &["--precision", "f32"], &file);
    assert_eq!(code, Some(0), "{err}");
    std::fs::rename(dir.join("w.safetensors"), dir.join("narrow.safetensors")).unwrap();
    let load = dir.join("load.fab");
    std::fs::write(
        &load,
        r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32[2, 3] w ← semen.crea(0.0, [2, 3])
    fixum tf32[2, 3] r ← hospes.carga_tensores("narrow.safetensors", w)
    hospes.serva_tensores("wide.safetensors", r)
}
"#,
    )
    .unwrap();
    let (code, _, err) = faber(&dir, "run", &["--precision", "f64"], &load);
    assert_eq!(code, Some(0), "{err}");
    let bytes = std::fs::read(dir.join("wide.safetensors")).unwrap();
    let (header, data) = split(&bytes);
    assert!(header.contains(r#""dtype":"F64""#), "{header}");
    let want: Vec<u8> = SAVED
        .iter()
        .flat_map(|&x| ((x as f32) as f64).to_le_bytes())
        .collect();
    assert_eq!(data, &want[..]);
}

/// `(1e8 + 1) − 1e8` in tensors declared with each element type, made by `vacua` and by
/// `↦` from a list; a declared f64 type is f64 under every precision.
const DECLARED: &str = r#"
incipit {
    fixum tf64[] z ← vacua
    fixum tf32[] s ← vacua
    nota z.crea(100000000.0, [1]).addita(1.0).subtrahe(100000000.0)
    nota s.crea(100000000.0, [1]).addita(1.0).subtrahe(100000000.0)
    fixum tf64[1] a ← [100000000.0] ↦ tf64[1]
    fixum tf32[1] b ← [100000000.0] ↦ tf32[1]
    nota a.addita(1.0).subtrahe(100000000.0)
    nota b.addita(1.0).subtrahe(100000000.0)
    fixum tensor<f64, [1]> c ← [100000000.0] ↦ tensor<f64, [1]>
    fixum tensor<fractus, [1]> d ← [100000000.0] ↦ tensor<fractus, [1]>
    fixum tensor<f32, [1]> e ← [100000000.0] ↦ tensor<f32, [1]>
    nota c.addita(1.0).subtrahe(100000000.0)
    nota d.addita(1.0).subtrahe(100000000.0)
    nota e.addita(1.0).subtrahe(100000000.0)
    # an f64 tensor with an f32 one: promoted to f64
    nota a.addita(b).subtrahe(200000000.0).addita(1.0)
}
"#;

#[test]
fn a_declared_f64_tensor_stays_f64_under_f32() {
    // In f32, 1e8 + 1 rounds back to 1e8; in f64 it is exact. f64 + f32 promotes.
    assert_eq!((1e8f32 + 1.0f32) - 1e8f32, 0.0);
    let dir = tmp("declared");
    let file = program(&dir, DECLARED);
    let (code, out, err) = faber(&dir, "run", &["--precision", "f32"], &file);
    assert_eq!(code, Some(0), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        ["[1.0]", "[0.0]", "[1.0]", "[0.0]", "[1.0]", "[1.0]", "[0.0]", "[1.0]"],
        "{out}"
    );
    let (code, out, err) = faber(&dir, "run", &["--precision", "f64"], &file);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.lines().all(|l| l == "[1.0]"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
