//! Every `.fab` file the project ships (stdlib, gradus, examples) must parse.
//! The list grows as those folders fill; an empty folder is fine.

use std::path::{Path, PathBuf};

use faber::diag::render;
use faber::source::SourceMap;
use faber::syntax::parse;

fn fab_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            fab_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "fab" || e == "proba") {
            out.push(path);
        }
    }
}

#[test]
fn shipped_sources_parse() {
    let mut files = Vec::new();
    for dir in ["stdlib", "gradus-fab", "examples"] {
        fab_files(Path::new(dir), &mut files);
    }
    assert!(!files.is_empty(), "examples/ holds at least hello.fab");
    let mut failures = String::new();
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let mut sources = SourceMap::new();
        let id = sources.add(path.display().to_string(), text);
        if let Err(diags) = parse(&sources, id) {
            failures.push_str(&render(&diags, &sources, false));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}
