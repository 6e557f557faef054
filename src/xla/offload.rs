//! `faber run --backend xla`: the evaluator's call hook (src/eval/offload.rs) backed by
//! a PJRT [`Device`]. At a call whose arguments hold at least one tensor (tensors,
//! numbers, integers, flags, `nihil`, records and lists of them), the called function is
//! lowered whole to StableHLO (src/xla/stablehlo/function.rs), compiled once per
//! (function, argument kinds, shapes and dtypes) and run on the device; its result is
//! rebuilt as the interpreter's value. A function that does not lower (a host call,
//! a loop on device values, an op without a lowering, …) runs in the interpreter, and
//! is not traced again. A function that would compile for more than
//! [`MAX_PROGRAMS`] argument signatures (an integer argument that changes every call)
//! runs in the interpreter from then on.
//!
//! Values are copied to the device at each offloaded call and back at its return;
//! keeping them on the device between calls is the next step (docs/xla.md).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::device::{Device, FnArg, XlaError};
use super::plugin::Stage;
use super::stablehlo::Template;
use crate::diag::{codes, Code};
use crate::eval::offload::Offload;
use crate::eval::{Record, Value};
use crate::ir::{FuncId, Program};
use crate::tensor::Tensor;

/// The most programs one function is compiled to.
pub const MAX_PROGRAMS: u64 = 8;

/// What a run on the device did, for `--verbose` and the tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls the device ran.
    pub offloaded: u64,
    /// Per function (by name), the calls the device ran, in name order.
    pub by_function: std::collections::BTreeMap<String, u64>,
    /// Functions left to the interpreter, with why (the first reason seen).
    pub declined: Vec<(String, String)>,
}

/// The hook: a device, and what it has learnt about the program's functions.
pub struct DeviceOffload<'p> {
    device: Device<'p>,
    /// Functions that did not lower, or compiled too often.
    declined: HashSet<FuncId>,
    /// Programs compiled per function.
    programs: HashMap<FuncId, u64>,
    stats: Rc<std::cell::RefCell<Stats>>,
}

impl<'p> DeviceOffload<'p> {
    /// The hook over `device`; `stats` is updated as calls run (the caller keeps a
    /// clone to read it after the run).
    pub fn new(device: Device<'p>, stats: Rc<std::cell::RefCell<Stats>>) -> DeviceOffload<'p> {
        DeviceOffload {
            device,
            declined: HashSet::new(),
            programs: HashMap::new(),
            stats,
        }
    }

    fn decline(&mut self, program: &Program, func: FuncId, why: String) {
        self.declined.insert(func);
        self.stats
            .borrow_mut()
            .declined
            .push((program.func(func).name.clone(), why));
    }
}

/// The device argument for an interpreter value, or `None` for a value the device
/// does not take (a list, a text, a function, …).
fn fn_arg(v: &Value) -> Option<FnArg<'_>> {
    Some(match v {
        Value::Tensor(t) => FnArg::Tensor(t),
        Value::Float(x) => FnArg::Number(*x),
        Value::Int(n) => FnArg::Int(*n),
        Value::Bool(b) => FnArg::Bool(*b),
        // `vacuum` (a companion's residual from `vacuum_residuum()`) is never read.
        Value::Nihil | Value::Vacuum => FnArg::Nihil,
        Value::Record(r) => FnArg::Record(r.fields.iter().map(fn_arg).collect::<Option<_>>()?),
        Value::List(items) => FnArg::List(items.iter().map(fn_arg).collect::<Option<_>>()?),
        _ => return None,
    })
}

fn has_tensor(a: &FnArg) -> bool {
    match a {
        FnArg::Tensor(_) => true,
        FnArg::Record(fields) | FnArg::List(fields) => fields.iter().any(has_tensor),
        _ => false,
    }
}

/// The interpreter value `t` describes, taking tensors from `outputs`.
fn rebuild(t: &Template, outputs: &mut [Option<Tensor>]) -> Result<Value, String> {
    let mut take = |i: usize| {
        outputs
            .get_mut(i)
            .and_then(Option::take)
            .ok_or_else(|| format!("the device program has no output {i}"))
    };
    Ok(match t {
        Template::Tensor(i) => Value::Tensor(Rc::new(take(*i)?)),
        Template::Number(i) => {
            let x = take(*i)?;
            match x.values().first() {
                Some(v) if x.rank() == 0 => Value::Float(*v),
                _ => return Err(format!("output {i} is not a number")),
            }
        }
        Template::Float(x) => Value::Float(*x),
        Template::Int(n) => Value::Int(*n),
        Template::Bool(b) => Value::Bool(*b),
        Template::Nihil => Value::Nihil,
        Template::Tuple(parts) => Value::Tuple(Rc::new(
            parts
                .iter()
                .map(|p| rebuild(p, outputs))
                .collect::<Result<_, _>>()?,
        )),
        Template::List(parts) => Value::List(Rc::new(
            parts
                .iter()
                .map(|p| rebuild(p, outputs))
                .collect::<Result<_, _>>()?,
        )),
        Template::Record(genus, parts) => Value::Record(Rc::new(Record {
            genus: *genus,
            fields: parts
                .iter()
                .map(|p| rebuild(p, outputs))
                .collect::<Result<_, _>>()?,
        })),
    })
}

/// The code of a device failure: CLI012 out of device memory, CLI010 compiling,
/// CLI011 running.
fn code_of(e: &XlaError) -> Code {
    match e {
        XlaError::Plugin(p) if p.is_out_of_memory() => codes::CLI_XLA_OUT_OF_MEMORY,
        XlaError::Plugin(p) if p.stage() == Stage::Compile => codes::CLI_XLA_COMPILE,
        XlaError::Lower(_) => codes::CLI_XLA_COMPILE,
        _ => codes::CLI_XLA_EXECUTE,
    }
}

impl Offload for DeviceOffload<'_> {
    fn call(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[Value],
    ) -> Option<Result<Value, (Code, String)>> {
        if self.declined.contains(&func) {
            return None;
        }
        let fargs = args.iter().map(fn_arg).collect::<Option<Vec<_>>>()?;
        if !fargs.iter().any(has_tensor) {
            return None;
        }
        let before = self.device.cache().misses();
        let called = self.device.call_function(program, func, &fargs);
        let compiled = self.device.cache().misses() - before;
        let n = self.programs.entry(func).or_insert(0);
        *n += compiled;
        let too_many = *n >= MAX_PROGRAMS;
        let result = match called {
            Ok((outputs, template)) => {
                let mut outputs: Vec<Option<Tensor>> = outputs.into_iter().map(Some).collect();
                let mut stats = self.stats.borrow_mut();
                stats.offloaded += 1;
                *stats
                    .by_function
                    .entry(program.func(func).name.clone())
                    .or_insert(0) += 1;
                drop(stats);
                rebuild(&template, &mut outputs).map_err(|m| (codes::CLI_XLA_EXECUTE, m))
            }
            Err(XlaError::Lower(e)) => {
                self.decline(program, func, e.to_string());
                return None;
            }
            Err(e) => {
                let name = &program.func(func).name;
                Err((code_of(&e), format!("`{name}` on the XLA device: {e}")))
            }
        };
        if too_many {
            self.decline(
                program,
                func,
                format!("compiled for {MAX_PROGRAMS} argument signatures"),
            );
        }
        Some(result)
    }
}
