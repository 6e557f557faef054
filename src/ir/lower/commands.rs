//! CLI programs (docs/language.md § "Commands"): `@ imperium "name"` makes a function a
//! command, `@ imperia "group" ex m` on the `incipit` mounts the commands of module `m`
//! under `group`, and `functio f() argumenta args` binds `args` to the command's parsed
//! command line (the entry's `ubique` options, then the command's own `@ optio` and
//! `@ operandus`). The lowerer gathers the tree once every function is declared, and
//! the entry lowers to: choose the command (`hospes.imperium_elige`, which also answers
//! `--help` and `--version`), bind the entry's own `argumenta`, run the entry's body,
//! then call the chosen command with its record (`hospes.imperium_argumenta`).

use rustc_hash::FxHashSet;

use super::{Lowerer, ModItem};
use crate::diag::codes;
use crate::ir::cli_spec::{ArgDecl, ArgKind, CliSpec, Command};
use crate::ir::host::Host;
use crate::ir::{BinOp, Block, Const, FuncId, GenusId, Operand, Prim, Rhs, Stmt, Ty};
use crate::resolve::ModuleGraph;
use crate::syntax::ast::{self, AnnotArg, Annotation, Ident, ItemKind};

/// The command line of the entry: its spec, and per command the function and the
/// genus of the record it takes (None: it takes no `argumenta`).
#[derive(Default)]
pub struct CliTree {
    pub spec: CliSpec,
    pub funcs: Vec<(FuncId, Option<GenusId>)>,
}

/// A command function as declared: the genus of its record and its own declarations.
pub struct CliFn {
    pub gid: GenusId,
    pub decls: Vec<ArgDecl>,
}

/// The one text argument of `@ name "text"` among `anns`.
fn text_of<'a>(anns: &'a [Annotation], name: &str) -> Option<(&'a str, &'a Annotation)> {
    anns.iter()
        .find(|a| a.name.name == name)
        .and_then(|a| match a.args.as_slice() {
            [AnnotArg::Text(t)] => Some((t.as_str(), a)),
            _ => None,
        })
}

fn entry_of(items: &[ast::Item]) -> Option<&ast::Item> {
    items.iter().find(|i| matches!(i.kind, ItemKind::Entry(_)))
}

/// A command path written `"a/b"` as its words.
fn words(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

impl Lowerer<'_> {
    /// The entry's `ubique` options, which every command's record holds too: read before
    /// any function is declared (their diagnostics come when the entry is read again).
    /// When the graph's entry is a module of a package compiled on its own (no `@ cli`
    /// of its own), the package entry's options stand in (`ModuleGraph::host_entry`).
    pub(super) fn scan_cli_globals(&mut self, graph: &ModuleGraph) {
        let own = graph
            .modules
            .last()
            .and_then(|m| entry_of(&m.ast.items))
            .map(|e| e.annotations.as_slice());
        let is_cli = |anns: &[Annotation]| anns.iter().any(|a| a.name.name == "cli");
        let anns = match (own, graph.host_entry.as_deref()) {
            (Some(own), Some(host)) if !is_cli(own) => host,
            (Some(own), _) => own,
            (None, Some(host)) => host,
            (None, None) => return,
        };
        let seen = self.diags.len();
        let decls = self.arg_decls(anns, None, &[]);
        self.diags.truncate(seen);
        self.cli_globals = decls
            .into_iter()
            .filter(|d| d.ubique && d.kind == ArgKind::Opt)
            .collect();
    }

    /// `functio f(…) argumenta args`: its record genus (the `ubique` options, then its own
    /// declarations) becomes its last parameter.
    pub(super) fn declare_command_args(&mut self, id: FuncId, f: &ast::Func, anns: &[Annotation]) {
        if f.args.is_none() {
            return;
        }
        let globals = self.cli_globals.clone();
        let decls = self.arg_decls(anns, None, &globals);
        let fields: Vec<&ArgDecl> = globals.iter().chain(decls.iter()).collect();
        let gid = self.args_genus(&fields);
        self.sigs[id.0 as usize].params.push(Ty::Record(gid));
        self.program.functions[id.0 as usize].params += 1;
        self.cli_fns.insert(id, CliFn { gid, decls });
    }

    /// Gathers the entry's command line: its metadata, its own declarations, and the
    /// commands of the entry module and of every module it mounts.
    pub(super) fn build_cli(&mut self, graph: &ModuleGraph) {
        let me = graph.modules.len() - 1;
        let Some(entry) = entry_of(&graph.modules[me].ast.items) else {
            return;
        };
        let anns = &entry.annotations;
        let mut tree = CliTree::default();
        tree.spec.name = text_of(anns, "cli").map_or(String::new(), |t| t.0.to_string());
        tree.spec.version = text_of(anns, "versio").map_or(String::new(), |t| t.0.to_string());
        tree.spec.descr = text_of(anns, "descriptio").map_or(String::new(), |t| t.0.to_string());
        tree.spec.args = self.arg_decls(anns, None, &[]);
        let mut visited = FxHashSet::default();
        visited.insert(me);
        self.mount(graph, me, &[], &mut tree, &mut visited);
        tree.spec.help = anns.iter().any(|a| a.name.name == "cli") || !tree.funcs.is_empty();
        let root_operand = tree
            .spec
            .args
            .iter()
            .any(|d| d.owner.is_none() && d.kind != ArgKind::Opt);
        if root_operand && !tree.funcs.is_empty() {
            let at = anns
                .iter()
                .find(|a| a.name.name == "operandus")
                .map_or(entry.span, |a| a.span);
            self.error(
                codes::SEM_BAD_ANNOTATION,
                "a program with commands reads its operands in the commands: declare `@ operandus` on the `@ imperium` functions",
                at,
            );
        }
        self.cli = Some(tree);
    }

    /// The commands of module `m` under `prefix`, then the modules its `incipit` mounts.
    fn mount(
        &mut self,
        graph: &ModuleGraph,
        m: usize,
        prefix: &[String],
        tree: &mut CliTree,
        visited: &mut FxHashSet<usize>,
    ) {
        let items = &graph.modules[m].ast.items;
        for item in items {
            let ItemKind::Func(f) = &item.kind else {
                continue;
            };
            let Some(imp) = item.annotations.iter().find(|a| a.name.name == "imperium") else {
                continue;
            };
            let name = match imp.args.as_slice() {
                [AnnotArg::Text(t)] if !words(t).is_empty() => t.clone(),
                [] => f.name.name.clone(),
                _ => {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ imperium` takes the command's name as text: `@ imperium \"name\"`",
                        imp.span,
                    );
                    continue;
                }
            };
            let Some(ModItem::Func(id)) = self.modules[m].values.get(&f.name.name).copied() else {
                continue;
            };
            if !f.params.is_empty() {
                self.error(
                    codes::SEM_BAD_ANNOTATION,
                    format!(
                        "the command `{}` takes its command line through `argumenta`, not parameters",
                        f.name.name
                    ),
                    f.params[0].span,
                );
                continue;
            }
            let mut path = prefix.to_vec();
            path.extend(words(&name));
            if tree.spec.commands.iter().any(|c| c.path == path) {
                self.error(
                    codes::SEM_DUPLICATE,
                    format!("the command `{}` is declared twice", path.join(" ")),
                    imp.span,
                );
                continue;
            }
            let k = tree.spec.commands.len();
            let aliases = item
                .annotations
                .iter()
                .filter(|a| a.name.name == "alias")
                .filter_map(|a| match a.args.as_slice() {
                    [AnnotArg::Text(t)] if !t.is_empty() && !t.contains(char::is_whitespace) => {
                        Some(t.clone())
                    }
                    _ => {
                        self.error(
                            codes::SEM_BAD_ANNOTATION,
                            "`@ alias` takes one word as text: `@ alias \"ls\"`",
                            a.span,
                        );
                        None
                    }
                })
                .collect();
            let descr =
                text_of(&item.annotations, "descriptio").map_or(String::new(), |t| t.0.to_string());
            tree.spec.commands.push(Command {
                path,
                aliases,
                descr,
            });
            let (gid, decls) = match self.cli_fns.get(&id) {
                Some(c) => (Some(c.gid), c.decls.clone()),
                None => {
                    let globals = self.cli_globals.clone();
                    (None, self.arg_decls(&item.annotations, None, &globals))
                }
            };
            tree.spec.args.extend(decls.into_iter().map(|d| ArgDecl {
                owner: Some(k),
                ..d
            }));
            tree.funcs.push((id, gid));
        }
        let Some(entry) = entry_of(items) else {
            return;
        };
        for a in entry
            .annotations
            .iter()
            .filter(|a| a.name.name == "imperia")
        {
            let (group, alias) = match a.args.as_slice() {
                [AnnotArg::Text(g), AnnotArg::Word(ex), AnnotArg::Word(alias)] if ex == "ex" => {
                    (g.clone(), alias.clone())
                }
                _ => {
                    self.error(
                        codes::SEM_BAD_ANNOTATION,
                        "`@ imperia` takes a group and a module: `@ imperia \"group\" ex modulus`",
                        a.span,
                    );
                    continue;
                }
            };
            let Some(target) = self.module_alias(m, &alias) else {
                self.error_hint(
                    codes::SEM_BAD_ANNOTATION,
                    format!(
                        "`@ imperia \"{group}\" ex {alias}`: `{alias}` is not an imported module"
                    ),
                    a.span,
                    Some(format!(
                        "import it whole: `importa ex \"./path\" privata * ut {alias}`"
                    )),
                );
                continue;
            };
            if !visited.insert(target) {
                self.error(
                    codes::SEM_BAD_ANNOTATION,
                    format!("`@ imperia \"{group}\" ex {alias}` mounts a module inside itself"),
                    a.span,
                );
                continue;
            }
            let mut path = prefix.to_vec();
            path.extend(words(&group));
            let descr = entry_of(&graph.modules[target].ast.items)
                .and_then(|e| text_of(&e.annotations, "descriptio"))
                .map_or(String::new(), |t| t.0.to_string());
            tree.spec.groups.push((path.clone(), descr));
            self.mount(graph, target, &path, tree, visited);
            visited.remove(&target);
        }
    }

    /// The entry's command line, lowered before its body: with commands, the choice of
    /// the command (its index in a new slot, returned); then `argumenta name` bound to
    /// the entry's own record.
    pub(super) fn entry_cli(
        &mut self,
        args: Option<&Ident>,
        span: crate::source::Span,
    ) -> Option<Operand> {
        let tree = self.cli.take().unwrap_or_default();
        let text = tree.spec.to_text();
        let chosen = (!tree.funcs.is_empty()).then(|| {
            self.temp(
                Rhs::Host(
                    Host::ImperiumElige,
                    vec![Operand::Const(Const::Text(text.clone()))],
                ),
                Ty::Int,
                span,
            )
        });
        if let Some(name) = args {
            let fields: Vec<ArgDecl> = tree.spec.fields_of(None).into_iter().cloned().collect();
            let refs: Vec<&ArgDecl> = fields.iter().collect();
            let gid = self.args_genus(&refs);
            let ops = vec![
                Operand::Const(Const::Int(i64::from(gid.0))),
                Operand::Const(Const::Text(text)),
            ];
            self.bind_args(name, gid, Host::ArgumentaParsa, ops);
        }
        self.cli = Some(tree);
        chosen
    }

    /// After the entry's body: calls the chosen command, with its record.
    pub(super) fn dispatch(&mut self, chosen: Operand, span: crate::source::Span) {
        let tree = self.cli.take().unwrap_or_default();
        let text = tree.spec.to_text();
        let mut otherwise = Block::default();
        for (k, &(f, gid)) in tree.funcs.iter().enumerate().rev() {
            self.push_block();
            let mut ops = Vec::new();
            if let Some(gid) = gid {
                ops.push(self.temp(
                    Rhs::Host(
                        Host::ImperiumArgumenta,
                        vec![
                            Operand::Const(Const::Int(i64::from(gid.0))),
                            Operand::Const(Const::Text(text.clone())),
                            Operand::Const(Const::Int(k as i64)),
                        ],
                    ),
                    Ty::Record(gid),
                    span,
                ));
            }
            let ret = self.sigs[f.0 as usize].ret.clone();
            self.temp(Rhs::Call(f, ops), ret, span);
            let then = self.pop_block();
            self.push_block();
            let cond = self.temp(
                Rhs::Prim(
                    Prim::Binary(BinOp::Eq),
                    vec![chosen.clone(), Operand::Const(Const::Int(k as i64))],
                ),
                Ty::Bool,
                span,
            );
            self.emit(Stmt::If {
                cond,
                then,
                otherwise,
            });
            otherwise = self.pop_block();
        }
        for s in otherwise.stmts {
            self.emit(s);
        }
    }
}
