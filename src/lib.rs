//! faber: an interpreter for a subset of the Faber language, with the Radix
//! reverse-mode autodiff transform and the gradus ML library.
//!
//! Pipeline (docs/pipeline.md): [`compile`] takes source text to verified IR —
//! `syntax` (lex, parse) → `resolve` (the module graph) → `ir::lower` (names, types,
//! static checks, A-normal IR) → `autodiff` (the `@ radix backward` companions) →
//! `ir::verify` — and `eval` runs the IR over `tensor`'s kernels. `gradcheck` runs
//! programs to check gradients, so it sits above both `autodiff` and `eval`, which
//! never import each other. The library does no file or stream I/O: the compiler
//! reads imports through `resolve::Loader`, a run writes and reads through `eval::Io`,
//! and the `faber` binary (src/main.rs, src/cli/) supplies the file-system ones. The
//! one exception is `xla`, which opens the PJRT plugin (a shared library) the
//! command line found.

pub mod autodiff;
pub mod diag;
pub mod eval;
pub mod format;
pub mod gradcheck;
pub mod ir;
pub mod libraries;
pub mod mem;
pub mod resolve;
pub mod serialize;
pub mod source;
pub mod syntax;
pub mod tensor;
pub mod xla;

use diag::Diagnostic;
use source::{FileId, SourceMap};

/// Front half of the pipeline: loads `entry` and its imports through `loader`,
/// parses, resolves and lowers them to one IR program, then generates the
/// `@ radix backward` companions.
pub fn compile(
    sources: &mut SourceMap,
    entry: FileId,
    loader: &mut dyn resolve::Loader,
) -> Result<ir::Program, Vec<Diagnostic>> {
    compile_to(sources, entry, loader, Stage::Grad)
}

/// How far [`compile_to`] goes: `Lowered` stops before the autodiff pass (companions
/// are declared but empty), `Grad` runs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    Lowered,
    Grad,
}

pub fn compile_to(
    sources: &mut SourceMap,
    entry: FileId,
    loader: &mut dyn resolve::Loader,
    stage: Stage,
) -> Result<ir::Program, Vec<Diagnostic>> {
    let graph = resolve::load_graph(sources, entry, loader)?;
    let mut program = ir::lower::lower(sources, &graph)?;
    if stage == Stage::Grad {
        let diags = autodiff::differentiate(&mut program);
        if !diags.is_empty() {
            return Err(diags);
        }
    }
    if let Err(errors) = ir::verify::verify(&program) {
        // A compiler bug, not a user error: fail loudly with what broke.
        panic!("IR verification failed:\n{}", errors.join("\n"));
    }
    Ok(program)
}
