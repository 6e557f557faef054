//! The operators' method twins on a number (upstream's "Perfectum" twins of the
//! glyphs): `x.addita(y)` is `x + y`, and so `subtracta`, `multiplicata`, `divisa`
//! (faber's `subtrahe`, `multiplica`, `divide`), `modulata` (`%`), `negativa` (`neg`,
//! unary `-`), the comparisons `minor`, `maior`, `minime`, `maxime` (`<`, `>`, `≤`,
//! `≥`) and, on a numerus, `coniuncta`, `disiuncta`, `alternata`, `complementata`,
//! `sinistrata`, `dextrata` (`∧`, `∨`, `⊻`, `¬`, `⇐`, `⇒`). On a tensor or a list
//! `addita` and the like are faber's elementwise ops; on a number (by its static type,
//! or a number literal) the call is lowered as the operator written out, so it has the
//! operator's types, checks and semantics (docs/language.md § Intrinsic methods).

use super::Lowerer;
use crate::ir::{Operand, Ty};
use crate::source::Span;
use crate::syntax::ast::{self, BinOp, ExprKind, UnOp};

#[derive(Clone, Copy)]
enum Twin {
    Binary(BinOp),
    Unary(UnOp),
}

/// The operator whose twin faber's method name `name` is.
fn twin(name: &str) -> Option<Twin> {
    use Twin::{Binary, Unary};
    Some(match name {
        "addita" => Binary(BinOp::Add),
        "subtrahe" => Binary(BinOp::Sub),
        "multiplica" => Binary(BinOp::Mul),
        "divide" => Binary(BinOp::Div),
        "modulata" => Binary(BinOp::Rem),
        "neg" => Unary(UnOp::Neg),
        "minor" => Binary(BinOp::Lt),
        "maior" => Binary(BinOp::Gt),
        "minime" => Binary(BinOp::Le),
        "maxime" => Binary(BinOp::Ge),
        "coniuncta" => Binary(BinOp::BitAnd),
        "disiuncta" => Binary(BinOp::BitOr),
        "alternata" => Binary(BinOp::BitXor),
        "complementata" => Unary(UnOp::BitNot),
        "sinistrata" => Binary(BinOp::Shl),
        "dextrata" => Binary(BinOp::Shr),
        _ => return None,
    })
}

/// Whether faber's method name `name` is an operator's twin on numbers.
pub(crate) fn is_twin(name: &str) -> bool {
    twin(name).is_some()
}

/// Whether faber's method name `name` is the twin of an operator whose result on
/// numbers is a number (a comparison's is a bivalens).
pub(super) fn gives_number(name: &str) -> bool {
    match twin(name) {
        Some(Twin::Binary(op)) => !matches!(op, BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge),
        Some(Twin::Unary(_)) => true,
        None => false,
    }
}

impl Lowerer<'_> {
    /// `recv.name(args)` as its operator when `recv_ty` is a number and `name` (faber's
    /// name, after the vocabulary) is an operator's twin with as many operands as
    /// given; `None` otherwise.
    pub(super) fn number_twin(
        &mut self,
        recv: &ast::Expr,
        recv_ty: &Ty,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<(Operand, Ty)> {
        if !matches!(recv_ty, Ty::Int | Ty::Float) {
            return None;
        }
        let lhs = Box::new(recv.clone());
        let kind = match (twin(name)?, args) {
            (Twin::Binary(op), [rhs]) => ExprKind::Binary {
                op,
                lhs,
                rhs: Box::new(rhs.clone()),
            },
            (Twin::Unary(op), []) => ExprKind::Unary { op, expr: lhs },
            _ => return None,
        };
        Some(self.expr(&ast::Expr { kind, span }, None))
    }
}
