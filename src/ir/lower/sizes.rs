//! Size generics checked at every call. A function declared
//! `functio f<magnitudo N>(tensor<f32, [N]> a, tensor<f32, [N]> b) → tensor<f32, [N]>`
//! keeps, beside its erased signature, where each size parameter stands in its
//! parameter and result types: as one extent (`[N]`) or as the whole shape
//! (`tensor<f32, F>`). At each call the shapes that the arguments' static types show,
//! and explicit size arguments (`f<4>(…)`, `f<[2, 3]>(…)`), bind the size parameters;
//! two different values for one parameter are a SEM026 at the call, and the result
//! type is instantiated with the bound values so that later calls and operations see
//! its shape.
//!
//! Inside a generic body an extent parameter is rigid: a parameter typed
//! `tensor<f32, [M]>` carries `M` into the calls it is passed to (also through the
//! result of a nested generic call and through bindings), and `M` equals only itself —
//! passing it where another size parameter or a fixed extent is bound to the same `N`
//! is a conflict. Those reports wait until the body is lowered and are dropped when a
//! slot that carries a size parameter is written beyond its definition (a parameter:
//! at all), since its shape may then change. Shapes known only at run time (`tf32`,
//! `_`) bind nothing: those calls keep the run-time shape checks of the operations
//! inside (RUN013).

use rustc_hash::FxHashMap;

use super::Lowerer;
use crate::diag::{codes, Diagnostic};
use crate::ir::visit::child_blocks;
use crate::ir::*;
use crate::source::Span;
use crate::syntax::ast::{self, Dim, Type, TypeArg, TypeKind};

/// One extent of a parameter or result type in a generic signature.
#[derive(Clone, Copy, Debug, PartialEq)]
enum SizeDim {
    Nat(u64),
    /// The size parameter with this index (among the `magnitudo` parameters).
    Var(usize),
    Unknown,
}

/// Where tensor shapes sit in a signature type, mirroring its `Ty`.
#[derive(Clone, Debug)]
enum Template {
    Tensor(Vec<SizeDim>),
    /// `tensor<T, F>`: the size parameter with this index is the whole shape.
    Whole(usize),
    Tuple(Vec<Template>),
    List(Box<Template>),
    Other,
}

impl Template {
    fn has_var(&self) -> bool {
        match self {
            Template::Tensor(ds) => ds.iter().any(|d| matches!(d, SizeDim::Var(_))),
            Template::Whole(_) => true,
            Template::Tuple(ts) => ts.iter().any(Template::has_var),
            Template::List(t) => t.has_var(),
            Template::Other => false,
        }
    }
}

/// The size-generic part of a function's signature.
#[derive(Clone, Debug)]
pub struct SizeSig {
    /// Names of the `magnitudo` parameters, in declaration order.
    vars: Vec<String>,
    /// For each generic parameter (`<T, magnitudo N>`), its size-parameter index.
    positions: Vec<Option<usize>>,
    /// Aligned with the signature's parameters (the receiver first in methods).
    params: Vec<Template>,
    names: Vec<String>,
    ret: Template,
}

/// A value a size parameter takes at a call: an extent, or a size parameter of the
/// function whose body contains the call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Term {
    Const(u64),
    Rigid(usize),
}

/// Where a binding comes from.
#[derive(Clone, Copy, Debug)]
enum Source {
    Arg {
        param: usize,
        axis: usize,
        span: Span,
    },
    Explicit {
        span: Span,
    },
}

/// Size-generic state of the lowerer.
#[derive(Default)]
pub struct Sizes {
    sigs: FxHashMap<FuncId, SizeSig>,
    /// Slots of the function being lowered whose extents are its own size parameters
    /// (parameters typed with them, results of generic calls instantiated with them).
    rigid: FxHashMap<(FuncId, Slot), Vec<Option<usize>>>,
    /// Conflicts that involve a rigid size parameter, reported when the body is done.
    pending: Vec<(FuncId, Diagnostic)>,
}

/// One argument of a call as the size check sees it: the parameter it fills, its
/// source span, its static type and its lowered operand.
pub struct ArgInfo {
    pub param: usize,
    pub span: Span,
    pub ty: Ty,
    pub op: Operand,
}

fn size_dim(d: &Dim, vars: &[String]) -> SizeDim {
    match d {
        Dim::Nat(n, _) => SizeDim::Nat(*n),
        Dim::Name(id) => vars
            .iter()
            .position(|v| *v == id.name)
            .map_or(SizeDim::Unknown, SizeDim::Var),
        Dim::Hole(_) | Dim::Nested(..) => SizeDim::Unknown,
    }
}

fn template(t: &Type, vars: &[String]) -> Template {
    let dims = |ds: &[Dim]| Template::Tensor(ds.iter().map(|d| size_dim(d, vars)).collect());
    match &t.kind {
        TypeKind::Shaped { dims: ds, .. } => dims(ds),
        TypeKind::Path { path, args } if path.len() == 1 => match path[0].name.as_str() {
            "tensor" => match args.get(1) {
                Some(TypeArg::Shape(ds, _)) => dims(ds),
                Some(TypeArg::Type(Type {
                    kind: TypeKind::Path { path, args },
                    ..
                })) if path.len() == 1 && args.is_empty() => vars
                    .iter()
                    .position(|v| *v == path[0].name)
                    .map_or(Template::Other, Template::Whole),
                _ => Template::Other,
            },
            "lista" => match args.first() {
                Some(TypeArg::Type(e)) => Template::List(Box::new(template(e, vars))),
                _ => Template::Other,
            },
            _ => Template::Other,
        },
        TypeKind::Tuple(args) => Template::Tuple(
            args.iter()
                .map(|a| match a {
                    TypeArg::Type(t) => template(t, vars),
                    _ => Template::Other,
                })
                .collect(),
        ),
        _ => Template::Other,
    }
}

/// The size-generic signature of `f`, when it declares `magnitudo` parameters that
/// appear in its parameter or result types.
pub fn size_sig(f: &ast::Func, receiver: bool) -> Option<SizeSig> {
    let mut vars = Vec::new();
    let mut positions = Vec::new();
    for g in &f.generics {
        if g.magnitudo {
            positions.push(Some(vars.len()));
            vars.push(g.name.name.clone());
        } else {
            positions.push(None);
        }
    }
    if vars.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    let mut names = Vec::new();
    if receiver {
        params.push(Template::Other);
        names.push("ego".to_string());
    }
    for p in &f.params {
        params.push(template(&p.ty, &vars));
        names.push(p.name.name.clone());
    }
    let ret = f
        .ret
        .as_ref()
        .map_or(Template::Other, |t| template(t, &vars));
    if !params.iter().any(Template::has_var) && !ret.has_var() {
        return None;
    }
    Some(SizeSig {
        vars,
        positions,
        params,
        names,
        ret,
    })
}

/// What the arguments of one call bind: (parameter, value, axis) for extents, and
/// (parameter, shape) for whole-shape parameters.
#[derive(Default)]
struct Found {
    dims: Vec<(usize, Term, usize)>,
    shapes: Vec<(usize, StaticShape)>,
}

type StaticShape = Vec<Option<u64>>;

/// The size parameters that a value of static type `ty`, matched against `tmpl`,
/// binds. `rigid` gives the extents of the value itself that are size parameters of
/// the function being lowered.
fn bind(tmpl: &Template, ty: &Ty, rigid: Option<&[Option<usize>]>, out: &mut Found) {
    match (tmpl, ty) {
        (
            Template::Whole(v),
            Ty::Tensor {
                shape: Some(actual),
                ..
            },
        ) => out.shapes.push((*v, actual.clone())),
        (
            Template::Tensor(ds),
            Ty::Tensor {
                shape: Some(actual),
                ..
            },
        ) if ds.len() == actual.len() => {
            for (axis, (d, a)) in ds.iter().zip(actual).enumerate() {
                let SizeDim::Var(v) = d else { continue };
                let term = match a {
                    Some(n) => Term::Const(*n),
                    None => match rigid.and_then(|r| r.get(axis).copied().flatten()) {
                        Some(r) => Term::Rigid(r),
                        None => continue,
                    },
                };
                out.dims.push((*v, term, axis));
            }
        }
        (Template::Tuple(ts), Ty::Tuple(tys)) if ts.len() == tys.len() => {
            for (t, y) in ts.iter().zip(tys) {
                bind(t, y, None, out);
            }
        }
        (Template::List(t), Ty::List(e)) => bind(t, e, None, out),
        _ => {}
    }
}

/// `ty` (a signature type) with the extents of `tmpl` that are bound to an extent
/// filled in.
fn instantiate(
    tmpl: &Template,
    ty: &Ty,
    bound: &[Option<Term>],
    shapes: &[Option<StaticShape>],
) -> Ty {
    match (tmpl, ty) {
        (
            Template::Whole(v),
            Ty::Tensor {
                shape: None,
                int,
                wide,
            },
        ) => Ty::Tensor {
            shape: shapes.get(*v).cloned().flatten(),
            int: *int,
            wide: *wide,
        },
        (
            Template::Tensor(ds),
            Ty::Tensor {
                shape: Some(shape),
                int,
                wide,
            },
        ) if ds.len() == shape.len() => Ty::Tensor {
            shape: Some(
                ds.iter()
                    .zip(shape)
                    .map(|(d, s)| match (d, s) {
                        (SizeDim::Var(v), None) => match bound.get(*v).copied().flatten() {
                            Some(Term::Const(n)) => Some(n),
                            _ => None,
                        },
                        _ => *s,
                    })
                    .collect(),
            ),
            int: *int,
            wide: *wide,
        },
        (Template::Tuple(ts), Ty::Tuple(tys)) if ts.len() == tys.len() => Ty::Tuple(
            ts.iter()
                .zip(tys)
                .map(|(t, y)| instantiate(t, y, bound, shapes))
                .collect(),
        ),
        (Template::List(t), Ty::List(e)) => Ty::List(Box::new(instantiate(t, e, bound, shapes))),
        _ => ty.clone(),
    }
}

/// Says where a binding comes from: an argument (with the axis when the parameter
/// has several), or the explicit type argument.
fn source_text(sig: &SizeSig, s: Source) -> String {
    match s {
        Source::Arg { param, axis, .. } => {
            let rank = match sig.params.get(param) {
                Some(Template::Tensor(ds)) => ds.len(),
                _ => 0,
            };
            let name = sig.names.get(param).map_or("?", String::as_str);
            if rank > 1 {
                format!("argument `{name}` (axis {axis})")
            } else {
                format!("argument `{name}`")
            }
        }
        Source::Explicit { .. } => "the type argument".to_string(),
    }
}

fn source_span(s: Source) -> Span {
    match s {
        Source::Arg { span, .. } | Source::Explicit { span } => span,
    }
}

/// How many statements of `block` (at any depth) write each slot.
fn written_slots(block: &Block, out: &mut FxHashMap<Slot, u32>) {
    for st in &block.stmts {
        let place_root = |p: &Place| match p.root {
            PlaceRoot::Slot(s) => Some(s),
            _ => None,
        };
        let written: Vec<Slot> = match st {
            Stmt::Let { dst, .. } => vec![*dst],
            Stmt::Store { place, .. } => place_root(place).into_iter().collect(),
            Stmt::MethodInPlace { dst, place, .. } | Stmt::CallInPlace { dst, place, .. } => {
                dst.iter().copied().chain(place_root(place)).collect()
            }
            Stmt::ForRange { var, .. } | Stmt::ForEach { var, .. } => vec![*var],
            Stmt::Try { catch_slot, .. } => catch_slot.iter().copied().collect(),
            _ => Vec::new(),
        };
        for s in written {
            *out.entry(s).or_insert(0) += 1;
        }
        child_blocks(st, &mut |b| written_slots(b, out));
    }
}

impl Lowerer<'_> {
    /// Records the size-generic signature of a declared function.
    pub fn declare_sizes(&mut self, id: FuncId, f: &ast::Func, receiver: bool) {
        if let Some(s) = size_sig(f, receiver) {
            self.sizes.sigs.insert(id, s);
        }
    }

    /// At the start of a generic body: its parameters carry its size parameters.
    pub fn enter_sizes(&mut self, id: FuncId) {
        let Some(sig) = self.sizes.sigs.get(&id) else {
            return;
        };
        for (i, t) in sig.params.iter().enumerate() {
            if let Template::Tensor(ds) = t {
                if t.has_var() {
                    let dims = ds
                        .iter()
                        .map(|d| match d {
                            SizeDim::Var(v) => Some(*v),
                            _ => None,
                        })
                        .collect();
                    self.sizes.rigid.insert((id, Slot(i as u32)), dims);
                }
            }
        }
    }

    /// At the end of a generic body: reports its pending conflicts unless a
    /// parameter that carries a size parameter is assigned somewhere in it.
    pub fn leave_sizes(&mut self, id: FuncId) {
        let pending: Vec<Diagnostic> = {
            let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.sizes.pending)
                .into_iter()
                .partition(|(f, _)| *f == id);
            self.sizes.pending = rest;
            mine.into_iter().map(|(_, d)| d).collect()
        };
        let params = self.program.func(id).params;
        let carriers: Vec<Slot> = self
            .sizes
            .rigid
            .keys()
            .filter(|(f, _)| *f == id)
            .map(|(_, s)| *s)
            .collect();
        self.sizes.rigid.retain(|(f, _), _| *f != id);
        if pending.is_empty() {
            return;
        }
        let mut writes = FxHashMap::default();
        written_slots(&self.program.func(id).body, &mut writes);
        // A parameter is written by the caller, a local or temporary by its one
        // definition: any other write may change the shape on some path.
        let rewritten = |s: &Slot| {
            let n = writes.get(s).copied().unwrap_or(0);
            if s.0 < params {
                n > 0
            } else {
                n > 1
            }
        };
        if carriers.iter().any(rewritten) {
            return;
        }
        self.diags.extend(pending);
    }

    /// A binding `dst ← op` in a generic body: `dst` carries what `op` carries.
    pub fn carry_sizes(&mut self, op: &Operand, dst: Slot) {
        let Some(cur) = self.fns.last().map(|c| c.id) else {
            return;
        };
        if let Operand::Slot(s) = op {
            if let Some(d) = self.sizes.rigid.get(&(cur, *s)).cloned() {
                self.sizes.rigid.insert((cur, dst), d);
            }
        }
    }

    /// Notes that `op`, the result of a generic call, has size parameters of the
    /// function being lowered as extents.
    pub fn note_rigid(&mut self, op: &Operand, dims: Option<Vec<Option<usize>>>) {
        if let (Operand::Slot(s), Some(d)) = (op, dims) {
            let cur = self.cx().id;
            self.sizes.rigid.insert((cur, *s), d);
        }
    }

    /// Binds the size parameters of `f` at a call from the arguments' static types
    /// and explicit type arguments (`f<4>(x)`), reports conflicts (SEM026), and gives
    /// the call's result type instantiated with the bound extents, with the extents
    /// that are size parameters of the calling function (for [`Self::note_rigid`]).
    pub fn unify_sizes(
        &mut self,
        f: FuncId,
        args: &[ArgInfo],
        type_args: &[TypeArg],
        span: Span,
        ret: &Ty,
    ) -> (Ty, Option<Vec<Option<usize>>>) {
        let Some(sig) = self.sizes.sigs.get(&f).cloned() else {
            return (ret.clone(), None);
        };
        let cur = self.fns.last().map(|c| c.id);
        let mut obs: Vec<Vec<(Term, Source)>> = vec![Vec::new(); sig.vars.len()];
        let mut whole: Vec<Vec<(StaticShape, Source)>> = vec![Vec::new(); sig.vars.len()];
        for (k, ta) in type_args.iter().enumerate() {
            let Some(Some(v)) = sig.positions.get(k) else {
                continue;
            };
            match ta {
                TypeArg::Nat(n, sp) => {
                    obs[*v].push((Term::Const(*n), Source::Explicit { span: *sp }));
                }
                TypeArg::Shape(ds, sp) => {
                    let shape = ds
                        .iter()
                        .map(|d| match d {
                            Dim::Nat(n, _) => Some(*n),
                            _ => None,
                        })
                        .collect();
                    whole[*v].push((shape, Source::Explicit { span: *sp }));
                }
                TypeArg::Type(_) => {}
            }
        }
        for a in args {
            let Some(tmpl) = sig.params.get(a.param) else {
                continue;
            };
            let rigid = match (&a.op, cur) {
                (Operand::Slot(s), Some(c)) => self.sizes.rigid.get(&(c, *s)).cloned(),
                _ => None,
            };
            let mut found = Found::default();
            bind(tmpl, &a.ty, rigid.as_deref(), &mut found);
            let src = Source::Arg {
                param: a.param,
                axis: 0,
                span: a.span,
            };
            for (v, shape) in found.shapes {
                whole[v].push((shape, src));
            }
            for (v, term, axis) in found.dims {
                obs[v].push((
                    term,
                    Source::Arg {
                        param: a.param,
                        axis,
                        span: a.span,
                    },
                ));
            }
        }
        let cur_vars: Vec<String> = cur
            .and_then(|c| self.sizes.sigs.get(&c))
            .map(|s| s.vars.clone())
            .unwrap_or_default();
        let fname = self.program.func(f).name.clone();
        let short = fname.rsplit("::").next().unwrap_or(&fname).to_string();
        for (v, list) in obs.iter().enumerate() {
            let Some(&(first, src_a)) = list.first() else {
                continue;
            };
            let Some(&(other, src_b)) = list.iter().find(|(t, _)| *t != first) else {
                continue;
            };
            let d = self.size_conflict(
                &sig,
                &short,
                v,
                (first, src_a),
                (other, src_b),
                &cur_vars,
                span,
            );
            let rigid = matches!(first, Term::Rigid(_)) || matches!(other, Term::Rigid(_));
            match (rigid, cur) {
                (true, Some(c)) => self.sizes.pending.push((c, d)),
                _ => self.diags.push(d),
            }
        }
        let shapes: Vec<Option<StaticShape>> = whole
            .iter()
            .enumerate()
            .map(|(v, list)| self.merge_shapes(&sig, &short, v, list, span))
            .collect();
        let bound: Vec<Option<Term>> = obs.iter().map(|l| l.first().map(|(t, _)| *t)).collect();
        let ty = instantiate(&sig.ret, ret, &bound, &shapes);
        let rigid = match &sig.ret {
            Template::Tensor(ds) if !cur_vars.is_empty() => {
                let dims: Vec<Option<usize>> = ds
                    .iter()
                    .map(|d| match d {
                        SizeDim::Var(v) => match bound[*v] {
                            Some(Term::Rigid(r)) => Some(r),
                            _ => None,
                        },
                        _ => None,
                    })
                    .collect();
                dims.iter().any(Option::is_some).then_some(dims)
            }
            _ => None,
        };
        (ty, rigid)
    }

    /// The shape that the observations of whole-shape parameter `var` agree on (an
    /// extent known in one and open in another is the known one); a shape that
    /// disagrees with the earlier ones (another rank, another known extent) is SEM026.
    fn merge_shapes(
        &mut self,
        sig: &SizeSig,
        fname: &str,
        var: usize,
        list: &[(StaticShape, Source)],
        span: Span,
    ) -> Option<StaticShape> {
        let (first, src_a) = list.first()?;
        let mut merged = first.clone();
        for (shape, src_b) in &list[1..] {
            let fits = shape.len() == merged.len()
                && merged
                    .iter()
                    .zip(shape)
                    .all(|(m, s)| !matches!((m, s), (Some(p), Some(q)) if p != q));
            if !fits {
                let show = |s: &StaticShape| {
                    let ds: Vec<String> = s
                        .iter()
                        .map(|d| d.map_or("_".to_string(), |n| n.to_string()))
                        .collect();
                    format!("[{}]", ds.join(", "))
                };
                let n = &sig.vars[var];
                let msg = format!(
                    "`{fname}` needs one shape for `{n}`, but {} gives {} and {} gives {}",
                    source_text(sig, *src_a),
                    show(first),
                    source_text(sig, *src_b),
                    show(shape)
                );
                let d = Diagnostic::error(codes::SEM_SIZE_CONFLICT, msg, span)
                    .with_label(source_span(*src_a), format!("`{n}` = {} here", show(first)))
                    .with_label(source_span(*src_b), format!("`{n}` = {} here", show(shape)))
                    .with_hint(format!(
                        "`{n}` is the whole shape of every tensor typed with it in `{fname}`; a shape known only at run time (`tf32`) is checked when the call runs"
                    ));
                self.diags.push(d);
                return Some(merged);
            }
            for (m, s) in merged.iter_mut().zip(shape) {
                if m.is_none() {
                    *m = *s;
                }
            }
        }
        Some(merged)
    }

    #[allow(clippy::too_many_arguments)]
    fn size_conflict(
        &self,
        sig: &SizeSig,
        fname: &str,
        var: usize,
        a: (Term, Source),
        b: (Term, Source),
        cur_vars: &[String],
        span: Span,
    ) -> Diagnostic {
        let n = &sig.vars[var];
        let value = |t: Term| match t {
            Term::Const(k) => k.to_string(),
            Term::Rigid(r) => format!("`{}`", cur_vars.get(r).map_or("?", String::as_str)),
        };
        let from = |s: Source| source_text(sig, s);
        let at = source_span;
        let msg = format!(
            "`{fname}` needs one size for `{n}`, but {} gives {} and {} gives {}",
            from(a.1),
            value(a.0),
            from(b.1),
            value(b.0)
        );
        let mut d = Diagnostic::error(codes::SEM_SIZE_CONFLICT, msg, span)
            .with_label(at(a.1), format!("`{n}` = {} here", value(a.0)))
            .with_label(at(b.1), format!("`{n}` = {} here", value(b.0)));
        let rigid = matches!(a.0, Term::Rigid(_)) || matches!(b.0, Term::Rigid(_));
        d = if rigid {
            d.with_hint(
                "a size parameter of the enclosing function stands for whatever size its caller passes: it equals only itself, never another size parameter or a fixed extent; give the parameters one size parameter",
            )
        } else {
            d.with_hint(format!(
                "every `{n}` in the parameter types of `{fname}` is the same extent; a shape known only at run time (`tf32`) is checked when the call runs"
            ))
        };
        d
    }
}

#[cfg(test)]
mod tests {
    use crate::resolve::MemoryLoader;
    use crate::source::SourceMap;

    const ADDE: &str = "functio adde<magnitudo N>(tensor<f32, [N]> a, tensor<f32, [N]> b) → tensor<f32, [N]> {\n    redde a.addita(b)\n}\n";

    /// The codes of the diagnostics that lowering `ADDE` + `src` reports, in order.
    fn codes(src: &str) -> Vec<&'static str> {
        let mut sources = SourceMap::new();
        let text = format!("{ADDE}{src}");
        let id = sources.add("t.fab", &text);
        let mut loader = MemoryLoader {
            files: Default::default(),
        };
        match crate::compile_to(&mut sources, id, &mut loader, crate::Stage::Lowered) {
            Ok(_) => Vec::new(),
            Err(ds) => ds.iter().map(|d| d.code.id).collect(),
        }
    }

    fn main(body: &str) -> String {
        format!("incipit {{\n    fixum tf32[] s ← vacua\n    fixum tf32[3] x ← s.crea(1.0, [3])\n    fixum tf32[4] y ← s.crea(1.0, [4])\n    fixum tf32 u ← s.crea(1.0, [4])\n{body}\n}}\n")
    }

    #[test]
    fn agreeing_and_unknown_extents_pass() {
        assert!(codes(&main("nota adde(x, x), adde(y, y), adde(x, u), adde(u, y)")).is_empty());
        assert!(codes(&main("nota adde<3>(x, x), adde<4>(u, u)")).is_empty());
    }

    #[test]
    fn each_conflicting_parameter_is_reported_once() {
        assert_eq!(codes(&main("nota adde(x, y)")), ["SEM026"]);
        let two = "functio par<magnitudo M, magnitudo N>(tensor<f32, [M, N]> a, tensor<f32, [M, N]> b) → f32 {\n    redde a.summa() + b.summa()\n}\n";
        let src = format!(
            "{two}{}",
            main("fixum tf32[2, 3] p ← s.crea(1.0, [2, 3])\nfixum tf32[4, 5] q ← s.crea(1.0, [4, 5])\nnota par(p, q), par(p, p)")
        );
        assert_eq!(codes(&src), ["SEM026", "SEM026"]);
    }

    #[test]
    fn result_types_are_instantiated() {
        // [3] + [3] is a [3]: a declared [4] is a static shape mismatch.
        assert_eq!(codes(&main("fixum tf32[4] z ← adde(x, x)")), ["SEM023"]);
        assert!(codes(&main("fixum tf32[3] z ← adde(x, x)")).is_empty());
        // unknown extents leave the result's extent unknown
        assert!(codes(&main("fixum tf32[3] z ← adde(u, u)")).is_empty());
    }

    #[test]
    fn rigid_size_parameters_equal_only_themselves() {
        let same = "functio bis<magnitudo M>(tensor<f32, [M]> a) → tensor<f32, [M]> {\n    redde adde(adde(a, a), a)\n}\n";
        assert!(codes(&format!("{same}{}", main("nota bis(x)"))).is_empty());
        let fixed = "functio fixa<magnitudo M>(tensor<f32, [M]> a) → tensor<f32, [M]> {\n    fixum tf32[] s ← vacua\n    fixum tf32[3] c ← s.crea(1.0, [3])\n    redde adde(a, c)\n}\n";
        assert_eq!(codes(&format!("{fixed}{}", main("nota 0"))), ["SEM026"]);
        // a parameter assigned in the body no longer carries its size parameter
        let moved = "functio renova<magnitudo M, magnitudo K>(tensor<f32, [M]> a, tensor<f32, [K]> b) → tensor<f32, [K]> {\n    a ← b\n    redde adde(a, b)\n}\n";
        assert!(codes(&format!("{moved}{}", main("nota renova(x, x)"))).is_empty());
        // a closure's captures carry none
        let closure = "functio clausa<magnitudo M, magnitudo K>(tensor<f32, [M]> a, tensor<f32, [K]> b) → tensor<f32, [M]> {\n    fixum (tf32) → tf32 g ← (tf32 t) ∴ adde(t, b)\n    redde g(a)\n}\n";
        assert!(codes(&format!("{closure}{}", main("nota clausa(x, x)"))).is_empty());
    }

    #[test]
    fn bindings_in_a_generic_body_carry_size_parameters() {
        let bound = "functio bis<magnitudo M, magnitudo K>(tensor<f32, [M]> a, tensor<f32, [K]> b) → tensor<f32, [M]> {\n    fixum _ c ← adde(a, a)\n    fixum _ d ← c\n    redde adde(d, b)\n}\n";
        assert_eq!(codes(&format!("{bound}{}", main("nota 0"))), ["SEM026"]);
        // a `varia` assigned again may hold another shape: nothing is reported
        let varied = "functio ter<magnitudo M, magnitudo K>(tensor<f32, [M]> a, tensor<f32, [K]> b) → tensor<f32, [K]> {\n    varia _ c ← adde(a, a)\n    c ← adde(b, b)\n    redde adde(c, b)\n}\n";
        assert!(codes(&format!("{varied}{}", main("nota 0"))).is_empty());
    }

    #[test]
    fn whole_shape_parameters_bind_the_whole_shape() {
        let whole = "functio totum<magnitudo F>(tensor<f32, F> a, tensor<f32, F> b) → tensor<f32, F> {\n    redde a.addita(b)\n}\n";
        let with = |body: &str| codes(&format!("{whole}{}", main(body)));
        assert!(with("nota totum(x, x), totum(y, u), totum(u, x)").is_empty());
        assert_eq!(with("nota totum(x, y)"), ["SEM026"]);
        // another rank is another shape
        assert_eq!(
            with("fixum tf32[3, 1] m ← s.crea(1.0, [3, 1])\nnota totum(x, m)"),
            ["SEM026"]
        );
        // an open extent takes the known one; the result has the merged shape
        assert!(with("fixum tf32[_, 2] h ← s.crea(1.0, [3, 2])\nfixum tf32[3, _] k ← s.crea(1.0, [3, 2])\nfixum tf32[3, 2] r ← totum(h, k)").is_empty());
        assert_eq!(with("fixum tf32[4] r ← totum(x, x)"), ["SEM023"]);
        assert_eq!(with("nota totum<[4]>(x, x)"), ["SEM026"]);
    }
}
