//! Closures: each becomes an internal function whose first parameters are the
//! captured locals (by value, in name order), and a `Rhs::Closure` that binds them.

use rustc_hash::FxHashSet;

use super::Lowered;
use crate::ir::lower::Lowerer;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};

impl Lowerer<'_> {
    pub(super) fn closure(
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
        | ExprKind::Field { expr, .. }
        | ExprKind::NonNull(expr) => go(expr),
        ExprKind::Binary { lhs, rhs, .. } => {
            go(lhs);
            go(rhs);
        }
        ExprKind::Is { expr, .. } => go(expr),
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => {
            go(cond);
            go(then);
            go(otherwise);
        }
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
        ExprKind::Clamp {
            expr,
            range,
            fallback,
        } => {
            go(expr);
            go(range);
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
