//! `faber explain`: every catalogue code has an entry under `docs/explain/`, every
//! entry's example really reports its code through the built binary, and every
//! entry's fix really makes the diagnostic go away. See docs/diagnostics.md
//! ("Explanations") for the entry format.

mod common;

use std::collections::BTreeSet;

use common::entries::{self, Entry};
use faber::diag::codes;

/// The catalogue constant (`SEM_UNKNOWN_NAME`) that `codes.rs` gives `id`.
fn constant_of(id: &str) -> String {
    let catalogue = std::fs::read_to_string("src/diag/codes.rs").unwrap();
    let line = catalogue
        .lines()
        .find(|l| l.contains(&format!("= \"{id}\"")))
        .unwrap_or_else(|| panic!("{id} is not in codes.rs"));
    line.split('=').next().unwrap().trim().to_string()
}

/// Whether any source file outside the catalogue refers to `constant`.
fn constant_is_used(constant: &str) -> bool {
    fn walk(dir: &std::path::Path, constant: &str) -> bool {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                if walk(&p, constant) {
                    return true;
                }
            } else if p.extension().is_some_and(|x| x == "rs" || x == "lalrpop")
                && !p.ends_with("diag/codes.rs")
            {
                let text = std::fs::read_to_string(&p).unwrap();
                let found = text.match_indices(constant).any(|(i, _)| {
                    let after = text[i + constant.len()..].chars().next();
                    let before = text[..i].chars().next_back();
                    !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                        && !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
                });
                if found {
                    return true;
                }
            }
        }
        false
    }
    walk(std::path::Path::new("src"), constant) || walk(std::path::Path::new("grammar"), constant)
}

/// The sentence an entry for a code that faber never reports must contain.
const NOT_REPORTED: &str = "faber does not report this code";

/// Codes without an example whose constant src/ still names, each with the reason
/// no input reaches it.
const UNREACHABLE: &[(&str, &str)] = &[
    (
        "PARSE003",
        "src/syntax/parser.rs converts lalrpop's ParseError::ExtraToken, which the \
         generated LR(1) parser never returns: a token after the last item is unexpected",
    ),
    (
        "RUN019",
        "a signal (SIGINT) causes it, not program text; `faber run` turns it into one \
         line and exit 130 (tests/interrupt.rs)",
    ),
    (
        "CLI005",
        "src/format/mod.rs checks the formatter's own result before writing it; no input \
         is known to fail that check (tests/format.rs formats every file of the repository)",
    ),
    (
        "CLI008",
        "needs a compiled plugin of another PJRT C API major version; tests/xla_devices.rs \
         builds one with cc and checks the report",
    ),
    (
        "CLI009",
        "needs a compiled plugin whose calls fail; tests/xla_devices.rs builds one with cc \
         and checks the report",
    ),
    (
        "CLI010",
        "needs a compiled plugin whose compiler fails; tests/xla_devices.rs builds one with \
         cc and checks the report of `faber devices --check`",
    ),
    (
        "CLI011",
        "needs a compiled plugin whose transfers fail; tests/xla_devices.rs builds one with \
         cc and checks the report of `faber devices --check`",
    ),
    (
        "CLI012",
        "needs a compiled plugin that runs out of device memory; tests/xla_devices.rs \
         builds one with cc and checks the report of `faber run --backend xla`",
    ),
    (
        "CLI013",
        "needs a PJRT plugin (without one, CLI006 comes first); tests/xla_devices.rs \
         builds a one-device plugin with cc and checks `faber run --device 3`",
    ),
    (
        "CLI014",
        "needs a PJRT plugin, which a page cannot hold; tests/xla_spmd.rs asks the CPU \
         plugin for one device more than it offers and checks the report",
    ),
    (
        "CLI015",
        "needs a PJRT plugin with two devices, which a page cannot hold; tests/xla_spmd.rs \
         runs a gradient companion on an odd batch over two devices and checks the report",
    ),
    (
        "CLI018",
        "needs a PJRT plugin with three devices, which a page cannot hold; \
         tests/xla_tensor_parallel.rs splits a weight of 16 columns over three devices \
         and checks the report",
    ),
    (
        "CLI016",
        "needs several processes, a network address and a PJRT plugin, which a page \
         cannot hold; tests/xla_multihost.rs starts one process of two alone and checks \
         the report after the wait",
    ),
    (
        "CLI017",
        "needs two processes and a PJRT plugin, which a page cannot hold; \
         tests/xla_multihost.rs runs two processes against the CPU plugin and checks \
         the report",
    ),
];

/// `text` with every run of whitespace made one space (entries wrap their lines).
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_code_has_exactly_one_entry_and_every_entry_a_code() {
    let entries = entries::all();
    let have: BTreeSet<&str> = entries.iter().map(|e| e.code.as_str()).collect();
    let want: BTreeSet<&str> = codes::ALL.iter().map(|c| c.id).collect();
    let missing: Vec<_> = want.difference(&have).collect();
    let extra: Vec<_> = have.difference(&want).collect();
    assert!(missing.is_empty(), "codes without an entry: {missing:?}");
    assert!(
        extra.is_empty(),
        "entries for codes not in the catalogue: {extra:?}"
    );
    for e in &entries {
        let code = codes::lookup(&e.code).unwrap();
        assert_eq!(
            e.title, code.summary,
            "{}: title differs from the catalogue",
            e.code
        );
        // The embedded copy is the file (the table in src/diag/explain.rs).
        assert_eq!(
            faber::diag::explain::entry(code.id),
            Some(e.text.as_str()),
            "{}: the binary's entry is not docs/explain/{}.md",
            e.code,
            e.code
        );
    }
}

#[test]
fn entries_say_how_to_fix_and_codes_without_example_are_unused() {
    for e in entries::all() {
        assert!(e.fix.is_some(), "{}: no `## Fix` section", e.code);
        let used = constant_is_used(&constant_of(&e.code));
        match &e.example {
            Some(run) => {
                assert!(
                    !run.args.is_empty(),
                    "{}: the example names no command",
                    e.code
                );
                let fix = e.fix.as_ref().unwrap();
                assert!(
                    !(fix.files.is_empty() && fix.args.is_empty()),
                    "{}: the fix shows neither repaired files nor a command",
                    e.code
                );
                assert!(
                    used,
                    "{}: has an example but nothing in src/ reports it",
                    e.code
                );
            }
            None => {
                assert!(
                    words(&e.text).contains(NOT_REPORTED),
                    "{}: no `## Example` and no `{NOT_REPORTED}`",
                    e.code
                );
                let excused = UNREACHABLE.iter().any(|(c, _)| *c == e.code);
                assert!(
                    !used || excused,
                    "{}: src/ now reports this code; write its `## Example`",
                    e.code
                );
            }
        }
    }
}

fn check_example(e: &Entry) -> Result<(), String> {
    let Some(example) = &e.example else {
        return Ok(());
    };
    let out = entries::execute(
        &format!("{}-example", e.code),
        &example.files,
        &example.args,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let mut problems = Vec::new();
    if out.status.code() != Some(1) {
        problems.push(format!("exit {:?}, want 1", out.status.code()));
    }
    match entries::first_error_code(&stderr) {
        Some(c) if c == e.code => {}
        other => problems.push(format!("first error {other:?}, want {}", e.code)),
    }
    if stderr.contains("panicked") || stderr.contains("please report") {
        problems.push("a panic".to_string());
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{} example (faber {}): {}\n{stderr}",
            e.code,
            example.args.join(" "),
            problems.join("; ")
        ))
    }
}

fn check_fix(e: &Entry) -> Result<(), String> {
    let (Some(example), Some(fix)) = (&e.example, &e.fix) else {
        return Ok(());
    };
    let files = if fix.files.is_empty() {
        &example.files
    } else {
        &fix.files
    };
    let args = if fix.args.is_empty() {
        &example.args
    } else {
        &fix.args
    };
    let mut faber = common::Faber::new();
    if fix.needs_plugin {
        match common::pjrt_plugin() {
            Some(plugin) => faber = faber.env("FABER_PJRT_PLUGIN", plugin),
            None => {
                common::say_no_plugin(&format!("{} fix", e.code));
                return Ok(());
            }
        }
    }
    let out = entries::execute_with(&format!("{}-fix", e.code), files, args, faber);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() && !stderr.contains("error[") {
        Ok(())
    } else {
        Err(format!(
            "{} fix (faber {}): exit {:?}\n{stderr}",
            e.code,
            args.join(" "),
            out.status.code()
        ))
    }
}

#[test]
fn every_example_reports_its_code_and_every_fix_is_clean() {
    let mut failures = Vec::new();
    for e in entries::all() {
        if let Err(why) = check_example(&e).and_then(|()| check_fix(&e)) {
            failures.push(why);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn faber(args: &[&str]) -> std::process::Output {
    common::faber(args)
}

#[test]
fn explain_prints_the_entry_case_insensitively() {
    let file = std::fs::read_to_string("docs/explain/SEM001.md").unwrap();
    for arg in ["SEM001", "sem001", "Sem001"] {
        let out = faber(&["explain", arg]);
        assert_eq!(out.status.code(), Some(0), "faber explain {arg}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            file,
            "faber explain {arg}"
        );
        assert!(out.stderr.is_empty());
    }
}

#[test]
fn explain_of_an_unknown_code_is_cli003_with_the_nearest_codes() {
    let out = faber(&["explain", "SEM0O1"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        entries::first_error_code(&stderr),
        Some("CLI003"),
        "{stderr}"
    );
    assert!(stderr.contains("`SEM0O1`"), "{stderr}");
    // `SEM0O1` is one substitution from SEM001, SEM011 and SEM021 alike; ties keep
    // catalogue order, so SEM001 comes first.
    let help = stderr
        .lines()
        .find(|l| l.contains("help:"))
        .expect("a help line");
    assert!(help.contains("did you mean `SEM001`"), "{help}");

    // Nothing near: the help points at the list instead.
    let out = faber(&["explain", "ZZZ"]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        entries::first_error_code(&stderr),
        Some("CLI003"),
        "{stderr}"
    );
    assert!(!stderr.contains("did you mean"), "{stderr}");
    assert!(stderr.contains("`faber explain`"), "{stderr}");
}

#[test]
fn explain_without_a_code_lists_every_code_with_its_summary() {
    let out = faber(&["explain"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    for c in codes::ALL {
        let line = stdout
            .lines()
            .find(|l| l.split_whitespace().next() == Some(c.id))
            .unwrap_or_else(|| panic!("{} is not listed:\n{stdout}", c.id));
        assert!(line.ends_with(c.summary), "{line}");
    }
}
