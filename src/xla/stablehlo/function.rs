//! Lowering a whole Radix IR function to one StableHLO `func.func`: its parameters
//! become the program's parameters (a tensor of a given shape, or a number as a
//! rank-0 tensor), its body — straight-line code in A-normal form — is walked once,
//! every tensor op going through [`lower_op`], and its result (a tensor, a number or
//! a tuple of them) becomes the program's results.
//!
//! Values known when the function is traced stay on the host: literal numbers,
//! truth values and shape lists, and the scalar arithmetic on them (`/ 1.0, 4` in a
//! generated companion) is folded. A call of a known function is inlined; `itera ab`
//! with known bounds and `itera ex` over a list of known length are unrolled, `si` on
//! a known flag traces its branch; the parameter-tree host functions `hospes.folia`
//! and `hospes.ex_foliis` walk the traced tree (trees.rs). What the device program
//! cannot express yet — control flow on device values (`si`, `dum`), other host
//! functions, closures — is a [`LowerError::Unsupported`] naming it; the function
//! then runs in the interpreter as before.

use super::bound::{
    append, place_root, rhs_name, stmt_name, store, unrolled, Bound, Flow, MAX_UNROLLED,
};
use super::dispatch::lower_op;
use super::lower::{LowerError, Operand};
use super::{numbers, trees};
use super::{Function, TensorType, Unary, Value};
use crate::ir::ops::{Op, OpResult};
use crate::ir::{self, BinOp, Const, FuncId, GenusId, Prim, Program, Rhs, Stmt, UnOp};
use crate::source::Span;
use crate::xla::exec::ElementType;

/// A parameter of the lowered function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Param {
    /// A tensor of this type.
    Tensor(TensorType),
    /// A number, passed as a rank-0 tensor of this element type.
    Number(ElementType),
    /// A parameter the body must not read (a companion's `residual: nihil`).
    Nihil,
    /// A record (`genus`): its fields in declaration order, each a parameter.
    Record(Vec<Param>),
    /// A `numerus` known when the function is traced (a loop bound, an index): no
    /// device parameter; the program is specialised to it.
    Int(i64),
    /// A `bivalens` known when the function is traced (a `si` condition).
    Bool(bool),
    /// A `lista`: its items in order, each a parameter.
    List(Vec<Param>),
}

/// The most elements `planata` gives as device numbers in a traced function.
const MAX_PLANATA: usize = 4096;

/// How deep calls are inlined before the lowering gives up (a recursive function).
const MAX_INLINE_DEPTH: usize = 32;

struct Tracer<'p> {
    program: &'p Program,
    f: Function,
    /// The element type of a `nihil` seed (`nihil.crea(…)`): the run's precision.
    elem: ElementType,
    /// The source span of the statement being traced (the innermost, through inlined
    /// calls): where a lowering that fails is reported.
    at: Option<Span>,
}

/// The source span a statement carries, if any.
fn stmt_span(s: &Stmt) -> Option<Span> {
    match s {
        Stmt::Let { span, .. }
        | Stmt::Store { span, .. }
        | Stmt::MethodInPlace { span, .. }
        | Stmt::CallInPlace { span, .. }
        | Stmt::Loop { span, .. }
        | Stmt::ForRange { span, .. }
        | Stmt::ForEach { span, .. }
        | Stmt::Throw { span, .. }
        | Stmt::Fatal { span, .. }
        | Stmt::Assert { span, .. }
        | Stmt::Out { span, .. } => Some(*span),
        _ => None,
    }
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported { what: what.into() })
}

/// How a lowered function's result is rebuilt from the program's outputs: which
/// output each tensor or number is, and the values known when it was traced.
#[derive(Clone, Debug, PartialEq)]
pub enum Template {
    /// Output `i`, a tensor.
    Tensor(usize),
    /// Output `i`, a rank-0 tensor that is a number (`fractus`).
    Number(usize),
    /// A number folded when the function was traced.
    Float(f64),
    Int(i64),
    Bool(bool),
    Nihil,
    Tuple(Vec<Template>),
    List(Vec<Template>),
    /// A record of this genus, its fields in order (the genus from the function's
    /// declared result type).
    Record(GenusId, Vec<Template>),
}

impl Template {
    /// How many program outputs it reads.
    pub fn outputs(&self) -> usize {
        match self {
            Template::Tensor(_) | Template::Number(_) => 1,
            Template::Tuple(parts) | Template::List(parts) | Template::Record(_, parts) => {
                parts.iter().map(Template::outputs).sum()
            }
            _ => 0,
        }
    }
}

/// The StableHLO module for `func` of `program` called with `params`; `elem` is the
/// element type of tensors the function makes from nothing (the run's precision).
pub fn lower_function(
    program: &Program,
    func: FuncId,
    params: &[Param],
    elem: ElementType,
) -> Result<String, LowerError> {
    Ok(lower_function_with_template(program, func, params, elem)?.0)
}

/// [`lower_function`] with the [`Template`] its outputs rebuild the result by.
pub fn lower_function_with_template(
    program: &Program,
    func: FuncId,
    params: &[Param],
    elem: ElementType,
) -> Result<(String, Template), LowerError> {
    let mut types = Vec::new();
    device_types(params, &mut types);
    let (f, values) = Function::new(&types);
    let mut values = values.into_iter();
    let args: Vec<Bound> = params.iter().map(|p| bind(p, &mut values)).collect();
    let mut t = Tracer {
        program,
        f,
        elem,
        at: None,
    };
    let result = match t.call(func, args, 0) {
        Ok(r) => r,
        Err(e) => return Err(e.at(t.at)),
    };
    let mut results = Vec::new();
    let template = flatten(program, &program.func(func).ret, &result, &mut results)?;
    Ok((t.f.finish(&results), template))
}

/// The device parameter types of `params`, records' fields in order.
fn device_types(params: &[Param], out: &mut Vec<TensorType>) {
    for p in params {
        match p {
            Param::Tensor(t) => out.push(t.clone()),
            Param::Number(e) => out.push(TensorType::new(*e, &[])),
            Param::Nihil | Param::Int(_) | Param::Bool(_) => {}
            Param::Record(fields) | Param::List(fields) => device_types(fields, out),
        }
    }
}

/// What parameter `p` is bound to, taking its device values from `values`.
fn bind(p: &Param, values: &mut impl Iterator<Item = Value>) -> Bound {
    let mut next = || values.next().expect("one value per device parameter");
    match p {
        Param::Nihil => Bound::Nihil,
        Param::Tensor(_) => Bound::Device(next()),
        Param::Number(_) => Bound::Number(next()),
        Param::Record(fields) => Bound::Record(fields.iter().map(|f| bind(f, values)).collect()),
        Param::Int(n) => Bound::Int(*n),
        Param::Bool(b) => Bound::Bool(*b),
        Param::List(items) => Bound::List(items.iter().map(|p| bind(p, values)).collect()),
    }
}

/// The device values of a result (a tensor, a number, each part of a tuple or
/// record) appended to `out`, and the template that rebuilds the result; `ty` is its
/// declared type (a record's genus comes from it).
fn flatten(
    program: &Program,
    ty: &ir::Ty,
    b: &Bound,
    out: &mut Vec<Value>,
) -> Result<Template, LowerError> {
    Ok(match b {
        Bound::Device(v) => {
            out.push(*v);
            Template::Tensor(out.len() - 1)
        }
        Bound::Number(v) => {
            out.push(*v);
            Template::Number(out.len() - 1)
        }
        Bound::Float(x) => Template::Float(*x),
        Bound::Int(n) => Template::Int(*n),
        Bound::Bool(x) => Template::Bool(*x),
        // A companion's cotangent of an integer or flag operand.
        Bound::Nihil => Template::Nihil,
        Bound::Tuple(parts) => {
            let types = match ty {
                ir::Ty::Tuple(t) if t.len() == parts.len() => t.clone(),
                _ => vec![ir::Ty::Any; parts.len()],
            };
            Template::Tuple(
                parts
                    .iter()
                    .zip(&types)
                    .map(|(p, t)| flatten(program, t, p, out))
                    .collect::<Result<_, _>>()?,
            )
        }
        Bound::List(parts) => {
            let elem = match ty {
                ir::Ty::List(t) => (**t).clone(),
                _ => ir::Ty::Any,
            };
            Template::List(
                parts
                    .iter()
                    .map(|p| flatten(program, &elem, p, out))
                    .collect::<Result<_, _>>()?,
            )
        }
        Bound::Ints(v) => Template::List(v.iter().map(|&n| Template::Int(n)).collect()),
        Bound::Record(parts) => {
            let ir::Ty::Record(g) = ty else {
                return unsupported("a record result whose genus is not declared");
            };
            let fields = &program.genera[g.0 as usize].fields;
            if fields.len() != parts.len() {
                return unsupported("a record result of another genus");
            }
            Template::Record(
                *g,
                parts
                    .iter()
                    .zip(fields)
                    .map(|(p, fd)| flatten(program, &fd.ty, p, out))
                    .collect::<Result<_, _>>()?,
            )
        }
    })
}

impl Tracer<'_> {
    /// Traces `func`'s body with its parameters bound to `args`; returns what it
    /// returns.
    fn call(&mut self, func: FuncId, args: Vec<Bound>, depth: usize) -> Result<Bound, LowerError> {
        let fun = self.program.func(func);
        if depth > MAX_INLINE_DEPTH {
            return unsupported(format!(
                "calls nested deeper than {MAX_INLINE_DEPTH} (`{}`)",
                fun.name
            ));
        }
        if args.len() != fun.params as usize {
            return unsupported(format!(
                "`{}` with {} arguments for {} parameters",
                fun.name,
                args.len(),
                fun.params
            ));
        }
        let mut slots: Vec<Option<Bound>> = vec![None; fun.slots.len()];
        for (i, a) in args.into_iter().enumerate() {
            slots[i] = Some(a);
        }
        if let Flow::Return(b) = self.block(&fun.body, &mut slots, depth)? {
            return Ok(b);
        }
        unsupported(format!("`{}`, which ends without `redde`", fun.name))
    }

    /// Traces the statements of `block` in order; a `redde` ends the trace.
    fn block(
        &mut self,
        block: &ir::Block,
        slots: &mut [Option<Bound>],
        depth: usize,
    ) -> Result<Flow, LowerError> {
        for stmt in &block.stmts {
            if let Some(sp) = stmt_span(stmt) {
                self.at = Some(sp);
            }
            match stmt {
                Stmt::Let { dst, rhs, .. } => {
                    let b = self.rhs(rhs, slots, depth)?;
                    slots[dst.0 as usize] = Some(b);
                }
                Stmt::Return(Some(op)) => return Ok(Flow::Return(self.operand(op, slots)?)),
                Stmt::Store { place, value, .. } => {
                    let v = self.operand(value, slots)?;
                    let path = place
                        .path
                        .iter()
                        .map(|step| match step {
                            ir::PlaceStep::Field(i) => Ok(*i as usize),
                            ir::PlaceStep::Index(o) => match self.operand(o, slots)? {
                                Bound::Int(n) if n >= 0 => Ok(n as usize),
                                _ => unsupported("a store at an index the device computes"),
                            },
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    let b = place_root(place, slots)?;
                    store(b, &path, v)?;
                }
                // `appende`; its result (`vacuum`, kept by `… ergo r.appende(x)`) is
                // left unset: a read of it does not lower.
                Stmt::MethodInPlace {
                    dst,
                    method: ir::Method::Appende,
                    place,
                    args,
                    ..
                } if place.path.is_empty() && args.len() == 1 => {
                    let v = self.operand(&args[0], slots)?;
                    let b = place_root(place, slots)?;
                    append(b, v)?;
                    if let Some(slot) = dst.and_then(|d| slots.get_mut(d.0 as usize)) {
                        *slot = None;
                    }
                }
                // `si` on a truth value known now: only the branch taken is traced.
                Stmt::If {
                    cond,
                    then,
                    otherwise,
                } => {
                    let taken = match self.operand(cond, slots)? {
                        Bound::Bool(true) => then,
                        Bound::Bool(false) => otherwise,
                        _ => return unsupported("`si` on a value the device computes"),
                    };
                    if let Flow::Return(b) = self.block(taken, slots, depth)? {
                        return Ok(Flow::Return(b));
                    }
                }
                // `itera ab` with bounds known now: unrolled, one trace per pass.
                Stmt::ForRange {
                    var,
                    start,
                    end,
                    step,
                    inclusive,
                    body,
                    ..
                } => {
                    let int = |b: Bound| match b {
                        Bound::Int(n) => Ok(n),
                        _ => unsupported("`itera` whose bounds the device computes"),
                    };
                    let (a, e, st) = (
                        int(self.operand(start, slots)?)?,
                        int(self.operand(end, slots)?)?,
                        int(self.operand(step, slots)?)?,
                    );
                    let passes = unrolled(a, e, st, *inclusive)?;
                    for i in passes {
                        slots[var.0 as usize] = Some(Bound::Int(i));
                        if let Flow::Return(b) = self.block(body, slots, depth)? {
                            return Ok(Flow::Return(b));
                        }
                    }
                }
                // `itera ex` over a list known now (its length, not its values): one
                // trace per item, as `itera ab`.
                Stmt::ForEach {
                    var,
                    kind,
                    source,
                    body,
                    ..
                } => {
                    let items = match (self.operand(source, slots)?, kind) {
                        (Bound::List(v) | Bound::Tuple(v), ir::EachKind::Values) => v,
                        (Bound::Ints(v), ir::EachKind::Values) => {
                            v.into_iter().map(Bound::Int).collect()
                        }
                        (Bound::List(v) | Bound::Tuple(v), ir::EachKind::Keys) => {
                            (0..v.len() as i64).map(Bound::Int).collect()
                        }
                        (Bound::Ints(v), ir::EachKind::Keys) => {
                            (0..v.len() as i64).map(Bound::Int).collect()
                        }
                        (other, _) => return unsupported(format!("`itera` over {other:?}")),
                    };
                    if items.len() > MAX_UNROLLED {
                        return unsupported(format!("`itera` of more than {MAX_UNROLLED} passes"));
                    }
                    for item in items {
                        match slots.get_mut(var.0 as usize) {
                            Some(slot) => *slot = Some(item),
                            None => return unsupported(format!("the slot %{}", var.0)),
                        }
                        if let Flow::Return(b) = self.block(body, slots, depth)? {
                            return Ok(Flow::Return(b));
                        }
                    }
                }
                other => return unsupported(format!("the statement {}", stmt_name(other))),
            }
        }
        Ok(Flow::Next)
    }

    fn operand(&self, op: &ir::Operand, slots: &[Option<Bound>]) -> Result<Bound, LowerError> {
        match op {
            ir::Operand::Slot(s) => match slots.get(s.0 as usize) {
                Some(Some(b)) => Ok(b.clone()),
                _ => unsupported(format!("slot %{} read before it is set", s.0)),
            },
            ir::Operand::Global(g) => unsupported(format!("the module constant #{}", g.0)),
            ir::Operand::Const(c) => match c {
                Const::Int(n) => Ok(Bound::Int(*n)),
                Const::Float(x) => Ok(Bound::Float(*x)),
                Const::Bool(b) => Ok(Bound::Bool(*b)),
                Const::Nihil => Ok(Bound::Nihil),
                other => unsupported(format!("the constant {other:?}")),
            },
        }
    }

    fn rhs(
        &mut self,
        rhs: &Rhs,
        slots: &[Option<Bound>],
        depth: usize,
    ) -> Result<Bound, LowerError> {
        let read = |ops: &[ir::Operand]| -> Result<Vec<Bound>, LowerError> {
            ops.iter().map(|o| self.operand(o, slots)).collect()
        };
        match rhs {
            Rhs::Use(op) | Rhs::Coerce(op, _) => self.operand(op, slots),
            Rhs::List(ops) => {
                let items = read(ops)?;
                let ints: Option<Vec<i64>> = items
                    .iter()
                    .map(|b| match b {
                        Bound::Int(n) => Some(*n),
                        _ => None,
                    })
                    .collect();
                match ints {
                    Some(v) => Ok(Bound::Ints(v)),
                    None => Ok(Bound::List(items)),
                }
            }
            Rhs::Tuple(ops) => Ok(Bound::Tuple(read(ops)?)),
            Rhs::Record(_, ops) => Ok(Bound::Record(read(ops)?)),
            Rhs::Field(r, i) => match self.operand(r, slots)? {
                Bound::Record(fields) => fields
                    .get(*i as usize)
                    .cloned()
                    .map_or_else(|| unsupported(format!("field {i}")), Ok),
                other => unsupported(format!("a field of {other:?}")),
            },
            Rhs::Call(callee, ops) => {
                let args = read(ops)?;
                self.call(*callee, args, depth + 1)
            }
            Rhs::Op(op, ops) => {
                let args = read(ops)?;
                self.op(*op, &args)
            }
            Rhs::Prim(Prim::Binary(b), ops) if ops.len() == 2 => {
                let (x, y) = (self.operand(&ops[0], slots)?, self.operand(&ops[1], slots)?);
                self.binary(*b, x, y)
            }
            // `--precision f32`'s rounding of a `fractus` to f32 at an `f32` store or
            // return (src/eval/narrow.rs); other values pass unchanged.
            Rhs::Prim(Prim::Unary(UnOp::Narrow), ops) if ops.len() == 1 => {
                Ok(match self.operand(&ops[0], slots)? {
                    Bound::Float(x) => Bound::Float(x as f32 as f64),
                    Bound::Number(v) if self.f.ty(v).elem == ElementType::F64 => {
                        let n = self.f.convert(v, ElementType::F32);
                        Bound::Number(self.f.convert(n, ElementType::F64))
                    }
                    other => other,
                })
            }
            Rhs::Prim(Prim::Unary(UnOp::Neg), ops) if ops.len() == 1 => {
                match self.operand(&ops[0], slots)? {
                    Bound::Int(n) => Ok(Bound::Int(-n)),
                    Bound::Float(x) => Ok(Bound::Float(-x)),
                    Bound::Number(v) => Ok(Bound::Number(self.f.unary(Unary::Negate, v))),
                    _ => unsupported("`-` of a tensor (the interpreter refuses it too)"),
                }
            }
            Rhs::Index(t, i) => {
                let (t, i) = (self.operand(t, slots)?, self.operand(i, slots)?);
                let Bound::Int(n) = i else {
                    return unsupported("an index the device computes");
                };
                let part = usize::try_from(n).ok().and_then(|n| match &t {
                    Bound::Tuple(parts) | Bound::List(parts) => parts.get(n).cloned(),
                    Bound::Ints(v) => v.get(n).map(|&x| Bound::Int(x)),
                    _ => None,
                });
                part.map_or_else(|| unsupported(format!("part {n} of {t:?}")), Ok)
            }
            Rhs::Method(ir::Method::Longitudo, list, args) if args.is_empty() => {
                match self.operand(list, slots)? {
                    // A tensor's `longitudo` is its rank.
                    Bound::Device(v) => Ok(Bound::Int(self.f.ty(v).rank() as i64)),
                    Bound::Ints(v) => Ok(Bound::Int(v.len() as i64)),
                    Bound::List(v) | Bound::Tuple(v) => Ok(Bound::Int(v.len() as i64)),
                    other => unsupported(format!("`longitudo` of {other:?}")),
                }
            }
            // `radix`, `potentia` of a number: folded when known now.
            Rhs::Method(m @ (ir::Method::Radix | ir::Method::Potentia), x, ops) => {
                let (x, args) = (self.operand(x, slots)?, read(ops)?);
                numbers::method(&mut self.f, *m, x, &args)
            }
            // `↦ fractus` of a number known now (`t ↦ fractus`, a step count).
            Rhs::Convert(x, ir::Ty::Float) => match self.operand(x, slots)? {
                Bound::Int(n) => Ok(Bound::Float(n as f64)),
                b @ (Bound::Float(_) | Bound::Number(_)) => Ok(b),
                other => unsupported(format!("`↦ fractus` of {other:?}")),
            },
            Rhs::Host(h, ops) => trees::host(&self.f, *h, &read(ops)?),
            other => unsupported(format!("the expression {}", rhs_name(other))),
        }
    }

    /// The operand of a tensor op for a traced value.
    fn to_operand(&self, b: &Bound) -> Result<Operand, LowerError> {
        Ok(match b {
            Bound::Device(v) | Bound::Number(v) => Operand::Tensor(*v),
            Bound::Int(n) => Operand::Int(*n),
            Bound::Float(x) => Operand::Num(*x),
            Bound::Bool(x) => Operand::Flag(*x),
            Bound::Ints(v) => Operand::Dims(
                v.iter()
                    .map(|&d| usize::try_from(d))
                    .collect::<Result<_, _>>()
                    .or_else(|_| unsupported(format!("the negative extent in {v:?}")))?,
            ),
            Bound::Nihil => Operand::Elem(self.elem),
            Bound::List(items) => Operand::List(
                items
                    .iter()
                    .map(|b| self.to_operand(b))
                    .collect::<Result<_, _>>()?,
            ),
            Bound::Tuple(_) | Bound::Record(_) => {
                return unsupported("a tuple or a record as a tensor operand")
            }
        })
    }

    fn op(&mut self, op: Op, args: &[Bound]) -> Result<Bound, LowerError> {
        // The cotangent helpers over values of any structure (records, numbers), and
        // a shape, known when the function is traced.
        match (op, args) {
            (Op::Magnitudines, [Bound::Device(v)]) => {
                let dims = self.f.ty(*v).dims.iter().map(|&d| d as i64).collect();
                return Ok(Bound::Ints(dims));
            }
            (Op::Numerus, [Bound::Device(v)]) => {
                return Ok(Bound::Int(self.f.ty(*v).numel() as i64));
            }
            // `planata`: the elements in row-major order, a list of numbers the device
            // computes (one slice each, so a list a loop can walk when traced).
            (Op::Planata, [Bound::Device(v)]) => {
                let n = self.f.ty(*v).numel();
                if n > MAX_PLANATA {
                    return unsupported(format!(
                        "`planata` of {n} elements (at most {MAX_PLANATA} as device numbers)"
                    ));
                }
                let flat = self.f.reshape(*v, &[n]);
                let items = (0..n)
                    .map(|i| {
                        let one = self.f.slice(flat, &[i], &[i + 1]);
                        Bound::Number(self.f.reshape(one, &[]))
                    })
                    .collect();
                return Ok(Bound::List(items));
            }
            (Op::RetroNihil, [x]) if !matches!(x, Bound::Device(_)) => return self.zeros(x),
            (Op::RetroAdde, [x, y])
                if !(matches!(x, Bound::Device(_)) && matches!(y, Bound::Device(_))) =>
            {
                return self.deep_add(x, y)
            }
            _ => {}
        }
        // A save-split's reader takes the pair; its lowering reads the first part.
        let mut args = args.to_vec();
        let pair_at = match op {
            Op::GeluExPari => Some(1),
            Op::AttentioExPari => Some(4),
            _ => None,
        };
        if let Some(i) = pair_at {
            if let Some(Bound::Tuple(parts)) = args.get(i) {
                let first = parts.first().cloned();
                args[i] = first.map_or_else(|| unsupported("an empty pair"), Ok)?;
            }
        }
        let operands = args
            .iter()
            .map(|b| self.to_operand(b))
            .collect::<Result<Vec<_>, _>>()?;
        let results = lower_op(&mut self.f, op, &operands)?;
        Ok(match op.result() {
            OpResult::Pair | OpResult::Triple => {
                Bound::Tuple(results.into_iter().map(Bound::Device).collect())
            }
            OpResult::Float => match results.as_slice() {
                [v] => Bound::Number(*v),
                _ => return unsupported(format!("`{}` with {} results", op.name(), results.len())),
            },
            _ => match results.as_slice() {
                [v] => Bound::Device(*v),
                _ => return unsupported(format!("`{}` with {} results", op.name(), results.len())),
            },
        })
    }

    /// Zeros of `x`'s structure (`retro_nihil`): a record's fields each, 0.0 for a
    /// number.
    fn zeros(&mut self, x: &Bound) -> Result<Bound, LowerError> {
        Ok(match x {
            Bound::Device(v) => {
                let t = self.f.ty(*v).clone();
                Bound::Device(self.f.splat(t.elem, 0.0, &t.dims))
            }
            Bound::Number(_) | Bound::Float(_) | Bound::Int(_) => Bound::Float(0.0),
            Bound::Record(fields) => Bound::Record(
                fields
                    .iter()
                    .map(|f| self.zeros(f))
                    .collect::<Result<_, _>>()?,
            ),
            Bound::Tuple(parts) => Bound::Tuple(
                parts
                    .iter()
                    .map(|f| self.zeros(f))
                    .collect::<Result<_, _>>()?,
            ),
            Bound::List(parts) => Bound::List(
                parts
                    .iter()
                    .map(|f| self.zeros(f))
                    .collect::<Result<_, _>>()?,
            ),
            Bound::Nihil => Bound::Nihil,
            other => return unsupported(format!("`retro_nihil` of {other:?}")),
        })
    }

    /// `x + y` over values of one structure (`retro_adde`): records and tuples part
    /// by part, numbers as numbers, tensors element-wise.
    fn deep_add(&mut self, x: &Bound, y: &Bound) -> Result<Bound, LowerError> {
        match (x, y) {
            (Bound::Record(a), Bound::Record(b))
            | (Bound::Tuple(a), Bound::Tuple(b))
            | (Bound::List(a), Bound::List(b))
                if a.len() == b.len() =>
            {
                let parts = a
                    .iter()
                    .zip(b)
                    .map(|(p, q)| self.deep_add(p, q))
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(match x {
                    Bound::Record(_) => Bound::Record(parts),
                    Bound::List(_) => Bound::List(parts),
                    _ => Bound::Tuple(parts),
                })
            }
            (Bound::Nihil, other) | (other, Bound::Nihil) => Ok(other.clone()),
            (Bound::Device(_), Bound::Device(_)) => self.op(Op::RetroAdde, &[x.clone(), y.clone()]),
            // A number's cotangent may be a rank-0 tensor (`retro_ad_formam` of a
            // number operand) or a number; their sum is a number.
            _ => {
                let number = |b: &Bound| match b {
                    Bound::Device(v) | Bound::Number(v) => Bound::Number(*v),
                    other => other.clone(),
                };
                self.binary(BinOp::Add, number(x), number(y))
            }
        }
    }

    /// A binary operator as the interpreter applies it: on numbers known now,
    /// folded; `+ − * /` on numbers the device computes, the element-wise op on
    /// rank-0 tensors; `·` of two tensors, `matmul`; `⊙` with a tensor on either
    /// side, `multiplica`. Anything else the interpreter refuses or decides at run
    /// time (a comparison of a device number is control flow on it) is not lowered.
    fn binary(&mut self, b: BinOp, x: Bound, y: Bound) -> Result<Bound, LowerError> {
        let known = |v: &Bound| match v {
            Bound::Int(n) => Some(*n as f64),
            Bound::Float(x) => Some(*x),
            _ => None,
        };
        if let (Bound::Int(m), Bound::Int(n)) = (&x, &y) {
            let folded = match b {
                BinOp::Add => m.checked_add(*n),
                BinOp::Sub => m.checked_sub(*n),
                BinOp::Mul => m.checked_mul(*n),
                _ => None,
            };
            if let Some(r) = folded {
                return Ok(Bound::Int(r));
            }
        }
        if let (Some(p), Some(q)) = (known(&x), known(&y)) {
            // Comparisons of numbers known now decide control flow when traced.
            let cmp = match b {
                BinOp::Lt => Some(p < q),
                BinOp::Gt => Some(p > q),
                BinOp::Le => Some(p <= q),
                BinOp::Ge => Some(p >= q),
                BinOp::Eq | BinOp::NumEq => Some(p == q),
                BinOp::Ne | BinOp::NumNe => Some(p != q),
                _ => None,
            };
            if let Some(c) = cmp {
                return Ok(Bound::Bool(c));
            }
            let r = match b {
                BinOp::Add => p + q,
                BinOp::Sub => p - q,
                BinOp::Mul => p * q,
                BinOp::Div => p / q,
                _ => return unsupported(format!("`{}` of numbers", b.glyph())),
            };
            return Ok(Bound::Float(r));
        }
        let is_tensor = |v: &Bound| matches!(v, Bound::Device(_));
        match b {
            BinOp::Dot if is_tensor(&x) && is_tensor(&y) => self.op(Op::MatMul, &[x, y]),
            BinOp::Hadamard if is_tensor(&x) => self.op(Op::Multiplica, &[x, y]),
            BinOp::Hadamard if is_tensor(&y) => self.op(Op::Multiplica, &[y, x]),
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div
                if !is_tensor(&x) && !is_tensor(&y) =>
            {
                let op = match b {
                    BinOp::Add => Op::Addita,
                    BinOp::Sub => Op::Subtrahe,
                    BinOp::Mul => Op::Multiplica,
                    _ => Op::Divide,
                };
                // A number known now on the left: a rank-0 constant of the other's type.
                let x = match (known(&x), &y) {
                    (Some(p), Bound::Number(v)) => {
                        let elem = self.f.ty(*v).elem;
                        Bound::Number(self.f.constant(elem, p))
                    }
                    _ => x,
                };
                match self.op(op, &[x, y])? {
                    Bound::Device(v) => Ok(Bound::Number(v)),
                    other => Ok(other),
                }
            }
            _ => unsupported(format!(
                "the operator `{}` on a value the device computes",
                b.glyph()
            )),
        }
    }
}
