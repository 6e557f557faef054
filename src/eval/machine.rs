//! The machine's state: one contiguous value stack, a frame is a base offset into
//! it, the globals, the active calls ([`Frame`]) and the compiled code of every
//! function; plus what every part of the machine shares — counting steps, raising
//! errors with their call trace, reading operands.
//!
//! The parts that run code are `impl Machine` blocks beside this file, each importing
//! only this one: `vm.rs` (the dispatch loop over `bytecode.rs`), `exec.rs` (the tree
//! walker for statements the code generator leaves as IR), `loops.rs` (`itera`),
//! `place.rs` (writes through place paths), `capture.rs` (the call-capture hook).
//!
//! A call pushes its arguments (captures first) at the top of `stack`, grows the
//! stack to the callee's slot count and runs the body with `base` pointing at the
//! first argument; slot `n` is `stack[base + n]`. The caller truncates the stack
//! back when the call ends (normally or by unwinding), so no per-call allocation
//! happens. `calls` records (callee, call-site span) for the depth limit and for
//! error traces.

use std::borrow::Cow;
use std::rc::Rc;

use super::bytecode::{self, NO_DST};
use super::codegen::emit_program;
use super::display::display;
use super::value::Value;
use super::{Fault, Io, RunConfig, RuntimeError, TRACE_LIMIT};
use crate::diag::{codes, Code};
use crate::ir::{Const, FuncId, Operand, Program, Slot};
use crate::source::Span;

/// One active call: `Machine::calls` holds one per call, for the depth limit and
/// error traces. A call made by compiled code also records where its caller
/// resumes (function, pc, frame base, result slot).
pub(super) struct Frame {
    pub(super) func: FuncId,
    pub(super) span: Span,
    pub(super) ret_func: u32,
    pub(super) ret_pc: u32,
    pub(super) ret_base: usize,
    pub(super) dst: u32,
}

impl Frame {
    /// A call entered from outside compiled code (`Machine::invoke`): `run` returns
    /// when it ends.
    pub(super) fn outer(func: FuncId, span: Span) -> Frame {
        Frame {
            func,
            span,
            ret_func: 0,
            ret_pc: 0,
            ret_base: 0,
            dst: NO_DST,
        }
    }
}

/// Why execution left the normal statement sequence abnormally.
pub(crate) enum Unwind {
    /// A thrown value (`iace`, failed `↦`), catchable by `Try`.
    Throw {
        value: Value,
        span: Span,
        conversion: bool,
        trace: Vec<(String, Span)>,
        omitted: usize,
    },
    /// A fatal error; never caught.
    Error(RuntimeError),
}

pub(super) type Res<T> = Result<T, Box<Unwind>>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flow {
    Normal,
    Break,
    Continue,
    /// The function returns; the value is in `Machine::ret`.
    Return,
}

pub(crate) struct Machine<'p, 'io> {
    pub(super) prog: &'p Program,
    pub(super) io: &'io mut dyn Io,
    pub(super) stack: Vec<Value>,
    pub(super) base: usize,
    pub(super) globals: Vec<Value>,
    /// One entry per active call (callee, call-site span; for compiled callers
    /// also where to resume, see `vm.rs`).
    pub(super) calls: Vec<Frame>,
    pub(super) ret: Value,
    /// Every function of `prog`, compiled once (`codegen/`).
    pub(super) codes: Rc<[bytecode::Code<'p>]>,
    /// Steps (loop iterations and calls) left before RUN014 (`--max-steps`).
    pub(super) steps_left: u64,
    /// The `lista` growth limit, read once (the VM's append fast path checks it).
    pub(super) list_limit: usize,
    /// Calls to record (`faber grad-check`, `capture.rs`); `None` in ordinary runs.
    pub(super) capture: Option<Box<super::CallCapture>>,
    /// `faber run --check-finite`: stop at the first op whose result is not finite
    /// (`finite.rs`), read once.
    pub(super) check_finite: bool,
    /// The step budget the run started with (for RUN014's message).
    max_steps: u64,
}

pub(super) fn const_value(c: &Const) -> Value {
    match c {
        Const::Int(i) => Value::Int(*i),
        Const::Float(f) => Value::Float(*f),
        Const::Bool(b) => Value::Bool(*b),
        Const::Text(t) => Value::text(t.as_str()),
        Const::Bytes(b) => Value::Bytes(Rc::new(b.clone())),
        Const::Nihil => Value::Nihil,
        Const::Vacuum => Value::Vacuum,
    }
}

impl<'p, 'io> Machine<'p, 'io> {
    pub(crate) fn new(prog: &'p Program, io: &'io mut dyn Io, config: &RunConfig) -> Self {
        let max_steps = config.max_steps.unwrap_or(u64::MAX);
        Machine {
            prog,
            io,
            stack: Vec::with_capacity(1024),
            base: 0,
            globals: vec![Value::Vacuum; prog.globals.len()],
            calls: Vec::with_capacity(64),
            ret: Value::Vacuum,
            codes: emit_program(prog),
            steps_left: max_steps,
            list_limit: config.max_list_items,
            capture: None,
            check_finite: config.check_finite,
            max_steps,
        }
    }

    /// Counts one step (a loop iteration or a call) against the `--max-steps` budget,
    /// and stops the run at an interrupt (src/eval/interrupt.rs).
    #[inline(always)]
    pub(super) fn tick(&mut self, span: Span) -> Res<()> {
        if self.steps_left == 0 || super::interrupt::interrupted() {
            return Err(self.budget_error(span));
        }
        if crate::mem::over() {
            return Err(self.memory_error(span));
        }
        self.steps_left -= 1;
        Ok(())
    }

    /// The heap grew beyond `--max-memory-gib` during the last step (docs/robustness.md
    /// § Limits: checked once per step, and before each large allocation).
    #[cold]
    #[inline(never)]
    pub(super) fn memory_error(&mut self, span: Span) -> Box<Unwind> {
        self.error(codes::RUN_LIMIT, crate::mem::over_message(), span)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn budget_error(&mut self, span: Span) -> Box<Unwind> {
        if super::interrupt::interrupted() {
            return self.error(
                codes::RUN_INTERRUPTED,
                "the run was interrupted (SIGINT, Ctrl-C)".to_string(),
                span,
            );
        }
        self.error(
            codes::RUN_STEP_BUDGET,
            format!(
                "the program ran more than {} steps (loop iterations and calls); raise `--max-steps` if it should",
                self.max_steps
            ),
            span,
        )
    }

    #[allow(clippy::result_large_err)] // once per run; the API the CLI expects
    pub(crate) fn run_inits(&mut self) -> Result<(), RuntimeError> {
        for &init in &self.prog.inits {
            self.call_top(init, Vec::new())?;
        }
        Ok(())
    }

    /// Calls `func` from outside any frame.
    #[allow(clippy::result_large_err)]
    pub(crate) fn call_top(
        &mut self,
        func: FuncId,
        args: Vec<Value>,
    ) -> Result<Value, RuntimeError> {
        let span = match self.prog.functions.get(func.0 as usize) {
            Some(f) => f.span,
            None => {
                return Err(RuntimeError::new(
                    codes::RUN_TYPE,
                    format!("no function #{}", func.0),
                    Span::default(),
                ))
            }
        };
        let base = self.stack.len();
        let n = args.len();
        self.stack.extend(args);
        let r = self.invoke(func, base, n, span);
        self.stack.truncate(base);
        r.map_err(|u| self.to_runtime_error(*u))
    }

    pub(super) fn to_runtime_error(&self, u: Unwind) -> RuntimeError {
        match u {
            Unwind::Error(e) => e,
            Unwind::Throw {
                value,
                span,
                conversion,
                trace,
                omitted,
            } => {
                let shown = display(&value, self.prog);
                let (code, msg) = if conversion {
                    (codes::RUN_CONVERSION, format!("conversion failed: {shown}"))
                } else {
                    (codes::RUN_UNCAUGHT, format!("uncaught `iace`: {shown}"))
                };
                let mut e = RuntimeError::new(code, msg, span);
                e.trace = trace;
                e.omitted = omitted;
                e
            }
        }
    }

    // ---- errors -------------------------------------------------------------

    /// The call trace, innermost first, without the outermost (top-level) call.
    /// When library frames fill the limit, it reaches on to the innermost call made
    /// from user code, where the rendered error is placed (`location.rs`).
    pub(super) fn trace(&self) -> (Vec<(String, Span)>, usize) {
        let inner = self.calls.get(1..).unwrap_or(&[]);
        let mut shown = inner.len().min(TRACE_LIMIT);
        // `t` counts from the innermost call; the caller of `inner[i]` is `calls[i]`.
        let n = inner.len();
        let from_user = |t: usize| {
            !super::location::is_library_function(&self.prog.func(self.calls[n - 1 - t].func).name)
        };
        if shown < n && !(0..shown).any(from_user) {
            if let Some(t) = (shown..n).find(|&t| from_user(t)) {
                shown = t + 1;
            }
        }
        let trace = inner
            .iter()
            .rev()
            .take(shown)
            .map(|c| (self.prog.func(c.func).name.clone(), c.span))
            .collect();
        (trace, inner.len() - shown)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn error(&self, code: Code, msg: impl Into<String>, span: Span) -> Box<Unwind> {
        let (trace, omitted) = self.trace();
        let mut e = RuntimeError::new(code, msg, span);
        e.trace = trace;
        e.omitted = omitted;
        e.gradient_of = self.gradient_of();
        Box::new(Unwind::Error(e))
    }

    /// `(companion, primal)` when the running function is a companion generated by
    /// `@ radix backward`, or a copy of one specialised to the gradients its caller
    /// reads (same name, `autodiff/demand.rs`). Looked up only when an error is raised.
    #[cold]
    pub(super) fn gradient_of(&self) -> Option<(String, String)> {
        let running = self.calls.last()?.func;
        let running_name = &self.prog.func(running).name;
        let req = self.prog.backward.iter().find(|b| {
            b.companion == running || self.prog.func(b.companion).name == *running_name
        })?;
        let name = |f| self.prog.func(f).name.clone();
        Some((name(req.companion), name(req.primal)))
    }

    #[cold]
    #[inline(never)]
    pub(super) fn throw(&self, value: Value, span: Span, conversion: bool) -> Box<Unwind> {
        let (trace, omitted) = self.trace();
        Box::new(Unwind::Throw {
            value,
            span,
            conversion,
            trace,
            omitted,
        })
    }

    #[cold]
    #[inline(never)]
    pub(super) fn fault_at(&self, f: Fault, span: Span) -> Box<Unwind> {
        match f {
            Fault::Error(code, msg) => self.error(code, msg, span),
            Fault::Throw(v) => self.throw(v, span, true),
            Fault::Exit(n) => {
                let mut e = self.error(
                    codes::RUN_MORI,
                    format!("`processus.exi({n})` ended the program"),
                    span,
                );
                if let Unwind::Error(e) = e.as_mut() {
                    e.exit = Some(n);
                }
                e
            }
        }
    }

    // ---- operands -----------------------------------------------------------

    #[inline(always)]
    pub(super) fn get<'a>(&'a self, op: &'a Operand) -> Cow<'a, Value> {
        match op {
            Operand::Slot(s) => Cow::Borrowed(&self.stack[self.base + s.0 as usize]),
            Operand::Global(g) => Cow::Borrowed(&self.globals[g.0 as usize]),
            Operand::Const(c) => Cow::Owned(const_value(c)),
        }
    }

    #[inline(always)]
    pub(super) fn val(&self, op: &Operand) -> Value {
        match op {
            Operand::Slot(s) => self.stack[self.base + s.0 as usize].clone(),
            Operand::Global(g) => self.globals[g.0 as usize].clone(),
            Operand::Const(c) => const_value(c),
        }
    }

    /// An Int operand, without touching reference counts.
    #[inline(always)]
    pub(super) fn int_op(&self, op: &Operand) -> Option<i64> {
        match op {
            Operand::Slot(s) => match self.stack[self.base + s.0 as usize] {
                Value::Int(i) => Some(i),
                _ => None,
            },
            Operand::Const(Const::Int(i)) => Some(*i),
            _ => None,
        }
    }

    /// A number operand as f64 when at least one side may be a Float.
    #[inline(always)]
    pub(super) fn float_op(&self, op: &Operand) -> Option<f64> {
        match op {
            Operand::Slot(s) => match self.stack[self.base + s.0 as usize] {
                Value::Float(f) => Some(f),
                Value::Int(i) => Some(i as f64),
                _ => None,
            },
            Operand::Const(Const::Float(f)) => Some(*f),
            Operand::Const(Const::Int(i)) => Some(*i as f64),
            _ => None,
        }
    }

    #[inline(always)]
    pub(super) fn set(&mut self, s: Slot, v: Value) {
        let slot = &mut self.stack[self.base + s.0 as usize];
        match slot {
            // Scalars need no drop: skip the out-of-line drop glue.
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Nihil | Value::Vacuum => {
                std::mem::forget(std::mem::replace(slot, v))
            }
            _ => *slot = v,
        }
    }

    pub(super) fn bool_of(&self, op: &Operand, what: &str, span: Span) -> Res<bool> {
        match &*self.get(op) {
            Value::Bool(b) => Ok(*b),
            other => Err(self.error(
                codes::RUN_TYPE,
                format!("{what} must be bivalens, found {}", other.type_name()),
                span,
            )),
        }
    }

    pub(super) fn int_of(&self, op: &Operand, what: &str, span: Span) -> Res<i64> {
        match &*self.get(op) {
            Value::Int(i) => Ok(*i),
            other => Err(self.error(
                codes::RUN_TYPE,
                format!("{what} must be numerus, found {}", other.type_name()),
                span,
            )),
        }
    }
}
