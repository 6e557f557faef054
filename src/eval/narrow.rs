//! `f32` scalars under `--precision f32` (docs/precision.md § Scalars): a run-time
//! pass over the IR that rounds every value stored into a place declared `f32` or
//! `f16` once to the nearest f32.
//!
//! The lowering marks the places (`SlotInfo::narrow` for locals and parameters,
//! `Function::narrow_ret` for results, `Field::narrow` for genus fields) and the autodiff pass copies the marks into the
//! companions' forward slots. When the run's precision is F32, [`narrowed`] gives a
//! copy of the program in which
//!
//! - each statement that writes a narrow slot (`Let`, an in-place call's result) is
//!   followed by `x ← narrow x` (a loop variable or a `cape` slot, which carry no
//!   declared type today, would be rounded first thing in their block);
//! - a function rounds its narrow parameters on entry;
//! - a function declared `→ f32` rounds the value of each `redde` into a fresh slot
//!   and returns that;
//! - a record construction (`Rhs::Record`, defaults included: the lowering fills them
//!   in as operands) rounds each operand of a field declared `f32`/`f16`
//!   (`Field::narrow`) into a fresh slot first, and a field store (`Stmt::Store`
//!   whose place ends in such a field, `x.f ← v`, `a.b.f ← v`) rounds its value into
//!   a fresh slot first. The field is found from the static types along the place
//!   (the root slot's or global's type, then the fields' and elements' types), as
//!   the lowering found its position; a place whose type is not known there
//!   (`Ty::Any`) is not rounded. A companion's stores are not rounded: they are its
//!   backward part's, which put f64 cotangents into records (autodiff rejects a
//!   mutation in the primal), while its forward part's constructions are rounded as
//!   the primal's are.
//!
//! `narrow` (`UnOp::Narrow`) maps `Value::Float(x)` to `Value::Float((x as f32) as f64)`
//! and leaves every other value as it is. Expressions between stores stay f64. Under
//! F64 the pass is not run, so the program, its register code and its results are
//! those of a build without it; `faber ir` never shows the inserted statements.

use crate::ir::{
    Block, Genus, Global, Operand, Place, PlaceRoot, PlaceStep, Prim, Program, Rhs, Slot, SlotInfo,
    Stmt, Ty, UnOp,
};
use crate::source::Span;

/// `prog` with its stores into narrow places rounded, or `None` when it has no
/// narrow place (then the program runs as it is).
pub(crate) fn narrowed(prog: &Program) -> Option<Program> {
    let fields = prog
        .genera
        .iter()
        .any(|g| g.fields.iter().any(|f| f.narrow));
    let any = |f: &crate::ir::Function| f.narrow_ret || f.slots.iter().any(|s| s.narrow);
    if !fields && !prog.functions.iter().any(any) {
        return None;
    }
    let mut p = prog.clone();
    let companions: Vec<usize> = p.backward.iter().map(|b| b.companion.0 as usize).collect();
    for (id, f) in p.functions.iter_mut().enumerate() {
        if !fields && !any(f) {
            continue;
        }
        let narrow: Vec<bool> = f.slots.iter().map(|s| s.narrow).collect();
        let ret = f.narrow_ret.then(|| {
            f.slots.push(SlotInfo {
                name: String::new(),
                ty: f.ret.clone(),
                narrow: false,
            });
            Slot(f.slots.len() as u32 - 1)
        });
        let mut cx = Cx {
            narrow,
            ret,
            genera: &prog.genera,
            globals: &prog.globals,
            slots: std::mem::take(&mut f.slots),
            stores: !companions.contains(&id),
        };
        let mut stmts: Vec<Stmt> = (0..f.params)
            .map(Slot)
            .filter(|&s| cx.is_narrow(s))
            .map(|s| round(s, f.span))
            .collect();
        let mut body = std::mem::take(&mut f.body);
        cx.block(&mut body);
        stmts.append(&mut body.stmts);
        f.body = Block { stmts };
        f.slots = cx.slots;
    }
    Some(p)
}

/// `s ← narrow s`.
fn round(s: Slot, span: Span) -> Stmt {
    Stmt::Let {
        dst: s,
        rhs: Rhs::Prim(Prim::Unary(UnOp::Narrow), vec![Operand::Slot(s)]),
        span,
    }
}

struct Cx<'p> {
    narrow: Vec<bool>,
    /// The slot a `→ f32` function's rounded result goes through.
    ret: Option<Slot>,
    genera: &'p [Genus],
    /// The globals, whose static types are the roots of places.
    globals: &'p [Global],
    /// The function's slots, to which the roundings of field values add temporaries.
    slots: Vec<SlotInfo>,
    /// Round the values of field stores. Off in a companion: its forward part has no
    /// `Store` (autodiff rejects mutation), and its backward part's stores put f64
    /// cotangents into records shaped like the primal's (`retro_nihil`), which stay f64.
    stores: bool,
}

impl Cx<'_> {
    fn is_narrow(&self, s: Slot) -> bool {
        self.narrow.get(s.0 as usize).copied().unwrap_or(false)
    }

    /// Rounds `s` first thing in `b`, when `s` is narrow.
    fn at_start(&self, s: Option<Slot>, b: &mut Block, span: Span) {
        if let Some(s) = s.filter(|&s| self.is_narrow(s)) {
            b.stmts.insert(0, round(s, span));
        }
    }

    /// Whether field `i` of genus `g` is declared `f32`/`f16`.
    fn narrow_field(&self, g: crate::ir::GenusId, i: usize) -> bool {
        self.genera
            .get(g.0 as usize)
            .and_then(|g| g.fields.get(i))
            .is_some_and(|f| f.narrow)
    }

    /// Whether `place` ends in a field declared `f32`/`f16`, following the static
    /// types from its root (a record type may be `nihil`-able on the way).
    fn narrow_place(&self, place: &Place) -> bool {
        let mut ty = match place.root {
            PlaceRoot::Slot(s) => self.slots.get(s.0 as usize).map(|s| &s.ty),
            PlaceRoot::Global(g) => self.globals.get(g.0 as usize).map(|g| &g.ty),
        };
        let mut narrow = false;
        for step in &place.path {
            let t = ty.map(record_of);
            (ty, narrow) = match (step, t) {
                (PlaceStep::Field(i), Some(Ty::Record(g))) => {
                    let field = self
                        .genera
                        .get(g.0 as usize)
                        .and_then(|g| g.fields.get(*i as usize));
                    (field.map(|f| &f.ty), field.is_some_and(|f| f.narrow))
                }
                (PlaceStep::Index(_), Some(Ty::List(e))) => (Some(&**e), false),
                (PlaceStep::Index(_), Some(Ty::Map(_, v))) => (Some(&**v), false),
                _ => (None, false),
            };
        }
        narrow
    }

    /// `o`, rounded into a fresh slot by a statement pushed onto `out`.
    fn rounded(&mut self, o: &mut Operand, span: Span, out: &mut Vec<Stmt>) {
        self.slots.push(SlotInfo {
            name: String::new(),
            ty: Ty::Float,
            narrow: false,
        });
        let t = Slot(self.slots.len() as u32 - 1);
        let value = std::mem::replace(o, Operand::Slot(t));
        out.push(Stmt::Let {
            dst: t,
            rhs: Rhs::Prim(Prim::Unary(UnOp::Narrow), vec![value]),
            span,
        });
    }

    fn block(&mut self, b: &mut Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            let written = match &mut s {
                Stmt::Let {
                    dst,
                    rhs: Rhs::Record(g, ops),
                    span,
                } => {
                    for (i, o) in ops.iter_mut().enumerate() {
                        if self.narrow_field(*g, i) {
                            self.rounded(o, *span, &mut out);
                        }
                    }
                    Some((*dst, *span))
                }
                Stmt::Store { place, value, span } => {
                    if self.stores && self.narrow_place(place) {
                        self.rounded(value, *span, &mut out);
                    }
                    None
                }
                Stmt::Let { dst, span, .. } => Some((*dst, *span)),
                Stmt::MethodInPlace { dst, span, .. } | Stmt::CallInPlace { dst, span, .. } => {
                    dst.map(|d| (d, *span))
                }
                Stmt::If {
                    then, otherwise, ..
                } => {
                    self.block(then);
                    self.block(otherwise);
                    None
                }
                Stmt::Cond { arms, otherwise } => {
                    for arm in arms {
                        self.block(&mut arm.test);
                        self.block(&mut arm.then);
                    }
                    self.block(otherwise);
                    None
                }
                Stmt::Loop { body, .. } | Stmt::ForRange { body, .. } => {
                    self.block(body);
                    None
                }
                Stmt::ForEach {
                    var, body, span, ..
                } => {
                    self.block(body);
                    self.at_start(Some(*var), body, *span);
                    None
                }
                Stmt::Try {
                    body,
                    catch_slot,
                    handler,
                } => {
                    self.block(body);
                    self.block(handler);
                    self.at_start(*catch_slot, handler, Span::default());
                    None
                }
                Stmt::Return(Some(o)) => {
                    if let Some(r) = self.ret {
                        out.push(Stmt::Let {
                            dst: r,
                            rhs: Rhs::Prim(Prim::Unary(UnOp::Narrow), vec![o.clone()]),
                            span: Span::default(),
                        });
                        *o = Operand::Slot(r);
                    }
                    None
                }
                _ => None,
            };
            out.push(s);
            if let Some((d, span)) = written.filter(|(d, _)| self.is_narrow(*d)) {
                out.push(round(d, span));
            }
        }
        b.stmts = out;
    }
}

/// `t` without `nihil` (`T?` is a union of `T` and `nihil`).
fn record_of(t: &Ty) -> &Ty {
    match t {
        Ty::Union(ts) => {
            let mut rest = ts.iter().filter(|t| **t != Ty::Nihil);
            match (rest.next(), rest.next()) {
                (Some(t), None) => t,
                _ => t,
            }
        }
        _ => t,
    }
}
