//! Surface operators → the IR's own ([`crate::ir::operators`]). One exhaustive
//! match per enum and no wildcard arm: an operator added to the AST fails to
//! compile here until the IR has it too.

use crate::ir::{BinOp, OutKind, UnOp};
use crate::syntax::ast;

pub(super) fn un_op(op: ast::UnOp) -> UnOp {
    match op {
        ast::UnOp::Neg => UnOp::Neg,
        ast::UnOp::BitNot => UnOp::BitNot,
        ast::UnOp::Not => UnOp::Not,
    }
}

pub(super) fn bin_op(op: ast::BinOp) -> BinOp {
    match op {
        ast::BinOp::Aut => BinOp::Aut,
        ast::BinOp::Et => BinOp::Et,
        ast::BinOp::Eq => BinOp::Eq,
        ast::BinOp::Ne => BinOp::Ne,
        ast::BinOp::NumEq => BinOp::NumEq,
        ast::BinOp::NumNe => BinOp::NumNe,
        ast::BinOp::Lt => BinOp::Lt,
        ast::BinOp::Gt => BinOp::Gt,
        ast::BinOp::Le => BinOp::Le,
        ast::BinOp::Ge => BinOp::Ge,
        ast::BinOp::BitOr => BinOp::BitOr,
        ast::BinOp::BitXor => BinOp::BitXor,
        ast::BinOp::BitAnd => BinOp::BitAnd,
        ast::BinOp::Shl => BinOp::Shl,
        ast::BinOp::Shr => BinOp::Shr,
        ast::BinOp::Add => BinOp::Add,
        ast::BinOp::Sub => BinOp::Sub,
        ast::BinOp::Mul => BinOp::Mul,
        ast::BinOp::Div => BinOp::Div,
        ast::BinOp::Rem => BinOp::Rem,
        ast::BinOp::Dot => BinOp::Dot,
        ast::BinOp::Hadamard => BinOp::Hadamard,
        ast::BinOp::Vel => BinOp::Vel,
    }
}

pub(super) fn out_kind(kind: ast::OutKind) -> OutKind {
    match kind {
        ast::OutKind::Nota => OutKind::Nota,
        ast::OutKind::Scribe => OutKind::Scribe,
        ast::OutKind::Vide => OutKind::Vide,
        ast::OutKind::Mone => OutKind::Mone,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every surface binary operator, in declaration order.
    const AST_BIN_OPS: [ast::BinOp; 23] = [
        ast::BinOp::Aut,
        ast::BinOp::Et,
        ast::BinOp::Eq,
        ast::BinOp::Ne,
        ast::BinOp::NumEq,
        ast::BinOp::NumNe,
        ast::BinOp::Lt,
        ast::BinOp::Gt,
        ast::BinOp::Le,
        ast::BinOp::Ge,
        ast::BinOp::BitOr,
        ast::BinOp::BitXor,
        ast::BinOp::BitAnd,
        ast::BinOp::Shl,
        ast::BinOp::Shr,
        ast::BinOp::Add,
        ast::BinOp::Sub,
        ast::BinOp::Mul,
        ast::BinOp::Div,
        ast::BinOp::Rem,
        ast::BinOp::Dot,
        ast::BinOp::Hadamard,
        ast::BinOp::Vel,
    ];

    /// The parser's dump and `faber ir` spell an operator the same way, and no two
    /// surface operators land on one IR operator.
    #[test]
    fn binary_operators_keep_their_glyph_and_stay_distinct() {
        for (i, a) in AST_BIN_OPS.iter().enumerate() {
            assert_eq!(bin_op(*a).glyph(), a.glyph(), "{a:?}");
            for b in &AST_BIN_OPS[..i] {
                assert_ne!(bin_op(*a), bin_op(*b), "{a:?} and {b:?}");
            }
        }
    }
}
