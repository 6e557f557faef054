//! The register code the evaluator runs: one [`Code`] per IR function, made by
//! `codegen/` and run by the dispatch loop in `vm.rs`.
//!
//! A frame is one stretch of the machine's value stack; an instruction names its
//! slots by number ([`Opnd::S`]), constants by their index in the function's pool
//! ([`Opnd::K`]) and globals by number ([`Opnd::G`]). Statements the code generator
//! does not specialise stay IR ([`Ins::Stmt`], [`Ins::Rhs`]) and run through the
//! tree walker (`exec.rs`). The layout of [`Ins`] is part of the interpreter's speed
//! (the dispatch loop matches on it): change it only with a measurement
//! (docs/performance.md).

use super::value::Value;
use crate::ir::BinOp;
use crate::ir::{Rhs, Stmt};
use crate::source::Span;

/// `targets` index meaning "not inside a loop".
pub(crate) const NO_LOOP: u32 = u32::MAX;
/// `dst` meaning "result discarded".
pub(crate) const NO_DST: u32 = u32::MAX;

/// An operand: a slot of the frame, a constant of the function's pool or a global.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Opnd {
    S(u32),
    K(u32),
    G(u32),
}

/// One instruction. `pc`-parallel `Code::spans` holds the source span for errors.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ins<'p> {
    Copy {
        dst: u32,
        src: u32,
    },
    Load {
        dst: u32,
        src: Opnd,
    },
    AddSS {
        dst: u32,
        a: u32,
        b: u32,
    },
    SubSS {
        dst: u32,
        a: u32,
        b: u32,
    },
    MulSS {
        dst: u32,
        a: u32,
        b: u32,
    },
    AddSI {
        dst: u32,
        a: u32,
        k: i64,
    },
    SubSI {
        dst: u32,
        a: u32,
        k: i64,
    },
    MulSI {
        dst: u32,
        a: u32,
        k: i64,
    },
    /// Int comparison; `mask` bit 0/1/2 = result for less/equal/greater.
    CmpSS {
        op: BinOp,
        mask: u8,
        dst: u32,
        a: u32,
        b: u32,
    },
    CmpSI {
        op: BinOp,
        mask: u8,
        dst: u32,
        a: u32,
        k: i64,
    },
    /// Comparison fused with the `If` testing it: sets `dst`, jumps to `to` when false.
    CmpSSJ {
        op: BinOp,
        mask: u8,
        dst: u32,
        a: u32,
        b: u32,
        to: u32,
    },
    CmpSIJ {
        op: BinOp,
        mask: u8,
        dst: u32,
        a: u32,
        k: i64,
        to: u32,
    },
    Bin {
        op: BinOp,
        dst: u32,
        a: Opnd,
        b: Opnd,
    },
    Not {
        dst: u32,
        a: u32,
    },
    /// `dst ← narrow a`: a `fractus` rounded to f32 (`eval/narrow.rs`; emitted only
    /// under `--precision f32`, for the stores into `f32` scalars).
    Narrow {
        dst: u32,
        a: u32,
    },
    Index {
        dst: u32,
        a: u32,
        i: Opnd,
    },
    Rhs {
        dst: u32,
        rhs: &'p Rhs,
    },
    /// Direct call; arguments are `args[at..at + n]`.
    Call {
        dst: u32,
        func: u32,
        at: u32,
        n: u32,
    },
    Jump {
        to: u32,
    },
    JumpIfNot {
        cond: u32,
        to: u32,
    },
    JumpIfNotOp {
        cond: Opnd,
        to: u32,
    },
    /// Bounds at `args[at..at + 3]`; hidden slots `h..h + 3`.
    ForPrep {
        var: u32,
        h: u32,
        at: u32,
        incl: bool,
        exit: u32,
    },
    ForNext {
        var: u32,
        h: u32,
        incl: bool,
        body: u32,
    },
    /// `slot[key] ← val`; `stmt` indexes `Code::stmts` for the general path.
    Store {
        root: u32,
        key: Opnd,
        val: Opnd,
        stmt: u32,
    },
    Append {
        dst: u32,
        list: u32,
        val: Opnd,
        stmt: u32,
    },
    Ret {
        src: Opnd,
    },
    RetVacuum,
    Break {
        t: u32,
    },
    Continue {
        t: u32,
    },
    Stmt {
        stmt: &'p Stmt,
        t: u32,
    },
}

/// One function's register code.
pub(crate) struct Code<'p> {
    pub(crate) ins: Vec<Ins<'p>>,
    pub(crate) spans: Vec<Span>,
    pub(crate) consts: Vec<Value>,
    pub(crate) args: Vec<Opnd>,
    pub(crate) targets: Vec<(u32, u32)>,
    pub(crate) stmts: Vec<&'p Stmt>,
    /// Frame size: the function's slots plus hidden loop slots.
    pub(crate) nslots: u32,
}

// The dispatch loop's instruction stays 32 bytes (`Ins::Narrow` added nothing).
const _: () = assert!(std::mem::size_of::<Ins<'static>>() == 32);
