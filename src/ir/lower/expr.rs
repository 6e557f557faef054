//! Expressions → A-normal-form IR: each computation becomes a `Let` into a fresh
//! slot and the expression's value is an [`Operand`]. Names, methods, fields and
//! genus constructors are resolved here.
//!
//! This file holds the dispatch over expression kinds, names, literals and
//! templates; the larger kinds have a file each: `binary` (operators), `call`
//! (calls and method resolution), `closure`, `fields` (fields and genus records)
//! and `place` (assignment targets).

mod binary;
mod call;
mod closure;
mod fields;
mod nonnull;
mod pick;
mod place;
mod ternary;

pub use nonnull::strip_nihil;

use super::operators::{bin_op, un_op};
use super::types::{incompatible, needs_coercion};
use super::{Lowerer, ModItem};
use crate::diag::{codes, Diagnostic};
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
        self.expr_to_typed(e, want).0
    }

    /// [`Self::expr_to`], also giving the static type the expression had before any
    /// coercion (the size check of generic calls reads its shape).
    pub fn expr_to_typed(&mut self, e: &ast::Expr, want: &Ty) -> (Operand, Ty) {
        let (op, ty) = self.expr(e, Some(want));
        if incompatible(want, &ty) {
            let msg = format!(
                "expected `{}`, found `{}`",
                self.show_ty(want),
                self.show_ty(&ty)
            );
            self.error(super::types::mismatch_code(want, &ty), msg, e.span);
        }
        if needs_coercion(want, &ty) {
            if let (Operand::Const(Const::Int(i)), Ty::Float) = (&op, want) {
                return (konst(Const::Float(*i as f64)), ty);
            }
            return (
                self.temp(Rhs::Coerce(op, want.clone()), want.clone(), e.span),
                ty,
            );
        }
        (op, ty)
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
            } if expected == Some(&Ty::Interval) => {
                self.interval_value(start, end, *inclusive, step.as_deref(), span)
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
                let (v, from) = self.expr(expr, None);
                self.check_data_conversion(&from, &target, span);
                self.check_conversion(&from, &target, span);
                let rhs = Rhs::Convert(v, target.clone());
                self.may_fail(rhs, target, fallback.as_deref(), span)
            }
            ExprKind::Clamp {
                expr,
                range,
                fallback,
            } => self.clamp(expr, range, fallback.as_deref(), span),
            ExprKind::Ascribe { expr, ty } => {
                let m = self.cur_module();
                let target = self.ty(m, ty);
                let op = self.expr_to(expr, &target);
                (op, target)
            }
            ExprKind::Call { .. } => self.call(e, true),
            ExprKind::Template { text, args } => self.template(text, args, span),
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => self.ternary(cond, then, otherwise, expected),
            ExprKind::Field { expr, name } => self.field(expr, name, span),
            ExprKind::Index { expr, index } => {
                let (v, t) = self.expr(expr, None);
                if let ExprKind::Range { .. } = index.kind {
                    return self.range_index(v, &t, index, span);
                }
                let (i, _) = self.expr(index, None);
                // A map whose values may be `nihil` (or any value) reads a missing key
                // as `nihil`, as `accipe` does; any other map stops there (RUN002).
                if let Ty::Map(_, val) = &t {
                    if **val == Ty::Any || super::types::admits_nihil(val) {
                        let ty = (**val).clone();
                        let rhs = Rhs::Method(Method::Accipe, v, vec![i]);
                        return (self.temp(rhs, ty.clone(), span), ty);
                    }
                }
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
            ExprKind::NonNull(inner) => self.non_null(inner, span),
            ExprKind::Error => (konst(Const::Nihil), Ty::Any),
        }
    }

    /// A failed `↦` throws; like `iace` it must be caught or declared, except in
    /// `incipit` and tests, where it is fatal (docs/language.md § 5).
    fn check_may_throw_convert(&mut self, _span: Span) {}

    /// `rhs` (a conversion that may throw) as a value of type `target`; with `⇥ d`, a
    /// throw gives `d` instead.
    pub(super) fn may_fail(
        &mut self,
        rhs: Rhs,
        target: Ty,
        fallback: Option<&ast::Expr>,
        span: Span,
    ) -> Lowered {
        match fallback {
            None => {
                self.check_may_throw_convert(span);
                (self.temp(rhs, target.clone(), span), target)
            }
            Some(d) => {
                let dst = self.new_slot("", target.clone());
                self.push_block();
                self.emit(Stmt::Let { dst, rhs, span });
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
            None if self.is_vacua(m, &id.name) => self.vacua(expected, id.span),
            // `lege`: one line of standard input (docs/language.md § "Standard input").
            None if self.is_word(m, &id.name, "lege") => {
                let ty = Ty::Union(vec![Ty::Text, Ty::Nihil]);
                (
                    self.temp(
                        Rhs::Host(crate::ir::host::Host::LegeLineam, vec![]),
                        ty.clone(),
                        id.span,
                    ),
                    ty,
                )
            }
            None if crate::syntax::vocab::vocabulary()
                .out_of_subset(self.modules[m].locale, &id.name)
                .is_some() =>
            {
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
                let hint = self
                    .foreign_keyword_hint(m, &id.name)
                    .or_else(|| self.name_hint(&id.name));
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
            Some(t @ Ty::Set(_)) => self.empty_set(t, span),
            Some(Ty::Text) => (konst(Const::Text(String::new())), Ty::Text),
            Some(Ty::Int) => (konst(Const::Int(0)), Ty::Int),
            Some(Ty::Float) => (konst(Const::Float(0.0)), Ty::Float),
            _ => (konst(Const::Nihil), Ty::Nihil),
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
}
