//! Companions specialised to the gradients a call site reads (docs/autodiff.md §
//! Demanded gradients). A companion returns one gradient per parameter, but a caller
//! often reads only some of them: `fixum [_, gw, gb, _] ← grad_f(x, w, b, y, nihil,
//! 1.0)` never looks at the gradients of the data `x` and `y`. When every read of a
//! call's result is an element access `%r[k]` with a constant `k`, the call is pointed
//! at a copy of the companion whose unread elements are `nihil`; the simplifier then
//! drops the statements only those elements needed (here the products that form
//! ∂x and ∂y). The elements that are read keep their bits: the copy runs the same
//! statements for them, in the same order.
//!
//! This follows the decision the simplifier already records for companions: a value
//! the result does not need is not computed, so a run-time error only such a value
//! would raise is not raised by the companion.

use rustc_hash::{FxHashMap, FxHashSet};

use super::simplify;
use crate::ir::visit::{child_blocks, child_blocks_mut, stmt_operands};
use crate::ir::*;

/// Points every call of a companion in `companions` whose result is only read
/// element-wise at a copy computing just those elements (copies are shared between
/// call sites that read the same elements).
pub(crate) fn specialise(program: &mut Program, companions: &FxHashSet<FuncId>) {
    let mut copies: FxHashMap<(FuncId, Vec<u32>), FuncId> = FxHashMap::default();
    for caller in 0..program.functions.len() {
        let demand = read_elements(&program.functions[caller].body);
        let mut calls: Vec<(Slot, FuncId)> = Vec::new();
        each_stmt(&program.functions[caller].body, &mut |st| {
            if let Stmt::Let {
                dst,
                rhs: Rhs::Call(f, _),
                ..
            } = st
            {
                if companions.contains(f) {
                    calls.push((*dst, *f));
                }
            }
        });
        let mut targets: FxHashMap<(Slot, FuncId), FuncId> = FxHashMap::default();
        for (dst, f) in calls {
            let Some(Some(read)) = demand.get(&dst) else {
                continue;
            };
            let key = (f, read.iter().copied().collect::<Vec<u32>>());
            let copy = match copies.get(&key) {
                Some(&c) => c,
                None => match restricted(&program.functions[f.0 as usize], read) {
                    Some(func) => {
                        program.functions.push(func);
                        let c = FuncId(program.functions.len() as u32 - 1);
                        copies.insert(key, c);
                        c
                    }
                    None => continue,
                },
            };
            targets.insert((dst, f), copy);
        }
        if !targets.is_empty() {
            retarget(&mut program.functions[caller].body, &targets);
        }
    }
}

/// For each slot read at all: `Some(indices)` when every read is `%s[k]` with a
/// constant integer `k`, `None` when some read uses the whole value.
fn read_elements(body: &Block) -> FxHashMap<Slot, Option<std::collections::BTreeSet<u32>>> {
    let mut reads: FxHashMap<Slot, u32> = FxHashMap::default();
    let mut element_reads: FxHashMap<Slot, (u32, std::collections::BTreeSet<u32>)> =
        FxHashMap::default();
    // `stmt_operands` walks nested blocks itself: top-level statements only.
    for st in &body.stmts {
        stmt_operands(st, &mut |o| {
            if let Operand::Slot(s) = o {
                *reads.entry(*s).or_default() += 1;
            }
        });
    }
    each_stmt(body, &mut |st| {
        if let Stmt::Let {
            rhs: Rhs::Index(Operand::Slot(s), Operand::Const(Const::Int(k))),
            ..
        } = st
        {
            let e = element_reads.entry(*s).or_default();
            e.0 += 1;
            if let Ok(k) = u32::try_from(*k) {
                e.1.insert(k);
            } else {
                // A negative or huge index: keep the whole value (the access fails or
                // counts from the end at run time).
                e.0 += u32::MAX / 2;
            }
        }
    });
    reads
        .into_iter()
        .map(|(s, n)| {
            let only_elements = element_reads
                .get(&s)
                .filter(|(m, _)| *m == n)
                .map(|(_, ks)| ks.clone());
            (s, only_elements)
        })
        .collect()
}

/// A copy of companion `f` whose returned tuple keeps only the elements in `read`
/// (the others `nihil`), simplified; `None` when `f` does not end by returning a tuple
/// built once at its top level, or when every element is read.
fn restricted(f: &Function, read: &std::collections::BTreeSet<u32>) -> Option<Function> {
    let Some(Stmt::Return(Some(Operand::Slot(t)))) = f.body.stmts.last() else {
        return None;
    };
    let mut defs = 0;
    each_stmt(&f.body, &mut |st| match st {
        Stmt::Let { dst, .. } if dst == t => defs += 1,
        Stmt::MethodInPlace { place, .. }
        | Stmt::CallInPlace { place, .. }
        | Stmt::Store { place, .. }
            if place.root == PlaceRoot::Slot(*t) =>
        {
            defs += 2
        }
        _ => {}
    });
    if defs != 1 || t.0 < f.params {
        return None;
    }
    let mut copy = f.clone();
    let mut changed = false;
    for st in &mut copy.body.stmts {
        if let Stmt::Let {
            dst,
            rhs: Rhs::Tuple(items),
            ..
        } = st
        {
            if dst == t {
                for (i, item) in items.iter_mut().enumerate() {
                    if !read.contains(&(i as u32)) && *item != Operand::Const(Const::Nihil) {
                        *item = Operand::Const(Const::Nihil);
                        changed = true;
                    }
                }
            }
        }
    }
    if !changed {
        return None;
    }
    simplify::simplify(copy.params, &mut copy.slots, &mut copy.body);
    super::fuse::fuse(copy.params, &mut copy.body);
    Some(copy)
}

/// Rewrites `dst ← f(…)` to call `targets[(dst, f)]`.
fn retarget(b: &mut Block, targets: &FxHashMap<(Slot, FuncId), FuncId>) {
    for st in &mut b.stmts {
        if let Stmt::Let {
            dst,
            rhs: Rhs::Call(f, _),
            ..
        } = st
        {
            if let Some(&c) = targets.get(&(*dst, *f)) {
                *f = c;
            }
        }
        child_blocks_mut(st, &mut |inner| retarget(inner, targets));
    }
}

/// Calls `f` on every statement of `b`, nested blocks included (outer first).
fn each_stmt<'b>(b: &'b Block, f: &mut impl FnMut(&'b Stmt)) {
    for st in &b.stmts {
        f(st);
        child_blocks(st, &mut |inner| each_stmt(inner, f));
    }
}
