//! Build script: generates the parser from `grammar/faber.lalrpop` (with one
//! post-processing step, [`accepts_fast_path`]), and the table of bundled `.fab`
//! libraries (`stdlib/src` as `norma:`, `gradus-fab/src` as `gradus:`) that the binary
//! embeds, both into OUT_DIR.

use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    lalrpop::Configuration::new()
        .set_in_dir("grammar")
        .set_out_dir(&out)
        .emit_rerun_directives(true)
        .process()
        .expect("grammar/faber.lalrpop failed to generate");
    accepts_fast_path(&out.join("faber.rs"));
    bundle_libraries(&out);
}

/// The line of the generated `__accepts` that copies the parser's state stack, and
/// the one after it.
const ACCEPTS_COPY: &str =
    "        let mut __states = __states.to_vec();\n        __states.extend(__error_state);\n";

/// What `accepts_fast_path` puts before them (its first line marks a patched file).
const ACCEPTS_FAST: &str =
    "        // faber (grammar/build.rs): the first action without a copy of the stack.
        {
            let __top = match __error_state {
                Some(__error_state) => __error_state,
                None => __states[__states.len() - 1],
            };
            let __first = match __opt_integer {
                None => __EOF_ACTION[__top as usize],
                Some(__integer) => __action(__top, __integer),
            };
            if __first == 0 {
                return false;
            }
            if __first > 0 {
                return true;
            }
        }
";

/// Adds a fast path to the generated `__accepts`, which tells whether the parser in a
/// given state stack would accept a terminal (after simulating the reductions that
/// terminal triggers). LALRPOP calls it for each of the grammar's terminals whenever it
/// builds an error (`__expected_tokens_from_states`, the "expected …" lists), and each
/// call starts by copying the whole state stack, although for nearly every terminal the
/// top state's action already answers: an error (not accepted) or a shift (accepted).
/// The fast path looks that first action up on the stack as given and returns in those
/// two cases; otherwise (a reduction) the original code runs from the start, on its
/// copy. The answer is the same in every case: the first iteration of the original
/// loop reads the same action from the same top state (the error state when one is
/// pushed, else the stack's last). Measured in docs/robustness.md § Throughput (round 4).
///
/// LALRPOP skips regenerating an up-to-date file, so a file already patched is left
/// alone; a generated parser without the expected code (another LALRPOP version) stops
/// the build rather than silently losing the patch.
fn accepts_fast_path(path: &Path) {
    let text = std::fs::read_to_string(path).expect("the generated parser is readable");
    let marker = ACCEPTS_FAST.lines().next().expect("non-empty");
    if text.contains(marker) {
        return;
    }
    let functions = text.matches("    fn __accepts<").count();
    let copies = text.matches(ACCEPTS_COPY).count();
    assert!(
        functions > 0 && copies == functions,
        "grammar/build.rs: the generated parser's __accepts has changed ({functions} functions, \
         {copies} stack copies); update accepts_fast_path"
    );
    let patched = text.replace(ACCEPTS_COPY, &format!("{ACCEPTS_FAST}{ACCEPTS_COPY}"));
    std::fs::write(path, patched).expect("OUT_DIR is writable");
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
