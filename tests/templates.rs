//! Template folders (docs/cli.md § faber.toml, docs/language.md § Modules): faber.toml's
//! `[paths.templates]` names folders of shared modules outside the package, and
//! `importa ex "§name/stem"` reads `<folder>/stem.fab`. A template's own relative
//! imports stay inside its folder; a name the manifest does not declare is SEM009.

mod common;

use std::path::{Path, PathBuf};

use common::{faber, text};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("template-tests", name)
}

fn write(path: &Path, body: &str) {
    common::write_file(path, body)
}

/// `faber VERB PATH`: (exit code, stdout, stderr).
fn faber_at(verb: &str, path: &Path) -> (i32, String, String) {
    let o = faber(&[verb, path.to_str().expect("utf-8 path")]);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

/// A package `app` beside a shared folder `common/lib`, which its manifest names `lib`.
fn package(root: &Path, main: &str) -> PathBuf {
    let app = root.join("packages/app");
    write(
        &app.join("faber.toml"),
        "[package]\nname = \"app\"\n\n[paths.templates]\nlib = \"../../common/lib\"\n",
    );
    write(&app.join("src/main.fab"), main);
    write(
        &root.join("common/lib/greet.fab"),
        "importa ex \"./words\" privata salve\n\nfunctio greet(textus who) → textus {\n    redde salve() + \", \" + who\n}\n",
    );
    write(
        &root.join("common/lib/words.fab"),
        "functio salve() → textus {\n    redde \"salve\"\n}\n",
    );
    app
}

#[test]
fn a_template_module_and_its_own_imports_load() {
    let root = scratch("ok");
    let app = package(
        &root,
        "importa ex \"§lib/greet\" privata greet\n\nincipit {\n    nota greet(\"munde\")\n}\n",
    );
    let (status, out, err) = faber_at("run", &app);
    assert_eq!((status, out.as_str()), (0, "salve, munde\n"), "{err}");
    // The entry file given directly finds its manifest and the template too.
    let (status, out, err) = faber_at("run", &app.join("src/main.fab"));
    assert_eq!((status, out.as_str()), (0, "salve, munde\n"), "{err}");
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 0, "{err}");
}

#[test]
fn an_undeclared_template_is_not_found() {
    let root = scratch("undeclared");
    let app = package(
        &root,
        "importa ex \"§other/greet\" privata greet\n\nincipit {\n    nota greet(\"x\")\n}\n",
    );
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 1);
    assert!(err.contains("error[SEM009]"), "{err}");
    assert!(err.contains("cannot find module `§other/greet`"), "{err}");
    assert!(err.contains("[paths.templates]"), "{err}");
}

#[test]
fn a_missing_module_of_a_template_is_not_found() {
    let root = scratch("missing");
    let app = package(
        &root,
        "importa ex \"§lib/gret\" privata greet\n\nincipit {\n    nota greet(\"x\")\n}\n",
    );
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 1);
    assert!(err.contains("error[SEM009]"), "{err}");
    assert!(err.contains("common/lib/gret.fab"), "{err}");
}

#[test]
fn a_template_import_cannot_climb_out_of_its_folder() {
    let root = scratch("escape");
    let app = package(
        &root,
        "importa ex \"§lib/../secret\" privata s\n\nincipit {\n    nota s()\n}\n",
    );
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 1);
    assert!(err.contains("error[SEM011]"), "{err}");
    // Nor can a template module's own relative import.
    write(
        &root.join("common/lib/greet.fab"),
        "importa ex \"../outside\" privata o\n\nfunctio greet(textus w) → textus {\n    redde w\n}\n",
    );
    write(
        &root.join("common/outside.fab"),
        "functio o() → textus {\n    redde \"o\"\n}\n",
    );
    let app = root.join("packages/app");
    write(
        &app.join("src/main.fab"),
        "importa ex \"§lib/greet\" privata greet\n\nincipit {\n    nota greet(\"x\")\n}\n",
    );
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 1);
    assert!(err.contains("error[SEM011]"), "{err}");
}

#[test]
fn a_template_setting_must_be_a_relative_path() {
    let root = scratch("setting");
    let app = package(&root, "incipit {\n}\n");
    write(
        &app.join("faber.toml"),
        "[package]\nname = \"app\"\n\n[paths.templates]\nlib = \"/etc\"\n",
    );
    let (status, _, err) = faber_at("check", &app);
    assert_eq!(status, 1);
    assert!(err.contains("error[CLI002]"), "{err}");
    assert!(err.contains("templates.lib"), "{err}");
}
