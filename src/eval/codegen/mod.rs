//! The code generator: a one-time translation of each IR [`Function`] into the
//! flat register code of `bytecode.rs` ([`Code`]), run by `vm.rs`. (Not to be
//! confused with `faber::compile`, source → IR: this is the evaluator's IR →
//! register-code step.)
//!
//! - Slots keep their IR numbering; `ForRange` gets three hidden slots after the
//!   function's own (counter, end, step), so a frame is still one stretch of the
//!   value stack. A function made only of register instructions has its slots
//!   packed by liveness instead (`liveness::compact`), so its frames are smaller.
//! - Hot statements get specialised instructions: Int arithmetic and comparisons
//!   on slot/slot and slot/constant operands, a comparison fused with the `If` that
//!   tests it, direct calls, counted loops, list reads and stores, `appende`.
//!   Everything else runs through the tree walker one statement at a time
//!   ([`Ins::Stmt`], [`Ins::Rhs`]), so every behaviour stays defined in one place.
//! - Constants are built once per function (texts are shared `Rc`s).
//! - `Break`/`Continue` (and the flow of a tree-walked statement) jump through the
//!   per-function `targets` table: entry `t` is (break target, continue target).

use std::rc::Rc;

use super::bytecode::{Code, Ins, Opnd, NO_DST, NO_LOOP};
use super::value::Value;
use crate::ir::{BinOp, UnOp};
use crate::ir::{
    Block, Const, Function, Method, Operand, PlaceRoot, PlaceStep, Prim, Program, Rhs, Stmt,
};
use crate::source::Span;

mod liveness;

use liveness::{compact, ins_slots};

#[cfg(test)]
mod cond_tests;

/// Every function of `prog`, translated once per run.
pub(super) fn emit_program(prog: &Program) -> Rc<[Code<'_>]> {
    prog.functions.iter().map(|f| emit(prog, f)).collect()
}

fn emit<'p>(prog: &'p Program, f: &'p Function) -> Code<'p> {
    let mut c = Emitter {
        prog,
        code: Code {
            ins: Vec::new(),
            spans: Vec::new(),
            consts: Vec::new(),
            args: Vec::new(),
            targets: Vec::new(),
            stmts: Vec::new(),
            nslots: (f.slots.len() as u32).max(f.params),
        },
        cur_loop: NO_LOOP,
    };
    c.block(&f.body);
    c.emit(Ins::RetVacuum, Span::default());
    compact(&mut c.code, f.params);
    // The VM indexes slots without bounds checks: make the frame cover every slot
    // an instruction names.
    let mut top = c.code.nslots;
    let mut see = |s: u32| top = top.max(s + 1);
    for o in &c.code.args {
        if let Opnd::S(s) = o {
            see(*s);
        }
    }
    for i in &c.code.ins {
        for s in ins_slots(i) {
            see(s);
        }
    }
    c.code.nslots = top;
    c.code
}

struct Emitter<'p> {
    prog: &'p Program,
    code: Code<'p>,
    /// The innermost enclosing loop's `targets` index.
    cur_loop: u32,
}

fn cmp_mask(op: BinOp) -> Option<u8> {
    Some(match op {
        BinOp::Lt => 0b001,
        BinOp::Le => 0b011,
        BinOp::Gt => 0b100,
        BinOp::Ge => 0b110,
        BinOp::Eq | BinOp::NumEq => 0b010,
        BinOp::Ne | BinOp::NumNe => 0b101,
        _ => return None,
    })
}

impl<'p> Emitter<'p> {
    fn pc(&self) -> u32 {
        self.code.ins.len() as u32
    }

    fn emit(&mut self, i: Ins<'p>, span: Span) -> usize {
        self.code.ins.push(i);
        self.code.spans.push(span);
        self.code.ins.len() - 1
    }

    /// Points the jump at `at` to `to`.
    fn patch(&mut self, at: usize, target: u32) {
        match &mut self.code.ins[at] {
            Ins::Jump { to }
            | Ins::JumpIfNot { to, .. }
            | Ins::JumpIfNotOp { to, .. }
            | Ins::CmpSSJ { to, .. }
            | Ins::CmpSIJ { to, .. } => *to = target,
            Ins::ForPrep { exit, .. } => *exit = target,
            _ => unreachable!("patching a non-jump"),
        }
    }

    fn opnd(&mut self, o: &Operand) -> Opnd {
        match o {
            Operand::Slot(s) => Opnd::S(s.0),
            Operand::Global(g) => Opnd::G(g.0),
            Operand::Const(k) => {
                let v = match k {
                    Const::Int(i) => Value::Int(*i),
                    Const::Float(f) => Value::Float(*f),
                    Const::Bool(b) => Value::Bool(*b),
                    Const::Text(t) => Value::text(t.as_str()),
                    Const::Bytes(b) => Value::Bytes(Rc::new(b.clone())),
                    Const::Nihil => Value::Nihil,
                    Const::Vacuum => Value::Vacuum,
                };
                self.code.consts.push(v);
                Opnd::K(self.code.consts.len() as u32 - 1)
            }
        }
    }

    fn opnds(&mut self, os: &[Operand]) -> u32 {
        let at = self.code.args.len() as u32;
        for o in os {
            let x = self.opnd(o);
            self.code.args.push(x);
        }
        at
    }

    fn new_target(&mut self) -> u32 {
        self.code.targets.push((0, 0));
        self.code.targets.len() as u32 - 1
    }

    fn block(&mut self, b: &'p Block) {
        self.stmts(&b.stmts);
    }

    /// Compiles statements; returns the comparison the last one emitted, when it was
    /// a `Let` (a following branch on its result fuses with it).
    fn stmts(&mut self, stmts: &'p [Stmt]) -> Option<(usize, u32)> {
        // The comparison emitted by the previous statement, when it was a `Let`.
        let mut prev_cmp: Option<(usize, u32)> = None;
        for s in stmts {
            match s {
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } if prev_cmp.is_some() => {
                    let jf = self.cond_jump(cond, prev_cmp);
                    self.branches(jf, then, otherwise);
                }
                Stmt::Cond { arms, otherwise } => self.cond_chain(arms, otherwise, prev_cmp),
                _ => self.stmt(s),
            }
            prev_cmp = None;
            if let Stmt::Let { dst, .. } = s {
                let last = self.code.ins.len() - 1;
                if matches!(self.code.ins[last], Ins::CmpSS { .. } | Ins::CmpSI { .. }) {
                    prev_cmp = Some((last, dst.0));
                }
            }
        }
        prev_cmp
    }

    /// A flat `Cond` compiled to the same code as the nested `If`s it means: arm by
    /// arm its test, a conditional jump to the next arm (fused with the test's last
    /// comparison where it can be), the arm's body and a jump to the end.
    fn cond_chain(
        &mut self,
        arms: &'p [crate::ir::CondArm],
        otherwise: &'p Block,
        mut prev_cmp: Option<(usize, u32)>,
    ) {
        let mut to_end = Vec::new();
        for (i, arm) in arms.iter().enumerate() {
            if !arm.test.stmts.is_empty() {
                prev_cmp = self.stmts(&arm.test.stmts);
            }
            let jf = self.cond_jump(&arm.cond, prev_cmp);
            self.block(&arm.then);
            if i + 1 == arms.len() && otherwise.stmts.is_empty() {
                let end = self.pc();
                self.patch(jf, end);
                break;
            }
            to_end.push(self.emit(Ins::Jump { to: 0 }, Span::default()));
            let next = self.pc();
            self.patch(jf, next);
            prev_cmp = None;
        }
        self.block(otherwise);
        let end = self.pc();
        for j in to_end {
            self.patch(j, end);
        }
    }

    /// The conditional jump (target patched later) of a branch on `cond`: the
    /// comparison just emitted (`prev_cmp`) turned into a compare-and-jump when it
    /// computed `cond`, else a jump-if-not.
    fn cond_jump(&mut self, cond: &Operand, prev_cmp: Option<(usize, u32)>) -> usize {
        if let Some((at, dst)) = prev_cmp {
            if *cond == Operand::Slot(crate::ir::Slot(dst)) && at + 1 == self.code.ins.len() {
                self.fuse_cmp(at);
                return at;
            }
        }
        match cond {
            Operand::Slot(c) => self.emit(Ins::JumpIfNot { cond: c.0, to: 0 }, Span::default()),
            _ => {
                let cond = self.opnd(cond);
                self.emit(Ins::JumpIfNotOp { cond, to: 0 }, Span::default())
            }
        }
    }

    /// Turns the comparison at `at` into its compare-and-jump form.
    fn fuse_cmp(&mut self, at: usize) {
        self.code.ins[at] = match self.code.ins[at] {
            Ins::CmpSS {
                op,
                mask,
                dst,
                a,
                b,
            } => Ins::CmpSSJ {
                op,
                mask,
                dst,
                a,
                b,
                to: 0,
            },
            Ins::CmpSI {
                op,
                mask,
                dst,
                a,
                k,
            } => Ins::CmpSIJ {
                op,
                mask,
                dst,
                a,
                k,
                to: 0,
            },
            _ => unreachable!(),
        };
    }

    /// The two arms of an `If` whose conditional jump (to the else arm) is at `jf`.
    fn branches(&mut self, jf: usize, then: &'p Block, otherwise: &'p Block) {
        self.block(then);
        if otherwise.stmts.is_empty() {
            let end = self.pc();
            self.patch(jf, end);
        } else {
            let j = self.emit(Ins::Jump { to: 0 }, Span::default());
            let els = self.pc();
            self.patch(jf, els);
            self.block(otherwise);
            let end = self.pc();
            self.patch(j, end);
        }
    }

    fn generic(&mut self, s: &'p Stmt) {
        let t = self.cur_loop;
        self.emit(Ins::Stmt { stmt: s, t }, Span::default());
    }

    fn stmt(&mut self, s: &'p Stmt) {
        match s {
            Stmt::Let { dst, rhs, span } => self.let_(dst.0, rhs, *span),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let jf = self.cond_jump(cond, None);
                self.branches(jf, then, otherwise);
            }
            Stmt::Cond { arms, otherwise } => self.cond_chain(arms, otherwise, None),
            Stmt::Loop { body, span } => {
                let t = self.new_target();
                let outer = std::mem::replace(&mut self.cur_loop, t);
                let start = self.pc();
                self.block(body);
                // The back edge carries the loop's span (a `--max-steps` stop points at it).
                self.emit(Ins::Jump { to: start }, *span);
                self.cur_loop = outer;
                let end = self.pc();
                self.code.targets[t as usize] = (end, start);
            }
            Stmt::ForRange {
                var,
                start,
                end,
                step,
                inclusive,
                body,
                span,
            } => {
                let at = self.opnds(&[start.clone(), end.clone(), step.clone()]);
                let h = self.code.nslots;
                self.code.nslots += 3;
                let incl = *inclusive;
                let var = var.0;
                let prep = self.emit(
                    Ins::ForPrep {
                        var,
                        h,
                        at,
                        incl,
                        exit: 0,
                    },
                    *span,
                );
                let t = self.new_target();
                let outer = std::mem::replace(&mut self.cur_loop, t);
                let body_pc = self.pc();
                self.block(body);
                self.cur_loop = outer;
                let next = self.emit(
                    Ins::ForNext {
                        var,
                        h,
                        incl,
                        body: body_pc,
                    },
                    *span,
                ) as u32;
                let exit = self.pc();
                self.patch(prep, exit);
                self.code.targets[t as usize] = (exit, next);
            }
            Stmt::Return(op) => {
                match op {
                    Some(o) => {
                        let src = self.opnd(o);
                        self.emit(Ins::Ret { src }, Span::default())
                    }
                    None => self.emit(Ins::RetVacuum, Span::default()),
                };
            }
            Stmt::Break if self.cur_loop != NO_LOOP => {
                let t = self.cur_loop;
                self.emit(Ins::Break { t }, Span::default());
            }
            Stmt::Continue if self.cur_loop != NO_LOOP => {
                let t = self.cur_loop;
                self.emit(Ins::Continue { t }, Span::default());
            }
            Stmt::Store { place, value, span } => match (&place.root, &place.path[..]) {
                (PlaceRoot::Slot(root), [PlaceStep::Index(k)]) => {
                    let key = self.opnd(k);
                    let val = self.opnd(value);
                    self.code.stmts.push(s);
                    let stmt = self.code.stmts.len() as u32 - 1;
                    self.emit(
                        Ins::Store {
                            root: root.0,
                            key,
                            val,
                            stmt,
                        },
                        *span,
                    );
                }
                _ => self.generic(s),
            },
            Stmt::MethodInPlace {
                dst,
                method: Method::Appende,
                place,
                args,
                span,
            } => match (&place.root, &place.path[..], &args[..]) {
                (PlaceRoot::Slot(list), [], [a]) => {
                    let val = self.opnd(a);
                    self.code.stmts.push(s);
                    let stmt = self.code.stmts.len() as u32 - 1;
                    let dst = dst.map_or(NO_DST, |d| d.0);
                    self.emit(
                        Ins::Append {
                            dst,
                            list: list.0,
                            val,
                            stmt,
                        },
                        *span,
                    );
                }
                _ => self.generic(s),
            },
            _ => self.generic(s),
        }
    }

    fn let_(&mut self, dst: u32, rhs: &'p Rhs, span: Span) {
        let ins = match rhs {
            Rhs::Use(Operand::Slot(s)) => Ins::Copy { dst, src: s.0 },
            Rhs::Use(o) => Ins::Load {
                dst,
                src: self.opnd(o),
            },
            Rhs::Prim(Prim::Binary(op), args) if args.len() == 2 => {
                self.binary(dst, *op, &args[0], &args[1])
            }
            Rhs::Prim(Prim::Unary(UnOp::Narrow), args) if args.len() == 1 => match args[0] {
                Operand::Slot(a) => Ins::Narrow { dst, a: a.0 },
                _ => Ins::Rhs { dst, rhs },
            },
            Rhs::Prim(Prim::Unary(UnOp::Not), args) if args.len() == 1 => match args[0] {
                Operand::Slot(a) => Ins::Not { dst, a: a.0 },
                _ => Ins::Rhs { dst, rhs },
            },
            Rhs::Call(fid, args)
                if self
                    .prog
                    .functions
                    .get(fid.0 as usize)
                    .is_some_and(|f| f.params as usize == args.len()) =>
            {
                let at = self.opnds(args);
                Ins::Call {
                    dst,
                    func: fid.0,
                    at,
                    n: args.len() as u32,
                }
            }
            Rhs::Index(Operand::Slot(a), i) => Ins::Index {
                dst,
                a: a.0,
                i: self.opnd(i),
            },
            _ => Ins::Rhs { dst, rhs },
        };
        self.emit(ins, span);
    }

    fn binary(&mut self, dst: u32, op: BinOp, a: &Operand, b: &Operand) -> Ins<'p> {
        if let Operand::Slot(a) = a {
            let a = a.0;
            match b {
                Operand::Slot(b) => {
                    let b = b.0;
                    match op {
                        BinOp::Add => return Ins::AddSS { dst, a, b },
                        BinOp::Sub => return Ins::SubSS { dst, a, b },
                        BinOp::Mul => return Ins::MulSS { dst, a, b },
                        _ => {}
                    }
                    if let Some(mask) = cmp_mask(op) {
                        return Ins::CmpSS {
                            op,
                            mask,
                            dst,
                            a,
                            b,
                        };
                    }
                }
                Operand::Const(Const::Int(k)) => {
                    let k = *k;
                    match op {
                        BinOp::Add => return Ins::AddSI { dst, a, k },
                        BinOp::Sub => return Ins::SubSI { dst, a, k },
                        BinOp::Mul => return Ins::MulSI { dst, a, k },
                        _ => {}
                    }
                    if let Some(mask) = cmp_mask(op) {
                        return Ins::CmpSI {
                            op,
                            mask,
                            dst,
                            a,
                            k,
                        };
                    }
                }
                _ => {}
            }
        }
        Ins::Bin {
            op,
            dst,
            a: self.opnd(a),
            b: self.opnd(b),
        }
    }
}
