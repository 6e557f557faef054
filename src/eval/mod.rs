//! The evaluator: runs a verified IR [`Program`] (docs/pipeline.md, "The evaluator").
//! Each function is translated once per run into flat register code and run by a
//! dispatch loop; the statements that code does not specialise run through a tree
//! walker over the IR, so every behaviour is defined in one place.
//!
//! - `bytecode`: the instructions (`Code`, `Ins`, `Opnd`).
//! - `codegen/`: IR → register code (`codegen::emit_program`); `codegen/liveness.rs`
//!   packs slots by liveness. (Named apart from `faber::compile`, source → IR.)
//! - `machine`: the machine's state (one contiguous value stack, a frame is a base
//!   offset into it; the call stack; errors with their trace). The parts that run
//!   code are `impl Machine` blocks that import only `machine`: `vm` (the dispatch
//!   loop), `exec` (the tree walker: statements, calls, unwinding), `loops` (`itera`),
//!   `place` (writes through place paths), `capture` (the call-capture hook).
//! - [`value`]: 16-byte runtime values with `Rc` copy-on-write storage.
//! - [`display`]: the exact `nota` display form (docs/language.md § 8).
//! - `ops`, `methods`, `convert`, `slice`: operators, built-in methods (§9), `↦` /
//!   `est`, text slices.
//! - `host`, `tensors`, `retro`, `checkpoint`, `tree`, `finite`: host functions,
//!   tensor ops and their backward helpers, checkpoints, parameter-tree walks,
//!   `--check-finite`.
//! - [`RunConfig`] (`config`): the limits and switches of one run, passed to every
//!   entry point; [`Io`]: the host side (output, files), no I/O of its own.
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

mod bytecode;
mod capture;
mod checkpoint;
mod codegen;
mod config;
mod convert;
mod convert_pairs;
mod cursus;
mod data;
pub mod device;
pub mod display;
mod exec;
mod finite;
mod host;
mod host_args;
mod host_args_help;
mod host_codex;
mod host_csv;
mod host_device;
mod host_progress;
mod host_random;
mod host_tensor_file;
pub mod interrupt;
pub mod interval;
pub mod json;
mod location;
mod loops;
mod machine;
mod methods;
mod narrow;
mod numbers;
pub mod offload;
mod ops;
mod place;
mod range;
mod set;
mod sha2;
mod slice;
mod sort;
mod tensor_access;
mod tensor_args;
mod tensor_custom;
mod tensor_dtype;
mod tensor_trees;
mod tensors;
mod tree;
pub mod value;
mod vm;

pub use capture::{run_entry_capturing, CallCapture};
pub use config::{Installed, RunConfig, LIST_LIMIT, TEXT_LIMIT};
pub use display::{display, display_into};
pub use location::is_library_file;
pub use value::{Closure, Key, Map, Record, Value};

use crate::diag::{codes, Code, Diagnostic};
use crate::ir::{FuncId, Program};
use crate::source::Span;

/// Calls nested deeper than this raise RUN009.
pub const MAX_DEPTH: usize = 10_000;

/// How many call-trace entries a [`RuntimeError`] keeps (innermost first).
pub const TRACE_LIMIT: usize = 10;

/// The host side of a run: where program output goes and, for the `hospes` file
/// functions, the file system. `nota`/`scribe` write to `stdout`, `vide`/`mone` to
/// `stderr`; each call receives whole lines (display forms joined by `", "`, then
/// `\n`). The library does no I/O of its own: the file methods refuse by default
/// ([`NO_FILES`]); the CLI's implementations (src/cli/hostfs.rs) reach the file system.
pub trait Io {
    fn stdout(&mut self, s: &str);
    fn stderr(&mut self, s: &str);

    /// `hospes.lege_textum`: a whole file as UTF-8 text.
    fn read_file(&mut self, _path: &str) -> Result<String, String> {
        Err(NO_FILES.to_string())
    }

    /// `hospes.scribe_textum`: creates or replaces a file (and its missing parent
    /// directories).
    fn write_file(&mut self, _path: &str, _contents: &str) -> Result<(), String> {
        Err(NO_FILES.to_string())
    }

    /// `hospes.para_directorium`: creates an output directory, checks that files
    /// can be written in it and locks it for this run.
    fn claim_dir(&mut self, _path: &str) -> Result<(), String> {
        Err(NO_FILES.to_string())
    }

    /// `hospes.directorium`: the directory of the program being run (the package
    /// root, or the entry file's directory), for finding data files beside it.
    fn program_dir(&self) -> String {
        ".".to_string()
    }

    /// Checkpoints (`hospes.carga_tensores`): a whole file as bytes.
    fn read_bytes(&mut self, _path: &str) -> Result<Vec<u8>, String> {
        Err(NO_FILES.to_string())
    }

    /// Checkpoints (`hospes.serva_tensores`): creates or replaces a file.
    fn write_bytes(&mut self, _path: &str, _contents: &[u8]) -> Result<(), String> {
        Err(NO_FILES.to_string())
    }

    /// `hospes.argumenta`: the program's arguments (after `--` on the command line).
    fn args(&self) -> Vec<String> {
        Vec::new()
    }

    /// `lege`: the next line of standard input without its line break (`\n` or
    /// `\r\n`); `None` at the end of the input (and for a host without one).
    fn read_line(&mut self) -> Result<Option<String>, String> {
        Ok(None)
    }

    /// `hospes.progressus`: a transient status line (shown only on a terminal).
    fn progress(&mut self, _line: &str) {}

    /// The host devices of `norma:solum` and `norma:processus` (src/eval/device.rs).
    fn device(&mut self, _req: &device::Device) -> Result<device::Reply, String> {
        Err(NO_FILES.to_string())
    }

    /// `consolum.funde`: raw bytes on standard output (by default as text, bytes that
    /// are not UTF-8 replaced).
    fn stdout_bytes(&mut self, bytes: &[u8]) {
        self.stdout(&String::from_utf8_lossy(bytes));
    }

    /// `consolum.hauri`: up to `max` bytes of standard input, fewer only at its end
    /// (nothing for a host without one).
    fn read_stdin(&mut self, _max: u64) -> Result<Vec<u8>, String> {
        Ok(Vec::new())
    }

    /// `consolum.audit` / `loquitur` / `admonet`: whether a standard stream is a terminal.
    fn is_terminal(&self, _stream: device::Stream) -> bool {
        false
    }
}

/// Why an [`Io`] without a file system refuses a file function.
pub const NO_FILES: &str = "this host gives the program no file system";

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
    /// Set when the program ended itself with `processus.exi(code)`: `faber run` exits
    /// with the code; where no run can end (a `faber test` case) it is an error.
    pub exit: Option<i64>,
}

impl RuntimeError {
    pub fn new(code: Code, message: impl Into<String>, span: Span) -> RuntimeError {
        RuntimeError {
            diagnostic: Diagnostic::error(code, message, span),
            trace: Vec::new(),
            omitted: 0,
            gradient_of: None,
            exit: None,
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
pub fn run_entry(
    program: &Program,
    io: &mut dyn Io,
    config: &RunConfig,
) -> Result<i64, RuntimeError> {
    let _run = config.install();
    let narrowed = config
        .narrows()
        .then(|| narrow::narrowed(program))
        .flatten();
    let program = narrowed.as_ref().unwrap_or(program);
    run_entry_in(&mut machine::Machine::new(program, io, config))
}

/// [`run_entry`] on a machine already set up.
#[allow(clippy::result_large_err)]
fn run_entry_in(m: &mut machine::Machine) -> Result<i64, RuntimeError> {
    let program = m.prog;
    let Some(entry) = program.entry else {
        return Err(RuntimeError::new(
            codes::SEM_NO_ENTRY,
            "the program has no `incipit`",
            Span::default(),
        ));
    };
    let ran = m.run_inits().and_then(|()| m.call_top(entry, Vec::new()));
    let span = program.func(entry).span;
    let value = match ran {
        Err(RuntimeError { exit: Some(n), .. }) => return Ok(n),
        other => other?,
    };
    match value {
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
    config: &RunConfig,
) -> Result<Value, RuntimeError> {
    let _run = config.install();
    let narrowed = config
        .narrows()
        .then(|| narrow::narrowed(program))
        .flatten();
    let program = narrowed.as_ref().unwrap_or(program);
    let mut m = machine::Machine::new(program, io, config);
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
    /// `processus.exi(code)`: the program ends with this exit code (never caught).
    Exit(i64),
}

pub(crate) type FResult<T> = Result<T, Fault>;

pub(crate) fn fault<T>(code: Code, msg: impl Into<String>) -> FResult<T> {
    Err(Fault::Error(code, msg.into()))
}

/// RUN010 unless a built-in method `m` got `n` arguments (the methods of lists, texts,
/// sets, ranges and `valor`).
pub(crate) fn arity(m: crate::ir::Method, args: &[Value], n: usize) -> FResult<()> {
    if args.len() == n {
        Ok(())
    } else {
        fault(
            crate::diag::codes::RUN_TYPE,
            format!("`{}` takes {n} argument(s), got {}", m.name(), args.len()),
        )
    }
}
