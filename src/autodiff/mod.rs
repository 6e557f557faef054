//! The backward transform (docs/autodiff.md): for every `@ radix backward "G"` request
//! the companion `G(p…, residual, upstream)` gets a generated body — F's computation
//! inlined (callees included), then the reverse sweep built from one VJP rule per op
//! (`rules.rs`), returning `iuncta` of one gradient per parameter. Generated code is
//! ordinary IR: printed by `faber ir`, verified, and run by the evaluator.
//!
//! Supported: tensor and float-scalar code, calls to other functions (inlined, also
//! across imports), parameter trees (records, lists, tuples), and one level of `si`
//! and `itera ab` (see `forward.rs`). Nested control flow, `dum`, mutation, I/O and
//! calls through function values are reported as diagnostics (SEM024).

mod demand;
mod forward;
mod fuse;
mod fusions;
mod rules;
mod simplify;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::diag::{codes, Diagnostic};
use crate::ir::BinOp;
use crate::ir::*;
use crate::source::{FileId, Span};

/// Fills every requested companion; returns the diagnostics for what cannot be
/// differentiated (the program is left unchanged for those).
pub fn differentiate(program: &mut Program) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    let mut built = FxHashSet::default();
    for req in program.backward.clone() {
        match build(program, &req) {
            Ok((mut slots, mut body)) => {
                let f = &mut program.functions[req.companion.0 as usize];
                simplify::simplify(f.params, &mut slots, &mut body);
                fuse::fuse(f.params, &mut body);
                f.slots = slots;
                f.body = body;
                built.insert(req.companion);
            }
            Err(d) => diags.push(d),
        }
    }
    demand::specialise(program, &built);
    diags
}

/// The generated function under construction.
pub(crate) struct Gen<'p> {
    pub p: &'p Program,
    pub slots: Vec<SlotInfo>,
    /// Forward statements (straight-line `Let`s).
    pub fwd: Vec<Stmt>,
    /// Reverse statements, in emission order.
    pub rev: Vec<Stmt>,
    pub span: Span,
    depth: usize,
    /// Inside a copied `si`/`itera` body (one level is supported).
    in_region: bool,
    /// Tapes of every copied `itera ab`, keyed by its loop-variable slot.
    loops: Vec<LoopTapes>,
    /// Helper values the forward copy keeps, with the operands they were computed
    /// from: `p ← x.gelu_cum_derivata()` for each copied `x.gelu()` (p → [x]), and
    /// `w ← q.attentio_cum_ponderibus(k, v, capita)` for each copied `q.attentio(k, v,
    /// capita)` (w → [q, k, v, capita]). Such a value carries no cotangent of its own: the
    /// rule of the op that consumes it (`x.gelu_ex_pari(p)`, `q.attentio_ex_pari(k, v,
    /// capita, w)`) gives its operands their whole cotangents from it.
    pub tangents: FxHashMap<Slot, Vec<Operand>>,
    /// The primal's file, and the call in it through which the statements being
    /// copied were inlined (`None` while copying the primal's own body). Copied
    /// statements from other files (a library callee) take that call's span, so a
    /// run-time error in the companion lands on the user's line (docs/diagnostics.md).
    pub primal_file: FileId,
    pub site: Option<Span>,
    /// The own spans of copied `Let`s whose span was replaced by `site`, by their
    /// slot: compile-time diagnostics about them keep pointing at the op itself.
    pub origin: FxHashMap<Slot, Span>,
}

/// What the reverse pass of one `itera ab` needs: the tape whose length is the trip
/// count, and (value slot, tape) pairs to restore at the start of each reverse pass.
pub(crate) struct LoopTapes {
    pub var: Slot,
    pub count_tape: Slot,
    pub restores: Vec<(Slot, Slot)>,
}

impl Gen<'_> {
    pub fn slot(&mut self, name: &str, ty: Ty) -> Slot {
        self.slots.push(SlotInfo {
            name: name.to_string(),
            ty,
            narrow: false,
        });
        Slot(self.slots.len() as u32 - 1)
    }

    /// A fresh slot like the primal's `info`: its name, type and `narrow` flag, so
    /// the companion's forward copy rounds the places the primal rounds.
    pub fn copy_slot(&mut self, info: SlotInfo) -> Slot {
        self.slots.push(info);
        Slot(self.slots.len() as u32 - 1)
    }

    pub fn ty(&self, o: &Operand) -> Ty {
        match o {
            Operand::Slot(s) => self.slots[s.0 as usize].ty.clone(),
            Operand::Global(g) => self.p.globals[g.0 as usize].ty.clone(),
            Operand::Const(Const::Float(_)) => Ty::Float,
            Operand::Const(Const::Int(_)) => Ty::Int,
            Operand::Const(_) => Ty::Any,
        }
    }

    /// The span a copied statement gets: its own in the primal's file, else the span
    /// of the primal's call it was inlined through.
    pub fn at(&self, span: Span) -> Span {
        match self.site {
            Some(site) if span.file != self.primal_file => site,
            _ => span,
        }
    }

    /// Emits `rhs` into the reverse sweep and returns its slot.
    pub fn emit(&mut self, rhs: Rhs, ty: Ty) -> Slot {
        let dst = self.slot("", ty);
        let span = self.span;
        self.rev.push(Stmt::Let { dst, rhs, span });
        dst
    }
}

fn not_differentiable(span: Span, what: &str) -> Diagnostic {
    Diagnostic::error(
        codes::SEM_NOT_DIFFERENTIABLE,
        format!("cannot differentiate {what}"),
        span,
    )
    .with_hint("`@ radix backward` supports straight-line tensor and float code and calls to such functions; see docs/autodiff.md")
}

fn build(p: &Program, req: &Backward) -> Result<(Vec<SlotInfo>, Block), Diagnostic> {
    let primal = p.func(req.primal);
    let n = primal.params as usize;
    let mut g = Gen {
        p,
        slots: Vec::new(),
        fwd: Vec::new(),
        rev: Vec::new(),
        span: req.span,
        depth: 0,
        in_region: false,
        loops: Vec::new(),
        tangents: FxHashMap::default(),
        primal_file: primal.span.file,
        site: None,
        origin: FxHashMap::default(),
    };
    for i in 0..n {
        let info = primal.slots[i].clone();
        g.slots.push(info);
    }
    g.slot("residual", Ty::Any);
    let upstream = g.slot("upstream", primal.ret.clone());
    // Forward: F's body inlined, parameters mapped to the companion's.
    let args: Vec<Operand> = (0..n as u32).map(|i| Operand::Slot(Slot(i))).collect();
    let result = forward::inline(&mut g, req.primal, &args, req.span)?;
    let fwd = std::mem::take(&mut g.fwd);

    // Activity: values that depend on a parameter (to a fixpoint, for loops).
    let mut active: FxHashSet<Slot> = (0..n as u32).map(Slot).collect();
    loop {
        let before = active.len();
        mark_active(&fwd, &g.slots, &g.tangents, &mut active);
        if active.len() == before {
            break;
        }
    }
    // Reverse sweep.
    let mut witness = FxHashMap::default();
    previous_values(&fwd, &mut FxHashMap::default(), &mut witness);
    let mut st = Rev {
        ct: FxHashMap::default(),
        active,
        runtime: FxHashSet::default(),
        witness,
    };
    if let Operand::Slot(r) = &result {
        if st.active.contains(r) {
            st.ct.insert(*r, Operand::Slot(upstream));
        }
    }
    reverse_stmts(&mut g, &fwd, &mut st)?;
    let ct = st.ct;
    // Result: one gradient per parameter, zeros (same shape) for unused ones.
    g.span = req.span;
    let mut grads = Vec::with_capacity(n);
    for i in 0..n {
        let s = Slot(i as u32);
        let grad = match ct.get(&s) {
            Some(o) => o.clone(),
            None => match g.slots[i].ty {
                Ty::Float => Operand::Const(Const::Float(0.0)),
                Ty::Int | Ty::Bool | Ty::Text => Operand::Const(Const::Nihil),
                _ => Operand::Slot(g.emit(
                    Rhs::Op(ops::Op::RetroNihil, vec![Operand::Slot(s)]),
                    g.slots[i].ty.clone(),
                )),
            },
        };
        grads.push(grad);
    }
    let tys = grads.iter().map(|o| g.ty(o)).collect();
    let tuple = g.emit(Rhs::Tuple(grads), Ty::Tuple(tys));
    let mut stmts = fwd;
    stmts.append(&mut g.rev);
    stmts.push(Stmt::Return(Some(Operand::Slot(tuple))));
    Ok((
        g.slots,
        Block {
            stmts: dead_code(stmts),
        },
    ))
}

/// Cotangent state of the reverse sweep. `runtime` holds slots whose cotangent lives in
/// one accumulator slot updated in place (needed when a region — a branch or a loop
/// pass — adds to it, since compile-time bookkeeping cannot follow run-time paths).
struct Rev {
    ct: FxHashMap<Slot, Operand>,
    active: FxHashSet<Slot>,
    runtime: FxHashSet<Slot>,
    /// For a definition (keyed by its `Rhs`'s address), a slot holding the value its
    /// destination had before it — the shape the destination's accumulator must take
    /// once this definition has consumed it (see [`previous_values`]).
    witness: FxHashMap<usize, Slot>,
}

/// Records, for every definition `d = rhs`, a slot that holds `d`'s previous value
/// when the reverse sweep reaches it. A slot assigned more than once (a `varia`
/// merged after `si`, a loop-carried value) may change shape between assignments;
/// its runtime accumulator is reset to zeros shaped like that previous value, not like
/// its final one. Copies `d = s` make `s` the witness of `d`'s new value; after any
/// other definition `d` itself is (it is not reassigned before the reverse sweep
/// reads it, unless assigned again).
fn previous_values(
    stmts: &[Stmt],
    current: &mut FxHashMap<Slot, Slot>,
    out: &mut FxHashMap<usize, Slot>,
) {
    for s in stmts {
        match s {
            Stmt::Let { dst, rhs, .. } => {
                out.insert(
                    rhs as *const Rhs as usize,
                    current.get(dst).copied().unwrap_or(*dst),
                );
                let now = match rhs {
                    Rhs::Use(Operand::Slot(src)) => current.get(src).copied().unwrap_or(*src),
                    _ => *dst,
                };
                current.insert(*dst, now);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                let mut a = current.clone();
                previous_values(&then.stmts, &mut a, out);
                let mut b = current.clone();
                previous_values(&otherwise.stmts, &mut b, out);
                // After the branches a slot's value depends on the path taken.
                for (k, v) in a.iter().chain(b.iter()) {
                    if current.get(k) != Some(v) {
                        current.insert(*k, *k);
                    }
                }
            }
            Stmt::ForRange { body, .. } => {
                let mut inner = current.clone();
                previous_values(&body.stmts, &mut inner, out);
                for (k, v) in inner.iter() {
                    if current.get(k) != Some(v) {
                        current.insert(*k, *k);
                    }
                }
            }
            _ => {}
        }
    }
}

fn reads_active(rhs: &Rhs, active: &FxHashSet<Slot>) -> bool {
    rules::operands(rhs)
        .iter()
        .any(|o| matches!(o, Operand::Slot(x) if active.contains(x)))
}

/// Whether a value of this type can carry a cotangent: integers, truth values, texts
/// and shapes (`lista<numerus>`) are data, never functions of a parameter's value.
fn carries_gradient(ty: &Ty) -> bool {
    match ty {
        Ty::Int | Ty::Bool | Ty::Text | Ty::Bytes | Ty::Nihil | Ty::Vacuum => false,
        Ty::List(t) => carries_gradient(t),
        _ => true,
    }
}

fn mark_active(
    stmts: &[Stmt],
    slots: &[SlotInfo],
    tangents: &FxHashMap<Slot, Vec<Operand>>,
    active: &mut FxHashSet<Slot>,
) {
    for s in stmts {
        match s {
            Stmt::Let { dst, rhs, .. }
                if reads_active(rhs, active)
                    && carries_gradient(&slots[dst.0 as usize].ty)
                    && !tangents.contains_key(dst) =>
            {
                active.insert(*dst);
            }
            Stmt::If {
                then, otherwise, ..
            } => {
                mark_active(&then.stmts, slots, tangents, active);
                mark_active(&otherwise.stmts, slots, tangents, active);
            }
            Stmt::ForRange { body, .. } => mark_active(&body.stmts, slots, tangents, active),
            _ => {}
        }
    }
}

/// Reverse of a statement list: `Let`s by their VJP rules (last first); `si` as a `si`
/// over the reversed branches; `itera ab` as a loop over the passes, last first, that
/// restores each pass's values from the tapes.
fn reverse_stmts(g: &mut Gen, stmts: &[Stmt], st: &mut Rev) -> Result<(), Diagnostic> {
    for s in stmts.iter().rev() {
        match s {
            Stmt::Let { dst, rhs, span } => reverse_let(g, *dst, rhs, *span, st)?,
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                make_runtime(g, st, &[then, otherwise]);
                let ct_before = st.ct.clone();
                let saved = std::mem::take(&mut g.rev);
                reverse_stmts(g, &then.stmts, st)?;
                let t = std::mem::take(&mut g.rev);
                st.ct = ct_before.clone();
                reverse_stmts(g, &otherwise.stmts, st)?;
                let e = std::mem::replace(&mut g.rev, saved);
                st.ct = ct_before;
                g.rev.push(Stmt::If {
                    cond: cond.clone(),
                    then: Block { stmts: t },
                    otherwise: Block { stmts: e },
                });
            }
            Stmt::ForRange {
                var, body, span, ..
            } => {
                let Some(pos) = g.loops.iter().position(|l| l.var == *var) else {
                    return Err(not_differentiable(*span, "a loop without tapes"));
                };
                let tapes = g.loops.remove(pos);
                make_runtime(g, st, &[body]);
                g.span = *span;
                let count = g.emit(
                    Rhs::Method(Method::Longitudo, Operand::Slot(tapes.count_tape), vec![]),
                    Ty::Int,
                );
                let k = g.slot("", Ty::Int);
                let ct_before = st.ct.clone();
                let saved = std::mem::take(&mut g.rev);
                // idx = count − 1 − k: passes in reverse order.
                let c1 = g.emit(
                    Rhs::Prim(
                        Prim::Binary(BinOp::Sub),
                        vec![Operand::Slot(count), Operand::Const(Const::Int(1))],
                    ),
                    Ty::Int,
                );
                let idx = g.emit(
                    Rhs::Prim(
                        Prim::Binary(BinOp::Sub),
                        vec![Operand::Slot(c1), Operand::Slot(k)],
                    ),
                    Ty::Int,
                );
                for &(v, tape) in &tapes.restores {
                    g.rev.push(Stmt::Let {
                        dst: v,
                        rhs: Rhs::Index(Operand::Slot(tape), Operand::Slot(idx)),
                        span: *span,
                    });
                }
                reverse_stmts(g, &body.stmts, st)?;
                let rbody = std::mem::replace(&mut g.rev, saved);
                st.ct = ct_before;
                g.rev.push(Stmt::ForRange {
                    var: k,
                    start: Operand::Const(Const::Int(0)),
                    end: Operand::Slot(count),
                    step: Operand::Const(Const::Int(1)),
                    inclusive: false,
                    body: Block { stmts: rbody },
                    span: *span,
                });
            }
            // Tape appends and anything else carry no derivative.
            _ => {}
        }
    }
    Ok(())
}

/// Gives every active slot that a region reads or that reaches it from outside an
/// accumulator slot updated in place (zeros when it has no cotangent yet).
fn make_runtime(g: &mut Gen, st: &mut Rev, blocks: &[&Block]) {
    let mut defined: FxHashSet<Slot> = FxHashSet::default();
    let mut read: Vec<Slot> = Vec::new();
    for b in blocks {
        for s in &b.stmts {
            if let Stmt::Let { dst, rhs, .. } = s {
                for o in rules::operands(rhs) {
                    if let Operand::Slot(x) = o {
                        if !defined.contains(&x) {
                            read.push(x);
                        }
                    }
                }
                defined.insert(*dst);
            }
        }
    }
    // Pinned slots (written by the end-of-region copies) also carry cotangents
    // from after the region into it.
    let mut wanted: Vec<Slot> = read;
    for b in blocks {
        for s in &b.stmts {
            if let Stmt::Let {
                dst,
                rhs: Rhs::Use(_),
                ..
            } = s
            {
                if st.ct.contains_key(dst) {
                    wanted.push(*dst);
                }
            }
        }
    }
    wanted.sort();
    wanted.dedup();
    for x in wanted {
        if !st.active.contains(&x) || st.runtime.contains(&x) {
            continue;
        }
        let ty = g.slots[x.0 as usize].ty.clone();
        let init = match st.ct.get(&x).cloned() {
            Some(acc) => Rhs::Use(acc),
            None => zero_rhs(&ty, x),
        };
        let a = g.emit(init, ty);
        st.ct.insert(x, Operand::Slot(a));
        st.runtime.insert(x);
    }
}

fn zero_rhs(ty: &Ty, like: Slot) -> Rhs {
    match ty {
        Ty::Float => Rhs::Use(Operand::Const(Const::Float(0.0))),
        _ => Rhs::Op(ops::Op::RetroNihil, vec![Operand::Slot(like)]),
    }
}

fn reverse_let(
    g: &mut Gen,
    dst: Slot,
    rhs: &Rhs,
    span: Span,
    st: &mut Rev,
) -> Result<(), Diagnostic> {
    let gd = if st.runtime.contains(&dst) {
        // Read the accumulator, then reset it: this definition consumes it.
        let Some(Operand::Slot(acc)) = st.ct.get(&dst).cloned() else {
            return Ok(());
        };
        g.span = span;
        let ty = g.slots[dst.0 as usize].ty.clone();
        let t = g.emit(Rhs::Use(Operand::Slot(acc)), ty.clone());
        g.rev.push(Stmt::Let {
            dst: acc,
            rhs: zero_rhs(
                &ty,
                st.witness
                    .get(&(rhs as *const Rhs as usize))
                    .copied()
                    .unwrap_or(dst),
            ),
            span,
        });
        Operand::Slot(t)
    } else {
        match st.ct.remove(&dst) {
            Some(gd) => gd,
            None => return Ok(()),
        }
    };
    g.span = span;
    // Parameter trees: reading a field or element routes the cotangent into the same
    // place of the container's cotangent; building a container splits it.
    match rhs {
        Rhs::Field(o, i) => {
            tree_read(g, st, o, PlaceStep::Field(*i), gd);
            return Ok(());
        }
        Rhs::Index(o, idx) => {
            tree_read(g, st, o, PlaceStep::Index(idx.clone()), gd);
            return Ok(());
        }
        Rhs::Tuple(items) | Rhs::List(items) | Rhs::Record(_, items) => {
            let by_field = matches!(rhs, Rhs::Record(..));
            for (i, it) in items.iter().enumerate() {
                let Operand::Slot(x) = it else { continue };
                if !st.active.contains(x) {
                    continue;
                }
                let part = if by_field {
                    Rhs::Field(gd.clone(), i as u32)
                } else {
                    Rhs::Index(gd.clone(), Operand::Const(Const::Int(i as i64)))
                };
                let ty = g.slots[x.0 as usize].ty.clone();
                let c = Operand::Slot(g.emit(part, ty));
                accumulate(g, st, *x, c);
            }
            return Ok(());
        }
        _ => {}
    }
    let contributions = rules::vjp(g, rhs, dst, gd, &st.active).map_err(|mut d| {
        if let Some(own) = g.origin.get(&dst) {
            d.span = *own;
        }
        d
    })?;
    for (operand, contribution) in contributions {
        if let Operand::Slot(x) = operand {
            if st.active.contains(&x) {
                accumulate(g, st, x, contribution);
            }
        }
    }
    Ok(())
}

/// Drops top-level `Let`s whose value nothing reads (the primal's own result,
/// gradients of constants). Statements inside regions are kept, and count as reads.
fn dead_code(stmts: Vec<Stmt>) -> Vec<Stmt> {
    /// Everything a region reads, and the slots its `Let`s define (kept alive too).
    fn reads_in(stmts: &[Stmt], used: &mut FxHashSet<Slot>) {
        for s in stmts {
            crate::ir::visit::stmt_operands(s, &mut |o| {
                if let Operand::Slot(x) = o {
                    used.insert(*x);
                }
            });
            lets_in(s, used);
        }
    }
    fn lets_in(s: &Stmt, used: &mut FxHashSet<Slot>) {
        let blocks: Vec<&Block> = match s {
            Stmt::Let { dst, .. } => {
                used.insert(*dst);
                return;
            }
            Stmt::If {
                then, otherwise, ..
            } => vec![then, otherwise],
            Stmt::Cond { arms, otherwise } => arms
                .iter()
                .flat_map(|a| [&a.test, &a.then])
                .chain([otherwise])
                .collect(),
            Stmt::Loop { body, .. } | Stmt::ForRange { body, .. } | Stmt::ForEach { body, .. } => {
                vec![body]
            }
            Stmt::Try { body, handler, .. } => vec![body, handler],
            _ => return,
        };
        for b in blocks {
            for st in &b.stmts {
                lets_in(st, used);
            }
        }
    }
    let mut used: FxHashSet<Slot> = FxHashSet::default();
    let mut keep = vec![true; stmts.len()];
    for (i, st) in stmts.iter().enumerate().rev() {
        match st {
            Stmt::Let { dst, rhs, .. } => {
                if used.contains(dst) {
                    for o in rules::operands(rhs) {
                        if let Operand::Slot(x) = o {
                            used.insert(x);
                        }
                    }
                } else {
                    keep[i] = false;
                }
            }
            Stmt::Return(Some(Operand::Slot(x))) => {
                used.insert(*x);
            }
            Stmt::Store { place, value, .. } => {
                // Kept when its container is read later (it is, by construction).
                if let PlaceRoot::Slot(r) = place.root {
                    if used.contains(&r) {
                        if let Operand::Slot(v) = value {
                            used.insert(*v);
                        }
                        for step in &place.path {
                            if let PlaceStep::Index(Operand::Slot(k)) = step {
                                used.insert(*k);
                            }
                        }
                    } else {
                        keep[i] = false;
                    }
                }
            }
            region @ (Stmt::If { .. }
            | Stmt::Cond { .. }
            | Stmt::ForRange { .. }
            | Stmt::MethodInPlace { .. }) => {
                reads_in(std::slice::from_ref(region), &mut used);
            }
            _ => {}
        }
    }
    stmts
        .into_iter()
        .zip(keep)
        .filter_map(|(s, k)| k.then_some(s))
        .collect()
}

/// `container.step` was read with cotangent `gd`: add `gd` into that place of the
/// container's cotangent (created as zeros of the container's structure when absent).
fn tree_read(g: &mut Gen, st: &mut Rev, container: &Operand, step: PlaceStep, gd: Operand) {
    let Operand::Slot(x) = container else { return };
    if !st.active.contains(x) {
        return;
    }
    let ty = g.slots[x.0 as usize].ty.clone();
    let z = match (st.runtime.contains(x), st.ct.get(x).cloned()) {
        (true, Some(Operand::Slot(acc))) => acc,
        // A slot of our own to mutate (cotangent operands may be shared).
        (_, Some(acc)) => g.emit(Rhs::Use(acc), ty),
        (_, None) => g.emit(Rhs::Op(ops::Op::RetroNihil, vec![container.clone()]), ty),
    };
    let read = match &step {
        PlaceStep::Field(i) => Rhs::Field(Operand::Slot(z), *i),
        PlaceStep::Index(k) => Rhs::Index(Operand::Slot(z), k.clone()),
    };
    let cur = g.emit(read, Ty::Any);
    let sum = g.emit(
        Rhs::Op(ops::Op::RetroAdde, vec![Operand::Slot(cur), gd]),
        Ty::Any,
    );
    let span = g.span;
    g.rev.push(Stmt::Store {
        place: Place {
            root: PlaceRoot::Slot(z),
            path: vec![step],
        },
        value: Operand::Slot(sum),
        span,
    });
    st.ct.insert(*x, Operand::Slot(z));
}

/// `ct[x] ← ct[x] + contribution` (the first contribution initialises it), so uses in
/// source order q, k, v sum as `(g_v + g_k) + g_q` (docs/autodiff.md). Accumulators of
/// `runtime` slots are updated in place.
fn accumulate(g: &mut Gen, st: &mut Rev, x: Slot, contribution: Operand) {
    let ty = g.slots[x.0 as usize].ty.clone();
    let add = |acc: Operand| match ty {
        Ty::Tensor { .. } => Rhs::Op(ops::Op::Addita, vec![acc, contribution.clone()]),
        Ty::Float | Ty::Int => Rhs::Prim(Prim::Binary(BinOp::Add), vec![acc, contribution.clone()]),
        _ => Rhs::Op(ops::Op::RetroAdde, vec![acc, contribution.clone()]),
    };
    match st.ct.get(&x).cloned() {
        Some(Operand::Slot(acc)) if st.runtime.contains(&x) => {
            let span = g.span;
            g.rev.push(Stmt::Let {
                dst: acc,
                rhs: add(Operand::Slot(acc)),
                span,
            });
        }
        None => {
            st.ct.insert(x, contribution);
        }
        Some(acc) => {
            let next = g.emit(add(acc), ty.clone());
            st.ct.insert(x, Operand::Slot(next));
        }
    }
}
