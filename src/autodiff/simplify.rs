//! Clean-up of a generated companion (docs/autodiff.md § Simplification): the VJP
//! rules emit one product per use and copy every inlined parameter, so the raw
//! reverse sweep recomputes values and keeps values nobody reads. Four rewrites,
//! each leaving every result bit for bit as it was:
//!
//! - **copies**: `%d = %s` (or a constant) is dropped and `%d` read as `%s`;
//! - **common subexpressions**: a second `%d = op f(x, y)` with the same operands is
//!   dropped and `%d` read as the first (`e ⊙ e` gives `g ⊙ e` twice);
//! - **known sizes**: `numerus_elementorum(x)` of a statically shaped `x` becomes a
//!   constant; `retro_imple(x, s)` becomes `crea(nihil, s, [dims of x])`, so `x` is not
//!   computed only for its shape; and `retro_imple(x, s) ⊙ e` (a filled tensor times a
//!   tensor of the same static shape) becomes `e ⊙ s` (the same products, one pass,
//!   no filled tensor);
//! - **dead values**: a pure statement whose result is never read is removed — at
//!   any depth, `si`/`itera` bodies included (the reverse loop of an `itera` computes
//!   a gradient for every operand of a rule, also for the inactive scale of `scala`).
//!
//! The other rewrites touch only the top level of the body (straight-line code, where
//! every earlier statement runs before every later one); nested `si`/`itera` blocks
//! are left as generated there, but their reads count. A slot qualifies when it is assigned
//! exactly once and never mutated in place (parameters: never assigned), so its value
//! is the same wherever it is read.

use rustc_hash::FxHashMap;

use crate::ir::ops::Op;
use crate::ir::visit::{child_blocks_mut, stmt_operands, stmt_operands_mut};
use crate::ir::*;

/// Simplifies `body` in place (slots are kept; some may become unused).
pub(crate) fn simplify(params: u32, slots: &mut Vec<SlotInfo>, body: &mut Block) {
    let defs = definitions(body);
    let single = |s: Slot| match defs.get(&s) {
        None => s.0 < params,
        Some(&n) => n == 1 && s.0 >= params,
    };
    let mut subst: FxHashMap<Slot, Operand> = FxHashMap::default();
    // (op, operands) of every kept top-level op over fixed operands, in order
    // (operands hold floats, so no hashing; companions have at most a few
    // thousand top-level statements).
    let mut seen: Vec<(Op, Vec<Operand>, Slot)> = Vec::new();
    // slot → (like, fill value) for `retro_imple(like, s)`
    let mut fills: FxHashMap<Slot, (Operand, Operand)> = FxHashMap::default();
    let mut kept = Vec::with_capacity(body.stmts.len());
    for mut st in std::mem::take(&mut body.stmts) {
        stmt_operands_mut(&mut st, &mut |o| resolve(&subst, o));
        if let Stmt::Let { dst, rhs, span } = &mut st {
            let (dst, span) = (*dst, *span);
            // A copy into a narrow slot is where eval/narrow.rs rounds under f32: it
            // stays unless rounding cannot change the value.
            let rounds = slots[dst.0 as usize].narrow && !rounding_free(slots, rhs);
            if single(dst) {
                rewrite_known_sizes(slots, &fills, rhs);
                if let Rhs::Op(Op::RetroImple, args) = rhs {
                    if let Some(d) = static_shape(slots, &args[0]) {
                        fills.insert(dst, (args[0].clone(), args[1].clone()));
                        let dims = d.iter().map(|&x| Operand::Const(Const::Int(x as i64)));
                        slots.push(SlotInfo {
                            name: String::new(),
                            ty: Ty::List(Box::new(Ty::Int)),
                            narrow: false,
                        });
                        let list = Slot(slots.len() as u32 - 1);
                        kept.push(Stmt::Let {
                            dst: list,
                            rhs: Rhs::List(dims.collect()),
                            span,
                        });
                        let fill = Operand::Const(Const::Nihil);
                        *rhs = Rhs::Op(Op::Crea, vec![fill, args[1].clone(), Operand::Slot(list)]);
                    }
                }
                match rhs {
                    Rhs::Use(src) if operand_fixed(src, &single) && !rounds => {
                        subst.insert(dst, src.clone());
                        continue;
                    }
                    Rhs::Op(op, args)
                        if *op != Op::RetroNihil
                            && args.iter().all(|a| operand_fixed(a, &single)) =>
                    {
                        if let Some((.., first)) =
                            seen.iter().find(|(o, a, _)| o == op && a == args)
                        {
                            // Not onto an unrounded value (narrow: see above).
                            if !slots[dst.0 as usize].narrow || slots[first.0 as usize].narrow {
                                subst.insert(dst, Operand::Slot(*first));
                                continue;
                            }
                        }
                        seen.push((*op, args.clone(), dst));
                    }
                    _ => {}
                }
            }
        }
        kept.push(st);
    }
    body.stmts = kept;
    remove_dead(body);
}

/// Whether `rhs` copies a value that rounding to f32 leaves as it is: a narrow slot's
/// (already rounded), a constant that is an f32 or not a float.
fn rounding_free(slots: &[SlotInfo], rhs: &Rhs) -> bool {
    match rhs {
        Rhs::Use(Operand::Slot(s)) => slots[s.0 as usize].narrow,
        Rhs::Use(Operand::Const(Const::Float(x))) => (*x as f32 as f64).to_bits() == x.to_bits(),
        Rhs::Use(Operand::Const(_)) => true,
        _ => false,
    }
}

/// `numerus_elementorum` of a static shape → a constant; `fill ⊙ e` / `e ⊙ fill` with
/// the fill's shape equal to `e`'s static shape → `e ⊙ s`.
fn rewrite_known_sizes(
    slots: &[SlotInfo],
    fills: &FxHashMap<Slot, (Operand, Operand)>,
    rhs: &mut Rhs,
) {
    let shape = |o: &Operand| static_shape(slots, o);
    let Rhs::Op(op, args) = rhs else { return };
    match op {
        Op::Numerus => {
            if let Some(d) = shape(&args[0]) {
                let n = d.iter().try_fold(1i64, |acc, &x| acc.checked_mul(x as i64));
                if let Some(n) = n {
                    *rhs = Rhs::Use(Operand::Const(Const::Int(n)));
                }
            }
        }
        Op::Multiplica => {
            for (f, other) in [(0, 1), (1, 0)] {
                let Operand::Slot(fs) = &args[f] else {
                    continue;
                };
                let Some((like, value)) = fills.get(fs) else {
                    continue;
                };
                let (Some(a), Some(b)) = (shape(like), shape(&args[other])) else {
                    continue;
                };
                if a == b {
                    *rhs = Rhs::Op(Op::Multiplica, vec![args[other].clone(), value.clone()]);
                    return;
                }
            }
        }
        _ => {}
    }
}

/// The fully known static shape of a tensor slot.
fn static_shape(slots: &[SlotInfo], o: &Operand) -> Option<Vec<u64>> {
    let Operand::Slot(s) = o else { return None };
    match &slots.get(s.0 as usize)?.ty {
        Ty::Tensor { shape: Some(d), .. } => d.iter().copied().collect(),
        _ => None,
    }
}

fn resolve(subst: &FxHashMap<Slot, Operand>, o: &mut Operand) {
    if let Operand::Slot(s) = o {
        if let Some(r) = subst.get(s) {
            *o = r.clone();
        }
    }
}

fn operand_fixed(o: &Operand, single: &impl Fn(Slot) -> bool) -> bool {
    match o {
        Operand::Slot(s) => single(*s),
        Operand::Const(_) => true,
        Operand::Global(_) => false,
    }
}

/// How many times each slot is written (assignments, loop variables, in-place
/// mutation of its value).
pub(crate) fn definitions(b: &Block) -> FxHashMap<Slot, u32> {
    fn add(m: &mut FxHashMap<Slot, u32>, s: Slot) {
        *m.entry(s).or_default() += 1;
    }
    fn root(m: &mut FxHashMap<Slot, u32>, p: &Place) {
        if let PlaceRoot::Slot(s) = p.root {
            // A mutated value counts as written twice: never single.
            add(m, s);
            add(m, s);
        }
    }
    fn walk(b: &Block, m: &mut FxHashMap<Slot, u32>) {
        for st in &b.stmts {
            match st {
                Stmt::Let { dst, rhs, .. } => {
                    add(m, *dst);
                    if let Rhs::Method(meth, Operand::Slot(s), _) = rhs {
                        if meth.mutates() {
                            add(m, *s);
                            add(m, *s);
                        }
                    }
                }
                Stmt::Store { place, .. } => root(m, place),
                Stmt::MethodInPlace { dst, place, .. } | Stmt::CallInPlace { dst, place, .. } => {
                    if let Some(d) = dst {
                        add(m, *d);
                    }
                    root(m, place);
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    walk(then, m);
                    walk(otherwise, m);
                }
                Stmt::Cond { arms, otherwise } => {
                    for a in arms {
                        walk(&a.test, m);
                        walk(&a.then, m);
                    }
                    walk(otherwise, m);
                }
                Stmt::Loop { body, .. } => walk(body, m),
                Stmt::ForRange { var, body, .. } | Stmt::ForEach { var, body, .. } => {
                    add(m, *var);
                    walk(body, m);
                }
                Stmt::Try {
                    body,
                    catch_slot,
                    handler,
                } => {
                    if let Some(c) = catch_slot {
                        add(m, *c);
                    }
                    walk(body, m);
                    walk(handler, m);
                }
                _ => {}
            }
        }
    }
    let mut m = FxHashMap::default();
    walk(b, &mut m);
    m
}

/// Removes `Let`s of pure right-hand sides whose slot is never read anywhere in the
/// body, at any depth (inside `si`/`itera` too: a value no statement reads is dead
/// whatever the control flow), to a fixpoint.
fn remove_dead(body: &mut Block) {
    fn retain(b: &mut Block, reads: &FxHashMap<Slot, u32>) -> usize {
        let before = b.stmts.len();
        b.stmts.retain(|st| match st {
            Stmt::Let { dst, rhs, .. } => reads.contains_key(dst) || !pure(rhs),
            _ => true,
        });
        let mut removed = before - b.stmts.len();
        for st in &mut b.stmts {
            child_blocks_mut(st, &mut |inner| removed += retain(inner, reads));
        }
        removed
    }
    loop {
        // `stmt_operands` walks nested blocks: the top level covers every read.
        let mut reads: FxHashMap<Slot, u32> = FxHashMap::default();
        for st in &body.stmts {
            stmt_operands(st, &mut |o| {
                if let Operand::Slot(s) = o {
                    *reads.entry(*s).or_default() += 1;
                }
            });
        }
        if retain(body, &reads) == 0 {
            return;
        }
    }
}

/// Right-hand sides with no effect but their value (tensor ops, copies, aggregates).
fn pure(rhs: &Rhs) -> bool {
    matches!(
        rhs,
        Rhs::Use(_)
            | Rhs::Op(..)
            | Rhs::List(_)
            | Rhs::Tuple(_)
            | Rhs::Record(..)
            | Rhs::Field(..)
            | Rhs::Index(..)
    )
}
