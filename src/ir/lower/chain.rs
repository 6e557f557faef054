//! `si … sin … secus` and `elige … casu … ceterum` → IR, in time and stack depth
//! linear in the number of arms (docs/robustness.md, "Compile time of long chains").
//!
//! A chain of two or more arms becomes one flat [`Stmt::Cond`]; one arm stays an `If`.
//! Each arm's condition is lowered in its own test block, in the same order (and so
//! with the same slots) as the nested `If`s the chain means. Definite initialisation
//! tracks only the locals still uninitialised when the chain starts: each arm starts
//! from that state, and afterwards a local counts as assigned if any arm assigned it.

use super::Lowerer;
use crate::ir::*;
use crate::syntax::ast;

/// A local in scope, by scope and position (scopes only grow while a chain lowers).
type At = (usize, usize);

impl Lowerer<'_> {
    /// The locals in scope that are not yet initialised (deferred `fixum`s).
    fn uninitialised(&mut self) -> Vec<At> {
        let mut out = Vec::new();
        for (i, scope) in self.cx().scopes.iter().enumerate() {
            for (j, l) in scope.iter().enumerate() {
                if !l.initialized {
                    out.push((i, j));
                }
            }
        }
        out
    }

    /// After one arm: records in `assigned` what it initialised of `pending`, and
    /// resets those locals for the next arm.
    fn merge_arm(&mut self, pending: &[At], assigned: &mut [bool]) {
        let scopes = &mut self.cx().scopes;
        for (&(i, j), a) in pending.iter().zip(assigned.iter_mut()) {
            let l = &mut scopes[i][j];
            *a |= l.initialized;
            l.initialized = false;
        }
    }

    /// Lowers `si … sin … secus`; an arm's condition is lowered only after every
    /// earlier arm (it runs only when they were not taken).
    pub(super) fn if_chain(&mut self, arms: &[ast::CondArm], otherwise: Option<&ast::Block>) {
        let pending = self.uninitialised();
        let mut assigned = vec![false; pending.len()];
        let mut out = Vec::with_capacity(arms.len());
        for (i, arm) in arms.iter().enumerate() {
            let (test, cond) = self.arm_test(i, |s| s.expr_to(&arm.cond, &Ty::Bool));
            let then = self.block(&arm.body);
            self.merge_arm(&pending, &mut assigned);
            out.push(CondArm { test, cond, then });
        }
        let other = match otherwise {
            Some(b) => {
                let blk = self.block(b);
                self.merge_arm(&pending, &mut assigned);
                blk
            }
            None => Block::default(),
        };
        let scopes = &mut self.cx().scopes;
        for (&(i, j), a) in pending.iter().zip(&assigned) {
            scopes[i][j].initialized = *a;
        }
        self.emit_chain(out, other);
    }

    /// Lowers `elige subject { casu … ceterum … }`: case `k` tests `subject ≡ value`.
    pub(super) fn elige_chain(
        &mut self,
        subject: &Operand,
        cases: &[ast::CondArm],
        otherwise: Option<&ast::Block>,
    ) {
        let mut out = Vec::with_capacity(cases.len());
        for (i, case) in cases.iter().enumerate() {
            let (test, cond) = self.arm_test(i, |s| {
                let (c, _) = s.expr(&case.cond, None);
                s.temp(
                    Rhs::Prim(Prim::Binary(BinOp::Eq), vec![subject.clone(), c]),
                    Ty::Bool,
                    case.cond.span,
                )
            });
            let then = self.block(&case.body);
            out.push(CondArm { test, cond, then });
        }
        let other = otherwise.map(|b| self.block(b)).unwrap_or_default();
        if out.is_empty() {
            // No `casu`: the `ceterum` body runs in place.
            self.extend_current(other.stmts);
            return;
        }
        self.emit_chain(out, other);
    }

    /// Lowers arm `i`'s condition: the first one into the current block (before the
    /// chain, as for a single `If`), every later one into its own test block.
    fn arm_test(&mut self, i: usize, cond: impl FnOnce(&mut Self) -> Operand) -> (Block, Operand) {
        if i == 0 {
            return (Block::default(), cond(self));
        }
        self.push_block();
        let c = cond(self);
        (self.pop_block(), c)
    }

    fn extend_current(&mut self, stmts: Vec<Stmt>) {
        self.cx()
            .blocks
            .last_mut()
            .expect("open block")
            .extend(stmts);
    }

    /// One arm is an `If`; more are a flat `Cond`.
    fn emit_chain(&mut self, mut arms: Vec<CondArm>, otherwise: Block) {
        if arms.len() == 1 {
            let arm = arms.pop().expect("one arm");
            self.emit(Stmt::If {
                cond: arm.cond,
                then: arm.then,
                otherwise,
            });
        } else {
            self.emit(Stmt::Cond { arms, otherwise });
        }
    }
}
