//! Calls and method resolution: direct and module-qualified calls, `hospes.*` host
//! functions, calls of function values, genus methods (in place when the receiver
//! is a place), tensor methods and the built-in methods with their result types.

use super::{konst, Lowered};
use crate::diag::{codes, suggest, Diagnostic};
use crate::ir::host::Host;
use crate::ir::lower::calls::CallTarget;
use crate::ir::lower::intrinsics::{self, Spelled};
use crate::ir::lower::sizes::ArgInfo;
use crate::ir::lower::sponte::arity_range;
use crate::ir::lower::types::TypeName;
use crate::ir::lower::{Lowerer, ModItem};
use crate::ir::ops::Op;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind, Literal};

impl Lowerer<'_> {
    /// A call expression. `want_value` is false for expression statements.
    pub(super) fn call(&mut self, e: &ast::Expr, want_value: bool) -> Lowered {
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
                self.calls.record(name.span, CallTarget::Declared);
                return self.tensor_intrinsic(&name.name, type_args, &args[0], span);
            }
        }
        match &callee.kind {
            ExprKind::Name(id) if self.local(&id.name).is_none() => {
                let m = self.cur_module();
                match self.modules[m].values.get(&id.name).copied() {
                    Some(ModItem::Func(f)) => {
                        return self.direct_call(f, args, type_args, id.span, span)
                    }
                    Some(ModItem::Global(_)) => {}
                    // `scriptum("…§…", args…)`: the call form of a template.
                    None if self.is_word(m, &id.name, "scriptum") => {
                        if let Some(ExprKind::Lit(Literal::Text(text))) =
                            args.first().map(|a| &a.kind)
                        {
                            return self.template(text, &args[1..], span);
                        }
                        self.error(
                            codes::SEM_TEMPLATE_ARITY,
                            format!("`{}` takes a text literal first: its template", id.name),
                            id.span,
                        );
                        for a in args {
                            self.expr(a, None);
                        }
                        return (konst(Const::Text(String::new())), Ty::Text);
                    }
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
                let m = self.cur_module();
                if let ExprKind::Name(alias) = &base.kind {
                    if alias.name == "hospes"
                        && self.local(&alias.name).is_none()
                        && self.module_alias(m, "hospes").is_none()
                    {
                        self.calls.record(name.span, CallTarget::Declared);
                        return self.host_call(name, args, span);
                    }
                }
                // Module function: alias.f(...), ns.alias.f(...)
                if let Some(target) = self.module_path(m, base) {
                    self.calls.record(name.span, CallTarget::Declared);
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
                                    namespace_text(base),
                                    name.name
                                ),
                                name.span,
                                hint,
                            );
                            return (konst(Const::Nihil), Ty::Any);
                        }
                    };
                    if let Some(lowered) = self.int_planata(target, name, args, span) {
                        return lowered;
                    }
                    return self.direct_call(f, args, type_args, name.span, span);
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

    /// `norma:tensor`'s `planata(t)` of a numerus tensor: the tensor op itself, whose
    /// list keeps the numerus elements (`t.planata()`); the function is declared on
    /// `tf32`, whose list is of f32. `None` for any other call.
    fn int_planata(
        &mut self,
        target: usize,
        name: &ast::Ident,
        args: &[ast::Expr],
        span: Span,
    ) -> Option<Lowered> {
        let norma_planata = name.name == "planata" && self.modules[target].name == "norma:tensor";
        let [arg] = args else { return None };
        if !norma_planata || !matches!(self.peek_type(arg), Ty::Tensor { int: true, .. }) {
            return None;
        }
        let operand = self.expr(arg, None);
        Some(self.tensor_op(Op::Planata, vec![operand], None, span))
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
        type_args: &[ast::TypeArg],
        name_span: Span,
        span: Span,
    ) -> Lowered {
        let sig = self.sigs[f.0 as usize].clone();
        if self.cli_fns.contains_key(&f) {
            let fname = self.program.func(f).name.clone();
            self.error(
                codes::SEM_ARITY,
                format!("`{fname}` reads the command line (`argumenta`): the command line calls it, a program cannot"),
                name_span,
            );
            return (konst(Const::Nihil), sig.ret);
        }
        let omitted = match self.omitted_args(f, sig.params.len(), args.len()) {
            Ok(n) => n,
            Err((min, max)) => {
                let fname = self.program.func(f).name.clone();
                self.error(
                    codes::SEM_ARITY,
                    format!(
                        "`{fname}` takes {} argument(s) but {} were given",
                        arity_range(min, max),
                        args.len()
                    ),
                    name_span,
                );
                0
            }
        };
        if sig.throws {
            self.check_may_throw(span, "a call to a function that may throw (`⇥`)");
        }
        let (mut ops, infos) = self.call_args(&sig, args, 0);
        ops.extend((0..omitted).map(|_| konst(Const::Nihil)));
        let (ret, rigid) = self.unify_sizes(f, &infos, type_args, span, &sig.ret);
        let t = self.temp(Rhs::Call(f, ops), ret.clone(), span);
        self.note_rigid(&t, rigid);
        (t, ret)
    }

    /// Lowers call arguments against `sig.params[offset..]`, keeping each one's
    /// static type for the size check (src/ir/lower/sizes.rs).
    fn call_args(
        &mut self,
        sig: &crate::ir::lower::Sig,
        args: &[ast::Expr],
        offset: usize,
    ) -> (Vec<Operand>, Vec<ArgInfo>) {
        let mut ops = Vec::with_capacity(args.len());
        let mut infos = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let (op, ty) = match sig.params.get(i + offset) {
                Some(t) => self.expr_to_typed(a, t),
                None => self.expr(a, None),
            };
            infos.push(ArgInfo {
                param: i + offset,
                span: a.span,
                ty,
                op: op.clone(),
            });
            ops.push(op);
        }
        (ops, infos)
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
        // The built-in the spelling names in this module's reader locale.
        let locale = self.modules[self.cur_module()].locale;
        // A number receiver (a literal, arithmetic) picks the number method of a
        // shared term (`exp`).
        let pick_ty = match self.pick_type(base) {
            Ty::Any => recv_ty.clone(),
            known => known,
        };
        let spelled = intrinsics::resolve(locale, &name.name, &pick_ty);
        let internal: &str = match &spelled {
            Spelled::Faber(n) => n,
            Spelled::AsWritten => &name.name,
            Spelled::Unimplemented(_) | Spelled::Foreign => "",
        };
        // A genus method, found from the receiver's type or, when unknown, by a
        // method name that only one genus declares.
        let genus_method = match &recv_ty {
            Ty::Record(g) => self.methods.get(&(*g, name.name.clone())).copied(),
            Ty::Any if Method::from_name(internal).is_none() => {
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
            self.calls.record(name.span, CallTarget::Declared);
            let sig = self.sigs[f.0 as usize].clone();
            let omitted = match self.omitted_args(f, sig.params.len(), args.len() + 1) {
                Ok(n) => n,
                Err((min, max)) => {
                    self.error(
                        codes::SEM_ARITY,
                        format!(
                            "method `{}` takes {} argument(s) but {} were given",
                            name.name,
                            arity_range(min.saturating_sub(1), max - 1),
                            args.len()
                        ),
                        name.span,
                    );
                    0
                }
            };
            if sig.throws {
                self.check_may_throw(span, "a call to a method that may throw (`⇥`)");
            }
            let (mut ops, infos) = self.call_args(&sig, args, 1);
            ops.extend((0..omitted).map(|_| konst(Const::Nihil)));
            let (ret, rigid) = self.unify_sizes(f, &infos, &[], span, &sig.ret);
            let sig = crate::ir::lower::Sig { ret, ..sig };
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
            let t = self.temp(Rhs::Call(f, all), sig.ret.clone(), span);
            self.note_rigid(&t, rigid);
            return (t, sig.ret);
        }
        // A field holding a function value: p.f(x).
        if let Ty::Record(g) = &recv_ty {
            let has_field = self.program.genera[g.0 as usize]
                .fields
                .iter()
                .any(|f| f.name == name.name);
            if has_field {
                self.calls.record(name.span, CallTarget::Declared);
                let (fv, fty) = self.field(base, name, name.span);
                let ret = match fty {
                    Ty::Func(_, r) => *r,
                    _ => Ty::Any,
                };
                let ops = args.iter().map(|a| self.expr(a, None).0).collect();
                return (self.temp(Rhs::CallValue(fv, ops), ret.clone(), span), ret);
            }
        }
        if let Spelled::Unimplemented(row) = spelled {
            return self.unimplemented_intrinsic(row, name, args);
        }
        // `x.addita(y)` on a number is `x + y` (src/ir/lower/twins.rs).
        if let Some(lowered) = self.number_twin(base, &pick_ty, internal, args, span) {
            self.calls.record(
                name.span,
                CallTarget::Builtin {
                    faber: internal.to_string(),
                    recv: pick_ty,
                },
            );
            return lowered;
        }
        let internal = internal.to_string();
        let builtin = CallTarget::Builtin {
            faber: internal.clone(),
            recv: pick_ty,
        };
        // On a text, `divide` is the split (the vocabulary's `divide` row, English
        // `split`), not faber's elementwise division of the same name.
        let text_split = internal == "divide" && recv_ty == Ty::Text;
        if Op::from_method(&internal).is_some() && !text_split {
            let tensor_typed = matches!(recv_ty, Ty::Tensor { .. });
            if tensor_typed
                || (!Op::shared_with_lists(&internal) && Method::from_name(&internal).is_none())
            {
                self.calls.record(name.span, builtin);
                let op_name = ast::Ident {
                    name: internal,
                    span: name.span,
                };
                return self
                    .tensor_method(base, &op_name, &name.name, args, span)
                    .unwrap_or((konst(Const::Nihil), Ty::Any));
            }
        }
        let method = if text_split {
            Some(Method::Divide)
        } else {
            Method::from_name(&internal)
        };
        let Some(method) = method else {
            let mut d = Diagnostic::error(
                codes::SEM_UNKNOWN_FUNCTION,
                format!(
                    "no method `{}` on a value of type `{}`",
                    name.name,
                    self.show_ty(&recv_ty)
                ),
                name.span,
            );
            let mut near_hint = self.method_hint(&recv_ty, &name.name);
            if matches!(spelled, Spelled::Foreign) {
                near_hint = Some(format!(
                    "`{}` is the Latin spelling; this file reads locale `{}`, where it is `{}`",
                    name.name,
                    locale.code(),
                    intrinsics::spell(locale, &name.name)
                ));
            }
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
        self.calls.record(name.span, builtin);
        if !self.data_method_ok(&recv_ty, method, name) {
            return (konst(Const::Nihil), Ty::Any);
        }
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

    /// `.sort()` and the like: a term of the reader vocabulary that faber does not
    /// implement (docs/language.md § Reader locales lists them).
    fn unimplemented_intrinsic(
        &mut self,
        row: &crate::syntax::vocab::Row,
        name: &ast::Ident,
        args: &[ast::Expr],
    ) -> Lowered {
        for a in args {
            self.expr(a, None);
        }
        let canonical = if row.canonical == name.name {
            String::new()
        } else {
            format!(" (canonical `{}`)", row.canonical)
        };
        self.diags.push(
            Diagnostic::error(
                codes::SEM_UNSUPPORTED,
                format!(
                    "the intrinsic method `{}`{canonical} is outside the subset faber supports",
                    name.name
                ),
                name.span,
            )
            .with_hint(
                "docs/language.md § Reader locales lists the intrinsics faber does not implement",
            ),
        );
        (konst(Const::Nihil), Ty::Any)
    }

    /// The static type of an expression without emitting code (names, fields, ego).
    /// [`Self::peek_type`], with a number literal's own type.
    fn peek_number(&mut self, e: &ast::Expr) -> Ty {
        match &e.kind {
            ExprKind::Lit(Literal::Int(_)) => Ty::Int,
            ExprKind::Lit(Literal::Float(_)) => Ty::Float,
            _ => self.peek_type(e),
        }
    }

    pub(super) fn peek_type(&mut self, e: &ast::Expr) -> Ty {
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
            ExprKind::NonNull(inner) => super::strip_nihil(&self.peek_type(inner)),
            // A chain of operator twins on a number stays a number: `x.addita(1.0)
            // .multiplicata(3.0)` (src/ir/lower/twins.rs).
            ExprKind::Call { callee, args, .. } => match &callee.kind {
                ExprKind::Field { expr, name } => {
                    let recv = self.peek_number(expr);
                    let locale = self.modules[self.cur_module()].locale;
                    let twin = match intrinsics::resolve(locale, &name.name, &recv) {
                        Spelled::Faber(n) => crate::ir::lower::twins::gives_number(n),
                        Spelled::AsWritten => crate::ir::lower::twins::gives_number(&name.name),
                        _ => false,
                    };
                    if !twin || !matches!(recv, Ty::Int | Ty::Float) {
                        return Ty::Any;
                    }
                    // A numerus with a fractus operand gives a fractus.
                    let mut float_arg = false;
                    for a in args {
                        float_arg |= self.peek_number(a) == Ty::Float;
                    }
                    if float_arg {
                        Ty::Float
                    } else {
                        recv
                    }
                }
                _ => Ty::Any,
            },
            _ => Ty::Any,
        }
    }
}

pub(super) fn method_type(m: Method, recv: &Ty) -> Ty {
    let elem = match recv {
        Ty::List(e) => (**e).clone(),
        Ty::Map(_, v) => (**v).clone(),
        Ty::Text => Ty::Text,
        Ty::Json { .. } => Ty::Json { doc: false },
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
        Method::Sectio | Method::Inverte | Method::Minuscula | Method::Recide => recv.clone(),
        Method::Divide => Ty::List(Box::new(Ty::Text)),
        Method::TextSlice { .. } => Ty::Text,
        Method::Claves => match recv {
            Ty::Map(k, _) => Ty::List(k.clone()),
            Ty::Json { .. } => Ty::List(Box::new(Ty::Text)),
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
        Method::Dele => Ty::Bool,
        Method::Appende | Method::Pone | Method::Ponde | Method::Adde | Method::Ordina => {
            Ty::Vacuum
        }
        Method::Inter | Method::Unio => Ty::Union(vec![Ty::Interval, Ty::Nihil]),
        Method::Interval { .. } => Ty::Interval,
        Method::Clamp => Ty::Any,
    }
}

/// How a namespace expression reads in a message: `solum`, `faber.solum`.
pub(super) fn namespace_text(e: &ast::Expr) -> String {
    match &e.kind {
        ExprKind::Name(id) => id.name.clone(),
        ExprKind::Field { expr, name } => format!("{}.{}", namespace_text(expr), name.name),
        _ => "…".to_string(),
    }
}
