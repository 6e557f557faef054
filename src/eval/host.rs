//! The evaluator side of the host functions (`hospes.*`, src/ir/host.rs): files, the
//! clock, program arguments and progress go through [`Io`]; parameter-tree walks are
//! pure functions of the value.

use std::rc::Rc;
use std::sync::OnceLock;
use std::time::Instant;

use super::value::{Record, Value};
use super::{checkpoint, fault, FResult, Io};
use crate::diag::codes;
use crate::ir::host::Host;
use crate::ir::Program;

/// Runs host function `h` on evaluated arguments.
pub(crate) fn call(h: Host, args: &[Value], prog: &Program, io: &mut dyn Io) -> FResult<Value> {
    match h {
        Host::LegeTextum => {
            let path = text(h, &args[0])?;
            match io.read_file(path) {
                Ok(s) => Ok(Value::text(s)),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            }
        }
        Host::LegeOctetos => {
            let path = text(h, &args[0])?;
            match io.read_bytes(path) {
                Ok(b) => Ok(Value::Bytes(Rc::new(b))),
                Err(e) => fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            }
        }
        Host::ScribeTextum => {
            let path = text(h, &args[0])?;
            match io.write_file(path, text(h, &args[1])?) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(codes::RUN_HOST, format!("cannot write `{path}`: {e}")),
            }
        }
        Host::ParaDirectorium => {
            let path = text(h, &args[0])?;
            match io.claim_dir(path) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(
                    codes::RUN_HOST,
                    format!("cannot use `{path}` as an output directory: {e}"),
                ),
            }
        }
        Host::Hora => {
            static START: OnceLock<Instant> = OnceLock::new();
            Ok(Value::Float(
                START.get_or_init(Instant::now).elapsed().as_secs_f64(),
            ))
        }
        Host::Argumenta => Ok(Value::list(
            io.args().into_iter().map(Value::text).collect(),
        )),
        Host::Directorium => Ok(Value::text(io.program_dir())),
        Host::Progressus => {
            io.progress(text(h, &args[0])?);
            Ok(Value::Vacuum)
        }
        Host::Folia => {
            let mut out = Vec::new();
            leaves(&args[0], &mut out, 0)?;
            Ok(Value::list(out))
        }
        Host::NominaFoliorum => {
            let mut out = Vec::new();
            names(prog, &args[0], &mut String::new(), &mut out, 0)?;
            Ok(Value::list(out.into_iter().map(Value::text).collect()))
        }
        Host::PrimumNonFinitum => super::finite::first_non_finite_leaf(prog, &args[0]),
        Host::ServaTensores => {
            let path = text(h, &args[0])?;
            let bytes = checkpoint::to_safetensors(prog, &args[1])?;
            match io.write_bytes(path, &bytes) {
                Ok(()) => Ok(Value::Vacuum),
                Err(e) => fault(codes::RUN_HOST, format!("cannot write `{path}`: {e}")),
            }
        }
        Host::CargaTensores => {
            let path = text(h, &args[0])?;
            let bytes = match io.read_bytes(path) {
                Ok(b) => b,
                Err(e) => return fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
            };
            checkpoint::from_safetensors(prog, h, &bytes, &args[1], &format!("`{path}`"))
        }
        Host::TensoresAdOctetos => Ok(Value::Bytes(Rc::new(checkpoint::to_versioned(
            prog, &args[0],
        )?))),
        Host::TensoresExOctetis => {
            let Value::Bytes(bytes) = &args[0] else {
                return fault(
                    codes::RUN_TYPE,
                    format!("`hospes.{}` needs octeti", h.name()),
                );
            };
            checkpoint::from_versioned(prog, h, bytes, &args[1])
        }
        Host::ExFoliis => {
            let Value::List(items) = &args[1] else {
                return fault(
                    codes::RUN_TYPE,
                    "`hospes.ex_foliis` needs a lista of tensors".to_string(),
                );
            };
            let mut next = 0;
            let tree = rebuild(h, &args[0], items, &mut next, 0)?;
            if next != items.len() {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.ex_foliis`: the tree has {next} tensors but {} were given",
                        items.len()
                    ),
                );
            }
            Ok(tree)
        }
    }
}

fn text(h: Host, v: &Value) -> FResult<&str> {
    match v {
        Value::Text(s) => Ok(s.as_str()),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`hospes.{}` needs a textus, not a {}",
                h.name(),
                other.type_name()
            ),
        ),
    }
}

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

/// `tree` with its tensor leaves replaced, in walk order, by `items[next..]`; each
/// replacement must have the shape of the leaf it replaces.
pub(super) fn rebuild(
    who: Host,
    tree: &Value,
    items: &[Value],
    next: &mut usize,
    depth: usize,
) -> FResult<Value> {
    if depth > MAX_DEPTH {
        return too_deep();
    }
    match tree {
        Value::Tensor(old) => {
            let Some(new) = items.get(*next) else {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.ex_foliis`: only {} tensors were given",
                        items.len()
                    ),
                );
            };
            let Value::Tensor(t) = new else {
                return fault(
                    codes::RUN_TYPE,
                    format!(
                        "`hospes.{}`: item {} is a {}, not a tensor",
                        who.name(),
                        *next,
                        new.type_name()
                    ),
                );
            };
            if t.shape() != old.shape() {
                return fault(
                    codes::RUN_SHAPE,
                    format!(
                        "`hospes.{}`: item {} has shape {:?} but the tree's tensor has {:?} ({})",
                        who.name(),
                        *next,
                        t.shape(),
                        old.shape(),
                        crate::tensor::shape_difference(t.shape(), old.shape())
                    ),
                );
            }
            *next += 1;
            Ok(new.clone())
        }
        Value::Record(r) => {
            let fields = r
                .fields
                .iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?;
            Ok(Value::Record(Rc::new(Record {
                genus: r.genus,
                fields,
            })))
        }
        Value::List(xs) => Ok(Value::list(
            xs.iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?,
        )),
        Value::Tuple(xs) => Ok(Value::Tuple(Rc::new(
            xs.iter()
                .map(|c| rebuild(who, c, items, next, depth + 1))
                .collect::<FResult<Vec<_>>>()?,
        ))),
        other => Ok(other.clone()),
    }
}
