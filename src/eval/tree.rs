//! Walking parameter trees: records, lists and tuples of values, depth first (record
//! fields in declaration order, items in order), for the host functions that flatten
//! and name a tree's leaves and for checkpoints.

use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::Program;

/// Trees deeper than this are reported instead of walked (they cannot come from a
/// parameter record, and the walk recurses).
pub(super) const MAX_DEPTH: usize = 64;

pub(super) fn too_deep<T>() -> FResult<T> {
    fault(
        codes::RUN_LIMIT,
        format!("a parameter tree nested more than {MAX_DEPTH} levels deep"),
    )
}

/// The tree's children in walk order, or `None` for a leaf or a non-tensor value.
fn children(v: &Value) -> Option<&[Value]> {
    match v {
        Value::Record(r) => Some(&r.fields),
        Value::List(xs) | Value::Tuple(xs) => Some(xs),
        _ => None,
    }
}

/// Tensors of a tree, depth first: record fields in declaration order, list and
/// tuple items in order. Other values (numbers, texts, nihil) are not leaves.
pub(super) fn leaves(v: &Value, out: &mut Vec<Value>, depth: usize) -> FResult<()> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    match v {
        Value::Tensor(_) => out.push(v.clone()),
        _ => {
            for c in children(v).unwrap_or(&[]) {
                leaves(c, out, depth + 1)?;
            }
        }
    }
    Ok(())
}

/// Dotted paths of the leaves, in the order of [`leaves`]: field names and list
/// indices (`strata.0.wq`), as PyTorch names a state dict.
pub(super) fn names(
    prog: &Program,
    v: &Value,
    path: &mut String,
    out: &mut Vec<String>,
    depth: usize,
) -> FResult<()> {
    walk_paths(prog, v, path, depth, &mut |name, leaf| {
        if let Value::Tensor(_) = leaf {
            out.push(if name.is_empty() { "tensor" } else { name }.to_string());
        }
        Ok(())
    })
}

/// Calls `leaf` with the dotted path (empty for the root itself) of every value of
/// a tree that is not a record, list or tuple, depth first: record fields in
/// declaration order, list and tuple items in order.
pub(super) fn walk_paths<'a>(
    prog: &Program,
    v: &'a Value,
    path: &mut String,
    depth: usize,
    leaf: &mut dyn FnMut(&str, &'a Value) -> FResult<()>,
) -> FResult<()> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    let mut visit =
        |label: &str, c: &'a Value, leaf: &mut dyn FnMut(&str, &'a Value) -> FResult<()>| {
            let len = path.len();
            if !path.is_empty() {
                path.push('.');
            }
            path.push_str(label);
            let r = walk_paths(prog, c, path, depth + 1, leaf);
            path.truncate(len);
            r
        };
    match v {
        Value::Record(r) => {
            let genus = &prog.genera[r.genus.0 as usize];
            for (f, c) in genus.fields.iter().zip(&r.fields) {
                visit(&f.name, c, leaf)?;
            }
            Ok(())
        }
        Value::List(xs) | Value::Tuple(xs) => {
            for (i, c) in xs.iter().enumerate() {
                visit(&i.to_string(), c, leaf)?;
            }
            Ok(())
        }
        _ => leaf(path, v),
    }
}
