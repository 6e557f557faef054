//! `hospes.lege_csv(via, separator, caput, columnae)`: a numeric CSV file as a
//! `[rows, columns]` tensor (gradus:data's `lege_csv`).
//!
//! The file is UTF-8 text, one row per line (`\n` or `\r\n`); empty lines at the end
//! are ignored, an empty line elsewhere is a row without fields. With `caput` the first
//! line names the columns; without it the columns are named `"0"`, `"1"`, … and the
//! first row fixes their count. `columnae` selects columns by name, in the order given
//! (empty: every column); only the selected fields are read as numbers, so a text
//! column that is not selected is allowed. A field is trimmed of spaces and of one pair
//! of double quotes and must be a finite number (Rust's `f64` syntax: `3`, `-0.5`,
//! `1e-3`). Every malformed row is a RUN020 diagnostic naming `file:line:column`
//! (1-based; the column counts characters), never a row silently dropped or padded.

use std::rc::Rc;

use super::value::Value;
use super::{fault, FResult, Io};
use crate::diag::{codes, suggest};
use crate::tensor::Tensor;

/// The arguments of `hospes.lege_csv`, after type checks.
pub(crate) struct CsvRequest<'a> {
    pub path: &'a str,
    pub separator: char,
    pub header: bool,
    pub columns: Vec<String>,
}

/// Reads and parses the file of `req` through `io`.
pub(crate) fn read(req: &CsvRequest, io: &mut dyn Io) -> FResult<Value> {
    let text = match io.read_file(req.path) {
        Ok(s) => s,
        Err(e) => return fault(codes::RUN_HOST, format!("cannot read `{}`: {e}", req.path)),
    };
    let (data, rows, cols) = match parse(&text, req) {
        Ok(parsed) => parsed,
        Err(msg) => return fault(codes::RUN_DATA, msg),
    };
    // In the run's precision (docs/precision.md).
    match Tensor::from_flat(data, &[rows, cols])
        .and_then(|t| t.to_dtype(crate::tensor::precision()))
    {
        Ok(t) => Ok(Value::Tensor(Rc::new(t))),
        Err(e) => fault(codes::RUN_LIMIT, format!("`{}`: {}", req.path, e.message)),
    }
}

/// The fields of one line with the 1-based character column each starts at.
fn fields(line: &str, sep: char) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start_byte = 0;
    let mut start_col = 1;
    let mut col = 1;
    for (i, c) in line.char_indices() {
        col += 1;
        if c == sep {
            out.push((start_col, &line[start_byte..i]));
            start_byte = i + c.len_utf8();
            start_col = col;
        }
    }
    out.push((start_col, &line[start_byte..]));
    out
}

/// A field trimmed of spaces and one pair of surrounding double quotes.
fn unquote(field: &str) -> &str {
    let t = field.trim();
    if t.len() >= 2 && t.starts_with('"') && t.ends_with('"') {
        t[1..t.len() - 1].trim()
    } else {
        t
    }
}

/// The selected values row-major, the row count and the selected column count; a
/// malformed file is the message of a RUN020 diagnostic.
pub(crate) fn parse(text: &str, req: &CsvRequest) -> Result<(Vec<f64>, usize, usize), String> {
    let path = req.path;
    let mut lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.is_empty() {
        return Err(format!("`{path}` is empty: it has no header and no rows"));
    }
    let first = fields(lines[0], req.separator);
    let names: Vec<String> = if req.header {
        first.iter().map(|(_, f)| unquote(f).to_string()).collect()
    } else {
        (0..first.len()).map(|i| i.to_string()).collect()
    };
    let selected: Vec<usize> = if req.columns.is_empty() {
        (0..names.len()).collect()
    } else {
        let mut sel = Vec::with_capacity(req.columns.len());
        for want in &req.columns {
            match names.iter().position(|n| n == want) {
                Some(k) => sel.push(k),
                None => {
                    let hint = suggest::hint(want, names.iter().map(|s| s.as_str()))
                        .map(|h| format!("; {h}"))
                        .unwrap_or_default();
                    let what = if req.header {
                        format!("its header names {}", names.len())
                    } else {
                        format!(
                            "without a header its {} columns are named \"0\" … \"{}\"",
                            names.len(),
                            names.len().saturating_sub(1)
                        )
                    };
                    return Err(format!("`{path}` has no column `{want}` ({what}){hint}"));
                }
            }
        }
        sel
    };
    let body = if req.header { &lines[1..] } else { &lines[..] };
    let first_line = if req.header { 2 } else { 1 };
    let mut data = Vec::new();
    for (k, line) in body.iter().enumerate() {
        let at = first_line + k;
        let fs = fields(line, req.separator);
        if fs.len() != names.len() {
            let col = if fs.len() > names.len() {
                fs[names.len()].0
            } else {
                line.chars().count() + 1
            };
            let against = if req.header {
                "the header"
            } else {
                "the first row"
            };
            return Err(format!(
                "{path}:{at}:{col}: this row has {} field{} but {against} has {}",
                fs.len(),
                if fs.len() == 1 { "" } else { "s" },
                names.len()
            ));
        }
        for &c in &selected {
            let (col, raw) = fs[c];
            let field = unquote(raw);
            let v: f64 = match field.parse() {
                Ok(v) => v,
                Err(_) if field.is_empty() => {
                    return Err(format!(
                        "{path}:{at}:{col}: column `{}` is empty, not a number",
                        names[c]
                    ))
                }
                Err(_) => {
                    return Err(format!(
                        "{path}:{at}:{col}: `{field}` in column `{}` is not a number",
                        names[c]
                    ))
                }
            };
            if !v.is_finite() {
                return Err(format!(
                    "{path}:{at}:{col}: `{field}` in column `{}` is not a finite number",
                    names[c]
                ));
            }
            data.push(v);
        }
    }
    Ok((data, body.len(), selected.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(header: bool, columns: &[&str]) -> CsvRequest<'static> {
        CsvRequest {
            path: "d.csv",
            separator: ',',
            header,
            columns: columns.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn header_selection_and_quotes() {
        let (d, r, c) = parse("a,b,c\n1, 2,\"3\"\r\n4,5,6\n\n", &req(true, &["c", "a"])).unwrap();
        assert_eq!((r, c), (2, 2));
        assert_eq!(d, vec![3.0, 1.0, 6.0, 4.0]);
    }

    #[test]
    fn no_header_names_columns_by_number() {
        let (d, r, c) = parse(
            "1;x;2\n3;y;4",
            &CsvRequest {
                separator: ';',
                ..req(false, &["2", "0"])
            },
        )
        .unwrap();
        assert_eq!((d, r, c), (vec![2.0, 1.0, 4.0, 3.0], 2, 2));
    }

    #[test]
    fn unselected_text_columns_are_not_parsed() {
        let (d, _, _) = parse("name,v\nalpha,1\nbeta,2", &req(true, &["v"])).unwrap();
        assert_eq!(d, vec![1.0, 2.0]);
    }

    #[test]
    fn malformed_rows_name_line_and_column() {
        // line 3 has two fields; the missing one would start after the last character
        let e = parse("a,b,c\n1,2,3\n4,5\n", &req(true, &[])).unwrap_err();
        assert!(
            e.starts_with("d.csv:3:4: this row has 2 fields but the header has 3"),
            "{e}"
        );
        // an extra field: its first character is column 7 of "1,2,3,9"
        let e = parse("a,b,c\n1,2,3,9\n", &req(true, &[])).unwrap_err();
        assert!(e.starts_with("d.csv:2:7:"), "{e}");
        // "x1" starts at column 3 of line 2
        let e = parse("a,b\n1,x1\n", &req(true, &[])).unwrap_err();
        assert!(
            e.starts_with("d.csv:2:3: `x1` in column `b` is not a number"),
            "{e}"
        );
        let e = parse("a,b\n1,\n", &req(true, &[])).unwrap_err();
        assert!(e.starts_with("d.csv:2:3: column `b` is empty"), "{e}");
        let e = parse("a\ninf\n", &req(true, &[])).unwrap_err();
        assert!(e.contains("not a finite number"), "{e}");
        // an empty line inside the data is a ragged row, not skipped
        let e = parse("a,b\n1,2\n\n3,4\n", &req(true, &[])).unwrap_err();
        assert!(e.starts_with("d.csv:3:1: this row has 1 field but"), "{e}");
    }

    #[test]
    fn unknown_columns_and_empty_files() {
        let e = parse("alpha,beta\n1,2", &req(true, &["bet"])).unwrap_err();
        assert!(e.contains("no column `bet`") && e.contains("`beta`"), "{e}");
        assert!(parse("\n\n", &req(true, &[]))
            .unwrap_err()
            .contains("is empty"));
        // a header and no rows: a [0, C] tensor
        assert_eq!(parse("a,b\n", &req(true, &[])).unwrap(), (vec![], 0, 2));
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let e = parse("ā,b\n1,ē\n", &req(true, &[])).unwrap_err();
        assert!(e.starts_with("d.csv:2:3:"), "{e}");
        let e = parse("a,b\nā,x\n", &req(true, &["b"])).unwrap_err();
        assert!(e.starts_with("d.csv:2:3:"), "{e}");
    }
}
