//! "did you mean …?" hints of the name-checking diagnostics (SEM001, SEM002, SEM007,
//! SEM009, SEM015): each program below misspells one name, is compiled through the
//! library API (an in-memory loader holding the bundled `gradus:` and `norma:`
//! modules), and the rendered diagnostic must carry the expected `help:` line. The
//! expected spellings were written by hand from the misspelling, not by running faber.

mod common;

use faber::diag::{render, Diagnostic};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;

/// Compiles `main.fab` (plus `extra` files) and returns the diagnostics rendered
/// without colour, together with the diagnostics themselves.
fn diagnose(main: &str, extra: &[(&str, &str)]) -> (String, Vec<Diagnostic>) {
    let mut sources = SourceMap::new();
    let entry = sources.add("main.fab", main);
    let mut files: rustc_hash::FxHashMap<String, String> = faber::libraries::BUNDLED
        .iter()
        .map(|(n, t)| (n.to_string(), t.to_string()))
        .collect();
    for (n, t) in extra {
        files.insert(n.to_string(), t.to_string());
    }
    let mut loader = MemoryLoader { files };
    match faber::compile(&mut sources, entry, &mut loader) {
        Ok(_) => panic!("the program should not compile:\n{main}"),
        Err(diags) => (render(&diags, &sources, false), diags),
    }
}

/// Asserts that the first diagnostic with `code` has exactly `hint` as its help.
#[track_caller]
fn expect_hint(main: &str, extra: &[(&str, &str)], code: &str, hint: &str) {
    let (text, diags) = diagnose(main, extra);
    let d = diags
        .iter()
        .find(|d| d.code.id == code)
        .unwrap_or_else(|| panic!("no {code} in:\n{text}"));
    assert_eq!(d.hint.as_deref(), Some(hint), "rendered:\n{text}");
    assert!(
        text.contains(&format!("help: {hint}")),
        "the hint is not rendered:\n{text}"
    );
}

const CONFIG: &str = "
genus Config {
    fractus lr_min = 0.1
    numerus passus = 3
    functio summa_passuum() → numerus { redde ego.passus }
}
";

fn with_config(body: &str) -> String {
    format!("{CONFIG}\nincipit {{\n    fixum Config c ← Config {{ passus = 4 }}\n{body}\n}}\n")
}

// ---- SEM001: unknown names ----

#[test]
fn local_name() {
    let src = "incipit {\n    fixum numerus count ← 3\n    nota cuont\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean `count`?");
}

#[test]
fn local_name_assigned() {
    let src = "incipit {\n    varia numerus count ← 3\n    cuont ← 4\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean `count`?");
}

#[test]
fn global_name() {
    let util = "fixum numerus BASIS ← 40\n";
    let src = "importa ex \"./util\" privata BASIS\nfunctio f() → numerus { redde BASSI }\nincipit { nota f() }\n";
    expect_hint(
        src,
        &[("util.fab", util)],
        "SEM001",
        "did you mean `BASIS`?",
    );
}

#[test]
fn function_used_as_a_value() {
    let src = "functio dupla(numerus x) → numerus { redde 2 * x }\nincipit {\n    nota dulpa\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean `dupla`?");
}

#[test]
fn value_keyword() {
    let src = "incipit {\n    fixum bivalens b ← veru\n    nota b\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean `verum`?");
}

#[test]
fn statement_keyword_read_as_a_name() {
    // `nta x` is two expression statements, `nta` and `x`: the first is unknown.
    let src = "incipit {\n    fixum numerus x ← 1\n    nta x\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean the keyword `nota`?");
}

#[test]
fn binding_without_fixum() {
    let src = "incipit {\n    numerus x ← 1\n}\n";
    expect_hint(
        src,
        &[],
        "SEM001",
        "`numerus` is a type: a binding starts with `fixum` or `varia`: `fixum numerus x ← …`",
    );
}

// ---- SEM002: unknown functions and methods ----

#[test]
fn function() {
    let src =
        "functio dupla(numerus x) → numerus { redde 2 * x }\nincipit {\n    nota dulpa(2)\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `dupla`?");
}

#[test]
fn tensor_method() {
    let src = "importa ex \"gradus:nn\" privata nn\nincipit {\n    fixum tf32 x ← nn.zeros_initium([2, 3])\n    nota x.sumna()\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `summa`?");
}

#[test]
fn list_method() {
    let src = "incipit {\n    fixum lista<numerus> l ← [1, 2]\n    nota l.longitudn()\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `longitudo`?");
}

#[test]
fn text_method() {
    let src = "incipit {\n    fixum textus t ← \"Roma\"\n    nota t.minuscla()\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `minuscula`?");
}

#[test]
fn map_method() {
    let src =
        "incipit {\n    fixum tabula<textus, numerus> m ← {\"a\": 1}\n    nota m.clavse()\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `claves`?");
}

#[test]
fn genus_method() {
    expect_hint(
        &with_config("    nota c.summa_pasuum()"),
        &[],
        "SEM002",
        "did you mean `summa_passuum`?",
    );
}

#[test]
fn host_function() {
    let src = "incipit {\n    nota hospes.lege_textmu(\"x\")\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `lege_textum`?");
}

// ---- module members (SEM001 for values, SEM002 for calls) ----

#[test]
fn module_member_value() {
    let src = "importa ex \"gradus:nn\" privata nn\nincipit {\n    nota nn.softmx\n}\n";
    expect_hint(src, &[], "SEM001", "did you mean `softmax`?");
}

#[test]
fn module_member_call() {
    let src = "importa ex \"gradus:nn\" privata nn\nincipit {\n    fixum tf32 x ← nn.zeros_initium([2])\n    nota nn.sofmax(x)\n}\n";
    expect_hint(src, &[], "SEM002", "did you mean `softmax`?");
}

#[test]
fn module_member_in_another_imported_module() {
    let src = "importa ex \"gradus:nn\" privata nn\nimporta ex \"gradus:loss\" privata loss\nincipit {\n    fixum tf32 x ← nn.zeros_initium([2])\n    nota nn.mse(x, x)\n}\n";
    expect_hint(src, &[], "SEM002", "`mse` is in module `loss`: `loss.mse`");
}

#[test]
fn module_member_nothing_near_lists_the_module() {
    let src = "importa ex \"gradus:nn\" privata nn\nincipit {\n    fixum tf32 x ← nn.zeros_initium([2])\n    nota nn.dropout(x)\n}\n";
    let (text, diags) = diagnose(src, &[]);
    let d = diags.iter().find(|d| d.code.id == "SEM002").expect(&text);
    let hint = d.hint.as_deref().unwrap_or_default();
    assert!(
        hint.starts_with("the public functions of `gradus:nn` are `embedding`, `gelu`"),
        "{text}"
    );
    assert!(hint.contains("`linear`"), "{text}");
}

// ---- SEM007: record fields ----

#[test]
fn field_read() {
    expect_hint(
        &with_config("    nota c.lr_mni"),
        &[],
        "SEM007",
        "did you mean `lr_min`?",
    );
}

#[test]
fn field_assigned() {
    let body = "    varia Config d ← c\n    d.pasus ← 5";
    expect_hint(&with_config(body), &[], "SEM007", "did you mean `passus`?");
}

#[test]
fn field_in_record_literal() {
    let body = "    fixum Config d ← Config { lr_mni = 0.2 }\n    nota d.passus";
    expect_hint(&with_config(body), &[], "SEM007", "did you mean `lr_min`?");
}

// ---- SEM015: type names ----

#[test]
fn genus_type() {
    let body = "    fixum Confg d ← c\n    nota d.passus";
    expect_hint(&with_config(body), &[], "SEM015", "did you mean `Config`?");
}

#[test]
fn builtin_type() {
    let src = "incipit {\n    fixum numeros x ← 1\n    nota x\n}\n";
    expect_hint(src, &[], "SEM015", "did you mean `numerus`?");
}

#[test]
fn genus_of_a_record_literal() {
    let body = "    fixum Config d ← Confgi { passus = 1 }\n    nota d.passus";
    expect_hint(&with_config(body), &[], "SEM015", "did you mean `Config`?");
}

#[test]
fn type_in_another_module() {
    let src = "importa ex \"gradus:optimize\" privata optimize\nfunctio f(optimize.StatusAdm s) → numerus { redde 0 }\nincipit { nota 1 }\n";
    expect_hint(src, &[], "SEM015", "did you mean `StatusAdam`?");
}

// ---- SEM009: modules ----

#[test]
fn library_module() {
    let src = "importa ex \"gradus:optimise\" privata optimize\nincipit { nota 1 }\n";
    expect_hint(
        src,
        &[],
        "SEM009",
        "looked for `gradus:optimise.fab`; did you mean `gradus:optimize`?",
    );
}

#[test]
fn library_name() {
    let src = "importa ex \"gradu:nn\" privata nn\nincipit { nota 1 }\n";
    expect_hint(
        src,
        &[],
        "SEM009",
        "looked for `gradu:nn.fab`; did you mean `gradus:nn`?",
    );
}

#[test]
fn relative_module() {
    let util = "functio u() → numerus { redde 1 }\n";
    let src = "importa ex \"./sub/utli\" privata u\nincipit { nota u() }\n";
    expect_hint(
        src,
        &[("sub/util.fab", util)],
        "SEM009",
        "looked for `sub/utli.fab`; did you mean `./sub/util`?",
    );
}

// ---- no suggestion when nothing is near ----

#[test]
fn far_names_get_no_hint() {
    let src = "incipit {\n    fixum numerus count ← 3\n    nota zzzzzz\n}\n";
    let (text, diags) = diagnose(src, &[]);
    let d = diags.iter().find(|d| d.code.id == "SEM001").expect(&text);
    assert_eq!(d.hint, None, "{text}");
}

// ---- spellings from other languages (looked up by name, not by distance) ----

#[test]
fn english_else() {
    let src = "incipit {\n    fixum numerus x ← 1\n    si x > 0 { nota 1 } else { nota 2 }\n}\n";
    expect_hint(src, &[], "SEM001", "Faber writes `secus` for `else`");
}

#[test]
fn english_true() {
    let src = "incipit {\n    fixum bivalens b ← true\n    nota b\n}\n";
    expect_hint(src, &[], "SEM001", "Faber writes `verum` for `true`");
}

#[test]
fn english_print() {
    let src = "incipit {\n    print(1)\n}\n";
    expect_hint(src, &[], "SEM002", "Faber writes `nota …` for `print(…)`");
}

#[test]
fn english_method_len() {
    let src = "incipit {\n    fixum lista<numerus> l ← [1, 2]\n    nota l.len()\n}\n";
    expect_hint(
        src,
        &[],
        "SEM002",
        "Faber calls it `longitudo`: `.longitudo(…)`",
    );
}

#[test]
fn english_method_only_where_the_receiver_has_it() {
    // `mean` is a tensor method (`media`), not a list method.
    let src = "incipit {\n    fixum textus t ← \"x\"\n    nota t.mean()\n}\n";
    let (text, diags) = diagnose(src, &[]);
    let d = diags.iter().find(|d| d.code.id == "SEM002").expect(&text);
    assert_eq!(d.hint, None, "{text}");
}

// ---- a method read as a field (the `()` is missing) ----

#[test]
fn builtin_method_without_call() {
    let src = "incipit {\n    fixum lista<numerus> l ← [1]\n    nota l.longitudo\n}\n";
    expect_hint(
        src,
        &[],
        "SEM007",
        "`longitudo` is a method: call it with `.longitudo()`",
    );
}

#[test]
fn genus_method_without_call() {
    expect_hint(
        &with_config("    nota c.summa_passuum"),
        &[],
        "SEM007",
        "`summa_passuum` is a method: call it with `.summa_passuum()`",
    );
}

// ---- the command line's loader offers the bundled libraries and sibling files ----

#[test]
fn cli_loader_suggests_bundled_and_sibling_modules() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("faber-suggest");
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(
        dir.join("sub/util.fab"),
        "functio u() → numerus { redde 1 }\n",
    )
    .unwrap();
    let main = "importa ex \"gradus:optimise\" privata optimize\nimporta ex \"./sub/utli\" privata u\nincipit { nota 1 }\n";
    std::fs::write(dir.join("main.fab"), main).unwrap();
    let out = common::Faber::new()
        .args(["check", "main.fab"])
        .current_dir(&dir)
        .output();
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("did you mean `gradus:optimize`?"),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `./sub/util`?"), "{stderr}");
}
