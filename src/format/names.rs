//! What the translation pass needs from a file's syntax tree: the words that stand
//! where the reader vocabulary applies (a primitive type's name, the method of a call
//! `x.m(…)`, the expressions `vacua` and `lege`, test modifiers, annotation names) and
//! every name the file declares. One walk over the tree; nothing is resolved.

use rustc_hash::{FxHashMap, FxHashSet};

/// The receiver of a method call, as far as its syntax tells.
#[derive(Clone, Debug)]
pub(super) enum Recv {
    /// `ego`: the genus whose method this is.
    Ego,
    /// A name (a variable, parameter or field read through `ego.`/`x.`).
    Name(String),
    /// A literal number.
    Number,
    /// A literal text or list, or a template: a built-in type.
    Literal,
    /// A record literal `Genus { … }`.
    Record,
    /// Anything else (a call's result, an index, …).
    Other,
}

use crate::syntax::ast::*;

/// The words of one file, by the role the grammar gives them.
#[derive(Default)]
pub(super) struct Words {
    /// Single-word type names (`numerus`, `lista` of `lista<f32>`).
    pub types: Vec<Ident>,
    /// The method name of each call `recv.m(…)` whose receiver is not a module, with
    /// what the receiver is.
    pub methods: Vec<(Ident, Recv)>,
    /// The one type name each name is declared with (`None`: declared with several,
    /// or without one).
    pub typed: FxHashMap<String, Option<String>>,
    /// Names used as expressions.
    pub names: Vec<Ident>,
    /// Test modifiers (`omitte`, `tag`, `solum`, …).
    pub modifiers: Vec<Ident>,
    /// Annotation names (`@ privata`, `@ radix`).
    pub annotations: Vec<Ident>,
    /// Names the file declares (functions, genera and their members, parameters,
    /// bindings, imports, generics).
    pub declared: FxHashSet<String>,
    /// Type names the file declares (genera, aliases, generic parameters).
    pub declared_types: FxHashSet<String>,
    /// Method names of the file's genera (a field is never called as a method).
    pub members: FxHashSet<String>,
    /// Names that stand for modules in this file (imports and `hospes`).
    modules: FxHashSet<String>,
}

/// The type word recorded for a name bound to an integer literal without a type
/// (not a word of any locale, so it never names a declared type).
pub(super) const NUMBER: &str = "#numerus";
/// The same for a float literal.
pub(super) const FLOAT: &str = "#fractus";

/// Collects the words of `module`.
pub(super) fn words(module: &Module) -> Words {
    let mut w = Words::default();
    w.modules.insert("hospes".into());
    // Module bindings first: a call's receiver is judged by them.
    for item in &module.items {
        if let ItemKind::Import(i) = &item.kind {
            let stem = i.path.value.rsplit(['/', ':']).next().unwrap_or("");
            let stem = stem.strip_suffix(".fab").unwrap_or(stem);
            w.modules.insert(stem.to_string());
            for n in i.name.iter().chain(&i.alias) {
                w.modules.insert(n.name.clone());
            }
        }
    }
    for item in &module.items {
        w.item(item);
    }
    w
}

impl Words {
    /// Records that `id` is declared with the type word `word`.
    fn declare_word(&mut self, id: &Ident, word: &str) {
        self.declared.insert(id.name.clone());
        let name = Some(word.to_string());
        let entry = self.typed.entry(id.name.clone()).or_insert(name.clone());
        if *entry != name {
            *entry = None;
        }
    }

    /// Records a name declared without a type (which makes its type unknown).
    fn declare(&mut self, id: &Ident) {
        self.declare_typed(id, None);
    }

    /// Records that `id` is declared with type `ty` (or with none).
    fn declare_typed(&mut self, id: &Ident, ty: Option<&Type>) {
        self.declared.insert(id.name.clone());
        let name = ty.and_then(|t| match &t.kind {
            TypeKind::Path { path, .. } | TypeKind::Shaped { path, .. } if path.len() == 1 => {
                Some(path[0].name.clone())
            }
            _ => None,
        });
        let entry = self.typed.entry(id.name.clone()).or_insert(name.clone());
        if *entry != name {
            *entry = None;
        }
    }

    fn annotations(&mut self, anns: &[Annotation]) {
        for a in anns {
            self.annotations.push(a.name.clone());
        }
    }

    fn item(&mut self, item: &Item) {
        self.annotations(&item.annotations);
        match &item.kind {
            ItemKind::Import(i) => {
                for n in i.name.iter().chain(&i.alias) {
                    self.declare(n);
                }
            }
            ItemKind::Func(f) => self.func(f),
            ItemKind::Genus(g) => {
                self.declare(&g.name);
                self.declared_types.insert(g.name.name.clone());
                self.generics(&g.generics);
                for m in &g.members {
                    match m {
                        GenusMember::Field {
                            annotations,
                            ty,
                            name,
                            default,
                            ..
                        } => {
                            self.annotations(annotations);
                            self.ty(ty);
                            self.declare_typed(name, Some(ty));
                            if let Some(e) = default {
                                self.expr(e);
                            }
                        }
                        GenusMember::Method { annotations, func } => {
                            self.annotations(annotations);
                            self.members.insert(func.name.name.clone());
                            self.func(func);
                        }
                    }
                }
            }
            ItemKind::Alias(a) => {
                self.declare(&a.name);
                self.declared_types.insert(a.name.name.clone());
                self.ty(&a.ty);
            }
            ItemKind::Fixum(f) => {
                self.ty(&f.ty);
                self.declare_typed(&f.name, Some(&f.ty));
                self.expr(&f.value);
            }
            ItemKind::Entry(e) => {
                if let Some(a) = &e.args {
                    self.declare(a);
                }
                if let Some(x) = &e.exit {
                    self.expr(x);
                }
                self.block(&e.body);
            }
            ItemKind::Suite(s) => {
                self.modifiers(&s.modifiers);
                for h in &s.hooks {
                    // `omnia` is a keyword word, respelled like a modifier.
                    self.modifiers.extend(h.all.iter().cloned());
                    self.block(&h.body);
                }
                for i in &s.items {
                    self.item(i);
                }
            }
            ItemKind::Case(c) => {
                self.modifiers(&c.modifiers);
                self.block(&c.body);
            }
            ItemKind::Stmt(s) => self.stmt(s),
        }
    }

    fn modifiers(&mut self, mods: &[Modifier]) {
        for m in mods {
            self.modifiers.push(m.name.clone());
        }
    }

    fn generics(&mut self, gs: &[Generic]) {
        for g in gs {
            self.declare(&g.name);
            self.declared_types.insert(g.name.name.clone());
        }
    }

    fn func(&mut self, f: &Func) {
        self.declare(&f.name);
        self.generics(&f.generics);
        self.params(&f.params);
        if let Some(a) = &f.args {
            self.declare(a);
        }
        for t in f.ret.iter().chain(&f.throws) {
            self.ty(t);
        }
        self.block(&f.body);
    }

    fn params(&mut self, ps: &[Param]) {
        for p in ps {
            self.ty(&p.ty);
            self.declare_typed(&p.name, Some(&p.ty));
            if let Some(e) = p.sponte.as_ref().and_then(|s| s.default.as_ref()) {
                self.expr(e);
            }
        }
    }

    fn ty(&mut self, t: &Type) {
        match &t.kind {
            TypeKind::Hole | TypeKind::Nihil => {}
            TypeKind::Path { path, args } => {
                if let [one] = path.as_slice() {
                    self.types.push(one.clone());
                }
                self.targs(args);
            }
            TypeKind::Shaped { path, .. } => {
                if let [one] = path.as_slice() {
                    self.types.push(one.clone());
                }
            }
            TypeKind::Tuple(args) => self.targs(args),
            TypeKind::Func {
                params,
                ret,
                throws,
            } => {
                for p in params {
                    self.ty(p);
                }
                self.ty(ret);
                if let Some(t) = throws {
                    self.ty(t);
                }
            }
            TypeKind::Union(ts) => {
                for t in ts {
                    self.ty(t);
                }
            }
        }
    }

    fn targs(&mut self, args: &[TypeArg]) {
        for a in args {
            if let TypeArg::Type(t) = a {
                self.ty(t);
            }
        }
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Block(b) => self.block(b),
            StmtKind::Decl {
                ty, name, value, ..
            } => {
                if let Some(t) = ty {
                    self.ty(t);
                }
                if let Some(n) = name {
                    let from_record = match value.as_ref().map(|v| &v.kind) {
                        Some(ExprKind::Record { path, .. }) if path.len() == 1 => Some(Type {
                            kind: TypeKind::Path {
                                path: path.clone(),
                                args: Vec::new(),
                            },
                            span: n.span,
                        }),
                        _ => None,
                    };
                    let literal = match value.as_ref().map(|v| &v.kind) {
                        Some(ExprKind::Lit(Literal::Int(_))) => Some(NUMBER),
                        Some(ExprKind::Lit(Literal::Float(_))) => Some(FLOAT),
                        _ => None,
                    };
                    match (ty, literal) {
                        (None, Some(word)) => self.declare_word(n, word),
                        _ => self.declare_typed(n, ty.as_ref().or(from_record.as_ref())),
                    }
                }
                if let Some(v) = value {
                    self.expr(v);
                }
            }
            StmtKind::Destructure { names, value, .. } => {
                for n in names.iter().flatten() {
                    self.declare(n);
                }
                self.expr(value);
            }
            StmtKind::If { arms, otherwise } => {
                for a in arms {
                    self.expr(&a.cond);
                    self.block(&a.body);
                }
                if let Some(b) = otherwise {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::Iterate {
                source, var, body, ..
            } => {
                self.expr(source);
                self.declare(var);
                self.block(body);
            }
            StmtKind::Elige {
                subject,
                cases,
                otherwise,
            } => {
                self.expr(subject);
                for a in cases {
                    self.expr(&a.cond);
                    self.block(&a.body);
                }
                if let Some(b) = otherwise {
                    self.block(b);
                }
            }
            StmtKind::Fac { body, catch } => {
                self.block(body);
                self.catch(catch);
            }
            StmtKind::DoWhile { body, catch, cond } => {
                self.block(body);
                self.catch(catch);
                self.expr(cond);
            }
            StmtKind::Adfirma { cond, message } => {
                self.expr(cond);
                if let Some(m) = message {
                    self.expr(m);
                }
            }
            StmtKind::Expr(e) | StmtKind::Iace(e) | StmtKind::Mori(e) => self.expr(e),
            StmtKind::Assign { target, value } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::Redde(e) => {
                if let Some(e) = e {
                    self.expr(e);
                }
            }
            StmtKind::Out { args, .. } => {
                for a in args {
                    self.expr(a);
                }
            }
            StmtKind::Tacet | StmtKind::Rumpe | StmtKind::Perge | StmtKind::Error => {}
        }
    }

    fn catch(&mut self, catch: &Option<(Ident, Block)>) {
        if let Some((id, b)) = catch {
            self.declare(id);
            self.block(b);
        }
    }

    fn exprs(&mut self, es: &[Expr]) {
        for e in es {
            self.expr(e);
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Ego | ExprKind::Error => {}
            ExprKind::Name(id) => self.names.push(id.clone()),
            ExprKind::Unary { expr, .. } | ExprKind::NonNull(expr) => self.expr(expr),
            ExprKind::Binary { lhs, rhs, .. } => {
                self.expr(lhs);
                self.expr(rhs);
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond);
                self.expr(then);
                self.expr(otherwise);
            }
            ExprKind::Is { expr, target, .. } => {
                self.expr(expr);
                if let IsTarget::Type(t) = target {
                    self.ty(t);
                }
            }
            ExprKind::Range {
                start, end, step, ..
            } => {
                self.expr(start);
                self.expr(end);
                if let Some(s) = step {
                    self.expr(s);
                }
            }
            ExprKind::Convert { expr, ty, fallback } => {
                self.expr(expr);
                self.ty(ty);
                if let Some(f) = fallback {
                    self.expr(f);
                }
            }
            ExprKind::Clamp {
                expr,
                range,
                fallback,
            } => {
                self.expr(expr);
                self.expr(range);
                if let Some(f) = fallback {
                    self.expr(f);
                }
            }
            ExprKind::Ascribe { expr, ty } => {
                self.expr(expr);
                self.ty(ty);
            }
            ExprKind::Call {
                callee,
                type_args,
                args,
            } => {
                match &callee.kind {
                    ExprKind::Field { expr, name } => {
                        let module = matches!(&expr.kind, ExprKind::Name(n) if self.modules.contains(&n.name));
                        if !module {
                            let recv = match &expr.kind {
                                ExprKind::Ego => Recv::Ego,
                                ExprKind::Name(n) => Recv::Name(n.name.clone()),
                                ExprKind::Field { name, .. } => Recv::Name(name.name.clone()),
                                ExprKind::Lit(Literal::Int(_) | Literal::Float(_)) => Recv::Number,
                                ExprKind::Lit(_)
                                | ExprKind::List(_)
                                | ExprKind::Template { .. } => Recv::Literal,
                                ExprKind::Record { .. } => Recv::Record,
                                _ => Recv::Other,
                            };
                            self.methods.push((name.clone(), recv));
                        }
                        self.expr(expr);
                    }
                    _ => self.expr(callee),
                }
                self.targs(type_args);
                self.exprs(args);
            }
            ExprKind::Template { args, .. } => self.exprs(args),
            ExprKind::Field { expr, .. } => self.expr(expr),
            ExprKind::Index { expr, index } => {
                self.expr(expr);
                self.expr(index);
            }
            ExprKind::List(es) => self.exprs(es),
            ExprKind::Map(entries) => {
                for (_, v) in entries {
                    self.expr(v);
                }
            }
            ExprKind::Record { fields, .. } => {
                for (_, v) in fields {
                    self.expr(v);
                }
            }
            ExprKind::Tuple { types, elems } => {
                self.targs(types);
                self.exprs(elems);
            }
            ExprKind::Closure { params, ret, body } => {
                self.params(params);
                if let Some(r) = ret {
                    self.ty(r);
                }
                self.expr(body);
            }
            ExprKind::Ad { arg, .. } => {
                if let Some(a) = arg {
                    self.expr(a);
                }
            }
        }
    }
}
