//! SEM025: a function with a declared result must not reach the end of its body.
//!
//! A structural reachability walk over the AST, in the spirit of rustc's divergence
//! rules (docs/pipeline.md, "Missing `redde`"). A statement *diverges* when control
//! cannot continue after it: `redde`, `iace`, `mori`, `rumpe` and `perge` (the last two
//! leave for their loop), a block with a diverging statement, `si … secus` and
//! `elige … ceterum` whose every branch diverges, `fac … cape` whose body and handler
//! both diverge, and `dum verum { … }` without a `rumpe` that leaves it. Everything
//! else may fall through: `si` without `secus`, `elige` without `ceterum`, `itera`
//! (it may run zero times) and `dum` with any other condition. Conditions are never
//! evaluated (`si verum` is not special), as in rustc.

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::Ty;
use crate::source::Span;
use crate::syntax::ast::{Block, Expr, ExprKind, Func, Literal, Stmt, StmtKind};

/// Where control can reach the end of a body: the span to label and what to say.
#[derive(Clone, Debug, PartialEq)]
pub struct FallThrough {
    pub span: Span,
    pub note: &'static str,
}

/// How a statement ends.
enum Flow {
    /// Control cannot reach the next statement.
    Diverges,
    /// Control can reach the next statement; `Some` names the place inside the
    /// statement through which it can (`None`: the statement simply completes).
    Falls(Option<FallThrough>),
}

/// The walk's state: the first reachable `rumpe` that leaves the innermost loop.
#[derive(Default)]
struct Walk {
    rumpe: Option<Span>,
}

/// The first two bytes of a statement: its keyword (`si`, `dum`, …), for a label.
fn keyword(s: &Stmt, len: u32) -> Span {
    Span {
        hi: (s.span.lo + len).min(s.span.hi),
        ..s.span
    }
}

fn is_verum(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Lit(Literal::Bool(true)))
}

impl Walk {
    /// `None` when the block diverges, else where it can reach its end.
    fn block(&mut self, b: &Block, end_note: &'static str) -> Option<FallThrough> {
        let mut last = None;
        for s in &b.stmts {
            match self.stmt(s) {
                Flow::Diverges => return None,
                Flow::Falls(f) => last = f,
            }
        }
        Some(last.unwrap_or_else(|| FallThrough {
            span: block_end(b),
            note: end_note,
        }))
    }

    fn stmt(&mut self, s: &Stmt) -> Flow {
        const BRANCH: &str = "this branch ends without `redde`";
        match &s.kind {
            StmtKind::Redde(_)
            | StmtKind::Iace(_)
            | StmtKind::Mori(_)
            | StmtKind::Perge
            | StmtKind::Error => Flow::Diverges,
            StmtKind::Rumpe => {
                self.rumpe.get_or_insert(s.span);
                Flow::Diverges
            }
            StmtKind::Block(b) => match self.block(b, "this block ends without `redde`") {
                None => Flow::Diverges,
                Some(f) => Flow::Falls(Some(f)),
            },
            StmtKind::If { arms, otherwise } => {
                let mut first = None;
                for arm in arms {
                    if let Some(f) = self.block(&arm.body, BRANCH) {
                        first.get_or_insert(f);
                    }
                }
                let Some(other) = otherwise else {
                    return Flow::Falls(Some(FallThrough {
                        span: keyword(s, 2),
                        note: "this `si` has no `secus`: when no condition holds, control goes on past it",
                    }));
                };
                if let Some(f) = self.block(other, BRANCH) {
                    first.get_or_insert(f);
                }
                match first {
                    None => Flow::Diverges,
                    some => Flow::Falls(some),
                }
            }
            StmtKind::Elige {
                cases, otherwise, ..
            } => {
                let mut first = None;
                for case in cases {
                    if let Some(f) = self.block(&case.body, BRANCH) {
                        first.get_or_insert(f);
                    }
                }
                let Some(other) = otherwise else {
                    return Flow::Falls(Some(FallThrough {
                        span: keyword(s, 5),
                        note: "this `elige` has no `ceterum`: when no `casu` matches, control goes on past it",
                    }));
                };
                if let Some(f) = self.block(other, BRANCH) {
                    first.get_or_insert(f);
                }
                match first {
                    None => Flow::Diverges,
                    some => Flow::Falls(some),
                }
            }
            StmtKind::Fac { body, catch } => {
                let b = self.block(body, "this `fac` block ends without `redde`");
                let h = catch
                    .as_ref()
                    .and_then(|(_, h)| self.block(h, "this `cape` block ends without `redde`"));
                match (b, h) {
                    (None, None) => Flow::Diverges,
                    (Some(f), _) | (None, Some(f)) => Flow::Falls(Some(f)),
                }
            }
            StmtKind::While { cond, body } => {
                let outer = self.rumpe.take();
                // The body's own fall-through only loops back; what matters is whether
                // the loop can end.
                let _ = self.block(body, "");
                let left_by = std::mem::replace(&mut self.rumpe, outer);
                loop_exit(cond, keyword(s, 3), left_by)
            }
            // `fac { … } dum c`: like `dum c`, the loop ends when its condition is false.
            StmtKind::DoWhile { body, catch, cond } => {
                let outer = self.rumpe.take();
                let _ = self.block(body, "");
                if let Some((_, h)) = catch {
                    let _ = self.block(h, "");
                }
                let left_by = std::mem::replace(&mut self.rumpe, outer);
                loop_exit(cond, cond.span, left_by)
            }
            StmtKind::Iterate { body, .. } => {
                let outer = self.rumpe.take();
                let _ = self.block(body, "");
                self.rumpe = outer;
                Flow::Falls(Some(FallThrough {
                    span: keyword(s, 5),
                    note: "this loop can finish (or run zero times), and no `redde` follows it",
                }))
            }
            StmtKind::Decl { .. }
            | StmtKind::Destructure { .. }
            | StmtKind::Adfirma { .. }
            | StmtKind::Expr(_)
            | StmtKind::Assign { .. }
            | StmtKind::Tacet
            | StmtKind::Out { .. } => Flow::Falls(None),
        }
    }
}

/// The closing `}` of a braced block; for an `ergo` body (one simple statement whose
/// span is the block's), that statement.
/// How a `dum` or `fac … dum` loop can end: when its condition can be false (at
/// `at`), or by the `rumpe` that left it (`left_by`); else it never ends.
fn loop_exit(cond: &Expr, at: Span, left_by: Option<Span>) -> Flow {
    if !is_verum(cond) {
        return Flow::Falls(Some(FallThrough {
            span: at,
            note: "this loop ends when its condition is false, and no `redde` follows it",
        }));
    }
    match left_by {
        None => Flow::Diverges,
        Some(r) => Flow::Falls(Some(FallThrough {
            span: r,
            note: "this `rumpe` leaves the loop, and no `redde` follows it",
        })),
    }
}

fn block_end(b: &Block) -> Span {
    match b.stmts.as_slice() {
        [only] if only.span == b.span => b.span,
        _ => Span {
            lo: b.span.hi.saturating_sub(1).max(b.span.lo),
            ..b.span
        },
    }
}

/// Where `body` can reach its end, or `None` when every path diverges.
pub fn falls_through(body: &Block) -> Option<FallThrough> {
    Walk::default().block(
        body,
        "the end of the body is reachable here without `redde`",
    )
}

impl Lowerer<'_> {
    /// SEM025 for a function (or genus method) whose declared result `ret` is not
    /// `vacuum` (an absent result is `vacuum`) and whose body can reach its end.
    pub fn check_returns(&mut self, f: &Func, ret: &Ty) {
        if *ret == Ty::Vacuum {
            return;
        }
        let (Some(ret), Some(fall)) = (f.ret.as_ref(), falls_through(&f.body)) else {
            return;
        };
        let text = self.sources.text(ret.span.file);
        let shown = text
            .get(ret.span.range())
            .unwrap_or("its result")
            .to_string();
        let signature = Span {
            hi: ret.span.hi,
            ..f.span
        };
        self.diags.push(
            Diagnostic::error(
                codes::SEM_MISSING_RETURN,
                format!(
                    "`{}` can reach the end of its body without returning a `{shown}`",
                    f.name.name
                ),
                signature,
            )
            .with_label(signature, format!("declares a `{shown}` result"))
            .with_label(fall.span, fall.note)
            .with_hint(format!(
                "end every path with `redde <value>` (a `{shown}`), or with `iace`/`mori` where no value can be given"
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceMap;

    /// The body of the first function in `src`, parsed.
    fn body(src: &str) -> (Block, String) {
        let mut map = SourceMap::new();
        let file = map.add("t.fab", src);
        let m = crate::syntax::parse(&map, file).expect("parses");
        for item in m.items {
            if let crate::syntax::ast::ItemKind::Func(f) = item.kind {
                return (f.body, src.to_string());
            }
        }
        panic!("no function in {src}");
    }

    /// The labelled source text where `src`'s function falls through, if it does.
    fn fall(src: &str) -> Option<String> {
        let (b, text) = body(src);
        falls_through(&b).map(|f| text[f.span.range()].to_string())
    }

    #[test]
    fn diverging_bodies() {
        for src in [
            "functio f() → numerus { redde 1 }",
            "functio f(numerus n) → numerus { si n > 0 { redde 1 } secus { redde 2 } }",
            "functio f(numerus n) → numerus { si n > 0 ergo redde 1 sin n < 0 ergo redde 2 secus ergo redde 3 }",
            "functio f(numerus n) → numerus { elige n { casu 1 ergo redde 1 ceterum ergo redde 2 } }",
            "functio f() → numerus { dum verum { nota 1 } }",
            "functio f() → numerus { dum verum { itera ab 0‥3 fixum i { si i ≡ 1 ergo rumpe } } }",
            "functio f() → numerus { mori \"x\" }",
            "functio f() → numerus ⇥ textus { iace \"x\" }",
            "functio f() → numerus { fac { redde 1 } cape e { redde 2 } }",
            "functio f() → numerus { fac { redde 1 } }",
            "functio f() → numerus { { redde 1 } nota 2 }",
            "functio f() → numerus { dum verum { si verum { rumpe } redde 1 } redde 2 }",
        ] {
            assert_eq!(fall(src), None, "{src}");
        }
    }

    #[test]
    fn falling_bodies_name_the_place() {
        let cases = [
            (
                "functio f(numerus n) → numerus { si n > 0 ergo redde 1 }",
                "si",
            ),
            ("functio f() → numerus { nota 1 }", "}"),
            ("functio f() → numerus { }", "}"),
            (
                "functio f(numerus n) → numerus { si n > 0 { redde 1 } secus { nota 2 } }",
                "}",
            ),
            (
                "functio f(numerus n) → numerus { si n > 0 ergo redde 1 secus ergo nota 2 }",
                "nota 2",
            ),
            (
                "functio f(numerus n) → numerus { elige n { casu 1 ergo redde 1 } }",
                "elige",
            ),
            ("functio f() → numerus { dum verum { rumpe } }", "rumpe"),
            (
                "functio f(bivalens b) → numerus { dum b { redde 1 } }",
                "dum",
            ),
            (
                "functio f() → numerus { itera ab 0‥3 fixum i { redde i } }",
                "itera",
            ),
            (
                "functio f() → numerus { fac { redde 1 } cape e { nota e } }",
                "}",
            ),
            ("functio f() → numerus { redde 1; nota 2 }", ""),
        ];
        for (src, want) in cases {
            if want.is_empty() {
                assert_eq!(fall(src), None, "{src}");
            } else {
                assert_eq!(fall(src).as_deref(), Some(want), "{src}");
            }
        }
    }
}
