//! `fac { body } (cape e { handler })? dum cond` → IR: a loop whose test runs before
//! every pass but the first, so that `perge` in the body goes on to the test as it
//! does in `dum`:
//!
//! ```text
//! first ← verum
//! loop { si non first { si non cond { rumpe } }; first ← falsum; fac body cape … }
//! ```
//!
//! The condition is read in the scope around the loop: names declared in the body are
//! not visible in it (docs/language.md § 5, "`fac … dum`").

use super::Lowerer;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, StmtKind};

impl Lowerer<'_> {
    pub(super) fn do_while(
        &mut self,
        body: &ast::Block,
        catch: Option<&(ast::Ident, ast::Block)>,
        cond: &ast::Expr,
        span: Span,
    ) {
        let first = self.new_slot("", Ty::Bool);
        let set_first = |v: bool| Stmt::Let {
            dst: first,
            rhs: Rhs::Use(Operand::Const(Const::Bool(v))),
            span,
        };
        self.emit(set_first(true));
        self.push_block();
        self.push_block();
        self.break_unless(cond);
        let test = self.pop_block();
        self.emit(Stmt::If {
            cond: Operand::Slot(first),
            then: Block::default(),
            otherwise: test,
        });
        self.emit(set_first(false));
        // The body with its handler, lowered as the `fac … cape` statement it is.
        let fac = ast::Stmt {
            kind: StmtKind::Fac {
                body: body.clone(),
                catch: catch.cloned(),
            },
            span: body.span,
        };
        self.cx().loops += 1;
        self.stmt(&fac);
        self.cx().loops -= 1;
        let looped = self.pop_block();
        self.emit(Stmt::Loop { body: looped, span });
    }

    /// `if cond {} else { rumpe }`: the exit test of a `dum` or `fac … dum` loop,
    /// lowered into the current block.
    pub(super) fn break_unless(&mut self, cond: &ast::Expr) {
        let c = self.expr_to(cond, &Ty::Bool);
        self.emit(Stmt::If {
            cond: c,
            then: Block::default(),
            otherwise: Block {
                stmts: vec![Stmt::Break],
            },
        });
    }
}
