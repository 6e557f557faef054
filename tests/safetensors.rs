//! The safetensors reader and writer (src/serialize/safetensors.rs) against
//! files written by the Python `safetensors` package, and the other way round.
//!
//! Expected values come from tests/reference/safetensors_fixtures.py, which
//! writes tests/fixtures/safetensors/ (fixtures, expected.json, cases/ and
//! cases.json) and verifies `written_by_faber.safetensors` with the Python
//! package. Regenerate that file with
//! `FABER_WRITE_FIXTURE=1 cargo test --test safetensors`, then re-run the script.

use faber::serialize::safetensors::{self, read, read_all, write, write_with_dtypes, Dtype, File};
use faber::serialize::{SafetensorsError, SafetensorsErrorKind as K};
use faber::tensor::Tensor;
use serde_json::Value;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/safetensors")
}

fn load(name: &str) -> Vec<u8> {
    let path = dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn json(name: &str) -> Value {
    serde_json::from_slice(&load(name)).unwrap()
}

fn t(data: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_flat(data.to_vec(), shape).unwrap()
}

/// Equal as stored: same bits, except that any NaN matches any NaN.
fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fn assert_values(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: element count");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(same(g, w), "{what}[{i}]: got {g:?}, want {w:?}");
    }
}

/// A Python `repr(float)` string ("0.1", "-0.0", "inf", "nan", "1e+300").
fn py_float(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn kind_named(name: &str) -> K {
    match name {
        "Truncated" => K::Truncated,
        "Header" => K::Header,
        "Dtype" => K::Dtype,
        "Offsets" => K::Offsets,
        "Limit" => K::Limit,
        "Value" => K::Value,
        other => panic!("unknown kind {other}"),
    }
}

fn expect_err(
    what: &str,
    r: Result<impl std::fmt::Debug, SafetensorsError>,
    kind: K,
) -> SafetensorsError {
    match r {
        Ok(v) => panic!("{what}: expected a {kind:?} error, got Ok({v:?})"),
        Err(e) => {
            assert_eq!(e.kind, kind, "{what}: wrong kind, message: {}", e.message);
            assert!(!e.message.is_empty());
            e
        }
    }
}

// ------------------------------------------------------- (1) Python's files

#[test]
fn python_fixtures_read_as_expected() {
    let expected = json("expected.json");
    let files = expected.as_object().unwrap();
    assert_eq!(files.len(), 6);
    for (fname, spec) in files {
        let bytes = load(fname);
        let file = read_all(&bytes).unwrap_or_else(|e| panic!("{fname}: {e}"));
        let want = spec["tensors"].as_array().unwrap();
        let names: Vec<&str> = file.tensors.iter().map(|(n, _, _)| n.as_str()).collect();
        let want_names: Vec<&str> = want.iter().map(|w| w["name"].as_str().unwrap()).collect();
        assert_eq!(names, want_names, "{fname}: names in buffer order");
        for ((name, dtype, tensor), w) in file.tensors.iter().zip(want) {
            let what = format!("{fname}/{name}");
            assert_eq!(dtype.name(), w["dtype"].as_str().unwrap(), "{what}: dtype");
            let shape: Vec<usize> = w["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(tensor.shape(), &shape[..], "{what}: shape");
            let values: Vec<f64> = w["values"]
                .as_array()
                .unwrap()
                .iter()
                .map(py_float)
                .collect();
            assert_values(&what, tensor.data(), &values);
        }
        let meta: Vec<(String, String)> = spec["metadata"]
            .as_array()
            .unwrap()
            .iter()
            .map(|kv| {
                (
                    kv[0].as_str().unwrap().to_string(),
                    kv[1].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(file.metadata, meta, "{fname}: metadata");
        // `read` is `read_all` without dtypes and metadata.
        let plain = read(&bytes).unwrap();
        assert_eq!(plain.len(), file.tensors.len());
        for ((n1, t1), (n2, _, t2)) in plain.iter().zip(&file.tensors) {
            assert_eq!(n1, n2);
            assert_values(n1, t1.data(), t2.data());
        }
    }
}

#[test]
fn python_fixture_spot_checks() {
    // A few values spelled out, so a broken expected.json cannot hide everything.
    let f = read_all(&load("ints.safetensors")).unwrap();
    let v = f.tensor("i64_vec").unwrap().data();
    assert_eq!(v[3], 9007199254740992.0, "2^53 + 1 rounds to even");
    assert_eq!(v[4], -9223372036854775808.0);
    assert_eq!(f.metadata_value("kind"), Some("ints"));
    let f = read_all(&load("halfs.safetensors")).unwrap();
    let bf = f.tensor("bf16_mat").unwrap().data();
    assert_eq!(bf[2], 3.3895313892515355e38);
    assert_eq!(bf[3], 9.183549615799121e-41);
    let h = f.tensor("f16_mat").unwrap().data();
    assert_eq!(h[1], 0.0999755859375);
    assert_eq!(h[3], 5.960464477539063e-8);
    assert!(f.metadata.is_empty());
    let f = read_all(&load("empty.safetensors")).unwrap();
    assert!(f.tensors.is_empty() && f.metadata.is_empty());
}

#[test]
fn rewriting_python_fixtures_reproduces_their_bytes() {
    // Same tensors, dtypes, order and metadata order → the same bytes as the
    // Python package: header JSON, string escapes and padding agree.
    for fname in [
        "floats.safetensors",
        "halfs.safetensors",
        "empty.safetensors",
        "names.safetensors",
    ] {
        let bytes = load(fname);
        let f = read_all(&bytes).unwrap();
        let tensors: Vec<(&str, &Tensor, Dtype)> = f
            .tensors
            .iter()
            .map(|(n, d, t)| (n.as_str(), t, *d))
            .collect();
        let meta: Vec<(&str, &str)> = f
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let out = write_with_dtypes(&tensors, &meta).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out[8..]),
            String::from_utf8_lossy(&bytes[8..]),
            "{fname}"
        );
        assert_eq!(out, bytes, "{fname}");
    }
}

#[test]
fn integers_beyond_f64_do_not_write_back() {
    // 2^63 - 1 and 2^64 - 1 read as 2^63 and 2^64, which I64 / U64 cannot hold:
    // the writer refuses rather than wrapping or saturating.
    let f = read_all(&load("ints.safetensors")).unwrap();
    let e = expect_err(
        "I64 2^63",
        write(&[("x", f.tensor("i64_vec").unwrap())], Dtype::I64, &[]),
        K::Value,
    );
    assert!(e.message.contains("element 5"), "{}", e.message);
    let f = read_all(&load("small_ints.safetensors")).unwrap();
    expect_err(
        "U64 2^64",
        write(&[("x", f.tensor("u64").unwrap())], Dtype::U64, &[]),
        K::Value,
    );
    let u8s = f.tensor("u8").unwrap();
    assert_eq!(
        read(&write(&[("x", u8s)], Dtype::U8, &[]).unwrap()).unwrap()[0].1,
        *u8s
    );
}

#[test]
fn edge_cases_match_the_python_package() {
    let cases = json("cases.json");
    let cases = cases.as_array().unwrap();
    assert!(cases.len() >= 50);
    for case in cases {
        let fname = case["file"].as_str().unwrap();
        let bytes = load(&format!("cases/{fname}"));
        let got = read_all(&bytes);
        match case["kind"].as_str() {
            Some(kind) => {
                assert!(case["python"].as_str().unwrap().starts_with("error"));
                expect_err(fname, got, kind_named(kind));
            }
            None => {
                assert_eq!(case["python"], "ok");
                let file = got.unwrap_or_else(|e| panic!("{fname}: {e}"));
                let mut tensors: Vec<&(String, Dtype, Tensor)> = file.tensors.iter().collect();
                tensors.sort_by(|a, b| a.0.cmp(&b.0));
                let want = case["tensors"].as_array().unwrap();
                assert_eq!(tensors.len(), want.len(), "{fname}");
                for ((name, dtype, tensor), w) in tensors.into_iter().zip(want) {
                    assert_eq!(name, w[0].as_str().unwrap(), "{fname}");
                    assert_eq!(dtype.name(), w[1].as_str().unwrap(), "{fname}");
                    let shape: Vec<usize> = w[2]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|d| d.as_u64().unwrap() as usize)
                        .collect();
                    assert_eq!(tensor.shape(), &shape[..], "{fname}/{name}");
                    let values: Vec<f64> = w[3].as_array().unwrap().iter().map(py_float).collect();
                    assert_values(&format!("{fname}/{name}"), tensor.data(), &values);
                }
            }
        }
    }
}

// ------------------------------------------------------- (2) round trips

#[test]
fn f64_round_trip_is_exact() {
    let specials = [
        0.1,
        -0.0,
        5e-324,
        -2.2250738585072014e-308,
        1.7976931348618157e308,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        1.0 / 3.0,
    ];
    let mut rng = Rng(7);
    let random: Vec<f64> = (0..24).map(|_| f64::from_bits(rng.next())).collect();
    let tensors = [
        t(&[42.5], &[]),
        t(&specials, &[9]),
        t(&random[..6], &[2, 3]),
        t(&random, &[2, 3, 4]),
        t(&[], &[0]),
        t(&[], &[3, 0, 2]),
    ];
    let names = ["scalar", "specials", "mat", "cube", "empty", "empty3"];
    let list: Vec<(&str, &Tensor)> = names.iter().copied().zip(&tensors).collect();
    let meta = [
        ("format", "faber"),
        ("empty", ""),
        ("ünï \"\\\n", "😀\u{1}"),
    ];
    let bytes = write(&list, Dtype::F64, &meta).unwrap();
    assert_eq!(u64::from_le_bytes(bytes[..8].try_into().unwrap()) % 8, 0);
    let file = read_all(&bytes).unwrap();
    assert_eq!(
        file.metadata,
        meta.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<Vec<_>>()
    );
    assert_eq!(file.tensors.len(), tensors.len());
    for ((name, dtype, got), (want_name, want)) in file.tensors.iter().zip(&list) {
        assert_eq!(name, want_name);
        assert_eq!(*dtype, Dtype::F64);
        assert_eq!(got.shape(), want.shape());
        assert_values(name, got.data(), want.data());
    }
    // Deterministic: the same input gives the same bytes.
    assert_eq!(write(&list, Dtype::F64, &meta).unwrap(), bytes);
}

#[test]
fn f32_round_trip_rounds_to_f32() {
    let xs = [
        0.1,
        1.0 / 3.0,
        16777217.0,
        -1e-46,
        1e-40,
        3.5e38,
        -3.5e38,
        3.4028235e38,
        3.4028235677973366e38, // halfway to 2^128: the tie goes to even, i.e. overflows
        f64::NAN,
        -0.0,
        2.5,
    ];
    // Expected: each value rounded to nearest f32 (ties to even), written out.
    let want = [
        0.10000000149011612,
        0.3333333432674408,
        16777216.0,
        -0.0,
        9.99994610111476e-41,
        f64::INFINITY,
        f64::NEG_INFINITY,
        3.4028234663852886e38,
        f64::INFINITY,
        f64::NAN,
        -0.0,
        2.5,
    ];
    let x = t(&xs, &[12]);
    let back = read_all(&write(&[("x", &x)], Dtype::F32, &[]).unwrap()).unwrap();
    assert_eq!(back.tensors[0].1, Dtype::F32);
    assert_values("f32", back.tensors[0].2.data(), &want);
    for (&x, &w) in xs.iter().zip(&want) {
        assert!(same((x as f32) as f64, w), "{x}");
    }
}

#[test]
fn half_precision_round_trips_every_bit_pattern() {
    // All 65536 F16 and BF16 patterns: read → f64 → write gives the same bits,
    // except that every NaN comes back as the quiet NaN of its sign.
    for (dtype, exp_bits, quiet) in [(Dtype::F16, 5, 0x7e00u16), (Dtype::BF16, 8, 0x7fc0)] {
        let buf: Vec<u8> = (0..=u16::MAX).flat_map(|b| b.to_le_bytes()).collect();
        let header = format!(
            "{{\"h\":{{\"dtype\":\"{dtype}\",\"shape\":[65536],\"data_offsets\":[0,{}]}}}}",
            buf.len()
        );
        let mut file = (header.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(header.as_bytes());
        file.extend_from_slice(&buf);
        let values = read(&file).unwrap().remove(0).1;
        let mut prev = -1.0;
        for (b, &v) in values.data().iter().enumerate() {
            let b = b as u16;
            let exponent_all_ones =
                (b >> (15 - exp_bits)) & ((1 << exp_bits) - 1) == (1 << exp_bits) - 1;
            let mantissa = b & ((1 << (15 - exp_bits)) - 1);
            assert_eq!(
                v.is_nan(),
                exponent_all_ones && mantissa != 0,
                "{dtype} {b:#06x}"
            );
            assert_eq!(v.is_sign_negative(), b & 0x8000 != 0, "{dtype} {b:#06x}");
            if b < 0x8000 && !v.is_nan() {
                assert!(v > prev || b == 0, "{dtype} {b:#06x} not increasing");
                prev = v;
            }
        }
        let out = write(&[("h", &values)], dtype, &[]).unwrap();
        let body = &out[out.len() - buf.len()..];
        for b in 0..=u16::MAX {
            let got = u16::from_le_bytes([body[2 * b as usize], body[2 * b as usize + 1]]);
            let want = if values.data()[b as usize].is_nan() {
                (b & 0x8000) | quiet
            } else {
                b
            };
            assert_eq!(got, want, "{dtype} {b:#06x}");
        }
    }
}

#[test]
fn half_precision_rounding_is_single_and_to_even() {
    // Values chosen so that rounding through f32 first would give another answer.
    let cases: [(Dtype, f64, f64); 10] = [
        (
            Dtype::F16,
            1.0 + 2f64.powi(-11) + 2f64.powi(-40),
            1.0009765625,
        ),
        (Dtype::F16, 1.0 + 2f64.powi(-11), 1.0),
        (Dtype::F16, 1.0 + 3.0 * 2f64.powi(-11), 1.001953125),
        (Dtype::F16, 65519.99, 65504.0),
        (Dtype::F16, 65520.0, f64::INFINITY),
        (Dtype::F16, 2f64.powi(-25), 0.0),
        (Dtype::F16, -3.0 * 2f64.powi(-26), -5.960464477539063e-8),
        (Dtype::BF16, 1.0 + 2f64.powi(-8) + 2f64.powi(-30), 1.0078125),
        (Dtype::BF16, 1.0 + 2f64.powi(-8), 1.0),
        (Dtype::BF16, -1e-45, -0.0),
    ];
    for (dtype, x, want) in cases {
        let back = read(&write(&[("x", &t(&[x], &[]))], dtype, &[]).unwrap()).unwrap();
        assert!(
            same(back[0].1.data()[0], want),
            "{dtype} {x:e}: got {:e}",
            back[0].1.data()[0]
        );
    }
}

#[test]
fn integer_dtypes_round_trip_and_refuse_what_they_cannot_hold() {
    let ok: [(Dtype, &[f64]); 9] = [
        (Dtype::I64, &[-9223372036854775808.0, 9.2e18, -1.0, 0.0]),
        (Dtype::I32, &[-2147483648.0, 2147483647.0, -0.0]),
        (Dtype::I16, &[-32768.0, 32767.0]),
        (Dtype::I8, &[-128.0, 127.0]),
        (Dtype::U64, &[0.0, 18446744073709549568.0]),
        (Dtype::U32, &[4294967295.0]),
        (Dtype::U16, &[65535.0]),
        (Dtype::U8, &[255.0, 0.0]),
        (Dtype::Bool, &[1.0, 0.0, -0.0]),
    ];
    for (dtype, xs) in ok {
        let x = t(xs, &[xs.len()]);
        let back = read_all(&write(&[("x", &x)], dtype, &[]).unwrap()).unwrap();
        assert_eq!(back.tensors[0].1, dtype);
        let want: Vec<f64> = xs.iter().map(|&v| if v == 0.0 { 0.0 } else { v }).collect();
        assert_values(dtype.name(), back.tensors[0].2.data(), &want);
    }
    let bad: [(Dtype, f64); 12] = [
        (Dtype::I64, 9223372036854775808.0),
        (Dtype::I32, 2147483648.0),
        (Dtype::I32, -2147483649.0),
        (Dtype::I32, 2.5),
        (Dtype::I16, 32768.0),
        (Dtype::I8, -129.0),
        (Dtype::U64, 18446744073709551616.0),
        (Dtype::U8, -1.0),
        (Dtype::U8, 256.0),
        (Dtype::U16, f64::NAN),
        (Dtype::I64, f64::INFINITY),
        (Dtype::Bool, 2.0),
    ];
    for (dtype, x) in bad {
        expect_err(
            &format!("{dtype} {x}"),
            write(&[("x", &t(&[1.0, x], &[2]))], dtype, &[]),
            K::Value,
        );
    }
}

// ------------------------------------------------------- (3) faber's file

/// The tensors of written_by_faber.safetensors; the Python script holds the
/// same f64 inputs and checks the stored values it computes from them.
fn faber_written_tensors() -> Vec<(&'static str, Tensor, Dtype)> {
    let p = |k: i32| 2f64.powi(k);
    vec![
        (
            "f64_mat",
            t(&[0.1, -2.5, 1e300, 5e-324, -0.0, 6.02214076e23], &[2, 3]),
            Dtype::F64,
        ),
        ("f64_scalar", t(&[std::f64::consts::PI], &[]), Dtype::F64),
        (
            "f64_special",
            t(&[f64::NAN, f64::INFINITY, f64::NEG_INFINITY], &[3]),
            Dtype::F64,
        ),
        (
            "f32_vec",
            t(
                &[0.1, 1.0 / 3.0, 1e-46, 3.5e38, 16777217.0, -1.5, f64::NAN],
                &[7],
            ),
            Dtype::F32,
        ),
        (
            "f16_vec",
            t(
                &[
                    1.0 + p(-11) + p(-40),
                    65504.0,
                    65520.0,
                    p(-25),
                    3.0 * p(-26),
                    -0.1,
                    2049.0,
                    f64::NAN,
                ],
                &[8],
            ),
            Dtype::F16,
        ),
        (
            "bf16_mat",
            t(&[1.0 + p(-8) + p(-30), 3.140625, -1e-40, 3.4e38], &[2, 2]),
            Dtype::BF16,
        ),
        (
            "i64_vec",
            t(&[-9007199254740992.0, 0.0, 42.0, 9.2e18], &[4]),
            Dtype::I64,
        ),
        (
            "i32_cube",
            t(&[-2147483648.0, 2147483647.0, 7.0, -7.0], &[2, 1, 2]),
            Dtype::I32,
        ),
        ("u8_vec", t(&[0.0, 128.0, 255.0], &[3]), Dtype::U8),
        ("bool_vec", t(&[1.0, 0.0, 0.0, 1.0], &[4]), Dtype::Bool),
        ("empty", t(&[], &[0, 3]), Dtype::F32),
    ]
}

const FABER_META: [(&str, &str); 2] = [
    ("format", "pt"),
    ("creator", "faber ünïcode \"q\"\n\t\u{1}"),
];

#[test]
fn writer_reproduces_the_file_python_verified() {
    let tensors = faber_written_tensors();
    let list: Vec<(&str, &Tensor, Dtype)> = tensors.iter().map(|(n, t, d)| (*n, t, *d)).collect();
    let bytes = write_with_dtypes(&list, &FABER_META).unwrap();
    let path = dir().join("written_by_faber.safetensors");
    if std::env::var_os("FABER_WRITE_FIXTURE").is_some() {
        std::fs::write(&path, &bytes).unwrap();
    }
    let committed = load("written_by_faber.safetensors");
    assert_eq!(
        String::from_utf8_lossy(&bytes[..bytes.len().min(600)]),
        String::from_utf8_lossy(&committed[..committed.len().min(600)])
    );
    assert_eq!(
        bytes, committed,
        "writer output differs from the verified file"
    );
    // And faber reads back what it wrote, dtypes included.
    let f = read_all(&bytes).unwrap();
    assert_eq!(f.metadata_value("creator"), Some(FABER_META[1].1));
    for ((name, dtype, tensor), (n, input, d)) in f.tensors.iter().zip(&tensors) {
        assert_eq!((name.as_str(), *dtype), (*n, *d));
        assert_eq!(tensor.shape(), input.shape());
        if *dtype == Dtype::F64 {
            assert_values(name, tensor.data(), input.data());
        }
    }
}

// ------------------------------------------------------- (4) malformed input

fn file_with(header: &str, buffer: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(buffer);
    out
}

#[test]
fn malformed_inputs_are_errors_of_the_right_kind() {
    let f4 = r#"{"dtype":"F32","shape":[1],"data_offsets":[0,4]}"#;
    let mut huge_len = (u64::MAX).to_le_bytes().to_vec();
    huge_len.extend_from_slice(b"{}");
    let cases: Vec<(&str, Vec<u8>, K)> = vec![
        ("truncated length", vec![1, 0, 0], K::Truncated),
        (
            "header past end",
            file_with("{}", b"")[..9].to_vec(),
            K::Truncated,
        ),
        ("huge header length", huge_len, K::Limit),
        ("bad json", file_with("{\"a\":", b""), K::Header),
        ("not an object", file_with("\"x\"", b""), K::Header),
        ("unterminated string", file_with("{\"a", b""), K::Header),
        // Stricter than the Python package, which keeps the last of two identical entries.
        (
            "duplicate identical names",
            file_with(&format!("{{\"a\":{f4},\"a\":{f4}}}"), &[0; 4]),
            K::Header,
        ),
        (
            "duplicate metadata key",
            file_with(r#"{"__metadata__":{"k":"1","k":"2"}}"#, b""),
            K::Header,
        ),
        (
            "unknown dtype",
            file_with(
                r#"{"a":{"dtype":"Q8","shape":[1],"data_offsets":[0,1]}}"#,
                &[0],
            ),
            K::Dtype,
        ),
        (
            "fp8 not supported",
            file_with(
                r#"{"a":{"dtype":"F8_E4M3","shape":[1],"data_offsets":[0,1]}}"#,
                &[0],
            ),
            K::Dtype,
        ),
        (
            "complex not supported",
            file_with(
                r#"{"a":{"dtype":"C64","shape":[1],"data_offsets":[0,8]}}"#,
                &[0; 8],
            ),
            K::Dtype,
        ),
        (
            "dtype not a string",
            file_with(
                r#"{"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}"#,
                &[0; 4],
            ),
            K::Header,
        ),
        (
            "wrong offsets",
            file_with(
                r#"{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}}"#,
                &[0; 8],
            ),
            K::Offsets,
        ),
        (
            "overlapping",
            file_with(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}}"#,
                &[0; 6],
            ),
            K::Offsets,
        ),
        (
            "offset past buffer",
            file_with(
                r#"{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}"#,
                &[0; 2],
            ),
            K::Truncated,
        ),
        (
            "uncovered bytes",
            file_with(
                r#"{"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}}"#,
                &[0; 4],
            ),
            K::Offsets,
        ),
        (
            "huge shape",
            file_with(
                r#"{"a":{"dtype":"F64","shape":[65536,65536,65536,65536],"data_offsets":[0,8]}}"#,
                &[0; 8],
            ),
            K::Limit,
        ),
        (
            "huge offsets",
            file_with(
                r#"{"a":{"dtype":"U8","shape":[0],"data_offsets":[18446744073709551615,18446744073709551615]}}"#,
                b"",
            ),
            K::Offsets,
        ),
        (
            "bool byte 2",
            file_with(
                r#"{"a":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}"#,
                &[1, 2],
            ),
            K::Value,
        ),
    ];
    for (what, bytes, kind) in cases {
        let e = expect_err(what, read_all(&bytes), kind);
        let shown = e.to_string();
        assert!(
            shown.contains(kind_name(kind)) && shown.contains(&e.message),
            "{what}: {shown}"
        );
    }
}

fn kind_name(k: K) -> &'static str {
    k.name()
}

#[test]
fn element_limit_applies_to_reading() {
    use faber::tensor::Limits;
    let x = t(&[0.0; 16], &[4, 4]);
    let bytes = write(&[("x", &x)], Dtype::U8, &[]).unwrap();
    let old = Limits::set_current(Limits { max_elements: 15 });
    let r = read(&bytes);
    Limits::set_current(old);
    expect_err("over the element limit", r, K::Limit);
    assert!(read(&bytes).is_ok());
}

#[test]
fn writer_rejects_bad_names_and_metadata() {
    let x = t(&[1.0], &[1]);
    expect_err(
        "duplicate",
        write(&[("a", &x), ("a", &x)], Dtype::F32, &[]),
        K::Header,
    );
    expect_err(
        "reserved",
        write(&[("__metadata__", &x)], Dtype::F32, &[]),
        K::Header,
    );
    expect_err(
        "duplicate key",
        write(&[("a", &x)], Dtype::F32, &[("k", "1"), ("k", "2")]),
        K::Header,
    );
    // An empty name and no tensors at all are fine.
    let empty = write(&[], Dtype::F64, &[]).unwrap();
    assert_eq!(empty, b"\x08\0\0\0\0\0\0\0{}      ");
    assert_eq!(
        read(&write(&[("", &x)], Dtype::F64, &[]).unwrap()).unwrap()[0].0,
        ""
    );
    assert_eq!(File::clone(&read_all(&empty).unwrap()).tensors.len(), 0);
    assert_eq!(safetensors::MAX_HEADER_BYTES, 100_000_000);
    for d in Dtype::ALL {
        assert_eq!(Dtype::from_name(d.name()), Some(d));
    }
}

// ------------------------------------------------------- (5) mutations

/// SplitMix64, for seeded test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const JSON_BYTES: &[u8] = b"{}[]\",:0123456789-.eE\\u ";

fn mutate(rng: &mut Rng, mut b: Vec<u8>) -> Vec<u8> {
    let header_end = 8 + u64::from_le_bytes(b[..8].try_into().unwrap()) as usize;
    for _ in 0..1 + rng.below(3) {
        // Mostly inside the 8-byte length and the header, where parsing happens.
        let i = if rng.below(4) == 0 {
            rng.below(b.len())
        } else {
            rng.below(header_end.min(b.len()))
        };
        match rng.below(8) {
            0 => b[i] ^= 1 << rng.below(8),
            1 => b[i] = rng.next() as u8,
            2 => b[i] = JSON_BYTES[rng.below(JSON_BYTES.len())],
            3 if b[i].is_ascii_digit() => b[i] = b'0' + rng.below(10) as u8,
            4 => b.truncate(i),
            5 => b.insert(i, JSON_BYTES[rng.below(JSON_BYTES.len())]),
            6 if i < b.len() => {
                b.remove(i);
            }
            7 if i < 8 => b[i] = [0, 0xff, 1, 0x7f][rng.below(4)],
            _ => b[i] = b[i].wrapping_add(1),
        }
        if b.is_empty() {
            break;
        }
    }
    b
}

#[test]
fn random_mutations_never_panic() {
    let seeds: Vec<Vec<u8>> = vec![
        load("written_by_faber.safetensors"),
        load("floats.safetensors"),
        load("names.safetensors"),
        load("cases/ok_empty_tensors_share_offsets.safetensors"),
        load("cases/ok_escapes_and_surrogates.safetensors"),
    ];
    let mut rng = Rng(0x5afe_7e45);
    let (mut ok, mut kinds) = (0, std::collections::HashMap::new());
    for round in 0..4000 {
        let seed = &seeds[round % seeds.len()];
        let m = mutate(&mut rng, seed.clone());
        match read_all(&m) {
            Ok(f) => {
                ok += 1;
                for (_, _, t) in &f.tensors {
                    assert_eq!(t.data().len(), t.shape().iter().product::<usize>());
                }
            }
            Err(e) => *kinds.entry(e.kind).or_insert(0) += 1,
        }
    }
    // The mutations reach past the JSON syntax into the layout checks.
    assert!(ok > 0 && kinds.len() >= 5, "ok {ok}, kinds {kinds:?}");
}
