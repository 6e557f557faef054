//! Every relative link in the repository's Markdown (README.md, docs/, and any other
//! `*.md` outside build folders) resolves: the file or directory exists, and an
//! `#anchor` into a Markdown file names one of its headings (GitHub's slug rules).
//! Also: no user-facing file refers to the design inputs that are not part of the
//! repository (LANGUAGE.md, AUTODIFF.md, …).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Folders never searched: build output, virtual environments, git metadata.
const SKIP_DIRS: &[&str] = &["target", ".git", ".venv", "node_modules", "out"];

fn walk(dir: &Path, keep: &dyn Fn(&Path) -> bool, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if !SKIP_DIRS.contains(&name) {
                walk(&p, keep, out);
            }
        } else if keep(&p) {
            out.push(p);
        }
    }
}

fn markdown_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    walk(
        Path::new("."),
        &|p| p.extension().is_some_and(|e| e == "md"),
        &mut v,
    );
    v
}

/// The text with fenced code blocks blanked and inline code spans removed, line by
/// line (line numbers are kept).
fn prose_lines(doc: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            out.push(String::new());
            continue;
        }
        if in_fence {
            out.push(String::new());
            continue;
        }
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                kept.push(c);
            }
        }
        out.push(kept);
    }
    out
}

/// Link destinations in one line of prose: `[text](dest)`, `![alt](dest)` and
/// reference definitions `[label]: dest`.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let t = line.trim_start();
    if t.starts_with('[') {
        if let Some(close) = t.find("]:") {
            let dest = t[close + 2..].split_whitespace().next().unwrap_or("");
            if !dest.is_empty() {
                out.push(dest.trim_matches(|c| c == '<' || c == '>').to_string());
            }
            return out;
        }
    }
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(off) = line[i..].find("](") {
        let start = i + off + 2;
        // Only a `]` that closes a `[` earlier on the line starts a link.
        if !line[..i + off].contains('[') {
            i = start;
            continue;
        }
        let mut depth = 1;
        let mut j = start;
        while j < b.len() {
            match b[j] {
                b'(' => depth += 1,
                b')' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let inner = line[start..j.min(b.len())].trim();
        // `(dest "title")`
        let dest = inner.split_whitespace().next().unwrap_or("");
        out.push(dest.trim_matches(|c| c == '<' || c == '>').to_string());
        i = j.min(b.len());
    }
    out
}

/// GitHub's anchor for a heading text: markdown links reduced to their text, lower
/// case, everything but letters, digits, `_`, `-` and spaces dropped, spaces → `-`.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    // `[text](url)` → `text`
    while let Some(open) = rest.find('[') {
        match rest[open..].find("](") {
            Some(mid) => match rest[open + mid..].find(')') {
                Some(close) => {
                    text.push_str(&rest[..open]);
                    text.push_str(&rest[open + 1..open + mid]);
                    rest = &rest[open + mid + close + 1..];
                }
                None => break,
            },
            None => break,
        }
    }
    text.push_str(rest);
    text.to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_' || *c == '-' || *c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown document's ATX headings (duplicates get `-1`, `-2`, …).
fn anchors(doc: &str) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = Vec::new();
    let mut in_fence = false;
    for line in doc.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let t = line.trim_start();
        let hashes = t.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !t[hashes..].starts_with(' ') {
            continue;
        }
        let text = t[hashes..].trim().trim_end_matches('#').trim();
        let base = slug(text);
        let n = seen.entry(base.clone()).or_insert(0);
        out.push(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

fn is_external(dest: &str) -> bool {
    dest.contains("://") || dest.starts_with("mailto:")
}

/// Broken links of `doc`, a file at `path`; `read` gives another file's text.
fn broken_links(path: &Path, doc: &str, read: &dyn Fn(&Path) -> Option<String>) -> Vec<String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut bad = Vec::new();
    for (n, line) in prose_lines(doc).iter().enumerate() {
        for dest in link_targets(line) {
            if dest.is_empty() || is_external(&dest) {
                continue;
            }
            let (file, anchor) = match dest.split_once('#') {
                Some((f, a)) => (f, Some(a)),
                None => (dest.as_str(), None),
            };
            let target = if file.is_empty() {
                path.to_path_buf()
            } else {
                dir.join(file)
            };
            let where_ = format!("{}:{}: `{dest}`", path.display(), n + 1);
            let text = if file.is_empty() {
                Some(doc.to_string())
            } else {
                read(&target)
            };
            let Some(text) = text else {
                if !target.is_dir() {
                    bad.push(format!("{where_}: no such file"));
                }
                continue;
            };
            if let Some(a) = anchor {
                let is_md = target.extension().is_some_and(|e| e == "md");
                if is_md && !anchors(&text).iter().any(|h| h == a) {
                    bad.push(format!("{where_}: no heading with anchor `#{a}`"));
                }
            }
        }
    }
    bad
}

fn read_file(p: &Path) -> Option<String> {
    if p.is_file() {
        Some(std::fs::read_to_string(p).unwrap_or_default())
    } else {
        None
    }
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let files = markdown_files();
    assert!(
        files.iter().any(|p| p.ends_with("README.md")) && files.len() >= 10,
        "found {files:?}"
    );
    let mut bad = Vec::new();
    let mut links = 0;
    for p in &files {
        let doc = std::fs::read_to_string(p).unwrap();
        links += prose_lines(&doc)
            .iter()
            .map(|l| link_targets(l).len())
            .sum::<usize>();
        bad.extend(broken_links(p, &doc, &read_file));
    }
    assert!(links >= 20, "expected the docs' links, found {links}");
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

#[test]
fn no_file_refers_to_design_inputs_outside_the_repository() {
    let mut files = markdown_files();
    for dir in [
        "src",
        "grammar",
        "gradus-fab",
        "stdlib",
        "examples",
        "tests/run",
        "tests/reference",
        "benches",
    ] {
        walk(
            Path::new(dir),
            &|p| {
                p.extension().is_some_and(|e| {
                    ["rs", "fab", "proba", "lalrpop", "py", "sh", "toml", "md"]
                        .contains(&e.to_str().unwrap_or(""))
                })
            },
            &mut files,
        );
    }
    let outside = [
        "LANGUAGE.md",
        "AUTODIFF.md",
        "AUTODIFF §",
        "LANGUAGE §",
        "DESIGN.md",
        "STYLE.md",
        "/work/shared",
    ];
    let mut bad = Vec::new();
    for p in &files {
        let Ok(text) = std::fs::read_to_string(p) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for o in outside {
                if line.contains(o) {
                    bad.push(format!("{}:{}: `{o}`", p.display(), n + 1));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "references to files outside the repository (point them at docs/):\n{}",
        bad.join("\n")
    );
}

// ------------------------------------------------------------ the checker itself

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("8. Display: what nota prints"),
        "8-display-what-nota-prints"
    );
    assert_eq!(slug("faber.toml"), "fabertoml");
    assert_eq!(
        slug("Context rules (what keeps the grammar LR(1) without newlines)"),
        "context-rules-what-keeps-the-grammar-lr1-without-newlines"
    );
    assert_eq!(slug("Lists (`lista`; `iuncta`)"), "lists-lista-iuncta");
    assert_eq!(slug("see [cli](cli.md) now"), "see-cli-now");
    assert_eq!(slug("Module map"), "module-map");
    let doc = "# A\n## A\n```\n# not a heading\n```\n### snake_case name\n";
    assert_eq!(anchors(doc), ["a", "a-1", "snake_case-name"]);
}

#[test]
fn checker_reports_missing_files_and_anchors() {
    let other = "# Title\n## Some section\n";
    let read = |p: &Path| -> Option<String> {
        (p == Path::new("docs/other.md")).then(|| other.to_string())
    };
    let doc = "\
# Here
Good: [o](other.md), [s](other.md#some-section), [h](#here), [w](https://x.org/y.md).
Bad file: [m](missing.md).
Bad anchor: [a](other.md#no-such-section) and [b](#nowhere).
`[in code](missing-too.md)`
```
[in a fence](missing-three.md)
```
[ref]: also-missing.md
";
    let bad = broken_links(Path::new("docs/page.md"), doc, &read);
    assert_eq!(bad.len(), 4, "{bad:#?}");
    assert!(bad[0].contains("`missing.md`: no such file"), "{}", bad[0]);
    assert!(bad[1].contains("#no-such-section"), "{}", bad[1]);
    assert!(bad[2].contains("#nowhere"), "{}", bad[2]);
    assert!(bad[3].contains("also-missing.md"), "{}", bad[3]);
    assert!(broken_links(Path::new("docs/page.md"), "[o](other.md#title)", &read).is_empty());
}
