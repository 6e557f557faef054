//! Non-null access: `e!.name`, `e![i]`, `e!(args)`. The `e!` part evaluates `e`, stops
//! the program with RUN023 when it is `nihil`, and gives it the static type `e` has
//! without `nihil` (docs/language.md § 6, "Non-null access").

use super::Lowered;
use crate::ir::lower::Lowerer;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast;

impl Lowerer<'_> {
    pub(super) fn non_null(&mut self, inner: &ast::Expr, span: Span) -> Lowered {
        let (v, t) = self.expr(inner, None);
        self.check_not_nihil(&v, inner, span);
        (v, strip_nihil(&t))
    }

    /// Emits the run-time test that stops the program when `v` (the value of `inner`)
    /// is `nihil`.
    pub(in crate::ir::lower) fn check_not_nihil(
        &mut self,
        v: &Operand,
        inner: &ast::Expr,
        span: Span,
    ) {
        let text = self.sources.text(inner.span.file);
        let source = text.get(inner.span.range()).unwrap_or("").to_string();
        let is_nihil = self.temp(Rhs::Is(v.clone(), IsTest::Nihil, false), Ty::Bool, span);
        let message = Operand::Const(Const::Text(format!(
            "`{source}` is nihil: `!` asserted that it has a value"
        )));
        self.emit(Stmt::If {
            cond: is_nihil,
            then: Block {
                stmts: vec![Stmt::Fatal {
                    kind: FatalKind::NonNull,
                    message,
                    span,
                }],
            },
            otherwise: Block::default(),
        });
    }
}

/// `t` without its `nihil` member: `T ∪ nihil` is `T`; a type that cannot be `nihil`
/// is itself.
pub fn strip_nihil(t: &Ty) -> Ty {
    match t {
        Ty::Union(ms) => {
            let rest: Vec<Ty> = ms.iter().filter(|m| **m != Ty::Nihil).cloned().collect();
            match rest.len() {
                0 => Ty::Any,
                1 => rest.into_iter().next().unwrap_or(Ty::Any),
                _ => Ty::Union(rest),
            }
        }
        Ty::Nihil => Ty::Any,
        other => other.clone(),
    }
}
