//! Gradient checking: a companion's gradients against central finite differences
//! of its primal, element by element, in f64 (`faber grad-check`, property tests).

use std::rc::Rc;

use crate::eval::{run_function, BufferIo, RunConfig, RuntimeError, Value};
use crate::ir::{Backward, Program, Ty};
use crate::tensor::{SplitMix64, Tensor};

/// The worst disagreement for one parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamReport {
    pub name: String,
    pub elements: usize,
    pub max_abs: f64,
    /// `|analytic − numeric| / max(1, |analytic|, |numeric|)`.
    pub max_rel: f64,
}

/// Why inputs could not be built for a function.
#[derive(Clone, Debug, PartialEq)]
pub enum CheckError {
    /// A parameter whose shape is not fully declared (`tf32`, `tensor<f32, _>`).
    UnknownShape(String),
    /// A parameter of a type that has no gradient to check.
    Unsupported(String),
    Runtime(Box<RuntimeError>),
}

impl From<RuntimeError> for CheckError {
    fn from(e: RuntimeError) -> Self {
        CheckError::Runtime(Box::new(e))
    }
}

/// Random inputs for `req.primal`'s parameters from their declared types: tensors of
/// the declared shape and floats, uniform in [-1, 1) from SplitMix64(`seed`).
pub fn random_inputs(p: &Program, req: &Backward, seed: u64) -> Result<Vec<Value>, CheckError> {
    let f = p.func(req.primal);
    let mut rng = SplitMix64::new(seed);
    let mut out = Vec::new();
    for i in 0..f.params as usize {
        let info = &f.slots[i];
        out.push(
            random_value(p, &info.ty, &info.name, &mut rng, 0).map_err(|e| match e {
                CheckError::Runtime(mut e) => {
                    e.diagnostic.span = f.span;
                    CheckError::Runtime(e)
                }
                other => other,
            })?,
        );
    }
    Ok(out)
}

/// RUN012 (placed at the function by [`random_inputs`]) unless a random tensor of
/// `dims` fits the tensor limit (`--max-tensor-gib`) and the memory limit
/// (`--max-memory-gib`); the elements are drawn only after this check.
fn within_limits(name: &str, dims: &[usize]) -> Result<usize, CheckError> {
    let refuse = |why: String| {
        CheckError::Runtime(Box::new(RuntimeError::new(
            crate::diag::codes::RUN_LIMIT,
            format!("cannot draw random inputs for parameter `{name}`: {why}"),
            crate::source::Span::default(),
        )))
    };
    let n = crate::tensor::checked_numel(dims).map_err(|e| refuse(e.message))?;
    crate::mem::check(n.saturating_mul(std::mem::size_of::<f64>())).map_err(refuse)?;
    Ok(n)
}

/// A random value of a declared type: floats, tensors of a fully declared shape, and
/// genus records of those (parameter trees).
fn random_value(
    p: &Program,
    ty: &Ty,
    name: &str,
    rng: &mut SplitMix64,
    depth: usize,
) -> Result<Value, CheckError> {
    if depth > 16 {
        return Err(CheckError::Unsupported(name.to_string()));
    }
    Ok(match ty {
        Ty::Float => Value::Float(2.0 * rng.uniform() - 1.0),
        // Non-differentiable inputs get fixed, documented values: 2 and a coin flip.
        Ty::Int => Value::Int(2),
        Ty::Bool => Value::Bool(rng.next_u64() & 1 == 1),
        Ty::Tensor {
            shape: Some(dims), ..
        } if dims.iter().all(|d| d.is_some()) => {
            let dims: Vec<usize> = dims.iter().map(|d| d.unwrap_or(0) as usize).collect();
            let n = within_limits(name, &dims)?;
            let data: Vec<f64> = (0..n).map(|_| 2.0 * rng.uniform() - 1.0).collect();
            match Tensor::from_flat(data, &dims) {
                Ok(t) => Value::Tensor(Rc::new(t)),
                Err(_) => return Err(CheckError::Unsupported(name.to_string())),
            }
        }
        Ty::Tensor { .. } => return Err(CheckError::UnknownShape(name.to_string())),
        Ty::Record(g) => {
            let genus = &p.genera[g.0 as usize];
            let mut fields = Vec::new();
            for f in &genus.fields {
                fields.push(random_value(
                    p,
                    &f.ty,
                    &format!("{name}.{}", f.name),
                    rng,
                    depth + 1,
                )?);
            }
            Value::Record(Rc::new(crate::eval::Record { genus: *g, fields }))
        }
        _ => return Err(CheckError::Unsupported(name.to_string())),
    })
}

/// A primal's result as a number: a float, an integer or a one-element tensor.
pub(crate) fn scalar(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        Value::Int(i) => Some(*i as f64),
        Value::Tensor(t) if t.numel() == 1 => t.value_at(0),
        _ => None,
    }
}

/// Every number of a value, depth first (records and lists included).
fn elements(v: &Value) -> Vec<f64> {
    let mut out = Vec::new();
    collect(v, &mut out);
    out
}

fn collect(v: &Value, out: &mut Vec<f64>) {
    match v {
        Value::Float(f) => out.push(*f),
        Value::Tensor(t) => out.extend_from_slice(&t.values()),
        Value::Record(r) => r.fields.iter().for_each(|f| collect(f, out)),
        Value::List(items) | Value::Tuple(items) => items.iter().for_each(|f| collect(f, out)),
        _ => {}
    }
}

/// `v` with its `i`-th number (in [`elements`] order) replaced by `x`.
fn with_element(v: &Value, i: usize, x: f64) -> Value {
    let mut v = v.clone();
    let mut i = i;
    set_nth(&mut v, &mut i, x);
    v
}

fn set_nth(v: &mut Value, i: &mut usize, x: f64) -> bool {
    match v {
        Value::Float(f) => {
            if *i == 0 {
                *f = x;
                return true;
            }
            *i -= 1;
            false
        }
        Value::Tensor(t) => {
            if *i < t.numel() {
                // f64 finite differences: an f32 leaf is widened before it is set.
                let t = Rc::make_mut(t);
                if let Ok(w) = t.to_dtype(crate::tensor::DType::F64) {
                    *t = w;
                }
                t.set_at(*i, x);
                return true;
            }
            *i -= t.numel();
            false
        }
        Value::Record(r) => Rc::make_mut(r).fields.iter_mut().any(|f| set_nth(f, i, x)),
        Value::List(items) | Value::Tuple(items) => {
            Rc::make_mut(items).iter_mut().any(|f| set_nth(f, i, x))
        }
        _ => false,
    }
}

/// Compares the companion's gradients at `inputs` with central differences of step
/// `h`, every run under `config`. The primal must return a scalar (a number or a
/// one-element tensor).
pub fn check(
    p: &Program,
    req: &Backward,
    inputs: &[Value],
    h: f64,
    config: &RunConfig,
) -> Result<Vec<ParamReport>, CheckError> {
    let mut io = BufferIo::default();
    let f = p.func(req.primal);
    let primal = |io: &mut BufferIo, args: Vec<Value>| -> Result<f64, CheckError> {
        let v = run_function(p, req.primal, args, io, config)?;
        scalar(&v).ok_or_else(|| CheckError::Unsupported("a result that is not a scalar".into()))
    };
    let mut args = inputs.to_vec();
    args.push(Value::Vacuum);
    args.push(Value::Float(1.0));
    let grads = run_function(p, req.companion, args, &mut io, config)?;
    let Value::Tuple(grads) = grads else {
        return Err(CheckError::Unsupported(
            "a companion that returns no iuncta".into(),
        ));
    };
    let mut reports = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let analytic = elements(&grads[i]);
        let values = elements(input);
        let mut rep = ParamReport {
            name: f.slots[i].name.clone(),
            elements: values.len(),
            max_abs: 0.0,
            max_rel: 0.0,
        };
        for (j, &x) in values.iter().enumerate() {
            let mut plus = inputs.to_vec();
            plus[i] = with_element(input, j, x + h);
            let mut minus = inputs.to_vec();
            minus[i] = with_element(input, j, x - h);
            let numeric = (primal(&mut io, plus)? - primal(&mut io, minus)?) / (2.0 * h);
            let a = analytic.get(j).copied().unwrap_or(f64::NAN);
            (rep.max_abs, rep.max_rel) = worst(rep.max_abs, rep.max_rel, a, numeric);
        }
        reports.push(rep);
    }
    Ok(reports)
}

/// The running worst (absolute, relative) disagreement after one more element with
/// analytic gradient `a` and finite difference `numeric`; the relative error is
/// `|a − numeric| / max(1, |a|, |numeric|)`, and a NaN on either side counts as ∞.
pub(crate) fn worst(max_abs: f64, max_rel: f64, a: f64, numeric: f64) -> (f64, f64) {
    let abs = (a - numeric).abs();
    let rel = abs / 1f64.max(a.abs()).max(numeric.abs());
    let rel = if rel.is_nan() {
        f64::INFINITY
    } else {
        max_rel.max(rel)
    };
    (max_abs.max(abs), rel)
}
