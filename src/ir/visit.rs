//! Walks over the operands a statement or right-hand side reads, in one place for
//! every pass (activity and dead-code analysis, companion simplification). Both a
//! shared and a mutable form are generated from one body, so a new `Rhs` or `Stmt`
//! variant is handled once. A place's root slot counts as read (the statement reads
//! the container it writes into); nested blocks are walked (a `Cond`'s arms in a loop,
//! so the depth is the program's nesting, never its number of arms).

use super::*;

macro_rules! visitors {
    ($rhs:ident, $stmt:ident, $($m:ident)?) => {
        /// Calls `f` on every operand `rhs` reads.
        pub fn $rhs(rhs: &$($m)? Rhs, f: &mut impl FnMut(&$($m)? Operand)) {
            match rhs {
                Rhs::Use(o)
                | Rhs::Field(o, _)
                | Rhs::Convert(o, _)
                | Rhs::Coerce(o, _)
                | Rhs::Is(o, _, _) => f(o),
                Rhs::Prim(_, a)
                | Rhs::Call(_, a)
                | Rhs::Closure(_, a)
                | Rhs::List(a)
                | Rhs::Tuple(a)
                | Rhs::Record(_, a)
                | Rhs::Template(_, a)
                | Rhs::Host(_, a)
                | Rhs::Op(_, a) => {
                    for o in a {
                        f(o);
                    }
                }
                Rhs::CallValue(x, a) | Rhs::Method(_, x, a) => {
                    f(x);
                    for o in a {
                        f(o);
                    }
                }
                Rhs::Map(e) => {
                    for (_, v) in e {
                        f(v);
                    }
                }
                Rhs::Index(a, b) => {
                    f(a);
                    f(b);
                }
                Rhs::Range {
                    start, end, step, ..
                } => {
                    f(start);
                    f(end);
                    f(step);
                }
            }
        }

        /// Calls `f` on every operand `st` reads, nested blocks included; a place's
        /// root slot is passed as an operand (and written back if `f` changes it to
        /// another slot).
        pub fn $stmt(st: &$($m)? Stmt, f: &mut impl FnMut(&$($m)? Operand)) {
            #[allow(unused_mut)]
            fn place(p: &$($m)? Place, f: &mut impl FnMut(&$($m)? Operand)) {
                if let PlaceRoot::Slot(s) = p.root {
                    let mut o = Operand::Slot(s);
                    f(&$($m)? o);
                    visitors!(@root p, o, $($m)?);
                }
                for step in &$($m)? p.path {
                    if let PlaceStep::Index(o) = step {
                        f(o);
                    }
                }
            }
            fn block(b: &$($m)? Block, f: &mut impl FnMut(&$($m)? Operand)) {
                for st in &$($m)? b.stmts {
                    $stmt(st, f);
                }
            }
            match st {
                Stmt::Let { rhs, .. } => $rhs(rhs, f),
                Stmt::SetGlobal { value, .. } => f(value),
                Stmt::Store { place: p, value, .. } => {
                    place(p, f);
                    f(value);
                }
                Stmt::MethodInPlace { place: p, args, .. }
                | Stmt::CallInPlace { place: p, args, .. } => {
                    place(p, f);
                    for o in args {
                        f(o);
                    }
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    f(cond);
                    block(then, f);
                    block(otherwise, f);
                }
                Stmt::Cond { arms, otherwise } => {
                    for arm in arms {
                        block(&$($m)? arm.test, f);
                        f(&$($m)? arm.cond);
                        block(&$($m)? arm.then, f);
                    }
                    block(otherwise, f);
                }
                Stmt::Loop { body, .. } => block(body, f),
                Stmt::ForRange {
                    start,
                    end,
                    step,
                    body,
                    ..
                } => {
                    f(start);
                    f(end);
                    f(step);
                    block(body, f);
                }
                Stmt::ForEach { source, body, .. } => {
                    f(source);
                    block(body, f);
                }
                Stmt::Return(Some(o)) => f(o),
                Stmt::Throw { value, .. } => f(value),
                Stmt::Try { body, handler, .. } => {
                    block(body, f);
                    block(handler, f);
                }
                Stmt::Fatal { message, .. } => f(message),
                Stmt::Assert { cond, message, .. } => {
                    f(cond);
                    if let Some(m) = message {
                        f(m);
                    }
                }
                Stmt::Out { args, .. } => {
                    for o in args {
                        f(o);
                    }
                }
                Stmt::Break | Stmt::Continue | Stmt::Return(None) => {}
            }
        }
    };
    (@root $p:ident, $o:ident, mut) => {
        if let Operand::Slot(s2) = $o {
            $p.root = PlaceRoot::Slot(s2);
        }
    };
    (@root $p:ident, $o:ident, ) => {
        let _ = $o;
    };
}

visitors!(rhs_operands, stmt_operands,);
visitors!(rhs_operands_mut, stmt_operands_mut, mut);

macro_rules! child_walkers {
    ($name:ident, $($m:ident)?) => {
        /// Calls `f` on each block nested directly in `st` (branches, loop bodies, `fac`
        /// body and handler), for passes that walk or rewrite statements at every depth.
        pub fn $name<'s>(st: &'s $($m)? Stmt, f: &mut impl FnMut(&'s $($m)? Block)) {
            match st {
                Stmt::If {
                    then, otherwise, ..
                } => {
                    f(then);
                    f(otherwise);
                }
                Stmt::Cond { arms, otherwise } => {
                    for arm in arms {
                        f(&$($m)? arm.test);
                        f(&$($m)? arm.then);
                    }
                    f(otherwise);
                }
                Stmt::Loop { body, .. }
                | Stmt::ForRange { body, .. }
                | Stmt::ForEach { body, .. } => f(body),
                Stmt::Try { body, handler, .. } => {
                    f(body);
                    f(handler);
                }
                _ => {}
            }
        }
    };
}

child_walkers!(child_blocks,);
child_walkers!(child_blocks_mut, mut);
