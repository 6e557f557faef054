//! The forward sweep: the primal's body copied into the companion with fresh slots,
//! calls inlined, every assignment in SSA form (a fresh slot per `Let`), and one
//! level of structured control flow:
//! - `si`: branches are copied; a variable assigned in a branch is *pinned* to one slot
//!   written by a copy at the end of each branch that assigns it.
//! - `itera ab`: the body is copied; every value the body defines, the loop variable and
//!   the pinned variables' values at the start of each pass are appended to per-slot
//!   lists (tapes) so the reverse loop can restore each pass.

use super::fusions::{split_of, PairTy};
use super::{not_differentiable, Gen, LoopTapes};
use crate::diag::Diagnostic;
use crate::ir::*;
use crate::source::Span;

/// Where source slots of the function being copied live in the companion.
struct Frame<'f> {
    func: &'f Function,
    map: Vec<Option<Slot>>,
}

/// Copies `f`'s body into the forward sweep (parameters bound to `args`); returns the
/// operand holding its result.
pub fn inline(
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
    let first_new = g.slots.len();
    let mut fr = Frame {
        func,
        map: vec![None; func.slots.len()],
    };
    for (i, a) in args.iter().enumerate() {
        let info = func.slots[i].clone();
        let s = g.copy_slot(info);
        g.fwd.push(Stmt::Let {
            dst: s,
            rhs: Rhs::Use(a.clone()),
            span: g.at(call_span),
        });
        fr.map[i] = Some(s);
    }
    let stmts = &func.body.stmts;
    let mut result = None;
    for (idx, s) in stmts.iter().enumerate() {
        match s {
            Stmt::Return(Some(o)) if idx + 1 == stmts.len() => result = Some(rename(g, &mut fr, o)),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => inline_if(g, &mut fr, cond, then, otherwise)?,
            // A chain is its first arm's `If` with the rest inside its `otherwise`
            // (where, being control flow nested in a `si`, it is reported).
            Stmt::Cond { arms, otherwise } => {
                let first = peel_cond(arms, otherwise);
                for st in &first.test {
                    inline_simple(g, &mut fr, st)?;
                }
                inline_if(g, &mut fr, &first.cond, &first.then, &first.otherwise)?;
            }
            Stmt::ForRange {
                var,
                start,
                end,
                step,
                inclusive,
                body,
                span,
            } => inline_for(
                g,
                &mut fr,
                *var,
                [start, end, step],
                *inclusive,
                body,
                *span,
            )?,
            other => inline_simple(g, &mut fr, other)?,
        }
    }
    g.depth -= 1;
    let result = result
        .ok_or_else(|| not_differentiable(func.span, "a function without a final `redde`"))?;
    // An inlined callee declared `→ f32` rounds its result, as its call does in the
    // primal (eval/narrow.rs rounds the stores into narrow slots). A value of the
    // inlined body that nothing else reads is itself marked narrow (no copy: the
    // companion's code is unchanged); otherwise it goes through a new narrow slot.
    if func.narrow_ret && g.depth > 0 {
        if let Operand::Slot(r) = result {
            let mut reads = 0;
            for st in &g.fwd {
                crate::ir::visit::stmt_operands(st, &mut |o| {
                    reads += usize::from(*o == Operand::Slot(r));
                });
            }
            if reads == 0 && r.0 as usize >= first_new {
                g.slots[r.0 as usize].narrow = true;
                return Ok(result);
            }
        }
        let d = g.copy_slot(crate::ir::SlotInfo {
            name: String::new(),
            ty: func.ret.clone(),
            narrow: true,
        });
        g.fwd.push(Stmt::Let {
            dst: d,
            rhs: Rhs::Use(result),
            span: g.at(call_span),
        });
        return Ok(Operand::Slot(d));
    }
    Ok(result)
}

/// A statement that may stand anywhere: only `Let`; everything else is reported.
fn inline_simple(g: &mut Gen, fr: &mut Frame, s: &Stmt) -> Result<(), Diagnostic> {
    let span = fr.func.span;
    match s {
        Stmt::Let { dst, rhs, span } => inline_let(g, fr, *dst, rhs, *span),
        Stmt::Return(_) => Err(not_differentiable(span, "an early `redde`")),
        Stmt::If { .. } | Stmt::Cond { .. } | Stmt::ForRange { .. } => Err(not_differentiable(
            span,
            "nested control flow (a `si` or `itera` inside another one)",
        )),
        Stmt::Loop { span, .. } => Err(not_differentiable(
            *span,
            "a `dum` loop (its trip count is not fixed on entry)",
        )),
        Stmt::ForEach { span, .. } => Err(not_differentiable(
            *span,
            "`itera ex`/`itera de` (use `itera ab`)",
        )),
        Stmt::Out { span, .. } => Err(not_differentiable(*span, "output (`nota`, `scribe`, …)")),
        Stmt::Store { span, .. }
        | Stmt::MethodInPlace { span, .. }
        | Stmt::CallInPlace { span, .. } => Err(not_differentiable(*span, "a mutation")),
        Stmt::SetGlobal { .. } => Err(not_differentiable(span, "a change of module state")),
        Stmt::Throw { span, .. } | Stmt::Fatal { span, .. } | Stmt::Assert { span, .. } => {
            Err(not_differentiable(*span, "`iace`, `mori` or `adfirma`"))
        }
        Stmt::Try { .. } => Err(not_differentiable(span, "`fac … cape`")),
        Stmt::Break | Stmt::Continue => Err(not_differentiable(span, "`rumpe`/`perge`")),
    }
}

fn inline_let(
    g: &mut Gen,
    fr: &mut Frame,
    dst: Slot,
    rhs: &Rhs,
    span: Span,
) -> Result<(), Diagnostic> {
    let rhs = rename_rhs(g, fr, rhs);
    // A fresh slot for every assignment (SSA): the reverse sweep reads each value as
    // it was, even when `varia` reuses the source slot.
    let info = fr.func.slots[dst.0 as usize].clone();
    let d = g.copy_slot(info);
    fr.map[dst.0 as usize] = Some(d);
    // Diagnostics below use the statement's own span; the copies get `g.at(span)`.
    let own = span;
    let span = g.at(own);
    if span != own {
        g.origin.insert(d, own);
    }
    match rhs {
        Rhs::Call(callee, args) if !g.p.func(callee).body.stmts.is_empty() => {
            let outer = g.site;
            if own.file == g.primal_file {
                g.site = Some(own);
            }
            let r = inline(g, callee, &args, own);
            g.site = outer;
            let r = r?;
            g.fwd.push(Stmt::Let {
                dst: d,
                rhs: Rhs::Use(r),
                span,
            });
        }
        Rhs::Call(..) | Rhs::CallValue(..) | Rhs::Closure(..) => {
            return Err(not_differentiable(own, "a call through a function value"));
        }
        Rhs::Host(h, _) => {
            return Err(not_differentiable(
                own,
                &format!("I/O or a host function (`hospes.{}`)", h.name()),
            ));
        }
        // A save-split (fusions.rs): the result with its residual in one pass, then the
        // pair's first part; the pair is a kept helper, never active, and the backward
        // reads its residual instead of recomputing it (same bits as the op).
        Rhs::Op(op, args) => match split_of(op) {
            None => g.fwd.push(Stmt::Let {
                dst: d,
                rhs: Rhs::Op(op, args),
                span,
            }),
            Some(split) => {
                let pair_ty = match split.pair_ty {
                    PairTy::ResultTwice => {
                        let ty = g.slots[d.0 as usize].ty.clone();
                        Ty::Tuple(vec![ty.clone(), ty])
                    }
                    PairTy::Tensors => {
                        let tensor = Ty::Tensor {
                            shape: None,
                            int: false,
                            wide: false,
                        };
                        Ty::Tuple(vec![tensor.clone(), tensor])
                    }
                };
                let p = g.slot("", pair_ty);
                g.fwd.push(Stmt::Let {
                    dst: p,
                    rhs: Rhs::Op(split.pair, args.clone()),
                    span,
                });
                g.tangents.insert(p, args.clone());
                let mut ex = args;
                ex.push(Operand::Slot(p));
                g.fwd.push(Stmt::Let {
                    dst: d,
                    rhs: Rhs::Op(split.reads, ex),
                    span,
                });
            }
        },
        rhs => g.fwd.push(Stmt::Let { dst: d, rhs, span }),
    }
    Ok(())
}

/// Source slots assigned by `Let`s in a block (regions hold only `Let`s).
fn assigned(b: &Block) -> Vec<Slot> {
    let mut v: Vec<Slot> = b
        .stmts
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { dst, .. } => Some(*dst),
            _ => None,
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Pins every variable that a region assigns and that exists before it (a `varia`
/// carried through the region) to one companion slot, starting as a copy of its
/// current value. Values first defined inside the region stay local to it.
fn pin(g: &mut Gen, fr: &mut Frame, sources: &[Slot], span: Span) -> Vec<(Slot, Slot)> {
    let mut pins = Vec::new();
    for &s in sources {
        let Some(cur) = fr.map[s.0 as usize] else {
            continue;
        };
        let info = fr.func.slots[s.0 as usize].clone();
        let p = g.copy_slot(info);
        g.fwd.push(Stmt::Let {
            dst: p,
            rhs: Rhs::Use(Operand::Slot(cur)),
            span,
        });
        pins.push((s, p));
    }
    pins
}

fn enter_region(g: &mut Gen, span: Span) -> Result<(), Diagnostic> {
    if g.in_region {
        return Err(not_differentiable(
            span,
            "nested control flow (a `si` or `itera` inside another one)",
        ));
    }
    g.in_region = true;
    Ok(())
}

/// Copies one branch's `Let`s (into a fresh statement list) and ends it with the
/// copies into the pinned slots it assigns.
fn branch(
    g: &mut Gen,
    fr: &mut Frame,
    b: &Block,
    pins: &[(Slot, Slot)],
    span: Span,
) -> Result<Vec<Stmt>, Diagnostic> {
    let saved = std::mem::take(&mut g.fwd);
    let outer = fr.map.clone();
    for &(s, p) in pins {
        fr.map[s.0 as usize] = Some(p);
    }
    for st in &b.stmts {
        inline_simple(g, fr, st)?;
    }
    let mine = assigned(b);
    for &(s, p) in pins {
        if mine.contains(&s) {
            if let Some(last) = fr.map[s.0 as usize] {
                g.fwd.push(Stmt::Let {
                    dst: p,
                    rhs: Rhs::Use(Operand::Slot(last)),
                    span,
                });
            }
        }
    }
    fr.map = outer;
    Ok(std::mem::replace(&mut g.fwd, saved))
}

fn inline_if(
    g: &mut Gen,
    fr: &mut Frame,
    cond: &Operand,
    then: &Block,
    otherwise: &Block,
) -> Result<(), Diagnostic> {
    let span = fr.func.span;
    enter_region(g, span)?;
    let span = g.at(span);
    let cond = rename(g, fr, cond);
    let mut sources = assigned(then);
    sources.extend(assigned(otherwise));
    sources.sort();
    sources.dedup();
    let pins = pin(g, fr, &sources, span);
    let t = branch(g, fr, then, &pins, span)?;
    let e = branch(g, fr, otherwise, &pins, span)?;
    for &(s, p) in &pins {
        fr.map[s.0 as usize] = Some(p);
    }
    g.fwd.push(Stmt::If {
        cond,
        then: Block { stmts: t },
        otherwise: Block { stmts: e },
    });
    g.in_region = false;
    Ok(())
}

fn new_tape(g: &mut Gen, before: &mut Vec<Stmt>, span: Span) -> Slot {
    let t = g.slot("", Ty::List(Box::new(Ty::Any)));
    before.push(Stmt::Let {
        dst: t,
        rhs: Rhs::List(vec![]),
        span,
    });
    t
}

fn append(tape: Slot, value: Slot, span: Span) -> Stmt {
    Stmt::MethodInPlace {
        dst: None,
        method: Method::Appende,
        place: Place {
            root: PlaceRoot::Slot(tape),
            path: vec![],
        },
        args: vec![Operand::Slot(value)],
        span,
    }
}

#[allow(clippy::too_many_arguments)]
fn inline_for(
    g: &mut Gen,
    fr: &mut Frame,
    var_src: Slot,
    bounds: [&Operand; 3],
    inclusive: bool,
    body: &Block,
    span: Span,
) -> Result<(), Diagnostic> {
    enter_region(g, span)?;
    let span = g.at(span);
    let [start, end, step] = bounds.map(|o| rename(g, fr, o));
    let sources = assigned(body);
    let pins = pin(g, fr, &sources, span);
    let var = g.slot(&fr.func.slots[var_src.0 as usize].name.clone(), Ty::Int);
    let mut before = Vec::new();
    let count_tape = new_tape(g, &mut before, span);
    let outer = fr.map.clone();
    for &(s, p) in &pins {
        fr.map[s.0 as usize] = Some(p);
    }
    fr.map[var_src.0 as usize] = Some(var);
    // Pass start: the loop variable and the pinned values as they enter the pass.
    let saved = std::mem::take(&mut g.fwd);
    g.fwd.push(append(count_tape, var, span));
    let mut starts = Vec::new();
    for &(_, p) in &pins {
        let t = new_tape(g, &mut before, span);
        g.fwd.push(append(t, p, span));
        starts.push((p, t));
    }
    let first = g.fwd.len();
    for st in &body.stmts {
        inline_simple(g, fr, st)?;
    }
    // Every value the pass defined, then the copies into the pinned slots.
    let defined: Vec<Slot> = g.fwd[first..]
        .iter()
        .filter_map(|s| match s {
            Stmt::Let { dst, .. } => Some(*dst),
            _ => None,
        })
        .collect();
    let mut ends = Vec::new();
    for d in defined {
        let t = new_tape(g, &mut before, span);
        g.fwd.push(append(t, d, span));
        ends.push((d, t));
    }
    for &(s, p) in &pins {
        if let Some(last) = fr.map[s.0 as usize] {
            g.fwd.push(Stmt::Let {
                dst: p,
                rhs: Rhs::Use(Operand::Slot(last)),
                span,
            });
        }
    }
    let body_stmts = std::mem::replace(&mut g.fwd, saved);
    fr.map = outer;
    for &(s, p) in &pins {
        fr.map[s.0 as usize] = Some(p);
    }
    g.fwd.append(&mut before);
    g.fwd.push(Stmt::ForRange {
        var,
        start,
        end,
        step,
        inclusive,
        body: Block { stmts: body_stmts },
        span,
    });
    // Restore order for the reverse pass: values at the end of the pass first, then
    // the pinned values at its start (they are what the body's first reads saw).
    let mut restores = ends;
    restores.push((var, count_tape));
    restores.extend(starts);
    g.loops.push(LoopTapes {
        var,
        count_tape,
        restores,
    });
    g.in_region = false;
    Ok(())
}

fn slot_for(g: &mut Gen, fr: &mut Frame, s: Slot) -> Slot {
    if let Some(x) = fr.map[s.0 as usize] {
        return x;
    }
    let info = fr.func.slots[s.0 as usize].clone();
    let x = g.copy_slot(info);
    fr.map[s.0 as usize] = Some(x);
    x
}

fn rename(g: &mut Gen, fr: &mut Frame, o: &Operand) -> Operand {
    match o {
        Operand::Slot(s) => Operand::Slot(slot_for(g, fr, *s)),
        other => other.clone(),
    }
}

fn rename_rhs(g: &mut Gen, fr: &mut Frame, rhs: &Rhs) -> Rhs {
    let mut r = |o: &Operand| rename(g, fr, o);
    match rhs {
        Rhs::Use(o) => Rhs::Use(r(o)),
        Rhs::Prim(p, a) => Rhs::Prim(*p, a.iter().map(&mut r).collect()),
        Rhs::Call(f, a) => Rhs::Call(*f, a.iter().map(&mut r).collect()),
        Rhs::CallValue(f, a) => Rhs::CallValue(r(f), a.iter().map(&mut r).collect()),
        Rhs::Host(h, a) => Rhs::Host(*h, a.iter().map(&mut r).collect()),
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
