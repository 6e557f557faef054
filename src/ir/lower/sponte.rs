//! `sponte` parameters (docs/language.md § 4, "Optional parameters"): a caller may omit
//! the trailing ones. An omitted argument is `nihil`; `T x sponte vel d` replaces a
//! `nihil` argument with `d`, evaluated in the callee when the call starts, so that the
//! body sees a `T`. A required parameter after a `sponte` one is SEM027.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    /// The generic parameter names in scope in `f`: its own and its genus's.
    pub(super) fn generics_of(&self, f: &ast::Func, receiver: Option<GenusId>) -> Vec<String> {
        let mut names: Vec<String> = f.generics.iter().map(|g| g.name.name.clone()).collect();
        if let Some(g) = receiver {
            names.extend(self.genus_generics[g.0 as usize].iter().cloned());
        }
        names
    }

    /// Records how many arguments a call of `id` must give; reports a required
    /// parameter that follows a `sponte` one.
    pub(super) fn check_sponte_order(&mut self, id: FuncId, f: &ast::Func, method: bool) {
        let Some(first) = f.params.iter().position(|p| p.sponte.is_some()) else {
            return;
        };
        if let Some(p) = f.params[first..].iter().find(|p| p.sponte.is_none()) {
            let optional = &f.params[first].name.name;
            self.diags.push(
                Diagnostic::error(
                    codes::SEM_SPONTE_ORDER,
                    format!(
                        "parameter `{}` is required but follows the `sponte` parameter `{optional}`",
                        p.name.name
                    ),
                    p.span,
                )
                .with_hint("a caller can omit only trailing arguments: move the `sponte` parameters to the end"),
            );
        }
        self.min_args.insert(id, first + usize::from(method));
    }

    /// At the start of `f`'s body: `x ← d` for each `sponte vel d` parameter that is
    /// `nihil`, and the parameter's type without `nihil` from there on.
    pub(super) fn sponte_defaults(&mut self, f: &ast::Func, method: bool) {
        let m = self.cur_module();
        for (i, p) in f.params.iter().enumerate() {
            let Some(ast::Sponte {
                default: Some(d), ..
            }) = &p.sponte
            else {
                continue;
            };
            let slot = Slot((i + usize::from(method)) as u32);
            let ty = self.ty(m, &p.ty);
            let is_nihil = self.temp(
                Rhs::Is(Operand::Slot(slot), IsTest::Nihil, false),
                Ty::Bool,
                p.span,
            );
            self.push_block();
            let v = self.expr_to(d, &ty);
            self.emit(Stmt::Let {
                dst: slot,
                rhs: Rhs::Use(v),
                span: d.span,
            });
            let then = self.pop_block();
            self.emit(Stmt::If {
                cond: is_nihil,
                then,
                otherwise: Block::default(),
            });
            if let Some(info) = self.cx().slots.get_mut(slot.0 as usize) {
                info.ty = ty;
            }
        }
    }

    /// The arguments of a call of `f` with `given` of its `params` parameters: `Ok` with
    /// the number of `nihil`s to append for omitted `sponte` ones, `Err` with the
    /// accepted range when the count does not fit.
    pub(super) fn omitted_args(
        &self,
        f: FuncId,
        params: usize,
        given: usize,
    ) -> Result<usize, (usize, usize)> {
        let min = self.min_args.get(&f).copied().unwrap_or(params);
        if given >= min && given <= params {
            Ok(params - given)
        } else {
            Err((min, params))
        }
    }
}

/// The display of an accepted argument count: `2`, or `1 to 3`.
pub fn arity_range(min: usize, max: usize) -> String {
    if min == max {
        max.to_string()
    } else {
        format!("{min} to {max}")
    }
}
