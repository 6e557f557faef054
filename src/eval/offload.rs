//! A hook through which a run hands some function calls to another executor:
//! `faber run --backend xla` installs one (src/xla/offload.rs) that lowers a called
//! function to StableHLO and runs it on a PJRT device. The evaluator asks the hook
//! at every call ([`try_call`], from `Machine::invoke`); the hook either answers the
//! call (its result, or an error with a code) or declines, and the interpreter runs
//! the call as always. Without a hook installed the check is one thread-local flag.
//!
//! The hook lives in a thread-local so the evaluator's types (and `RunConfig`, which
//! is `Copy`) need not know about devices; it is installed for one run by the
//! command line and removed when its [`Installed`] guard drops.

use std::cell::{Cell, RefCell};

use super::Value;
use crate::diag::Code;
use crate::ir::ops::Op;
use crate::ir::{FuncId, Program};

/// An executor for some calls.
pub trait Offload {
    /// Runs `func` of `program` on `args`: `Some(Ok(value))` when it ran the call,
    /// `Some(Err((code, message)))` when running it failed (the run stops with that
    /// diagnostic), `None` to leave the call to the interpreter.
    fn call(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[Value],
    ) -> Option<Result<Value, (Code, String)>>;

    /// Runs one op whose operands include a tensor on this executor's device
    /// (src/tensor/remote.rs), as [`Offload::call`] answers; `None` leaves it to the
    /// host kernel (which copies the operand to the host).
    fn op(&mut self, _op: Op, _args: &[&Value]) -> Option<Result<Value, (Code, String)>> {
        None
    }
}

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
    static HOOK: RefCell<Option<Box<dyn Offload>>> = RefCell::new(None);
}

/// Removes the hook it installed when dropped.
pub struct Installed(());

impl Drop for Installed {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(false));
        HOOK.with(|h| {
            if let Ok(mut h) = h.try_borrow_mut() {
                *h = None;
            }
        });
    }
}

/// Installs `hook` for this thread's runs until the guard drops.
pub fn install(hook: Box<dyn Offload>) -> Installed {
    HOOK.with(|h| *h.borrow_mut() = Some(hook));
    ACTIVE.with(|a| a.set(true));
    Installed(())
}

/// The hook's answer for a call, or `None` (no hook, it declined, or it is busy).
pub(crate) fn try_call(
    program: &Program,
    func: FuncId,
    args: &[Value],
) -> Option<Result<Value, (Code, String)>> {
    if !ACTIVE.with(|a| a.get()) {
        return None;
    }
    HOOK.with(|h| {
        let mut h = h.try_borrow_mut().ok()?;
        h.as_mut()?.call(program, func, args)
    })
}

/// The hook's answer for op `op` on operands of which one or more is a tensor only on a
/// device, or `None` (no hook, no such operand, it declined, or it is busy).
#[inline(always)]
pub(crate) fn try_op(op: Op, args: &[&Value]) -> Option<Result<Value, (Code, String)>> {
    if !ACTIVE.with(|a| a.get()) {
        return None;
    }
    on_device(op, args)
}

#[inline(never)]
fn on_device(op: Op, args: &[&Value]) -> Option<Result<Value, (Code, String)>> {
    if !args
        .iter()
        .any(|v| matches!(v, Value::Tensor(t) if t.on_device_only()))
    {
        return None;
    }
    HOOK.with(|h| {
        let mut h = h.try_borrow_mut().ok()?;
        h.as_mut()?.op(op, args)
    })
}
