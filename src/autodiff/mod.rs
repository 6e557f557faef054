//! The backward transform (docs/autodiff.md): for every `@ radix backward "G"` request
//! the companion `G(p…, residual, upstream)` gets a generated body — F's computation
//! inlined (callees included), then the reverse sweep built from one VJP rule per op
//! (`rules.rs`), returning `iuncta` of one gradient per parameter. Generated code is
//! ordinary IR: printed by `faber ir`, verified, and run by the evaluator.
//!
//! Supported now: straight-line code over tensors and float scalars, and calls to
//! functions with straight-line bodies (inlined, also across imports). Control flow,
//! parameter trees and calls through function values are reported as diagnostics.

pub mod check;
mod rules;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::diag::{codes, Diagnostic};
use crate::ir::*;
use crate::source::Span;

/// Fills every requested companion; returns the diagnostics for what cannot be
/// differentiated (the program is left unchanged for those).
pub fn differentiate(program: &mut Program) -> Vec<Diagnostic> {
    let mut diags = Vec::new();
    for req in program.backward.clone() {
        match build(program, &req) {
            Ok((slots, body)) => {
                let f = &mut program.functions[req.companion.0 as usize];
                f.slots = slots;
                f.body = body;
            }
            Err(d) => diags.push(d),
        }
    }
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
}

impl Gen<'_> {
    pub fn slot(&mut self, name: &str, ty: Ty) -> Slot {
        self.slots.push(SlotInfo {
            name: name.to_string(),
            ty,
        });
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
    };
    for i in 0..n {
        let info = primal.slots[i].clone();
        g.slots.push(info);
    }
    g.slot("residual", Ty::Any);
    let upstream = g.slot("upstream", primal.ret.clone());
    // Forward: F's body inlined, parameters mapped to the companion's.
    let args: Vec<Operand> = (0..n as u32).map(|i| Operand::Slot(Slot(i))).collect();
    let result = inline(&mut g, req.primal, &args, req.span)?;

    // Activity: values that depend on a parameter, and that the result depends on.
    let mut active: FxHashSet<Slot> = (0..n as u32).map(Slot).collect();
    for s in &g.fwd {
        if let Stmt::Let { dst, rhs, .. } = s {
            if rules::operands(rhs)
                .iter()
                .any(|o| matches!(o, Operand::Slot(x) if active.contains(x)))
            {
                active.insert(*dst);
            }
        }
    }
    // Reverse sweep.
    let mut ct: FxHashMap<Slot, Operand> = FxHashMap::default();
    if let Operand::Slot(r) = &result {
        if active.contains(r) {
            ct.insert(*r, Operand::Slot(upstream));
        }
    }
    let fwd = std::mem::take(&mut g.fwd);
    for s in fwd.iter().rev() {
        let Stmt::Let { dst, rhs, span } = s else {
            continue;
        };
        let Some(gd) = ct.get(dst).cloned() else {
            continue;
        };
        g.span = *span;
        // Parameter trees: reading a field or element routes the cotangent into the
        // same place of the container's cotangent; building a container splits it.
        match rhs {
            Rhs::Field(o, i) => {
                tree_read(&mut g, &mut ct, &active, o, PlaceStep::Field(*i), gd);
                continue;
            }
            Rhs::Index(o, idx) => {
                tree_read(
                    &mut g,
                    &mut ct,
                    &active,
                    o,
                    PlaceStep::Index(idx.clone()),
                    gd,
                );
                continue;
            }
            Rhs::Tuple(items) | Rhs::List(items) | Rhs::Record(_, items) => {
                let by_field = matches!(rhs, Rhs::Record(..));
                for (i, it) in items.iter().enumerate() {
                    let Operand::Slot(x) = it else { continue };
                    if !active.contains(x) {
                        continue;
                    }
                    let part = if by_field {
                        Rhs::Field(gd.clone(), i as u32)
                    } else {
                        Rhs::Index(gd.clone(), Operand::Const(Const::Int(i as i64)))
                    };
                    let ty = g.slots[x.0 as usize].ty.clone();
                    let c = Operand::Slot(g.emit(part, ty));
                    accumulate(&mut g, &mut ct, *x, c);
                }
                continue;
            }
            _ => {}
        }
        for (operand, contribution) in rules::vjp(&mut g, rhs, *dst, gd)? {
            if let Operand::Slot(x) = operand {
                if active.contains(&x) {
                    accumulate(&mut g, &mut ct, x, contribution);
                }
            }
        }
    }
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

/// Drops `Let`s whose value nothing reads (the primal's own result, gradients of
/// constants). The body is straight-line and every `Rhs` here is pure.
fn dead_code(stmts: Vec<Stmt>) -> Vec<Stmt> {
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
                        for st in &place.path {
                            if let PlaceStep::Index(Operand::Slot(k)) = st {
                                used.insert(*k);
                            }
                        }
                    } else {
                        keep[i] = false;
                    }
                }
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
fn tree_read(
    g: &mut Gen,
    ct: &mut FxHashMap<Slot, Operand>,
    active: &FxHashSet<Slot>,
    container: &Operand,
    step: PlaceStep,
    gd: Operand,
) {
    let Operand::Slot(x) = container else { return };
    if !active.contains(x) {
        return;
    }
    let ty = g.slots[x.0 as usize].ty.clone();
    // A slot of our own to mutate (cotangent operands may be shared).
    let z = match ct.get(x).cloned() {
        None => g.emit(Rhs::Op(ops::Op::RetroNihil, vec![container.clone()]), ty),
        Some(acc) => g.emit(Rhs::Use(acc), ty),
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
    ct.insert(*x, Operand::Slot(z));
}

/// `ct[x] ← ct[x] + contribution` (the first contribution initialises it), so uses in
/// source order q, k, v sum as `(g_v + g_k) + g_q` (AUTODIFF.md §1).
fn accumulate(g: &mut Gen, ct: &mut FxHashMap<Slot, Operand>, x: Slot, contribution: Operand) {
    let next = match ct.get(&x).cloned() {
        None => contribution,
        Some(acc) => {
            let ty = g.slots[x.0 as usize].ty.clone();
            let rhs = match ty {
                Ty::Tensor { .. } => Rhs::Op(ops::Op::Addita, vec![acc, contribution]),
                Ty::Float | Ty::Int => Rhs::Prim(
                    Prim::Binary(crate::syntax::ast::BinOp::Add),
                    vec![acc, contribution],
                ),
                _ => Rhs::Op(ops::Op::RetroAdde, vec![acc, contribution]),
            };
            Operand::Slot(g.emit(rhs, ty))
        }
    };
    ct.insert(x, next);
}

/// Copies `f`'s body into the forward sweep with fresh slots (parameters bound to
/// `args`), inlining its calls; returns the operand holding its result.
fn inline(
    g: &mut Gen,
    f: FuncId,
    args: &[Operand],
    call_span: Span,
) -> Result<Operand, Diagnostic> {
    g.depth += 1;
    if g.depth > 64 {
        return Err(not_differentiable(call_span, "recursive calls"));
    }
    let func = g.p.func(f);
    let mut map: Vec<Option<Slot>> = vec![None; func.slots.len()];
    for (i, a) in args.iter().enumerate() {
        let info = func.slots[i].clone();
        let s = g.slot(&info.name, info.ty);
        g.fwd.push(Stmt::Let {
            dst: s,
            rhs: Rhs::Use(a.clone()),
            span: call_span,
        });
        map[i] = Some(s);
    }
    let mut result = None;
    let stmts = &func.body.stmts;
    for (idx, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Let { dst, rhs, span } => {
                let rhs = rename_rhs(g, &mut map, func, rhs);
                // A fresh slot for every assignment (SSA): the reverse sweep reads
                // each value as it was, even when `varia` reuses the source slot.
                let info = func.slots[dst.0 as usize].clone();
                let d = g.slot(&info.name, info.ty);
                map[dst.0 as usize] = Some(d);
                match rhs {
                    Rhs::Call(callee, cargs) if !g.p.func(callee).body.stmts.is_empty() => {
                        let r = inline(g, callee, &cargs, *span)?;
                        g.fwd.push(Stmt::Let {
                            dst: d,
                            rhs: Rhs::Use(r),
                            span: *span,
                        });
                    }
                    Rhs::Call(..) | Rhs::CallValue(..) | Rhs::Closure(..) => {
                        return Err(not_differentiable(*span, "a call through a function value"));
                    }
                    rhs => g.fwd.push(Stmt::Let {
                        dst: d,
                        rhs,
                        span: *span,
                    }),
                }
            }
            Stmt::Return(Some(o)) if idx + 1 == stmts.len() => {
                result = Some(rename(g, &mut map, func, o));
            }
            Stmt::Return(_) => return Err(not_differentiable(func.span, "an early `redde`")),
            Stmt::If { .. } => {
                return Err(not_differentiable(
                    func.span,
                    "`si` (control flow is not supported yet)",
                ))
            }
            Stmt::Loop { .. } | Stmt::ForRange { .. } | Stmt::ForEach { .. } => {
                return Err(not_differentiable(func.span, "a loop (not supported yet)"))
            }
            Stmt::Out { .. } => {
                return Err(not_differentiable(
                    func.span,
                    "output (`nota`, `scribe`, …)",
                ))
            }
            Stmt::Store { span, .. }
            | Stmt::MethodInPlace { span, .. }
            | Stmt::CallInPlace { span, .. } => {
                return Err(not_differentiable(*span, "a mutation"))
            }
            Stmt::SetGlobal { .. } => {
                return Err(not_differentiable(func.span, "a change of module state"))
            }
            Stmt::Throw { span, .. } | Stmt::Fatal { span, .. } | Stmt::Assert { span, .. } => {
                return Err(not_differentiable(*span, "`iace`, `mori` or `adfirma`"))
            }
            Stmt::Try { .. } => return Err(not_differentiable(func.span, "`fac … cape`")),
            Stmt::Break | Stmt::Continue => {
                return Err(not_differentiable(func.span, "`rumpe`/`perge`"))
            }
        }
    }
    g.depth -= 1;
    result.ok_or_else(|| not_differentiable(func.span, "a function without a result"))
}

fn slot_for(g: &mut Gen, map: &mut [Option<Slot>], func: &Function, s: Slot) -> Slot {
    if let Some(x) = map[s.0 as usize] {
        return x;
    }
    let info = func.slots[s.0 as usize].clone();
    let x = g.slot(&info.name, info.ty);
    map[s.0 as usize] = Some(x);
    x
}

fn rename(g: &mut Gen, map: &mut [Option<Slot>], func: &Function, o: &Operand) -> Operand {
    match o {
        Operand::Slot(s) => Operand::Slot(slot_for(g, map, func, *s)),
        other => other.clone(),
    }
}

fn rename_rhs(g: &mut Gen, map: &mut [Option<Slot>], func: &Function, rhs: &Rhs) -> Rhs {
    let mut r = |o: &Operand| rename(g, map, func, o);
    match rhs {
        Rhs::Use(o) => Rhs::Use(r(o)),
        Rhs::Prim(p, a) => Rhs::Prim(*p, a.iter().map(&mut r).collect()),
        Rhs::Call(f, a) => Rhs::Call(*f, a.iter().map(&mut r).collect()),
        Rhs::CallValue(f, a) => Rhs::CallValue(r(f), a.iter().map(&mut r).collect()),
        Rhs::Closure(f, a) => Rhs::Closure(*f, a.iter().map(&mut r).collect()),
        Rhs::Method(m, recv, a) => Rhs::Method(*m, r(recv), a.iter().map(&mut r).collect()),
        Rhs::List(a) => Rhs::List(a.iter().map(&mut r).collect()),
        Rhs::Map(e) => Rhs::Map(e.iter().map(|(k, v)| (k.clone(), r(v))).collect()),
        Rhs::Tuple(a) => Rhs::Tuple(a.iter().map(&mut r).collect()),
        Rhs::Record(gn, a) => Rhs::Record(*gn, a.iter().map(&mut r).collect()),
        Rhs::Field(o, i) => Rhs::Field(r(o), *i),
        Rhs::Index(a, b) => Rhs::Index(r(a), r(b)),
        Rhs::Convert(o, t) => Rhs::Convert(r(o), t.clone()),
        Rhs::Coerce(o, t) => Rhs::Coerce(r(o), t.clone()),
        Rhs::Is(o, t, n) => Rhs::Is(r(o), t.clone(), *n),
        Rhs::Template(p, a) => Rhs::Template(p.clone(), a.iter().map(&mut r).collect()),
        Rhs::Op(op, a) => Rhs::Op(*op, a.iter().map(&mut r).collect()),
        Rhs::Range {
            start,
            end,
            step,
            inclusive,
        } => Rhs::Range {
            start: r(start),
            end: r(end),
            step: r(step),
            inclusive: *inclusive,
        },
    }
}
