//! Training checkpoints (`hospes.carga_cursum`, gradus:serialize's `lege_cursum`): a
//! safetensors file of a record with a `forma` (the kind of file, a `textus`) and a
//! `versio` (its layout version, a `numerus`) beside the run's parameters and state,
//! written by `hospes.serva_tensores` like any tree (checkpoint.rs).
//!
//! Reading one is stricter than `carga_tensores`, because a run resumed from the wrong
//! file must stop rather than carry on from part of it:
//! * the file's `forma` and `versio` must equal the tree's; a file without them (a
//!   parameters-only file such as the GPT example's model.safetensors, or one from
//!   another tool) or with another value is RUN022;
//! * every leaf the tree stores must be in the file with its kind and shape, and every
//!   entry of the file must be a leaf of the tree, so a checkpoint of another model or
//!   optimizer (a tensor missing, extra or of another shape) is RUN021, never a silent
//!   partial load. Entries under a field the tree leaves `nihil` are skipped: that is
//!   how the header (step, data-order state) is read without the tensors.

use std::collections::HashSet;

use super::checkpoint::{by_faber, from_file, parse, Misfit};
use super::tree::walk_paths;
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::host::Host;
use crate::ir::Program;
use crate::serialize::safetensors::{Dtype, RawFile};

/// The misfit codes of a training checkpoint: RUN021 for a shape and for an entry.
const STRICT: Misfit = Misfit {
    shape: codes::RUN_CHECKPOINT_MISFIT,
    entry: codes::RUN_CHECKPOINT_MISFIT,
    hint: "; the checkpoint is of another model or optimizer state than the tree it is read into",
};

/// A tree shaped like `like` (a record with `forma` and `versio`) read from the
/// training checkpoint in `bytes`; `what` names the file in messages.
pub(crate) fn from_training_checkpoint(
    prog: &Program,
    h: Host,
    bytes: &[u8],
    like: &Value,
    what: &str,
) -> FResult<Value> {
    let file = parse(bytes, what)?;
    let (forma, versio) = header_of(prog, h, like)?;
    check_header(&file, what, &forma, versio)?;
    check_no_extra(prog, &file, like, what)?;
    from_file(prog, h, &file, like, what, STRICT)
}

/// The tree's `forma` and `versio` fields: what the file must hold.
fn header_of(prog: &Program, h: Host, like: &Value) -> FResult<(String, i64)> {
    let need = || {
        fault(
            codes::RUN_TYPE,
            format!(
                "`hospes.{}` reads into a record with a `forma` (textus) and a `versio` (numerus) field",
                h.name()
            ),
        )
    };
    let Value::Record(r) = like else {
        return need();
    };
    let genus = &prog.genera[r.genus.0 as usize];
    let field = |name: &str| {
        genus
            .fields
            .iter()
            .position(|f| f.name == name)
            .map(|i| &r.fields[i])
    };
    match (field("forma"), field("versio")) {
        (Some(Value::Text(f)), Some(Value::Int(v))) => Ok((f.to_string(), *v)),
        _ => need(),
    }
}

/// RUN022 unless the file's `forma` and `versio` entries are `forma` and `versio`.
fn check_header(file: &RawFile<'_>, what: &str, forma: &str, versio: i64) -> FResult<()> {
    let entry = |name: &str| file.tensors.iter().find(|t| t.name == name);
    let text = entry("forma")
        .filter(|t| t.dtype == Dtype::U8 && t.shape.len() == 1)
        .and_then(|t| std::str::from_utf8(t.data).ok());
    let Some(text) = text else {
        let held = match file.tensors.len() {
            1 => "entry is".to_string(),
            n => format!("{n} entries are"),
        };
        let kind = if by_faber(file) {
            "a tree written by `serialize.scribe_safetensors`, such as the parameters-only model.safetensors"
        } else {
            "a file from another tool"
        };
        return fault(
            codes::RUN_CHECKPOINT_FORMAT,
            format!(
                "{what} is not a training checkpoint: it has no `forma` entry naming its kind; its {held} {kind}, while a training checkpoint is written by `serialize.scribe_cursum`"
            ),
        );
    };
    if text != forma {
        return fault(
            codes::RUN_CHECKPOINT_FORMAT,
            format!("{what} is a `{text}` file, not a `{forma}` training checkpoint"),
        );
    }
    let found = entry("versio")
        .filter(|t| t.shape.is_empty())
        .and_then(|t| t.integers().ok())
        .map(|xs| xs[0]);
    match found {
        Some(v) if v == versio => Ok(()),
        Some(v) => {
            let age = if v < versio { "an older" } else { "a newer" };
            fault(
                codes::RUN_CHECKPOINT_FORMAT,
                format!(
                    "{what} is a `{forma}` checkpoint of layout version {v}, {age} layout than the version {versio} this faber reads; resume it with the faber that wrote it, or start from its parameters"
                ),
            )
        }
        None => fault(
            codes::RUN_CHECKPOINT_FORMAT,
            format!("{what} has no integer `versio` entry, so its layout version is unknown"),
        ),
    }
}

/// RUN021 for the first entry of the file that no leaf of the tree reads, unless it lies
/// under a field the tree leaves `nihil`.
fn check_no_extra(prog: &Program, file: &RawFile<'_>, like: &Value, what: &str) -> FResult<()> {
    let mut leaves: HashSet<String> = HashSet::new();
    let mut skipped: Vec<String> = Vec::new();
    walk_paths(prog, like, &mut String::new(), 0, &mut |name, leaf| {
        match leaf {
            Value::Nihil => skipped.push(name.to_string()),
            _ => {
                leaves.insert(name.to_string());
            }
        }
        Ok(())
    })?;
    let under = |name: &str, p: &str| {
        p.is_empty() || name == p || (name.starts_with(p) && name[p.len()..].starts_with('.'))
    };
    for t in &file.tensors {
        if leaves.contains(&t.name) || skipped.iter().any(|p| under(&t.name, p)) {
            continue;
        }
        return fault(
            codes::RUN_CHECKPOINT_MISFIT,
            format!(
                "{what} holds `{}`, which the run's tree does not have: the checkpoint is of another model or optimizer state (the run reads {} entries)",
                t.name,
                leaves.len()
            ),
        );
    }
    Ok(())
}
