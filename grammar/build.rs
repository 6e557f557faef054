//! Build script: generates the parser from `grammar/faber.lalrpop` (then edits it for
//! speed, `postprocess.rs`), and the table of bundled `.fab` libraries (`stdlib/src`
//! as `norma:`, `gradus-fab/src` as `gradus:`) that the binary embeds, both into
//! OUT_DIR.

mod postprocess;

use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    postprocess::remove_unedited(&out.join("faber.rs"));
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(&out)
        .emit_rerun_directives(true)
        .process()
        .expect("grammar/faber.lalrpop failed to generate");
    postprocess::edit_generated_parser(&out.join("faber.rs"));
    bundle_libraries(&out);
}

fn collect(dir: &Path, root: &Path, out: &mut Vec<(String, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, root, out);
        } else if path.extension().is_some_and(|e| e == "fab" || e == "proba") {
            let rel = path.strip_prefix(root).expect("under root");
            let rel = rel.to_string_lossy().replace('\\', "/");
            out.push((rel, path.canonicalize().expect("readable library file")));
        }
    }
}

fn bundle_libraries(out: &Path) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let mut table = String::from("/// Bundled libraries: (canonical module name, source text).\npub static BUNDLED: &[(&str, &str)] = &[\n");
    for (lib, dir) in [("norma", "stdlib/src"), ("gradus", "gradus-fab/src")] {
        let root = manifest.join(dir);
        println!("cargo:rerun-if-changed={}", root.display());
        let mut files = Vec::new();
        collect(&root, &root, &mut files);
        for (rel, path) in files {
            println!("cargo:rerun-if-changed={}", path.display());
            table.push_str(&format!(
                "    ({:?}, include_str!({:?})),\n",
                format!("{lib}:{rel}"),
                path.display().to_string()
            ));
        }
    }
    table.push_str("];\n");
    std::fs::write(out.join("libraries.rs"), table).expect("OUT_DIR is writable");
}
