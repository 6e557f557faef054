//! A file of another reader locale fails only where its Latin twin fails, with the same
//! diagnostic in the user's spelling (docs/language.md § Reader locales, issue 23):
//!
//! * a file named `NAME.CODE.fab` is read in locale CODE: a Latin twin `main.la.fab` in a
//!   package of another locale, an English `x.en.fab` outside a package; its frontmatter
//!   still wins;
//! * `exitus` is a keyword only in the entry's header, so it and its spelling in every
//!   locale (Arabic `مخرج`) are names elsewhere;
//! * `scriptum("…§…", x)` (English `format`) is the call form of a template;
//! * a type mismatch names the types in the file's locale; a misspelt keyword is
//!   compared with the locale's keywords ignoring width and diacritics; a digit of
//!   another script gets the ASCII number as its hint, in every locale alike.

mod common;

use std::path::{Path, PathBuf};

use common::{faber, text};

fn scratch(name: &str) -> PathBuf {
    common::scratch_dir("locale-parity", name)
}

fn write(path: &Path, body: &str) {
    common::write_file(path, body)
}

/// `faber CMD PATH`: (exit code, stdout, stderr).
fn faber_on(cmd: &str, path: &Path) -> (i32, String, String) {
    let o = faber(&[cmd, path.to_str().expect("utf-8 path")]);
    (
        o.status.code().unwrap_or(-1),
        text(&o.stdout),
        text(&o.stderr),
    )
}

#[test]
fn a_file_name_names_the_locale() {
    let dir = scratch("file-name");
    write(
        &dir.join("faber.toml"),
        "[package]\nname = \"p\"\n[reader]\nlocale = \"zh-Hans\"\n",
    );
    // A Latin twin without frontmatter in a Chinese package.
    let twin = dir.join("twins/main.la.fab");
    write(
        &twin,
        "functio dupla(numerus n) → numerus {\n    redde 2 * n\n}\n\nincipit {\n    nota dupla(21)\n}\n",
    );
    let (status, out, err) = faber_on("run", &twin);
    assert_eq!((status, out.as_str()), (0, "42\n"), "{err}");
    // The same file named main.fab is read in the package's locale: `functio` is a name.
    let plain = dir.join("twins/main.fab");
    write(&plain, &std::fs::read_to_string(&twin).unwrap());
    let (status, _, err) = faber_on("run", &plain);
    assert_eq!(status, 1);
    assert!(err.contains("error[PARSE001]"), "{err}");
    // An English file outside any package.
    let lone = scratch("file-name-lone");
    let en = lone.join("hello.en.fab");
    write(&en, "main {\n    const int n ← 2\n    print n + 1\n}\n");
    let (status, out, err) = faber_on("run", &en);
    assert_eq!((status, out.as_str()), (0, "3\n"), "{err}");
    // The frontmatter wins over the name.
    let fm = lone.join("frontmatter.en.fab");
    write(
        &fm,
        "+++\nlocale = \"la\"\n+++\nincipit {\n    fixum numerus n ← 4\n    nota n\n}\n",
    );
    let (status, out, err) = faber_on("run", &fm);
    assert_eq!((status, out.as_str()), (0, "4\n"), "{err}");
    // A part that is no locale code leaves the name alone (Latin by default).
    let other = lone.join("salve.v2.fab");
    write(&other, "incipit {\n    nota 5\n}\n");
    let (status, out, err) = faber_on("run", &other);
    assert_eq!((status, out.as_str()), (0, "5\n"), "{err}");
}

#[test]
fn exitus_is_a_name_outside_the_entry_header() {
    let dir = scratch("exitus");
    let la = dir.join("la.fab");
    write(
        &la,
        "functio exitus(numerus n) → numerus {\n    redde n + 1\n}\n\nincipit exitus 3 {\n    fixum numerus exitus_ ← exitus(1)\n    varia textus exitus ← \"finis\"\n    nota exitus_, exitus\n}\n",
    );
    let (status, out, err) = faber_on("run", &la);
    assert_eq!((status, out.as_str()), (3, "2, finis\n"), "{err}");
    // The Arabic spelling of `exitus` as a value's name.
    let ar = dir.join("ar.fab");
    write(
        &ar,
        "+++\nlocale = \"ar\"\n+++\nبداية {\n  ثابت نص مخرج ← \"عالم\"\n  اعرض مخرج\n}\n",
    );
    let (status, out, err) = faber_on("run", &ar);
    assert_eq!((status, out.as_str()), (0, "عالم\n"), "{err}");
    // After `incipit argumenta a` it is still the exit code.
    let args = dir.join("args.fab");
    write(&args, "incipit argumenta a exitus 4 {\n    nota 1\n}\n");
    let (status, out, err) = faber_on("run", &args);
    assert_eq!((status, out.as_str()), (4, "1\n"), "{err}");
}

#[test]
fn scriptum_is_the_call_form_of_a_template() {
    let dir = scratch("scriptum");
    let la = dir.join("la.fab");
    write(
        &la,
        "incipit {\n    fixum textus s ← scriptum(\"§ et §\", 1, \"duo\")\n    nota s\n    nota scriptum(\"§1-§0\", 7, 8)\n}\n",
    );
    let (status, out, err) = faber_on("run", &la);
    assert_eq!((status, out.as_str()), (0, "1 et duo\n8-7\n"), "{err}");
    let en = dir.join("en.fab");
    write(
        &en,
        "+++\nlocale = \"en\"\n+++\nmain {\n    print format(\"[§]\", 9)\n}\n",
    );
    let (status, out, err) = faber_on("run", &en);
    assert_eq!((status, out.as_str()), (0, "[9]\n"), "{err}");
    // A function the user calls `scriptum` is theirs.
    let own = dir.join("own.fab");
    write(
        &own,
        "functio scriptum(textus t) → textus {\n    redde t + \"!\"\n}\n\nincipit {\n    nota scriptum(\"a§\")\n}\n",
    );
    let (status, out, err) = faber_on("run", &own);
    assert_eq!((status, out.as_str()), (0, "a§!\n"), "{err}");
    // Its template must be a text literal; holes and arguments must agree.
    let bad = dir.join("bad.fab");
    write(
        &bad,
        "incipit {\n    fixum textus t ← \"§\"\n    nota scriptum(t, 1)\n}\n",
    );
    let (status, _, err) = faber_on("check", &bad);
    assert_eq!(status, 1);
    assert!(
        err.contains("error[SEM016]") && err.contains("`scriptum` takes a text literal first"),
        "{err}"
    );
    let arity = dir.join("arity.fab");
    write(&arity, "incipit {\n    nota scriptum(\"§ §\", 1)\n}\n");
    let (status, _, err) = faber_on("check", &arity);
    assert_eq!(status, 1);
    assert!(err.contains("error[SEM016]"), "{err}");
}

#[test]
fn type_mismatches_name_the_types_in_the_files_locale() {
    let dir = scratch("types");
    let zh = dir.join("zh.fab");
    write(
        &zh,
        "+++\nlocale = \"zh-Hans\"\n+++\n入口 {\n  常量 整数 甲 ← \"错误\"\n  显示 甲\n}\n",
    );
    let (status, _, err) = faber_on("check", &zh);
    assert_eq!(status, 1);
    assert!(err.contains("expected `整数`, found `文本`"), "{err}");
    let en = dir.join("en.fab");
    write(
        &en,
        "+++\nlocale = \"en\"\n+++\nmain {\n    const list<int> xs ← [\"a\"]\n    print xs\n}\n",
    );
    let (status, _, err) = faber_on("check", &en);
    assert_eq!(status, 1);
    assert!(
        err.contains("`list<int>`") || err.contains("`int`"),
        "{err}"
    );
    assert!(!err.contains("numerus"), "{err}");
    // The Latin twin keeps the Latin names.
    let la = dir.join("la.fab");
    write(
        &la,
        "incipit {\n    fixum numerus a ← \"x\"\n    nota a\n}\n",
    );
    let (_, _, err) = faber_on("check", &la);
    assert!(err.contains("expected `numerus`, found `textus`"), "{err}");
}

#[test]
fn misspelt_keywords_and_foreign_digits_get_the_same_hints_in_every_locale() {
    let dir = scratch("hints");
    let cases = [
        // (locale, source line, the hint the diagnostic must carry)
        ("la", "functioo salve() { }\n", "did you mean `functio`?"),
        (
            "la",
            "ｆｕｎｃｔｉｏ salve() { }\n",
            "did you mean `functio`?",
        ),
        ("vi", "hamm chào() { }\n", "did you mean `hàm`?"),
        ("vi", "ｈａｍ chào() { }\n", "did you mean `hàm`?"),
    ];
    for (i, (locale, src, hint)) in cases.iter().enumerate() {
        let f = dir.join(format!("k{i}.fab"));
        write(&f, &format!("+++\nlocale = \"{locale}\"\n+++\n{src}"));
        let (status, _, err) = faber_on("check", &f);
        assert_eq!(status, 1, "{src}");
        assert!(
            err.contains("error[PARSE001]") && err.contains(hint),
            "{src}: {err}"
        );
    }
    let digits = [
        ("la", "incipit {\n    nota ١٢\n}\n", "`12`"),
        ("ar", "بداية {\n  اعرض ١\n}\n", "`1`"),
        ("hi", "आरंभ {\n  दिखाओ १\n}\n", "`1`"),
        ("zh-Hant", "入口 {\n  顯示 １２\n}\n", "`12`"),
    ];
    for (i, (locale, src, n)) in digits.iter().enumerate() {
        let f = dir.join(format!("d{i}.fab"));
        write(&f, &format!("+++\nlocale = \"{locale}\"\n+++\n{src}"));
        let (status, _, err) = faber_on("check", &f);
        assert_eq!(status, 1, "{src}");
        assert!(
            err.contains("error[LEX001]")
                && err.contains(&format!(
                    "written in ASCII digits in every reader locale: {n}"
                )),
            "{src}: {err}"
        );
    }
}

#[test]
fn the_conditional_expression_in_other_locales() {
    let dir = scratch("sic");
    let th = dir.join("th.fab");
    write(
        &th,
        "+++\nlocale = \"th-TH\"\n+++\nเริ่ม {\n  คงที่ จำนวน n ← 3\n  แสดง n > 2 เช่นนั้น \"มาก\" มิฉะนั้น \"น้อย\"\n}\n",
    );
    let (status, out, err) = faber_on("run", &th);
    assert_eq!((status, out.as_str()), (0, "มาก\n"), "{err}");
    // English has no spelling of it: `sic` is a plain name there, so the line does
    // not parse.
    let en = dir.join("en.fab");
    write(
        &en,
        "+++\nlocale = \"en\"\n+++\nmain {\n    print true sic 1 else 2\n}\n",
    );
    let (status, _, err) = faber_on("check", &en);
    assert_eq!(status, 1);
    assert!(err.contains("error[PARSE"), "{err}");
}
