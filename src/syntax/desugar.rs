//! Helpers called by the grammar actions, so that each action stays a one-liner.
//! Checks that need more than the grammar (a record head that is not a type path,
//! a generic marker other than `magnitudo`) are reported here as parse errors.

use lalrpop_util::ParseError;

use super::ast::*;
use super::token::Tok;
use crate::diag::{codes, Diagnostic};
use crate::source::{FileId, Span};

type Res<T> = Result<T, ParseError<usize, Tok, Diagnostic>>;

pub fn sp(file: FileId, l: usize, r: usize) -> Span {
    Span::new(file, l, r)
}

pub fn expr(file: FileId, kind: ExprKind, l: usize, r: usize) -> Expr {
    Expr {
        kind,
        span: sp(file, l, r),
    }
}

pub fn ty(file: FileId, kind: TypeKind, l: usize, r: usize) -> Type {
    Type {
        kind,
        span: sp(file, l, r),
    }
}

fn user(
    file: FileId,
    code: codes::Code,
    msg: impl Into<String>,
    l: usize,
    r: usize,
) -> ParseError<usize, Tok, Diagnostic> {
    ParseError::User {
        error: Diagnostic::error(code, msg, sp(file, l, r)),
    }
}

pub fn error_item(file: FileId, l: usize, r: usize) -> Item {
    Item {
        annotations: Vec::new(),
        kind: ItemKind::Stmt(Stmt {
            kind: StmtKind::Error,
            span: sp(file, l, r),
        }),
        span: sp(file, l, r),
    }
}

/// A top-level `fixum T x ← e` becomes a module constant; any other top-level
/// declaration is kept as a statement for `check` to reject.
pub fn top_decl(file: FileId, kind: StmtKind, l: usize, r: usize) -> ItemKind {
    match kind {
        StmtKind::Decl {
            kind: BindKind::Fixum,
            ty: Some(ty),
            name: Some(name),
            value: Some(value),
        } => ItemKind::Fixum(TopFixum { ty, name, value }),
        other => ItemKind::Stmt(Stmt {
            kind: other,
            span: sp(file, l, r),
        }),
    }
}

pub fn import(
    path: StrLit,
    visibility: Option<Visibility>,
    n: Option<(Ident, Option<Ident>)>,
) -> Import {
    let (name, alias) = match n {
        Some((name, alias)) => (Some(name), alias),
        None => (None, None),
    };
    Import {
        path,
        visibility,
        name,
        alias,
    }
}

pub fn magnitudo(marker: Ident, name: Ident) -> Res<Generic> {
    if marker.name == "magnitudo" {
        Ok(Generic {
            magnitudo: true,
            name,
        })
    } else {
        Err(ParseError::User {
            error: Diagnostic::error(
                codes::PARSE_UNEXPECTED,
                format!("unexpected `{}` before a generic parameter", marker.name),
                marker.span,
            )
            .with_hint("the only marker allowed here is `magnitudo`"),
        })
    }
}

/// `incipit argumenta name … { … }`: the only word allowed between `incipit` and the
/// name is `argumenta`.
/// `probandum "name" mods { … }`: its suites and cases apart from its hooks.
pub fn suite(name: StrLit, modifiers: Vec<Modifier>, entries: Vec<SuiteEntry>) -> Suite {
    let mut items = Vec::new();
    let mut hooks = Vec::new();
    for e in entries {
        match e {
            SuiteEntry::Item(i) => items.push(*i),
            SuiteEntry::Hook(h) => hooks.push(h),
        }
    }
    Suite {
        name,
        modifiers,
        items,
        hooks,
    }
}

pub fn entry(args: Option<(Ident, Ident)>, exit: Option<Expr>, body: Block) -> Res<Entry> {
    let args = args_marker(args, "incipit")?;
    Ok(Entry { args, exit, body })
}

/// `argumenta name` after `incipit` or after a function's parameters (`after` names
/// which): the marker must be `argumenta`, in any reader locale (`args`, …), as the
/// word is read by its place.
pub fn args_marker(args: Option<(Ident, Ident)>, after: &str) -> Res<Option<Ident>> {
    match args {
        None => Ok(None),
        Some((marker, name))
            if crate::syntax::vocab::vocabulary().spells_anywhere(
                crate::syntax::vocab::Section::Keyword,
                "argumenta",
                &marker.name,
            ) =>
        {
            Ok(Some(name))
        }
        Some((marker, _)) => {
            let (msg, hint) = if after == "incipit" {
                (
                    format!("unexpected `{}` after `incipit`", marker.name),
                    "write `incipit argumenta name { … }` to bind the command line",
                )
            } else {
                (
                    format!("unexpected `{}` after the parameters", marker.name),
                    "write `functio f() argumenta name { … }` for a command that reads the command line",
                )
            };
            Err(ParseError::User {
                error: Diagnostic::error(codes::PARSE_UNEXPECTED, msg, marker.span).with_hint(hint),
            })
        }
    }
}

pub fn union(file: FileId, first: Type, rest: Vec<Type>, l: usize, r: usize) -> Type {
    let mut members = vec![first];
    members.extend(rest);
    ty(file, TypeKind::Union(members), l, r)
}

pub fn nat_arg(file: FileId, n: i64, l: usize, r: usize) -> Res<TypeArg> {
    if n < 0 {
        return Err(user(
            file,
            codes::PARSE_UNEXPECTED,
            "a type argument must be a natural number",
            l,
            r,
        ));
    }
    Ok(TypeArg::Nat(n as u64, sp(file, l, r)))
}

pub fn nat_dim(file: FileId, n: i64, l: usize, r: usize) -> Res<Dim> {
    if n < 0 {
        return Err(user(
            file,
            codes::PARSE_UNEXPECTED,
            "a dimension must be a natural number",
            l,
            r,
        ));
    }
    Ok(Dim::Nat(n as u64, sp(file, l, r)))
}

pub fn if_(first: CondArm, rest: Vec<CondArm>, otherwise: Option<Block>) -> StmtKind {
    let mut arms = vec![first];
    arms.extend(rest);
    StmtKind::If { arms, otherwise }
}

/// `ergo simple` is a one-statement block.
pub fn block_of(file: FileId, kind: StmtKind, l: usize, r: usize) -> Block {
    let span = sp(file, l, r);
    Block {
        stmts: vec![Stmt { kind, span }],
        span,
    }
}

pub fn closure(
    file: FileId,
    params: Vec<Param>,
    ret: Option<Type>,
    body: Expr,
    l: usize,
    r: usize,
) -> Expr {
    expr(
        file,
        ExprKind::Closure {
            params,
            ret,
            body: Box::new(body),
        },
        l,
        r,
    )
}

pub fn binary(file: FileId, op: BinOp, lhs: Expr, rhs: Expr, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        l,
        r,
    )
}

pub fn unary(file: FileId, op: UnOp, e: Expr, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Unary {
            op,
            expr: Box::new(e),
        },
        l,
        r,
    )
}

pub fn is(file: FileId, e: Expr, negated: bool, target: IsTarget, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Is {
            expr: Box::new(e),
            negated,
            target,
        },
        l,
        r,
    )
}

pub fn range(
    file: FileId,
    start: Expr,
    end: Expr,
    inclusive: bool,
    step: Option<Expr>,
    l: usize,
    r: usize,
) -> Expr {
    expr(
        file,
        ExprKind::Range {
            start: Box::new(start),
            end: Box::new(end),
            inclusive,
            step: step.map(Box::new),
        },
        l,
        r,
    )
}

pub fn convert(
    file: FileId,
    e: Expr,
    ty: Type,
    fallback: Option<Expr>,
    l: usize,
    r: usize,
) -> Expr {
    expr(
        file,
        ExprKind::Convert {
            expr: Box::new(e),
            ty,
            fallback: fallback.map(Box::new),
        },
        l,
        r,
    )
}

/// `e ↦ lo ‥ hi ⇥ f`: the range spans from `lo` to `hi`.
#[allow(clippy::too_many_arguments)]
pub fn clamp(
    file: FileId,
    e: Expr,
    lo: Expr,
    hi: Expr,
    inclusive: bool,
    fallback: Option<Expr>,
    l: usize,
    r: usize,
) -> Expr {
    let (rl, rr) = (lo.span.lo as usize, hi.span.hi as usize);
    let range = range(file, lo, hi, inclusive, None, rl, rr);
    expr(
        file,
        ExprKind::Clamp {
            expr: Box::new(e),
            range: Box::new(range),
            fallback: fallback.map(Box::new),
        },
        l,
        r,
    )
}

pub fn ternary(file: FileId, cond: Expr, then: Expr, otherwise: Expr, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Ternary {
            cond: Box::new(cond),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        },
        l,
        r,
    )
}

pub fn ascribe(file: FileId, e: Expr, ty: Type, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Ascribe {
            expr: Box::new(e),
            ty,
        },
        l,
        r,
    )
}

/// A call. A text literal applied to arguments is a template; `ad 'route'`
/// applied to one argument takes it as the route's payload.
pub fn call(
    file: FileId,
    callee: Expr,
    type_args: Vec<TypeArg>,
    mut args: Vec<Expr>,
    l: usize,
    r: usize,
) -> Expr {
    let kind = match callee.kind {
        ExprKind::Lit(Literal::Text(text)) if type_args.is_empty() => {
            ExprKind::Template { text, args }
        }
        ExprKind::Ad { route, arg: None } if type_args.is_empty() && args.len() == 1 => {
            ExprKind::Ad {
                route,
                arg: args.pop().map(Box::new),
            }
        }
        kind => ExprKind::Call {
            callee: Box::new(Expr {
                kind,
                span: callee.span,
            }),
            type_args,
            args,
        },
    };
    expr(file, kind, l, r)
}

pub fn field(file: FileId, e: Expr, name: Ident, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Field {
            expr: Box::new(e),
            name,
        },
        l,
        r,
    )
}

/// The asserted operand of `e!.f`, `e![i]`, `e!(…)`; its span covers `e!`.
pub fn non_null(file: FileId, e: Expr, l: usize, r: usize) -> Expr {
    expr(file, ExprKind::NonNull(Box::new(e)), l, r)
}

pub fn index(file: FileId, e: Expr, i: Expr, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Index {
            expr: Box::new(e),
            index: Box::new(i),
        },
        l,
        r,
    )
}

/// `Path { f = e }`: the head must be a name or a dotted path of names.
pub fn record(
    file: FileId,
    head: Expr,
    fields: Vec<(Ident, Expr)>,
    l: usize,
    r: usize,
) -> Res<Expr> {
    fn path_of(e: Expr, out: &mut Vec<Ident>) -> bool {
        match e.kind {
            ExprKind::Name(i) => {
                out.push(i);
                true
            }
            ExprKind::Field { expr, name } => {
                let ok = path_of(*expr, out);
                out.push(name);
                ok
            }
            _ => false,
        }
    }
    let head_span = head.span;
    let mut path = Vec::new();
    if !path_of(head, &mut path) {
        return Err(user(
            file,
            codes::PARSE_UNEXPECTED,
            "a record literal needs a type name before `{`",
            head_span.lo as usize,
            head_span.hi as usize,
        ));
    }
    Ok(expr(file, ExprKind::Record { path, fields }, l, r))
}

pub fn ad(file: FileId, route: String, rl: usize, rr: usize, l: usize, r: usize) -> Expr {
    expr(
        file,
        ExprKind::Ad {
            route: StrLit {
                value: route,
                span: sp(file, rl, rr),
            },
            arg: None,
        },
        l,
        r,
    )
}

/// A keyword used where any word is allowed (field names).
pub fn word(file: FileId, w: &str, l: usize, r: usize) -> Ident {
    Ident {
        name: w.to_string(),
        span: sp(file, l, r),
    }
}
