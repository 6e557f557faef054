//! `faber grad-check`: every annotated function's companion against finite differences.

use std::process::Command;

fn faber(args: &[&str]) -> (String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_faber"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .expect("the faber binary runs");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn companions_pass_the_check() {
    let (out, code) = faber(&["grad-check", "tests/ir/companions.fab"]);
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
    // Integer-id inputs cannot be drawn at random: reported, not failed.
    assert!(out.contains("ce                   skipped"), "{out}");
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
    let dir = std::env::temp_dir().join(format!("faber-gc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("loop.fab");
    std::fs::write(
        &file,
        "@ radix backward \"g\"\nfunctio f(tf32[2] x) → f32 {\n    nota \"hic\"\n    redde x.summa()\n}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_faber"))
        .args(["check", file.to_str().unwrap()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        err.contains("error[SEM024]: cannot differentiate output"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
