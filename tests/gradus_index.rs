//! docs/gradus.md's "Index by meaning" names every public function of gradus
//! (gradus-fab/src/*.fab) as `module.function`, and names nothing that does not exist,
//! so it cannot go stale. A function is public unless it carries `@ privata` (what
//! the lowering checks when another module calls it); genus methods are reached
//! through their records and are not listed.

use std::collections::BTreeSet;

use faber::source::SourceMap;
use faber::syntax::ast::ItemKind;

/// `stem.name` of every top-level function of `text` without `@ privata`.
fn public_functions(stem: &str, text: &str) -> Vec<String> {
    let mut sources = SourceMap::new();
    let file = sources.add(format!("{stem}.fab"), text);
    let module = faber::syntax::parse(&sources, file)
        .unwrap_or_else(|d| panic!("{stem}.fab does not parse: {d:?}"));
    module
        .items
        .iter()
        .filter(|it| !it.annotations.iter().any(|a| a.name.name == "privata"))
        .filter_map(|it| match &it.kind {
            ItemKind::Func(f) => Some(format!("{stem}.{}", f.name.name)),
            _ => None,
        })
        .collect()
}

fn gradus_public_functions() -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    let mut files: Vec<_> = std::fs::read_dir("gradus-fab/src")
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "fab"))
        .collect();
    files.sort();
    for p in files {
        let stem = p.file_stem().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(&p).unwrap();
        all.extend(public_functions(&stem, &text));
    }
    all
}

/// The `module.function` names in backticks inside the section `heading` of `doc`
/// (up to the next `## ` heading), for the given module stems.
fn indexed(doc: &str, heading: &str, stems: &BTreeSet<String>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("## ") {
            inside = line.trim() == heading;
            continue;
        }
        if !inside {
            continue;
        }
        for (k, piece) in line.split('`').enumerate() {
            // Odd pieces are inside backticks.
            if k % 2 == 0 {
                continue;
            }
            if let Some((m, f)) = piece.split_once('.') {
                let is_name = !f.is_empty() && f.chars().all(|c| c.is_alphanumeric() || c == '_');
                if stems.contains(m) && is_name {
                    out.insert(piece.to_string());
                }
            }
        }
    }
    out
}

const HEADING: &str = "## Index by meaning";

#[test]
fn the_index_lists_every_public_gradus_function() {
    let public = gradus_public_functions();
    assert!(public.len() >= 100, "found only {} functions", public.len());
    let stems: BTreeSet<String> = public
        .iter()
        .map(|n| n.split('.').next().unwrap().to_string())
        .collect();
    let doc = std::fs::read_to_string("docs/gradus.md").unwrap();
    assert!(doc.lines().any(|l| l.trim() == HEADING), "no `{HEADING}`");
    let index = indexed(&doc, HEADING, &stems);
    let missing: Vec<&String> = public.difference(&index).collect();
    let stale: Vec<&String> = index.difference(&public).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "docs/gradus.md {HEADING}: missing {missing:?}; not public functions of gradus {stale:?}"
    );
}

#[test]
fn private_functions_and_genus_methods_are_not_public() {
    let src = "\
functio a() { tacet }
@ privata
functio b() { tacet }
@ radix backward \"grad_c\"
functio c(tf32 x) → f32 { redde x.summa() }
genus G {
    numerus n = 0
    functio m() { tacet }
}
";
    assert_eq!(public_functions("s", src), ["s.a", "s.c"]);
}

#[test]
fn the_index_reader_sees_only_its_section() {
    let stems: BTreeSet<String> = ["nn".to_string()].into();
    let doc = "## nn\n`nn.before`\n## Index by meaning\n| linear | `nn.linear`, `nn.relu` |\n\
               | not a name | `x.y`, `nn.`, `nn.a b` |\n## Later\n`nn.after`\n";
    let got = indexed(doc, HEADING, &stems);
    let want: BTreeSet<String> = ["nn.linear".to_string(), "nn.relu".to_string()].into();
    assert_eq!(got, want);
}
