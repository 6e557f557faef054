//! Gradient checks of real models: a companion's gradient at given inputs (in `faber
//! grad-check`, the arguments of a call the program itself made) against central
//! finite differences of the primal, on a seeded sample of the elements of every
//! tensor of every parameter tree. A GPT's parameter record holds ~10⁵ numbers and
//! each difference costs two forward passes, so all of them would take hours; a
//! sample of N elements per tensor checks every tensor of the record at 2N passes
//! each. Rows are per leaf (`p.strata[0].wq`), so a wrong tensor is named.

use std::rc::Rc;

use super::random::{scalar, CheckError};
use crate::eval::{run_function, BufferIo, RunConfig, Value};
use crate::ir::visit::{child_blocks, stmt_operands};
use crate::ir::{ops::Op, Backward, Block, Operand, Program, Rhs, Stmt};
use crate::tensor::SplitMix64;

/// How the elements are chosen and differenced.
#[derive(Clone, Copy, Debug)]
pub struct Sampling {
    /// Central-difference step.
    pub step: f64,
    /// Elements checked per leaf (a tensor or a number of a parameter tree); a leaf
    /// with at most this many elements is checked whole; 0 checks every element.
    pub samples: usize,
    /// Seed of the element choice (SplitMix64, mixed with the parameter and leaf index).
    pub seed: u64,
}

/// The worst disagreement on one leaf of a parameter tree.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafReport {
    /// `p.strata[0].wq`: the parameter's name and the path to the leaf.
    pub path: String,
    /// The leaf's shape (empty for a number).
    pub shape: Vec<usize>,
    /// How many of its elements were checked.
    pub checked: usize,
    pub max_abs: f64,
    /// `|analytic − numeric| / max(1, |analytic|, |numeric|)`; ∞ when either is NaN.
    pub max_rel: f64,
}

impl LeafReport {
    pub fn elements(&self) -> usize {
        self.shape.iter().product()
    }
}

/// What was done with one parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum ParamCheck {
    /// Its leaves, checked.
    Checked(Vec<LeafReport>),
    /// The function reads it only as indices (`collige`, `crux_entropia_indices`) or
    /// for its shape: it has no derivative to check (see [`index_inputs`]).
    IndexInput,
    /// It holds no floating-point number (an integer, a text, …).
    NoNumbers,
}

/// Which parameters of `req.primal` its companion reads only at index positions or
/// for their shape: ids into an embedding table, class indices of a loss. Perturbing
/// an index by h is not a derivative, so these are not differenced. A parameter read
/// in any other way (copied, passed on, used in arithmetic) is checked, so a rule that
/// forgets a real-valued operand cannot hide behind this.
pub fn index_inputs(p: &Program, req: &Backward) -> Vec<bool> {
    let n = p.func(req.primal).params as usize;
    let body = &p.func(req.companion).body;
    let mut uses = vec![0usize; n];
    // `stmt_operands` walks nested blocks itself: top-level statements only.
    for st in &body.stmts {
        stmt_operands(st, &mut |o| {
            if let Operand::Slot(s) = o {
                if let Some(u) = uses.get_mut(s.0 as usize) {
                    *u += 1;
                }
            }
        });
    }
    let mut index = vec![0usize; n];
    let mut shape = vec![0usize; n];
    each_stmt(body, &mut |st| {
        if let Stmt::Let {
            rhs: Rhs::Op(op, args),
            ..
        } = st
        {
            for (k, a) in args.iter().enumerate() {
                let Operand::Slot(s) = a else { continue };
                let s = s.0 as usize;
                if s >= n {
                    continue;
                }
                match (op, k) {
                    (Op::Collige | Op::CruxEntropiaIndices | Op::RetroCollige, 1)
                    | (Op::RetroCruxIndices, 2) => index[s] += 1,
                    (Op::Magnitudines | Op::Numerus | Op::RetroNihil, 0) => shape[s] += 1,
                    _ => {}
                }
            }
        }
    });
    (0..n)
        .map(|i| index[i] > 0 && uses[i] == index[i] + shape[i])
        .collect()
}

fn each_stmt<'b>(b: &'b Block, f: &mut impl FnMut(&'b Stmt)) {
    for st in &b.stmts {
        f(st);
        child_blocks(st, &mut |inner| each_stmt(inner, f));
    }
}

/// One leaf of a parameter tree: its path, where it is (field / item indices from the
/// root) and its shape.
struct Leaf {
    path: String,
    route: Vec<usize>,
    shape: Vec<usize>,
}

fn leaves(p: &Program, v: &Value, path: String, route: &mut Vec<usize>, out: &mut Vec<Leaf>) {
    match v {
        Value::Float(_) => out.push(Leaf {
            path,
            route: route.clone(),
            shape: Vec::new(),
        }),
        Value::Tensor(t) => out.push(Leaf {
            path,
            route: route.clone(),
            shape: t.shape().to_vec(),
        }),
        Value::Record(r) => {
            let genus = p.genera.get(r.genus.0 as usize);
            for (i, f) in r.fields.iter().enumerate() {
                let name = genus
                    .and_then(|g| g.fields.get(i))
                    .map_or_else(|| i.to_string(), |fd| fd.name.clone());
                route.push(i);
                leaves(p, f, format!("{path}.{name}"), route, out);
                route.pop();
            }
        }
        Value::List(items) | Value::Tuple(items) => {
            for (i, item) in items.iter().enumerate() {
                route.push(i);
                leaves(p, item, format!("{path}[{i}]"), route, out);
                route.pop();
            }
        }
        _ => {}
    }
}

/// The value at `route` below `v`.
fn at<'v>(v: &'v Value, route: &[usize]) -> Option<&'v Value> {
    let Some((&i, rest)) = route.split_first() else {
        return Some(v);
    };
    match v {
        Value::Record(r) => at(r.fields.get(i)?, rest),
        Value::List(items) | Value::Tuple(items) => at(items.get(i)?, rest),
        _ => None,
    }
}

/// Element `j` of the number or tensor `v`.
fn number(v: &Value, j: usize) -> Option<f64> {
    match v {
        Value::Float(f) if j == 0 => Some(*f),
        Value::Tensor(t) => t.value_at(j),
        _ => None,
    }
}

/// `v` with element `j` of the leaf at `route` set to `x` (copy on write: the other
/// leaves stay shared with `v`).
fn with_number(v: &Value, route: &[usize], j: usize, x: f64) -> Value {
    let mut v = v.clone();
    set_number(&mut v, route, j, x);
    v
}

fn set_number(v: &mut Value, route: &[usize], j: usize, x: f64) {
    match (route.split_first(), v) {
        (None, Value::Float(f)) => *f = x,
        (None, Value::Tensor(t)) => {
            // Finite differences stay in f64 whatever the precision: an f32 leaf is
            // widened (exactly) before it is perturbed.
            let t = Rc::make_mut(t);
            if let Ok(w) = t.to_dtype(crate::tensor::DType::F64) {
                *t = w;
            }
            t.set_at(j, x);
        }
        (Some((&i, rest)), Value::Record(r)) => {
            if let Some(f) = Rc::make_mut(r).fields.get_mut(i) {
                set_number(f, rest, j, x);
            }
        }
        (Some((&i, rest)), Value::List(items) | Value::Tuple(items)) => {
            if let Some(f) = Rc::make_mut(items).get_mut(i) {
                set_number(f, rest, j, x);
            }
        }
        _ => {}
    }
}

/// `k` distinct indices below `n` (all of them when `k` is 0 or at least `n`), in
/// increasing order: a partial Fisher–Yates shuffle driven by `rng`.
fn sample(n: usize, k: usize, rng: &mut SplitMix64) -> Vec<usize> {
    if k == 0 || k >= n {
        return (0..n).collect();
    }
    let mut all: Vec<usize> = (0..n).collect();
    for i in 0..k {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        all.swap(i, j);
    }
    let mut chosen = all[..k].to_vec();
    chosen.sort_unstable();
    chosen
}

/// Checks `req`'s companion at `inputs` (one value per parameter of the primal): one
/// [`ParamCheck`] per parameter. The primal must return a scalar. A `nihil` gradient
/// counts as zero, so a companion that drops a gradient shows as a disagreement.
/// Every run is under `config`.
pub fn check_at(
    p: &Program,
    req: &Backward,
    inputs: &[Value],
    s: &Sampling,
    config: &RunConfig,
) -> Result<Vec<ParamCheck>, CheckError> {
    let f = p.func(req.primal);
    let mut io = BufferIo::default();
    let mut args = inputs.to_vec();
    args.push(Value::Vacuum);
    args.push(Value::Float(1.0));
    let Value::Tuple(grads) = run_function(p, req.companion, args, &mut io, config)? else {
        return Err(CheckError::Unsupported(
            "a companion that returns no iuncta".into(),
        ));
    };
    let mut primal = |args: Vec<Value>| -> Result<f64, CheckError> {
        let v = run_function(p, req.primal, args, &mut io, config)?;
        scalar(&v).ok_or_else(|| CheckError::Unsupported("a result that is not a scalar".into()))
    };
    let index = index_inputs(p, req);
    let mut out = Vec::with_capacity(inputs.len());
    for (i, input) in inputs.iter().enumerate() {
        if index.get(i).copied().unwrap_or(false) {
            out.push(ParamCheck::IndexInput);
            continue;
        }
        let name = f.slots.get(i).map_or("?", |sl| sl.name.as_str());
        let mut found = Vec::new();
        leaves(p, input, name.to_string(), &mut Vec::new(), &mut found);
        if found.is_empty() {
            out.push(ParamCheck::NoNumbers);
            continue;
        }
        let grad = grads.get(i);
        let mut reports = Vec::with_capacity(found.len());
        for (l, leaf) in found.iter().enumerate() {
            let n: usize = leaf.shape.iter().product();
            let mut rng = SplitMix64::new(
                s.seed ^ ((i as u64) << 32 | l as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            );
            let chosen = sample(n, s.samples, &mut rng);
            let value = at(input, &leaf.route);
            let analytic = grad.and_then(|g| at(g, &leaf.route));
            let mut rep = LeafReport {
                path: leaf.path.clone(),
                shape: leaf.shape.clone(),
                checked: chosen.len(),
                max_abs: 0.0,
                max_rel: 0.0,
            };
            for &j in &chosen {
                let x = value.and_then(|v| number(v, j)).unwrap_or(f64::NAN);
                let a = match analytic {
                    None | Some(Value::Nihil) => 0.0,
                    Some(g) => number(g, j).unwrap_or(f64::NAN),
                };
                let mut plus = inputs.to_vec();
                plus[i] = with_number(input, &leaf.route, j, x + s.step);
                let mut minus = inputs.to_vec();
                minus[i] = with_number(input, &leaf.route, j, x - s.step);
                let numeric = (primal(plus)? - primal(minus)?) / (2.0 * s.step);
                (rep.max_abs, rep.max_rel) =
                    super::random::worst(rep.max_abs, rep.max_rel, a, numeric);
            }
            reports.push(rep);
        }
        out.push(ParamCheck::Checked(reports));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_are_distinct_sorted_and_bounded() {
        let mut rng = SplitMix64::new(7);
        let s = sample(1000, 16, &mut rng);
        assert_eq!(s.len(), 16);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert!(s.iter().all(|&j| j < 1000));
        assert_eq!(sample(5, 16, &mut rng), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample(5, 0, &mut rng), vec![0, 1, 2, 3, 4]);
    }
}
