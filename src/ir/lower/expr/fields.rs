//! Fields and genus records: `alias.NAME` of a module, `value.field` (by position,
//! from the static type or the one genus that declares the name) and
//! `Genus { field: … }` constructors with their declared defaults.

use super::{konst, Lowered};
use crate::diag::codes;
use crate::ir::lower::types::TypeName;
use crate::ir::lower::{Lowerer, ModItem};
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast;

impl Lowerer<'_> {
    pub(super) fn field(&mut self, base: &ast::Expr, name: &ast::Ident, span: Span) -> Lowered {
        // `alias.NAME` (or `ns.alias.NAME`) for a module namespace.
        let m = self.cur_module();
        if let Some(target) = self.module_path(m, base) {
            let alias = super::call::namespace_text(base);
            if !self.modules[target].exports.contains(&name.name) {
                let hint = self.member_hint(target, &name.name, false);
                self.error_hint(
                    codes::SEM_UNKNOWN_NAME,
                    format!("module `{alias}` has no public `{}`", name.name),
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
                        format!("`{alias}.{}` is not a value", name.name),
                        name.span,
                    );
                    return (konst(Const::Nihil), Ty::Any);
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

    pub(super) fn record(
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
}
