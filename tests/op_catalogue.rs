//! docs/ops.md's op catalogue is the op registry (src/ir/ops.rs) as a table: one
//! row per op of `Op::ALL`, in its order, with its operand count, kind, result, kernel
//! (the row's run column) and one-line doc, and nothing else between the markers. The test compares the section
//! with the table generated from the registry; `OP_CATALOGUE_WRITE=1 cargo test --test
//! op_catalogue` rewrites the section.

use faber::ir::ops::{Op, OpResult};

const BEGIN: &str =
    "<!-- op-catalogue:begin (tests/op_catalogue.rs writes this table from src/ir/ops.rs) -->";
const END: &str = "<!-- op-catalogue:end -->";

fn result_text(r: OpResult) -> &'static str {
    match r {
        OpResult::Tensor => "tensor",
        OpResult::Float => "`fractus`",
        OpResult::IntList => "`lista<numerus>`",
        OpResult::FloatList => "`lista<fractus>`",
        OpResult::Int => "`numerus`",
        OpResult::Pair => "`iuncta` of 2 tensors",
        OpResult::Triple => "`iuncta` of 3 tensors",
    }
}

/// A table cell: `|` would end the cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|")
}

fn catalogue() -> String {
    let mut out = String::from(
        "| op | operands | kind | result | kernel | what it computes |\n|---|---|---|---|---|---|\n",
    );
    for &op in Op::ALL {
        let kernel = match op.kernel() {
            Some(k) => format!("`tensor::{k}`"),
            None => "by hand (eval)".to_string(),
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} | {} | {} |\n",
            op.name(),
            op.arity(),
            cell(&op.kind().describe()),
            result_text(op.result()),
            kernel,
            cell(op.doc())
        ));
    }
    out
}

#[test]
fn every_op_has_a_one_line_doc() {
    for &op in Op::ALL {
        let doc = op.doc();
        assert!(
            !doc.is_empty() && !doc.contains('\n'),
            "`{}`: {doc:?}",
            op.name()
        );
        assert!(
            doc.ends_with('.') || doc.ends_with(')'),
            "`{}`: the doc should be a sentence: {doc:?}",
            op.name()
        );
    }
}

#[test]
fn the_catalogue_in_docs_tensors_md_is_the_registry() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ops.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let want = format!("{BEGIN}\n{}{END}", catalogue());
    let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/ops.md has no `{BEGIN}` … `{END}` section");
    };
    let have = &doc[a..b + END.len()];
    if have != want {
        if std::env::var_os("OP_CATALOGUE_WRITE").is_some() {
            std::fs::write(path, doc.replacen(have, &want, 1)).unwrap();
            return;
        } else {
            panic!("docs/ops.md's op catalogue differs from src/ir/ops.rs; rerun with OP_CATALOGUE_WRITE=1. Expected:\n{want}");
        }
    }
    // Each op once in the section (a second row, or a row for no op, would differ from
    // the generated table above; this names the op when one is missing).
    for &op in Op::ALL {
        let row = format!("| `{}` |", op.name());
        assert_eq!(have.matches(&row).count(), 1, "`{}`", op.name());
    }
}
