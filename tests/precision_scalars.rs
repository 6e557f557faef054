//! Scalars declared `f32` under `--precision f32` (docs/precision.md § Scalars): every
//! store into an `f32` local, parameter or result is rounded once to f32; `fractus`
//! stays f64; `--precision f64` changes nothing; companions round the places their
//! primal rounds; `faber grad-check` keeps scalars f64; record fields declared `f32`
//! are rounded at construction and at each field store. Every expected value is
//! computed here with Rust's own f32 arithmetic, independently of faber.

mod common;

use common::Faber;
use std::path::PathBuf;

fn tmp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("faber-scalars-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The lines faber prints for `src` under `--precision <precision>` (`None`: no flag).
fn run(tag: &str, precision: Option<&str>, src: &str) -> Vec<String> {
    let dir = tmp(tag);
    let file = dir.join("prog.fab");
    std::fs::write(&file, src).unwrap();
    let mut cmd = Faber::new().arg("run");
    if let Some(p) = precision {
        cmd = cmd.args(["--precision", p]);
    }
    let out = cmd.arg(&file).current_dir(&dir).output();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{err}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// How faber prints a `fractus` (all its digits; `.0` on an integral value).
fn show(x: f64) -> String {
    format!("{x:?}")
}

/// `x` rounded once to f32, as an f64.
fn r(x: f64) -> f64 {
    x as f32 as f64
}

const STORES: &str = r#"
functio plus_decima(f32 x) → f32 {
    redde x + 0.1
}

functio lata(fractus x) → fractus {
    redde x + 0.1
}

functio redit(fractus x) → f32 {
    redde x
}

incipit {
    fixum f32 a ← 0.1
    nota a
    varia f32 b ← 16777216.0
    b ← b + 1.0
    nota b
    fixum fractus c ← 0.1
    nota c
    nota plus_decima(0.3)
    nota lata(0.3)
    nota redit(0.7)
    fixum f16 h ← 0.2
    nota h
    fixum f32 tertia ← 1.0 / 3.0
    fixum fractus lata_tertia ← tertia
    nota lata_tertia
}
"#;

#[test]
fn stores_into_f32_places_round_once_under_f32_and_nothing_changes_under_f64() {
    let f32_lines = run("stores32", Some("f32"), STORES);
    let want = [
        show(0.1f32 as f64),
        // 2^24 + 1 is not an f32: it rounds (to even) back to 2^24.
        show(16777216f32 as f64),
        show(0.1),
        // The parameter is rounded on entry, the sum (f64) once at the return.
        show(r(r(0.3) + 0.1)),
        show(0.3 + 0.1),
        show(r(0.7)),
        // f16 places hold f32 values.
        show(0.2f32 as f64),
        // A single ÷ of f32 operands stored at once is the f32 division itself.
        show((1.0f32 / 3.0f32) as f64),
    ];
    assert_eq!(f32_lines, want);
    assert_eq!(show(0.1f32 as f64), "0.10000000149011612");
    assert_eq!(16777216f32 + 1.0f32, 16777216f32);
    let f64_want = [
        show(0.1),
        show(16777217.0),
        show(0.1),
        show(0.3 + 0.1),
        show(0.3 + 0.1),
        show(0.7),
        show(0.2),
        show(1.0 / 3.0),
    ];
    assert_eq!(run("stores64", Some("f64"), STORES), f64_want);
    // No flag, no manifest: f64.
    assert_eq!(run("stores", None, STORES), f64_want);
}

const LOOP: &str = r#"
incipit {
    fixum f32 decima ← 0.1
    varia f32 s ← 0.0
    varia f32 t ← 0.0
    varia fractus u ← 0.0
    itera ab 0 ‥ 1000 fixum k {
        s ← s + decima
        t ← t + 0.1
        u ← u + 0.1
    }
    nota s
    nota t
    nota u
}
"#;

#[test]
fn a_thousand_f32_accumulations_equal_the_rust_f32_loop() {
    let (mut s, mut t, mut u) = (0.0f32, 0.0f32, 0.0f64);
    for _ in 0..1000 {
        // f32 + f32 computed in f64 and rounded once is the f32 addition.
        s += 0.1f32;
        // The literal is an f64 (as `0.1` without `f` in C): the f64 sum, rounded once.
        t = (t as f64 + 0.1) as f32;
        u += 0.1;
    }
    let lines = run("loop32", Some("f32"), LOOP);
    assert_eq!(lines, [show(s as f64), show(t as f64), show(u)]);
    // The f32 sums have drifted from the f64 one where f32 rounding must show.
    assert_ne!(lines[0], lines[2]);
    let lines = run("loop64", Some("f64"), LOOP);
    assert_eq!(lines, [show(u), show(u), show(u)]);
}

const COMPANION: &str = r#"
functio quadratum(f32 x) → f32 {
    redde x · x
}

@ radix backward "grad_f"
functio f(f32 x) → f32 {
    fixum f32 y ← x · 3.0 + 0.1
    fixum f32 z ← quadratum(y)
    redde z · x
}

functio residuum() → vacuum {
    tacet
}

incipit {
    nota f(0.7)
    fixum [gx] ← grad_f(0.7, residuum(), 1.0)
    nota gx
}
"#;

#[test]
fn a_companion_recomputes_the_f32_primal_values() {
    // The primal's stores, each rounded once: the parameter, y, the callee's parameter
    // and result, z, and f's result.
    let x = r(0.7);
    let y = r(x * 3.0 + 0.1);
    let z = r(r(y * y));
    let f = r(z * x);
    // The companion's gradient from those forward values (dz/dy = 2y, dy/dx = 3).
    let g = z + (x * y + x * y) * 3.0;
    assert_eq!(
        run("companion32", Some("f32"), COMPANION),
        [show(f), show(g)]
    );
    // Under f64 nothing is rounded.
    let (x, y) = (0.7f64, 0.7 * 3.0 + 0.1);
    let z = y * y;
    let want = [show(z * x), show(z + (x * y + x * y) * 3.0)];
    assert_eq!(run("companion64", Some("f64"), COMPANION), want);
}

#[test]
fn grad_check_keeps_scalars_f64_under_f32() {
    let dir = tmp("gradcheck");
    let file = dir.join("prog.fab");
    std::fs::write(&file, COMPANION).unwrap();
    let out = Faber::new()
        .args(["grad-check", "--precision", "f32"])
        .arg(&file)
        .current_dir(&dir)
        .output();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(0), "{text}");
    let row = text
        .lines()
        .find(|l| l.starts_with("f "))
        .unwrap_or_else(|| panic!("no row for f: {text}"));
    // Finite differences of f64 evaluations: the error is of f64 size. With the
    // perturbed x ± h rounded to f32 (spacing 6e-8 near 0.7) the check fails, at
    // 7.5e-3 relative (measured with the rounding switched on).
    let rel: f64 = row.split_whitespace().nth(7).unwrap().parse().unwrap();
    assert!(rel < 1e-6, "{row}");
    assert!(row.trim_end().ends_with("yes"), "{row}");
}

/// `faber ir` shows no rounding: it is inserted at run time, under f32 only.
#[test]
fn faber_ir_is_the_same_under_every_precision() {
    let dir = tmp("ir");
    let file = dir.join("prog.fab");
    for src in [STORES, FIELDS] {
        std::fs::write(&file, src).unwrap();
        let out = Faber::new().arg("ir").arg(&file).current_dir(&dir).output();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert_eq!(out.status.code(), Some(0));
        assert!(!text.contains("narrow"), "{text}");
    }
}

/// A constant stored into an `f32` local and an f64 argument of an `f32` parameter of
/// an inlined callee: the companion keeps (and rounds) both stores.
const COMPANION_MIXED: &str = r#"
functio quadratum(f32 x) → f32 {
    redde x · x
}

@ radix backward "grad_h"
functio h(fractus x) → fractus {
    fixum f32 c ← 0.1
    fixum fractus w ← x · 3.0
    fixum f32 q ← quadratum(w + c)
    redde q · x + w
}

functio residuum() → vacuum {
    tacet
}

incipit {
    fixum [gx] ← grad_h(0.7, residuum(), 1.0)
    nota gx
}
"#;

#[test]
fn a_companion_rounds_constants_and_callee_arguments_as_its_primal() {
    let grad = |round: fn(f64) -> f64| {
        let x = 0.7f64;
        let c = round(0.1);
        let w = x * 3.0;
        let p = round(w + c);
        let q = round(round(p * p));
        // dh/dx = q + x·dq/dx + 3, dq/dx = 2p·3.
        q + x * (2.0 * p * 3.0) + 3.0
    };
    let close = |got: &str, want: f64| {
        let got: f64 = got.parse().unwrap();
        assert!(
            (got - want).abs() <= 1e-14 * want.abs(),
            "{got} against {want}"
        );
    };
    let (g32, g64) = (grad(r), grad(|x| x));
    // The rounding shows far above the tolerance.
    assert!((g32 - g64).abs() > 1e-9 * g64.abs());
    close(&run("mixed32", Some("f32"), COMPANION_MIXED)[0], g32);
    close(&run("mixed64", Some("f64"), COMPANION_MIXED)[0], g64);
}

/// Record fields declared `f32`/`f16`: construction (given values and defaults), a
/// field store, a nested store, a store through `ego` and through a list element; a
/// `fractus` field stays f64.
const FIELDS: &str = r#"
genus Par {
    f32 a
    fractus b
    f32 c = 0.2
    f16 h = 0.3

    functio pone(fractus v) → vacuum {
        ego.a ← v
    }
}

genus Nidus {
    Par p
    numerus n
}

incipit {
    varia Par x ← Par { a = 0.1, b = 0.1 }
    nota x.a
    nota x.b
    nota x.c
    nota x.h
    x.a ← 16777217.0
    nota x.a
    x.b ← 16777217.0
    nota x.b
    varia Nidus y ← Nidus { p = x, n = 1 }
    y.p.c ← 0.7
    nota y.p.c
    y.p.a ← y.p.a + 1.0
    nota y.p.a
    x.pone(0.1)
    nota x.a
    varia lista<Par> l ← [Par { a = 0.5, b = 0.5 }]
    l[0].a ← 0.2
    nota l[0].a
}
"#;

#[test]
fn stores_into_f32_fields_round_once_under_f32_and_nothing_changes_under_f64() {
    let want = [
        show(0.1f32 as f64),
        show(0.1),
        // Defaults are stored at construction too.
        show(0.2f32 as f64),
        show(0.3f32 as f64),
        // 2^24 + 1 rounds (to even) to 2^24 in an f32 field, stays in a fractus one.
        show(16777216f32 as f64),
        show(16777217.0),
        // A nested store.
        show(0.7f32 as f64),
        // 2^24 + 1.0 computed in f64, rounded once: the f32 addition.
        show((16777216f32 + 1.0f32) as f64),
        // A store through `ego` in a method, and through a list element.
        show(0.1f32 as f64),
        show(0.2f32 as f64),
    ];
    assert_eq!(run("fields32", Some("f32"), FIELDS), want);
    assert_eq!(show(0.1f32 as f64), "0.10000000149011612");
    let f64_want = [
        show(0.1),
        show(0.1),
        show(0.2),
        show(0.3),
        show(16777217.0),
        show(16777217.0),
        show(0.7),
        show(16777218.0),
        show(0.1),
        show(0.2),
    ];
    assert_eq!(run("fields64", Some("f64"), FIELDS), f64_want);
    assert_eq!(run("fields", None, FIELDS), f64_want);
}

/// A companion builds the same records as its primal (an f32 field given a value
/// computed from the input, an f32 default, and a record built by an inlined callee),
/// while the cotangents it stores into records of the same genus stay f64.
const COMPANION_FIELDS: &str = r#"
genus Par {
    f32 a
    fractus b
    f32 c = 0.1
}

functio struere(fractus x) → Par {
    redde Par { a = x · x, b = x }
}

@ radix backward "grad_f"
functio f(fractus x) → fractus {
    fixum Par p ← Par { a = x · 3.0 + 0.1, b = x }
    fixum Par q ← struere(p.a + p.b)
    redde p.a · q.a + q.b · p.c
}

functio residuum() → vacuum {
    tacet
}

incipit {
    nota f(0.7)
    fixum [gx] ← grad_f(0.7, residuum(), 1.0)
    nota gx
}
"#;

#[test]
fn a_companion_recomputes_the_f32_fields_of_its_primal() {
    let forward = |round: fn(f64) -> f64| {
        let x = 0.7f64;
        let (a, b, c) = (round(x * 3.0 + 0.1), x, round(0.1));
        let s = a + b;
        let (qa, qb) = (round(s * s), s);
        let f = a * qa + qb * c;
        // df/da = qa + d/ds, d/ds = a·2s + c (through q.a and q.b); da/dx = 3, db/dx = 1.
        let ds = c + a * s + a * s;
        // The cotangent of field `a`, qa + ds, is f64: rounded, the gradient would be
        // the third value.
        (f, (qa + ds) * 3.0 + ds, r(qa + ds) * 3.0 + ds)
    };
    let (f32_f, f32_g, rounded_ct) = forward(r);
    assert_ne!(f32_g, rounded_ct);
    assert_eq!(
        run("fieldcomp32", Some("f32"), COMPANION_FIELDS),
        [show(f32_f), show(f32_g)]
    );
    let (f64_f, f64_g, _) = forward(|x| x);
    assert_ne!(f32_g, f64_g);
    assert_eq!(
        run("fieldcomp64", Some("f64"), COMPANION_FIELDS),
        [show(f64_f), show(f64_g)]
    );
}
