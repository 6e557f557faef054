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
//! With an SPMD runner ([`DeviceOffload::with_spmd`], `--devices N`), a call of the
//! train step ([`is_train_step`]) runs data-parallel on N devices instead
//! (src/xla/spmd.rs).
//!
//! The train step's results (the gradient tree) are replicated over the N devices
//! and stay there; a later call with such a value among its arguments (the
//! optimizer's leaf update, the gradient norm) and no top-level tensor of rank ≥ 1
//! from elsewhere (a loss estimate's batch) runs replicated on the N devices too
//! ([`Spmd::call_replicated`]), so the parameters and the optimizer's state stay
//! replicated between steps and only the batch moves in.
//!
//! With `[run.sharding]` rules ([`DeviceOffload::with_sharding`]) the train step's
//! parameters they name go in split over the N devices (tensor parallel); a rule
//! that names no parameter, or one whose axis N does not divide, is CLI018.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::device::{Arg, Device, FnArg, XlaError};
use super::exec::ElementType;
use super::plugin::Stage;
use super::resident::Traffic;
use super::spmd::{rule_index, Sharding, Spmd, SpmdError};
use super::stablehlo::{LowerError, Template};
use crate::diag::{codes, Code};
use crate::eval::offload::Offload;
use crate::eval::{Record, Value};
use crate::ir::ops::{Op, OpResult};
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
    /// Per function left to the interpreter, the statement whose lowering failed,
    /// when the tracer knows it (`--verbose` prints its `file:line`).
    pub declined_at: std::collections::BTreeMap<String, crate::source::Span>,
    /// Single ops run on the device because an operand was there, per op name.
    pub ops: std::collections::BTreeMap<String, u64>,
    /// Ops whose operands were on the device but which ran on the host, with why.
    pub ops_declined: std::collections::BTreeMap<String, String>,
    /// Of the offloaded function calls: programs compiled (compile-cache misses) and
    /// calls that found their program compiled (hits).
    pub compiled: u64,
    pub cache_hits: u64,
    /// Wall time of the offloaded calls that compiled: tracing, lowering, compiling and
    /// that call's run with its copies.
    pub compiling_calls: std::time::Duration,
    /// Programs the device compiled in all, single ops' included.
    pub programs: u64,
    /// The thread's device traffic when the hook was made: [`Traffic::since`] gives
    /// what the run moved.
    pub start: Traffic,
    /// Calls of the train step run data-parallel over several devices (`--devices
    /// N`: src/xla/spmd.rs), per function, and the device count.
    pub data_parallel: std::collections::BTreeMap<String, u64>,
    pub devices: usize,
    /// Calls run replicated on the N devices (an argument was replicated there), per
    /// function.
    pub replicated: std::collections::BTreeMap<String, u64>,
    /// Calls other than the train step run on the N devices with a split value
    /// among their arguments (tensor parallel: the optimizer on split
    /// parameters), per function.
    pub split: std::collections::BTreeMap<String, u64>,
}

/// The hook: a device, and what it has learnt about the program's functions.
pub struct DeviceOffload<'p> {
    device: Device<'p>,
    /// Functions that did not lower, or compiled too often.
    declined: HashSet<FuncId>,
    /// Programs compiled per function.
    programs: HashMap<FuncId, u64>,
    /// Ops that run on the host even with operands on the device, and the programs
    /// compiled per op for literal numbers.
    ops_declined: HashSet<Op>,
    op_programs: HashMap<Op, u64>,
    stats: Rc<std::cell::RefCell<Stats>>,
    /// `--devices N` (N > 1): the train step's runner over N devices.
    spmd: Option<Spmd<'p>>,
    /// `[run.sharding]`: the train step's parameters split over those devices.
    rules: Vec<(String, Sharding)>,
}

impl<'p> DeviceOffload<'p> {
    /// The hook over `device`; `stats` is updated as calls run (the caller keeps a
    /// clone to read it after the run).
    pub fn new(device: Device<'p>, stats: Rc<std::cell::RefCell<Stats>>) -> DeviceOffload<'p> {
        stats.borrow_mut().start = Traffic::now();
        DeviceOffload {
            device,
            declined: HashSet::new(),
            programs: HashMap::new(),
            ops_declined: HashSet::new(),
            op_programs: HashMap::new(),
            stats,
            spmd: None,
            rules: Vec::new(),
        }
    }

    /// The hook running the train step data-parallel on `spmd`'s devices
    /// ([`is_train_step`]); every other call as before, on one device.
    pub fn with_spmd(mut self, mut spmd: Spmd<'p>) -> DeviceOffload<'p> {
        self.stats.borrow_mut().devices = spmd.devices();
        spmd.share_home(self.device.ordinal(), self.device.probe());
        self.spmd = Some(spmd);
        self
    }

    /// The train step's parameters that `rules` (`[run.sharding]`: a dotted path
    /// pattern, `*` any one part, and how it lies) name split over the SPMD
    /// runner's devices: tensor parallel (docs/xla.md).
    pub fn with_sharding(mut self, rules: Vec<(String, Sharding)>) -> DeviceOffload<'p> {
        self.rules = rules;
        self
    }

    /// The train step on the N devices, or `None` when `func` is not one (or there
    /// is no SPMD runner, or it does not lower: the one-device path then declines
    /// it with why).
    fn call_spmd(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
        values: &[Value],
    ) -> Option<Result<Value, (Code, String)>> {
        let spmd = self.spmd.as_mut()?;
        let name = &program.func(func).name;
        let step = is_train_step(name, args);
        // `[run.sharding]` names parameters wherever they are passed: a call taking
        // one (the optimizer's initial state, an evaluation before the first step)
        // runs on the N devices with it split, so no device ever holds it whole.
        let leaves = if self.rules.is_empty() {
            Vec::new()
        } else {
            match leaf_shardings(program, values, &self.rules, spmd.devices(), step) {
                Ok(l) => l,
                Err(why) => {
                    return Some(Err((
                        codes::CLI_SHARDING,
                        format!("`{name}` on {} devices: {why}", spmd.devices()),
                    )))
                }
            }
        };
        let ruled = leaves.iter().any(Option::is_some);
        // Another call runs replicated when it takes a replicated value and no data
        // from elsewhere: a top-level tensor of rank ≥ 1 not replicated (a loss
        // estimate's batch) sends it to the home device alone, which takes the
        // replicated values' buffers there. A split value has no whole buffer on
        // one device: a call taking one runs on the N devices whatever else it
        // takes (a batch then goes whole to each).
        let replicated = !step
            && (ruled
                || args.iter().any(|a| holds_split(a, spmd))
                || (args.iter().any(|a| holds_replicated(a, spmd))
                    && !args
                        .iter()
                        .any(|a| matches!(a, FnArg::Tensor(t) if t.rank() > 0 && !spmd.holds(t)))));
        if !step && !replicated {
            return None;
        }
        // The host parameters' one-device copies go before the call places them
        // over the devices (so the home device does not hold them twice).
        self.device.forget_placed();
        let before = spmd.compiles;
        let called = if step {
            spmd.call_function(program, func, args, &leaves)
        } else {
            spmd.call_replicated(program, func, args, &leaves)
        };
        let compiled = spmd.compiles - before;
        let (outputs, template) = match called {
            Ok(r) => r,
            Err(SpmdError::Xla(XlaError::Lower(_))) => return None,
            Err(e @ SpmdError::Indivisible { .. }) => {
                return Some(Err((
                    codes::CLI_SPMD_BATCH,
                    format!("`{name}` on {} devices: {e}", spmd.devices()),
                )))
            }
            Err(SpmdError::Xla(e)) => {
                return Some(Err((
                    code_of(&e),
                    format!("`{name}` on the XLA devices: {e}"),
                )))
            }
            Err(e) => return Some(Err((codes::CLI_XLA_EXECUTE, e.to_string()))),
        };
        let mut stats = self.stats.borrow_mut();
        stats.offloaded += 1;
        let per = if step {
            &mut stats.data_parallel
        } else if spmd.last_split {
            &mut stats.split
        } else {
            &mut stats.replicated
        };
        count_call(per, name);
        drop(stats);
        let n = self.programs.entry(func).or_insert(0);
        *n += compiled;
        if *n >= MAX_PROGRAMS {
            self.decline(
                program,
                func,
                format!("compiled for {MAX_PROGRAMS} argument signatures"),
            );
        }
        self.count();
        let mut outputs: Vec<Option<Tensor>> = outputs.into_iter().map(Some).collect();
        Some(rebuild(&template, &mut outputs).map_err(|m| (codes::CLI_XLA_EXECUTE, m)))
    }

    /// Copies the device's counters into the stats.
    fn count(&self) {
        let mut s = self.stats.borrow_mut();
        s.programs = self.device.cache().misses() + self.spmd.as_ref().map_or(0, |s| s.compiles);
    }

    fn decline_op(&mut self, op: Op, why: String) {
        self.ops_declined.insert(op);
        self.stats
            .borrow_mut()
            .ops_declined
            .entry(op.name().to_string())
            .or_insert(why);
    }

    /// `op` on `args` on the device: numbers first as parameters (one program for
    /// every value), then, where the lowering needs them literal, baked in. Integers
    /// are always baked in, so the programs of a call with one (a seed, a bound)
    /// count as literal numbers' do: an op given a new seed at every call
    /// (sampling's `multinomialis`) goes back to the host after [`MAX_PROGRAMS`].
    fn run_op(&mut self, op: Op, args: &[&Value]) -> Result<Vec<Tensor>, XlaError> {
        let before = self.device.cache().misses();
        let elem = op_element(args);
        let params = args
            .iter()
            .map(|v| op_arg(v, Some(elem)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| {
                XlaError::Lower(LowerError::Shape {
                    op: op.name(),
                    reason: "an operand the device does not take".into(),
                })
            })?;
        match self.device.run_op(op, &params) {
            Err(XlaError::Lower(_))
                if params
                    .iter()
                    .any(|a| matches!(a, Arg::Scalar(..) | Arg::Scalars(..))) => {}
            other => {
                if args.iter().any(|v| matches!(v, Value::Int(_))) {
                    self.count_programs(op, before);
                }
                return other;
            }
        }
        let literal: Vec<Arg> = args
            .iter()
            .map(|v| op_arg(v, None))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let r = self.device.run_op(op, &literal);
        self.count_programs(op, before);
        r
    }

    /// Adds the programs compiled since `before` (the cache's misses then) to `op`'s;
    /// at [`MAX_PROGRAMS`] the op runs on the host from then on.
    fn count_programs(&mut self, op: Op, before: u64) {
        let n = self.op_programs.entry(op).or_insert(0);
        *n += self.device.cache().misses() - before;
        if *n >= MAX_PROGRAMS {
            self.decline_op(op, format!("compiled for {MAX_PROGRAMS} literal operands"));
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

/// The element type an op's number operands take on the device: f32 when every
/// tensor operand is f32, else f64 (the promotion rule of docs/precision.md).
fn op_element(args: &[&Value]) -> ElementType {
    let all_f32 = args.iter().all(|v| match v {
        Value::Tensor(t) => t.dtype() == crate::tensor::DType::F32,
        _ => true,
    });
    if all_f32 {
        ElementType::F32
    } else {
        ElementType::F64
    }
}

/// The operand of [`Device::run_op`] for an op's operand: numbers as parameters of
/// `scalars`' type when given, else as literals; `None` for a value the device does
/// not take.
fn op_arg<'v>(v: &'v Value, scalars: Option<ElementType>) -> Option<Arg<'v>> {
    Some(match (v, scalars) {
        (Value::Tensor(t), _) => Arg::Tensor(t),
        (Value::Float(x), Some(e)) => Arg::Scalar(*x, e),
        (Value::Float(x), None) => Arg::Num(*x),
        (Value::Int(n), _) => Arg::Int(*n),
        (Value::Bool(b), _) => Arg::Flag(*b),
        (Value::List(items), _) if items.iter().all(|i| matches!(i, Value::Int(_))) => Arg::Dims(
            items
                .iter()
                .map(|i| match i {
                    Value::Int(n) => usize::try_from(*n).ok(),
                    _ => None,
                })
                .collect::<Option<_>>()?,
        ),
        (Value::List(items), _) => {
            let xs = items
                .iter()
                .map(|i| match i {
                    Value::Float(x) => Some(*x),
                    Value::Int(n) => Some(*n as f64),
                    _ => None,
                })
                .collect::<Option<Vec<f64>>>()?;
            match scalars {
                Some(e) => Arg::Scalars(xs, e),
                None => Arg::Nums(xs),
            }
        }
        _ => return None,
    })
}

/// The `[run.sharding]` sharding of every tensor leaf of `args` (depth first, as
/// [`fn_arg`] and the SPMD runner flatten them), `None` where no rule names it; a
/// leaf's path is as `hospes.nomina_foliorum` names it inside its top-level
/// argument (a top-level tensor, the batch, has none). A leaf a rule names whose
/// axis `n` does not divide, or that has no axis, is the error (CLI018), and so is
/// — when `every_rule` (the train step, which takes every parameter) — a rule no
/// leaf fits.
fn leaf_shardings(
    program: &Program,
    args: &[Value],
    rules: &[(String, Sharding)],
    n: usize,
    every_rule: bool,
) -> Result<Vec<Option<Sharding>>, String> {
    let mut out = Vec::new();
    let mut used = vec![false; rules.len()];
    let mut path = String::new();
    for a in args {
        path.clear();
        each_leaf(program, a, &mut path, &mut |path, t| {
            let rule = if path.is_empty() {
                None
            } else {
                rule_index(rules, path)
            };
            let Some(i) = rule else {
                out.push(None);
                return Ok(());
            };
            used[i] = true;
            let s = rules[i].1;
            let fits = s.axis(t.rank()).is_some_and(|a| {
                let len = t.shape()[a];
                len > 0 && len.is_multiple_of(n)
            });
            if !fits {
                let how = if s == Sharding::Columns {
                    "columns"
                } else {
                    "rows"
                };
                return Err(format!(
                    "`[run.sharding]` splits the {how} of parameter `{path}` (shape {:?}), \
                     which do not split into {n} equal shards",
                    t.shape()
                ));
            }
            out.push(Some(s));
            Ok(())
        })?;
    }
    // A key that names no parameter (a typo, a model without such a leaf).
    if every_rule {
        if let Some(i) = used.iter().position(|u| !u) {
            return Err(format!(
                "`[run.sharding]` key `{}` names none of the step's parameters",
                rules[i].0
            ));
        }
    }
    Ok(out)
}

/// Calls `f` with each tensor leaf of `v`, depth first, and its dotted path below
/// `path` (record fields by name, list items by index), stopping at its first error.
fn each_leaf(
    program: &Program,
    v: &Value,
    path: &mut String,
    f: &mut impl FnMut(&str, &Tensor) -> Result<(), String>,
) -> Result<(), String> {
    let mut visit = |label: &dyn std::fmt::Display, c: &Value, path: &mut String| {
        use std::fmt::Write;
        let len = path.len();
        if !path.is_empty() {
            path.push('.');
        }
        let _ = write!(path, "{label}");
        let r = each_leaf(program, c, path, f);
        path.truncate(len);
        r
    };
    match v {
        Value::Tensor(t) => f(path, t),
        Value::Record(r) => {
            let genus = program.genera.get(r.genus.0 as usize);
            for (i, c) in r.fields.iter().enumerate() {
                match genus.and_then(|g| g.fields.get(i)) {
                    Some(field) => visit(&field.name, c, path)?,
                    None => visit(&i, c, path)?,
                }
            }
            Ok(())
        }
        Value::List(items) => {
            for (i, c) in items.iter().enumerate() {
                visit(&i, c, path)?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// One more call of `name` in `counts` (the name copied only the first time: a
/// device call is tens of microseconds, an allocation per call would show).
fn count_call(counts: &mut std::collections::BTreeMap<String, u64>, name: &str) {
    match counts.get_mut(name) {
        Some(n) => *n += 1,
        None => {
            counts.insert(name.to_string(), 1);
        }
    }
}

/// Whether `a` holds a tensor on `spmd`'s devices (replicated, or split).
fn holds_replicated(a: &FnArg, spmd: &Spmd) -> bool {
    match a {
        FnArg::Tensor(t) => spmd.holds(t),
        FnArg::Record(fields) | FnArg::List(fields) => {
            fields.iter().any(|f| holds_replicated(f, spmd))
        }
        _ => false,
    }
}

/// Whether `a` holds a tensor split over `spmd`'s devices.
fn holds_split(a: &FnArg, spmd: &Spmd) -> bool {
    match a {
        FnArg::Tensor(t) => spmd.splits(t),
        FnArg::Record(fields) | FnArg::List(fields) => fields.iter().any(|f| holds_split(f, spmd)),
        _ => false,
    }
}

fn has_tensor(a: &FnArg) -> bool {
    match a {
        FnArg::Tensor(_) => true,
        FnArg::Record(fields) | FnArg::List(fields) => fields.iter().any(has_tensor),
        _ => false,
    }
}

/// Whether a call of the function `name` with `args` is the train step that `--devices
/// N` runs data-parallel: a gradient companion (its name, after any module path,
/// begins with `grad_`: `@ radix backward "grad_f"` or one the autodiff pass
/// generated) called with a top-level tensor of rank ≥ 1 — the batch.
pub fn is_train_step(name: &str, args: &[FnArg]) -> bool {
    let base = name.rsplit("::").next().unwrap_or(name);
    base.starts_with("grad_")
        && args
            .iter()
            .any(|a| matches!(a, FnArg::Tensor(t) if t.rank() > 0))
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
        if let Some(r) = self.call_spmd(program, func, &fargs, args) {
            return Some(r);
        }
        let before = self.device.cache().misses();
        let hits = self.device.cache().hits();
        let start = std::time::Instant::now();
        let called = self.device.call_function(program, func, &fargs);
        let compiled = self.device.cache().misses() - before;
        {
            let mut stats = self.stats.borrow_mut();
            stats.compiled += compiled;
            stats.cache_hits += self.device.cache().hits() - hits;
            if compiled > 0 {
                stats.compiling_calls += start.elapsed();
            }
        }
        let n = self.programs.entry(func).or_insert(0);
        *n += compiled;
        let too_many = *n >= MAX_PROGRAMS;
        let result = match called {
            Ok((outputs, template)) => {
                let mut outputs: Vec<Option<Tensor>> = outputs.into_iter().map(Some).collect();
                let mut stats = self.stats.borrow_mut();
                stats.offloaded += 1;
                count_call(&mut stats.by_function, &program.func(func).name);
                drop(stats);
                rebuild(&template, &mut outputs).map_err(|m| (codes::CLI_XLA_EXECUTE, m))
            }
            Err(XlaError::Lower(e)) => {
                if let Some(span) = e.span() {
                    self.stats
                        .borrow_mut()
                        .declined_at
                        .insert(program.func(func).name.clone(), span);
                }
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
        self.count();
        Some(result)
    }

    fn first_non_finite(&mut self, leaves: &[&Tensor]) -> Option<Option<usize>> {
        // Split values have no whole buffer on one device: the N devices count
        // their shards in one program.
        if let Some(spmd) = self.spmd.as_mut() {
            if leaves.iter().any(|t| spmd.splits(t)) {
                let found = spmd.first_non_finite(leaves);
                self.count();
                return found;
            }
        }
        self.device.first_non_finite(leaves)
    }

    fn op(&mut self, op: Op, args: &[&Value]) -> Option<Result<Value, (Code, String)>> {
        if self.ops_declined.contains(&op) {
            return None;
        }
        let result = op.result();
        if !matches!(
            result,
            OpResult::Tensor | OpResult::Float | OpResult::Pair | OpResult::Triple
        ) {
            return None;
        }
        let ran = self.run_op(op, args);
        let answer = match ran {
            Ok(outs) => {
                count_call(&mut self.stats.borrow_mut().ops, op.name());
                op_value(result, outs).map_err(|m| (codes::CLI_XLA_EXECUTE, m))
            }
            Err(XlaError::Lower(e)) => {
                self.decline_op(op, e.to_string());
                return None;
            }
            Err(e) => Err((
                code_of(&e),
                format!("`{}` on the XLA device: {e}", op.name()),
            )),
        };
        self.count();
        Some(answer)
    }
}

/// An op's device outputs as the interpreter's value of its result kind.
fn op_value(kind: OpResult, outs: Vec<Tensor>) -> Result<Value, String> {
    let n = match kind {
        OpResult::Pair => 2,
        OpResult::Triple => 3,
        _ => 1,
    };
    if outs.len() != n {
        return Err(format!(
            "the device program gave {} outputs, not {n}",
            outs.len()
        ));
    }
    let mut outs = outs.into_iter();
    Ok(match kind {
        OpResult::Float => {
            let x = outs.next().ok_or("no output")?;
            match (x.rank(), x.value_at(0)) {
                (0, Some(v)) => Value::Float(v),
                _ => return Err("the device's number is not a rank-0 tensor".into()),
            }
        }
        OpResult::Pair | OpResult::Triple => {
            Value::Tuple(Rc::new(outs.map(|t| Value::Tensor(Rc::new(t))).collect()))
        }
        _ => Value::Tensor(Rc::new(outs.next().ok_or("no output")?)),
    })
}
