//! Checkpoints of parameter trees: safetensors files (`hospes.serva_tensores` /
//! `carga_tensores`) and faber's versioned byte envelope around them
//! (`hospes.tensores_ad_octetos` / `tensores_ex_octetis`).
//!
//! Envelope, version 1: the 8 bytes `FABERPT\0`, the version as a little-endian u32,
//! four zero bytes (reserved), then a safetensors payload (F64 leaves named by their
//! dotted paths, metadata `{"format": "faber"}`). A reader rejects another magic and
//! any version it does not know, so the layout can change without old readers
//! misreading new data.

use super::host::{leaves, names, rebuild};
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::host::Host;
use crate::ir::Program;
use crate::serialize::safetensors::{self, Dtype};
use crate::tensor::Tensor;

pub(crate) const MAGIC: &[u8; 8] = b"FABERPT\0";
pub(crate) const VERSION: u32 = 1;

/// The tree's leaves as a safetensors file.
pub(crate) fn to_safetensors(prog: &Program, tree: &Value) -> FResult<Vec<u8>> {
    let mut tensors = Vec::new();
    leaves(tree, &mut tensors, 0)?;
    let mut labels = Vec::new();
    names(prog, tree, &mut String::new(), &mut labels, 0)?;
    let pairs: Vec<(&str, &Tensor)> = labels
        .iter()
        .zip(&tensors)
        .filter_map(|(n, v)| match v {
            Value::Tensor(t) => Some((n.as_str(), &**t)),
            _ => None,
        })
        .collect();
    match safetensors::write(&pairs, Dtype::F64, &[("format", "faber")]) {
        Ok(b) => Ok(b),
        Err(e) => fault(codes::RUN_HOST, format!("cannot write the checkpoint: {e}")),
    }
}

/// A tree shaped like `like` whose leaves are read by name from safetensors bytes;
/// `what` names the source in messages.
pub(crate) fn from_safetensors(
    prog: &Program,
    h: Host,
    bytes: &[u8],
    like: &Value,
    what: &str,
) -> FResult<Value> {
    let file = match safetensors::read(bytes) {
        Ok(f) => f,
        Err(e) => {
            return fault(
                codes::RUN_HOST,
                format!("{what} is not a valid safetensors file: {e}"),
            )
        }
    };
    let mut labels = Vec::new();
    names(prog, like, &mut String::new(), &mut labels, 0)?;
    let mut items = Vec::with_capacity(labels.len());
    for label in &labels {
        match file.iter().find(|(n, _)| n == label) {
            Some((_, t)) => items.push(Value::tensor(t.clone())),
            None => {
                return fault(
                    codes::RUN_HOST,
                    format!("{what} has no tensor named `{label}`"),
                )
            }
        }
    }
    let mut next = 0;
    rebuild(h, like, &items, &mut next, 0)
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
    if version != VERSION {
        return fault(
            codes::RUN_HOST,
            format!("faber checkpoint version {version} is not supported (this faber reads version {VERSION})"),
        );
    }
    from_safetensors(prog, h, &bytes[16..], like, "the checkpoint payload")
}
