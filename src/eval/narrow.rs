//! `f32` scalars under `--precision f32` (docs/precision.md § Scalars): a run-time
//! pass over the IR that rounds every value stored into a place declared `f32` or
//! `f16` once to the nearest f32.
//!
//! The lowering marks the places (`SlotInfo::narrow` for locals and parameters,
//! `Function::narrow_ret` for results) and the autodiff pass copies the marks into the
//! companions' forward slots. When the run's precision is F32, [`narrowed`] gives a
//! copy of the program in which
//!
//! - each statement that writes a narrow slot (`Let`, an in-place call's result) is
//!   followed by `x ← narrow x` (a loop variable or a `cape` slot, which carry no
//!   declared type today, would be rounded first thing in their block);
//! - a function rounds its narrow parameters on entry;
//! - a function declared `→ f32` rounds the value of each `redde` into a fresh slot
//!   and returns that.
//!
//! `narrow` (`UnOp::Narrow`) maps `Value::Float(x)` to `Value::Float((x as f32) as f64)`
//! and leaves every other value as it is. Expressions between stores stay f64. Under
//! F64 the pass is not run, so the program, its register code and its results are
//! those of a build without it; `faber ir` never shows the inserted statements.

use crate::ir::{Block, Operand, Prim, Program, Rhs, Slot, SlotInfo, Stmt, UnOp};
use crate::source::Span;

/// `prog` with its stores into narrow places rounded, or `None` when it has no
/// narrow place (then the program runs as it is).
pub(crate) fn narrowed(prog: &Program) -> Option<Program> {
    let any = |f: &crate::ir::Function| f.narrow_ret || f.slots.iter().any(|s| s.narrow);
    if !prog.functions.iter().any(any) {
        return None;
    }
    let mut p = prog.clone();
    for f in p.functions.iter_mut().filter(|f| any(f)) {
        let narrow: Vec<bool> = f.slots.iter().map(|s| s.narrow).collect();
        let ret = f.narrow_ret.then(|| {
            f.slots.push(SlotInfo {
                name: String::new(),
                ty: f.ret.clone(),
                narrow: false,
            });
            Slot(f.slots.len() as u32 - 1)
        });
        let cx = Cx { narrow, ret };
        let mut stmts: Vec<Stmt> = (0..f.params)
            .map(Slot)
            .filter(|&s| cx.is_narrow(s))
            .map(|s| round(s, f.span))
            .collect();
        let mut body = std::mem::take(&mut f.body);
        cx.block(&mut body);
        stmts.append(&mut body.stmts);
        f.body = Block { stmts };
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

struct Cx {
    narrow: Vec<bool>,
    /// The slot a `→ f32` function's rounded result goes through.
    ret: Option<Slot>,
}

impl Cx {
    fn is_narrow(&self, s: Slot) -> bool {
        self.narrow.get(s.0 as usize).copied().unwrap_or(false)
    }

    /// Rounds `s` first thing in `b`, when `s` is narrow.
    fn at_start(&self, s: Option<Slot>, b: &mut Block, span: Span) {
        if let Some(s) = s.filter(|&s| self.is_narrow(s)) {
            b.stmts.insert(0, round(s, span));
        }
    }

    fn block(&self, b: &mut Block) {
        let mut out = Vec::with_capacity(b.stmts.len());
        for mut s in std::mem::take(&mut b.stmts) {
            let written = match &mut s {
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
