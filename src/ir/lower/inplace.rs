//! After lowering: a genus method called on a place is lowered as `CallInPlace`,
//! which writes the callee's final `ego` back. Methods that never change `ego`
//! (directly or through another in-place call) don't need the write-back; their
//! calls on a plain variable become ordinary `Call`s.

use rustc_hash::FxHashSet;

use crate::ir::*;

pub fn demote_pure_method_calls(p: &mut Program) {
    let mutating = mutating_functions(p);
    for f in &mut p.functions {
        let mut slots = std::mem::take(&mut f.slots);
        rewrite_block(&mut f.body, &mutating, &mut slots);
        f.slots = slots;
    }
}

/// Functions whose slot 0 may be written (fixpoint over in-place calls).
fn mutating_functions(p: &Program) -> FxHashSet<FuncId> {
    let mut set = FxHashSet::default();
    loop {
        let before = set.len();
        for (i, f) in p.functions.iter().enumerate() {
            if f.params > 0 && writes_slot0(&f.body, &set) {
                set.insert(FuncId(i as u32));
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

fn root0(place: &Place) -> bool {
    place.root == PlaceRoot::Slot(Slot(0))
}

fn writes_slot0(b: &Block, mutating: &FxHashSet<FuncId>) -> bool {
    b.stmts.iter().any(|s| match s {
        Stmt::Let { dst, .. } => *dst == Slot(0),
        Stmt::Store { place, .. } | Stmt::MethodInPlace { place, .. } => root0(place),
        Stmt::CallInPlace {
            dst, func, place, ..
        } => *dst == Some(Slot(0)) || (root0(place) && mutating.contains(func)),
        Stmt::If {
            then, otherwise, ..
        } => writes_slot0(then, mutating) || writes_slot0(otherwise, mutating),
        Stmt::Cond { arms, otherwise } => {
            arms.iter()
                .any(|a| writes_slot0(&a.test, mutating) || writes_slot0(&a.then, mutating))
                || writes_slot0(otherwise, mutating)
        }
        Stmt::Loop { body, .. } => writes_slot0(body, mutating),
        Stmt::ForRange { var, body, .. } | Stmt::ForEach { var, body, .. } => {
            *var == Slot(0) || writes_slot0(body, mutating)
        }
        Stmt::Try {
            body,
            catch_slot,
            handler,
        } => {
            *catch_slot == Some(Slot(0))
                || writes_slot0(body, mutating)
                || writes_slot0(handler, mutating)
        }
        _ => false,
    })
}

fn rewrite_block(b: &mut Block, mutating: &FxHashSet<FuncId>, slots: &mut Vec<SlotInfo>) {
    for s in &mut b.stmts {
        match s {
            Stmt::CallInPlace {
                dst,
                func,
                place,
                args,
                span,
            } if place.path.is_empty() && !mutating.contains(func) => {
                let PlaceRoot::Slot(recv) = place.root else {
                    continue;
                };
                let dst = dst.unwrap_or_else(|| {
                    slots.push(SlotInfo {
                        name: String::new(),
                        ty: Ty::Any,
                        narrow: false,
                    });
                    Slot(slots.len() as u32 - 1)
                });
                let mut all = vec![Operand::Slot(recv)];
                all.append(args);
                *s = Stmt::Let {
                    dst,
                    rhs: Rhs::Call(*func, all),
                    span: *span,
                };
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                rewrite_block(then, mutating, slots);
                rewrite_block(otherwise, mutating, slots);
            }
            Stmt::Cond { arms, otherwise } => {
                for a in arms {
                    rewrite_block(&mut a.test, mutating, slots);
                    rewrite_block(&mut a.then, mutating, slots);
                }
                rewrite_block(otherwise, mutating, slots);
            }
            Stmt::Loop { body, .. } | Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => {
                rewrite_block(body, mutating, slots)
            }
            Stmt::Try { body, handler, .. } => {
                rewrite_block(body, mutating, slots);
                rewrite_block(handler, mutating, slots);
            }
            _ => {}
        }
    }
}
