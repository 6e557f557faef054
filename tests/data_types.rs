//! The data types outside faber's subset (docs/language.md § 10): each is SEM014
//! naming the type where a type is written, a `genus` of the same name shades it, and
//! § 10 lists every one of them. (`valor`, `copia` and `intervallum` themselves are
//! tested by tests/run/330–332 and tests/run/fail/170–182.)

mod common;

use std::path::PathBuf;

/// The types of Faber that faber leaves out (src/ir/lower/types.rs `OUT_TYPES`, plus
/// the sparse and vector sugar), each with a type written the way the language does.
const OUT: &[(&str, &str)] = &[
    ("instans", "instans"),
    ("cursor", "cursor<numerus>"),
    ("modulus", "modulus"),
    ("vector", "vector<f32, [4]>"),
    ("matrix", "matrix<f32, [2, 2]>"),
    ("regex", "regex"),
    ("sparsa", "sparsa<f32, [2, 3]>"),
    ("promissum", "promissum<numerus>"),
    ("atomic", "atomic<i32>"),
    ("ignotum", "ignotum"),
    ("forma", "forma"),
    ("sf32", "sf32[2, 3]"),
    ("vf32", "vf32[4]"),
];

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-data-types");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.fab"));
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn every_type_outside_the_subset_is_sem014() {
    let mut failures = Vec::new();
    for (name, written) in OUT {
        let src = format!(
            "functio f({written} x) → numerus {{\n    redde 1\n}}\n\nincipit {{\n    nota f(nihil)\n}}\n"
        );
        let path = scratch(name, &src);
        let out = common::faber(&["check", path.to_str().unwrap()]);
        let err = common::text(&out.stderr);
        let want = format!("error[SEM014]: the type `{name}` is outside the subset faber supports");
        let first = err.lines().next().unwrap_or("");
        if out.status.code() != Some(1)
            || first != want
            || !err.contains(":1:11")
            || err.contains("panicked")
        {
            failures.push(format!("{written}: exit {:?}\n{err}", out.status.code()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_genus_of_the_same_name_shades_the_type() {
    let src = "genus instans {\n    numerus t\n}\n\nincipit {\n    fixum instans i ← instans { t = 3 }\n    nota i.t\n}\n";
    let path = scratch("shade", src);
    let out = common::faber(&["run", path.to_str().unwrap()]);
    assert_eq!(
        common::text(&out.stdout),
        "3\n",
        "{}",
        common::text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn language_md_lists_every_type_left_out() {
    let doc = std::fs::read_to_string(format!("{}/docs/language.md", common::ROOT)).unwrap();
    let section = doc
        .split("## 10. Not supported")
        .nth(1)
        .expect("docs/language.md has § 10");
    for (name, _) in OUT {
        let spelled = format!("`{name}");
        assert!(section.contains(&spelled), "§ 10 does not list {name}");
    }
}
