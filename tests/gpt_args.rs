//! examples/gpt-shakespeare's program arguments through the built binary: every kind of
//! bad argument stops before training with a message naming the flag (and the bad
//! value) and exit code 1; `-- --help` exits 0 and lists every flag the parser in
//! src/config.fab accepts, each value flag with the default of the `Configuratio`
//! record. The flags and defaults are read from config.fab's source here, so a flag
//! added to the parser without a help entry fails this test.

mod common;

use common::Faber;
use std::collections::BTreeSet;
use std::path::Path;

fn example_dir() -> String {
    format!("{}/examples/gpt-shakespeare", env!("CARGO_MANIFEST_DIR"))
}

fn config_source() -> String {
    std::fs::read_to_string(format!("{}/src/config.fab", example_dir())).unwrap()
}

/// (exit code, stdout, stderr) of `faber run examples/gpt-shakespeare -- args…`.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Faber::new()
        .arg("run")
        .arg(example_dir())
        .arg("--")
        .args(args)
        .output();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Every `--flag` that appears as a `casu "--flag"` label in config.fab (the parser
/// and the default lookup) or as a `nomen = "--flag"` in its table of flags.
fn flags_in_source() -> BTreeSet<String> {
    let src = config_source();
    let mut out = BTreeSet::new();
    for marker in ["casu \"--", "nomen = \"--"] {
        for (at, _) in src.match_indices(marker) {
            let rest = &src[at + marker.len() - 2..];
            let end = rest.find('"').unwrap();
            out.insert(rest[..end].to_string());
        }
    }
    out
}

/// The defaults written in `genus Configuratio { … }`: field name → default text.
fn record_defaults() -> Vec<(String, String)> {
    let src = config_source();
    let start = src.find("genus Configuratio {").unwrap();
    let body = &src[start..start + src[start..].find("\n}").unwrap()];
    body.lines()
        .filter_map(|l| {
            let l = l.trim();
            let (decl, value) = l.split_once(" = ")?;
            let field = decl.split_whitespace().nth(1)?;
            Some((field.to_string(), value.trim().to_string()))
        })
        .collect()
}

/// The field each flag's default is read from, from `casu "--flag" ergo redde "§"(c.field)`.
fn flag_fields() -> Vec<(String, String)> {
    config_source()
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let flag = l.strip_prefix("casu \"")?.split('"').next()?;
            let field = l.split("redde \"§\"(c.").nth(1)?.strip_suffix(')')?;
            Some((flag.to_string(), field.to_string()))
        })
        .collect()
}

#[test]
fn help_lists_every_flag_with_its_default() {
    let (code, stdout, stderr) = run(&["--help"]);
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert!(
        !stdout.contains("passus"),
        "--help does not train:\n{stdout}"
    );
    let listed: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("  --"))
        .collect();
    let flags = flags_in_source();
    assert!(flags.len() >= 20, "{flags:?}");
    for flag in &flags {
        let name = &flag[2..];
        let line = listed
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("--help does not list `{flag}`:\n{stdout}"));
        // A flag that takes a value shows it and a default; the description is not empty.
        let words: Vec<&str> = line.split_whitespace().collect();
        assert!(words.len() >= 3, "`{flag}` has no description: {line}");
        if words[1].chars().all(|c| c.is_ascii_uppercase()) {
            assert!(
                line.contains("(default: "),
                "`{flag}` shows no default: {line}"
            );
        }
    }
    assert_eq!(
        listed.len(),
        flags.len(),
        "--help lists a flag the parser lacks"
    );

    // The numeric defaults shown are the record's (the numbers are not written twice).
    let defaults = record_defaults();
    let fields = flag_fields();
    assert!(fields.len() >= 15, "{fields:?}");
    for (flag, field) in &fields {
        let (_, value) = defaults
            .iter()
            .find(|(f, _)| f == field)
            .unwrap_or_else(|| panic!("no default for field `{field}` of `{flag}`"));
        let line = listed
            .iter()
            .find(|l| l.split_whitespace().next() == Some(&flag[2..]))
            .unwrap();
        let shown = line
            .split("(default: ")
            .nth(1)
            .unwrap()
            .trim_end_matches(')');
        let want: f64 = value.parse().unwrap();
        let got: f64 = shown.parse().unwrap_or_else(|_| panic!("{flag}: {line}"));
        assert_eq!(got, want, "{flag}: {line}");
    }
}

/// Runs `args`, which must be refused: exit 1 before training, every `needle` in the
/// message, no runtime diagnostic, and the README the message points at exists.
fn refused(args: &[&str], needles: &[&str]) {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, Some(1), "{args:?}: exit {code:?}\n{stdout}\n{stderr}");
    assert!(
        !stdout.contains("gpt-shakespeare:"),
        "{args:?} started a run:\n{stdout}"
    );
    let first = stderr.lines().next().unwrap_or("");
    assert!(first.starts_with("error: "), "{args:?}: {stderr}");
    for needle in needles {
        assert!(
            first.contains(needle),
            "{args:?}: `{needle}` not in {first:?}"
        );
    }
    assert!(
        !stderr.contains("RUN0"),
        "{args:?}: a runtime diagnostic:\n{stderr}"
    );
    let readme = stderr
        .split("see also ")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .unwrap_or_else(|| panic!("{args:?}: no pointer to the README:\n{stderr}"));
    assert!(
        Path::new(readme).is_file(),
        "{args:?}: `{readme}` does not exist"
    );
}

#[test]
fn a_value_that_does_not_parse_is_refused() {
    refused(&["--steps", "abc"], &["`--steps`", "`abc`", "whole number"]);
    refused(&["--tiny", "--batch", "2.5"], &["`--batch`", "`2.5`"]);
    refused(&["--lr", "fast"], &["`--lr`", "`fast`", "number"]);
    refused(
        &["--temperature", "nan"],
        &["`--temperature`", "`nan`", "finite"],
    );
}

#[test]
fn an_unknown_flag_is_refused() {
    refused(
        &["--tiny", "--stpes", "5"],
        &["unknown flag", "`--stpes`", "did you mean `--steps`?"],
    );
    refused(
        &["--learning-rate", "1"],
        &["unknown flag `--learning-rate`"],
    );
    refused(&["5"], &["unexpected argument", "`5`"]);
}

#[test]
fn a_missing_value_is_refused() {
    refused(&["--steps"], &["`--steps`", "needs a value"]);
    refused(
        &["--out", "--trace"],
        &["`--out`", "needs a value", "`--trace`"],
    );
    refused(&["--init", ""], &["`--init`", "empty"]);
}

#[test]
fn values_that_make_no_sense_are_refused() {
    for (flag, value) in [
        ("--steps", "-1"),
        ("--layers", "0"),
        ("--heads", "0"),
        ("--embd", "0"),
        ("--block", "0"),
        ("--batch", "0"),
        ("--batch", "-4"),
        ("--warmup", "-1"),
        ("--eval-interval", "0"),
        ("--eval-batches", "0"),
        ("--sample", "-1"),
        ("--seed", "-1"),
        ("--lr", "0"),
        ("--lr", "-0.1"),
        ("--min-lr", "-0.001"),
        ("--weight-decay", "-1"),
        ("--clip", "0"),
        ("--temperature", "0"),
    ] {
        refused(
            &[flag, value],
            &[&format!("`{flag}`"), &format!("`{value}`")],
        );
    }
    refused(
        &["--embd", "30", "--heads", "4"],
        &["`--embd` (30)", "`--heads` (4)"],
    );
    // Longer than the validation text: checked once the data is read, still before training.
    refused(
        &["--block", "200000"],
        &["`--block`", "`200000`", "validation"],
    );
}

/// The README's flag table has a row for every flag, and each numeric default there is
/// the one `--help` shows (so the README cannot drift from the record).
#[test]
fn the_readme_lists_every_flag_with_the_same_default() {
    let readme = std::fs::read_to_string(format!("{}/README.md", example_dir())).unwrap();
    let (code, help, _) = run(&["--help"]);
    assert_eq!(code, Some(0));
    for flag in flags_in_source() {
        let row = readme
            .lines()
            .find(|l| {
                l.strip_prefix("| `")
                    .and_then(|r| r.split(['`', ' ']).next())
                    .is_some_and(|f| f == flag)
            })
            .unwrap_or_else(|| panic!("README.md has no row for `{flag}`"));
        let Some(shown) = help
            .lines()
            .find(|l| l.split_whitespace().next() == Some(flag.as_str()))
            .and_then(|l| l.split("(default: ").nth(1))
            .map(|d| d.trim_end_matches(')'))
        else {
            continue;
        };
        if let Ok(want) = shown.parse::<f64>() {
            let cell = row.split('|').nth(2).unwrap().trim();
            assert_eq!(cell.parse::<f64>().ok(), Some(want), "`{flag}`: {row}");
        }
    }
}
