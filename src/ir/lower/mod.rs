//! AST → Radix IR. Declarations of every module are entered first (functions are
//! hoisted, genera and aliases known before any body), imports bound, then every body
//! is lowered to slot-addressed, A-normal-form IR. Name resolution happens here:
//! after lowering, no name is ever looked up again.

mod argumenta;
pub mod calls;
mod chain;
mod clamp;
mod commands;
mod conversion;
mod data;
mod do_while;
mod expr;
mod func;
mod hints;
mod hooks;
mod inplace;
mod intrinsics;
mod operators;
mod returns;
pub(crate) mod sizes;
mod slice;
mod sponte;
mod stmt;
mod tensor;
pub(crate) mod twins;
mod types;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::diag::{codes, Diagnostic};
use crate::ir::cli_spec::ArgDecl;
use crate::ir::*;
use crate::resolve::ModuleGraph;
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::{self, Annotation, Item, ItemKind, Literal};
use data::literal_const;
use func::FnCx;
pub use types::TypeName;

/// What a value name in a module scope stands for.
#[derive(Clone, Copy, Debug)]
pub enum ModItem {
    Func(FuncId),
    Global(GlobalId),
    Module(usize),
}

/// A module's scope after declaration.
#[derive(Default)]
pub struct ModInfo {
    pub name: String,
    pub file: FileId,
    pub values: FxHashMap<String, ModItem>,
    pub types: FxHashMap<String, TypeName>,
    /// Names importers may see (declarations without `@ privata`, `publica` imports).
    pub exports: FxHashSet<String>,
    /// The reader locale the module is written in: how its types, intrinsic methods
    /// and `vacua` are spelled (src/syntax/vocab.rs).
    pub locale: crate::syntax::vocab::Locale,
}

/// A function's signature, known before any body is lowered.
#[derive(Clone, Debug)]
pub struct Sig {
    pub params: Vec<Ty>,
    /// Per parameter: declared `f32`/`f16` (`SlotInfo::narrow`); shorter when none is.
    pub narrow: Vec<bool>,
    pub ret: Ty,
    pub throws: bool,
    pub module: usize,
}

pub struct Lowerer<'a> {
    pub sources: &'a SourceMap,
    pub modules: Vec<ModInfo>,
    pub program: Program,
    pub sigs: Vec<Sig>,
    pub diags: Vec<Diagnostic>,
    /// Genus methods by (genus, name).
    pub methods: FxHashMap<(GenusId, String), FuncId>,
    /// Field defaults per genus: (module, expression) for each field.
    pub defaults: Vec<Vec<Option<(usize, ast::Expr)>>>,
    /// Generic parameter names of the function whose signature is being converted.
    pub generics: Vec<String>,
    /// Function contexts being lowered (closures nest).
    pub fns: Vec<FnCx>,
    /// Size generics (`<magnitudo N>`) of signatures, checked at calls.
    pub sizes: sizes::Sizes,
    /// Type parameter names of each genus (`genus Capsa<T>`), by genus id.
    pub genus_generics: Vec<Vec<String>>,
    /// Functions with `sponte` parameters: how many arguments a call must give.
    pub min_args: FxHashMap<FuncId, usize>,
    /// What each method-call site resolved to (src/ir/lower/calls.rs).
    pub calls: calls::CallSites,
    /// The entry's `ubique` options, fields of every command's record (commands.rs).
    pub cli_globals: Vec<ArgDecl>,
    /// Functions declared `argumenta name`: their record genus and declarations.
    pub cli_fns: FxHashMap<FuncId, commands::CliFn>,
    /// The entry's command line, gathered once every function is declared.
    pub cli: Option<commands::CliTree>,
}

/// Lowers a loaded module graph to a program. The last module is the entry file.
pub fn lower(sources: &SourceMap, graph: &ModuleGraph) -> Result<Program, Vec<Diagnostic>> {
    lower_with_calls(sources, graph).map(|(program, _)| program)
}

/// [`lower`], with what each method-call site of the graph resolved to.
pub fn lower_with_calls(
    sources: &SourceMap,
    graph: &ModuleGraph,
) -> Result<(Program, calls::CallSites), Vec<Diagnostic>> {
    let mut l = Lowerer {
        sources,
        modules: Vec::new(),
        program: Program::default(),
        sigs: Vec::new(),
        diags: Vec::new(),
        methods: FxHashMap::default(),
        defaults: Vec::new(),
        generics: Vec::new(),
        fns: Vec::new(),
        sizes: sizes::Sizes::default(),
        genus_generics: Vec::new(),
        min_args: FxHashMap::default(),
        calls: calls::CallSites::default(),
        cli_globals: Vec::new(),
        cli_fns: FxHashMap::default(),
        cli: None,
    };
    l.scan_cli_globals(graph);
    for (m, module) in graph.modules.iter().enumerate() {
        l.modules.push(ModInfo {
            name: display_name(&module.name),
            file: module.file,
            locale: module.ast.locale,
            ..ModInfo::default()
        });
        l.declare_types(m, &module.ast.items);
        l.bind_imports(m, module);
        l.resolve_types(m, &module.ast.items);
        l.declare_values(m, &module.ast.items);
    }
    l.build_cli(graph);
    let entry_module = graph.modules.len() - 1;
    for (m, module) in graph.modules.iter().enumerate() {
        l.lower_bodies(m, &module.ast.items, m == entry_module);
    }
    if l.diags.iter().any(Diagnostic::is_error) {
        l.diags.sort_by_key(|d| (d.span.file, d.span.lo));
        return Err(l.diags);
    }
    inplace::demote_pure_method_calls(&mut l.program);
    // Companions get their parameter slots now; the autodiff pass fills their bodies.
    for b in l.program.backward.clone() {
        let primal = l.program.func(b.primal);
        let mut slots: Vec<SlotInfo> = primal.slots[..primal.params as usize].to_vec();
        slots.push(SlotInfo {
            name: "residual".into(),
            ty: Ty::Any,
            narrow: false,
        });
        slots.push(SlotInfo {
            name: "upstream".into(),
            ty: primal.ret.clone(),
            narrow: false,
        });
        l.program.functions[b.companion.0 as usize].slots = slots;
    }
    Ok((l.program, l.calls))
}

/// A module's short name for IR dumps: the file stem, or `lib:stem`.
fn display_name(canonical: &str) -> String {
    let (lib, path) = match canonical.split_once(':') {
        Some((lib, p)) => (Some(lib), p),
        None => (None, canonical),
    };
    let stem = path.strip_suffix(".fab").unwrap_or(path);
    match lib {
        Some(lib) => format!("{lib}:{stem}"),
        None => stem.rsplit('/').next().unwrap_or(stem).to_string(),
    }
}

/// `@ privata` (`@ private` in English: the annotation is the keyword's spelling in the
/// module's reader locale).
fn is_private(anns: &[Annotation], locale: crate::syntax::vocab::Locale) -> bool {
    let v = crate::syntax::vocab::vocabulary();
    anns.iter().any(|a| {
        a.name.name == "privata"
            || v.keyword(locale, &a.name.name) == Some(crate::syntax::token::Kw::Privata)
    })
}

impl Lowerer<'_> {
    pub fn error(&mut self, code: codes::Code, msg: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(code, msg, span));
    }

    pub fn module_alias(&self, m: usize, name: &str) -> Option<usize> {
        match self.modules[m].values.get(name) {
            Some(ModItem::Module(t)) => Some(*t),
            _ => None,
        }
    }

    /// The module a namespace expression names in module `m`: an import alias that
    /// no local shades (`solum`), or a namespace another namespace re-exports with
    /// `publica` (`faber.solum` after `importa ex "faber:*" privata faber`).
    pub fn module_path(&mut self, m: usize, e: &ast::Expr) -> Option<usize> {
        match &e.kind {
            ast::ExprKind::Name(id) if self.local(&id.name).is_none() => {
                self.module_alias(m, &id.name)
            }
            ast::ExprKind::Field { expr, name } => {
                let outer = self.module_path(m, expr)?;
                if !self.modules[outer].exports.contains(&name.name) {
                    return None;
                }
                self.module_alias(outer, &name.name)
            }
            _ => None,
        }
    }

    fn define_value(&mut self, m: usize, name: &ast::Ident, item: ModItem, exported: bool) {
        let taken = self.modules[m].values.contains_key(&name.name)
            || self.modules[m].types.contains_key(&name.name);
        if taken && !matches!(item, ModItem::Module(_)) {
            self.error(
                codes::SEM_DUPLICATE,
                format!("`{}` is declared twice in this module", name.name),
                name.span,
            );
            return;
        }
        self.modules[m].values.insert(name.name.clone(), item);
        if exported {
            self.modules[m].exports.insert(name.name.clone());
        }
    }

    // ------------------------------------------------------------ declarations

    fn declare_types(&mut self, m: usize, items: &[Item]) {
        for item in items {
            match &item.kind {
                ItemKind::Genus(g) => {
                    let id = GenusId(self.program.genera.len() as u32);
                    self.program.genera.push(Genus {
                        name: g.name.name.clone(),
                        fields: Vec::new(),
                    });
                    self.defaults.push(Vec::new());
                    self.genus_generics
                        .push(g.generics.iter().map(|p| p.name.name.clone()).collect());
                    if self.modules[m]
                        .types
                        .insert(g.name.name.clone(), TypeName::Genus(id))
                        .is_some()
                    {
                        self.error(
                            codes::SEM_DUPLICATE,
                            format!("type `{}` is declared twice", g.name.name),
                            g.name.span,
                        );
                    }
                    if !is_private(&item.annotations, self.modules[m].locale) {
                        self.modules[m].exports.insert(g.name.name.clone());
                    }
                }
                ItemKind::Alias(a) => {
                    self.modules[m]
                        .types
                        .insert(a.name.name.clone(), TypeName::Alias(Ty::Any));
                    if !is_private(&item.annotations, self.modules[m].locale) {
                        self.modules[m].exports.insert(a.name.name.clone());
                    }
                }
                _ => {}
            }
        }
    }

    fn bind_imports(&mut self, m: usize, module: &crate::resolve::LoadedModule) {
        for (i, item) in module.ast.items.iter().enumerate() {
            let ItemKind::Import(imp) = &item.kind else {
                continue;
            };
            let Some(&target) = module.imports.get(&i) else {
                continue;
            };
            let publica = imp.visibility == Some(ast::Visibility::Publica);
            let (bound, ident) = match (&imp.alias, &imp.name) {
                (Some(alias), _) => (alias.name.clone(), alias.clone()),
                (None, Some(name)) => (name.name.clone(), name.clone()),
                (None, None) => {
                    let stem = imp
                        .path
                        .value
                        .rsplit(['/', ':'])
                        .next()
                        .unwrap_or("")
                        .to_string();
                    (
                        stem.clone(),
                        ast::Ident {
                            name: stem,
                            span: imp.path.span,
                        },
                    )
                }
            };
            // An item import when the target exports a declaration of that name.
            if let Some(name) = &imp.name {
                if self.modules[target].exports.contains(&name.name) {
                    if let Some(v) = self.modules[target].values.get(&name.name).copied() {
                        self.modules[m].values.insert(bound.clone(), v);
                    }
                    if let Some(t) = self.modules[target].types.get(&name.name).cloned() {
                        self.modules[m].types.insert(bound.clone(), t);
                    }
                    if publica {
                        self.modules[m].exports.insert(bound);
                    }
                    continue;
                }
            }
            self.define_value(m, &ident, ModItem::Module(target), publica);
        }
    }

    fn resolve_types(&mut self, m: usize, items: &[Item]) {
        for item in items {
            match &item.kind {
                ItemKind::Alias(a) => {
                    let ty = self.ty(m, &a.ty);
                    self.modules[m]
                        .types
                        .insert(a.name.name.clone(), TypeName::Alias(ty));
                }
                ItemKind::Genus(g) => {
                    let Some(TypeName::Genus(id)) =
                        self.modules[m].types.get(&g.name.name).cloned()
                    else {
                        continue;
                    };
                    let mut fields = Vec::new();
                    let mut defaults = Vec::new();
                    self.generics = self.genus_generics[id.0 as usize].clone();
                    let mut literals = Vec::new();
                    for member in &g.members {
                        if let ast::GenusMember::Field {
                            ty,
                            name,
                            sponte,
                            default,
                            ..
                        } = member
                        {
                            if fields.iter().any(|f: &Field| f.name == name.name) {
                                self.error(
                                    codes::SEM_DUPLICATE,
                                    format!("field `{}` is declared twice", name.name),
                                    name.span,
                                );
                                continue;
                            }
                            let narrow = self.is_narrow(m, ty);
                            let mut ty = self.ty(m, ty);
                            literals.push(default.as_ref().and_then(|e| literal_const(e, &ty)));
                            let mut default = default.clone().map(|e| (m, e));
                            // `T f sponte`: omitted in a record literal, the field is `nihil`.
                            if *sponte && default.is_none() {
                                ty = types::with_nihil(ty);
                                default = Some((m, types::nihil_expr(name.span)));
                            }
                            fields.push(Field {
                                name: name.name.clone(),
                                ty,
                                narrow,
                            });
                            defaults.push(default);
                        }
                    }
                    self.generics.clear();
                    self.program.genera[id.0 as usize].fields = fields;
                    self.defaults[id.0 as usize] = defaults;
                    let lits = &mut self.program.literal_defaults;
                    if lits.len() <= id.0 as usize {
                        lits.resize(id.0 as usize + 1, Vec::new());
                    }
                    lits[id.0 as usize] = literals;
                }
                _ => {}
            }
        }
    }

    /// Allocates a function id with its signature; the body is filled in later.
    fn declare_function(
        &mut self,
        m: usize,
        name: String,
        f: &ast::Func,
        receiver: Option<GenusId>,
    ) -> FuncId {
        self.generics = self.generics_of(f, receiver);
        let mut params: Vec<Ty> = receiver.map(Ty::Record).into_iter().collect();
        for p in &f.params {
            let t = self.ty(m, &p.ty);
            // A `sponte` parameter may be omitted: the caller passes `nihil` for it.
            params.push(if p.sponte.is_some() {
                types::with_nihil(t)
            } else {
                t
            });
        }
        let ret = f.ret.as_ref().map_or(Ty::Vacuum, |t| self.ty(m, t));
        let mut narrow: Vec<bool> = receiver.map(|_| false).into_iter().collect();
        narrow.extend(f.params.iter().map(|p| self.is_narrow(m, &p.ty)));
        let narrow_ret = f.ret.as_ref().is_some_and(|t| self.is_narrow(m, t));
        self.generics.clear();
        let id = FuncId(self.program.functions.len() as u32);
        self.declare_sizes(id, f, receiver.is_some());
        self.check_sponte_order(id, f, receiver.is_some());
        self.program.functions.push(Function {
            name,
            params: params.len() as u32,
            slots: Vec::new(),
            ret: ret.clone(),
            narrow_ret,
            throws: f.throws.is_some(),
            body: Block::default(),
            span: f.span,
        });
        self.sigs.push(Sig {
            params,
            narrow,
            ret,
            throws: f.throws.is_some(),
            module: m,
        });
        id
    }

    /// `@ radix backward "G"` on a function declares its companion
    /// `G(p₁…pₙ, residual, upstream) → iuncta<T₁…Tₙ>` (docs/autodiff.md); the autodiff
    /// pass fills its body after lowering.
    fn declare_companion(&mut self, m: usize, primal: FuncId, anns: &[Annotation], exported: bool) {
        for a in anns.iter().filter(|a| a.name.name == "radix") {
            let name = match a.args.as_slice() {
                [ast::AnnotArg::Word(w), ast::AnnotArg::Text(n)] if w == "backward" => n.clone(),
                [ast::AnnotArg::Word(w), ..] if w == "backward" => {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ radix backward` needs the companion's name: `@ radix backward \"grad_f\"`",
                        a.span,
                    );
                    continue;
                }
                _ => continue,
            };
            let sig = self.sigs[primal.0 as usize].clone();
            let mut params = sig.params.clone();
            params.push(Ty::Any);
            params.push(sig.ret.clone());
            let ret = Ty::Tuple(sig.params.clone());
            let module_name = self.modules[m].name.clone();
            let id =
                self.declare_internal(m, format!("{module_name}::{name}"), params, ret, a.span);
            let ident = ast::Ident { name, span: a.span };
            self.define_value(m, &ident, ModItem::Func(id), exported);
            self.program.backward.push(Backward {
                primal,
                companion: id,
                span: a.span,
            });
        }
    }

    /// Allocates a function id for generated code (entry, inits, tests, closures).
    pub fn declare_internal(
        &mut self,
        m: usize,
        name: String,
        params: Vec<Ty>,
        ret: Ty,
        span: Span,
    ) -> FuncId {
        let id = FuncId(self.program.functions.len() as u32);
        self.program.functions.push(Function {
            name,
            params: params.len() as u32,
            slots: Vec::new(),
            ret: ret.clone(),
            narrow_ret: false,
            throws: false,
            body: Block::default(),
            span,
        });
        self.sigs.push(Sig {
            params,
            narrow: Vec::new(),
            ret,
            throws: false,
            module: m,
        });
        id
    }

    fn declare_values(&mut self, m: usize, items: &[Item]) {
        let module_name = self.modules[m].name.clone();
        for item in items {
            let exported = !is_private(&item.annotations, self.modules[m].locale);
            match &item.kind {
                ItemKind::Func(f) => {
                    let id = self.declare_function(
                        m,
                        format!("{module_name}::{}", f.name.name),
                        f,
                        None,
                    );
                    self.define_value(m, &f.name, ModItem::Func(id), exported);
                    self.declare_companion(m, id, &item.annotations, exported);
                    self.declare_command_args(id, f, &item.annotations);
                }
                ItemKind::Genus(g) => {
                    let Some(TypeName::Genus(gid)) =
                        self.modules[m].types.get(&g.name.name).cloned()
                    else {
                        continue;
                    };
                    for member in &g.members {
                        if let ast::GenusMember::Method { func, .. } = member {
                            if let Some(a) = &func.args {
                                self.error(
                                    codes::SEM_BAD_ANNOTATION,
                                    "a method cannot read the command line: only a top-level function takes `argumenta`",
                                    a.span,
                                );
                            }
                            let name = format!("{module_name}::{}.{}", g.name.name, func.name.name);
                            let id = self.declare_function(m, name, func, Some(gid));
                            if self
                                .methods
                                .insert((gid, func.name.name.clone()), id)
                                .is_some()
                            {
                                self.error(
                                    codes::SEM_DUPLICATE,
                                    format!("method `{}` is declared twice", func.name.name),
                                    func.name.span,
                                );
                            }
                        }
                    }
                }
                ItemKind::Fixum(f) => {
                    let ty = self.ty(m, &f.ty);
                    let id = GlobalId(self.program.globals.len() as u32);
                    self.program.globals.push(Global {
                        name: f.name.name.clone(),
                        ty,
                    });
                    self.define_value(m, &f.name, ModItem::Global(id), exported);
                }
                ItemKind::Stmt(s) if !matches!(s.kind, ast::StmtKind::Error) => {
                    self.error(
                        codes::SEM_TOP_LEVEL_STATEMENT,
                        "only declarations may stand at top level",
                        s.span,
                    );
                }
                _ => {}
            }
        }
    }

    // ------------------------------------------------------------ bodies

    fn lower_bodies(&mut self, m: usize, items: &[Item], is_entry: bool) {
        let module_name = self.modules[m].name.clone();
        // Module initialiser: top-level constants in source order.
        let consts: Vec<&ast::TopFixum> = items
            .iter()
            .filter_map(|i| match &i.kind {
                ItemKind::Fixum(f) => Some(f),
                _ => None,
            })
            .collect();
        if !consts.is_empty() {
            let span = consts[0].name.span;
            let id = self.declare_internal(
                m,
                format!("{module_name}::<init>"),
                vec![],
                Ty::Vacuum,
                span,
            );
            self.begin(id, m, &[], None);
            for c in consts {
                if let Some(ModItem::Global(g)) = self.modules[m].values.get(&c.name.name).copied()
                {
                    let ty = self.program.globals[g.0 as usize].ty.clone();
                    let op = self.expr_to(&c.value, &ty);
                    self.emit(Stmt::SetGlobal { dst: g, value: op });
                }
            }
            self.finish(id);
            self.program.inits.push(id);
        }
        for item in items {
            match &item.kind {
                ItemKind::Func(f) => {
                    if let Some(ModItem::Func(id)) =
                        self.modules[m].values.get(&f.name.name).copied()
                    {
                        self.lower_func(id, m, f, None);
                    }
                }
                ItemKind::Genus(g) => {
                    let Some(TypeName::Genus(gid)) =
                        self.modules[m].types.get(&g.name.name).cloned()
                    else {
                        continue;
                    };
                    for member in &g.members {
                        if let ast::GenusMember::Method { func, .. } = member {
                            if let Some(id) =
                                self.methods.get(&(gid, func.name.name.clone())).copied()
                            {
                                self.lower_func(id, m, func, Some(gid));
                            }
                        }
                    }
                }
                ItemKind::Entry(e) => {
                    if !is_entry {
                        continue;
                    }
                    if self.program.entry.is_some() {
                        self.error(codes::SEM_DUPLICATE, "a file has one `incipit`", item.span);
                        continue;
                    }
                    let id = self.declare_internal(
                        m,
                        format!("{module_name}::incipit"),
                        vec![],
                        Ty::Int,
                        item.span,
                    );
                    self.begin(id, m, &[], None);
                    // Run-time errors of the command line point at `argumenta name`.
                    let at = e.args.as_ref().map_or(e.body.span, |a| a.span);
                    let chosen = self.entry_cli(e.args.as_ref(), at);
                    self.block_inline(&e.body);
                    if let Some(k) = chosen {
                        self.dispatch(k, at);
                    }
                    let code = match &e.exit {
                        Some(x) => self.expr_to(x, &Ty::Int),
                        None => Operand::Const(Const::Int(0)),
                    };
                    self.emit(Stmt::Return(Some(code)));
                    self.finish(id);
                    self.program.entry = Some(id);
                }
                ItemKind::Suite(_) | ItemKind::Case(_) if is_entry => {
                    let start = self.diags.len();
                    self.lower_tests(m, item, &mut Vec::new(), &mut Vec::new());
                    // A setup inlined into several tests reports its errors once.
                    hooks::dedup(&mut self.diags, start);
                }
                _ => {}
            }
        }
    }

    fn lower_func(&mut self, id: FuncId, m: usize, f: &ast::Func, receiver: Option<GenusId>) {
        let mut names: Vec<(String, bool)> = Vec::new();
        if receiver.is_some() {
            names.push(("ego".to_string(), false));
        }
        for p in &f.params {
            names.push((p.name.name.clone(), true));
        }
        if let (Some(a), None) = (&f.args, receiver) {
            names.push((a.name.clone(), false));
        }
        let ret = self.sigs[id.0 as usize].ret.clone();
        self.generics = self.generics_of(f, receiver);
        self.begin(id, m, &names, Some(ret.clone()));
        self.enter_sizes(id);
        self.sponte_defaults(f, receiver.is_some());
        self.block_inline(&f.body);
        self.check_returns(f, &ret);
        self.finish(id);
        self.leave_sizes(id);
        self.generics.clear();
    }

    /// The test cases of `item` (a suite or a case), each one function; `hooks` are
    /// the `praepara` / `postpara` blocks of the enclosing suites, outermost first.
    fn lower_tests<'a>(
        &mut self,
        m: usize,
        item: &'a Item,
        suites: &mut Vec<String>,
        hooks: &mut Vec<&'a ast::Hook>,
    ) {
        match &item.kind {
            ItemKind::Suite(s) => {
                suites.push(s.name.value.clone());
                let outer = hooks.len();
                for h in &s.hooks {
                    self.check_hook(m, h);
                    hooks.push(h);
                }
                for i in &s.items {
                    self.lower_tests(m, i, suites, hooks);
                }
                hooks.truncate(outer);
                suites.pop();
            }
            ItemKind::Case(c) => {
                let module_name = self.modules[m].name.clone();
                let id = self.declare_internal(
                    m,
                    format!("{module_name}::proba {:?}", c.name.value),
                    vec![],
                    Ty::Vacuum,
                    item.span,
                );
                self.begin(id, m, &[], None);
                // Setup inlined before the body, teardown after it, in one scope
                // (src/ir/lower/hooks.rs).
                let blocks: Vec<&ast::Block> = hooks::before(hooks)
                    .into_iter()
                    .map(|h| &h.body)
                    .chain([&c.body])
                    .chain(hooks::after(hooks).into_iter().map(|h| &h.body))
                    .collect();
                self.blocks_inline(&blocks);
                self.finish(id);
                let mut case = TestCase {
                    file: module_name,
                    suites: suites.clone(),
                    name: c.name.value.clone(),
                    tags: Vec::new(),
                    skip: None,
                    only: false,
                    repeat: 1,
                    func: id,
                };
                for md in &c.modifiers {
                    let text = match &md.arg {
                        Some(Literal::Text(t)) => Some(t.clone()),
                        _ => None,
                    };
                    // Modifiers are vocabulary (`omitte` is `skip` in English).
                    let spelled = md.name.name.as_str();
                    let modifier = crate::syntax::vocab::vocabulary()
                        .lookup(
                            crate::syntax::vocab::Section::Keyword,
                            self.modules[m].locale,
                            spelled,
                        )
                        .map_or(spelled, |r| r.canonical);
                    match modifier {
                        "tag" => case.tags.extend(text),
                        "omitte" | "futurum" => case.skip = Some(text.unwrap_or_default()),
                        "solum" => case.only = true,
                        "repete" => {
                            if let Some(Literal::Int(n)) = md.arg {
                                case.repeat = n.clamp(1, 1_000_000) as u32;
                            }
                        }
                        _ => {}
                    }
                }
                self.program.tests.push(case);
            }
            _ => {}
        }
    }
}
