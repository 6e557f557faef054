//! The run configuration: every limit and switch of one run in one value
//! ([`RunConfig`]), passed to [`super::run_entry`], [`super::run_function`] and
//! [`super::run_entry_capturing`] — the CLI builds it from its flags, tests and
//! embedders use [`RunConfig::default`].
//!
//! The machine keeps what it checks itself (the step budget, the list limit of its
//! append fast path, `--check-finite`) in its own fields. Three limits are read far
//! from any machine — the text limit by `+` on texts and by display forms (free
//! functions the VM calls in its hot loop), the tensor element limit and the kernel
//! thread count by the kernels in `crate::tensor`, the precision by the tensor ops — so for the duration of a run they
//! live in thread-locals, set by ONE scoped guard ([`RunConfig::install`], held by
//! each entry point while the run lasts) and restored when it drops. Nothing else
//! writes them: this module's growth cell has no public setter, and the tensor cells
//! ([`crate::tensor::Limits::set_current`], [`crate::tensor::set_threads`]) are the
//! kernels' own interface for code that calls kernels without running a program.
//!
//! The memory limit (`--max-memory-gib`, `crate::mem`) is not here: it bounds the
//! live bytes of the whole process as counted by the binary's global allocator, so it
//! is a process setting the CLI makes once, not a property of one run.

use std::cell::Cell;
use std::marker::PhantomData;

use crate::tensor::Limits;

/// Default growth limits: a `textus` longer than this many bytes, or a `lista` with
/// more items, is a RUN012 diagnostic instead of exhausting memory.
pub const TEXT_LIMIT: usize = 1 << 30;
pub const LIST_LIMIT: usize = 1 << 27;

/// The limits and switches of one run (docs/pipeline.md, "Run configuration").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunConfig {
    /// Step budget (`faber run --max-steps N`): every loop iteration and every
    /// function call is one step; a program that takes more ends with RUN014.
    /// `None` = unlimited.
    pub max_steps: Option<u64>,
    /// Longest `textus` a program may build, in bytes (RUN012 beyond).
    pub max_text_bytes: usize,
    /// Most items a `lista` may grow to (RUN012 beyond).
    pub max_list_items: usize,
    /// Largest tensor an operation may allocate (`--max-tensor-gib`).
    pub tensor: Limits,
    /// Worker threads of the row-parallel kernels (`--threads`; 0 = every available
    /// CPU). Results never depend on it.
    pub threads: usize,
    /// `faber run --check-finite`: RUN018 at the first tensor op or scalar arithmetic
    /// whose result holds a NaN or an infinity.
    pub check_finite: bool,
    /// `--precision` / `[run] precision`: the element type of the floating tensors the
    /// program makes from numbers, lists and files (docs/precision.md; F64 by default).
    pub precision: crate::tensor::DType,
    /// Whether scalars declared `f32`/`f16` are rounded to f32 when the precision is
    /// F32 (`eval/narrow.rs`; true by default). `faber grad-check` turns it off: its
    /// finite differences perturb scalar inputs by steps an f32 cannot hold.
    pub narrow_scalars: bool,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            max_steps: None,
            max_text_bytes: TEXT_LIMIT,
            max_list_items: LIST_LIMIT,
            tensor: Limits::default(),
            threads: 0,
            check_finite: false,
            precision: crate::tensor::DType::F64,
            narrow_scalars: true,
        }
    }
}

impl RunConfig {
    /// Whether this run rounds the stores into `f32` scalar places
    /// (docs/precision.md § Scalars).
    pub(crate) fn narrows(&self) -> bool {
        self.narrow_scalars && self.precision == crate::tensor::DType::F32
    }

    /// The most bytes `hospes.carga_tensores` and `hospes.lege_octetos` read: the
    /// larger of the text limit and the largest tensor (in f64 bytes).
    pub fn host_bytes_limit(&self) -> u64 {
        let tensor = self.tensor.max_elements as u64 * 8;
        tensor.max(self.max_text_bytes as u64)
    }

    /// Puts the limits read outside the machine (see the module documentation) in
    /// force on this thread until the returned guard drops; nested guards restore the
    /// outer run's values.
    pub fn install(&self) -> Installed {
        Installed {
            growth: GROWTH.with(|g| g.replace((self.max_text_bytes, self.max_list_items))),
            tensor: Limits::set_current(self.tensor),
            threads: crate::tensor::set_threads(self.threads),
            precision: crate::tensor::set_precision(self.precision),
            _thread: PhantomData,
        }
    }
}

/// A [`RunConfig`] in force on this thread (from [`RunConfig::install`]); dropping it
/// restores what was in force before. Tied to its thread (not `Send`).
#[must_use = "the configuration is in force only while the guard lives"]
pub struct Installed {
    growth: (usize, usize),
    tensor: Limits,
    threads: usize,
    precision: crate::tensor::DType,
    _thread: PhantomData<*const ()>,
}

impl Drop for Installed {
    fn drop(&mut self) {
        GROWTH.with(|g| g.set(self.growth));
        Limits::set_current(self.tensor);
        crate::tensor::set_threads(self.threads);
        crate::tensor::set_precision(self.precision);
    }
}

thread_local! {
    /// (text bytes, list items) of the run in force on this thread.
    static GROWTH: Cell<(usize, usize)> = const { Cell::new((TEXT_LIMIT, LIST_LIMIT)) };
}

/// The text limit of the run in force on this thread.
pub(crate) fn text_limit() -> usize {
    GROWTH.with(|g| g.get().0)
}

/// The list limit of the run in force on this thread.
pub(crate) fn list_limit() -> usize {
    GROWTH.with(|g| g.get().1)
}
