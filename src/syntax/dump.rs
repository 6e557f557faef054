//! A compact, deterministic text dump of the AST (`faber parse`, golden tests).
//! Declarations and statements go one per line, indented; expressions and types
//! are printed inline as S-expressions. Spans are left out so that goldens only
//! change when the tree does.

use std::fmt::Write;

use super::ast::*;

pub fn dump_ast(module: &Module) -> String {
    let mut p = Printer { out: String::new() };
    if let Some(fm) = &module.frontmatter {
        p.line(0, &format!("(frontmatter {:?})", fm.trim()));
    }
    for item in &module.items {
        p.item(0, item);
    }
    p.out
}

struct Printer {
    out: String,
}

impl Printer {
    fn line(&mut self, indent: usize, s: &str) {
        for _ in 0..indent {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn annotations(&mut self, indent: usize, anns: &[Annotation]) {
        for a in anns {
            let args: Vec<String> = a.args.iter().map(annot_arg).collect();
            self.line(indent, &format!("(@ {}{})", a.name.name, prefixed(&args)));
        }
    }

    fn item(&mut self, ind: usize, item: &Item) {
        self.annotations(ind, &item.annotations);
        match &item.kind {
            ItemKind::Import(i) => {
                let vis = match i.visibility {
                    Some(Visibility::Privata) => " privata",
                    Some(Visibility::Publica) => " publica",
                    None => "",
                };
                let name = i
                    .name
                    .as_ref()
                    .map_or(String::new(), |n| format!(" {}", n.name));
                let alias = i
                    .alias
                    .as_ref()
                    .map_or(String::new(), |n| format!(" ut {}", n.name));
                self.line(
                    ind,
                    &format!("(importa {:?}{vis}{name}{alias})", i.path.value),
                );
            }
            ItemKind::Func(f) => self.func(ind, f),
            ItemKind::Genus(g) => {
                let gs = if g.generics.is_empty() {
                    String::new()
                } else {
                    generics(&g.generics)
                };
                self.line(ind, &format!("(genus {}{gs}", g.name.name));
                for m in &g.members {
                    match m {
                        GenusMember::Field {
                            annotations,
                            ty,
                            name,
                            sponte,
                            default,
                            ..
                        } => {
                            self.annotations(ind + 1, annotations);
                            let def = default
                                .as_ref()
                                .map_or(String::new(), |e| format!(" = {}", expr(e)));
                            let sp = if *sponte { " sponte" } else { "" };
                            self.line(
                                ind + 1,
                                &format!("(field {} {}{sp}{def})", ty_s(ty), name.name),
                            );
                        }
                        GenusMember::Method { annotations, func } => {
                            self.annotations(ind + 1, annotations);
                            self.func(ind + 1, func);
                        }
                    }
                }
                self.line(ind, ")");
            }
            ItemKind::Alias(a) => {
                self.line(ind, &format!("(typus {} {})", a.name.name, ty_s(&a.ty)))
            }
            ItemKind::Fixum(f) => self.line(
                ind,
                &format!(
                    "(fixum-top {} {} {})",
                    ty_s(&f.ty),
                    f.name.name,
                    expr(&f.value)
                ),
            ),
            ItemKind::Entry(e) => {
                let exit = e
                    .exit
                    .as_ref()
                    .map_or(String::new(), |x| format!(" exitus {}", expr(x)));
                let args = e
                    .args
                    .as_ref()
                    .map_or(String::new(), |a| format!(" argumenta {}", a.name));
                self.line(ind, &format!("(incipit{args}{exit}"));
                self.block_body(ind + 1, &e.body);
                self.line(ind, ")");
            }
            ItemKind::Suite(s) => {
                self.line(
                    ind,
                    &format!("(probandum {:?}{}", s.name.value, modifiers(&s.modifiers)),
                );
                for h in &s.hooks {
                    let kw = if h.before { "praepara" } else { "postpara" };
                    let all = h
                        .all
                        .as_ref()
                        .map_or(String::new(), |a| format!(" {}", a.name));
                    self.line(ind + 1, &format!("({kw}{all}"));
                    self.block_body(ind + 2, &h.body);
                    self.line(ind + 1, ")");
                }
                for i in &s.items {
                    self.item(ind + 1, i);
                }
                self.line(ind, ")");
            }
            ItemKind::Case(c) => {
                self.line(
                    ind,
                    &format!("(proba {:?}{}", c.name.value, modifiers(&c.modifiers)),
                );
                self.block_body(ind + 1, &c.body);
                self.line(ind, ")");
            }
            ItemKind::Stmt(s) => self.stmt(ind, s),
        }
    }

    fn func(&mut self, ind: usize, f: &Func) {
        let mut head = format!("(functio {}", f.name.name);
        if !f.generics.is_empty() {
            head.push_str(&generics(&f.generics));
        }
        let params: Vec<String> = f.params.iter().map(param).collect();
        let _ = write!(head, " ({})", params.join(", "));
        if let Some(a) = &f.args {
            let _ = write!(head, " argumenta {}", a.name);
        }
        if let Some(r) = &f.ret {
            let _ = write!(head, " → {}", ty_s(r));
        }
        if let Some(t) = &f.throws {
            let _ = write!(head, " ⇥ {}", ty_s(t));
        }
        self.line(ind, &head);
        self.block_body(ind + 1, &f.body);
        self.line(ind, ")");
    }

    fn block_body(&mut self, ind: usize, b: &Block) {
        for s in &b.stmts {
            self.stmt(ind, s);
        }
    }

    fn nested(&mut self, ind: usize, head: &str, b: &Block) {
        self.line(ind, &format!("({head}"));
        self.block_body(ind + 1, b);
        self.line(ind, ")");
    }

    fn stmt(&mut self, ind: usize, s: &Stmt) {
        match &s.kind {
            StmtKind::Block(b) => self.nested(ind, "block", b),
            StmtKind::Decl {
                kind,
                ty,
                name,
                value,
            } => {
                let t = ty
                    .as_ref()
                    .map_or(String::new(), |t| format!(" {}", ty_s(t)));
                let n = name.as_ref().map_or("_", |n| n.name.as_str());
                let v = value
                    .as_ref()
                    .map_or(String::new(), |e| format!(" ← {}", expr(e)));
                self.line(ind, &format!("({}{t} {n}{v})", bind(*kind)));
            }
            StmtKind::Destructure { kind, names, value } => {
                let ns: Vec<&str> = names
                    .iter()
                    .map(|n| n.as_ref().map_or("_", |n| n.name.as_str()))
                    .collect();
                self.line(
                    ind,
                    &format!("({} [{}] ← {})", bind(*kind), ns.join(", "), expr(value)),
                );
            }
            StmtKind::If { arms, otherwise } => {
                for (i, arm) in arms.iter().enumerate() {
                    let kw = if i == 0 { "si" } else { "sin" };
                    self.nested(ind, &format!("{kw} {}", expr(&arm.cond)), &arm.body);
                }
                if let Some(b) = otherwise {
                    self.nested(ind, "secus", b);
                }
            }
            StmtKind::While { cond, body } => {
                self.nested(ind, &format!("dum {}", expr(cond)), body)
            }
            StmtKind::Iterate {
                kind,
                source,
                binding,
                var,
                body,
            } => {
                let k = match kind {
                    IterKind::Ex => "ex",
                    IterKind::De => "de",
                    IterKind::Ab => "ab",
                };
                self.nested(
                    ind,
                    &format!("itera {k} {} {} {}", expr(source), bind(*binding), var.name),
                    body,
                );
            }
            StmtKind::Elige {
                subject,
                cases,
                otherwise,
            } => {
                self.line(ind, &format!("(elige {}", expr(subject)));
                for c in cases {
                    self.nested(ind + 1, &format!("casu {}", expr(&c.cond)), &c.body);
                }
                if let Some(b) = otherwise {
                    self.nested(ind + 1, "ceterum", b);
                }
                self.line(ind, ")");
            }
            StmtKind::Fac { body, catch } => {
                self.nested(ind, "fac", body);
                if let Some((name, b)) = catch {
                    self.nested(ind, &format!("cape {}", name.name), b);
                }
            }
            StmtKind::DoWhile { body, catch, cond } => {
                self.nested(ind, "fac", body);
                if let Some((name, b)) = catch {
                    self.nested(ind, &format!("cape {}", name.name), b);
                }
                self.line(ind, &format!("(dum-post {})", expr(cond)));
            }
            StmtKind::Adfirma { cond, message } => {
                let m = message
                    .as_ref()
                    .map_or(String::new(), |e| format!(" secus {}", expr(e)));
                self.line(ind, &format!("(adfirma {}{m})", expr(cond)));
            }
            StmtKind::Expr(e) => self.line(ind, &format!("(expr {})", expr(e))),
            StmtKind::Assign { target, value } => {
                self.line(ind, &format!("(← {} {})", expr(target), expr(value)))
            }
            StmtKind::Redde(v) => {
                let v = v
                    .as_ref()
                    .map_or(String::new(), |e| format!(" {}", expr(e)));
                self.line(ind, &format!("(redde{v})"));
            }
            StmtKind::Tacet => self.line(ind, "(tacet)"),
            StmtKind::Rumpe => self.line(ind, "(rumpe)"),
            StmtKind::Perge => self.line(ind, "(perge)"),
            StmtKind::Iace(e) => self.line(ind, &format!("(iace {})", expr(e))),
            StmtKind::Mori(e) => self.line(ind, &format!("(mori {})", expr(e))),
            StmtKind::Out { kind, args } => {
                let k = match kind {
                    OutKind::Nota => "nota",
                    OutKind::Scribe => "scribe",
                    OutKind::Vide => "vide",
                    OutKind::Mone => "mone",
                };
                let a: Vec<String> = args.iter().map(expr).collect();
                self.line(ind, &format!("({k} {})", a.join(" ")));
            }
            StmtKind::Error => self.line(ind, "(error)"),
        }
    }
}

fn prefixed(parts: &[String]) -> String {
    parts.iter().map(|p| format!(" {p}")).collect()
}

fn annot_arg(a: &AnnotArg) -> String {
    match a {
        AnnotArg::Word(w) => w.clone(),
        AnnotArg::Text(t) => format!("{t:?}"),
        AnnotArg::Int(i) => i.to_string(),
        AnnotArg::Float(f) => format!("{f:?}"),
        AnnotArg::Pair(k, v) => format!("{k}={}", annot_arg(v)),
    }
}

fn modifiers(mods: &[Modifier]) -> String {
    mods.iter()
        .map(|m| match &m.arg {
            Some(a) => format!(" ({} {})", m.name.name, lit(a)),
            None => format!(" ({})", m.name.name),
        })
        .collect()
}

fn bind(k: BindKind) -> &'static str {
    match k {
        BindKind::Fixum => "fixum",
        BindKind::Varia => "varia",
        BindKind::Sit => "sit",
    }
}

fn param(p: &Param) -> String {
    let marker = match &p.sponte {
        None => String::new(),
        Some(Sponte { default: None, .. }) => " sponte".into(),
        Some(Sponte {
            default: Some(d), ..
        }) => format!(" sponte vel {}", expr(d)),
    };
    format!("{} {}{marker}", ty_s(&p.ty), p.name.name)
}

fn generics(gs: &[Generic]) -> String {
    let g: Vec<String> = gs
        .iter()
        .map(|g| {
            if g.magnitudo {
                format!("magnitudo {}", g.name.name)
            } else {
                g.name.name.clone()
            }
        })
        .collect();
    format!(" <{}>", g.join(", "))
}

fn path(p: &[Ident]) -> String {
    p.iter()
        .map(|i| i.name.as_str())
        .collect::<Vec<_>>()
        .join(".")
}

pub(crate) fn ty_s(t: &Type) -> String {
    match &t.kind {
        TypeKind::Hole => "_".into(),
        TypeKind::Nihil => "nihil".into(),
        TypeKind::Path { path: p, args } if args.is_empty() => path(p),
        TypeKind::Path { path: p, args } => format!("{}<{}>", path(p), targs(args)),
        TypeKind::Shaped { path: p, dims: d } => format!("{}[{}]", path(p), dims(d)),
        TypeKind::Tuple(args) => format!("iuncta<{}>", targs(args)),
        TypeKind::Func {
            params,
            ret,
            throws,
        } => {
            let ps: Vec<String> = params.iter().map(ty_s).collect();
            let th = throws
                .as_ref()
                .map_or(String::new(), |t| format!(" ⇥ {}", ty_s(t)));
            format!("(fn ({}) → {}{th})", ps.join(", "), ty_s(ret))
        }
        TypeKind::Union(ms) => {
            let ms: Vec<String> = ms.iter().map(ty_s).collect();
            format!("(∪ {})", ms.join(" "))
        }
    }
}

fn targs(args: &[TypeArg]) -> String {
    args.iter()
        .map(|a| match a {
            TypeArg::Type(t) => ty_s(t),
            TypeArg::Nat(n, _) => n.to_string(),
            TypeArg::Shape(d, _) => format!("[{}]", dims(d)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn dims(ds: &[Dim]) -> String {
    ds.iter()
        .map(|d| match d {
            Dim::Hole(_) => "_".to_string(),
            Dim::Nat(n, _) => n.to_string(),
            Dim::Name(i) => i.name.clone(),
            Dim::Nested(d, _) => format!("[{}]", dims(d)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn lit(l: &Literal) -> String {
    match l {
        Literal::Int(i) => i.to_string(),
        Literal::Float(f) => format!("{f:?}"),
        Literal::Text(t) => format!("{t:?}"),
        Literal::Ascii(t) => format!("'{}'", t.escape_debug()),
        Literal::Bytes(b) => {
            let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
            format!("|{}|", hex.join(" "))
        }
        Literal::Bool(true) => "verum".into(),
        Literal::Bool(false) => "falsum".into(),
        Literal::Nihil => "nihil".into(),
    }
}

fn list(es: &[Expr]) -> String {
    es.iter().map(expr).collect::<Vec<_>>().join(" ")
}

pub(crate) fn expr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Lit(l) => lit(l),
        ExprKind::Name(i) => i.name.clone(),
        ExprKind::Ego => "ego".into(),
        ExprKind::Unary { op, expr: x } => {
            let o = match op {
                UnOp::Neg => "neg",
                UnOp::BitNot => "¬",
                UnOp::Not => "non",
            };
            format!("({o} {})", expr(x))
        }
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", op.glyph(), expr(lhs), expr(rhs))
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => format!("(sic {} {} {})", expr(cond), expr(then), expr(otherwise)),
        ExprKind::Is {
            expr: x,
            negated,
            target,
        } => {
            let t = match target {
                IsTarget::Verum => "verum".to_string(),
                IsTarget::Falsum => "falsum".to_string(),
                IsTarget::Type(t) => ty_s(t),
            };
            let kw = if *negated { "non-est" } else { "est" };
            format!("({kw} {} {t})", expr(x))
        }
        ExprKind::Range {
            start,
            end,
            inclusive,
            step,
        } => {
            let op = if *inclusive { "…" } else { "‥" };
            let s = step
                .as_ref()
                .map_or(String::new(), |s| format!(" per {}", expr(s)));
            format!("({op} {} {}{s})", expr(start), expr(end))
        }
        ExprKind::Convert {
            expr: x,
            ty,
            fallback,
        } => {
            let f = fallback
                .as_ref()
                .map_or(String::new(), |f| format!(" ⇥ {}", expr(f)));
            format!("(↦ {} {}{f})", expr(x), ty_s(ty))
        }
        ExprKind::Clamp {
            expr: x,
            range,
            fallback,
        } => {
            let f = fallback
                .as_ref()
                .map_or(String::new(), |f| format!(" ⇥ {}", expr(f)));
            format!("(↦ {} {}{f})", expr(x), expr(range))
        }
        ExprKind::Ascribe { expr: x, ty } => format!("(∷ {} {})", expr(x), ty_s(ty)),
        ExprKind::Call {
            callee,
            type_args,
            args,
        } => {
            let t = if type_args.is_empty() {
                String::new()
            } else {
                format!("<{}>", targs(type_args))
            };
            if args.is_empty() {
                format!("(call {}{t})", expr(callee))
            } else {
                format!("(call {}{t} {})", expr(callee), list(args))
            }
        }
        ExprKind::Template { text, args } => format!("(template {text:?} {})", list(args)),
        ExprKind::Field { expr: x, name } => format!("(. {} {})", expr(x), name.name),
        ExprKind::Index { expr: x, index } => format!("(idx {} {})", expr(x), expr(index)),
        ExprKind::List(items) => format!("[{}]", list(items)),
        ExprKind::Map(entries) => {
            let es: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{:?}: {}", k.value, expr(v)))
                .collect();
            format!("{{{}}}", es.join(", "))
        }
        ExprKind::Record { path: p, fields } => {
            let fs: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{} = {}", k.name, expr(v)))
                .collect();
            format!("(record {} {{{}}})", path(p), fs.join(", "))
        }
        ExprKind::Tuple { types, elems } => format!("(iuncta<{}> {})", targs(types), list(elems)),
        ExprKind::Closure { params, ret, body } => {
            let ps: Vec<String> = params.iter().map(param).collect();
            let r = ret
                .as_ref()
                .map_or(String::new(), |t| format!(" → {}", ty_s(t)));
            format!("(∴ ({}){r} {})", ps.join(", "), expr(body))
        }
        ExprKind::Ad { route, arg } => match arg {
            Some(a) => format!("(ad '{}' {})", route.value, expr(a)),
            None => format!("(ad '{}')", route.value),
        },
        ExprKind::NonNull(x) => format!("(! {})", expr(x)),
        ExprKind::Error => "(error)".into(),
    }
}
