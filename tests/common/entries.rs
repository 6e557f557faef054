//! Reads the `faber explain` entries under `docs/explain/` for the tests that run
//! them (tests/explain.rs, tests/diagnostic_snapshots.rs: `common::entries`). The format is described
//! in docs/diagnostics.md ("Explanations"); in short:
//!
//! ```text
//! # SEM001: <the catalogue summary>
//! prose…
//! ## Example
//! ```fab                 → the file main.fab
//! ```fab lib/b.fab       → the file lib/b.fab (any language: ```toml faber.toml)
//! ```fab x.fab encoding=latin-1   → written as Latin-1 instead of UTF-8
//! ```console
//! $ faber check main.fab → the command, run in a fresh directory holding the files
//! ## Fix
//! the same kinds of block: the repaired files (all of them) and/or the command
//! ```
//!
//! A block whose language is neither `fab` nor `console` and that names no path is
//! illustration only and is not run. A console block marked ```` ```console
//! needs-pjrt-plugin ```` runs only when a PJRT plugin is at hand
//! ([`super::pjrt_plugin`]), with `FABER_PJRT_PLUGIN` naming it; otherwise the test
//! says it skipped it.

use std::path::{Path, PathBuf};
use std::process::Output;

use super::Faber;

pub const DIR: &str = "docs/explain";

/// One file a section writes before running its command.
#[derive(Clone, Debug)]
pub struct File {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// A section's runnable part: the files it writes and the command's words after `faber`.
#[derive(Clone, Debug, Default)]
pub struct Run {
    pub files: Vec<File>,
    pub args: Vec<String>,
    /// The command needs a PJRT plugin (`console needs-pjrt-plugin`).
    pub needs_plugin: bool,
}

#[derive(Debug)]
pub struct Entry {
    pub code: String,
    /// The `# CODE: summary` line without `# CODE: `.
    pub title: String,
    pub text: String,
    /// `## Example`: files and command that must report `code`.
    pub example: Option<Run>,
    /// `## Fix`: files and/or command that must succeed; missing parts come from
    /// the example.
    pub fix: Option<Run>,
}

/// A fenced block: its info words and its body.
struct Block {
    info: Vec<String>,
    body: String,
}

#[derive(Default)]
struct Section {
    blocks: Vec<Block>,
}

pub fn parse(code: &str, text: &str) -> Entry {
    let first = text.lines().next().unwrap_or("");
    let title = first
        .strip_prefix(&format!("# {code}: "))
        .unwrap_or_else(|| {
            panic!("{code}: the first line must be `# {code}: <summary>`, found `{first}`")
        })
        .to_string();
    let mut sections: Vec<(String, Section)> = Vec::new();
    let mut fence: Option<Block> = None;
    for line in text.lines() {
        if let Some(block) = fence.as_mut() {
            if line.trim_end() == "```" {
                let block = fence.take().unwrap();
                match sections.last_mut() {
                    Some((_, s)) => s.blocks.push(block),
                    None => panic!("{code}: a code block before the first `##` section"),
                }
            } else {
                block.body.push_str(line);
                block.body.push('\n');
            }
        } else if let Some(info) = line.strip_prefix("```") {
            fence = Some(Block {
                info: info.split_whitespace().map(String::from).collect(),
                body: String::new(),
            });
        } else if let Some(heading) = line.strip_prefix("## ") {
            sections.push((heading.trim().to_string(), Section::default()));
        }
    }
    assert!(fence.is_none(), "{code}: a code block is not closed");
    let mut example = None;
    let mut fix = None;
    for (heading, section) in &sections {
        match heading.as_str() {
            "Example" => example = Some(run_of(code, section)),
            "Fix" => fix = Some(run_of(code, section)),
            _ => {}
        }
    }
    Entry {
        code: code.to_string(),
        title,
        text: text.to_string(),
        example,
        fix,
    }
}

fn run_of(code: &str, section: &Section) -> Run {
    let mut run = Run::default();
    for block in &section.blocks {
        let lang = block.info.first().map(String::as_str).unwrap_or("");
        if lang == "console" {
            let lines: Vec<&str> = block.body.lines().collect();
            let [line] = lines.as_slice() else {
                panic!("{code}: a console block holds exactly one `$ faber …` line");
            };
            let words = line
                .strip_prefix("$ faber")
                .unwrap_or_else(|| panic!("{code}: console line `{line}` is not `$ faber …`"));
            assert!(
                run.args.is_empty(),
                "{code}: two console blocks in one section"
            );
            run.args = words.split_whitespace().map(String::from).collect();
            run.needs_plugin = block.info.iter().any(|w| w == "needs-pjrt-plugin");
            continue;
        }
        let path = match block.info.get(1) {
            Some(p) if !p.contains('=') => p.clone(),
            _ if lang == "fab" => "main.fab".to_string(),
            _ => continue,
        };
        let latin1 = block.info.iter().any(|w| w == "encoding=latin-1");
        let bytes = if latin1 {
            block
                .body
                .chars()
                .map(|c| u8::try_from(u32::from(c)).expect("a Latin-1 character"))
                .collect()
        } else {
            block.body.clone().into_bytes()
        };
        assert!(
            !run.files.iter().any(|f| f.path == path),
            "{code}: `{path}` written twice"
        );
        run.files.push(File { path, bytes });
    }
    run
}

/// Every entry file, in code order.
pub fn all() -> Vec<Entry> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(DIR)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let code = p.file_stem().unwrap().to_str().unwrap();
            parse(code, &std::fs::read_to_string(p).unwrap())
        })
        .collect()
}

/// Runs `faber ARGS` in a fresh directory holding `files`, colour off and the bundled
/// libraries in use. The directory is removed afterwards.
pub fn execute(label: &str, files: &[File], args: &[String]) -> Output {
    execute_with(label, files, args, Faber::new())
}

/// [`execute`] with a prepared [`Faber`] (extra environment).
pub fn execute_with(label: &str, files: &[File], args: &[String], faber: Faber) -> Output {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-explain-{label}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in files {
        let path = dir.join(&f.path);
        std::fs::create_dir_all(path.parent().unwrap_or(Path::new("."))).unwrap();
        std::fs::write(&path, &f.bytes).unwrap();
    }
    let out = faber.args(args).current_dir(&dir).output();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

/// The code of the first `error[…]` line of a rendered report.
pub fn first_error_code(stderr: &str) -> Option<&str> {
    let line = stderr.lines().find(|l| l.starts_with("error["))?;
    line.strip_prefix("error[")?.split(']').next()
}
