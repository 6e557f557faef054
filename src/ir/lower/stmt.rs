//! Statements → IR.

use super::operators::out_kind;
use super::types::{incompatible, needs_coercion};
use super::{Lowerer, ModItem};
use crate::diag::codes;
use crate::ir::*;
use crate::syntax::ast::{self, BindKind, ExprKind, IterKind, StmtKind};

impl Lowerer<'_> {
    /// Lowers a block's statements into the current block, in a new scope.
    pub fn block_inline(&mut self, b: &ast::Block) {
        self.cx().scopes.push(Vec::new());
        for s in &b.stmts {
            self.stmt(s);
        }
        self.cx().scopes.pop();
    }

    /// Lowers the statements of `blocks` one after the other in one scope: a name one
    /// binds is seen by the blocks after it (a test's setup, body and teardown).
    pub fn blocks_inline(&mut self, blocks: &[&ast::Block]) {
        self.cx().scopes.push(Vec::new());
        for s in blocks.iter().flat_map(|b| &b.stmts) {
            self.stmt(s);
        }
        self.cx().scopes.pop();
    }

    /// Lowers a block into a fresh IR block.
    pub fn block(&mut self, b: &ast::Block) -> Block {
        self.push_block();
        for s in &b.stmts {
            self.stmt(s);
        }
        self.pop_block()
    }

    pub(super) fn stmt(&mut self, s: &ast::Stmt) {
        match &s.kind {
            StmtKind::Block(b) => {
                let blk = self.block(b);
                self.cx()
                    .blocks
                    .last_mut()
                    .expect("open block")
                    .extend(blk.stmts);
            }
            StmtKind::Decl {
                kind,
                ty,
                name,
                value,
            } => self.decl(*kind, ty.as_ref(), name.as_ref(), value.as_ref(), s),
            StmtKind::Destructure { kind, names, value } => {
                let (v, vty) = self.expr(value, None);
                for (i, n) in names.iter().enumerate() {
                    let Some(n) = n else { continue };
                    let ety = match &vty {
                        Ty::Tuple(ts) => ts.get(i).cloned().unwrap_or(Ty::Any),
                        Ty::List(e) => (**e).clone(),
                        _ => Ty::Any,
                    };
                    let slot = self.new_slot(&n.name, ety);
                    let rhs = Rhs::Index(v.clone(), Operand::Const(Const::Int(i as i64)));
                    self.emit(Stmt::Let {
                        dst: slot,
                        rhs,
                        span: value.span,
                    });
                    self.bind(n, slot, *kind == BindKind::Varia, true);
                }
            }
            StmtKind::If { arms, otherwise } => self.if_chain(arms, otherwise.as_ref()),
            StmtKind::While { cond, body } => {
                self.push_block();
                self.break_unless(cond);
                self.cx().loops += 1;
                let inner = self.block(body);
                self.cx().loops -= 1;
                self.cx()
                    .blocks
                    .last_mut()
                    .expect("open block")
                    .extend(inner.stmts);
                let body = self.pop_block();
                self.emit(Stmt::Loop { body, span: s.span });
            }
            StmtKind::Iterate {
                kind,
                source,
                binding,
                var,
                body,
            } => self.iterate(*kind, source, *binding, var, body, s),
            StmtKind::Elige {
                subject,
                cases,
                otherwise,
            } => {
                let (subj, _) = self.expr(subject, None);
                self.elige_chain(&subj, cases, otherwise.as_ref());
            }
            StmtKind::Fac { body, catch } => {
                self.cx().tries += 1;
                let b = self.block(body);
                self.cx().tries -= 1;
                // Without `cape`, `fac` is a plain block: nothing is caught.
                if catch.is_none() {
                    self.cx()
                        .blocks
                        .last_mut()
                        .expect("open block")
                        .extend(b.stmts);
                    return;
                }
                let (catch_slot, handler) = match catch {
                    Some((name, h)) => {
                        self.push_block();
                        let slot = self.new_slot(&name.name, Ty::Any);
                        self.bind(name, slot, false, true);
                        for st in &h.stmts {
                            self.stmt(st);
                        }
                        (Some(slot), self.pop_block())
                    }
                    None => (None, Block::default()),
                };
                self.emit(Stmt::Try {
                    body: b,
                    catch_slot,
                    handler,
                });
            }
            StmtKind::DoWhile { body, catch, cond } => {
                self.do_while(body, catch.as_ref(), cond, s.span)
            }
            StmtKind::Adfirma { cond, message } => {
                let c = self.expr_to(cond, &Ty::Bool);
                let m = message.as_ref().map(|e| self.expr(e, None).0);
                let text = self.sources.text(cond.span.file);
                let source = text.get(cond.span.range()).unwrap_or("").to_string();
                self.emit(Stmt::Assert {
                    cond: c,
                    message: m,
                    source,
                    span: s.span,
                });
            }
            StmtKind::Expr(e) => {
                self.expr_stmt(e);
            }
            StmtKind::Assign { target, value } => self.assign(target, value),
            StmtKind::Redde(v) => {
                let ret = self.cx().ret.clone();
                let op = match (v, &ret) {
                    (Some(e), Some(t)) if *t == Ty::Vacuum => {
                        // Only a value of type `vacuum` (`redde f() ↦ vacuum`, a call
                        // of a `vacuum` function) may be returned from such a function.
                        let (op, got) = self.expr(e, None);
                        if got != Ty::Vacuum {
                            self.error(
                                codes::SEM_RETURN,
                                "this function returns no value (`vacuum`)",
                                e.span,
                            );
                        }
                        Some(op)
                    }
                    (Some(e), Some(t)) => Some(self.expr_to(e, t)),
                    (Some(e), None) => Some(self.expr(e, None).0),
                    // A bare `redde` returns `vacuum`, which is no other type's value
                    // (not even `nihil`'s): every declared result needs its value.
                    (None, Some(t)) if *t != Ty::Vacuum => {
                        let shown = self.show_ty(t);
                        let hint = if super::types::admits_nihil(t) {
                            "write `redde nihil` to return no value".to_string()
                        } else {
                            format!("give the value to return: `redde <value>` (a `{shown}`)")
                        };
                        self.diags.push(
                            crate::diag::Diagnostic::error(
                                codes::SEM_RETURN,
                                format!(
                                    "`redde` needs a value here: the function returns `{shown}`"
                                ),
                                s.span,
                            )
                            .with_hint(hint),
                        );
                        None
                    }
                    (None, _) => None,
                };
                self.emit(Stmt::Return(op));
            }
            StmtKind::Tacet => {}
            StmtKind::Rumpe | StmtKind::Perge => {
                if self.cx().loops == 0 {
                    let word = if matches!(s.kind, StmtKind::Rumpe) {
                        "rumpe"
                    } else {
                        "perge"
                    };
                    self.error(
                        codes::SEM_LOOP_CONTROL,
                        format!("`{word}` outside a loop"),
                        s.span,
                    );
                }
                self.emit(if matches!(s.kind, StmtKind::Rumpe) {
                    Stmt::Break
                } else {
                    Stmt::Continue
                });
            }
            StmtKind::Iace(e) => {
                self.check_may_throw(s.span, "`iace`");
                let (v, _) = self.expr(e, None);
                self.emit(Stmt::Throw {
                    value: v,
                    span: s.span,
                });
            }
            StmtKind::Mori(e) => {
                let (v, _) = self.expr(e, None);
                self.emit(Stmt::Fatal {
                    kind: FatalKind::Mori,
                    message: v,
                    span: s.span,
                });
            }
            StmtKind::Out { kind, args } => {
                let ops = args.iter().map(|a| self.expr(a, None).0).collect();
                self.emit(Stmt::Out {
                    kind: out_kind(*kind),
                    args: ops,
                    span: s.span,
                });
            }
            StmtKind::Error => {}
        }
    }

    /// `iace` (or a call to a `⇥` function) needs an enclosing `fac` or a `⇥` function.
    pub fn check_may_throw(&mut self, span: crate::source::Span, what: &str) {
        let cx = self.cx();
        if cx.tries == 0 && !cx.throws {
            let msg =
                format!("{what} outside `fac … cape` in a function that does not declare `⇥`");
            self.diags.push(
                crate::diag::Diagnostic::error(codes::SEM_UNCAUGHT_THROW, msg, span)
                    .with_hint("wrap it in `fac { … } cape e { … }` or declare the error type: `functio f() → T ⇥ textus`"),
            );
        }
    }

    fn decl(
        &mut self,
        kind: BindKind,
        ty: Option<&ast::Type>,
        name: Option<&ast::Ident>,
        value: Option<&ast::Expr>,
        s: &ast::Stmt,
    ) {
        let m = self.cur_module();
        let declared = ty.map(|t| self.ty(m, t));
        let (op, vty) = match value {
            Some(e) => {
                let (op, vty) = self.expr(e, declared.as_ref());
                if let Some(d) = &declared {
                    if incompatible(d, &vty) {
                        let msg = format!(
                            "expected `{}`, found `{}`",
                            self.show_ty(d),
                            self.show_ty(&vty)
                        );
                        self.error(super::types::mismatch_code(d, &vty), msg, e.span);
                    }
                    if needs_coercion(d, &vty) {
                        let o = match (&op, d) {
                            (Operand::Const(Const::Int(i)), Ty::Float) => {
                                Operand::Const(Const::Float(*i as f64))
                            }
                            _ => self.temp(Rhs::Coerce(op, d.clone()), d.clone(), e.span),
                        };
                        (Some(o), d.clone())
                    } else {
                        (Some(op), vty)
                    }
                } else {
                    (Some(op), vty)
                }
            }
            None => (None, Ty::Any),
        };
        let slot_ty = match declared {
            Some(Ty::Any) | None => vty,
            Some(d) => d,
        };
        let Some(name) = name else {
            return; // `_`: evaluated for effect, not bound
        };
        let slot = self.new_slot(&name.name, slot_ty);
        if ty.is_some_and(|t| self.is_narrow(m, t)) {
            self.mark_narrow(slot);
        }
        let initialized = op.is_some() || kind == BindKind::Varia;
        let init = op.unwrap_or(Operand::Const(Const::Nihil));
        self.carry_sizes(&init, slot);
        self.assign_slot(slot, init, s.span);
        self.bind(name, slot, kind == BindKind::Varia, initialized);
    }

    fn assign(&mut self, target: &ast::Expr, value: &ast::Expr) {
        match &target.kind {
            ExprKind::Name(id) => {
                let found = self
                    .local(&id.name)
                    .map(|l| (l.slot, l.mutable, l.initialized));
                match found {
                    Some((slot, mutable, initialized)) => {
                        if !mutable && initialized {
                            self.error(
                                codes::SEM_FIXUM_ASSIGN,
                                format!("cannot assign twice to `fixum` binding `{}`", id.name),
                                id.span,
                            );
                        }
                        if let Some(l) = self.local(&id.name) {
                            l.initialized = true;
                        }
                        let ty = self.slot_ty(slot);
                        let op = self.expr_to(value, &ty);
                        self.assign_slot(slot, op, target.span.to(value.span));
                    }
                    None => {
                        let m = self.cur_module();
                        let msg = match self.modules[m].values.get(&id.name) {
                            Some(ModItem::Global(_)) => {
                                format!("cannot assign to module constant `{}`", id.name)
                            }
                            _ => format!("cannot find `{}` in this scope", id.name),
                        };
                        let (code, hint) = if self.modules[m].values.contains_key(&id.name) {
                            (codes::SEM_FIXUM_ASSIGN, None)
                        } else {
                            (codes::SEM_UNKNOWN_NAME, self.name_hint(&id.name))
                        };
                        self.error_hint(code, msg, id.span, hint);
                    }
                }
            }
            ExprKind::Field { .. } | ExprKind::Index { .. } => {
                let Some((place, pty)) = self.place(target) else {
                    return;
                };
                let op = self.expr_to(value, &pty);
                self.emit(Stmt::Store {
                    place,
                    value: op,
                    span: target.span,
                });
            }
            _ => self.error(
                codes::SEM_BAD_TARGET,
                "this cannot be assigned to",
                target.span,
            ),
        }
    }

    fn iterate(
        &mut self,
        kind: IterKind,
        source: &ast::Expr,
        binding: BindKind,
        var: &ast::Ident,
        body: &ast::Block,
        s: &ast::Stmt,
    ) {
        if let (
            IterKind::Ab,
            ExprKind::Range {
                start,
                end,
                inclusive,
                step,
            },
        ) = (kind, &source.kind)
        {
            let a = self.expr_to(start, &Ty::Int);
            let b = self.expr_to(end, &Ty::Int);
            let st = match step {
                Some(x) => self.expr_to(x, &Ty::Int),
                None => Operand::Const(Const::Int(1)),
            };
            let (slot, blk) = self.loop_body(var, Ty::Int, binding, body);
            self.emit(Stmt::ForRange {
                var: slot,
                start: a,
                end: b,
                step: st,
                inclusive: *inclusive,
                body: blk,
                span: s.span,
            });
            return;
        }
        let (src, sty) = self.expr(source, None);
        let each = if kind == IterKind::De {
            EachKind::Keys
        } else {
            EachKind::Values
        };
        let vty = match (&sty, each) {
            (Ty::List(e), EachKind::Values) => (**e).clone(),
            (Ty::List(_), EachKind::Keys) => Ty::Int,
            (Ty::Map(k, _), EachKind::Keys) => (**k).clone(),
            (Ty::Map(_, v), EachKind::Values) => (**v).clone(),
            (Ty::Text, EachKind::Values) => Ty::Text,
            (Ty::Text, EachKind::Keys) => Ty::Int,
            (Ty::Set(e), EachKind::Values) => (**e).clone(),
            (Ty::Interval, EachKind::Values) => Ty::Int,
            (Ty::Json { .. }, EachKind::Values) => Ty::Json { doc: false },
            _ => Ty::Any,
        };
        let (slot, blk) = self.loop_body(var, vty, binding, body);
        self.emit(Stmt::ForEach {
            var: slot,
            kind: each,
            source: src,
            body: blk,
            span: s.span,
        });
    }

    /// A loop's body in its own scope, with the loop variable bound to a fresh slot.
    fn loop_body(
        &mut self,
        var: &ast::Ident,
        ty: Ty,
        binding: BindKind,
        body: &ast::Block,
    ) -> (Slot, Block) {
        self.push_block();
        let slot = self.new_slot(&var.name, ty);
        self.bind(var, slot, binding == BindKind::Varia, true);
        self.cx().loops += 1;
        for st in &body.stmts {
            self.stmt(st);
        }
        self.cx().loops -= 1;
        (slot, self.pop_block())
    }
}
