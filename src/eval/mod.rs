//! The evaluator: walks the Radix IR (`crate::ir`) directly.
//!
//! - [`value`]: 16-byte runtime values with `Rc` copy-on-write storage.
//! - [`display`]: the exact `nota` display form (docs/language.md § 8).
//! - `ops`, `methods`, `convert`: operators, built-in methods (§9), `↦` / `est`.
//! - `exec`: the machine — one contiguous value stack, a frame is a base offset
//!   into it; calls, control flow, unwinding. `loops`: `itera`; `place`: writes
//!   through place paths.
//!
//! Errors raised by the program are [`RuntimeError`]s carrying a `RUN…` diagnostic
//! at the failing statement plus a short call trace. A thrown value (`iace`, failed
//! `↦`) unwinds to the nearest `Try` in the same or a calling function; fatal errors
//! (`mori`, `adfirma`, traps) are never caught.

/// Runs a loop body once and maps its flow for the enclosing loop (`Flow` must be
/// in scope where this is used).
macro_rules! loop_body {
    ($self:ident, $body:expr, $span:expr) => {
        $self.tick($span)?;
        match $self.exec_block($body)? {
            Flow::Normal | Flow::Continue => {}
            Flow::Break => break,
            Flow::Return => return Ok(Flow::Return),
        }
    };
}

pub mod atomic;
mod capture;
mod checkpoint;
mod compile;
mod convert;
pub mod display;
mod exec;
mod finite;
mod host;
pub mod interrupt;
mod location;
mod loops;
mod methods;
mod ops;
pub mod outdir;
mod place;
mod slice;
mod tensor_access;
mod tensor_args;
mod tensor_trees;
mod tensors;
mod tree;
pub mod value;
mod vm;

pub use capture::{run_entry_capturing, CallCapture};
pub use display::{display, display_into};
pub use finite::set_check_finite;
pub use location::is_library_file;
pub use value::{Closure, Key, Map, Record, Value};

use crate::diag::{codes, Code, Diagnostic};
use crate::ir::{FuncId, Program};
use crate::source::Span;

/// Calls nested deeper than this raise RUN009.
pub const MAX_DEPTH: usize = 10_000;

/// How many call-trace entries a [`RuntimeError`] keeps (innermost first).
pub const TRACE_LIMIT: usize = 10;

/// Where program output goes: `nota`/`scribe` write to `stdout`, `vide`/`mone` to
/// `stderr`. Each call receives whole lines (display forms joined by `", "`, then `\n`).
pub trait Io {
    fn stdout(&mut self, s: &str);
    fn stderr(&mut self, s: &str);

    /// `hospes.lege_textum`: a whole file as UTF-8 text (a regular file of at most
    /// the text limit; see [`read_host_file`]).
    fn read_file(&mut self, path: &str) -> Result<String, String> {
        String::from_utf8(read_host_file(path, text_limit() as u64)?)
            .map_err(|_| "it is not valid UTF-8".to_string())
    }

    /// `hospes.scribe_textum`: creates or replaces a file (and its missing parent
    /// directories) atomically ([`atomic::write_atomic`]).
    fn write_file(&mut self, path: &str, contents: &str) -> Result<(), String> {
        atomic::write_atomic(std::path::Path::new(path), contents.as_bytes())
            .map_err(|e| e.to_string())
    }

    /// `hospes.para_directorium`: creates an output directory, checks that files
    /// can be written in it and locks it for this run ([`outdir::claim`]).
    fn claim_dir(&mut self, path: &str) -> Result<(), String> {
        outdir::claim(std::path::Path::new(path))
    }

    /// `hospes.directorium`: the directory of the program being run (the package
    /// root, or the entry file's directory), for finding data files beside it.
    fn program_dir(&self) -> String {
        ".".to_string()
    }

    /// Checkpoints (`hospes.carga_tensores`): a whole file as bytes.
    fn read_bytes(&mut self, path: &str) -> Result<Vec<u8>, String> {
        read_host_file(path, host_bytes_limit())
    }

    /// Checkpoints (`hospes.serva_tensores`): creates or replaces a file, atomically
    /// ([`atomic::write_atomic`]).
    fn write_bytes(&mut self, path: &str, contents: &[u8]) -> Result<(), String> {
        atomic::write_atomic(std::path::Path::new(path), contents).map_err(|e| e.to_string())
    }

    /// `hospes.argumenta`: the program's arguments (after `--` on the command line).
    fn args(&self) -> Vec<String> {
        Vec::new()
    }

    /// `hospes.progressus`: a transient status line (shown only on a terminal).
    fn progress(&mut self, _line: &str) {}
}

/// Default growth limits: a `textus` longer than this many bytes, or a `lista` with
/// more items, is a RUN012 diagnostic instead of exhausting memory.
pub const TEXT_LIMIT: usize = 1 << 30;
pub const LIST_LIMIT: usize = 1 << 27;

thread_local! {
    static MAX_STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(u64::MAX) };
    static GROWTH: std::cell::Cell<(usize, usize)> =
        const { std::cell::Cell::new((TEXT_LIMIT, LIST_LIMIT)) };
}

/// Sets this thread's growth limits (text bytes, list items); returns the old ones.
pub fn set_growth_limits(text: usize, list: usize) -> (usize, usize) {
    GROWTH.with(|g| g.replace((text, list)))
}

pub(crate) fn text_limit() -> usize {
    GROWTH.with(|g| g.get().0)
}

pub(crate) fn list_limit() -> usize {
    GROWTH.with(|g| g.get().1)
}

/// Sets the step budget of programs run on this thread (`faber run --max-steps N`):
/// every loop iteration and every function call is one step; a program that takes
/// more ends with RUN014. `None` = unlimited (the default). Returns the old budget.
pub fn set_max_steps(steps: Option<u64>) -> Option<u64> {
    let old = MAX_STEPS.with(|m| m.replace(steps.unwrap_or(u64::MAX)));
    (old != u64::MAX).then_some(old)
}

pub(crate) fn max_steps() -> u64 {
    MAX_STEPS.with(|m| m.get())
}

/// A host read: a regular file only (a FIFO, a device or a symlink loop fails at once,
/// before anything is opened or read), of at most `limit` bytes. `/dev/stdin` is
/// the one exception: the program's standard input, read to its end.
pub fn read_host_file(path: &str, limit: u64) -> Result<Vec<u8>, String> {
    if path == "/dev/stdin" {
        return crate::fsguard::read_capped(std::io::stdin().lock(), limit)
            .map_err(|e| e.to_string());
    }
    crate::fsguard::read_regular_file(std::path::Path::new(path), limit).map_err(|e| e.to_string())
}

/// The most bytes `hospes.carga_tensores` and `hospes.lege_octetos` read: the larger
/// of the text limit and the largest tensor (in f64 bytes).
pub fn host_bytes_limit() -> u64 {
    let tensor = crate::tensor::Limits::current().max_elements as u64 * 8;
    tensor.max(text_limit() as u64)
}

/// An [`Io`] that collects output in memory (tests, `faber test`).
#[derive(Default, Debug, Clone)]
pub struct BufferIo {
    pub out: String,
    pub err: String,
}

impl Io for BufferIo {
    fn stdout(&mut self, s: &str) {
        self.out.push_str(s);
    }
    fn stderr(&mut self, s: &str) {
        self.err.push_str(s);
    }
}

/// A fatal runtime error: the diagnostic (code, message, span of the failing
/// statement) and the call trace, innermost call first: the callee's name and the
/// span of the call site. At most [`TRACE_LIMIT`] entries; `omitted` counts the rest.
/// `gradient_of` is `(companion, primal)` when the error was raised while a companion
/// generated by `@ radix backward` ran (its statements carry the spans of the primal's
/// ops). [`RuntimeError::into_diagnostic_in`] places it on the user's code.
#[derive(Clone, Debug, PartialEq)]
pub struct RuntimeError {
    pub diagnostic: Diagnostic,
    pub trace: Vec<(String, Span)>,
    pub omitted: usize,
    pub gradient_of: Option<(String, String)>,
}

impl RuntimeError {
    pub fn new(code: Code, message: impl Into<String>, span: Span) -> RuntimeError {
        RuntimeError {
            diagnostic: Diagnostic::error(code, message, span),
            trace: Vec::new(),
            omitted: 0,
            gradient_of: None,
        }
    }

    pub fn code(&self) -> Code {
        self.diagnostic.code
    }

    /// The diagnostic with the call trace appended as labels (one per call site,
    /// `in call to \`name\``) and a hint when frames were omitted, without moving it
    /// out of library code (that needs the file names: [`RuntimeError::into_diagnostic_in`]).
    pub fn into_diagnostic(self) -> Diagnostic {
        self.place(&|_| false)
    }
}

/// Runs the module initialisers in order, then the entry function. Returns the
/// exit code: the entry's Int result, or 0 for `vacuum`/`nihil`.
#[allow(clippy::result_large_err)] // returned once per run
pub fn run_entry(program: &Program, io: &mut dyn Io) -> Result<i64, RuntimeError> {
    run_entry_in(&mut exec::Machine::new(program, io))
}

/// [`run_entry`] on a machine already set up.
#[allow(clippy::result_large_err)]
fn run_entry_in(m: &mut exec::Machine) -> Result<i64, RuntimeError> {
    let program = m.prog;
    let Some(entry) = program.entry else {
        return Err(RuntimeError::new(
            codes::SEM_NO_ENTRY,
            "the program has no `incipit`",
            Span::default(),
        ));
    };
    m.run_inits()?;
    let span = program.func(entry).span;
    match m.call_top(entry, Vec::new())? {
        Value::Int(n) => Ok(n),
        Value::Vacuum | Value::Nihil => Ok(0),
        other => Err(RuntimeError::new(
            codes::RUN_TYPE,
            format!("exit code must be numerus, found {}", other.type_name()),
            span,
        )),
    }
}

/// Runs the module initialisers (fresh module state), then calls `func` with
/// `args`; used by `faber test` for each case.
#[allow(clippy::result_large_err)]
pub fn run_function(
    program: &Program,
    func: FuncId,
    args: Vec<Value>,
    io: &mut dyn Io,
) -> Result<Value, RuntimeError> {
    let mut m = exec::Machine::new(program, io);
    m.run_inits()?;
    m.call_top(func, args)
}

/// A failure from an operator, method or conversion, before the evaluator adds the
/// statement span and the trace.
#[derive(Debug)]
pub(crate) enum Fault {
    /// A fatal error.
    Error(Code, String),
    /// A catchable failure (a failed `↦`): the thrown value, a text message.
    Throw(Value),
}

pub(crate) type FResult<T> = Result<T, Fault>;

pub(crate) fn fault<T>(code: Code, msg: impl Into<String>) -> FResult<T> {
    Err(Fault::Error(code, msg.into()))
}
