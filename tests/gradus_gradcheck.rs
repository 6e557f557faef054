//! `faber grad-check` on every tests/gradcheck/*.fab: each differentiable shape-generic
//! gradus function (math, nn, loss, train, attention, transformer, …), called at declared
//! shapes, has a generated companion that agrees with central finite differences.

mod common;

use common::Faber;

fn grad_check(file: &str) -> Result<(), String> {
    let out = Faber::new()
        // Every element: these declared shapes are small (the default samples 16).
        .args(["grad-check", file, "--samples", "0"])
        .current_dir(common::ROOT)
        .output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let checked = stdout.lines().filter(|l| l.ends_with(" yes")).count();
    if out.status.code() != Some(0)
        || stdout.contains(" NO")
        || stdout.contains("skipped")
        || stdout.contains(" error")
        || checked == 0
    {
        return Err(format!(
            "{file}: exit {:?}\n{stdout}{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

#[test]
fn every_gradus_gradcheck_program_passes() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/gradcheck");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".fab"))
        .collect();
    files.sort();
    for required in [
        "gradus_attention.fab",
        "gradus_math.fab",
        "gradus_nn_loss.fab",
    ] {
        assert!(files.iter().any(|f| f == required), "{required} missing");
    }
    let failures: Vec<String> = files
        .iter()
        .filter_map(|f| grad_check(&format!("tests/gradcheck/{f}")).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
