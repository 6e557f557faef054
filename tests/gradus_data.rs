//! gradus:data, gradus:metrics and the progress report through the built binary: every
//! bad input named by the issue (a missing file, a ragged CSV row, a field that is not a
//! number, an unknown column or tensor name, labels out of range for one-hot, a batch
//! size of 0 or larger than the dataset) is a diagnostic with a code and exit 1, never a
//! panic; and on a non-terminal the progress report is the final line alone.

use std::path::PathBuf;
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("faber-gradus-data-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `main.fab` (with the extra files) in a fresh directory; stderr is a pipe.
fn run(name: &str, program: &str, files: &[(&str, &str)]) -> (Output, PathBuf) {
    let dir = scratch(name);
    std::fs::write(dir.join("main.fab"), program).unwrap();
    for (path, text) in files {
        std::fs::write(dir.join(path), text).unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_faber"))
        .args(["run", "main.fab"])
        .current_dir(&dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("the faber binary runs");
    (out, dir)
}

fn expect_error(name: &str, program: &str, files: &[(&str, &str)], code: &str, needles: &[&str]) {
    let (out, dir) = run(name, program, files);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: {stderr}");
    assert!(
        stderr.contains(&format!("error[{code}]")),
        "{name}: wanted {code}\n{stderr}"
    );
    for n in needles {
        assert!(stderr.contains(n), "{name}: wanted `{n}` in\n{stderr}");
    }
    assert!(
        !stderr.contains("panicked") && !stderr.contains("please report"),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

const READ_CSV: &str = "importa ex \"gradus:data\" privata data\nincipit {\n    nota data.lege_csv(\"d.csv\").magnitudines()\n}\n";

#[test]
fn a_missing_csv_file_is_run017() {
    expect_error("missing", READ_CSV, &[], "RUN017", &["cannot read `d.csv`"]);
}

#[test]
fn a_ragged_row_names_file_line_and_column() {
    // line 3 "4,5" has two of three fields; the missing one would start at column 4
    expect_error(
        "ragged",
        READ_CSV,
        &[("d.csv", "a,b,c\n1,2,3\n4,5\n")],
        "RUN020",
        &["d.csv:3:4: this row has 2 fields but the header has 3"],
    );
}

#[test]
fn a_field_that_is_not_a_number_names_its_place() {
    expect_error(
        "nan",
        READ_CSV,
        &[("d.csv", "a,b\n1,2\n3,x7\n")],
        "RUN020",
        &["d.csv:3:3: `x7` in column `b` is not a number"],
    );
}

#[test]
fn an_unknown_column_is_named() {
    let program = "importa ex \"gradus:data\" privata data\nincipit {\n    nota data.lege_csv_columnas(\"d.csv\", \",\", verum, [\"lable\"])\n}\n";
    expect_error(
        "column",
        program,
        &[("d.csv", "x,label\n1,2\n")],
        "RUN020",
        &["no column `lable`", "did you mean `label`?"],
    );
}

#[test]
fn a_missing_tensor_name_is_run017() {
    let fixture = format!(
        "{}/tests/fixtures/safetensors/floats.safetensors",
        env!("CARGO_MANIFEST_DIR")
    );
    let program = format!("importa ex \"gradus:data\" privata data\nincipit {{\n    nota data.lege_tensorem(\"{fixture}\", \"cube_f46\")\n}}\n");
    expect_error(
        "tensor",
        &program,
        &[],
        "RUN017",
        &["has no tensor `cube_f46`", "did you mean `cube_f64`?"],
    );
}

#[test]
fn labels_out_of_range_for_one_hot_are_named() {
    let program = "importa ex \"gradus:data\" privata data\nincipit {\n    fixum tf32[] z ← vacua\n    nota data.unum_calidum(z.strue([3.0, 10.0], [2]), 10)\n}\n";
    expect_error(
        "onehot",
        program,
        &[],
        "RUN007",
        &["label 10.0 (element 1 of the labels) is not a class id in [0, 10)"],
    );
}

fn batches(b: i64) -> String {
    format!("importa ex \"gradus:data\" privata data\nincipit {{\n    fixum tf32[] z ← vacua\n    fixum data.Copia d ← data.Copia {{ x = z.crea(1.0, [5, 2]), y = z.crea(0.0, [5]) }}\n    nota data.acervi(d, {b}, falsum, 1).longitudo()\n}}\n")
}

#[test]
fn batch_sizes_of_zero_or_above_the_dataset_are_errors() {
    expect_error(
        "b0",
        &batches(0),
        &[],
        "RUN007",
        &["acervi: the batch size is 0; it must be at least 1"],
    );
    expect_error(
        "b6",
        &batches(6),
        &[],
        "RUN007",
        &["acervi: the batch size 6 is larger than the dataset (5 rows)"],
    );
    let (out, _) = run("b5", &batches(5), &[]);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "1\n");
}

#[test]
fn rows_of_x_and_y_that_differ_are_an_error() {
    let program = "importa ex \"gradus:data\" privata data\nincipit {\n    fixum tf32[] z ← vacua\n    nota data.misce(data.Copia { x = z.crea(1.0, [5, 2]), y = z.crea(0.0, [4]) }, 1)\n}\n";
    expect_error(
        "rows",
        program,
        &[],
        "RUN007",
        &["x has 5 rows but y has 4"],
    );
}

#[test]
fn on_a_non_terminal_the_progress_report_is_the_final_line_only() {
    // 200 quick steps through train.disce: stderr is a pipe, so no transient line is
    // drawn and the one line is the report after the last step.
    let program = "importa ex \"gradus:train\" privata train\nfunctio adde(numerus s, numerus i) → numerus {\n    redde s + i\n}\nincipit {\n    nota train.disce(0, 200, adde)\n}\n";
    let (out, dir) = run("progress", program, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "19900\n");
    assert_eq!(stderr.lines().count(), 1, "{stderr:?}");
    let line = stderr.strip_suffix('\n').expect("one whole line");
    assert!(line.starts_with("step 200/200  "), "{line}");
    assert!(
        line.contains(" s  ETA 0.0 s  ") && line.ends_with(" steps/s"),
        "{line}"
    );
    assert!(!line.contains('\r') && !line.contains('\x1b'), "{line:?}");
    let _ = std::fs::remove_dir_all(dir);
}
