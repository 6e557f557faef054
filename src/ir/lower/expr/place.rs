//! Places: the targets of assignment and in-place mutation (a local or `ego`,
//! then field and index steps).

use crate::diag::codes;
use crate::ir::lower::Lowerer;
use crate::ir::*;
use crate::syntax::ast::{self, ExprKind};

impl Lowerer<'_> {
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
            // `x!.f ← v`: the test that `x` has a value, then the place `x`.
            ExprKind::NonNull(inner) => {
                let (v, _) = self.expr(inner, None);
                self.check_not_nihil(&v, inner, e.span);
                let (p, t) = self.place(inner)?;
                Some((p, super::strip_nihil(&t)))
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
    pub(super) fn is_place(&mut self, e: &ast::Expr) -> bool {
        match &e.kind {
            ExprKind::Name(id) => self.local(&id.name).is_some(),
            ExprKind::Ego => self.cx().ego.is_some(),
            ExprKind::Field { expr, .. }
            | ExprKind::Index { expr, .. }
            | ExprKind::NonNull(expr) => self.is_place(expr),
            _ => false,
        }
    }
}
