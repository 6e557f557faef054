//! Runs the examples of docs/language.md through the faber binary.
//!
//! Convention (written down in docs/language.md, "How to read the examples"): every
//! fenced block whose info string starts with `fab` carries a mode word.
//!
//! * ```` ```fab run ```` — `faber run` must exit 0. When the next fenced block
//!   (only blank lines between) is ```` ```text ````, standard output must equal it
//!   exactly. `fab run exit=N` expects exit code N instead of 0.
//! * ```` ```fab check ```` — `faber check` must exit 0 (files without `incipit`).
//! * ```` ```fab test ```` — `faber test` must exit 0 (`probandum` / `proba` files).
//! * ```` ```fab error CODE ```` — `faber run` must exit 1 and report `error[CODE]`.
//!
//! A `fab` block without a mode is an error of the document, so no example can
//! slip through untested. The expected outputs were written by reasoning about each
//! program, never by copying what faber prints.

mod common;

use common::Faber;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
enum Mode {
    Run { exit: i32 },
    Check,
    Test,
    Error(String),
}

#[derive(Debug, Clone, PartialEq)]
struct Example {
    /// 1-based line of the opening fence.
    line: usize,
    mode: Mode,
    source: String,
    expected_stdout: Option<String>,
}

/// A fenced block: its info string, body and the line of its opening fence.
struct Fence {
    info: String,
    body: String,
    line: usize,
    /// Whether only blank lines separate it from the previous fence's closing line.
    follows_previous: bool,
}

fn fences(doc: &str) -> Result<Vec<Fence>, String> {
    let mut out = Vec::new();
    let mut lines = doc.lines().enumerate().peekable();
    let mut blank_since_close = false;
    let mut seen_close = false;
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let mut body = String::new();
            let mut closed = false;
            for (_, l) in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    closed = true;
                    break;
                }
                body.push_str(l);
                body.push('\n');
            }
            if !closed {
                return Err(format!("line {}: fence never closed", i + 1));
            }
            out.push(Fence {
                info: info.trim().to_string(),
                body,
                line: i + 1,
                follows_previous: seen_close && blank_since_close,
            });
            seen_close = true;
            blank_since_close = true;
        } else if !line.trim().is_empty() {
            blank_since_close = false;
        }
    }
    Ok(out)
}

/// The `fab` examples of a document, with the outputs that follow them.
fn examples(doc: &str) -> Result<Vec<Example>, String> {
    let fs = fences(doc)?;
    let mut out = Vec::new();
    for (k, f) in fs.iter().enumerate() {
        let mut words = f.info.split_whitespace();
        if words.next() != Some("fab") {
            continue;
        }
        let mode = match (words.next(), words.next()) {
            (Some("run"), None) => Mode::Run { exit: 0 },
            (Some("run"), Some(w)) => match w.strip_prefix("exit=").map(str::parse) {
                Some(Ok(n)) => Mode::Run { exit: n },
                _ => return Err(format!("line {}: bad `fab run` option `{w}`", f.line)),
            },
            (Some("check"), None) => Mode::Check,
            (Some("test"), None) => Mode::Test,
            (Some("error"), Some(code)) => Mode::Error(code.to_string()),
            _ => {
                return Err(format!(
                    "line {}: a `fab` block needs a mode (`run`, `check`, `test`, `error CODE`), got `{}`",
                    f.line, f.info
                ))
            }
        };
        let expected_stdout = match (&mode, fs.get(k + 1)) {
            (Mode::Run { .. }, Some(next)) if next.info == "text" && next.follows_previous => {
                Some(next.body.clone())
            }
            _ => None,
        };
        out.push(Example {
            line: f.line,
            mode,
            source: f.body.clone(),
            expected_stdout,
        });
    }
    Ok(out)
}

fn scratch_dir(tag: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("faber-docs-examples-{tag}"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs one example; `Err` describes how it failed.
fn check_example(dir: &std::path::Path, doc: &str, ex: &Example) -> Result<(), String> {
    let path = dir.join(format!("line_{}.fab", ex.line));
    std::fs::write(&path, &ex.source).unwrap();
    let verb = match ex.mode {
        Mode::Run { .. } | Mode::Error(_) => "run",
        Mode::Check => "check",
        Mode::Test => "test",
    };
    let out = Faber::new().arg(verb).arg(&path).current_dir(dir).output();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    let fail = |why: String| {
        Err(format!(
            "{doc}:{} ({verb}): {why}\n--- stdout\n{stdout}--- stderr\n{stderr}",
            ex.line
        ))
    };
    match &ex.mode {
        Mode::Run { exit } => {
            if code != Some(*exit) {
                return fail(format!("exit {code:?}, want {exit}"));
            }
            if let Some(want) = &ex.expected_stdout {
                if stdout != *want {
                    return fail(format!("stdout differs; want\n{want}"));
                }
            }
        }
        Mode::Check | Mode::Test => {
            if code != Some(0) {
                return fail(format!("exit {code:?}, want 0"));
            }
        }
        Mode::Error(want) => {
            if code != Some(1) {
                return fail(format!("exit {code:?}, want 1"));
            }
            if !stderr.contains(&format!("error[{want}]")) {
                return fail(format!("no `error[{want}]` on stderr"));
            }
        }
    }
    Ok(())
}

#[test]
fn language_reference_examples_run_as_documented() {
    let doc = "docs/language.md";
    let text = std::fs::read_to_string(doc).unwrap();
    let exs = examples(&text).unwrap_or_else(|e| panic!("{doc}: {e}"));
    assert!(
        exs.len() >= 40,
        "expected the reference's examples, found {}",
        exs.len()
    );
    let dir = scratch_dir("language");
    let failures: Vec<String> = exs
        .iter()
        .filter_map(|ex| check_example(&dir, doc, ex).err())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        exs.len(),
        failures.join("\n")
    );
}

// ------------------------------------------------------------ the extractor itself

const SAMPLE: &str = "\
Intro.

```fab run
incipit { nota 1 }
```

```text
1
```

Prose.

```fab run exit=3
incipit exitus 3 { nota 2 }
```

Not output: prose between.

```text
2
```

```fab check
functio f() { tacet }
```

```fab error LEX006
incipit { nota 1 == 1 }
```

```rust
fn ignored() {}
```
";

#[test]
fn extractor_reads_modes_and_following_output() {
    let exs = examples(SAMPLE).unwrap();
    assert_eq!(exs.len(), 4);
    assert_eq!(exs[0].line, 3);
    assert_eq!(exs[0].mode, Mode::Run { exit: 0 });
    assert_eq!(exs[0].source, "incipit { nota 1 }\n");
    assert_eq!(exs[0].expected_stdout.as_deref(), Some("1\n"));
    assert_eq!(exs[1].mode, Mode::Run { exit: 3 });
    assert_eq!(
        exs[1].expected_stdout, None,
        "prose separates the text block"
    );
    assert_eq!(exs[2].mode, Mode::Check);
    assert_eq!(exs[3].mode, Mode::Error("LEX006".into()));
}

#[test]
fn extractor_rejects_a_fab_block_without_mode() {
    let err = examples("```fab\nincipit { nota 1 }\n```\n").unwrap_err();
    assert!(err.contains("needs a mode"), "{err}");
    assert!(
        examples("```fab run\nincipit {}\n").is_err(),
        "unclosed fence"
    );
    assert!(examples("```fab run exit=x\nincipit {}\n```\n").is_err());
}

#[test]
fn checker_catches_wrong_output_and_wrong_code() {
    let dir = scratch_dir("self");
    let wrong_output = Example {
        line: 1,
        mode: Mode::Run { exit: 0 },
        source: "incipit { nota 1 + 1 }\n".into(),
        expected_stdout: Some("3\n".into()),
    };
    assert!(check_example(&dir, "sample", &wrong_output).is_err());
    let right_output = Example {
        expected_stdout: Some("2\n".into()),
        ..wrong_output.clone()
    };
    assert_eq!(check_example(&dir, "sample", &right_output), Ok(()));
    let wrong_code = Example {
        line: 2,
        mode: Mode::Error("LEX007".into()),
        source: "incipit { nota 1 == 1 }\n".into(),
        expected_stdout: None,
    };
    assert!(check_example(&dir, "sample", &wrong_code).is_err());
    let right_code = Example {
        mode: Mode::Error("LEX006".into()),
        ..wrong_code
    };
    assert_eq!(check_example(&dir, "sample", &right_code), Ok(()));
    let _ = std::fs::remove_dir_all(&dir);
}
