//! Recording the arguments of calls to chosen functions while a program runs: `faber
//! grad-check` takes the shapes and values it checks a gradient at from the program's
//! own `incipit` (docs/cli.md § grad-check).
//!
//! The hook costs one test of `Machine::capture` (`None` in every ordinary run) per
//! call, in the VM's call instruction and in `Machine::invoke`. Once every watched
//! target has its calls, the run is ended with a RUN014 error at that call: the
//! caller asks [`CallCapture::complete`] before treating the error as the program's.

use super::machine::{Machine, Res};
use super::value::Value;
use super::{Io, RunConfig, RuntimeError};
use crate::diag::codes;
use crate::ir::{FuncId, Program};
use crate::source::Span;

/// What to record and what was recorded: for each target, the leading arguments of
/// its first `per_target` calls (a target may be reached through several functions,
/// e.g. a primal and its companion, which share leading parameters).
#[derive(Debug, Clone)]
pub struct CallCapture {
    /// Per function id: the target its calls count for and how many leading
    /// arguments to keep.
    watch: Vec<Option<(usize, usize)>>,
    per_target: usize,
    calls: Vec<Vec<Vec<Value>>>,
    /// Targets that have all their calls.
    full: usize,
}

impl CallCapture {
    /// Records up to `per_target` calls (at least one) for each of `targets` targets.
    pub fn new(program: &Program, targets: usize, per_target: usize) -> CallCapture {
        CallCapture {
            watch: vec![None; program.functions.len()],
            per_target: per_target.max(1),
            calls: vec![Vec::new(); targets],
            full: 0,
        }
    }

    /// Calls of `func` count for `target`; their first `keep` arguments are kept.
    pub fn watch(&mut self, func: FuncId, target: usize, keep: usize) {
        if let Some(w) = self.watch.get_mut(func.0 as usize) {
            *w = Some((target, keep));
        }
    }

    /// The argument lists recorded for `target`, in call order.
    pub fn calls(&self, target: usize) -> &[Vec<Value>] {
        self.calls.get(target).map_or(&[], Vec::as_slice)
    }

    /// Whether every target has all its calls (the run was then ended early).
    pub fn complete(&self) -> bool {
        self.full == self.calls.len()
    }

    /// Records a call of `func` with `args`; true when this call completed the capture.
    fn record(&mut self, func: FuncId, args: &[Value]) -> bool {
        let Some(&Some((target, keep))) = self.watch.get(func.0 as usize) else {
            return false;
        };
        let got = &mut self.calls[target];
        if got.len() >= self.per_target || args.len() < keep {
            return false;
        }
        got.push(args[..keep].to_vec());
        if got.len() == self.per_target {
            self.full += 1;
            return self.complete();
        }
        false
    }
}

impl Machine<'_, '_> {
    /// The capture hook: `func` is being called with its `n` arguments at
    /// `stack[base..]`. Ends the run once the capture is complete.
    #[cold]
    #[inline(never)]
    pub(super) fn capture_call(
        &mut self,
        func: FuncId,
        base: usize,
        n: usize,
        span: Span,
    ) -> Res<()> {
        let Some(c) = self.capture.as_mut() else {
            return Ok(());
        };
        let args = self.stack.get(base..base + n).unwrap_or(&[]);
        if c.record(func, args) {
            return Err(self.error(
                codes::RUN_STEP_BUDGET,
                "the run was ended here: every function to check has its calls",
                span,
            ));
        }
        Ok(())
    }
}

/// [`super::run_entry`] with `capture` watching calls; returns the run's result (an
/// early end shows as a RUN014 error while `capture.complete()`) and the capture.
#[allow(clippy::result_large_err)] // once per run
pub fn run_entry_capturing(
    program: &Program,
    io: &mut dyn Io,
    config: &RunConfig,
    capture: CallCapture,
) -> (Result<i64, RuntimeError>, CallCapture) {
    if capture.complete() {
        return (Ok(0), capture);
    }
    let _run = config.install();
    let narrowed = config
        .narrows()
        .then(|| super::narrow::narrowed(program))
        .flatten();
    let program = narrowed.as_ref().unwrap_or(program);
    let mut m = Machine::new(program, io, config);
    m.capture = Some(Box::new(capture));
    let result = super::run_entry_in(&mut m);
    let capture = m.capture.take().map(|c| *c);
    (
        result,
        capture.unwrap_or_else(|| CallCapture::new(program, 0, 1)),
    )
}
