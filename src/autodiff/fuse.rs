//! Fusion in a generated companion (docs/autodiff.md § Fusion): an op that consumes
//! the first part of a linear layer's (or a layernorm's) VJP folds into it, which then
//! applies it to each block of `∂a` while the block is in cache instead of a pass of its
//! own over whole matrices. The consumers are the rows of `EPILOGUES` in fusions.rs,
//! each with the bits of the fused op defined as the product followed by it:
//!
//! ```text
//! %t = op retro_matmul(%h, %w, %g)        (∂h, ∂w)
//! %x = index %t[0]
//! …
//! %d = index %p[1]                        GELU's kept derivative
//! %o = op retro_gelu_derivata(%x, %d)     ∂h ⊙ d: the MLP's GELU backward
//! ```
//!
//! becomes `%t = op retro_matmul_derivata(%h, %w, %g, %d)` (with `%d` moved up when it
//! was below) and `%o = index %t[0]`; and `%o = op addita(%r, %x)` — a cotangent summed
//! with the one before, as the input of the attention's three projections gets —
//! becomes `%t = op retro_matmul_adde(%h, %w, %g, %r)`, `%o = index %t[0]`. The same sum
//! after a layernorm's VJP (a residual around it) folds into `retro_laminatio_adde`,
//! which adds `r` to each group of rows of `∂x` as soon as they are written.
//!
//! Rewritten only where nothing else can tell: `%t`, `%x`, `%o` and the extra operand
//! are each written once in the whole companion, `%x` is read only by the consumer,
//! `%t` only by `index %t[0]` (once) and `index %t[1]`, the three statements are in one
//! block in that order, and the extra operand is known before the product — written
//! earlier in the block, a parameter, or an `index`/field read placed between the two
//! whose operands nothing in between writes (then it moves up). Loop bodies are
//! rewritten too (the layers of a model run in an `itera`).

use rustc_hash::FxHashMap;

use super::fusions::{Epilogue, EPILOGUES};
use super::simplify::definitions;
use crate::ir::ops::Op;
use crate::ir::visit::{child_blocks, child_blocks_mut, rhs_operands, stmt_operands};
use crate::ir::*;

/// Fuses every qualifying consumer of a product's `∂a` in `body` into the product.
pub(crate) fn fuse(params: u32, body: &mut Block) {
    let facts = Facts::of(params, body);
    fuse_block(body, &facts);
}

/// What the rewrite needs to know about the whole companion. It stays true across
/// rewrites: each moves reads between statements without changing their number.
struct Facts {
    params: u32,
    defs: FxHashMap<Slot, u32>,
    /// Reads of each slot, at any depth.
    reads: FxHashMap<Slot, u32>,
    /// Reads `index %t[i]` of each (t, i) with a constant i, at any depth.
    parts: FxHashMap<(Slot, i64), u32>,
}

impl Facts {
    fn of(params: u32, body: &Block) -> Facts {
        fn parts(b: &Block, f: &mut Facts) {
            for st in &b.stmts {
                if let Stmt::Let {
                    rhs: Rhs::Index(Operand::Slot(t), Operand::Const(Const::Int(i))),
                    ..
                } = st
                {
                    *f.parts.entry((*t, *i)).or_default() += 1;
                }
                child_blocks(st, &mut |c| parts(c, f));
            }
        }
        let mut f = Facts {
            params,
            defs: definitions(body),
            reads: FxHashMap::default(),
            parts: FxHashMap::default(),
        };
        for st in &body.stmts {
            // (nested blocks included)
            stmt_operands(st, &mut |o| {
                if let Operand::Slot(s) = o {
                    *f.reads.entry(*s).or_default() += 1;
                }
            });
        }
        parts(body, &mut f);
        f
    }

    /// Written exactly once (a parameter: never written).
    fn single(&self, s: Slot) -> bool {
        match self.defs.get(&s) {
            None => s.0 < self.params,
            Some(&n) => n == 1 && s.0 >= self.params,
        }
    }

    fn reads(&self, s: Slot) -> u32 {
        self.reads.get(&s).copied().unwrap_or(0)
    }

    fn part_reads(&self, t: Slot, i: i64) -> u32 {
        self.parts.get(&(t, i)).copied().unwrap_or(0)
    }
}

/// Where one rewrite applies, as statement indices in a block.
struct Plan {
    /// `%t = op retro_matmul(…)`
    product: usize,
    /// `%x = index %t[0]`
    part: usize,
    /// `%o = op consumer(…)`
    consumer: usize,
    /// The extra operand's definition, when it has to move above the product.
    hoist: Option<usize>,
    /// `%t`
    tuple: Slot,
    /// The fused op and its extra operand.
    fused: Op,
    extra: Operand,
}

fn fuse_block(b: &mut Block, f: &Facts) {
    while let Some(plan) = find(b, f) {
        apply(b, plan);
    }
    for st in &mut b.stmts {
        child_blocks_mut(st, &mut |c| fuse_block(c, f));
    }
}

fn let_dst(st: &Stmt) -> Option<Slot> {
    match st {
        Stmt::Let { dst, .. } => Some(*dst),
        _ => None,
    }
}

fn find(b: &Block, f: &Facts) -> Option<Plan> {
    b.stmts
        .iter()
        .enumerate()
        .find_map(|(i, st)| EPILOGUES.iter().find_map(|&e| plan(b, f, i, st, e)))
}

/// The rewrite of epilogue `e` at statement `consumer`, if it applies.
fn plan(b: &Block, f: &Facts, consumer: usize, st: &Stmt, e: Epilogue) -> Option<Plan> {
    let Epilogue {
        product: producer,
        consumer: op,
        part_at: at,
        fused,
    } = e;
    let stmts = &b.stmts;
    let Stmt::Let {
        dst: o,
        rhs: Rhs::Op(found, args),
        ..
    } = st
    else {
        return None;
    };
    let (Operand::Slot(x), Operand::Slot(e)) = (args.get(at)?, args.get(1 - at)?) else {
        return None;
    };
    if *found != op || args.len() != 2 {
        return None;
    }
    if !f.single(*o) || !f.single(*x) || f.reads(*x) != 1 || !f.single(*e) || x == e {
        return None;
    }
    let part = stmts[..consumer]
        .iter()
        .position(|s| let_dst(s) == Some(*x))?;
    let Stmt::Let {
        rhs: Rhs::Index(Operand::Slot(t), Operand::Const(Const::Int(0))),
        ..
    } = &stmts[part]
    else {
        return None;
    };
    let parts: u32 = (0..3).map(|i| f.part_reads(*t, i)).sum();
    let only_parts = f.part_reads(*t, 0) == 1 && f.reads(*t) == parts;
    if !f.single(*t) || !only_parts {
        return None;
    }
    let product = stmts[..part].iter().position(
        |s| matches!(s, Stmt::Let { dst, rhs: Rhs::Op(p, _), .. } if dst == t && *p == producer),
    )?;
    let hoist = match stmts.iter().position(|s| let_dst(s) == Some(*e)) {
        None if e.0 < f.params => None,
        Some(j) if j < product => None,
        Some(j) if j > product && j < consumer && movable(&stmts[product..j], &stmts[j]) => Some(j),
        _ => return None,
    };
    Some(Plan {
        product,
        part,
        consumer,
        hoist,
        tuple: *t,
        fused,
        extra: Operand::Slot(*e),
    })
}

/// Whether `def` (the extra operand's definition) can run before `between` instead of
/// after: a read of a part or field that none of those statements writes the operands
/// of.
fn movable(between: &[Stmt], def: &Stmt) -> bool {
    let Stmt::Let { rhs, .. } = def else {
        return false;
    };
    if !matches!(rhs, Rhs::Index(..) | Rhs::Field(..)) {
        return false;
    }
    let written = definitions(&Block {
        stmts: between.to_vec(),
    });
    let mut free = true;
    rhs_operands(rhs, &mut |o| {
        if let Operand::Slot(s) = o {
            free &= !written.contains_key(s);
        }
    });
    free
}

fn apply(b: &mut Block, plan: Plan) {
    let Plan {
        product,
        part,
        consumer,
        hoist,
        tuple,
        fused,
        extra,
    } = plan;
    let old = std::mem::take(&mut b.stmts);
    let mut moved = hoist.map(|j| old[j].clone());
    let mut stmts = Vec::with_capacity(old.len());
    for (i, st) in old.into_iter().enumerate() {
        if i == part || Some(i) == hoist {
            continue;
        }
        match st {
            Stmt::Let {
                dst,
                rhs: Rhs::Op(_, mut args),
                span,
            } if i == product => {
                stmts.extend(moved.take());
                args.push(extra.clone());
                stmts.push(Stmt::Let {
                    dst,
                    rhs: Rhs::Op(fused, args),
                    span,
                });
            }
            Stmt::Let { dst, span, .. } if i == consumer => stmts.push(Stmt::Let {
                dst,
                rhs: Rhs::Index(Operand::Slot(tuple), Operand::Const(Const::Int(0))),
                span,
            }),
            st => stmts.push(st),
        }
    }
    b.stmts = stmts;
}
