//! Stable text form of the IR (`faber ir`). Deterministic: functions in id order,
//! slots written `%n` (named `%n:name` where they bind a source name), globals `@n`.

use std::fmt::Write;

use super::*;

pub fn print_program(p: &Program) -> String {
    let mut out = String::new();
    for (i, g) in p.genera.iter().enumerate() {
        let fields: Vec<String> = g
            .fields
            .iter()
            .map(|f| format!("{}: {}", f.name, ty(p, &f.ty)))
            .collect();
        let _ = writeln!(out, "genus #{i} {} {{ {} }}", g.name, fields.join(", "));
    }
    for (i, g) in p.globals.iter().enumerate() {
        let _ = writeln!(out, "global @{i} {}: {}", g.name, ty(p, &g.ty));
    }
    if !p.genera.is_empty() || !p.globals.is_empty() {
        out.push('\n');
    }
    for (i, _) in p.functions.iter().enumerate() {
        out.push_str(&print_function(p, FuncId(i as u32)));
        out.push('\n');
    }
    out
}

pub fn print_function(p: &Program, id: FuncId) -> String {
    let f = p.func(id);
    let mut pr = Printer {
        p,
        f,
        out: String::new(),
    };
    let params: Vec<String> = (0..f.params)
        .map(|i| format!("{}: {}", pr.slot(Slot(i)), ty(p, &f.slots[i as usize].ty)))
        .collect();
    let throws = if f.throws { " ⇥" } else { "" };
    let _ = writeln!(
        pr.out,
        "fn #{} {}({}) → {}{throws} {{",
        id.0,
        f.name,
        params.join(", "),
        ty(p, &f.ret)
    );
    pr.block(1, &f.body);
    pr.out.push_str("}\n");
    pr.out
}

pub fn ty(p: &Program, t: &Ty) -> String {
    ty_spelled(p, t, &|w: &str| w.to_string())
}

/// [`ty`] with the primitive type words (`numerus`, `lista`, …) spelled in reader
/// locale `locale` (`整数`, `列表`), for a diagnostic about a file of that locale.
/// Genus names are the user's and stay as written.
pub fn ty_in(p: &Program, t: &Ty, locale: crate::syntax::vocab::Locale) -> String {
    use crate::syntax::vocab::{vocabulary, Section};
    let spell = |w: &str| {
        vocabulary()
            .spell(Section::Type, locale, w)
            .unwrap_or(w)
            .to_string()
    };
    ty_spelled(p, t, &spell)
}

fn ty_spelled(p: &Program, t: &Ty, w: &dyn Fn(&str) -> String) -> String {
    let ty = |p: &Program, t: &Ty| ty_spelled(p, t, w);
    let list = |p: &Program, ts: &[Ty]| {
        ts.iter()
            .map(|t| ty_spelled(p, t, w))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match t {
        Ty::Any => "_".into(),
        Ty::Int => w("numerus"),
        Ty::Float => w("fractus"),
        Ty::Bool => w("bivalens"),
        Ty::Text => w("textus"),
        Ty::Bytes => w("octeti"),
        Ty::Nihil => w("nihil"),
        Ty::Vacuum => w("vacuum"),
        Ty::List(e) => format!("{}<{}>", w("lista"), ty(p, e)),
        Ty::Map(k, v) => format!("{}<{}, {}>", w("tabula"), ty(p, k), ty(p, v)),
        Ty::Tuple(ts) => format!("iuncta<{}>", list(p, ts)),
        Ty::Record(g) => p
            .genera
            .get(g.0 as usize)
            .map_or(format!("genus#{}", g.0), |g| g.name.clone()),
        Ty::Func(ps, r) => format!("({}) → {}", list(p, ps), ty(p, r)),
        Ty::Tensor { shape, int, wide } => {
            let elem = match (*int, *wide) {
                (true, _) => format!("{}, ", w("numerus")),
                (false, true) => "f64, ".to_string(),
                (false, false) => String::new(),
            };
            let tensor = w("tensor");
            match shape {
                None => format!("{tensor}<{elem}_>"),
                Some(dims) => {
                    let ds: Vec<String> = dims
                        .iter()
                        .map(|d| d.map_or("_".to_string(), |n| n.to_string()))
                        .collect();
                    format!("{tensor}<{elem}[{}]>", ds.join(", "))
                }
            }
        }
        Ty::Union(ts) => {
            let ts: Vec<String> = ts.iter().map(|t| ty(p, t)).collect();
            ts.join(" ∪ ")
        }
        Ty::Json { doc: true } => w("json"),
        Ty::Json { doc: false } => w("valor"),
        Ty::Set(e) => format!("{}<{}>", w("copia"), ty(p, e)),
        Ty::Interval => format!("{}<{}>", w("intervallum"), w("numerus")),
    }
}

pub fn constant(c: &Const) -> String {
    match c {
        Const::Int(i) => i.to_string(),
        Const::Float(f) => format!("{f:?}"),
        Const::Bool(true) => "verum".into(),
        Const::Bool(false) => "falsum".into(),
        Const::Text(t) => format!("{t:?}"),
        Const::Bytes(b) => format!("<{} bytes>", b.len()),
        Const::Nihil => "nihil".into(),
        Const::Vacuum => "vacuum".into(),
    }
}

struct Printer<'a> {
    p: &'a Program,
    f: &'a Function,
    out: String,
}

impl Printer<'_> {
    fn slot(&self, s: Slot) -> String {
        match self.f.slots.get(s.0 as usize) {
            Some(info) if !info.name.is_empty() => format!("%{}:{}", s.0, info.name),
            _ => format!("%{}", s.0),
        }
    }

    fn op(&self, o: &Operand) -> String {
        match o {
            Operand::Slot(s) => self.slot(*s),
            Operand::Global(g) => format!("@{}", g.0),
            Operand::Const(c) => constant(c),
        }
    }

    fn ops(&self, os: &[Operand]) -> String {
        os.iter().map(|o| self.op(o)).collect::<Vec<_>>().join(", ")
    }

    fn place(&self, pl: &Place) -> String {
        let mut s = match pl.root {
            PlaceRoot::Slot(x) => self.slot(x),
            PlaceRoot::Global(g) => format!("@{}", g.0),
        };
        for step in &pl.path {
            match step {
                PlaceStep::Field(i) => {
                    let _ = write!(s, ".{i}");
                }
                PlaceStep::Index(o) => {
                    let _ = write!(s, "[{}]", self.op(o));
                }
            }
        }
        s
    }

    fn fname(&self, id: FuncId) -> String {
        format!("#{} {}", id.0, self.p.func(id).name)
    }

    fn rhs(&self, r: &Rhs) -> String {
        match r {
            Rhs::Use(o) => self.op(o),
            Rhs::Prim(Prim::Unary(u), args) => {
                let name = match u {
                    UnOp::Neg => "neg",
                    UnOp::BitNot => "¬",
                    UnOp::Not => "non",
                    UnOp::Narrow => "narrow",
                };
                format!("{name} {}", self.ops(args))
            }
            Rhs::Prim(Prim::Binary(b), args) => {
                format!("{} {}", b.glyph(), self.ops(args))
            }
            Rhs::Call(f, args) => format!("call {}({})", self.fname(*f), self.ops(args)),
            Rhs::CallValue(f, args) => format!("call_value {}({})", self.op(f), self.ops(args)),
            Rhs::Host(h, args) => format!("hospes.{}({})", h.name(), self.ops(args)),
            Rhs::Closure(f, caps) => format!("closure {} [{}]", self.fname(*f), self.ops(caps)),
            Rhs::Method(m, recv, args) => {
                format!("method {}.{}({})", self.op(recv), m.name(), self.ops(args))
            }
            Rhs::List(items) => format!("list [{}]", self.ops(items)),
            Rhs::Map(entries) => {
                let es: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{k:?}: {}", self.op(v)))
                    .collect();
                format!("map {{{}}}", es.join(", "))
            }
            Rhs::Tuple(items) => format!("tuple [{}]", self.ops(items)),
            Rhs::Record(g, fields) => {
                format!(
                    "record {} {{{}}}",
                    ty(self.p, &Ty::Record(*g)),
                    self.ops(fields)
                )
            }
            Rhs::Field(o, i) => format!("field {}.{i}", self.op(o)),
            Rhs::Index(o, i) => format!("index {}[{}]", self.op(o), self.op(i)),
            Rhs::Op(op, args) => format!("op {}({})", op.name(), self.ops(args)),
            Rhs::Coerce(o, t) => format!("coerce {} : {}", self.op(o), ty(self.p, t)),
            Rhs::Convert(o, t) => format!("convert {} ↦ {}", self.op(o), ty(self.p, t)),
            Rhs::Is(o, test, negated) => {
                let t = match test {
                    IsTest::Nihil => "nihil".to_string(),
                    IsTest::Verum => "verum".to_string(),
                    IsTest::Falsum => "falsum".to_string(),
                    IsTest::Type(t) => ty(self.p, t),
                };
                let kw = if *negated { "non est" } else { "est" };
                format!("{} {kw} {t}", self.op(o))
            }
            Rhs::Template(pieces, args) => {
                let ps: String = pieces
                    .iter()
                    .map(|p| match p {
                        TemplatePiece::Text(t) => t.clone(),
                        TemplatePiece::Arg(i) => format!("{{{i}}}"),
                    })
                    .collect();
                format!("template {ps:?}({})", self.ops(args))
            }
            Rhs::Range {
                start,
                end,
                step,
                inclusive,
            } => {
                let g = if *inclusive { "…" } else { "‥" };
                format!(
                    "range {}{g}{} per {}",
                    self.op(start),
                    self.op(end),
                    self.op(step)
                )
            }
        }
    }

    fn line(&mut self, ind: usize, s: &str) {
        for _ in 0..ind {
            self.out.push_str("  ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn block(&mut self, ind: usize, b: &Block) {
        for s in &b.stmts {
            self.stmt(ind, s);
        }
    }

    fn nested(&mut self, ind: usize, head: &str, b: &Block) {
        self.line(ind, &format!("{head} {{"));
        self.block(ind + 1, b);
        self.line(ind, "}");
    }

    /// A `Cond` as the nested `if`/`else` it means (one level deeper per arm),
    /// written in a loop: arm `i`'s test and `if` sit inside arm `i - 1`'s `else`.
    fn cond_chain(&mut self, ind: usize, arms: &[CondArm], otherwise: &Block) {
        let mut open = 0;
        for (i, arm) in arms.iter().enumerate() {
            let d = ind + i;
            self.block(d, &arm.test);
            let head = format!("if {}", self.op(&arm.cond));
            self.nested(d, &head, &arm.then);
            if i + 1 == arms.len() && otherwise.stmts.is_empty() {
                break;
            }
            self.line(d, "else {");
            open += 1;
        }
        if !otherwise.stmts.is_empty() {
            self.block(ind + arms.len(), otherwise);
        }
        for d in (ind..ind + open).rev() {
            self.line(d, "}");
        }
    }

    fn stmt(&mut self, ind: usize, s: &Stmt) {
        match s {
            Stmt::Let { dst, rhs, .. } => {
                let line = format!("{} = {}", self.slot(*dst), self.rhs(rhs));
                self.line(ind, &line);
            }
            Stmt::SetGlobal { dst, value } => {
                let line = format!("@{} = {}", dst.0, self.op(value));
                self.line(ind, &line);
            }
            Stmt::Store { place, value, .. } => {
                let line = format!("store {} ← {}", self.place(place), self.op(value));
                self.line(ind, &line);
            }
            Stmt::MethodInPlace {
                dst,
                method,
                place,
                args,
                ..
            } => {
                let d = dst.map_or(String::new(), |d| format!("{} = ", self.slot(d)));
                let line = format!(
                    "{d}method! {}.{}({})",
                    self.place(place),
                    method.name(),
                    self.ops(args)
                );
                self.line(ind, &line);
            }
            Stmt::CallInPlace {
                dst,
                func,
                place,
                args,
                ..
            } => {
                let d = dst.map_or(String::new(), |d| format!("{} = ", self.slot(d)));
                let line = format!(
                    "{d}call! {}({}; {})",
                    self.fname(*func),
                    self.place(place),
                    self.ops(args)
                );
                self.line(ind, &line);
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let head = format!("if {}", self.op(cond));
                self.nested(ind, &head, then);
                if !otherwise.stmts.is_empty() {
                    self.nested(ind, "else", otherwise);
                }
            }
            Stmt::Cond { arms, otherwise } => self.cond_chain(ind, arms, otherwise),
            Stmt::Loop { body, .. } => self.nested(ind, "loop", body),
            Stmt::ForRange {
                var,
                start,
                end,
                step,
                inclusive,
                body,
                ..
            } => {
                let g = if *inclusive { "…" } else { "‥" };
                let head = format!(
                    "for {} in {}{g}{} per {}",
                    self.slot(*var),
                    self.op(start),
                    self.op(end),
                    self.op(step)
                );
                self.nested(ind, &head, body);
            }
            Stmt::ForEach {
                var,
                kind,
                source,
                body,
                ..
            } => {
                let k = match kind {
                    EachKind::Values => "values",
                    EachKind::Keys => "keys",
                };
                let head = format!("for {} in {k} {}", self.slot(*var), self.op(source));
                self.nested(ind, &head, body);
            }
            Stmt::Break => self.line(ind, "break"),
            Stmt::Continue => self.line(ind, "continue"),
            Stmt::Return(None) => self.line(ind, "return"),
            Stmt::Return(Some(o)) => {
                let line = format!("return {}", self.op(o));
                self.line(ind, &line);
            }
            Stmt::Throw { value, .. } => {
                let line = format!("throw {}", self.op(value));
                self.line(ind, &line);
            }
            Stmt::Try {
                body,
                catch_slot,
                handler,
            } => {
                self.nested(ind, "try", body);
                let head = match catch_slot {
                    Some(s) => format!("catch {}", self.slot(*s)),
                    None => "catch".to_string(),
                };
                self.nested(ind, &head, handler);
            }
            Stmt::Fatal { kind, message, .. } => {
                let k = match kind {
                    FatalKind::Mori => "mori",
                    FatalKind::Adfirma => "adfirma",
                    FatalKind::NonNull => "non-null",
                };
                let line = format!("fatal {k} {}", self.op(message));
                self.line(ind, &line);
            }
            Stmt::Assert {
                cond,
                message,
                source,
                ..
            } => {
                let m = message
                    .as_ref()
                    .map_or(String::new(), |m| format!(" secus {}", self.op(m)));
                let line = format!("assert {}{m} ; {source:?}", self.op(cond));
                self.line(ind, &line);
            }
            Stmt::Out { kind, args, .. } => {
                let k = match kind {
                    OutKind::Nota => "nota",
                    OutKind::Scribe => "scribe",
                    OutKind::Vide => "vide",
                    OutKind::Mone => "mone",
                };
                let line = format!("{k} {}", self.ops(args));
                self.line(ind, &line);
            }
        }
    }
}
