//! Modules and imports through the library API with an in-memory loader: item and
//! namespace imports, `ut`, `publica` re-exports, `@ privata`, load-once, constants
//! initialised in dependency order, and the import errors (missing, cycle, escape).

use faber::eval::{run_entry, BufferIo};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;

fn run(files: &[(&str, &str)]) -> Result<String, Vec<String>> {
    let mut sources = SourceMap::new();
    let (entry_name, entry_text) = files[0];
    let entry = sources.add(entry_name, entry_text);
    let mut loader = MemoryLoader {
        files: files[1..]
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect(),
    };
    let program = faber::compile(&mut sources, entry, &mut loader).map_err(|ds| {
        ds.iter()
            .map(|d| {
                let (l, c) = sources.line_col(d.span);
                format!(
                    "{} {}:{}:{} {}",
                    d.code.id,
                    sources.name(d.span.file),
                    l,
                    c,
                    d.message
                )
            })
            .collect::<Vec<_>>()
    })?;
    let mut io = BufferIo::default();
    run_entry(&program, &mut io, &Default::default())
        .map_err(|e| vec![e.diagnostic.code.id.to_string()])?;
    Ok(io.out)
}

const UTIL: &str = "
fixum numerus BASIS ← 40
functio adde(numerus x) → numerus { redde x + BASIS }
@ privata
functio secretum() → numerus { redde 7 }
genus Par { numerus a  numerus b = 2 }
";

#[test]
fn namespace_alias_and_item_import() {
    let main = "
importa ex \"./util\" privata util
importa ex \"./util\" privata adde
importa ex \"./util\" privata adde ut plus
incipit {
    nota util.adde(2), adde(1), plus(0), util.BASIS
    fixum util.Par p ← util.Par { a = 1 }
    nota p.a + p.b
}
";
    assert_eq!(
        run(&[("main.fab", main), ("util.fab", UTIL)]).unwrap(),
        "42, 41, 40, 40\n3\n"
    );
}

#[test]
fn private_declarations_are_hidden() {
    let main = "importa ex \"./util\" privata util\nincipit { nota util.secretum() }\n";
    let errs = run(&[("main.fab", main), ("util.fab", UTIL)]).unwrap_err();
    assert!(errs[0].starts_with("SEM002 main.fab:2:"), "{errs:?}");
}

#[test]
fn publica_reexports() {
    let mid =
        "importa ex \"./util\" publica adde\nfunctio duplex(numerus x) → numerus { redde 2 * x }\n";
    let main = "importa ex \"./mid\" privata mid\nincipit { nota mid.adde(mid.duplex(1)) }\n";
    let out = run(&[("main.fab", main), ("mid.fab", mid), ("util.fab", UTIL)]).unwrap();
    assert_eq!(out, "42\n");
}

#[test]
fn modules_load_once_and_initialise_dependencies_first() {
    let a = "importa ex \"./c\" privata c\nfixum numerus A ← c.C + 1\n";
    let b = "importa ex \"./c\" privata c\nfixum numerus B ← c.C + 2\n";
    let c = "fixum numerus C ← 10\n";
    let main =
        "importa ex \"./a\" privata a\nimporta ex \"./b\" privata b\nincipit { nota a.A, b.B }\n";
    let out = run(&[("main.fab", main), ("a.fab", a), ("b.fab", b), ("c.fab", c)]).unwrap();
    assert_eq!(out, "11, 12\n");
}

#[test]
fn relative_imports_resolve_against_the_importer() {
    let main = "importa ex \"./lib/x\" privata x\nincipit { nota x.f() }\n";
    let x = "importa ex \"../lib/y\" privata y\nfunctio f() → numerus { redde y.g() + 1 }\n";
    let y = "functio g() → numerus { redde 1 }\n";
    let out = run(&[
        ("dir/main.fab", main),
        ("dir/lib/x.fab", x),
        ("dir/lib/y.fab", y),
    ])
    .unwrap();
    assert_eq!(out, "2\n");
}

#[test]
fn missing_module_is_located_at_the_import_string() {
    let main = "importa ex \"./nusquam\" privata n\nincipit { nota 1 }\n";
    let errs = run(&[("main.fab", main)]).unwrap_err();
    assert_eq!(errs.len(), 1);
    assert!(errs[0].starts_with("SEM009 main.fab:1:12"), "{errs:?}");
}

#[test]
fn import_cycle_names_the_chain() {
    let a = "importa ex \"./b\" privata b\nfunctio f() → numerus { redde 1 }\n";
    let b = "importa ex \"./a\" privata a\nfunctio g() → numerus { redde 2 }\n";
    let main = "importa ex \"./a\" privata a\nincipit { nota a.f() }\n";
    let errs = run(&[("main.fab", main), ("a.fab", a), ("b.fab", b)]).unwrap_err();
    assert!(
        errs[0].starts_with("SEM010 b.fab:1:12 import cycle: a.fab → b.fab → a.fab"),
        "{errs:?}"
    );
}

#[test]
fn library_imports_cannot_escape_their_root() {
    let main = "importa ex \"gradus:../secretum\" privata s\nincipit { nota 1 }\n";
    let errs = run(&[("main.fab", main)]).unwrap_err();
    assert!(errs[0].starts_with("SEM011 main.fab:1:12"), "{errs:?}");
    let nested = "importa ex \"../../x\" privata x\n";
    let main = "importa ex \"gradus:nn\" privata nn\nincipit { nota 1 }\n";
    let errs = run(&[("main.fab", main), ("gradus:nn.fab", nested)]).unwrap_err();
    assert!(errs[0].starts_with("SEM011 gradus:nn.fab:1:12"), "{errs:?}");
}

#[test]
fn out_of_subset_import_forms_are_rejected() {
    let main = "importa ex \"nn\" privata nn\nincipit { nota 1 }\n";
    let errs = run(&[("main.fab", main)]).unwrap_err();
    assert!(errs[0].starts_with("SEM014 main.fab:1:12"), "{errs:?}");
}

#[test]
fn a_star_import_binds_the_whole_module_as_a_namespace() {
    // `* ut adde` is the namespace even though the module exports a function `adde`.
    let main = "
importa ex \"./util\" privata * ut adde
incipit {
    nota adde.adde(2), adde.BASIS
}
";
    assert_eq!(
        run(&[("main.fab", main), ("util.fab", UTIL)]).unwrap(),
        "42, 40\n"
    );
}
