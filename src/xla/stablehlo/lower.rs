//! What lowering the Radix IR's tensor ops to StableHLO shares (the op-by-op `match`
//! is src/xla/stablehlo/dispatch.rs; the op families are attention.rs, nn.rs,
//! cotangent.rs, reduce.rs and optim.rs): the operand and error types, argument
//! access, and the helpers the families build on (broadcasting, `matmul`, softmax,
//! fills, `strue`'s constants).
//!
//! Operands come as the IR's operands do, receiver first: tensor values of the
//! function being built, and the literal numbers, axes, flags and shapes the op
//! reads ([`Operand`]). Shapes are checked with the native kernels' rules (NumPy
//! broadcasting, `matmul`'s ranks 1–4 with broadcast batch axes); a misfit is a
//! [`LowerError::Shape`], never a program XLA would refuse.
//!
//! What differs from the native kernels: the device makes no domain checks (a
//! zero divisor gives ±∞, a negative `log` or `sqrt` NaN, where `faber run` reports
//! RUN016), and its sums, products, `exp` and `tanh` round differently (f32
//! tolerances in tests/xla_ops.rs).

use std::fmt;

use super::{Binary, Compare, DotDims, Function, Reduction, TensorType, Unary, Value};
use crate::ir::ops::Op;
use crate::xla::exec::ElementType;

/// One operand of an op.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    /// A tensor value of the function.
    Tensor(Value),
    /// A `fractus` (`scala`'s factor, a number added to a tensor).
    Num(f64),
    /// A `numerus`: an axis, a bound.
    Int(i64),
    /// A truth value (`keep` of the axis reductions).
    Flag(bool),
    /// A literal shape or axis list (`forma`, `permute`).
    Dims(Vec<usize>),
    /// A constructor's seed that gives only the element type (`nihil.crea(…)`: the
    /// run's precision).
    Elem(ElementType),
    /// A list of numbers, each a literal or a number the device computes
    /// (`adamw_passus`'s coefficients).
    List(Vec<Operand>),
}

/// Why an op was not lowered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LowerError {
    /// No StableHLO lowering for this op yet.
    NoLowering { op: &'static str },
    /// Operands of the wrong kind, count or shape for the op.
    Shape { op: &'static str, reason: String },
    /// Something of a function other than a tensor op that has no lowering (a
    /// statement, an expression kind, a value): src/xla/stablehlo/function.rs.
    Unsupported { what: String },
    /// One of the above, met while tracing the statement at `span` of a function.
    At {
        span: crate::source::Span,
        inner: Box<LowerError>,
    },
}

impl LowerError {
    /// This error located at `span` (when known and not located already).
    pub fn at(self, span: Option<crate::source::Span>) -> LowerError {
        match (self, span) {
            (e @ LowerError::At { .. }, _) | (e, None) => e,
            (e, Some(span)) => LowerError::At {
                span,
                inner: Box::new(e),
            },
        }
    }

    /// Where the lowering failed, when known.
    pub fn span(&self) -> Option<crate::source::Span> {
        match self {
            LowerError::At { span, .. } => Some(*span),
            _ => None,
        }
    }
}

impl fmt::Display for LowerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LowerError::NoLowering { op } => write!(f, "no StableHLO lowering for op `{op}`"),
            LowerError::Shape { op, reason } => write!(f, "`{op}`: {reason}"),
            LowerError::Unsupported { what } => write!(f, "no StableHLO lowering for {what}"),
            LowerError::At { inner, .. } => inner.fmt(f),
        }
    }
}

impl std::error::Error for LowerError {}

pub(super) type Lowered = Result<Vec<Value>, LowerError>;

/// Reads one op's operands, reporting misfits against the op.
pub(super) struct Args<'a> {
    pub(super) op: Op,
    pub(super) operands: &'a [Operand],
}

impl Args<'_> {
    pub(super) fn err<T>(&self, reason: impl Into<String>) -> Result<T, LowerError> {
        Err(LowerError::Shape {
            op: self.op.name(),
            reason: reason.into(),
        })
    }

    pub(super) fn get(&self, i: usize) -> Result<&Operand, LowerError> {
        match self.operands.get(i) {
            Some(o) => Ok(o),
            None => self.err(format!(
                "operand {i} missing ({} given)",
                self.operands.len()
            )),
        }
    }

    pub(super) fn tensor(&self, i: usize) -> Result<Value, LowerError> {
        match self.get(i)? {
            Operand::Tensor(v) => Ok(*v),
            other => self.err(format!("operand {i} must be a tensor, found {other:?}")),
        }
    }

    pub(super) fn ty(&self, f: &Function, i: usize) -> Result<TensorType, LowerError> {
        Ok(f.ty(self.tensor(i)?).clone())
    }

    pub(super) fn num(&self, i: usize) -> Result<f64, LowerError> {
        match self.get(i)? {
            Operand::Num(x) => Ok(*x),
            Operand::Int(n) => Ok(*n as f64),
            other => self.err(format!("operand {i} must be a number, found {other:?}")),
        }
    }

    /// A non-negative integer below `bound` (`bound` itself allowed when `inclusive`).
    pub(super) fn index(
        &self,
        i: usize,
        bound: usize,
        inclusive: bool,
    ) -> Result<usize, LowerError> {
        let n = match self.get(i)? {
            Operand::Int(n) => *n,
            other => return self.err(format!("operand {i} must be a numerus, found {other:?}")),
        };
        match usize::try_from(n) {
            Ok(u) if u < bound || (inclusive && u == bound) => Ok(u),
            _ => self.err(format!("{n} is out of range 0..{bound}")),
        }
    }

    pub(super) fn flag(&self, i: usize) -> Result<bool, LowerError> {
        match self.get(i)? {
            Operand::Flag(b) => Ok(*b),
            other => self.err(format!(
                "operand {i} must be a truth value, found {other:?}"
            )),
        }
    }

    pub(super) fn dims(&self, i: usize) -> Result<Vec<usize>, LowerError> {
        match self.get(i)? {
            Operand::Dims(d) => Ok(d.clone()),
            other => self.err(format!("operand {i} must be a shape, found {other:?}")),
        }
    }

    /// Operand `i`: a permutation of the axes of a rank-`rank` tensor (`permute`'s
    /// `axes`: output axis j is input axis `axes[j]`).
    pub(super) fn permutation(&self, i: usize, rank: usize) -> Result<Vec<usize>, LowerError> {
        let perm = self.dims(i)?;
        let mut seen = vec![false; rank];
        let is_perm = perm.len() == rank
            && perm
                .iter()
                .all(|&p| p < rank && !std::mem::replace(&mut seen[p], true));
        if !is_perm {
            return self.err(format!("{perm:?} is not a permutation of rank {rank}"));
        }
        Ok(perm)
    }

    /// The element type a constructor's seed (operand 0) gives: a tensor's own; a
    /// number, the lowering's mark of a declared f64 tensor (src/eval/tensor_custom.rs,
    /// `made_dtype`); `nihil`, the run's precision.
    pub(super) fn seed_elem(&self, f: &Function) -> Result<ElementType, LowerError> {
        match self.get(0)? {
            Operand::Elem(e) => Ok(*e),
            Operand::Num(_) => Ok(ElementType::F64),
            _ => Ok(self.ty(f, 0)?.elem),
        }
    }
}

/// NumPy broadcasting of two shapes (the native `broadcast_shapes`' rule).
pub(super) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            // Axis i of the result is axis i − (n − rank) of each operand, or a
            // missing leading axis (extent 1).
            let at = |s: &[usize]| (i + s.len()).checked_sub(n).map_or(1, |j| s[j]);
            let (da, db) = (at(a), at(b));
            match (da, db) {
                (1, d) | (d, 1) => Some(d),
                (x, y) if x == y => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// `x` broadcast NumPy-style (trailing axes aligned) to `dims`.
pub(super) fn broadcast_to(f: &mut Function, x: Value, dims: &[usize]) -> Value {
    let r = f.ty(x).rank();
    let map: Vec<usize> = (dims.len() - r..dims.len()).collect();
    f.broadcast_in_dim(x, &map, dims)
}

/// `a ∘ b` with NumPy broadcasting; a number operand is a constant, and an f32
/// operand meeting an f64 one is widened (the native promotion).
pub(super) fn arith(f: &mut Function, a: &Args, op: Binary) -> Lowered {
    let x = a.tensor(0)?;
    let y = match a.get(1)? {
        Operand::Num(n) => f.constant(f.ty(x).elem, *n),
        Operand::Int(n) => f.constant(f.ty(x).elem, *n as f64),
        _ => a.tensor(1)?,
    };
    let elem = match (f.ty(x).elem, f.ty(y).elem) {
        (ElementType::F32, ElementType::F32) => ElementType::F32,
        _ => ElementType::F64,
    };
    let (x, y) = (f.convert(x, elem), f.convert(y, elem));
    let (dx, dy) = (f.ty(x).dims.clone(), f.ty(y).dims.clone());
    let Some(dims) = broadcast_shapes(&dx, &dy) else {
        return a.err(format!("shapes {dx:?} and {dy:?} do not broadcast"));
    };
    let (x, y) = (broadcast_to(f, x, &dims), broadcast_to(f, y, &dims));
    Ok(vec![f.binary(op, x, y)])
}

/// `x` plus the rank-1 `b` on every last-axis row.
pub(super) fn add_bias(f: &mut Function, a: &Args, x: Value, b: Value) -> Lowered {
    let (xt, bt) = (f.ty(x).clone(), f.ty(b).clone());
    if xt.rank() == 0 || bt.dims != [xt.dims[xt.rank() - 1]] || xt.elem != bt.elem {
        return a.err(format!("bias {bt} does not fit the last axis of {xt}"));
    }
    let bb = f.broadcast_in_dim(b, &[xt.rank() - 1], &xt.dims);
    Ok(vec![f.binary(Binary::Add, x, bb)])
}

/// `x` with its last two axes swapped.
pub(super) fn swap_last(f: &mut Function, a: &Args, x: Value) -> Result<Value, LowerError> {
    let r = f.ty(x).rank();
    if r < 2 {
        return a.err(format!("needs rank ≥ 2, found rank {r}"));
    }
    let mut perm: Vec<usize> = (0..r).collect();
    perm.swap(r - 2, r - 1);
    Ok(f.transpose(x, &perm))
}

/// `a · b` with the native `matmul`'s ranks: dot (1, 1), vec-mat (1, 2), mat-vec
/// (2, 1), and ranks 2–4 with the batch axes broadcast.
pub(super) fn matmul(f: &mut Function, a: &Args, x: Value, y: Value) -> Result<Value, LowerError> {
    let (xt, yt) = (f.ty(x).clone(), f.ty(y).clone());
    if xt.elem != yt.elem {
        return a.err("operands of two element types");
    }
    let (ra, rb) = (xt.rank(), yt.rank());
    let (ka, kb) = match (ra, rb) {
        (1, 1) | (1, 2) => (0, 0),
        (2, 1) => (1, 0),
        (2..=4, 2..=4) => (ra - 1, rb - 2),
        _ => return a.err(format!("ranks {ra} and {rb} do not combine")),
    };
    if xt.dims[ka] != yt.dims[kb] {
        return a.err(format!(
            "the inner dimensions differ ({} against {})",
            xt.dims[ka], yt.dims[kb]
        ));
    }
    if ra < 2 || rb < 2 {
        let d = DotDims {
            lhs_contract: vec![ka],
            rhs_contract: vec![kb],
            ..DotDims::default()
        };
        return Ok(f.dot_general(x, y, &d));
    }
    if rb == 2 {
        // `[…, m, k] · [k, n]`: one product over every leading axis of `x` (its free
        // axes come first in the result, `y`'s `n` last), not `y` broadcast to a
        // batch of copies.
        let d = DotDims {
            lhs_contract: vec![ra - 1],
            rhs_contract: vec![0],
            ..DotDims::default()
        };
        return Ok(f.dot_general(x, y, &d));
    }
    let (ba, bb) = (&xt.dims[..ra - 2], &yt.dims[..rb - 2]);
    let Some(batch) = broadcast_shapes(ba, bb) else {
        return a.err(format!("the batch axes {ba:?} and {bb:?} do not broadcast"));
    };
    let nb = batch.len();
    let widen = |f: &mut Function, v: Value, t: &TensorType| {
        let mut dims = batch.clone();
        dims.extend_from_slice(&t.dims[t.rank() - 2..]);
        broadcast_to(f, v, &dims)
    };
    let (x, y) = (widen(f, x, &xt), widen(f, y, &yt));
    let d = DotDims {
        lhs_batch: (0..nb).collect(),
        rhs_batch: (0..nb).collect(),
        lhs_contract: vec![nb + 1],
        rhs_contract: vec![nb],
    };
    Ok(f.dot_general(x, y, &d))
}

/// The reduction of `x` over `axis`, the axis kept as extent 1 when `keep`;
/// divided by the axis' extent when `mean`.
pub(super) fn reduce_axis(f: &mut Function, a: &Args, kind: Reduction, mean: bool) -> Lowered {
    let xt = a.ty(f, 0)?;
    let x = a.tensor(0)?;
    let axis = a.index(1, xt.rank(), false)?;
    let keep = a.flag(2)?;
    let mut r = f.reduce(x, &[axis], kind);
    if kind == Reduction::Max {
        r = with_nans(f, x, r, axis);
    }
    if mean {
        let n = f.splat(xt.elem, xt.dims[axis] as f64, &f.ty(r).dims.clone());
        r = f.binary(Binary::Divide, r, n);
    }
    if keep {
        let mut dims = xt.dims.clone();
        dims[axis] = 1;
        r = f.reshape(r, &dims);
    }
    Ok(vec![r])
}

/// `r`, the `maximum` reduction of `x` over `axis`, made NaN where the run holds a
/// NaN, as the native `max_axis` propagates it (the CPU plugin's reduction skips
/// NaN): the sum of the run's NaNs (+0 for every other element) is NaN exactly there.
fn with_nans(f: &mut Function, x: Value, r: Value, axis: usize) -> Value {
    let xt = f.ty(x).clone();
    let zero = f.splat(xt.elem, 0.0, &xt.dims);
    let nans = f.select_if(x, Compare::Ne, x, x, zero);
    let s = f.reduce(nans, &[axis], Reduction::Sum);
    f.select_if(s, Compare::Ne, s, s, r)
}

/// Softmax (or log-softmax) of every last-axis row, from the row maximum:
/// `e = exp(x − max)`, `e / Σe` (or `x − max − log Σe`).
pub(super) fn softmax(f: &mut Function, a: &Args, log: bool) -> Lowered {
    let xt = a.ty(f, 0)?;
    if xt.rank() == 0 {
        return a.err("needs rank ≥ 1");
    }
    Ok(vec![softmax_of(f, a.tensor(0)?, log)])
}

/// [`softmax`] of the value `x` (rank ≥ 1).
pub(super) fn softmax_of(f: &mut Function, x: Value, log: bool) -> Value {
    let xt = f.ty(x).clone();
    let last = xt.rank() - 1;
    let keep: Vec<usize> = (0..last).collect();
    let m = f.reduce(x, &[last], Reduction::Max);
    let m = f.broadcast_in_dim(m, &keep, &xt.dims);
    let shifted = f.binary(Binary::Subtract, x, m);
    let e = f.unary(Unary::Exponential, shifted);
    let s = f.reduce(e, &[last], Reduction::Sum);
    let s = f.broadcast_in_dim(s, &keep, &xt.dims);
    if log {
        let ls = f.unary(Unary::Log, s);
        f.binary(Binary::Subtract, shifted, ls)
    } else {
        f.binary(Binary::Divide, e, s)
    }
}

/// Elements `[s, e)` of `axis`.
pub(super) fn narrow(f: &mut Function, x: Value, axis: usize, s: usize, e: usize) -> Value {
    let dims = f.ty(x).dims.clone();
    let mut start = vec![0; dims.len()];
    let mut limit = dims;
    start[axis] = s;
    limit[axis] = e;
    f.slice(x, &start, &limit)
}

/// A tensor of `dims` filled with operand `i`: a number, or a rank-0 tensor value
/// converted to `elem`.
pub(super) fn filled(
    f: &mut Function,
    a: &Args,
    i: usize,
    elem: ElementType,
    dims: &[usize],
) -> Result<Value, LowerError> {
    fill_with(f, a, a.get(i)?, elem, dims)
}

/// A tensor of `dims` filled with the number `o` (a literal or a rank-0 device
/// value converted to `elem`).
pub(super) fn fill_with(
    f: &mut Function,
    a: &Args,
    o: &Operand,
    elem: ElementType,
    dims: &[usize],
) -> Result<Value, LowerError> {
    match o {
        Operand::Tensor(v) if f.ty(*v).rank() == 0 => {
            let v = f.convert(*v, elem);
            Ok(f.broadcast_in_dim(v, &[], dims))
        }
        Operand::Num(x) => Ok(f.splat(elem, *x, dims)),
        Operand::Int(n) => Ok(f.splat(elem, *n as f64, dims)),
        other => a.err(format!("needs a number, found {other:?}")),
    }
}

/// `seed.strue(flat, shape)`: the numbers of `flat` (operand 1: literals, numbers
/// the device computes, tensors read in row-major order, nested lists, flattened
/// in order) laid out in `shape` (operand 2), in the seed's element type — each
/// literal rounded once, as `Tensor::from_flat_of` does. Runs of literals become
/// one `stablehlo.constant`, the rest are joined to them with `concatenate`.
pub(super) fn strue(f: &mut Function, a: &Args) -> Lowered {
    let elem = a.seed_elem(f)?;
    let dims = a.dims(2)?;
    let (mut run, mut pieces) = (Vec::new(), Vec::new());
    flatten(f, a, a.get(1)?, elem, &mut run, &mut pieces)?;
    if !run.is_empty() {
        pieces.push(f.literal(elem, &run));
    }
    let count: usize = pieces.iter().map(|&p| f.ty(p).numel()).sum();
    let want = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if want != Some(count) {
        return a.err(format!("{count} numbers cannot take shape {dims:?}"));
    }
    let Some((&first, rest)) = pieces.split_first() else {
        return Ok(vec![f.splat(elem, 0.0, &dims)]);
    };
    let flat = rest.iter().fold(first, |acc, &p| f.concatenate(acc, p, 0));
    Ok(vec![f.reshape(flat, &dims)])
}

/// The numbers of `o` in order: literals gathered in `run`; each tensor (a device
/// number or a tensor, flattened) closes the run and joins `pieces` as a rank-1
/// value of `elem`.
fn flatten(
    f: &mut Function,
    a: &Args,
    o: &Operand,
    elem: ElementType,
    run: &mut Vec<f64>,
    pieces: &mut Vec<Value>,
) -> Result<(), LowerError> {
    match o {
        Operand::Num(x) => run.push(*x),
        Operand::Int(n) => run.push(*n as f64),
        Operand::Dims(d) => run.extend(d.iter().map(|&x| x as f64)),
        Operand::List(items) => {
            for item in items {
                flatten(f, a, item, elem, run, pieces)?;
            }
        }
        Operand::Tensor(v) => {
            let n = f.ty(*v).numel();
            if n == 0 {
                return Ok(());
            }
            if !run.is_empty() {
                pieces.push(f.literal(elem, run));
                run.clear();
            }
            let v = f.convert(*v, elem);
            pieces.push(f.reshape(v, &[n]));
        }
        other => return a.err(format!("a tensor holds numbers, found {other:?}")),
    }
    Ok(())
}

pub(super) fn unary(f: &mut Function, a: &Args, op: Unary) -> Lowered {
    let x = a.tensor(0)?;
    Ok(vec![f.unary(op, x)])
}
