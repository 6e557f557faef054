//! faber: an interpreter for a subset of the Faber language, with the Radix
//! reverse-mode autodiff transform and the gradus ML library.
//!
//! Pipeline (see docs/pipeline.md): lex → parse → resolve → check → lower → autodiff → eval.
//! No module below `cli/` does I/O: every stage returns data or `Vec<Diagnostic>`.

pub mod diag;
pub mod ir;
pub mod resolve;
pub mod source;
pub mod syntax;
