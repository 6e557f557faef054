//! The tree walker: runs the IR statements and right-hand sides that the code
//! generator leaves as IR (`Ins::Stmt`, `Ins::Rhs`, see `codegen/`), and the calls
//! made from them (`invoke` enters a function's register code in `vm.rs`). Every
//! behaviour of a statement is defined here once; the dispatch loop only
//! specialises the hot cases.

use std::rc::Rc;

use super::convert;
use super::display::{display, display_into};
use super::host;
use super::machine::{const_value, Flow, Frame, Machine, Res, Unwind};
use super::methods;
use super::ops;
use super::place::range_list;
use super::tensors;
use super::value::{Closure, Key, Map, Record, Value};
use super::{fault, FResult, MAX_DEPTH};
use crate::diag::codes;
use crate::ir::{BinOp, OutKind};
use crate::ir::{Block, FatalKind, FuncId, Operand, Prim, Rhs, Stmt, TemplatePiece};
use crate::source::Span;

impl<'p, 'io> Machine<'p, 'io> {
    // ---- calls --------------------------------------------------------------

    /// Runs `fid` whose `nargs` arguments are already at `stack[base..]`. The caller
    /// truncates the stack to `base` afterwards.
    pub(super) fn invoke(
        &mut self,
        fid: FuncId,
        base: usize,
        nargs: usize,
        span: Span,
    ) -> Res<Value> {
        self.tick(span)?;
        let prog = self.prog;
        let f = &prog.functions[fid.0 as usize];
        if nargs != f.params as usize {
            return Err(self.error(
                codes::RUN_TYPE,
                format!("`{}` takes {} argument(s), got {nargs}", f.name, f.params),
                span,
            ));
        }
        if self.calls.len() > MAX_DEPTH {
            return Err(self.error(
                codes::RUN_RECURSION,
                format!("calls nested deeper than {MAX_DEPTH} (in `{}`)", f.name),
                span,
            ));
        }
        if self.capture.is_some() {
            self.capture_call(fid, base, nargs, span)?;
        } else if let Some(r) = super::offload::try_call(prog, fid, &self.stack[base..base + nargs])
        {
            // `faber run --backend xla`: the call ran on a device (src/eval/offload.rs).
            return r.map_err(|(code, msg)| self.error(code, msg, span));
        }
        let nslots = (self.codes[fid.0 as usize].nslots as usize).max(nargs);
        let extra = (base + nslots).saturating_sub(self.stack.len());
        self.stack.reserve(extra);
        for _ in 0..extra {
            self.stack.push(Value::Vacuum);
        }
        let saved = std::mem::replace(&mut self.base, base);
        self.calls.push(Frame::outer(fid, span));
        let r = self.run(fid.0 as usize);
        self.calls.pop();
        self.base = saved;
        r
    }

    fn call_with(
        &mut self,
        fid: FuncId,
        captures: &[Value],
        args: &[Operand],
        span: Span,
    ) -> Res<Value> {
        let base = self.stack.len();
        self.stack.extend_from_slice(captures);
        for a in args {
            let v = self.val(a);
            self.stack.push(v);
        }
        let r = self.invoke(fid, base, captures.len() + args.len(), span);
        self.stack.truncate(base);
        r
    }

    // ---- statements ---------------------------------------------------------

    /// Runs a block. The most frequent statements (`Let` with an Int fast path,
    /// `If`, `Return`) are handled here without a further call.
    pub(super) fn exec_block(&mut self, b: &'p Block) -> Res<Flow> {
        for s in &b.stmts {
            match s {
                Stmt::Let { dst, rhs, span } => {
                    if let Rhs::Prim(Prim::Binary(op), args) = rhs {
                        if let [a, b] = &args[..] {
                            if let (Some(x), Some(y)) = (self.int_op(a), self.int_op(b)) {
                                if let Some(v) = ops::int_fast(*op, x, y) {
                                    self.set(*dst, v);
                                    continue;
                                }
                            }
                        }
                    }
                    let v = self.eval_rhs(rhs, *span)?;
                    self.set(*dst, v);
                }
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let c = self.cond_value(cond)?;
                    match self.exec_block(if c { then } else { otherwise })? {
                        Flow::Normal => {}
                        f => return Ok(f),
                    }
                }
                Stmt::Return(op) => {
                    self.ret = match op {
                        Some(o) => self.val(o),
                        None => Value::Vacuum,
                    };
                    return Ok(Flow::Return);
                }
                _ => match self.exec_stmt(s)? {
                    Flow::Normal => {}
                    f => return Ok(f),
                },
            }
        }
        Ok(Flow::Normal)
    }

    /// The value of an `If` condition, which must be a `bivalens`.
    #[inline]
    fn cond_value(&self, cond: &Operand) -> Res<bool> {
        let b = match cond {
            Operand::Slot(x) => match self.stack[self.base + x.0 as usize] {
                Value::Bool(b) => Some(b),
                _ => None,
            },
            _ => match &*self.get(cond) {
                Value::Bool(b) => Some(*b),
                _ => None,
            },
        };
        b.ok_or_else(|| self.bad_cond(cond))
    }

    pub(super) fn exec_stmt(&mut self, s: &'p Stmt) -> Res<Flow> {
        match s {
            Stmt::Let { dst, rhs, span } => {
                let v = self.eval_rhs(rhs, *span)?;
                self.set(*dst, v);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.cond_value(cond)?;
                return self.exec_block(if c { then } else { otherwise });
            }
            Stmt::Cond { arms, otherwise } => {
                for arm in arms {
                    match self.exec_block(&arm.test)? {
                        Flow::Normal => {}
                        f => return Ok(f),
                    }
                    if self.cond_value(&arm.cond)? {
                        return self.exec_block(&arm.then);
                    }
                }
                return self.exec_block(otherwise);
            }
            Stmt::Loop { body, span } => loop {
                loop_body!(self, body, *span);
            },
            Stmt::Return(op) => {
                self.ret = match op {
                    Some(o) => self.val(o),
                    None => Value::Vacuum,
                };
                return Ok(Flow::Return);
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Store { place, value, span } => {
                let v = self.val(value);
                if let Err(f) = self.store(place, v) {
                    return Err(self.fault_at(f, *span));
                }
            }
            Stmt::ForRange {
                var,
                start,
                end,
                step,
                inclusive,
                body,
                span,
            } => return self.for_range(*var, start, end, step, *inclusive, body, *span),
            _ => return self.exec_other(s),
        }
        Ok(Flow::Normal)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn bad_cond(&self, cond: &Operand) -> Box<Unwind> {
        self.bad_cond_value(&self.get(cond))
    }

    #[cold]
    #[inline(never)]
    pub(super) fn bad_cond_value(&self, v: &Value) -> Box<Unwind> {
        self.error(
            codes::RUN_TYPE,
            format!("a condition must be bivalens, found {}", v.type_name()),
            Span::default(),
        )
    }

    /// Less frequent statements, kept out of `exec_stmt` so that its frame (which
    /// sits on the native stack once per nested call) stays small.
    #[inline(never)]
    fn exec_other(&mut self, s: &'p Stmt) -> Res<Flow> {
        match s {
            Stmt::SetGlobal { dst, value } => {
                let v = self.val(value);
                self.globals[dst.0 as usize] = v;
            }
            Stmt::MethodInPlace {
                dst,
                method,
                place,
                args,
                span,
            } => {
                let mut buf: [Value; 3] = Default::default();
                if args.len() > buf.len() {
                    return Err(self.error(
                        codes::RUN_TYPE,
                        format!("`{}` takes at most 3 arguments", method.name()),
                        *span,
                    ));
                }
                for (b, a) in buf.iter_mut().zip(args) {
                    *b = self.val(a);
                }
                let r = match self.place_mut(place, false) {
                    Ok(t) => methods::call_mut(*method, t, &mut buf[..args.len()]),
                    Err(f) => Err(f),
                };
                let v = r.map_err(|f| self.fault_at(f, *span))?;
                if let Some(d) = dst {
                    self.set(*d, v);
                }
            }
            Stmt::CallInPlace {
                dst,
                func,
                place,
                args,
                span,
            } => {
                let base = self.stack.len();
                self.stack.push(Value::Vacuum);
                for a in args {
                    let v = self.val(a);
                    self.stack.push(v);
                }
                let recv = match self.place_mut(place, false) {
                    Ok(t) => std::mem::take(t),
                    Err(f) => {
                        self.stack.truncate(base);
                        return Err(self.fault_at(f, *span));
                    }
                };
                self.stack[base] = recv;
                let r = self.invoke(*func, base, args.len() + 1, *span);
                let back = std::mem::take(&mut self.stack[base]);
                self.stack.truncate(base);
                match self.place_mut(place, false) {
                    Ok(t) => *t = back,
                    Err(f) => {
                        r?;
                        return Err(self.fault_at(f, *span));
                    }
                }
                let v = r?;
                if let Some(d) = dst {
                    self.set(*d, v);
                }
            }
            Stmt::ForEach {
                var,
                kind,
                source,
                body,
                span,
            } => return self.for_each(*var, *kind, source, body, *span),
            Stmt::Throw { value, span } => {
                let v = self.val(value);
                return Err(self.throw(v, *span, false));
            }
            Stmt::Try {
                body,
                catch_slot,
                handler,
            } => {
                let top = self.stack.len();
                let depth = self.calls.len();
                match self.exec_block(body) {
                    Ok(f) => return Ok(f),
                    Err(u) => match *u {
                        Unwind::Throw { value, .. } => {
                            debug_assert_eq!(self.stack.len(), top);
                            debug_assert_eq!(self.calls.len(), depth);
                            if let Some(c) = catch_slot {
                                self.set(*c, value);
                            }
                            return self.exec_block(handler);
                        }
                        other => return Err(Box::new(other)),
                    },
                }
            }
            Stmt::Fatal {
                kind,
                message,
                span,
            } => {
                let msg = display(&self.get(message), self.prog);
                let code = match kind {
                    FatalKind::Mori => codes::RUN_MORI,
                    FatalKind::Adfirma => codes::RUN_ASSERT,
                    FatalKind::NonNull => codes::RUN_NIHIL_ACCESS,
                };
                return Err(self.error(code, msg, *span));
            }
            Stmt::Assert {
                cond,
                message,
                source,
                span,
            } => {
                if !self.bool_of(cond, "an `adfirma` condition", *span)? {
                    let msg = match message {
                        Some(m) => display(&self.get(m), self.prog),
                        None => format!("adfirma failed: {source}"),
                    };
                    return Err(self.error(codes::RUN_ASSERT, msg, *span));
                }
            }
            Stmt::Out { kind, args, span } => {
                let mut s = String::new();
                for (i, a) in args.iter().enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    display_into(&mut s, &self.get(a), self.prog);
                }
                if let Err(f) = super::display::within_text_limit(&s) {
                    return Err(self.fault_at(f, *span));
                }
                s.push('\n');
                match kind {
                    OutKind::Nota | OutKind::Scribe => self.io.stdout(&s),
                    OutKind::Vide | OutKind::Mone => self.io.stderr(&s),
                }
            }
            // Handled in `exec_stmt`.
            Stmt::Let { .. }
            | Stmt::If { .. }
            | Stmt::Cond { .. }
            | Stmt::Loop { .. }
            | Stmt::Return(_)
            | Stmt::Break
            | Stmt::Continue
            | Stmt::Store { .. }
            | Stmt::ForRange { .. } => return self.exec_stmt(s),
        }
        Ok(Flow::Normal)
    }

    // ---- right-hand sides ---------------------------------------------------

    #[inline]
    pub(super) fn eval_rhs(&mut self, rhs: &'p Rhs, span: Span) -> Res<Value> {
        match rhs {
            Rhs::Use(o) => Ok(self.val(o)),
            Rhs::Prim(Prim::Binary(op), args) if args.len() == 2 => {
                if let (Some(x), Some(y)) = (self.int_op(&args[0]), self.int_op(&args[1])) {
                    if let Some(v) = ops::int_fast(*op, x, y) {
                        return Ok(v);
                    }
                } else if let (Some(x), Some(y)) =
                    (self.float_op(&args[0]), self.float_op(&args[1]))
                {
                    if let Some(v) = ops::float_fast(*op, x, y) {
                        if self.check_finite {
                            return self.finite_or_stop(op.glyph(), v, span);
                        }
                        return Ok(v);
                    }
                }
                self.binary_slow(*op, &args[0], &args[1], span)
            }
            Rhs::Op(op, args) => self.eval_op(*op, args, span),
            Rhs::Call(fid, args) => {
                let base = self.stack.len();
                for a in args {
                    let v = self.val(a);
                    self.stack.push(v);
                }
                let r = self.invoke(*fid, base, args.len(), span);
                self.stack.truncate(base);
                r
            }
            _ => self.eval_other(rhs, span),
        }
    }

    #[inline(never)]
    fn binary_slow(&self, op: BinOp, a: &Operand, b: &Operand, span: Span) -> Res<Value> {
        let a = self.get(a);
        let b = self.get(b);
        let v = ops::binary(op, &a, &b).map_err(|f| self.fault_at(f, span))?;
        if self.check_finite {
            return self.finite_or_stop(op.glyph(), v, span);
        }
        Ok(v)
    }

    /// A tensor op (`Rhs::Op`): operands by reference (no clone, no reference count
    /// touched). One or two slot/global operands here; the rest (constants, more
    /// operands) through [`Machine::op_with_consts`].
    #[inline(never)]
    pub(super) fn eval_op(
        &self,
        op: crate::ir::ops::Op,
        args: &[Operand],
        span: Span,
    ) -> Res<Value> {
        let r = match args {
            [x] => match self.operand_ref(x) {
                Some(x) => tensors::apply(op, &[x]),
                None => return self.op_with_consts(op, args, span),
            },
            [x, y] => match (self.operand_ref(x), self.operand_ref(y)) {
                (Some(x), Some(y)) => tensors::apply(op, &[x, y]),
                _ => return self.op_with_consts(op, args, span),
            },
            _ => return self.op_with_consts(op, args, span),
        };
        let v = r.map_err(|f| self.fault_at(f, span))?;
        if self.check_finite {
            return self.finite_or_stop(op.name(), v, span);
        }
        Ok(v)
    }

    /// A slot or global operand by reference; `None` for a constant.
    #[inline(always)]
    fn operand_ref(&self, a: &Operand) -> Option<&Value> {
        match a {
            Operand::Slot(s) => Some(&self.stack[self.base + s.0 as usize]),
            Operand::Global(g) => Some(&self.globals[g.0 as usize]),
            Operand::Const(_) => None,
        }
    }

    /// A tensor op with constant operands or more than two operands (at most
    /// `MAX_ARITY`): the constants are materialised on the native stack, the rest read
    /// by reference.
    #[inline(never)]
    fn op_with_consts(&self, op: crate::ir::ops::Op, args: &[Operand], span: Span) -> Res<Value> {
        const MAX_OPERANDS: usize = crate::ir::ops::MAX_ARITY;
        if args.len() > MAX_OPERANDS {
            return Err(self.error(
                codes::RUN_TYPE,
                format!("`{}` with {} operands", op.name(), args.len()),
                span,
            ));
        }
        let mut consts: [Value; MAX_OPERANDS] = Default::default();
        for (k, a) in consts.iter_mut().zip(args) {
            if let Operand::Const(c) = a {
                *k = const_value(c);
            }
        }
        let mut refs: [&Value; MAX_OPERANDS] = [&consts[0]; MAX_OPERANDS];
        for ((r, a), k) in refs.iter_mut().zip(args).zip(&consts) {
            *r = match a {
                Operand::Slot(s) => &self.stack[self.base + s.0 as usize],
                Operand::Global(g) => &self.globals[g.0 as usize],
                Operand::Const(_) => k,
            };
        }
        let v = tensors::apply(op, &refs[..args.len()]).map_err(|f| self.fault_at(f, span))?;
        if self.check_finite {
            return self.finite_or_stop(op.name(), v, span);
        }
        Ok(v)
    }

    #[inline(never)]
    fn eval_other(&mut self, rhs: &'p Rhs, span: Span) -> Res<Value> {
        let prog = self.prog;
        let r: FResult<Value> = match rhs {
            Rhs::Prim(Prim::Unary(op), args) if args.len() == 1 => {
                ops::unary(*op, &self.get(&args[0]))
            }
            Rhs::Prim(p, args) => fault(
                codes::RUN_TYPE,
                format!("{p:?} applied to {} operand(s)", args.len()),
            ),
            Rhs::CallValue(f, args) => {
                let fv = self.val(f);
                return match &fv {
                    Value::Func(c) => self.call_with(c.func, &c.captures, args, span),
                    other => Err(self.error(
                        codes::RUN_TYPE,
                        format!("a {} is not callable", other.type_name()),
                        span,
                    )),
                };
            }
            Rhs::Closure(fid, caps) => Ok(Value::Func(Rc::new(Closure {
                func: *fid,
                captures: caps.iter().map(|c| self.val(c)).collect(),
            }))),
            Rhs::Method(m, recv, args) => {
                let mut buf: [Value; 3] = Default::default();
                if args.len() > buf.len() {
                    return Err(self.error(
                        codes::RUN_TYPE,
                        format!("`{}` takes at most 3 arguments", m.name()),
                        span,
                    ));
                }
                for (b, a) in buf.iter_mut().zip(args) {
                    *b = self.val(a);
                }
                let r = methods::call(*m, &self.get(recv), &mut buf[..args.len()]);
                if self.check_finite {
                    let v = r.map_err(|f| self.fault_at(f, span))?;
                    return self.finite_or_stop(m.name(), v, span);
                }
                r
            }
            Rhs::Host(h, args) => {
                let vals: Vec<Value> = args.iter().map(|a| self.val(a)).collect();
                host::call(*h, &vals, prog, &mut *self.io)
            }
            Rhs::Op(op, args) => return self.eval_op(*op, args, span),
            Rhs::List(items) => Ok(Value::list(items.iter().map(|o| self.val(o)).collect())),
            Rhs::Tuple(items) => Ok(Value::Tuple(Rc::new(
                items.iter().map(|o| self.val(o)).collect(),
            ))),
            Rhs::Map(entries) => {
                let mut m = Map::default();
                for (k, o) in entries {
                    m.insert(Key::Text(Rc::new(k.clone())), self.val(o));
                }
                Ok(Value::Map(Rc::new(m)))
            }
            Rhs::Record(genus, fields) => Ok(Value::Record(Rc::new(Record {
                genus: *genus,
                fields: fields.iter().map(|o| self.val(o)).collect(),
            }))),
            Rhs::Field(o, i) => ops::field(&self.get(o), *i),
            Rhs::Index(a, i) => ops::index(&self.get(a), &self.get(i)),
            Rhs::Convert(o, ty) => convert::convert(&self.get(o), ty, prog),
            // A value where a `valor` is declared is boxed (it may fail: a NaN).
            Rhs::Coerce(o, crate::ir::Ty::Json { .. }) => {
                convert::convert(&self.get(o), &crate::ir::Ty::Json { doc: false }, prog)
            }
            Rhs::Coerce(o, ty) => Ok(convert::coerce(self.val(o), ty)),
            Rhs::Is(o, test, negated) => {
                Ok(Value::Bool(convert::is(&self.get(o), test) != *negated))
            }
            Rhs::Template(pieces, args) => {
                let mut s = String::new();
                for p in pieces {
                    match p {
                        TemplatePiece::Text(t) => s.push_str(t),
                        TemplatePiece::Arg(i) => match args.get(*i as usize) {
                            Some(a) => display_into(&mut s, &self.get(a), prog),
                            None => {
                                return Err(self.error(
                                    codes::RUN_TYPE,
                                    format!("template hole {i} has no argument"),
                                    span,
                                ))
                            }
                        },
                    }
                    if let Err(f) = super::display::within_text_limit(&s) {
                        return Err(self.fault_at(f, span));
                    }
                }
                Ok(Value::text(s))
            }
            Rhs::Range {
                start,
                end,
                step,
                inclusive,
            } => {
                let s = self.int_of(start, "a range start", span)?;
                let e = self.int_of(end, "a range end", span)?;
                let st = self.int_of(step, "a range step", span)?;
                range_list(s, e, st, *inclusive)
            }
            Rhs::Use(_) | Rhs::Call(..) => return self.eval_rhs(rhs, span),
        };
        r.map_err(|f| self.fault_at(f, span))
    }
}

impl Machine<'_, '_> {
    /// RUN018 when `v`, the result of `what` at `span`, holds a NaN or an infinity.
    #[cold]
    #[inline(never)]
    pub(super) fn finite_or_stop(&self, what: &str, v: Value, span: Span) -> Res<Value> {
        let func = self
            .calls
            .last()
            .map(|f| self.prog.functions[f.func.0 as usize].name.as_str())
            .unwrap_or("incipit");
        match super::finite::non_finite_message(what, func, &v) {
            None => Ok(v),
            Some(msg) => Err(self.error(codes::RUN_NON_FINITE, msg, span)),
        }
    }
}
