//! IR invariants, checked after lowering (and after every later pass): every slot,
//! global, function and genus an instruction names exists; calls pass the callee's
//! parameter count; `Break`/`Continue` sit inside a loop; field positions exist.
//! A violation is a compiler bug, reported as a message naming the function.

use super::*;

pub fn verify(p: &Program) -> Result<(), Vec<String>> {
    let mut errors = Vec::new();
    for (i, f) in p.functions.iter().enumerate() {
        let mut v = Verifier {
            p,
            f,
            errors: &mut errors,
            loops: 0,
        };
        if (f.params as usize) > f.slots.len() {
            v.fail(format!(
                "{} parameters but {} slots",
                f.params,
                f.slots.len()
            ));
        }
        v.block(&f.body);
        let _ = i;
    }
    for id in p
        .inits
        .iter()
        .chain(p.entry.iter())
        .chain(p.tests.iter().map(|t| &t.func))
    {
        if id.0 as usize >= p.functions.len() {
            errors.push(format!("program names missing function #{}", id.0));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

struct Verifier<'a> {
    p: &'a Program,
    f: &'a Function,
    errors: &'a mut Vec<String>,
    loops: u32,
}

impl Verifier<'_> {
    fn fail(&mut self, msg: String) {
        self.errors.push(format!("{}: {msg}", self.f.name));
    }

    fn slot(&mut self, s: Slot) {
        if s.0 as usize >= self.f.slots.len() {
            self.fail(format!("slot %{} out of range", s.0));
        }
    }

    fn op(&mut self, o: &Operand) {
        match o {
            Operand::Slot(s) => self.slot(*s),
            Operand::Global(g) => {
                if g.0 as usize >= self.p.globals.len() {
                    self.fail(format!("global @{} out of range", g.0));
                }
            }
            Operand::Const(_) => {}
        }
    }

    fn ops(&mut self, os: &[Operand]) {
        for o in os {
            self.op(o);
        }
    }

    fn func(&mut self, id: FuncId, args: usize) {
        match self.p.functions.get(id.0 as usize) {
            None => self.fail(format!("call of missing function #{}", id.0)),
            Some(callee) if callee.params as usize != args => {
                let name = callee.name.clone();
                let want = callee.params;
                // Arity errors in source are reported by lowering; the IR of a
                // program that lowered without errors must agree.
                self.fail(format!(
                    "call of {name} with {args} arguments, expects {want}"
                ));
            }
            Some(_) => {}
        }
    }

    fn place(&mut self, pl: &Place) {
        match pl.root {
            PlaceRoot::Slot(s) => self.slot(s),
            PlaceRoot::Global(g) => self.op(&Operand::Global(g)),
        }
        for step in &pl.path {
            if let PlaceStep::Index(o) = step {
                self.op(o);
            }
        }
    }

    fn rhs(&mut self, r: &Rhs) {
        match r {
            Rhs::Use(o)
            | Rhs::Field(o, _)
            | Rhs::Convert(o, _)
            | Rhs::Coerce(o, _)
            | Rhs::Is(o, _, _) => self.op(o),
            Rhs::Prim(prim, args) => {
                let want = match prim {
                    Prim::Unary(_) => 1,
                    Prim::Binary(_) => 2,
                };
                if args.len() != want {
                    self.fail(format!("{prim:?} with {} operands", args.len()));
                }
                self.ops(args);
            }
            Rhs::Call(f, args) => {
                self.func(*f, args.len());
                self.ops(args);
            }
            Rhs::CallValue(f, args) => {
                self.op(f);
                self.ops(args);
            }
            Rhs::Host(h, args) => {
                if args.len() != h.arity() {
                    self.fail(format!("hospes.{} with {} operands", h.name(), args.len()));
                }
                self.ops(args);
            }
            Rhs::Closure(f, caps) => {
                if f.0 as usize >= self.p.functions.len() {
                    self.fail(format!("closure of missing function #{}", f.0));
                }
                self.ops(caps);
            }
            Rhs::Method(_, recv, args) => {
                self.op(recv);
                self.ops(args);
            }
            Rhs::List(items) | Rhs::Tuple(items) => self.ops(items),
            Rhs::Op(op, args) => {
                if args.len() != op.arity() {
                    self.fail(format!("op {} with {} operands", op.name(), args.len()));
                }
                self.ops(args);
            }
            Rhs::Map(entries) => {
                for (_, v) in entries {
                    self.op(v);
                }
            }
            Rhs::Record(g, fields) => {
                match self.p.genera.get(g.0 as usize) {
                    Some(genus) if genus.fields.len() != fields.len() => self.fail(format!(
                        "record {} with {} fields",
                        genus.name,
                        fields.len()
                    )),
                    None => self.fail(format!("record of missing genus #{}", g.0)),
                    Some(_) => {}
                }
                self.ops(fields);
            }
            Rhs::Index(a, b) => {
                self.op(a);
                self.op(b);
            }
            Rhs::Template(pieces, args) => {
                for piece in pieces {
                    if let TemplatePiece::Arg(i) = piece {
                        if *i as usize >= args.len() {
                            self.fail(format!("template hole {i} without an argument"));
                        }
                    }
                }
                self.ops(args);
            }
            Rhs::Range {
                start, end, step, ..
            } => {
                self.op(start);
                self.op(end);
                self.op(step);
            }
        }
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Let { dst, rhs, .. } => {
                self.slot(*dst);
                self.rhs(rhs);
            }
            Stmt::SetGlobal { dst, value } => {
                self.op(&Operand::Global(*dst));
                self.op(value);
            }
            Stmt::Store { place, value, .. } => {
                self.place(place);
                self.op(value);
            }
            Stmt::MethodInPlace {
                dst, place, args, ..
            } => {
                if let Some(d) = dst {
                    self.slot(*d);
                }
                self.place(place);
                self.ops(args);
            }
            Stmt::CallInPlace {
                dst,
                func,
                place,
                args,
                ..
            } => {
                if let Some(d) = dst {
                    self.slot(*d);
                }
                self.func(*func, args.len() + 1);
                self.place(place);
                self.ops(args);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                self.op(cond);
                self.block(then);
                self.block(otherwise);
            }
            Stmt::Cond { arms, otherwise } => {
                for arm in arms {
                    self.block(&arm.test);
                    self.op(&arm.cond);
                    self.block(&arm.then);
                }
                self.block(otherwise);
            }
            Stmt::Loop { body, .. } => {
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
            }
            Stmt::ForRange {
                var,
                start,
                end,
                step,
                body,
                ..
            } => {
                self.slot(*var);
                self.op(start);
                self.op(end);
                self.op(step);
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
            }
            Stmt::ForEach {
                var, source, body, ..
            } => {
                self.slot(*var);
                self.op(source);
                self.loops += 1;
                self.block(body);
                self.loops -= 1;
            }
            Stmt::Break | Stmt::Continue => {
                if self.loops == 0 {
                    self.fail("break/continue outside a loop".into());
                }
            }
            Stmt::Return(v) => {
                if let Some(o) = v {
                    self.op(o);
                }
            }
            Stmt::Throw { value, .. } => self.op(value),
            Stmt::Try {
                body,
                catch_slot,
                handler,
            } => {
                self.block(body);
                if let Some(s) = catch_slot {
                    self.slot(*s);
                }
                self.block(handler);
            }
            Stmt::Fatal { message, .. } => self.op(message),
            Stmt::Assert { cond, message, .. } => {
                self.op(cond);
                if let Some(m) = message {
                    self.op(m);
                }
            }
            Stmt::Out { args, .. } => self.ops(args),
        }
    }
}
