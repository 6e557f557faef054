//! Checkpoints of training state through the built binary (gradus:serialize over
//! src/eval/checkpoint.rs): every kind of leaf comes back bit for bit, the file stores
//! numbers with integer dtypes (read here with the independent safetensors reader), and
//! every way a file can fail to fill the tree is a diagnostic naming the field.

mod common;

use common::Faber;
use std::path::{Path, PathBuf};

use faber::serialize::safetensors::{self, Dtype};

fn tmp(tag: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-ckpt-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `src` as a program in `dir`; (exit code, stdout, stderr).
fn run(dir: &Path, src: &str) -> (i32, String, String) {
    let file = dir.join("prog.fab");
    std::fs::write(&file, src).unwrap();
    let out = Faber::new().arg("run").arg(&file).current_dir(dir).output();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A state record with the awkward values: NaN, −0.0, the smallest subnormal, 2⁵³ + 1
/// and i64::MIN, inside an Adam state after one real step.
const STATE: &str = r#"
importa ex "gradus:serialize" privata serialize
importa ex "gradus:optimize" privata optimize

genus Status {
    optimize.StatusAdam adam
    numerus magnus
    numerus minimus
    f32 nan
    f32 nulla_negativa
    f32 minima
    bivalens flag
    textus nomen
    tf32 t
}

functio status(bivalens plena) → Status {
    fixum tf32[] z ← vacua
    fixum lista<tf32> p ← [z.strue([1.0, -2.0, 3.0], [3])]
    fixum optimize.StatusAdam s0 ← optimize.adam_initium(p)
    si non plena ergo redde Status { adam = s0, magnus = 0, minimus = 0, nan = 1.0, nulla_negativa = 1.0, minima = 1.0, flag = falsum, nomen = "", t = z.crea(0.0, [2, 2]) }
    fixum [_, s1] ← optimize.adam(p, [z.strue([0.25, -0.5, 0.125], [3])], s0, 0.1, 0.9, 0.99, 0.00000001)
    fixum f32 a ← 0.0
    redde Status { adam = s1, magnus = 9007199254740993, minimus = -9223372036854775807 - 1, nan = a / a, nulla_negativa = -0.0, minima = 5e-324, flag = verum, nomen = "ναι", t = z.strue([a / a, -0.0, 5e-324, -1.5], [2, 2]) }
}

incipit {
    serialize.scribe_safetensors("one.safetensors", status(verum))
    fixum Status r ← serialize.lege_safetensors("one.safetensors", status(falsum))
    serialize.scribe_safetensors("two.safetensors", r)
    serialize.scribe_safetensors("blank.safetensors", status(falsum))
    fixum Status b ← serialize.ex_octetis(serialize.ad_octetos(status(verum)), status(falsum))
    serialize.scribe_safetensors("three.safetensors", b)
    nota r.adam.passus
    nota r.magnus - 9007199254740992
    nota r.minimus
    nota 1.0 / r.nulla_negativa
    nota r.nomen
}
"#;

#[test]
fn every_leaf_survives_a_round_trip_bit_for_bit() {
    let dir = tmp("bits");
    let (code, stdout, stderr) = run(&dir, STATE);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        ["1", "1", "-9223372036854775808", "-inf", "ναι"],
        "{stderr}"
    );
    let one = std::fs::read(dir.join("one.safetensors")).unwrap();
    let blank = std::fs::read(dir.join("blank.safetensors")).unwrap();
    // What was read back writes the same bytes: nothing was lost or changed.
    assert_eq!(one, std::fs::read(dir.join("two.safetensors")).unwrap());
    assert_eq!(one, std::fs::read(dir.join("three.safetensors")).unwrap());
    assert_ne!(
        one, blank,
        "the tree read into differs from the one written"
    );

    // The stored dtypes and values, read by the library's reader.
    let file = safetensors::read_raw(&one).unwrap();
    let get = |name: &str| {
        file.tensors
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no entry `{name}`"))
    };
    let passus = get("adam.passus");
    assert_eq!(
        (passus.dtype, passus.shape.as_slice()),
        (Dtype::I64, &[][..])
    );
    assert_eq!(passus.data, 1i64.to_le_bytes());
    assert_eq!(get("magnus").data, 9007199254740993i64.to_le_bytes());
    assert_eq!(get("minimus").data, i64::MIN.to_le_bytes());
    let nan = get("nan");
    assert_eq!(nan.dtype, Dtype::F64);
    assert!(f64::from_le_bytes(nan.data.try_into().unwrap()).is_nan());
    assert_eq!(get("nulla_negativa").data, (-0.0f64).to_le_bytes());
    assert_eq!(get("minima").data, 5e-324f64.to_le_bytes());
    let flag = get("flag");
    assert_eq!((flag.dtype, flag.data), (Dtype::Bool, &[1u8][..]));
    let nomen = get("nomen");
    assert_eq!((nomen.dtype, nomen.shape.as_slice()), (Dtype::U8, &[6][..]));
    assert_eq!(nomen.data, "ναι".as_bytes());
    let t = get("t").to_tensor().unwrap();
    assert!(t.data()[0].is_nan());
    assert_eq!(t.data()[1].to_bits(), (-0.0f64).to_bits());
    // The moments of a real step: m = (1 − β1)·g, v = (1 − β2)·g² (β1 = 0.9, β2 = 0.99).
    let m = get("adam.m.0").to_tensor().unwrap();
    let v = get("adam.v.0").to_tensor().unwrap();
    for (k, g) in [0.25f64, -0.5, 0.125].iter().enumerate() {
        assert!((m.data()[k] - 0.1 * g).abs() < 1e-15, "m[{k}]");
        assert!((v.data()[k] - 0.01 * g * g).abs() < 1e-15, "v[{k}]");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A program that writes `P { w, n }` into `file` with the safetensors writer of this
/// test, then reads it into a `P` with `n = 0`.
fn read_into_p(tag: &str, entries: &[(&str, Dtype, Vec<usize>, Vec<f64>)], faber: bool) -> String {
    let dir = tmp(tag);
    let tensors: Vec<_> = entries
        .iter()
        .map(|(n, d, s, x)| {
            (
                *n,
                faber::tensor::Tensor::from_flat(x.clone(), s).unwrap(),
                *d,
            )
        })
        .collect();
    let refs: Vec<_> = tensors.iter().map(|(n, t, d)| (*n, t, *d)).collect();
    let meta: &[(&str, &str)] = if faber { &[("format", "faber")] } else { &[] };
    let bytes = safetensors::write_with_dtypes(&refs, meta).unwrap();
    std::fs::write(dir.join("in.safetensors"), bytes).unwrap();
    let (code, stdout, stderr) = run(
        &dir,
        r#"
importa ex "gradus:serialize" privata serialize
genus P {
    tf32 w
    numerus n
}
incipit {
    fixum tf32[] z ← vacua
    fixum P p ← serialize.lege_safetensors("in.safetensors", P { w = z.crea(0.0, [2]), n = 0 })
    nota p.n
}
"#,
    );
    let _ = std::fs::remove_dir_all(&dir);
    if code == 0 {
        stdout
    } else {
        assert_eq!(code, 1, "{stderr}");
        format!("error: {stderr}")
    }
}

#[test]
fn a_number_is_read_from_any_dtype_that_holds_it_exactly() {
    let w = ("w", Dtype::F64, vec![2], vec![1.0, 2.0]);
    for dtype in [Dtype::I64, Dtype::I32, Dtype::U8, Dtype::F32, Dtype::F64] {
        let out = read_into_p("dt", &[w.clone(), ("n", dtype, vec![], vec![42.0])], true);
        assert_eq!(out.trim(), "42", "{dtype}: {out}");
    }
}

#[test]
fn a_faber_file_without_a_number_field_is_an_error_naming_it() {
    let w = ("w", Dtype::F64, vec![2], vec![1.0, 2.0]);
    let out = read_into_p("missing", std::slice::from_ref(&w), true);
    assert!(out.starts_with("error:"), "{out}");
    assert!(out.contains("RUN017"), "{out}");
    assert!(out.contains("no entry `n`"), "{out}");
    // A file from another tool (no faber metadata) holds only tensors: `n` keeps 0.
    assert_eq!(read_into_p("foreign", &[w], false).trim(), "0");
}

#[test]
fn an_entry_that_cannot_hold_the_field_is_an_error() {
    let w = ("w", Dtype::F64, vec![2], vec![1.0, 2.0]);
    for (what, entry) in [
        ("fraction", ("n", Dtype::F64, vec![], vec![2.5])),
        ("vector", ("n", Dtype::I64, vec![1], vec![3.0])),
        ("flag", ("n", Dtype::Bool, vec![], vec![1.0])),
    ] {
        let out = read_into_p(what, &[w.clone(), entry], true);
        assert!(
            out.starts_with("error:") && out.contains("RUN017"),
            "{what}: {out}"
        );
        assert!(out.contains("`n`"), "{what}: {out}");
    }
    let out = read_into_p(
        "shape",
        &[
            ("w", Dtype::F64, vec![3], vec![1.0; 3]),
            ("n", Dtype::I64, vec![], vec![1.0]),
        ],
        true,
    );
    assert!(out.contains("RUN013") && out.contains("`w`"), "{out}");
}

#[test]
fn a_map_in_the_tree_is_an_error_not_a_dropped_field() {
    let dir = tmp("map");
    let (code, _, stderr) = run(
        &dir,
        r#"
importa ex "gradus:serialize" privata serialize
genus Q {
    tabula<textus, numerus> index
}
incipit {
    fixum tabula<textus, numerus> m ← {"a": 1}
    serialize.scribe_safetensors("q.safetensors", Q { index = m })
}
"#,
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("RUN017") && stderr.contains("`index`"),
        "{stderr}"
    );
}
