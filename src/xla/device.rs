//! Running tensor ops on one PJRT device: [`Device::run_op`] lowers one Radix IR op
//! to StableHLO (src/xla/stablehlo/), compiles it once per (program, argument shapes
//! and element types) — the [`Cache`], like `jax.jit`'s — copies the tensors in,
//! executes, and copies the results back as faber tensors.
//!
//! This is the unit the op tests (tests/xla_ops.rs) check against the native
//! kernels, and the seam a whole-function lowering will use: its programs are keyed
//! the same way, by a name for the program and the argument types.

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::exec::{Buffer, ElementType, Executable, HostArray};
use super::plugin::{Client, PluginError};
use super::proto::CompileOptions;
use super::resident::{buffer_of, note_execution, note_in, resident_tensor, Probe};
use super::stablehlo::{
    lower_function_with_template, lower_op, Function, LowerError, Operand, Param, Template,
    TensorType,
};
use crate::ir::ops::Op;
use crate::ir::{FuncId, Program};
use crate::tensor::{self as k, Tensor};

/// Why running on the device failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XlaError {
    /// The op (or an operand) has no lowering.
    Lower(LowerError),
    /// A PJRT call failed (compiling: `PJRT_Client_Compile`; else a transfer or the
    /// execution).
    Plugin(PluginError),
    /// A device result faber cannot take back as a tensor.
    Result(String),
}

impl fmt::Display for XlaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            XlaError::Lower(e) => e.fmt(f),
            XlaError::Plugin(e) => e.fmt(f),
            XlaError::Result(m) => write!(f, "a device result: {m}"),
        }
    }
}

impl std::error::Error for XlaError {}

impl From<LowerError> for XlaError {
    fn from(e: LowerError) -> Self {
        XlaError::Lower(e)
    }
}

impl From<PluginError> for XlaError {
    fn from(e: PluginError) -> Self {
        XlaError::Plugin(e)
    }
}

/// An operand of [`Device::run_op`]: a tensor, or a literal the program bakes in.
#[derive(Clone, Debug)]
pub enum Arg<'a> {
    Tensor(&'a Tensor),
    Num(f64),
    Int(i64),
    Flag(bool),
    Dims(Vec<usize>),
    /// A list of literal numbers (`adamw_passus`'s coefficients).
    Nums(Vec<f64>),
    /// A number passed to the program as a rank-0 parameter of the given element
    /// type, so one program serves every value (the eager ops of
    /// src/xla/offload.rs).
    Scalar(f64, ElementType),
    /// A list of numbers passed as rank-0 parameters.
    Scalars(Vec<f64>, ElementType),
}

/// An argument of [`Device::run_function`].
#[derive(Clone, Debug)]
pub enum FnArg<'a> {
    Tensor(&'a Tensor),
    /// A `fractus`, passed as a rank-0 tensor of the run's precision.
    Number(f64),
    /// `nihil` (a companion's unused `residual`).
    Nihil,
    /// A record (`genus`): its fields in declaration order.
    Record(Vec<FnArg<'a>>),
    /// A `numerus` the program is specialised to (a loop bound): part of the cache
    /// key.
    Int(i64),
    /// A `bivalens` the program is specialised to (a `si` condition).
    Bool(bool),
    /// A `lista`: its items in order.
    List(Vec<FnArg<'a>>),
}

/// A device input of [`Device::run_function`]: a tensor argument, or a number made
/// a rank-0 tensor.
enum Input<'a> {
    Borrowed(&'a Tensor),
    /// A tensor inside a record or list (a parameter): a host one goes to the
    /// device once and is kept for the next call ([`Device`]'s `placed`).
    Nested(&'a Tensor),
    Owned(Tensor),
}

impl Input<'_> {
    fn tensor(&self) -> &Tensor {
        match self {
            Input::Borrowed(t) | Input::Nested(t) => t,
            Input::Owned(t) => t,
        }
    }
}

/// The parameters and device inputs of `args` (records' fields in order) and a
/// short spelling of their kinds for the cache key.
fn flatten_args<'a>(
    args: &[FnArg<'a>],
    elem: ElementType,
    params: &mut Vec<Param>,
    inputs: &mut Vec<Input<'a>>,
    kinds: &mut String,
    nested: bool,
) -> Result<(), XlaError> {
    for a in args {
        match a {
            FnArg::Tensor(t) => {
                inputs.push(if nested {
                    Input::Nested(t)
                } else {
                    Input::Borrowed(t)
                });
                params.push(Param::Tensor(TensorType::new(element_type(t), t.shape())));
                kinds.push('t');
            }
            FnArg::Number(x) => {
                let t = match elem {
                    ElementType::F32 => Tensor::from_f32(vec![*x as f32], &[]),
                    ElementType::F64 => Tensor::from_flat(vec![*x], &[]),
                };
                inputs.push(Input::Owned(
                    t.map_err(|e| XlaError::Result(e.to_string()))?,
                ));
                params.push(Param::Number(elem));
                kinds.push('n');
            }
            FnArg::Nihil => {
                params.push(Param::Nihil);
                kinds.push('_');
            }
            FnArg::Int(n) => {
                params.push(Param::Int(*n));
                kinds.push_str(&format!("i{n};"));
            }
            FnArg::Bool(b) => {
                params.push(Param::Bool(*b));
                kinds.push_str(if *b { "T" } else { "F" });
            }
            FnArg::Record(fields) => {
                let mut inner = Vec::new();
                kinds.push('{');
                flatten_args(fields, elem, &mut inner, inputs, kinds, true)?;
                kinds.push('}');
                params.push(Param::Record(inner));
            }
            FnArg::List(items) => {
                let mut inner = Vec::new();
                kinds.push('[');
                flatten_args(items, elem, &mut inner, inputs, kinds, true)?;
                kinds.push(']');
                params.push(Param::List(inner));
            }
        }
    }
    Ok(())
}

/// A compile cache key: the program's name (for one op, the op and its literal
/// operands) and the argument types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    pub program: String,
    pub args: Vec<TensorType>,
}

/// Compiled executables by [`Key`], with hit and miss counts.
#[derive(Default)]
pub struct Cache {
    map: HashMap<Key, Rc<Executable>>,
    hits: u64,
    misses: u64,
}

impl Cache {
    /// Lookups that found a compiled executable.
    pub fn hits(&self) -> u64 {
        self.hits
    }

    /// Lookups that compiled.
    pub fn misses(&self) -> u64 {
        self.misses
    }

    /// Executables held.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// One addressable device of a client, with its compile cache. Its programs are
/// compiled with a device assignment naming it (the CPU plugin places a program
/// by the assignment, not by `device_ordinal`), and its tensors copied to it.
pub struct Device<'p> {
    client: Client<'p>,
    ordinal: usize,
    options: CompileOptions,
    cache: Cache,
    /// How each compiled function's outputs rebuild its result.
    templates: HashMap<Key, Template>,
    /// The keys whose lowering failed, with why: asked again, the answer is the same
    /// without tracing again.
    refused: HashMap<Key, LowerError>,
    /// Shared with this device's resident buffers (src/xla/resident.rs).
    probe: Rc<Probe>,
    /// Host parameters already copied here: the host tensor (a clone, to recognise
    /// its storage) and its copy on this device. An entry goes when its host tensor
    /// is the last handle on the storage.
    placed: Vec<(Tensor, Tensor)>,
}

fn element_type(t: &Tensor) -> ElementType {
    ElementType::of(t.dtype())
}

impl<'p> Device<'p> {
    /// Addressable device `ordinal` of `client`.
    pub fn new(client: Client<'p>, ordinal: usize) -> Result<Device<'p>, XlaError> {
        let id = client.addressable_device_id(ordinal)?;
        let options = CompileOptions {
            device_id: Some(id),
            ..CompileOptions::default()
        };
        let probe = Rc::new(Probe::new(Rc::clone(&client.handle), options));
        Ok(Device {
            client,
            ordinal,
            options,
            cache: Cache::default(),
            templates: HashMap::new(),
            refused: HashMap::new(),
            probe,
            placed: Vec::new(),
        })
    }

    /// The ordinal among the client's addressable devices.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Drops the host parameters' copies kept here (the next one-device call that
    /// passes one copies it again): an SPMD call places them over the devices
    /// itself, and this device need not hold them twice.
    pub fn forget_placed(&mut self) {
        self.placed.clear();
    }

    /// What this device shares with its resident buffers.
    pub(super) fn probe(&self) -> &Rc<Probe> {
        &self.probe
    }

    pub fn cache(&self) -> &Cache {
        &self.cache
    }

    /// The index of the first of `leaves` that is not finite (`Some(None)`: all
    /// are), counted in one program when every leaf is only on this device; `None`
    /// when one is not (src/xla/resident.rs).
    pub fn first_non_finite(&self, leaves: &[&Tensor]) -> Option<Option<usize>> {
        super::resident::first_non_finite(leaves, &self.probe)
    }

    /// The executable for `key`, compiled from `text()` on a miss.
    pub fn executable(
        &mut self,
        key: Key,
        text: impl FnOnce() -> Result<String, XlaError>,
    ) -> Result<Rc<Executable>, XlaError> {
        if let Some(e) = self.cache.map.get(&key) {
            self.cache.hits += 1;
            return Ok(Rc::clone(e));
        }
        let exe = Rc::new(self.client.compile(&text()?, &self.options)?);
        self.cache.misses += 1;
        self.cache.map.insert(key, Rc::clone(&exe));
        Ok(exe)
    }

    /// Runs `exe` on `args` and returns its outputs as tensors whose elements stay on
    /// the device (src/xla/resident.rs): reading one copies it to the host then. An
    /// argument already on this device is passed as it is; any other is copied in.
    pub fn execute(&self, exe: &Executable, args: &[&Tensor]) -> Result<Vec<Tensor>, XlaError> {
        // Arguments already on this device pass as they are; the others are copied
        // in first (owned here until the execution is done).
        let copies = args
            .iter()
            .filter(|t| buffer_of(t, &self.probe).is_none())
            .map(|t| {
                let b = self
                    .client
                    .to_device(&HostArray::of(t), t.shape(), self.ordinal)?;
                note_in(t.nbytes());
                Ok(b)
            })
            .collect::<Result<Vec<Buffer>, PluginError>>()?;
        let mut copied = copies.iter();
        let refs: Vec<&Buffer> = args
            .iter()
            .map(|t| buffer_of(t, &self.probe).or_else(|| copied.next()))
            .collect::<Option<_>>()
            .ok_or_else(|| XlaError::Result("an argument left the device".into()))?;
        let outs = exe.execute(&refs)?;
        note_execution();
        outs.into_iter()
            .map(|b| {
                let dims = b.dims()?;
                let Some(elem) = b.element_type()? else {
                    return Err(XlaError::Result(
                        "an element type other than f32 or f64".into(),
                    ));
                };
                Ok(resident_tensor(b, &dims, elem, &self.probe))
            })
            .collect()
    }

    /// `op` applied to `args` on the device: lowered, compiled (or found in the
    /// cache), run; the results as tensors (a number result is a rank-0 tensor).
    pub fn run_op(&mut self, op: Op, args: &[Arg]) -> Result<Vec<Tensor>, XlaError> {
        let mut scalars: Vec<Tensor> = Vec::new();
        for a in args {
            match a {
                Arg::Scalar(x, e) => scalars.push(scalar_tensor(*x, *e)?),
                Arg::Scalars(xs, e) => {
                    for x in xs {
                        scalars.push(scalar_tensor(*x, *e)?);
                    }
                }
                _ => {}
            }
        }
        let mut scalar_iter = scalars.iter();
        let mut tensors: Vec<&Tensor> = Vec::new();
        for a in args {
            match a {
                Arg::Tensor(t) => tensors.push(t),
                Arg::Scalar(..) => tensors.extend(scalar_iter.next()),
                Arg::Scalars(xs, _) => tensors.extend(scalar_iter.by_ref().take(xs.len())),
                _ => {}
            }
        }
        let types: Vec<TensorType> = tensors
            .iter()
            .map(|t| TensorType::new(element_type(t), t.shape()))
            .collect();
        let literals: Vec<String> = args
            .iter()
            .map(|a| match a {
                Arg::Tensor(_) | Arg::Scalar(..) => "_".to_string(),
                Arg::Scalars(xs, _) => format!("[{}]", vec!["_"; xs.len()].join(", ")),
                Arg::Num(x) => format!("{:?}", x.to_bits()),
                other => format!("{other:?}"),
            })
            .collect();
        let key = Key {
            program: format!("{}({})", op.name(), literals.join(", ")),
            args: types.clone(),
        };
        let exe = self.executable(key, || {
            let (mut f, params) = Function::new(&types);
            let mut params = params.into_iter();
            let operands: Vec<Operand> = args
                .iter()
                .map(|a| match a {
                    Arg::Tensor(_) | Arg::Scalar(..) => {
                        Operand::Tensor(params.next().expect("one per tensor"))
                    }
                    Arg::Scalars(xs, _) => Operand::List(
                        xs.iter()
                            .map(|_| Operand::Tensor(params.next().expect("one per number")))
                            .collect(),
                    ),
                    Arg::Num(x) => Operand::Num(*x),
                    Arg::Int(n) => Operand::Int(*n),
                    Arg::Flag(b) => Operand::Flag(*b),
                    Arg::Dims(d) => Operand::Dims(d.clone()),
                    Arg::Nums(v) => Operand::List(v.iter().map(|&x| Operand::Num(x)).collect()),
                })
                .collect();
            let results = lower_op(&mut f, op, &operands)?;
            Ok(f.finish(&results))
        })?;
        self.execute(&exe, &tensors)
    }

    /// `func` of `program` called with `args` on the device: the whole function
    /// lowered to one program (src/xla/stablehlo/function.rs), compiled once per
    /// (function, argument kinds, shapes and element types), run; its results as
    /// tensors (numbers as rank-0 tensors, a tuple's parts in order). Numbers and the
    /// tensors a function makes from nothing take the run's precision
    /// (`tensor::precision`). The cache key names the function by id and name, so a
    /// device serves one program at a time.
    pub fn run_function(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
    ) -> Result<Vec<Tensor>, XlaError> {
        let elem = ElementType::of(k::precision());
        let (outputs, template) = self.call_function(program, func, args)?;
        let mut flat = Vec::new();
        flatten_results(&template, &outputs, elem, &mut flat)?;
        Ok(flat)
    }

    /// [`Device::run_function`]'s outputs as the program returns them, with the
    /// [`Template`] that rebuilds the function's result from them.
    pub fn call_function(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
    ) -> Result<(Vec<Tensor>, Template), XlaError> {
        let elem = ElementType::of(k::precision());
        let (mut params, mut owned, mut kinds) = (Vec::new(), Vec::new(), String::new());
        flatten_args(args, elem, &mut params, &mut owned, &mut kinds, false)?;
        let inputs: Vec<&Tensor> = owned.iter().map(Input::tensor).collect();
        let key = Key {
            program: format!(
                "fn #{} {} ({kinds}) {elem:?}",
                func.0,
                program.func(func).name
            ),
            args: inputs
                .iter()
                .map(|t| TensorType::new(element_type(t), t.shape()))
                .collect(),
        };
        if let Some(e) = self.refused.get(&key) {
            return Err(XlaError::Lower(e.clone()));
        }
        let mut made = None;
        let exe = self.executable(key.clone(), || {
            let (text, template) = lower_function_with_template(program, func, &params, elem)?;
            made = Some(template);
            Ok(text)
        });
        let exe = match exe {
            Err(XlaError::Lower(e)) => {
                self.refused.insert(key, e.clone());
                return Err(XlaError::Lower(e));
            }
            other => other?,
        };
        if let Some(t) = made {
            self.templates.insert(key.clone(), t);
        }
        let template =
            self.templates.get(&key).cloned().ok_or_else(|| {
                XlaError::Result("a compiled function without its template".into())
            })?;
        // A host parameter (a tensor inside a record or list) goes to the device
        // once: the next call that passes the same host tensor takes the copy.
        self.placed.retain(|(h, _)| !h.storage_unique());
        for input in &mut owned {
            let Input::Nested(t) = input else { continue };
            if t.rank() == 0 || t.device_data().is_some() {
                continue;
            }
            let found = self
                .placed
                .iter()
                .find(|(h, _)| h.shape() == t.shape() && h.shares_storage(t))
                .map(|(_, r)| r.clone());
            let r = match found {
                Some(r) => r,
                None => {
                    let b = self
                        .client
                        .to_device(&HostArray::of(t), t.shape(), self.ordinal)?;
                    note_in(t.nbytes());
                    let r = resident_tensor(b, t.shape(), element_type(t), &self.probe);
                    self.placed.push(((*t).clone(), r.clone()));
                    r
                }
            };
            *input = Input::Owned(r);
        }
        let inputs: Vec<&Tensor> = owned.iter().map(Input::tensor).collect();
        Ok((self.execute(&exe, &inputs)?, template))
    }
}

/// `x` as a rank-0 tensor of `elem`.
fn scalar_tensor(x: f64, elem: ElementType) -> Result<Tensor, XlaError> {
    match elem {
        ElementType::F32 => Tensor::from_f32(vec![x as f32], &[]),
        ElementType::F64 => Tensor::from_flat(vec![x], &[]),
    }
    .map_err(|e| XlaError::Result(e.to_string()))
}

/// The tensors of a result, in order: outputs as they are, folded numbers as rank-0
/// tensors of `elem`; integers, flags and `nihil` have none.
fn flatten_results(
    t: &Template,
    outputs: &[Tensor],
    elem: ElementType,
    out: &mut Vec<Tensor>,
) -> Result<(), XlaError> {
    match t {
        Template::Tensor(i) | Template::Number(i) => match outputs.get(*i) {
            Some(x) => out.push(x.clone()),
            None => return Err(XlaError::Result(format!("output {i} missing"))),
        },
        Template::Float(x) => out.push(
            match elem {
                ElementType::F32 => Tensor::from_f32(vec![*x as f32], &[]),
                ElementType::F64 => Tensor::from_flat(vec![*x], &[]),
            }
            .map_err(|e| XlaError::Result(e.to_string()))?,
        ),
        Template::Int(_) | Template::Bool(_) | Template::Nihil => {}
        Template::Tuple(parts) | Template::List(parts) | Template::Record(_, parts) => {
            for p in parts {
                flatten_results(p, outputs, elem, out)?;
            }
        }
    }
    Ok(())
}
