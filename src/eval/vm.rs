//! The dispatch loop over the register code of `bytecode.rs` (made by `codegen/`).
//!
//! Direct calls between compiled functions do not recurse on the native stack: a
//! call pushes a [`Frame`] onto `Machine::calls` (callee and call-site span for the
//! depth limit and error traces, plus the caller's function, resume pc, base and
//! result slot), writes the arguments straight into the callee's frame right above
//! the caller's on the one value stack, and switches `code`/`pc`/`base`; a return
//! pops it. Statements run through the tree walker re-enter here through
//! `Machine::invoke`, one `run` per entry; on an error `run` discards the frames it
//! pushed and the caller of `invoke` truncates the stack.

use std::rc::Rc;

use super::bytecode::{Code, Ins, Opnd, NO_DST, NO_LOOP};
use super::machine::{Flow, Frame, Machine, Res, Unwind};
use super::ops;
use super::value::Value;
use super::MAX_DEPTH;
use crate::diag::codes;
use crate::ir::BinOp;
use crate::ir::{FuncId, Stmt};
use crate::source::Span;

/// Writes `v` into `slot`, skipping drop glue when the old value is a scalar.
#[inline(always)]
pub(super) fn put(slot: &mut Value, v: Value) {
    match slot {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Nihil | Value::Vacuum => {
            // SAFETY: the old value owns no heap data, so overwriting it leaks nothing.
            unsafe { std::ptr::write(slot, v) }
        }
        _ => *slot = v,
    }
}

/// Clones a value with scalars copied inline.
#[inline(always)]
fn dup(v: &Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(*i),
        Value::Bool(b) => Value::Bool(*b),
        Value::Float(f) => Value::Float(*f),
        _ => v.clone(),
    }
}

#[inline(always)]
fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::Nihil | Value::Vacuum
    )
}

/// Shrinks the stack to `len`, dropping only values that own heap data.
#[inline(always)]
pub(super) fn truncate(stack: &mut Vec<Value>, len: usize) {
    let n = stack.len();
    if len >= n {
        return;
    }
    // SAFETY: elements `len..n` are initialised; the length is set first so that a
    // panicking drop cannot lead to a double drop.
    unsafe {
        stack.set_len(len);
        let mut p = stack.as_mut_ptr().add(len);
        let end = stack.as_mut_ptr().add(n);
        while p < end {
            if !is_scalar(&*p) {
                std::ptr::drop_in_place(p);
            }
            p = p.add(1);
        }
    }
}

#[inline(always)]
fn cmp_test(mask: u8, x: i64, y: i64) -> bool {
    (mask >> ((x > y) as u8 + (x >= y) as u8)) & 1 != 0
}

#[inline(always)]
fn range_go(i: i64, e: i64, st: i64, incl: bool) -> bool {
    match (st > 0, incl) {
        (true, false) => i < e,
        (true, true) => i <= e,
        (false, false) => i > e,
        (false, true) => i >= e,
    }
}

impl<'p> Machine<'p, '_> {
    /// Runs function `fid`, whose frame starts at `self.base` and is already sized.
    pub(super) fn run(&mut self, fid: usize) -> Res<Value> {
        let codes = Rc::clone(&self.codes);
        let entry = self.calls.len();
        let r = self.run_loop(&codes, fid, entry);
        if r.is_err() {
            self.calls.truncate(entry);
        }
        r
    }

    #[inline(never)]
    fn bin_values(&self, op: BinOp, x: &Value, y: &Value, span: Span) -> Res<Value> {
        match (x, y) {
            (Value::Int(a), Value::Int(b)) => {
                if let Some(v) = ops::int_fast(op, *a, *b) {
                    return Ok(v);
                }
            }
            (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
                let a = x.as_f64().unwrap_or_default();
                let b = y.as_f64().unwrap_or_default();
                if let Some(v) = ops::float_fast(op, a, b) {
                    if self.check_finite {
                        return self.finite_or_stop(op.glyph(), v, span);
                    }
                    return Ok(v);
                }
            }
            _ => {}
        }
        let v = ops::binary(op, x, y).map_err(|f| self.fault_at(f, span))?;
        if self.check_finite {
            return self.finite_or_stop(op.glyph(), v, span);
        }
        Ok(v)
    }

    #[cold]
    #[inline(never)]
    fn depth_error(&self, func: u32, span: Span) -> Box<Unwind> {
        let name = &self.prog.functions[func as usize].name;
        self.error(
            codes::RUN_RECURSION,
            format!("calls nested deeper than {MAX_DEPTH} (in `{name}`)"),
            span,
        )
    }

    #[cold]
    #[inline(never)]
    fn not_int(&self, v: &Value, what: &str, span: Span) -> Box<Unwind> {
        self.error(
            codes::RUN_TYPE,
            format!("{what} must be numerus, found {}", v.type_name()),
            span,
        )
    }

    #[inline(never)]
    fn for_prep(&mut self, code: &Code<'p>, base: usize, pc: usize) -> Res<bool> {
        let Ins::ForPrep {
            var, h, at, incl, ..
        } = code.ins[pc]
        else {
            unreachable!()
        };
        let span = code.spans[pc];
        let mut b = [0i64; 3];
        for (k, what) in ["a range start", "a range end", "a range step"]
            .into_iter()
            .enumerate()
        {
            let v = match code.args[at as usize + k] {
                Opnd::S(s) => &self.stack[base + s as usize],
                Opnd::K(c) => &code.consts[c as usize],
                Opnd::G(g) => &self.globals[g as usize],
            };
            match v {
                Value::Int(i) => b[k] = *i,
                other => return Err(self.not_int(other, what, span)),
            }
        }
        let [s, e, st] = b;
        if st == 0 {
            return Err(self.error(codes::RUN_ZERO_STEP, "range step is zero", span));
        }
        if !range_go(s, e, st, incl) {
            return Ok(false);
        }
        let h = base + h as usize;
        put(&mut self.stack[h], Value::Int(s));
        put(&mut self.stack[h + 1], Value::Int(e));
        put(&mut self.stack[h + 2], Value::Int(st));
        put(&mut self.stack[base + var as usize], Value::Int(s));
        Ok(true)
    }

    /// `slot[key] ← val` when the fast path does not apply.
    #[inline(never)]
    fn store_slow(&mut self, stmt: &'p Stmt, v: Value, span: Span) -> Res<()> {
        let Stmt::Store { place, .. } = stmt else {
            unreachable!()
        };
        self.store(place, v).map_err(|f| self.fault_at(f, span))
    }

    fn run_loop(&mut self, codes: &[Code<'p>], fid: usize, entry: usize) -> Res<Value> {
        let mut cur = fid;
        let mut code = &codes[cur];
        let mut base = self.base;
        let mut pc = 0usize;

        // SAFETY (slot accesses): `compile` sizes every frame to cover each slot its
        // instructions name, and the frame `stack[base..base + nslots]` exists for as
        // long as the function runs (callees only push and truncate above it).
        macro_rules! slot {
            ($s:expr) => {
                *unsafe { self.stack.get_unchecked(base + $s as usize) }
            };
        }
        macro_rules! slot_mut {
            ($s:expr) => {
                *unsafe { self.stack.get_unchecked_mut(base + $s as usize) }
            };
        }
        macro_rules! op {
            ($o:expr) => {
                match $o {
                    Opnd::S(s) => unsafe { self.stack.get_unchecked(base + s as usize) },
                    // SAFETY: `compile` only names constants it added to the pool.
                    Opnd::K(c) => unsafe { code.consts.get_unchecked(c as usize) },
                    Opnd::G(g) => &self.globals[g as usize],
                }
            };
        }
        macro_rules! set {
            ($s:expr, $v:expr) => {{
                let v = $v;
                put(
                    unsafe { self.stack.get_unchecked_mut(base + $s as usize) },
                    v,
                )
            }};
        }
        macro_rules! ret {
            ($v:expr) => {{
                let v = $v;
                if self.calls.len() <= entry {
                    return Ok(v);
                }
                let Some(fr) = self.calls.pop() else {
                    return Ok(v);
                };
                truncate(&mut self.stack, base);
                base = fr.ret_base;
                self.base = base;
                cur = fr.ret_func as usize;
                // SAFETY: frames only record functions that were running.
                code = unsafe { codes.get_unchecked(cur) };
                pc = fr.ret_pc as usize;
                set!(fr.dst, v);
                continue;
            }};
        }
        macro_rules! arith {
            ($dst:expr, $a:expr, $b:expr, $bv:expr, $checked:ident, $op:expr) => {{
                let r = match (&slot!($a), $b) {
                    (Value::Int(x), Some(y)) => x.$checked(y).map(Value::Int),
                    _ => None,
                };
                let v = match r {
                    Some(v) => v,
                    None => self.bin_values($op, &slot!($a), &$bv, code.spans[pc])?,
                };
                set!($dst, v);
            }};
        }

        loop {
            // SAFETY: every function ends in `RetVacuum` and jumps land inside it.
            match *unsafe { code.ins.get_unchecked(pc) } {
                Ins::Copy { dst, src } => set!(dst, dup(&slot!(src))),
                Ins::Load { dst, src } => set!(dst, dup(op!(src))),
                Ins::AddSS { dst, a, b } => {
                    let y = match slot!(b) {
                        Value::Int(y) => Some(y),
                        _ => None,
                    };
                    arith!(dst, a, y, slot!(b), checked_add, BinOp::Add)
                }
                Ins::SubSS { dst, a, b } => {
                    let y = match slot!(b) {
                        Value::Int(y) => Some(y),
                        _ => None,
                    };
                    arith!(dst, a, y, slot!(b), checked_sub, BinOp::Sub)
                }
                Ins::MulSS { dst, a, b } => {
                    let y = match slot!(b) {
                        Value::Int(y) => Some(y),
                        _ => None,
                    };
                    arith!(dst, a, y, slot!(b), checked_mul, BinOp::Mul)
                }
                Ins::AddSI { dst, a, k } => {
                    arith!(dst, a, Some(k), Value::Int(k), checked_add, BinOp::Add)
                }
                Ins::SubSI { dst, a, k } => {
                    arith!(dst, a, Some(k), Value::Int(k), checked_sub, BinOp::Sub)
                }
                Ins::MulSI { dst, a, k } => {
                    arith!(dst, a, Some(k), Value::Int(k), checked_mul, BinOp::Mul)
                }
                Ins::CmpSS {
                    op,
                    mask,
                    dst,
                    a,
                    b,
                } => {
                    let v = match (&slot!(a), &slot!(b)) {
                        (Value::Int(x), Value::Int(y)) => Value::Bool(cmp_test(mask, *x, *y)),
                        (x, y) => self.bin_values(op, x, y, code.spans[pc])?,
                    };
                    set!(dst, v);
                }
                Ins::CmpSI {
                    op,
                    mask,
                    dst,
                    a,
                    k,
                } => {
                    let v = match &slot!(a) {
                        Value::Int(x) => Value::Bool(cmp_test(mask, *x, k)),
                        x => self.bin_values(op, x, &Value::Int(k), code.spans[pc])?,
                    };
                    set!(dst, v);
                }
                Ins::CmpSSJ {
                    op,
                    mask,
                    dst,
                    a,
                    b,
                    to,
                } => {
                    let c = match (&slot!(a), &slot!(b)) {
                        (Value::Int(x), Value::Int(y)) => cmp_test(mask, *x, *y),
                        (x, y) => match self.bin_values(op, x, y, code.spans[pc])? {
                            Value::Bool(c) => c,
                            other => {
                                let e = self.bad_cond_value(&other);
                                if dst != NO_DST {
                                    set!(dst, other);
                                }
                                return Err(e);
                            }
                        },
                    };
                    if dst != NO_DST {
                        set!(dst, Value::Bool(c));
                    }
                    if !c {
                        pc = to as usize;
                        continue;
                    }
                }
                Ins::CmpSIJ {
                    op,
                    mask,
                    dst,
                    a,
                    k,
                    to,
                } => {
                    let c = match &slot!(a) {
                        Value::Int(x) => cmp_test(mask, *x, k),
                        x => match self.bin_values(op, x, &Value::Int(k), code.spans[pc])? {
                            Value::Bool(c) => c,
                            other => {
                                let e = self.bad_cond_value(&other);
                                if dst != NO_DST {
                                    set!(dst, other);
                                }
                                return Err(e);
                            }
                        },
                    };
                    if dst != NO_DST {
                        set!(dst, Value::Bool(c));
                    }
                    if !c {
                        pc = to as usize;
                        continue;
                    }
                }
                Ins::Bin { op, dst, a, b } => {
                    let (x, y) = (op!(a), op!(b));
                    let fast = match (x, y) {
                        (Value::Int(x), Value::Int(y)) => ops::int_fast(op, *x, *y),
                        _ => None,
                    };
                    let v = match fast {
                        Some(v) => v,
                        None => self.bin_values(op, x, y, code.spans[pc])?,
                    };
                    set!(dst, v);
                }
                Ins::Not { dst, a } => {
                    let v = match &slot!(a) {
                        Value::Bool(b) => Value::Bool(!b),
                        x => ops::unary(crate::ir::UnOp::Not, x)
                            .map_err(|f| self.fault_at(f, code.spans[pc]))?,
                    };
                    set!(dst, v);
                }
                Ins::Narrow { dst, a } => {
                    let v = match &slot!(a) {
                        Value::Float(x) => Value::Float(*x as f32 as f64),
                        x => x.clone(),
                    };
                    set!(dst, v);
                }
                Ins::Index { dst, a, i } => {
                    let (xs, k) = (&slot!(a), op!(i));
                    let v = match (xs, k) {
                        (Value::List(items) | Value::Tuple(items), Value::Int(n))
                            if (*n as u64) < items.len() as u64 =>
                        {
                            // SAFETY: `n` was checked against the length just above.
                            dup(unsafe { items.get_unchecked(*n as usize) })
                        }
                        _ => ops::index(xs, k).map_err(|f| self.fault_at(f, code.spans[pc]))?,
                    };
                    set!(dst, v);
                }
                Ins::Rhs { dst, rhs } => {
                    let v = match rhs {
                        crate::ir::Rhs::Op(op, args) => self.eval_op(*op, args, code.spans[pc])?,
                        _ => self.eval_rhs(rhs, code.spans[pc])?,
                    };
                    set!(dst, v);
                }
                Ins::Call { dst, func, at, n } => {
                    // SAFETY: `compile` emits calls only to existing functions.
                    let callee = unsafe { codes.get_unchecked(func as usize) };
                    // SAFETY: `spans` is parallel to `ins`.
                    let span = *unsafe { code.spans.get_unchecked(pc) };
                    if self.calls.len() > MAX_DEPTH {
                        return Err(self.depth_error(func, span));
                    }
                    self.tick(span)?;
                    // The callee's frame goes right above the caller's: arguments
                    // first, the rest `Vacuum`.
                    let nb = self.stack.len();
                    let ns = callee.nslots as usize;
                    self.stack.reserve(ns);
                    let mut k = 0;
                    while k < n as usize {
                        // SAFETY: `compile` put the call's `n` operands in `args`.
                        let v = dup(op!(*unsafe { code.args.get_unchecked(at as usize + k) }));
                        // SAFETY: capacity for `ns >= n` values was reserved above.
                        unsafe { std::ptr::write(self.stack.as_mut_ptr().add(nb + k), v) };
                        k += 1;
                    }
                    // SAFETY: as above; `n..ns` are written before the length covers them.
                    unsafe {
                        let mut p = self.stack.as_mut_ptr().add(nb + n as usize);
                        let end = self.stack.as_mut_ptr().add(nb + ns);
                        while p < end {
                            std::ptr::write(p, Value::Vacuum);
                            p = p.add(1);
                        }
                        self.stack.set_len(nb + ns);
                    }
                    if self.capture.is_some() {
                        self.capture_call(FuncId(func), nb, n as usize, span)?;
                    } else if let Some(r) = super::offload::try_call(
                        self.prog,
                        FuncId(func),
                        &self.stack[nb..nb + n as usize],
                    ) {
                        // `faber run --backend xla`: the call ran on a device
                        // (src/eval/offload.rs); the callee's frame is dropped unused.
                        self.stack.truncate(nb);
                        let v = r.map_err(|(code, msg)| self.error(code, msg, span))?;
                        set!(dst, v);
                        pc += 1;
                        continue;
                    }
                    self.calls.push(Frame {
                        func: FuncId(func),
                        span,
                        ret_func: cur as u32,
                        ret_pc: pc as u32 + 1,
                        ret_base: base,
                        dst,
                    });
                    base = nb;
                    self.base = nb;
                    cur = func as usize;
                    code = callee;
                    pc = 0;
                    continue;
                }
                Ins::Jump { to } => {
                    if (to as usize) <= pc {
                        // A back edge: one loop iteration.
                        self.tick(code.spans[pc])?;
                    }
                    pc = to as usize;
                    continue;
                }
                Ins::JumpIfNot { cond, to } => {
                    let c = match slot!(cond) {
                        Value::Bool(c) => c,
                        _ => {
                            return Err(
                                self.bad_cond(&crate::ir::Operand::Slot(crate::ir::Slot(cond)))
                            )
                        }
                    };
                    if !c {
                        pc = to as usize;
                        continue;
                    }
                }
                Ins::JumpIfNotOp { cond, to } => {
                    let c = match op!(cond) {
                        Value::Bool(c) => *c,
                        other => return Err(self.bad_cond_value(other)),
                    };
                    if !c {
                        pc = to as usize;
                        continue;
                    }
                }
                Ins::ForPrep { exit, .. } => {
                    if !self.for_prep(code, base, pc)? {
                        pc = exit as usize;
                        continue;
                    }
                    // The first iteration (later ones tick at ForNext).
                    self.tick(code.spans[pc])?;
                }
                Ins::ForNext { var, h, incl, body } => {
                    if let (Value::Int(i), Value::Int(e), Value::Int(st)) =
                        (&slot!(h), &slot!(h + 1), &slot!(h + 2))
                    {
                        if let Some(n) = i.checked_add(*st) {
                            if range_go(n, *e, *st, incl) {
                                self.tick(code.spans[pc])?;
                                set!(h, Value::Int(n));
                                set!(var, Value::Int(n));
                                pc = body as usize;
                                continue;
                            }
                        }
                    }
                }
                Ins::Store {
                    root,
                    key,
                    val,
                    stmt,
                } => {
                    let v = dup(op!(val));
                    let n = match op!(key) {
                        Value::Int(n) => *n as u64,
                        _ => u64::MAX,
                    };
                    match &mut slot_mut!(root) {
                        Value::List(items) if n < items.len() as u64 => {
                            // SAFETY: `n` was checked against the length just above.
                            put(
                                unsafe { Rc::make_mut(items).get_unchecked_mut(n as usize) },
                                v,
                            )
                        }
                        _ => self.store_slow(code.stmts[stmt as usize], v, code.spans[pc])?,
                    }
                }
                Ins::Append {
                    dst,
                    list,
                    val,
                    stmt,
                } => {
                    if matches!(&slot!(list), Value::List(items) if items.len() < self.list_limit) {
                        let v = dup(op!(val));
                        if let Value::List(items) = &mut slot_mut!(list) {
                            Rc::make_mut(items).push(v);
                        }
                        if dst != NO_DST {
                            set!(dst, Value::Vacuum);
                        }
                    } else {
                        self.exec_stmt(code.stmts[stmt as usize])?;
                    }
                }
                Ins::Ret { src } => {
                    if let (Opnd::S(s), true) = (src, self.calls.len() > entry) {
                        // Returning to a compiled caller: move the result out of
                        // the callee's frame, which ends here.
                        ret!(std::mem::take(&mut slot_mut!(s)))
                    }
                    ret!(dup(op!(src)))
                }
                Ins::RetVacuum => ret!(Value::Vacuum),
                Ins::Break { t } => {
                    pc = code.targets[t as usize].0 as usize;
                    continue;
                }
                Ins::Continue { t } => {
                    pc = code.targets[t as usize].1 as usize;
                    continue;
                }
                Ins::Stmt { stmt, t } => match self.exec_stmt(stmt)? {
                    Flow::Normal => {}
                    Flow::Break if t != NO_LOOP => {
                        pc = code.targets[t as usize].0 as usize;
                        continue;
                    }
                    Flow::Continue if t != NO_LOOP => {
                        pc = code.targets[t as usize].1 as usize;
                        continue;
                    }
                    Flow::Return => ret!(std::mem::take(&mut self.ret)),
                    Flow::Break | Flow::Continue => ret!(Value::Vacuum),
                },
            }
            pc += 1;
        }
    }
}
