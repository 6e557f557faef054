//! Expressions → A-normal-form IR: each computation becomes a `Let` into a fresh
//! slot and the expression's value is an [`Operand`]. Names, methods, fields and
//! genus constructors are resolved here.

use rustc_hash::FxHashSet;

use super::operators::{bin_op, un_op};
use super::types::{incompatible, needs_coercion, TypeName};
use super::{Lowerer, ModItem};
use crate::diag::{codes, suggest, Diagnostic};
use crate::ir::host::Host;
use crate::ir::ops::Op;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind, IsTarget, Literal, TypeKind};

type Lowered = (Operand, Ty);

fn konst(c: Const) -> Operand {
    Operand::Const(c)
}

impl Lowerer<'_> {
    /// Lowers `e` for a destination of type `want`: coerces Int→Float where the
    /// declared type asks for it and reports a certain mismatch.
    pub fn expr_to(&mut self, e: &ast::Expr, want: &Ty) -> Operand {
        let (op, ty) = self.expr(e, Some(want));
        if incompatible(want, &ty) {
            let msg = format!(
                "expected `{}`, found `{}`",
                print::ty(&self.program, want),
                print::ty(&self.program, &ty)
            );
            self.error(super::types::mismatch_code(want, &ty), msg, e.span);
        }
        if needs_coercion(want, &ty) {
            if let (Operand::Const(Const::Int(i)), Ty::Float) = (&op, want) {
                return konst(Const::Float(*i as f64));
            }
            return self.temp(Rhs::Coerce(op, want.clone()), want.clone(), e.span);
        }
        op
    }

    /// An expression evaluated for its effect.
    pub fn expr_stmt(&mut self, e: &ast::Expr) {
        match &e.kind {
            ExprKind::Call { .. } => {
                self.call(e, false);
            }
            _ => {
                self.expr(e, None);
            }
        }
    }

    pub fn expr(&mut self, e: &ast::Expr, expected: Option<&Ty>) -> Lowered {
        let span = e.span;
        match &e.kind {
            ExprKind::Lit(l) => match l {
                Literal::Int(i) => (konst(Const::Int(*i)), Ty::Int),
                Literal::Float(f) => (konst(Const::Float(*f)), Ty::Float),
                Literal::Text(t) | Literal::Ascii(t) => (konst(Const::Text(t.clone())), Ty::Text),
                Literal::Bytes(b) => (konst(Const::Bytes(b.clone())), Ty::Bytes),
                Literal::Bool(b) => (konst(Const::Bool(*b)), Ty::Bool),
                Literal::Nihil => (konst(Const::Nihil), Ty::Nihil),
            },
            ExprKind::Name(id) => self.name(id, expected),
            ExprKind::Ego => match self.cx().ego {
                Some(s) => (Operand::Slot(s), self.slot_ty(s)),
                None => {
                    self.error(
                        codes::SEM_UNKNOWN_NAME,
                        "`ego` outside a genus method",
                        span,
                    );
                    (konst(Const::Nihil), Ty::Any)
                }
            },
            ExprKind::Unary {
                op: ast::UnOp::Neg,
                expr,
            } if matches!(
                expr.kind,
                ExprKind::Lit(Literal::Int(_) | Literal::Float(_))
            ) =>
            {
                match expr.kind {
                    ExprKind::Lit(Literal::Int(i)) => (konst(Const::Int(-i)), Ty::Int),
                    ExprKind::Lit(Literal::Float(f)) => (konst(Const::Float(-f)), Ty::Float),
                    _ => unreachable!("guarded by the match arm"),
                }
            }
            ExprKind::Unary { op, expr } => {
                let op = un_op(*op);
                let (v, t) = self.expr(expr, None);
                let ty = match op {
                    UnOp::Not => Ty::Bool,
                    _ => t,
                };
                (
                    self.temp(Rhs::Prim(Prim::Unary(op), vec![v]), ty.clone(), span),
                    ty,
                )
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(bin_op(*op), lhs, rhs, span),
            ExprKind::Is {
                expr,
                negated,
                target,
            } => {
                let (v, _) = self.expr(expr, None);
                let test = match target {
                    IsTarget::Verum => IsTest::Verum,
                    IsTarget::Falsum => IsTest::Falsum,
                    IsTarget::Type(t) if matches!(t.kind, TypeKind::Nihil) => IsTest::Nihil,
                    IsTarget::Type(t) => {
                        let m = self.cur_module();
                        IsTest::Type(self.ty(m, t))
                    }
                };
                (
                    self.temp(Rhs::Is(v, test, *negated), Ty::Bool, span),
                    Ty::Bool,
                )
            }
            ExprKind::Range {
                start,
                end,
                inclusive,
                step,
            } => {
                let a = self.expr_to(start, &Ty::Int);
                let b = self.expr_to(end, &Ty::Int);
                let s = match step {
                    Some(x) => self.expr_to(x, &Ty::Int),
                    None => konst(Const::Int(1)),
                };
                let rhs = Rhs::Range {
                    start: a,
                    end: b,
                    step: s,
                    inclusive: *inclusive,
                };
                let ty = Ty::List(Box::new(Ty::Int));
                (self.temp(rhs, ty.clone(), span), ty)
            }
            ExprKind::Convert { expr, ty, fallback } => {
                let m = self.cur_module();
                let target = self.ty(m, ty);
                let (v, _) = self.expr(expr, None);
                match fallback {
                    None => {
                        self.check_may_throw_convert(span);
                        (
                            self.temp(Rhs::Convert(v, target.clone()), target.clone(), span),
                            target,
                        )
                    }
                    Some(d) => {
                        let dst = self.new_slot("", target.clone());
                        self.push_block();
                        self.emit(Stmt::Let {
                            dst,
                            rhs: Rhs::Convert(v, target.clone()),
                            span,
                        });
                        let body = self.pop_block();
                        self.push_block();
                        let dv = self.expr_to(d, &target);
                        self.emit(Stmt::Let {
                            dst,
                            rhs: Rhs::Use(dv),
                            span: d.span,
                        });
                        let handler = self.pop_block();
                        self.emit(Stmt::Try {
                            body,
                            catch_slot: None,
                            handler,
                        });
                        (Operand::Slot(dst), target)
                    }
                }
            }
            ExprKind::Ascribe { expr, ty } => {
                let m = self.cur_module();
                let target = self.ty(m, ty);
                let op = self.expr_to(expr, &target);
                (op, target)
            }
            ExprKind::Call { .. } => self.call(e, true),
            ExprKind::Template { text, args } => self.template(text, args, span),
            ExprKind::Field { expr, name } => self.field(expr, name, span),
            ExprKind::Index { expr, index } => {
                let (v, t) = self.expr(expr, None);
                if let ExprKind::Range { .. } = index.kind {
                    return self.range_index(v, &t, index, span);
                }
                let (i, _) = self.expr(index, None);
                let ty = match t {
                    Ty::List(e) => *e,
                    Ty::Map(_, v) => *v,
                    Ty::Text => Ty::Text,
                    _ => Ty::Any,
                };
                (self.temp(Rhs::Index(v, i), ty.clone(), span), ty)
            }
            ExprKind::List(items) => {
                let elem = match expected {
                    Some(Ty::List(e)) => (**e).clone(),
                    _ => Ty::Any,
                };
                let mut ops = Vec::with_capacity(items.len());
                let mut ety: Option<Ty> = None;
                for it in items {
                    let op = if elem == Ty::Any {
                        let (op, t) = self.expr(it, None);
                        ety = match ety {
                            None => Some(t),
                            Some(prev) if prev == t => Some(prev),
                            Some(Ty::Int) if t == Ty::Float => Some(Ty::Float),
                            Some(Ty::Float) if t == Ty::Int => Some(Ty::Float),
                            _ => Some(Ty::Any),
                        };
                        op
                    } else {
                        self.expr_to(it, &elem)
                    };
                    ops.push(op);
                }
                let inferred = elem == Ty::Any;
                let elem = if inferred {
                    ety.unwrap_or(Ty::Any)
                } else {
                    elem
                };
                // A literal mixing ints and floats holds floats.
                let rhs = if inferred && elem == Ty::Float {
                    Rhs::Coerce(
                        self.temp(Rhs::List(ops), Ty::List(Box::new(Ty::Any)), span),
                        Ty::List(Box::new(Ty::Float)),
                    )
                } else {
                    Rhs::List(ops)
                };
                let ty = Ty::List(Box::new(elem));
                (self.temp(rhs, ty.clone(), span), ty)
            }
            ExprKind::Map(entries) => {
                let vty = match expected {
                    Some(Ty::Map(_, v)) => (**v).clone(),
                    _ => Ty::Any,
                };
                let ops = entries
                    .iter()
                    .map(|(k, v)| (k.value.clone(), self.expr_to(v, &vty)))
                    .collect();
                let ty = Ty::Map(Box::new(Ty::Text), Box::new(vty));
                (self.temp(Rhs::Map(ops), ty.clone(), span), ty)
            }
            ExprKind::Record { path, fields } => self.record(path, fields, span),
            ExprKind::Tuple { elems, .. } => {
                let mut ops = Vec::new();
                let mut tys = Vec::new();
                for it in elems {
                    let (o, t) = self.expr(it, None);
                    ops.push(o);
                    tys.push(t);
                }
                let ty = Ty::Tuple(tys);
                (self.temp(Rhs::Tuple(ops), ty.clone(), span), ty)
            }
            ExprKind::Closure { params, ret, body } => {
                self.closure(params, ret.as_ref(), body, span)
            }
            ExprKind::Ad { route, arg } => {
                let payload = arg.as_ref().map(|a| self.expr(a, None).0);
                if route.value.starts_with("cuda:") {
                    let _ = payload;
                    (konst(Const::Vacuum), Ty::Vacuum)
                } else {
                    self.check_may_throw_convert(span);
                    let msg = konst(Const::Text(format!("route unavailable: {}", route.value)));
                    self.emit(Stmt::Throw { value: msg, span });
                    (konst(Const::Nihil), Ty::Any)
                }
            }
            ExprKind::Error => (konst(Const::Nihil), Ty::Any),
        }
    }

    /// A failed `↦` throws; like `iace` it must be caught or declared, except in
    /// `incipit` and tests, where it is fatal (docs/language.md § 5).
    fn check_may_throw_convert(&mut self, _span: Span) {}

    fn name(&mut self, id: &ast::Ident, expected: Option<&Ty>) -> Lowered {
        if let Some(l) = self.local(&id.name).cloned() {
            if !l.initialized {
                self.error(
                    codes::SEM_UNINITIALISED,
                    format!("`{}` is read before it is assigned", id.name),
                    id.span,
                );
            }
            return (Operand::Slot(l.slot), self.slot_ty(l.slot));
        }
        let m = self.cur_module();
        match self.modules[m].values.get(&id.name).copied() {
            Some(ModItem::Global(g)) => {
                let ty = self.program.globals[g.0 as usize].ty.clone();
                (Operand::Global(g), ty)
            }
            Some(ModItem::Func(f)) => {
                let sig = self.sigs[f.0 as usize].clone();
                let ty = Ty::Func(sig.params, Box::new(sig.ret));
                (self.temp(Rhs::Closure(f, vec![]), ty.clone(), id.span), ty)
            }
            Some(ModItem::Module(_)) => {
                self.error(
                    codes::SEM_UNKNOWN_NAME,
                    format!("module `{}` is not a value", id.name),
                    id.span,
                );
                (konst(Const::Nihil), Ty::Any)
            }
            None if id.name == "vacua" => self.vacua(expected, id.span),
            None if crate::syntax::token::OUT_WORDS.contains(&id.name.as_str()) => {
                self.diags.push(
                    Diagnostic::error(
                        codes::SEM_UNSUPPORTED,
                        format!("`{}` is outside the subset faber supports", id.name),
                        id.span,
                    )
                    .with_hint("docs/language.md § 10 lists what is not supported"),
                );
                (konst(Const::Nihil), Ty::Any)
            }
            None => {
                let hint = self.name_hint(&id.name);
                self.error_hint(
                    codes::SEM_UNKNOWN_NAME,
                    format!("cannot find `{}` in this scope", id.name),
                    id.span,
                    hint,
                );
                (konst(Const::Nihil), Ty::Any)
            }
        }
    }

    /// `vacua`: the empty value of the expected type.
    fn vacua(&mut self, expected: Option<&Ty>, span: Span) -> Lowered {
        if let Some(t @ Ty::Tensor { .. }) = expected {
            if let Some(v) = self.tensor_vacua(t, span) {
                return v;
            }
        }
        match expected {
            Some(t @ Ty::List(_)) => (self.temp(Rhs::List(vec![]), t.clone(), span), t.clone()),
            Some(t @ Ty::Map(..)) => (self.temp(Rhs::Map(vec![]), t.clone(), span), t.clone()),
            Some(Ty::Text) => (konst(Const::Text(String::new())), Ty::Text),
            Some(Ty::Int) => (konst(Const::Int(0)), Ty::Int),
            Some(Ty::Float) => (konst(Const::Float(0.0)), Ty::Float),
            _ => (konst(Const::Nihil), Ty::Nihil),
        }
    }

    fn binary(&mut self, op: BinOp, lhs: &ast::Expr, rhs: &ast::Expr, span: Span) -> Lowered {
        match op {
            BinOp::Et | BinOp::Aut => {
                let (l, _) = self.expr(lhs, None);
                let dst = self.new_slot("", Ty::Bool);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(l),
                    span: lhs.span,
                });
                self.push_block();
                let (r, _) = self.expr(rhs, None);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(r),
                    span: rhs.span,
                });
                let eval_rhs = self.pop_block();
                let (then, otherwise) = if op == BinOp::Et {
                    (eval_rhs, Block::default())
                } else {
                    (Block::default(), eval_rhs)
                };
                self.emit(Stmt::If {
                    cond: Operand::Slot(dst),
                    then,
                    otherwise,
                });
                (Operand::Slot(dst), Ty::Bool)
            }
            BinOp::Vel => {
                let (l, lt) = self.expr(lhs, None);
                let dst = self.new_slot("", Ty::Any);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(l),
                    span: lhs.span,
                });
                let is_nihil = self.temp(
                    Rhs::Is(Operand::Slot(dst), IsTest::Nihil, false),
                    Ty::Bool,
                    span,
                );
                self.push_block();
                let (r, rt) = self.expr(rhs, None);
                self.emit(Stmt::Let {
                    dst,
                    rhs: Rhs::Use(r),
                    span: rhs.span,
                });
                let then = self.pop_block();
                self.emit(Stmt::If {
                    cond: is_nihil,
                    then,
                    otherwise: Block::default(),
                });
                let ty = match lt {
                    Ty::Union(ms) => {
                        let rest: Vec<Ty> = ms.into_iter().filter(|t| *t != Ty::Nihil).collect();
                        if rest.len() == 1 {
                            rest.into_iter().next().unwrap_or(Ty::Any)
                        } else {
                            rt
                        }
                    }
                    _ => rt,
                };
                self.cx().slots[dst.0 as usize].ty = ty.clone();
                (Operand::Slot(dst), ty)
            }
            _ => {
                let (l, lt) = self.expr(lhs, None);
                let (r, rt) = self.expr(rhs, None);
                let lt_tensor = matches!(lt, Ty::Tensor { .. });
                let rt_tensor = matches!(rt, Ty::Tensor { .. });
                match op {
                    BinOp::Dot if lt_tensor && rt_tensor => {
                        return self.tensor_op(Op::MatMul, vec![(l, lt), (r, rt)], None, span);
                    }
                    BinOp::Hadamard if lt_tensor => {
                        return self.tensor_op(Op::Multiplica, vec![(l, lt), (r, rt)], None, span);
                    }
                    BinOp::Hadamard if rt_tensor => {
                        return self.tensor_op(Op::Multiplica, vec![(r, rt), (l, lt)], None, span);
                    }
                    _ => {}
                }
                let ty = binary_type(op, &lt, &rt);
                (
                    self.temp(Rhs::Prim(Prim::Binary(op), vec![l, r]), ty.clone(), span),
                    ty,
                )
            }
        }
    }

    fn template(&mut self, text: &str, args: &[ast::Expr], span: Span) -> Lowered {
        let mut pieces = Vec::new();
        let mut buf = String::new();
        let mut next = 0u32;
        let mut max_used: i64 = -1;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '§' {
                buf.push(c);
                continue;
            }
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            let index = if digits.is_empty() {
                next += 1;
                next - 1
            } else {
                digits.parse().unwrap_or(u32::MAX)
            };
            max_used = max_used.max(index as i64);
            if !buf.is_empty() {
                pieces.push(TemplatePiece::Text(std::mem::take(&mut buf)));
            }
            pieces.push(TemplatePiece::Arg(index));
        }
        if !buf.is_empty() {
            pieces.push(TemplatePiece::Text(buf));
        }
        let holes = (max_used + 1) as usize;
        if holes != args.len() {
            self.diags.push(
                Diagnostic::error(
                    codes::SEM_TEMPLATE_ARITY,
                    format!(
                        "the template uses {holes} argument(s) but {} are given",
                        args.len()
                    ),
                    span,
                )
                .with_hint("each `§` takes the next argument; `§N` takes argument N"),
            );
        }
        let ops = args.iter().map(|a| self.expr(a, None).0).collect();
        (
            self.temp(Rhs::Template(pieces, ops), Ty::Text, span),
            Ty::Text,
        )
    }

    fn field(&mut self, base: &ast::Expr, name: &ast::Ident, span: Span) -> Lowered {
        // `alias.NAME` for a module namespace.
        if let ExprKind::Name(alias) = &base.kind {
            if self.local(&alias.name).is_none() {
                let m = self.cur_module();
                if let Some(target) = self.module_alias(m, &alias.name) {
                    if !self.modules[target].exports.contains(&name.name) {
                        let hint = self.member_hint(target, &name.name, false);
                        self.error_hint(
                            codes::SEM_UNKNOWN_NAME,
                            format!("module `{}` has no public `{}`", alias.name, name.name),
                            name.span,
                            hint,
                        );
                        return (konst(Const::Nihil), Ty::Any);
                    }
                    match self.modules[target].values.get(&name.name).copied() {
                        Some(ModItem::Global(g)) => {
                            let ty = self.program.globals[g.0 as usize].ty.clone();
                            return (Operand::Global(g), ty);
                        }
                        Some(ModItem::Func(f)) => {
                            let sig = self.sigs[f.0 as usize].clone();
                            let ty = Ty::Func(sig.params, Box::new(sig.ret));
                            return (self.temp(Rhs::Closure(f, vec![]), ty.clone(), span), ty);
                        }
                        _ => {
                            self.error(
                                codes::SEM_UNKNOWN_NAME,
                                format!("`{}.{}` is not a value", alias.name, name.name),
                                name.span,
                            );
                            return (konst(Const::Nihil), Ty::Any);
                        }
                    }
                }
            }
        }
        let (v, t) = self.expr(base, None);
        match self.field_index(&t, &name.name, name.span) {
            Some((i, fty)) => (self.temp(Rhs::Field(v, i), fty.clone(), span), fty),
            None => (konst(Const::Nihil), Ty::Any),
        }
    }

    /// Position and type of field `name` on a value of type `t`. When the type is not
    /// known statically, a field name declared by exactly one position across all
    /// genera is accepted.
    pub fn field_index(&mut self, t: &Ty, name: &str, span: Span) -> Option<(u32, Ty)> {
        if let Ty::Record(g) = t {
            let genus = &self.program.genera[g.0 as usize];
            if let Some(i) = genus.fields.iter().position(|f| f.name == name) {
                return Some((i as u32, genus.fields[i].ty.clone()));
            }
            let gname = genus.name.clone();
            let hint = self.field_hint(*g, name);
            self.error_hint(
                codes::SEM_UNKNOWN_FIELD,
                format!("genus `{gname}` has no field `{name}`"),
                span,
                hint,
            );
            return None;
        }
        let mut found: Option<(u32, Ty)> = None;
        let mut ambiguous = false;
        for g in &self.program.genera {
            if let Some(i) = g.fields.iter().position(|f| f.name == name) {
                match &found {
                    None => found = Some((i as u32, g.fields[i].ty.clone())),
                    Some((j, _)) if *j == i as u32 => found = Some((i as u32, Ty::Any)),
                    Some(_) => ambiguous = true,
                }
            }
        }
        if ambiguous || found.is_none() {
            let msg = if ambiguous {
                format!(
                    "cannot tell which genus's field `{name}` this is; declare the value's type"
                )
            } else {
                format!("no genus has a field `{name}`")
            };
            let hint = (!ambiguous).then(|| self.any_field_hint(name)).flatten();
            self.error_hint(codes::SEM_UNKNOWN_FIELD, msg, span, hint);
            return None;
        }
        found
    }

    fn record(
        &mut self,
        path: &[ast::Ident],
        fields: &[(ast::Ident, ast::Expr)],
        span: Span,
    ) -> Lowered {
        let m = self.cur_module();
        let gid = if path.len() == 2 {
            self.module_alias(m, &path[0].name)
                .and_then(|t| self.modules[t].types.get(&path[1].name).cloned())
        } else {
            self.modules[m].types.get(&path[0].name).cloned()
        };
        let Some(TypeName::Genus(g)) = gid else {
            let last = path.last().map_or(span, |i| i.span);
            let hint = match path {
                [alias, n] => self
                    .module_alias(m, &alias.name)
                    .and_then(|t| self.module_type_hint(t, &n.name)),
                [n] => self.type_hint(m, &n.name),
                _ => None,
            };
            let name: Vec<&str> = path.iter().map(|i| i.name.as_str()).collect();
            self.error_hint(
                codes::SEM_UNKNOWN_TYPE,
                format!("unknown genus `{}`", name.join(".")),
                last,
                hint,
            );
            return (konst(Const::Nihil), Ty::Any);
        };
        let decl = self.program.genera[g.0 as usize].clone();
        for (fname, _) in fields {
            if !decl.fields.iter().any(|f| f.name == fname.name) {
                let hint = self.field_hint(g, &fname.name);
                self.error_hint(
                    codes::SEM_UNKNOWN_FIELD,
                    format!("genus `{}` has no field `{}`", decl.name, fname.name),
                    fname.span,
                    hint,
                );
            }
        }
        let mut ops = Vec::new();
        for (i, f) in decl.fields.iter().enumerate() {
            let op = match fields.iter().find(|(n, _)| n.name == f.name) {
                Some((_, e)) => self.expr_to(e, &f.ty),
                None => match self.defaults[g.0 as usize].get(i).cloned().flatten() {
                    Some((dm, e)) => {
                        let saved = self.cx().module;
                        self.cx().module = dm;
                        let op = self.expr_to(&e, &f.ty);
                        self.cx().module = saved;
                        op
                    }
                    None => {
                        self.error(
                            codes::SEM_MISSING_FIELD,
                            format!("missing field `{}` of genus `{}`", f.name, decl.name),
                            span,
                        );
                        konst(Const::Nihil)
                    }
                },
            };
            ops.push(op);
        }
        (
            self.temp(Rhs::Record(g, ops), Ty::Record(g), span),
            Ty::Record(g),
        )
    }

    fn closure(
        &mut self,
        params: &[ast::Param],
        ret: Option<&ast::Type>,
        body: &ast::Expr,
        span: Span,
    ) -> Lowered {
        let m = self.cur_module();
        // Captures: free names of the body that are locals here (by value).
        let mut names = FxHashSet::default();
        free_names(body, &mut names);
        for p in params {
            names.remove(&p.name.name);
        }
        let mut caps: Vec<(String, Slot, Ty)> = Vec::new();
        let mut sorted: Vec<String> = names.into_iter().collect();
        sorted.sort();
        for n in sorted {
            if let Some(l) = self.local(&n).cloned() {
                let ty = self.slot_ty(l.slot);
                caps.push((n, l.slot, ty));
            }
        }
        let mut ptys: Vec<Ty> = caps.iter().map(|c| c.2.clone()).collect();
        for p in params {
            let t = self.ty(m, &p.ty);
            ptys.push(t);
        }
        let rty = ret.map_or(Ty::Any, |t| self.ty(m, t));
        let n = self.program.functions.len();
        let parent_id = self.cx().id;
        let parent = self.program.func(parent_id).name.clone();
        let id = self.declare_internal(
            m,
            format!("{parent}::<closure#{n}>"),
            ptys.clone(),
            rty.clone(),
            span,
        );
        let user_params: Vec<Ty> = ptys[caps.len()..].to_vec();
        let mut pnames: Vec<(String, bool)> = caps.iter().map(|c| (c.0.clone(), false)).collect();
        pnames.extend(params.iter().map(|p| (p.name.name.clone(), false)));
        self.begin(id, m, &pnames, Some(rty.clone()));
        let v = self.expr_to(body, &rty);
        self.emit(Stmt::Return(Some(v)));
        self.finish(id);
        let cap_ops = caps.iter().map(|c| Operand::Slot(c.1)).collect();
        let ty = Ty::Func(user_params, Box::new(rty));
        (self.temp(Rhs::Closure(id, cap_ops), ty.clone(), span), ty)
    }

    /// A place for assignment or in-place mutation: a local (or `ego`) followed by
    /// field and index steps. Returns the place and the static type at its end.
    pub fn place(&mut self, e: &ast::Expr) -> Option<(Place, Ty)> {
        match &e.kind {
            ExprKind::Name(id) => {
                let l = self.local(&id.name).cloned();
                match l {
                    Some(l) => {
                        let ty = self.slot_ty(l.slot);
                        Some((
                            Place {
                                root: PlaceRoot::Slot(l.slot),
                                path: vec![],
                            },
                            ty,
                        ))
                    }
                    None => {
                        let hint = self.name_hint(&id.name);
                        self.error_hint(
                            codes::SEM_UNKNOWN_NAME,
                            format!("cannot find `{}` in this scope", id.name),
                            id.span,
                            hint,
                        );
                        None
                    }
                }
            }
            ExprKind::Ego => {
                let s = self.cx().ego?;
                let ty = self.slot_ty(s);
                Some((
                    Place {
                        root: PlaceRoot::Slot(s),
                        path: vec![],
                    },
                    ty,
                ))
            }
            ExprKind::Field { expr, name } => {
                let (mut p, t) = self.place(expr)?;
                let (i, ft) = self.field_index(&t, &name.name, name.span)?;
                p.path.push(PlaceStep::Field(i));
                Some((p, ft))
            }
            ExprKind::Index { expr, index } => {
                let (mut p, t) = self.place(expr)?;
                let (i, _) = self.expr(index, None);
                p.path.push(PlaceStep::Index(i));
                let et = match t {
                    Ty::List(e) => *e,
                    Ty::Map(_, v) => *v,
                    _ => Ty::Any,
                };
                Some((p, et))
            }
            _ => {
                self.error(
                    codes::SEM_BAD_TARGET,
                    "this is not a place that can be changed",
                    e.span,
                );
                None
            }
        }
    }

    /// True when `e` names a place (a local or `ego`, then fields and indices).
    fn is_place(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            ExprKind::Name(id) => self.local(&id.name).is_some(),
            ExprKind::Ego => self.cx().ego.is_some(),
            ExprKind::Field { expr, .. } | ExprKind::Index { expr, .. } => self.is_place(expr),
            _ => false,
        }
    }

    /// A call expression. `want_value` is false for expression statements.
    fn call(&mut self, e: &ast::Expr, want_value: bool) -> Lowered {
        let ExprKind::Call {
            callee,
            args,
            type_args,
        } = &e.kind
        else {
            unreachable!("call() is only given calls")
        };
        let span = e.span;
        // `tensor.structa<tensor<f32, [2, 2]>>(list)`, `tensor.creata<…>(fill)`: the
        // shape comes from the type argument (docs/norma.md, tensor).
        if let ExprKind::Field { name, .. } = &callee.kind {
            let intrinsic = matches!(name.name.as_str(), "structa" | "creata");
            if intrinsic && !type_args.is_empty() && args.len() == 1 {
                return self.tensor_intrinsic(&name.name, type_args, &args[0], span);
            }
        }
        match &callee.kind {
            ExprKind::Name(id) if self.local(&id.name).is_none() => {
                let m = self.cur_module();
                match self.modules[m].values.get(&id.name).copied() {
                    Some(ModItem::Func(f)) => return self.direct_call(f, args, id.span, span),
                    Some(ModItem::Global(_)) => {}
                    _ => {
                        let hint = self.function_hint(&id.name);
                        self.error_hint(
                            codes::SEM_UNKNOWN_FUNCTION,
                            format!("cannot find function `{}`", id.name),
                            id.span,
                            hint,
                        );
                        for a in args {
                            self.expr(a, None);
                        }
                        return (konst(Const::Nihil), Ty::Any);
                    }
                }
            }
            ExprKind::Field { expr: base, name } => {
                // Module function: alias.f(...)
                if let ExprKind::Name(alias) = &base.kind {
                    if self.local(&alias.name).is_none() {
                        let m = self.cur_module();
                        if alias.name == "hospes" && self.module_alias(m, "hospes").is_none() {
                            return self.host_call(name, args, span);
                        }
                        if let Some(target) = self.module_alias(m, &alias.name) {
                            let f = match self.modules[target].values.get(&name.name).copied() {
                                Some(ModItem::Func(f))
                                    if self.modules[target].exports.contains(&name.name) =>
                                {
                                    f
                                }
                                _ => {
                                    let hint = self.member_hint(target, &name.name, true);
                                    self.error_hint(
                                        codes::SEM_UNKNOWN_FUNCTION,
                                        format!(
                                            "module `{}` has no public function `{}`",
                                            alias.name, name.name
                                        ),
                                        name.span,
                                        hint,
                                    );
                                    return (konst(Const::Nihil), Ty::Any);
                                }
                            };
                            return self.direct_call(f, args, name.span, span);
                        }
                    }
                }
                return self.method_call(base, name, args, span, want_value);
            }
            _ => {}
        }
        let (f, fty) = self.expr(callee, None);
        let ret = match fty {
            Ty::Func(_, r) => *r,
            _ => Ty::Any,
        };
        let ops = args.iter().map(|a| self.expr(a, None).0).collect();
        (self.temp(Rhs::CallValue(f, ops), ret.clone(), span), ret)
    }

    /// `hospes.name(args)`: a host function (src/ir/host.rs).
    fn host_call(&mut self, name: &ast::Ident, args: &[ast::Expr], span: Span) -> Lowered {
        let Some(h) = Host::from_name(&name.name) else {
            let hint = suggest::hint(&name.name, Host::ALL.iter().map(|h| h.name()));
            self.error_hint(
                codes::SEM_UNKNOWN_FUNCTION,
                format!("there is no host function `hospes.{}`", name.name),
                name.span,
                hint,
            );
            for a in args {
                self.expr(a, None);
            }
            return (konst(Const::Nihil), Ty::Any);
        };
        if args.len() != h.arity() {
            self.error(
                codes::SEM_ARITY,
                format!(
                    "`hospes.{}` takes {} argument(s) but {} were given",
                    h.name(),
                    h.arity(),
                    args.len()
                ),
                name.span,
            );
            return (konst(Const::Nihil), Ty::Any);
        }
        let params = h.params();
        let mut ops = Vec::with_capacity(args.len());
        let mut tys = Vec::with_capacity(args.len());
        for (a, want) in args.iter().zip(&params) {
            if matches!(want, Ty::Any) {
                let (o, t) = self.expr(a, None);
                ops.push(o);
                tys.push(t);
            } else {
                ops.push(self.expr_to(a, want));
                tys.push(want.clone());
            }
        }
        let ret = h.result(&tys);
        (self.temp(Rhs::Host(h, ops), ret.clone(), span), ret)
    }

    fn direct_call(
        &mut self,
        f: FuncId,
        args: &[ast::Expr],
        name_span: Span,
        span: Span,
    ) -> Lowered {
        let sig = self.sigs[f.0 as usize].clone();
        if sig.params.len() != args.len() {
            let fname = self.program.func(f).name.clone();
            self.error(
                codes::SEM_ARITY,
                format!(
                    "`{fname}` takes {} argument(s) but {} were given",
                    sig.params.len(),
                    args.len()
                ),
                name_span,
            );
        }
        if sig.throws {
            self.check_may_throw(span, "a call to a function that may throw (`⇥`)");
        }
        let ops = args
            .iter()
            .enumerate()
            .map(|(i, a)| match sig.params.get(i) {
                Some(t) => self.expr_to(a, t),
                None => self.expr(a, None).0,
            })
            .collect();
        (self.temp(Rhs::Call(f, ops), sig.ret.clone(), span), sig.ret)
    }

    fn method_call(
        &mut self,
        base: &ast::Expr,
        name: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
        want_value: bool,
    ) -> Lowered {
        let recv_ty = self.peek_type(base);
        // A genus method, found from the receiver's type or, when unknown, by a
        // method name that only one genus declares.
        let genus_method = match &recv_ty {
            Ty::Record(g) => self.methods.get(&(*g, name.name.clone())).copied(),
            Ty::Any if Method::from_name(&name.name).is_none() => {
                let hits: Vec<FuncId> = self
                    .methods
                    .iter()
                    .filter(|((_, n), _)| *n == name.name)
                    .map(|(_, f)| *f)
                    .collect();
                if hits.len() == 1 {
                    Some(hits[0])
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(f) = genus_method {
            let sig = self.sigs[f.0 as usize].clone();
            if sig.params.len() != args.len() + 1 {
                self.error(
                    codes::SEM_ARITY,
                    format!(
                        "method `{}` takes {} argument(s) but {} were given",
                        name.name,
                        sig.params.len() - 1,
                        args.len()
                    ),
                    name.span,
                );
            }
            if sig.throws {
                self.check_may_throw(span, "a call to a method that may throw (`⇥`)");
            }
            let ops: Vec<Operand> = args
                .iter()
                .enumerate()
                .map(|(i, a)| match sig.params.get(i + 1) {
                    Some(t) => self.expr_to(a, t),
                    None => self.expr(a, None).0,
                })
                .collect();
            if self.is_place(base) {
                // `place` reports why a path is not a place (e.g. an unknown field).
                let Some((place, _)) = self.place(base) else {
                    return (konst(Const::Nihil), Ty::Any);
                };
                let dst = want_value.then(|| self.new_slot("", sig.ret.clone()));
                self.emit(Stmt::CallInPlace {
                    dst,
                    func: f,
                    place,
                    args: ops,
                    span,
                });
                return match dst {
                    Some(d) => (Operand::Slot(d), sig.ret),
                    None => (konst(Const::Vacuum), Ty::Vacuum),
                };
            }
            let (recv, _) = self.expr(base, None);
            let mut all = vec![recv];
            all.extend(ops);
            return (self.temp(Rhs::Call(f, all), sig.ret.clone(), span), sig.ret);
        }
        // A field holding a function value: p.f(x).
        if let Ty::Record(g) = &recv_ty {
            let has_field = self.program.genera[g.0 as usize]
                .fields
                .iter()
                .any(|f| f.name == name.name);
            if has_field {
                let (fv, fty) = self.field(base, name, name.span);
                let ret = match fty {
                    Ty::Func(_, r) => *r,
                    _ => Ty::Any,
                };
                let ops = args.iter().map(|a| self.expr(a, None).0).collect();
                return (self.temp(Rhs::CallValue(fv, ops), ret.clone(), span), ret);
            }
        }
        if Op::from_method(&name.name).is_some() {
            let tensor_typed = matches!(recv_ty, Ty::Tensor { .. });
            if tensor_typed
                || (!Op::shared_with_lists(&name.name) && Method::from_name(&name.name).is_none())
            {
                return self
                    .tensor_method(base, name, args, span)
                    .unwrap_or((konst(Const::Nihil), Ty::Any));
            }
        }
        let Some(method) = Method::from_name(&name.name) else {
            let mut d = Diagnostic::error(
                codes::SEM_UNKNOWN_FUNCTION,
                format!(
                    "no method `{}` on a value of type `{}`",
                    name.name,
                    print::ty(&self.program, &recv_ty)
                ),
                name.span,
            );
            let mut near_hint = self.method_hint(&recv_ty, &name.name);
            if let ExprKind::Name(id) = &base.kind {
                let m = self.cur_module();
                let is_fn = matches!(self.modules[m].values.get(&id.name), Some(ModItem::Func(_)));
                if self.local(&id.name).is_none() && is_fn {
                    near_hint = None;
                    d = d.with_hint(format!(
                        "`{0}` is a function here: `importa … privata {0}` binds the item when the module exports a declaration named `{0}`; to use the module as a namespace, import it under a name it does not export",
                        id.name
                    ));
                }
            }
            if let Some(h) = near_hint {
                d = d.with_hint(h);
            }
            self.diags.push(d);
            return (konst(Const::Nihil), Ty::Any);
        };
        let ret = method_type(method, &recv_ty);
        let elem = match &recv_ty {
            Ty::List(e) => (**e).clone(),
            _ => Ty::Any,
        };
        let ops: Vec<Operand> = args
            .iter()
            .map(|a| {
                if method == Method::Appende {
                    self.expr_to(a, &elem)
                } else {
                    self.expr(a, None).0
                }
            })
            .collect();
        if method.mutates() && self.is_place(base) {
            // `place` reports why a path is not a place (e.g. an unknown field).
            let Some((place, _)) = self.place(base) else {
                return (konst(Const::Nihil), Ty::Any);
            };
            let dst = self.new_slot("", ret.clone());
            self.emit(Stmt::MethodInPlace {
                dst: Some(dst),
                method,
                place,
                args: ops,
                span,
            });
            return (Operand::Slot(dst), ret);
        }
        let (recv, _) = self.expr(base, None);
        (
            self.temp(Rhs::Method(method, recv, ops), ret.clone(), span),
            ret,
        )
    }

    /// The static type of an expression without emitting code (names, fields, ego).
    fn peek_type(&mut self, e: &ast::Expr) -> Ty {
        match &e.kind {
            ExprKind::Name(id) => match self.local(&id.name).map(|l| l.slot) {
                Some(s) => self.slot_ty(s),
                None => {
                    let m = self.cur_module();
                    match self.modules[m].values.get(&id.name) {
                        Some(ModItem::Global(g)) => self.program.globals[g.0 as usize].ty.clone(),
                        _ => Ty::Any,
                    }
                }
            },
            ExprKind::Ego => self.cx().ego.map_or(Ty::Any, |s| self.slot_ty(s)),
            ExprKind::Field { expr, name } => match self.peek_type(expr) {
                Ty::Record(g) => {
                    let genus = &self.program.genera[g.0 as usize];
                    genus
                        .fields
                        .iter()
                        .find(|f| f.name == name.name)
                        .map_or(Ty::Any, |f| f.ty.clone())
                }
                _ => Ty::Any,
            },
            ExprKind::Index { expr, .. } => match self.peek_type(expr) {
                Ty::List(e) => *e,
                Ty::Map(_, v) => *v,
                _ => Ty::Any,
            },
            ExprKind::Record { path, .. } => {
                let m = self.cur_module();
                match self.modules[m].types.get(&path[0].name) {
                    Some(TypeName::Genus(g)) if path.len() == 1 => Ty::Record(*g),
                    _ => Ty::Any,
                }
            }
            ExprKind::Lit(Literal::Text(_)) | ExprKind::Template { .. } => Ty::Text,
            ExprKind::List(_) => Ty::List(Box::new(Ty::Any)),
            _ => Ty::Any,
        }
    }
}

fn binary_type(op: BinOp, l: &Ty, r: &Ty) -> Ty {
    use BinOp::*;
    match op {
        Eq | Ne | NumEq | NumNe | Lt | Gt | Le | Ge => Ty::Bool,
        Add | Sub | Mul | Div | Rem | Dot | Hadamard => match (l, r) {
            (Ty::Int, Ty::Int) => Ty::Int,
            (Ty::Float, Ty::Int | Ty::Float) | (Ty::Int, Ty::Float) => Ty::Float,
            (Ty::Text, Ty::Text) if op == Add => Ty::Text,
            _ => Ty::Any,
        },
        BitAnd | BitOr | BitXor => match (l, r) {
            (Ty::Bool, Ty::Bool) => Ty::Bool,
            (Ty::Int, Ty::Int) => Ty::Int,
            _ => Ty::Any,
        },
        Shl | Shr => Ty::Int,
        Et | Aut => Ty::Bool,
        Vel => Ty::Any,
    }
}

fn method_type(m: Method, recv: &Ty) -> Ty {
    let elem = match recv {
        Ty::List(e) => (**e).clone(),
        Ty::Map(_, v) => (**v).clone(),
        Ty::Text => Ty::Text,
        _ => Ty::Any,
    };
    match m {
        Method::Longitudo => Ty::Int,
        Method::Vacua
        | Method::Nonvacua
        | Method::Continet
        | Method::Initium
        | Method::Finis
        | Method::Habet => Ty::Bool,
        Method::Approximata => Ty::Bool,
        Method::Accipe => Ty::Union(vec![elem, Ty::Nihil]),
        Method::Primus | Method::Ultimus | Method::Detrahe => elem,
        Method::Sectio | Method::Inverte | Method::Minuscula => recv.clone(),
        Method::TextSlice { .. } => Ty::Text,
        Method::Claves => match recv {
            Ty::Map(k, _) => Ty::List(k.clone()),
            _ => Ty::List(Box::new(Ty::Any)),
        },
        Method::Absolutum | Method::Maximus | Method::Minimus => recv.clone(),
        Method::Pavimentum => Ty::Int,
        Method::Potentia
        | Method::Radix
        | Method::Exponens
        | Method::Logarithmus
        | Method::Sinus
        | Method::Cosinus => Ty::Float,
        Method::Appende | Method::Pone | Method::Dele | Method::Ponde => Ty::Vacuum,
    }
}

/// Every identifier read in `e` (over-approximates captures; harmless).
fn free_names(e: &ast::Expr, out: &mut FxHashSet<String>) {
    let mut go = |x: &ast::Expr| free_names(x, out);
    match &e.kind {
        ExprKind::Name(i) => {
            out.insert(i.name.clone());
        }
        ExprKind::Lit(_) | ExprKind::Ego | ExprKind::Error => {}
        ExprKind::Unary { expr, .. }
        | ExprKind::Ascribe { expr, .. }
        | ExprKind::Field { expr, .. } => go(expr),
        ExprKind::Binary { lhs, rhs, .. } => {
            go(lhs);
            go(rhs);
        }
        ExprKind::Is { expr, .. } => go(expr),
        ExprKind::Range {
            start, end, step, ..
        } => {
            go(start);
            go(end);
            if let Some(s) = step {
                go(s);
            }
        }
        ExprKind::Convert { expr, fallback, .. } => {
            go(expr);
            if let Some(f) = fallback {
                go(f);
            }
        }
        ExprKind::Call { callee, args, .. } => {
            go(callee);
            args.iter().for_each(go);
        }
        ExprKind::Template { args, .. } | ExprKind::List(args) => args.iter().for_each(go),
        ExprKind::Index { expr, index } => {
            go(expr);
            go(index);
        }
        ExprKind::Map(entries) => entries.iter().for_each(|(_, v)| go(v)),
        ExprKind::Record { fields, .. } => fields.iter().for_each(|(_, v)| go(v)),
        ExprKind::Tuple { elems, .. } => elems.iter().for_each(go),
        ExprKind::Closure { body, .. } => go(body),
        ExprKind::Ad { arg, .. } => {
            if let Some(a) = arg {
                go(a);
            }
        }
    }
}
