//! The IR's own operator enums: what a [`Prim`](super::Prim) computes and which
//! stream a [`Stmt::Out`](super::Stmt::Out) writes to. They mirror the surface
//! operators of `syntax::ast` variant for variant; lowering maps one onto the other
//! with an exhaustive match (src/ir/lower/operators.rs), so the stages below the
//! parser never import the AST.
//!
//! `BinOp` keeps the short-circuit operators (`Et`, `Aut`, `Vel`) although lowering
//! turns them into `If`s: the evaluator's value-level operations still give them a
//! meaning (`et`/`aut` on two booleans, `vel` choosing its first non-`nihil`
//! operand), and the gradient rules name them to say they have no gradient.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `¬`
    BitNot,
    /// `non`
    Not,
    /// Rounds a `fractus` to the nearest f32 (as an f64); other values pass unchanged.
    /// No source operator: only the run-time pass of `eval/narrow.rs` inserts it, for
    /// the stores into `f32` places under `--precision f32`.
    Narrow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Aut,
    Et,
    Eq,
    Ne,
    NumEq,
    NumNe,
    Lt,
    Gt,
    Le,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `·`
    Dot,
    /// `⊙`
    Hadamard,
    /// `vel`
    Vel,
}

impl BinOp {
    /// The operator as the source spells it (`faber ir` and messages print this).
    pub fn glyph(self) -> &'static str {
        match self {
            BinOp::Aut => "aut",
            BinOp::Et => "et",
            BinOp::Eq => "≡",
            BinOp::Ne => "≠",
            BinOp::NumEq => "≈",
            BinOp::NumNe => "≉",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "≤",
            BinOp::Ge => "≥",
            BinOp::BitOr => "∨",
            BinOp::BitXor => "⊻",
            BinOp::BitAnd => "∧",
            BinOp::Shl => "⇐",
            BinOp::Shr => "⇒",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Dot => "·",
            BinOp::Hadamard => "⊙",
            BinOp::Vel => "vel",
        }
    }
}

/// The output statements `nota`, `scribe`, `vide` and `mone`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutKind {
    Nota,
    Scribe,
    Vide,
    Mone,
}
