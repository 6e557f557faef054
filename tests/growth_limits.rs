//! Every way a program can grow memory ends in RUN012, never in an allocator abort or
//! the kernel's OOM killer (docs/robustness.md § Limits); numeric flags with
//! meaningless values are usage errors.
//!
//! Each program runs in a child `faber` whose address space is capped (`ulimit -v`),
//! with small limits set through the flags, so a missing limit shows as an abort at
//! the cap (or an exit without RUN012) within seconds instead of exhausting the
//! machine, and no test allocates more than the cap.

mod common;

use common::Faber;
use std::path::PathBuf;

/// Address-space cap of every child: room for the binary, its 256 MiB worker stack
/// and the allocator's reservations, far below what an unbounded program would take.
const CAP_MIB: u64 = 2048;

/// A memory limit of ~30 MiB (0.03 GiB), far below the cap.
const SMALL_MEMORY: &str = "0.03";

struct Outcome {
    code: Option<i32>,
    stderr: String,
}

/// Writes `source` to a fresh file and runs `faber ARGS… FILE` (the file replaces the
/// `{}` in `args`) with its address space capped.
fn faber_capped(name: &str, source: &str, args: &[&str]) -> Outcome {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-growth");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file: PathBuf = dir.join(format!("{name}.fab"));
    std::fs::write(&file, source).expect("write program");
    let file = file.to_string_lossy().into_owned();
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            if *a == "{}" {
                file.clone()
            } else {
                a.to_string()
            }
        })
        .collect();
    let out = Faber::new()
        .args(&args)
        .env_remove("FABER_THREADS")
        .memory_cap_mib(CAP_MIB)
        .output();
    Outcome {
        code: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The run ended with exit code 1 and a RUN012 diagnostic (not an abort, not a panic).
fn assert_limit(o: &Outcome) {
    assert!(!o.stderr.contains("memory allocation of"), "{}", o.stderr);
    assert!(!o.stderr.contains("panicked"), "{}", o.stderr);
    assert_eq!(o.code, Some(1), "{}", o.stderr);
    assert!(o.stderr.contains("error[RUN012]"), "{}", o.stderr);
}

const TEMPLATE_DOUBLING: &str = r#"
incipit {
    varia textus s ← "ab"
    dum verum {
        s ← "§§"(s, s)
    }
}
"#;

#[test]
fn template_growth_stops_at_the_text_limit() {
    // `s + s` was already checked; a template building the same text was not.
    let o = faber_capped(
        "template_text",
        TEMPLATE_DOUBLING,
        &["run", "--max-text-bytes", "1048576", "{}"],
    );
    assert_limit(&o);
    assert!(
        o.stderr.contains("longer than 1048576 bytes"),
        "{}",
        o.stderr
    );
}

#[test]
fn template_growth_stops_at_the_memory_limit() {
    let o = faber_capped(
        "template_memory",
        TEMPLATE_DOUBLING,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
    assert!(o.stderr.contains("--max-memory-gib"), "{}", o.stderr);
}

#[test]
fn a_display_form_of_a_shared_tree_stops_at_the_text_limit() {
    // 40 levels of a node holding the previous node twice share storage (a few
    // hundred bytes), but the display form has 2^40 leaves: in a template and in
    // `nota` alike.
    for shown in ["nota(\"§\"(n))", "nota(n)"] {
        let src = format!(
            r#"
genus Nodus {{
    lista<Nodus> liberi
}}

incipit {{
    varia Nodus n ← Nodus {{ liberi = [] }}
    itera ab 0 ante 40 fixum i {{
        n ← Nodus {{ liberi = [n, n] }}
    }}
    {shown}
}}
"#
        );
        let o = faber_capped(
            "shared_display",
            &src,
            &["run", "--max-text-bytes", "1048576", "{}"],
        );
        assert_limit(&o);
    }
}

#[test]
fn a_list_of_lists_stops_at_the_memory_limit() {
    // Each item is a fresh list of 1000 numbers; the outer list stays far below the
    // item limit while its bytes grow without bound.
    let src = r#"
incipit {
    varia lista<lista<numerus>> xs ← []
    dum verum {
        varia lista<numerus> l ← []
        itera ab 0 ante 1000 fixum i {
            l.appende(i)
        }
        xs.appende(l)
    }
}
"#;
    let o = faber_capped(
        "list_of_lists",
        src,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
}

#[test]
fn a_map_filled_by_pone_stops_at_the_memory_limit() {
    let src = r#"
incipit {
    varia tabula<textus, numerus> m ← {}
    varia numerus i ← 0
    dum verum {
        m.pone("clavis §"(i), i)
        i ← i + 1
    }
}
"#;
    let o = faber_capped(
        "map_pone",
        src,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
}

#[test]
fn a_map_filled_by_index_assignment_stops_at_the_memory_limit() {
    let src = r#"
incipit {
    varia tabula<textus, numerus> m ← {}
    varia numerus i ← 0
    dum verum {
        m["clavis §"(i)] ← i
        i ← i + 1
    }
}
"#;
    let o = faber_capped(
        "map_index",
        src,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
}

#[test]
fn a_range_list_is_refused_before_it_is_built() {
    // 99 million numbers (1.6 GB) are below the range limit (10^8) but beyond the
    // memory limit and the cap.
    let src = r#"
incipit {
    fixum lista<numerus> r ← 0 ‥ 99000000
    nota(r.longitudo())
}
"#;
    let o = faber_capped(
        "range",
        src,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
    assert!(o.stderr.contains("allocating"), "{}", o.stderr);
}

#[test]
fn a_tensor_within_the_tensor_limit_is_refused_beyond_the_memory_limit() {
    // 4000·4000 f64 = 128 MB: under the default 4 GiB tensor limit, over 30 MiB.
    let src = r#"
incipit {
    fixum tf32[] semen ← vacua
    fixum tf32 t ← semen.crea(1.0, [4000, 4000])
    nota(t.summa())
}
"#;
    let o = faber_capped(
        "tensor",
        src,
        &["--max-memory-gib", SMALL_MEMORY, "run", "{}"],
    );
    assert_limit(&o);
}

const HUGE_PARAMETER: &str = r#"
@ radix backward "g"
functio f(tf32[100000, 100000] w) → f32 {
    redde (w ⊙ w).summa()
}
"#;

#[test]
fn grad_check_honours_the_tensor_limit_without_allocating() {
    // 10^10 elements (80 GB) asked for under a 2 GiB address-space cap: the only way
    // to pass is to refuse before drawing the elements.
    let o = faber_capped("gradcheck_huge", HUGE_PARAMETER, &["grad-check", "{}"]);
    assert_limit(&o);
    assert!(o.stderr.contains("parameter `w`"), "{}", o.stderr);
    assert!(o.stderr.contains("10000000000 elements"), "{}", o.stderr);
}

#[test]
fn grad_check_honours_a_lower_tensor_limit() {
    let src = r#"
@ radix backward "g"
functio f(tf32[100, 100] w) → f32 {
    redde (w ⊙ w).summa()
}
"#;
    // 10^4 elements; 0.00001 GiB is 1342 f64 elements.
    let o = faber_capped(
        "gradcheck_small_limit",
        src,
        &["--max-tensor-gib", "0.00001", "grad-check", "{}"],
    );
    assert_limit(&o);
    // The same program within the default limit checks cleanly.
    let ok = faber_capped("gradcheck_small_ok", src, &["grad-check", "{}"]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
}

#[test]
fn grad_check_honours_the_memory_limit() {
    // 3000·3000 f64 = 72 MB of random inputs: over a 30 MiB memory limit.
    let src = r#"
@ radix backward "g"
functio f(tf32[3000, 3000] w) → f32 {
    redde (w ⊙ w).summa()
}
"#;
    let o = faber_capped(
        "gradcheck_memory",
        src,
        &[
            "--max-memory-gib",
            SMALL_MEMORY,
            "grad-check",
            "--random",
            "{}",
        ],
    );
    assert_limit(&o);
}

/// `faber ARGS…` is a usage error (exit 2) that names `flag`.
fn assert_rejected(args: &[&str], flag: &str) {
    let o = faber_capped("flags", "incipit { nota(1) }\n", args);
    assert_eq!(o.code, Some(2), "{args:?}: {}", o.stderr);
    assert!(
        o.stderr.contains(&format!("'{flag} <")),
        "{args:?}: {}",
        o.stderr
    );
}

#[test]
fn global_numeric_flags_refuse_meaningless_values() {
    for gib in ["NaN", "inf", "-inf", "-1", "0", "lots"] {
        assert_rejected(&["--max-tensor-gib", gib, "run", "{}"], "--max-tensor-gib");
        assert_rejected(&["--max-memory-gib", gib, "run", "{}"], "--max-memory-gib");
    }
    for n in ["0", "-2", "1.5", "NaN"] {
        assert_rejected(&["--threads", n, "run", "{}"], "--threads");
    }
}

#[test]
fn faber_threads_from_the_environment_is_validated_too() {
    let out = Faber::new()
        .args(["explain", "RUN012"])
        .env("FABER_THREADS", "0")
        .output();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--threads"));
}

#[test]
fn run_numeric_flags_refuse_meaningless_values() {
    for n in ["0", "-1", "NaN"] {
        assert_rejected(&["run", "--max-steps", n, "{}"], "--max-steps");
        assert_rejected(&["run", "--max-text-bytes", n, "{}"], "--max-text-bytes");
        assert_rejected(&["run", "--max-list-items", n, "{}"], "--max-list-items");
    }
}

#[test]
fn grad_check_numeric_flags_refuse_meaningless_values() {
    for x in ["NaN", "inf", "-1e-3"] {
        assert_rejected(&["grad-check", "--tolerance", x, "{}"], "--tolerance");
    }
    for x in ["NaN", "-inf", "0", "-1e-6"] {
        assert_rejected(&["grad-check", "--step", x, "{}"], "--step");
    }
    for n in ["0", "-1"] {
        assert_rejected(&["grad-check", "--calls", n, "{}"], "--calls");
    }
    assert_rejected(&["grad-check", "--samples", "-1", "{}"], "--samples");
}

#[test]
fn meaningful_edge_values_are_accepted() {
    // `--samples 0` (every element) means something, and so does a small but
    // positive limit for a program that stays under it.
    let src = r#"
@ radix backward "g"
functio f(fractus x) → fractus {
    redde x * 2.0
}
"#;
    let o = faber_capped(
        "edges",
        src,
        &[
            "--threads",
            "1",
            "grad-check",
            "--tolerance",
            "0.001",
            "--samples",
            "0",
            "{}",
        ],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
    let o = faber_capped(
        "edges_run",
        "incipit { nota(\"salve\") }\n",
        &[
            "--max-memory-gib",
            SMALL_MEMORY,
            "run",
            "--max-steps",
            "10",
            "{}",
        ],
    );
    assert_eq!(o.code, Some(0), "{}", o.stderr);
}
