//! `faber grad-check`: every annotated function's companion against finite differences.

mod common;

fn faber(args: &[&str]) -> (String, i32) {
    let out = common::faber(args);
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn companions_pass_the_check() {
    let (out, code) = faber(&[
        "grad-check",
        "tests/ir/companions.fab",
        "--allow-skip",
        "--samples",
        "0",
    ]);
    assert_eq!(code, 0, "{out}");
    for f in [
        "mse", "lin", "activ", "norma", "attentio", "scalaris", "bcast", "causalis", "mlp",
        "mlp_bis", "residua",
    ] {
        assert!(
            out.lines().any(|l| l.starts_with(f) && l.ends_with("yes")),
            "{f} missing:\n{out}"
        );
    }
    assert!(!out.contains(" NO"), "{out}");
    // Integer-id inputs cannot be drawn at random: reported, and with `--allow-skip`
    // not failed.
    assert!(out.contains("ce                   skipped"), "{out}");
    // Without it, a skipped function fails the check.
    let (out, code) = faber(&["grad-check", "tests/ir/companions.fab"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("ce                   skipped"), "{out}");
    assert!(!out.contains(" NO"), "{out}");
}

#[test]
fn a_tolerance_of_zero_fails() {
    let (out, code) = faber(&[
        "grad-check",
        "tests/ir/companions.fab",
        "--function",
        "norma",
        "--tolerance",
        "0",
    ]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(" NO"));
}

#[test]
fn non_differentiable_constructs_are_located() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-gc");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("loop.fab");
    std::fs::write(
        &file,
        "@ radix backward \"g\"\nfunctio f(tf32[2] x) → f32 {\n    nota \"hic\"\n    redde x.summa()\n}\n",
    )
    .unwrap();
    let out = common::faber(&["check", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("error[SEM024]: cannot differentiate output"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A scratch directory for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("grad-check")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The rows of one function's parameter leaf: `function input parameter shape checked …`.
fn row<'o>(out: &'o str, function: &str, input: &str, leaf: &str) -> Option<&'o str> {
    out.lines().find(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() > 4 && w[0] == function && format!("{} {}", w[1], w[2]) == input && w[3] == leaf
    })
}

/// A shape-generic linear least-squares loss called twice by the run (through
/// `gradus:gradient`, i.e. through its companion), a declared-shape function called
/// directly, one never called; the first program argument sets the batch size, the
/// second names a file written when the run reaches its end.
const LINEAR: &str = r#"importa ex "gradus:gradient" privata gradient

@ radix backward "grad_damnum"
functio damnum(tf32 w, tf32 x, tf32 y) → f32 {
    fixum tf32 r ← (x · w).subtrahe(y)
    redde (r ⊙ r).media()
}

@ radix backward "grad_quadrata"
functio quadrata(tf32[3] v) → f32 {
    redde (v ⊙ v).summa()
}

@ radix backward "grad_exponens"
functio exponens(tf32[2] v) → f32 {
    redde v.exp().summa()
}

incipit {
    fixum tf32[] z ← vacua
    fixum lista<textus> a ← hospes.argumenta()
    varia numerus n ← 4
    si a.longitudo() ≥ 1 ergo n ← a[0] ↦ numerus ⇥ 4
    fixum tf32 w ← z.normalis(1, [3, 2], 0.0, 1.0)
    itera ab 0 ‥ 2 fixum k {
        fixum tf32 x ← z.normalis(2 + k, [n + k, 3], 0.0, 1.0)
        fixum tf32 y ← z.normalis(4 + k, [n + k, 2], 0.0, 1.0)
        fixum tf32 g ← gradient.gradientes(grad_damnum, w, x, y)
        nota g.summa()
    }
    nota quadrata(z.normalis(6, [3], 0.0, 1.0))
    si a.longitudo() ≥ 2 ergo hospes.scribe_textum(a[1], "finis")
}
"#;

#[test]
fn shape_generic_losses_are_checked_at_the_calls_of_the_run() {
    let dir = scratch("linear");
    let file = dir.join("linear.fab");
    std::fs::write(&file, LINEAR).unwrap();
    let end = dir.join("end.txt");
    let (out, code) = faber(&[
        "grad-check",
        file.to_str().unwrap(),
        "--",
        "5",
        end.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    // Shapes come from the run, whose arguments came after `--` (n = 5).
    for (leaf, shape, checked) in [
        ("w", "[3, 2]", "6/6"),
        ("x", "[5, 3]", "15/15"),
        ("y", "[5, 2]", "10/10"),
    ] {
        let r = row(&out, "damnum", "call 1", leaf).unwrap_or_else(|| panic!("{leaf}:\n{out}"));
        assert!(
            r.contains(shape) && r.contains(checked) && r.ends_with("yes"),
            "{r}"
        );
    }
    // A declared shape the run calls is checked at its call, one it never calls at
    // random inputs.
    assert!(
        row(&out, "quadrata", "call 1", "v").is_some_and(|r| r.ends_with("yes")),
        "{out}"
    );
    let r = out.lines().find(|l| l.starts_with("exponens")).unwrap();
    assert!(
        r.contains("random") && r.contains("[2]") && r.ends_with("yes"),
        "{r}"
    );
    assert!(
        out.contains("3 function(s) passed, 0 failed, 0 could not be checked"),
        "{out}"
    );
    // exponens is never called, so the capture never completes: the run went on to its end.
    assert!(end.exists());
}

#[test]
fn the_run_ends_once_every_function_has_its_calls() {
    let dir = scratch("linear-early");
    let file = dir.join("linear.fab");
    std::fs::write(&file, LINEAR).unwrap();
    let end = dir.join("end.txt");
    let f = file.to_str().unwrap();
    let (out, code) = faber(&[
        "grad-check",
        f,
        "--function",
        "damnum",
        "--calls",
        "2",
        "--samples",
        "2",
        "--",
        "5",
        end.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    // Both calls, each with its own shapes, 2 sampled elements per tensor.
    let r = row(&out, "damnum", "call 1", "x").unwrap();
    assert!(r.contains("[5, 3]") && r.contains("2/15"), "{r}");
    let r = row(&out, "damnum", "call 2", "x").unwrap();
    assert!(r.contains("[6, 3]") && r.contains("2/18"), "{r}");
    assert!(!out.contains("quadrata"), "{out}");
    assert!(
        !end.exists(),
        "the run should have been ended at the second call"
    );
    // `--samples 0` checks every element.
    let (out, code) = faber(&["grad-check", f, "--function", "damnum", "--samples", "0"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        row(&out, "damnum", "call 1", "x")
            .unwrap()
            .contains("12/12"),
        "{out}"
    );
}

/// `relu` has a kink at 0, where the central difference is (h − 0)/2h = 1/2 while the
/// companion's derivative is 0; `otiosa` is shape-generic and never called.
const KINK: &str = r#"@ radix backward "grad_plica"
functio plica(tf32 x) → f32 {
    redde x.relu().summa()
}

@ radix backward "grad_otiosa"
functio otiosa(tf32 v) → f32 {
    redde v.summa()
}

incipit {
    fixum tf32[] z ← vacua
    nota plica(z.crea(0.0, [2, 2]))
}
"#;

#[test]
fn a_disagreement_at_the_captured_call_fails() {
    let dir = scratch("kink");
    let file = dir.join("kink.fab");
    std::fs::write(&file, KINK).unwrap();
    let (out, code) = faber(&["grad-check", file.to_str().unwrap(), "--function", "plica"]);
    assert_eq!(code, 1, "{out}");
    let r = row(&out, "plica", "call 1", "x").unwrap();
    assert!(r.contains("5.000e-1") && r.ends_with("NO"), "{r}");
}

#[test]
fn a_function_that_cannot_be_checked_fails_unless_skips_are_allowed() {
    let dir = scratch("skip");
    let file = dir.join("kink.fab");
    std::fs::write(&file, KINK).unwrap();
    let f = file.to_str().unwrap();
    let (out, code) = faber(&["grad-check", f, "--function", "otiosa"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("otiosa               skipped: the run never calls it, and parameter `v` has no fully declared shape"),
        "{out}"
    );
    let (out, code) = faber(&["grad-check", f, "--function", "otiosa", "--allow-skip"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("0 function(s) passed, 0 failed, 1 could not be checked"),
        "{out}"
    );
    // A name that has no `@ radix backward` is not silently nothing to do.
    let (out, code) = faber(&["grad-check", f, "--function", "nulla"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nulla"), "{out}");
    // Without a run (`--random`), shape-generic functions cannot be checked.
    let (out, code) = faber(&["grad-check", f, "--random"]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("plica                skipped: the program was not run"),
        "{out}"
    );
}

#[test]
fn a_run_that_fails_before_the_call_leaves_the_function_unchecked() {
    let dir = scratch("fails");
    let file = dir.join("fails.fab");
    std::fs::write(
        &file,
        KINK.replace("    nota plica", "    mori \"ante\"\n    nota plica"),
    )
    .unwrap();
    let out = common::faber(&["grad-check", file.to_str().unwrap(), "--function", "plica"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ante"), "{stderr}");
    assert!(
        stdout.contains("plica                skipped: the run never calls it"),
        "{stdout}"
    );
}

/// Every tensor field of `gradus:transformer`'s `Stratum` (gradus-fab/src/transformer.fab).
const STRATUM: [&str; 16] = [
    "ln1_s", "ln1_o", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln2_s", "ln2_o", "wf", "bf",
    "wp", "bp",
];

#[test]
fn the_gpt_loss_is_checked_over_its_whole_parameter_record() {
    let (out, code) = faber(&[
        "grad-check",
        "examples/gpt-shakespeare",
        "--",
        "--tiny",
        "--steps",
        "1",
    ]);
    assert_eq!(code, 0, "{out}");
    // Every tensor of the record: embeddings, both blocks, final norm, head (the
    // `--tiny` model: 2 layers, width 16, block 16; 69 characters in the data).
    let mut leaves = vec![
        ("p.wte".to_string(), "[69, 16]"),
        ("p.wpe".to_string(), "[16, 16]"),
        ("p.lnf_s".to_string(), "[16]"),
        ("p.lnf_o".to_string(), "[16]"),
        ("p.wh".to_string(), "[16, 69]"),
    ];
    for layer in 0..2 {
        for f in STRATUM {
            let shape = match f {
                "wq" | "wk" | "wv" | "wo" => "[16, 16]",
                "wf" => "[16, 64]",
                "wp" => "[64, 16]",
                "bf" => "[64]",
                _ => "[16]",
            };
            leaves.push((format!("p.strata[{layer}].{f}"), shape));
        }
    }
    for (leaf, shape) in &leaves {
        let r = row(&out, "damnum", "call 1", leaf).unwrap_or_else(|| panic!("{leaf}:\n{out}"));
        assert!(
            r.contains(shape) && r.contains(" 16/") && r.ends_with("yes"),
            "{r}"
        );
    }
    let checked = out.lines().filter(|l| l.ends_with("yes")).count();
    assert_eq!(checked, leaves.len(), "{out}");
    // The token ids and targets are indices, not differentiated.
    for p in ["ids", "scopus"] {
        assert!(
            row(&out, "damnum", "call 1", p).is_some_and(|r| r.contains("not differentiated")),
            "{out}"
        );
    }
}

#[test]
fn only_parameters_read_solely_as_indices_are_left_out() {
    // `ids` picks rows of `w` (an index) and is also summed (a real-valued use): it must
    // then be differenced, so the check reports the failing perturbation of an id
    // instead of hiding the parameter.
    let dir = scratch("indices");
    let file = dir.join("indices.fab");
    std::fs::write(
        &file,
        r#"@ radix backward "grad_solum"
functio solum(tf32 w, tf32 ids) → f32 {
    redde w.collige(ids).summa()
}

@ radix backward "grad_mixta"
functio mixta(tf32 w, tf32 ids) → f32 {
    redde w.collige(ids).summa() + ids.summa()
}

incipit {
    fixum tf32[] z ← vacua
    fixum tf32 w ← z.normalis(1, [4, 3], 0.0, 1.0)
    fixum tf32 ids ← z.crea(1.0, [2])
    nota solum(w, ids)
    nota mixta(w, ids)
}
"#,
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let (out, code) = faber(&["grad-check", f, "--function", "solum"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        row(&out, "solum", "call 1", "w").is_some_and(|r| r.ends_with("yes")),
        "{out}"
    );
    assert!(
        row(&out, "solum", "call 1", "ids").is_some_and(|r| r.contains("not differentiated")),
        "{out}"
    );
    let (out, code) = faber(&["grad-check", f, "--function", "mixta"]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("not differentiated"), "{out}");
    assert!(
        out.contains("mixta                call 1   error: the check fails"),
        "{out}"
    );
}
