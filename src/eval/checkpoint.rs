//! Checkpoints of parameter and training-state trees: safetensors files
//! (`hospes.serva_tensores` / `carga_tensores`) and faber's versioned byte envelope
//! around them (`hospes.tensores_ad_octetos` / `tensores_ex_octetis`).
//!
//! A checkpoint stores every leaf of the tree under its dotted path (`strata.0.wq`,
//! `passus`): tensors as F64 or F32 of their shape (as they are stored; a tensor is
//! read back in the element type of the tree's tensor it fills, docs/precision.md), and the other values a training state
//! holds as 0-d or 1-d entries — `numerus` as I64 `[]` (exact, no rounding through
//! f64), `fractus` as F64 `[]` (bit for bit), `bivalens` as BOOL `[]`, `textus` as the
//! U8 bytes of its UTF-8 `[n]` and `octeti` as U8 `[n]`. `nihil` is not stored (the
//! field keeps the value of the tree it is read into); a `tabula` or a function in the
//! tree is an error rather than a silently dropped field. The metadata is
//! `{"format": "faber"}`.
//!
//! Reading fills a tree shaped like `similis` by name. A missing tensor is an error.
//! A missing number, flag or text is an error in a file faber wrote (its metadata says
//! `format: faber`); a file from another tool (PyTorch's `save_file` of a state dict)
//! holds only tensors, so there such fields keep `similis`'s values.
//!
//! Envelope, version 2: the 8 bytes `FABERPT\0`, the version as a little-endian u32,
//! four zero bytes (reserved), then the safetensors payload. Version 1 (before numbers
//! were stored) is still read: its tensors load as before, and a tree with a number
//! field then fails by name instead of restoring the number as `similis`'s. A reader
//! rejects another magic and any version it does not know, so the layout can change
//! without old readers misreading new data.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use super::tree::{too_deep, walk_paths, MAX_DEPTH};
use super::value::{Record, Value};
use super::{fault, FResult};
use crate::diag::codes::{self, Code};
use crate::ir::host::Host;
use crate::ir::Program;
use crate::serialize::safetensors::{self, Data, Dtype, Item, RawTensor};
use crate::tensor::fmt_shape;

pub(crate) const MAGIC: &[u8; 8] = b"FABERPT\0";
pub(crate) const VERSION: u32 = 2;
/// Envelope versions this faber reads.
const READABLE: [u32; 2] = [1, VERSION];
/// The metadata entry faber writes into every checkpoint.
pub(crate) const FORMAT: (&str, &str) = ("format", "faber");

/// The stored leaves of a tree with their dotted paths, depth first: record fields in
/// declaration order, list and tuple items in order (the order of `hospes.folia`, with
/// the non-tensor leaves in their places).
pub(crate) fn stored<'a>(
    prog: &Program,
    v: &'a Value,
    path: &mut String,
    out: &mut Vec<(String, &'a Value)>,
    depth: usize,
) -> FResult<()> {
    walk_paths(prog, v, path, depth, &mut |name, leaf| match leaf {
        Value::Tensor(_)
        | Value::Int(_)
        | Value::Float(_)
        | Value::Bool(_)
        | Value::Text(_)
        | Value::Bytes(_) => {
            let name = if name.is_empty() { "tensor" } else { name };
            out.push((name.to_string(), leaf));
            Ok(())
        }
        Value::Nihil => Ok(()),
        _ => {
            let at = if name.is_empty() { "the tree" } else { name };
            fault(
                codes::RUN_HOST,
                format!(
                    "a checkpoint cannot store `{at}`, a {}: it stores tensors, numbers, flags and texts",
                    leaf.type_name()
                ),
            )
        }
    })
}

/// One leaf as the dtype, shape and elements it is stored with.
fn entry(v: &Value) -> (Dtype, Vec<usize>, Elements<'_>) {
    let bytes = |b: &[u8]| -> (Dtype, Vec<usize>, Elements<'_>) {
        let ints = b.iter().map(|&x| x as i64).collect();
        (Dtype::U8, vec![b.len()], Elements::Integers(ints))
    };
    match v {
        Value::Tensor(t) => match t.data_f32() {
            Some(x) => (Dtype::F32, t.shape().to_vec(), Elements::Floats32(x)),
            None => (
                Dtype::F64,
                t.shape().to_vec(),
                Elements::Floats(Cow::Borrowed(t.data())),
            ),
        },
        Value::Int(n) => (Dtype::I64, vec![], Elements::Integers(vec![*n])),
        Value::Float(x) => (Dtype::F64, vec![], Elements::Floats(Cow::Owned(vec![*x]))),
        Value::Bool(b) => (Dtype::Bool, vec![], Elements::Integers(vec![*b as i64])),
        Value::Text(s) => bytes(s.as_bytes()),
        Value::Bytes(b) => bytes(b),
        // `stored` yields only the kinds above.
        _ => (Dtype::F64, vec![0], Elements::Floats(Cow::Borrowed(&[]))),
    }
}

/// The elements of one entry: f64 values (f64 tensors, `fractus`), f32 values (f32
/// tensors, stored as F32) or exact integers.
enum Elements<'a> {
    Floats(Cow<'a, [f64]>),
    Floats32(&'a [f32]),
    Integers(Vec<i64>),
}

/// The tree's leaves as a safetensors file.
pub(crate) fn to_safetensors(prog: &Program, tree: &Value) -> FResult<Vec<u8>> {
    let mut leaves = Vec::new();
    stored(prog, tree, &mut String::new(), &mut leaves, 0)?;
    let entries: Vec<_> = leaves.iter().map(|(_, v)| entry(v)).collect();
    let items: Vec<Item<'_>> = leaves
        .iter()
        .zip(&entries)
        .map(|((name, _), (dtype, shape, elements))| Item {
            name,
            dtype: *dtype,
            shape,
            data: match elements {
                Elements::Floats(x) => Data::Floats(x),
                Elements::Floats32(x) => Data::Floats32(x),
                Elements::Integers(x) => Data::Integers(x),
            },
        })
        .collect();
    match safetensors::write_items(&items, &[FORMAT]) {
        Ok(b) => Ok(b),
        Err(e) => fault(codes::RUN_HOST, format!("cannot write the checkpoint: {e}")),
    }
}

/// The codes a read reports a file that does not fit the tree with: a tensor of
/// another shape, and an entry missing or of another kind.
#[derive(Clone, Copy)]
pub(crate) struct Misfit {
    pub shape: Code,
    pub entry: Code,
    /// Appended to each misfit message ("" for none).
    pub hint: &'static str,
}

/// `hospes.carga_tensores` and `tensores_ex_octetis`: RUN013 for a shape, RUN017 else.
pub(crate) const PLAIN: Misfit = Misfit {
    shape: codes::RUN_SHAPE,
    entry: codes::RUN_HOST,
    hint: "",
};

/// A tree shaped like `like` whose leaves are read by name from safetensors bytes;
/// `what` names the source in messages.
pub(crate) fn from_safetensors(
    prog: &Program,
    h: Host,
    bytes: &[u8],
    like: &Value,
    what: &str,
) -> FResult<Value> {
    let file = parse(bytes, what)?;
    from_file(prog, h, &file, like, what, PLAIN)
}

/// The safetensors file in `bytes` (RUN017 when it is malformed).
pub(crate) fn parse<'a>(bytes: &'a [u8], what: &str) -> FResult<safetensors::RawFile<'a>> {
    match safetensors::read_raw(bytes) {
        Ok(f) => Ok(f),
        Err(e) => fault(
            codes::RUN_HOST,
            format!("{what} is not a valid safetensors file: {e}"),
        ),
    }
}

/// Whether faber wrote the file (its metadata holds `{"format": "faber"}`).
pub(crate) fn by_faber(file: &safetensors::RawFile<'_>) -> bool {
    file.metadata
        .iter()
        .any(|(k, v)| (k.as_str(), v.as_str()) == FORMAT)
}

/// `from_safetensors` over a parsed file, reporting misfits with `misfit`'s codes.
pub(crate) fn from_file(
    prog: &Program,
    h: Host,
    file: &safetensors::RawFile<'_>,
    like: &Value,
    what: &str,
    misfit: Misfit,
) -> FResult<Value> {
    let by_faber = by_faber(file);
    let by_name: HashMap<&str, &RawTensor<'_>> =
        file.tensors.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut leaves = Vec::new();
    stored(prog, like, &mut String::new(), &mut leaves, 0)?;
    let mut items = Vec::with_capacity(leaves.len());
    for (label, old) in &leaves {
        match by_name.get(label.as_str()) {
            Some(raw) => items.push(restore(raw, old, what, misfit)?),
            None if !by_faber && !matches!(old, Value::Tensor(_)) => items.push((*old).clone()),
            None if matches!(old, Value::Tensor(_)) => {
                return fault(
                    misfit.entry,
                    format!("{what} has no tensor named `{label}`{}", misfit.hint),
                )
            }
            None => {
                return fault(
                    misfit.entry,
                    format!(
                        "{what} has no entry `{label}` (a {} of the tree): faber writes every number, flag and text of a tree into its checkpoints, so the file is incomplete or was written by a faber that stored only tensors{}",
                        old.type_name(),
                        misfit.hint
                    ),
                )
            }
        }
    }
    let mut next = 0;
    fill(h, like, &items, &mut next, 0)
}

/// The value of file entry `raw` for the tree's leaf `old` (which gives the kind and,
/// for a tensor, the shape).
fn restore(raw: &RawTensor<'_>, old: &Value, what: &str, misfit: Misfit) -> FResult<Value> {
    let name = &raw.name;
    let invalid = |e: safetensors::SafetensorsError| -> FResult<Value> {
        fault(codes::RUN_HOST, format!("{what}: {e}"))
    };
    let not = |want: &str| -> FResult<Value> {
        fault(
            misfit.entry,
            format!(
                "{what}: entry `{name}` is {} of shape {}, which does not hold a {want}{}",
                raw.dtype,
                fmt_shape(&raw.shape),
                misfit.hint
            ),
        )
    };
    let is_float = matches!(
        raw.dtype,
        Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16
    );
    let scalar = raw.shape.is_empty();
    match old {
        Value::Tensor(t) => {
            if raw.shape != t.shape() {
                return fault(
                    misfit.shape,
                    format!(
                        "{what}: tensor `{name}` has shape {} but the tree's tensor has {}{}",
                        fmt_shape(&raw.shape),
                        fmt_shape(t.shape()),
                        misfit.hint
                    ),
                );
            }
            // The tree's element type: a file of either precision loads into it.
            match raw.to_tensor_as(t.dtype()) {
                Ok(t) => Ok(Value::tensor(t)),
                Err(e) => invalid(e),
            }
        }
        Value::Int(_) if scalar && raw.dtype == Dtype::Bool => not("numerus"),
        Value::Int(_) if scalar && !is_float => match raw.integers() {
            Ok(xs) => Ok(Value::Int(xs[0])),
            Err(e) => invalid(e),
        },
        Value::Int(_) if scalar => {
            // A float entry (PyTorch keeps Adam's `step` as a float tensor) holds a
            // numerus only when its value is an integer that i64 represents.
            let x = match raw.to_tensor() {
                Ok(t) => t.data()[0],
                Err(e) => return invalid(e),
            };
            if x.fract() == 0.0 && (-9.223372036854776e18..9.223372036854776e18).contains(&x) {
                Ok(Value::Int(x as i64))
            } else {
                fault(
                    misfit.entry,
                    format!(
                        "{what}: entry `{name}` is {x:?}, not a numerus (an integer){}",
                        misfit.hint
                    ),
                )
            }
        }
        Value::Float(_) if scalar => match raw.to_tensor() {
            Ok(t) => Ok(Value::Float(t.data()[0])),
            Err(e) => invalid(e),
        },
        Value::Bool(_) if scalar && raw.dtype == Dtype::Bool => match raw.integers() {
            Ok(xs) => Ok(Value::Bool(xs[0] == 1)),
            Err(e) => invalid(e),
        },
        Value::Text(_) if raw.shape.len() == 1 && raw.dtype == Dtype::U8 => {
            match String::from_utf8(raw.data.to_vec()) {
                Ok(s) => Ok(Value::text(s)),
                Err(_) => fault(
                    codes::RUN_HOST,
                    format!("{what}: entry `{name}` is not UTF-8 text"),
                ),
            }
        }
        Value::Bytes(_) if raw.shape.len() == 1 && raw.dtype == Dtype::U8 => {
            Ok(Value::Bytes(Rc::new(raw.data.to_vec())))
        }
        other => not(other.type_name()),
    }
}

/// `tree` with its stored leaves replaced, in walk order, by `items[next..]`.
fn fill(h: Host, tree: &Value, items: &[Value], next: &mut usize, depth: usize) -> FResult<Value> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    let mut each = |xs: &[Value]| -> FResult<Vec<Value>> {
        xs.iter()
            .map(|c| fill(h, c, items, next, depth + 1))
            .collect()
    };
    Ok(match tree {
        Value::Record(r) => Value::Record(Rc::new(Record {
            genus: r.genus,
            fields: each(&r.fields)?,
        })),
        Value::List(xs) => Value::list(each(xs)?),
        Value::Tuple(xs) => Value::Tuple(Rc::new(each(xs)?)),
        Value::Nihil => Value::Nihil,
        _ => {
            let Some(v) = items.get(*next) else {
                return fault(
                    codes::RUN_HOST,
                    format!("`hospes.{}`: the tree changed while it was read", h.name()),
                );
            };
            *next += 1;
            v.clone()
        }
    })
}

/// The versioned envelope around the tree's safetensors bytes.
pub(crate) fn to_versioned(prog: &Program, tree: &Value) -> FResult<Vec<u8>> {
    let payload = to_safetensors(prog, tree)?;
    let mut out = Vec::with_capacity(16 + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&payload);
    Ok(out)
}

/// A tree shaped like `like` from envelope bytes; a wrong magic or an unknown version
/// is a diagnostic.
pub(crate) fn from_versioned(
    prog: &Program,
    h: Host,
    bytes: &[u8],
    like: &Value,
) -> FResult<Value> {
    if bytes.len() < 16 || &bytes[..8] != MAGIC {
        return fault(
            codes::RUN_HOST,
            "the bytes are not a faber checkpoint (no `FABERPT` header)".to_string(),
        );
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    if !READABLE.contains(&version) {
        return fault(
            codes::RUN_HOST,
            format!("faber checkpoint version {version} is not supported (this faber reads versions 1 and {VERSION})"),
        );
    }
    from_safetensors(prog, h, &bytes[16..], like, "the checkpoint payload")
}
