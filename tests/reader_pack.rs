//! A package's own reader pack (docs/language.md § Reader locales, src/syntax/pack.rs):
//! `reader/<locale>.toml` beside `faber.toml` gives keywords and types the package's
//! spellings (`[keywords]`, `[types]`) and lets its files use a fallback locale's words
//! (`[pack] fallback`); a pack that does not read is CLI002.

mod common;

use std::path::{Path, PathBuf};

fn package(name: &str, pack: Option<&str>, main: &str) -> PathBuf {
    let dir = common::scratch_dir("reader-pack", name);
    common::write_file(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[paths]\nsource = \"src\"\nentry = \"main.fab\"\n[reader]\nlocale = \"th-TH\"\n",
    );
    if let Some(p) = pack {
        common::write_file(&dir.join("reader").join("th-TH.toml"), p);
    }
    common::write_file(&dir.join("src").join("main.fab"), main);
    dir
}

fn run(dir: &Path) -> (Option<i32>, String, String) {
    let out = common::faber(&["run", dir.to_str().unwrap()]);
    (
        out.status.code(),
        common::text(&out.stdout),
        common::text(&out.stderr),
    )
}

/// Latin keywords in a file of a Thai package.
const LATIN: &str = "incipit {\n    fixum numerus n ← 2\n    nota n + 1\n}\n";

#[test]
fn a_fallback_locale_s_words_are_read() {
    let with = package(
        "fallback",
        Some("[pack]\nid = \"th-TH\"\nfallback = [\"la\"]\n"),
        LATIN,
    );
    assert_eq!(run(&with), (Some(0), "3\n".into(), String::new()));
    // Without the pack, the same file is Thai and its Latin words are not keywords.
    let without = package("no-pack", None, LATIN);
    let (code, _, err) = run(&without);
    assert_eq!(code, Some(1));
    assert!(err.starts_with("error[PARSE001]"), "{err}");
}

#[test]
fn the_pack_s_spellings_come_before_the_table_s() {
    // `จาก` is `de` in the table's Thai column; this pack makes it `ex`, and gives
    // `nota` a spelling of its own.
    let pack = "[keywords]\nex = \"จาก\"\nnota = \"พิมพ์ออก\"\n";
    let main = "+++\nlocale = \"th-TH\"\n+++\nเริ่ม {\n    คงที่ รายการ<จำนวน> xs ← [10, 20]\n    วน จาก xs คงที่ x {\n        พิมพ์ออก x\n    }\n}\n";
    let dir = package("override", Some(pack), main);
    assert_eq!(run(&dir), (Some(0), "10\n20\n".into(), String::new()));
}

#[test]
fn a_pack_that_does_not_read_is_cli002() {
    for (name, pack, says) in [
        (
            "bad-fallback",
            "[pack]\nfallback = [\"xx\"]\n",
            "unknown locale `xx`",
        ),
        (
            "bad-keyword",
            "[keywords]\nnullum = \"x\"\n",
            "`nullum` is no keyword",
        ),
        ("bad-toml", "[keywords\n", "reader pack:"),
    ] {
        let dir = package(name, Some(pack), LATIN);
        let (code, _, err) = run(&dir);
        assert_eq!(code, Some(1), "{name}: {err}");
        assert!(
            err.starts_with("error[CLI002]: reader pack:") && err.contains(says),
            "{name}: {err}"
        );
    }
}
