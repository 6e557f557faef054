//! `hospes.lege_tensorem(via, nomen)`: one tensor of a safetensors file, by its name,
//! with the shape the file gives it (gradus:data's `lege_tensorem`). Any float or
//! integer dtype is read and converted to the run's precision (f64, or f32 under
//! `--precision f32`), as checkpoints are
//! (src/serialize/safetensors.rs).

use std::rc::Rc;

use super::value::Value;
use super::{fault, FResult, Io};
use crate::diag::{codes, suggest};
use crate::serialize::safetensors;

/// The tensor called `name` in the safetensors file `path`; a missing file, a file that
/// is not safetensors or a name it does not hold is RUN017.
pub(crate) fn read(path: &str, name: &str, io: &mut dyn Io) -> FResult<Value> {
    let bytes = match io.read_bytes(path) {
        Ok(b) => b,
        Err(e) => return fault(codes::RUN_HOST, format!("cannot read `{path}`: {e}")),
    };
    let file = match safetensors::read_all(&bytes) {
        Ok(f) => f,
        Err(e) => {
            return fault(
                codes::RUN_HOST,
                format!("`{path}` is not a readable safetensors file: {e}"),
            )
        }
    };
    match file.tensor(name) {
        // In the run's precision (docs/precision.md): f32 → f64 → f32 is exact.
        Some(t) => Ok(Value::Tensor(Rc::new(super::tensor_args::kr(
            t.to_dtype(crate::tensor::precision()),
        )?))),
        None => {
            let names: Vec<&str> = file.tensors.iter().map(|(n, _, _)| n.as_str()).collect();
            let hint = suggest::hint(name, names.iter().copied())
                .map(|h| format!("; {h}"))
                .unwrap_or_default();
            let listed = if names.len() <= 8 {
                names
                    .iter()
                    .map(|n| format!("`{n}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            } else {
                format!("{} tensors", names.len())
            };
            fault(
                codes::RUN_HOST,
                format!("`{path}` has no tensor `{name}` (it holds {listed}){hint}"),
            )
        }
    }
}
