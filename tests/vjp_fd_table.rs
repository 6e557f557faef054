//! The audit of the VJP rule table (issue 18): every operand of every op in `Op::ALL`
//! is either checked against central finite differences (f64, step 1e-6) on random
//! programs — random shapes with broadcasting and size-1 axes, tensor parameters
//! declared with their shapes or as shape-generic `tf32` (the rules' two paths), values
//! inside each op's domain and away from its kinks, several seeds — or listed with the
//! reason it has no gradient, or rejected by the transform (SEM024, shown by a program).
//! An op added to the IR without an entry makes `every_operand_is_accounted_for` fail.
//! An op whose registry row (src/ir/ops.rs) has a `Probe::Args` column needs no entry
//! here: its case is drawn from that column; a helper of generated companions that no
//! list names is shown rejected by a program built from its operand count.
//! docs/ops.md holds the same table; `the_docs_table_is_current` keeps it so
//! (`FD_TABLE_WRITE=1 cargo test --test vjp_fd_table` rewrites it).

#[path = "vjp_fd/cases.rs"]
mod cases;
#[path = "vjp_fd/gen.rs"]
mod gen;

use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use faber::eval::Value;
use faber::gradcheck::check;
use faber::ir::ops::{infer_shape, Arg, Domain, Kind, Op, OpResult, Probe, StaticShape};
use faber::ir::{BinOp, UnOp};
use faber::ir::{Block, Operand, Prim, Program, Rhs, Stmt};
use faber::resolve::MemoryLoader;
use faber::source::SourceMap;
use faber::tensor::Tensor;

use cases::{Case, CASES, NO_GRADIENT, REJECTED, SCALAR_CASES};
use gen::{Dom, Inst, Rng};

const SEEDS: u64 = 8;
const STEP: f64 = 1e-6;
/// `|analytic − numeric| / max(1, |analytic|, |numeric|)`: a wrong rule is off by far
/// more (the zero ∂targets of issue 18 by 4.6e-2); rounding of the differences of
/// sums of a few dozen terms stays below 1e-9.
const TOLERANCE: f64 = 1e-8;

fn compile(name: &str, text: &str) -> Result<Program, Vec<faber::diag::Diagnostic>> {
    let mut sources = SourceMap::new();
    let id = sources.add(format!("{name}.fab"), text.to_string());
    let mut loader = MemoryLoader {
        files: Default::default(),
    };
    faber::compile(&mut sources, id, &mut loader)
}

fn op(name: &str) -> Op {
    Op::from_method(name).unwrap_or_else(|| panic!("`{name}` is not an op"))
}

/// Every `Rhs::Op` and `Rhs::Prim` of a block, nested blocks included, with its
/// operands moved out (the first part compares with `Rhs::Op(op, vec![])`).
fn ops_in(b: &Block, out: &mut Vec<(Rhs, Vec<Operand>)>) {
    for s in &b.stmts {
        match s {
            Stmt::Let {
                rhs: Rhs::Op(o, a), ..
            } => out.push((Rhs::Op(*o, vec![]), a.clone())),
            Stmt::Let {
                rhs: Rhs::Prim(p, a),
                ..
            } => out.push((Rhs::Prim(*p, vec![]), a.clone())),
            Stmt::If {
                then, otherwise, ..
            } => {
                ops_in(then, out);
                ops_in(otherwise, out);
            }
            Stmt::ForRange { body, .. } => ops_in(body, out),
            _ => {}
        }
    }
}

fn inputs(inst: &Inst, r: &mut Rng) -> Vec<Value> {
    inst.params
        .iter()
        .map(|p| match &p.shape {
            None => Value::Float(r.value(p.dom)),
            Some(s) => {
                let n: usize = s.iter().product();
                let data = (0..n).map(|_| r.value(p.dom)).collect();
                Value::Tensor(Rc::new(Tensor::from_flat(data, s).unwrap()))
            }
        })
        .collect()
}

/// A case to run: a hand-written one (tests/vjp_fd/cases.rs) or one drawn from an op's
/// registry row.
struct Run<'c> {
    name: &'static str,
    covers: Vec<(&'static str, Vec<usize>)>,
    build: Box<dyn Fn(&mut Rng) -> Inst + 'c>,
}

impl<'c> From<&'c Case> for Run<'c> {
    fn from(c: &'c Case) -> Run<'c> {
        Run {
            name: c.name,
            covers: c.covers.iter().map(|(o, ks)| (*o, ks.to_vec())).collect(),
            build: Box::new(c.build),
        }
    }
}

fn dom(d: Domain) -> Dom {
    match d {
        Domain::Any => Dom::Any,
        Domain::Pos => Dom::Pos,
        Domain::Away => Dom::Away,
    }
}

/// The program of an op with a `Probe::Args` row: `(a0.op(a1, …) ⊙ w).summa()` (or
/// `… * c` for a number result) with the operands the row names, the result's shape
/// from the op's own static shape rule.
fn probe_inst(op: Op, args: &[Arg], r: &mut Rng) -> Inst {
    let mut i = Inst::new();
    let mut first: Option<Vec<usize>> = None;
    let mut texts = Vec::new();
    let mut shapes: Vec<StaticShape> = Vec::new();
    for (k, a) in args.iter().enumerate() {
        let name = format!("a{k}");
        let last = || -> usize {
            let s = first
                .as_ref()
                .expect("a `Row`/`LastAxis` operand after a tensor");
            s.len() - 1
        };
        let (text, shape) = match *a {
            Arg::T(d) | Arg::Rows(d) => {
                let s = r.shape(if matches!(a, Arg::T(_)) { 0 } else { 1 }, 3);
                (i.p(&name, Some(s.clone()), dom(d)), Some(s))
            }
            Arg::Row(d) => {
                let n = first.as_ref().expect("a `Row` operand after a tensor")[last()];
                (i.p(&name, Some(vec![n]), dom(d)), Some(vec![n]))
            }
            Arg::Num(d) => (i.p(&name, None, dom(d)), None),
            Arg::LastAxis => (last().to_string(), None),
        };
        if first.is_none() {
            first = shape.clone();
        }
        shapes.push(shape.map(|s| s.iter().map(|&d| Some(d as u64)).collect()));
        texts.push(text);
    }
    let expr = format!("{}.{}({})", texts[0], op.name(), texts[1..].join(", "));
    if op.result() == OpResult::Float {
        return i.scaled(expr);
    }
    let out = infer_shape(op, &shapes, None)
        .unwrap_or_else(|e| panic!("`{}`: {e}", op.name()))
        .unwrap_or_else(|| panic!("`{}`: a probe needs a static result shape", op.name()));
    let out: Vec<usize> = out
        .iter()
        .map(|d| d.expect("known extents") as usize)
        .collect();
    i.weighted(expr, &out)
}

/// The cases drawn from the registry's `Probe::Args` rows.
fn probe_runs() -> Vec<Run<'static>> {
    Op::ALL
        .iter()
        .filter_map(|&op| match op.probe() {
            Probe::Args(args) => Some(Run {
                name: op.name(),
                covers: vec![(
                    op.name(),
                    (0..args.len())
                        .filter(|&k| args[k] != Arg::LastAxis)
                        .collect(),
                )],
                build: Box::new(move |r: &mut Rng| probe_inst(op, args, r)),
            }),
            Probe::Cases => None,
        })
        .collect()
}

/// Helpers of generated companions (and epilogues) that no list names: each is shown
/// rejected by `x.op(x, …)` on a `tf32[2, 3]` x (the rule rejects it before any
/// operand is looked at), its first part when it returns a tuple.
fn unlisted_helpers() -> Vec<(Op, String)> {
    Op::ALL
        .iter()
        .filter(|&&op| {
            matches!(op.kind(), Kind::Helper | Kind::Epilogue { .. })
                && op.probe() == Probe::Cases
                && !REJECTED.iter().any(|(o, ..)| *o == op.name())
                && !CASES
                    .iter()
                    .any(|c| c.covers.iter().any(|(o, _)| *o == op.name()))
                && !NO_GRADIENT.iter().any(|(o, ..)| *o == op.name())
        })
        .map(|&op| {
            let rest = vec!["x"; op.arity() - 1].join(", ");
            let part = match op.result() {
                OpResult::Pair | OpResult::Triple => "[0]",
                _ => "",
            };
            (op, format!("x.{}({rest}){part}.summa()", op.name()))
        })
        .collect()
}

/// Runs one case on every seed; records failures and the largest passing error.
fn run_case(
    ci: usize,
    case: &Run,
    prim: Option<Prim>,
    failures: &mut Vec<String>,
    worst: &mut (f64, String),
) {
    for seed in 1..=SEEDS {
        let mut r = Rng::new(seed * 7919 + ci as u64);
        let inst = (case.build)(&mut r);
        // The first seed declares every shape; the others make each tensor
        // parameter shape-generic with probability 1/2.
        let generic: Vec<bool> = inst.params.iter().map(|_| seed > 1 && r.coin()).collect();
        let name = format!("f_{}", case.name);
        let text = gen::program(&name, &inst, &generic);
        let program = match compile(&name, &text) {
            Ok(p) => p,
            Err(d) => {
                let msgs: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
                failures.push(format!(
                    "{} seed {seed}: {}\n{text}",
                    case.name,
                    msgs.join("; ")
                ));
                continue;
            }
        };
        let req = program.backward[0].clone();
        let mut found = Vec::new();
        ops_in(&program.func(req.primal).body, &mut found);
        for (o, ks) in &case.covers {
            for &k in ks {
                let reached = found.iter().any(|(f, a)| {
                    *f == Rhs::Op(op(o), vec![]) && matches!(a.get(k), Some(Operand::Slot(_)))
                });
                if !reached {
                    failures.push(format!(
                        "{}: the program has no `{o}` with a computed operand {k}\n{text}",
                        case.name
                    ));
                }
            }
        }
        if let Some(p) = &prim {
            if !found.iter().any(|(f, _)| *f == Rhs::Prim(*p, vec![])) {
                failures.push(format!("{}: the program has no {p:?}\n{text}", case.name));
            }
        }
        let args = inputs(&inst, &mut r);
        match check(&program, &req, &args, STEP, &Default::default()) {
            Ok(reports) => {
                for rep in reports {
                    let what = format!("{} seed {seed}: ∂{}", case.name, rep.name);
                    if rep.max_rel.is_nan() || rep.max_rel > TOLERANCE {
                        failures.push(format!(
                            "{what} max rel {:.3e} (abs {:.3e})\n{text}",
                            rep.max_rel, rep.max_abs
                        ));
                    } else if rep.max_rel > worst.0 {
                        *worst = (rep.max_rel, what);
                    }
                }
            }
            Err(e) => failures.push(format!("{} seed {seed}: {e:?}\n{text}", case.name)),
        }
    }
}

#[test]
fn companions_match_finite_differences_for_every_op_and_operand() {
    let mut failures = Vec::new();
    let mut worst = (0.0f64, String::new());
    let runs: Vec<Run> = CASES.iter().map(Run::from).chain(probe_runs()).collect();
    for (ci, case) in runs.iter().enumerate() {
        run_case(ci, case, None, &mut failures, &mut worst);
    }
    eprintln!(
        "largest relative error that passed: {:.3e} ({})",
        worst.0, worst.1
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn scalar_operators_match_finite_differences() {
    let mut failures = Vec::new();
    let mut worst = (0.0f64, String::new());
    for (prim, _, entry) in scalar_table() {
        match entry {
            ScalarEntry::Fd(name) => {
                let Some((ci, case)) = SCALAR_CASES
                    .iter()
                    .enumerate()
                    .find(|(_, c)| c.name == name)
                else {
                    failures.push(format!("{prim:?}: no case `{name}`"));
                    continue;
                };
                run_case(
                    1000 + ci,
                    &case.into(),
                    Some(prim),
                    &mut failures,
                    &mut worst,
                );
            }
            ScalarEntry::Rejected(body) => {
                let text = format!(
                    "@ radix backward \"g\"\nfunctio f(f32 a, f32 b) → f32 {{\n    redde {body}\n}}\n"
                );
                match compile("rejected", &text) {
                    Err(ds) if ds.iter().any(|d| d.code.id == "SEM024") => {}
                    _ => failures.push(format!("{prim:?}: not SEM024\n{text}")),
                }
            }
            ScalarEntry::NoGradient(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// How a scalar operator is accounted for.
enum ScalarEntry {
    Fd(&'static str),
    NoGradient(&'static str),
    /// SEM024, shown by this body over `f32 a, f32 b`.
    Rejected(&'static str),
}

/// The scalar operators (`Rhs::Prim`) with their glyphs and entries. Both matches are
/// exhaustive, so an operator added to the language does not compile here until it
/// has an entry (and `every_scalar_operator_is_listed` checks the lists).
fn scalar_entry_bin(op: BinOp) -> ScalarEntry {
    use ScalarEntry::*;
    match op {
        BinOp::Add => Fd("scalar_add"),
        BinOp::Sub => Fd("scalar_sub"),
        BinOp::Mul => Fd("scalar_mul"),
        BinOp::Div => Fd("scalar_div"),
        BinOp::Hadamard => Fd("scalar_hadamard"),
        BinOp::Dot => Fd("scalar_dot"),
        BinOp::Rem => Rejected("a % b"),
        BinOp::Eq | BinOp::Ne | BinOp::NumEq | BinOp::NumNe => {
            NoGradient("a comparison (truth value)")
        }
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => NoGradient("a comparison (truth value)"),
        BinOp::Aut | BinOp::Et => NoGradient("truth values (lowered to `si`)"),
        BinOp::BitOr | BinOp::BitXor | BinOp::BitAnd | BinOp::Shl | BinOp::Shr => {
            NoGradient("integers")
        }
        BinOp::Vel => NoGradient(
            "lowered to `est nihil` and `si` (which carry the gradient), not an operator of the IR",
        ),
    }
}

fn scalar_entry_un(op: UnOp) -> ScalarEntry {
    match op {
        UnOp::Neg => ScalarEntry::Fd("scalar_neg"),
        UnOp::Not => ScalarEntry::NoGradient("a truth value"),
        UnOp::BitNot => ScalarEntry::NoGradient("an integer"),
        // Not an operator of the language: only the run-time pass of `eval/narrow.rs`
        // inserts it, after the autodiff pass (so it has no place in `UNOPS`).
        UnOp::Narrow => unreachable!("`narrow` is inserted at run time only"),
    }
}

const BINOPS: &[BinOp] = &[
    BinOp::Aut,
    BinOp::Et,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::NumEq,
    BinOp::NumNe,
    BinOp::Lt,
    BinOp::Gt,
    BinOp::Le,
    BinOp::Ge,
    BinOp::BitOr,
    BinOp::BitXor,
    BinOp::BitAnd,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Dot,
    BinOp::Hadamard,
    BinOp::Vel,
];
const UNOPS: &[UnOp] = &[UnOp::Neg, UnOp::BitNot, UnOp::Not];

fn scalar_table() -> Vec<(Prim, String, ScalarEntry)> {
    let mut t: Vec<(Prim, String, ScalarEntry)> = BINOPS
        .iter()
        .map(|&b| {
            (
                Prim::Binary(b),
                format!("`{}`", b.glyph()),
                scalar_entry_bin(b),
            )
        })
        .collect();
    for &u in UNOPS {
        let glyph = match u {
            UnOp::Neg => "unary `-`".to_string(),
            UnOp::Not => "`non`".to_string(),
            UnOp::BitNot => "`¬`".to_string(),
            UnOp::Narrow => unreachable!("`narrow` is inserted at run time only"),
        };
        t.push((Prim::Unary(u), glyph, scalar_entry_un(u)));
    }
    t
}

/// The lists name every operator once: a variant missing from `BINOPS`/`UNOPS` would
/// escape the table, so each variant's exhaustive-match arm is tied to its place here.
#[test]
fn every_scalar_operator_is_listed() {
    let ordinal = |b: BinOp| match b {
        BinOp::Aut => 0,
        BinOp::Et => 1,
        BinOp::Eq => 2,
        BinOp::Ne => 3,
        BinOp::NumEq => 4,
        BinOp::NumNe => 5,
        BinOp::Lt => 6,
        BinOp::Gt => 7,
        BinOp::Le => 8,
        BinOp::Ge => 9,
        BinOp::BitOr => 10,
        BinOp::BitXor => 11,
        BinOp::BitAnd => 12,
        BinOp::Shl => 13,
        BinOp::Shr => 14,
        BinOp::Add => 15,
        BinOp::Sub => 16,
        BinOp::Mul => 17,
        BinOp::Div => 18,
        BinOp::Rem => 19,
        BinOp::Dot => 20,
        BinOp::Hadamard => 21,
        BinOp::Vel => 22,
    };
    let seen: Vec<usize> = BINOPS.iter().map(|&b| ordinal(b)).collect();
    assert_eq!(seen, (0..23).collect::<Vec<_>>());
    let un: Vec<usize> = UNOPS
        .iter()
        .map(|&u| match u {
            UnOp::Neg => 0,
            UnOp::BitNot => 1,
            UnOp::Not => 2,
            UnOp::Narrow => unreachable!("`narrow` is inserted at run time only"),
        })
        .collect();
    assert_eq!(un, vec![0, 1, 2]);
}

/// How each (op, operand) pair is accounted for.
#[derive(Clone, Debug, PartialEq)]
enum Entry {
    /// Checked by these finite-difference cases.
    Fd(Vec<&'static str>),
    NoGradient(&'static str),
    Rejected,
}

/// The table: every (op, operand) pair of `Op::ALL` with its entry, or the problems
/// (pairs without an entry, with two kinds of entry, or naming no real operand).
fn table() -> Result<BTreeMap<(usize, usize), Entry>, Vec<String>> {
    let index = |name: &str| Op::ALL.iter().position(|&o| o == op(name)).unwrap();
    let mut problems = Vec::new();
    let mut t: BTreeMap<(usize, usize), Entry> = BTreeMap::new();
    let mut add = |key: (usize, usize), e: Entry, problems: &mut Vec<String>| {
        let (o, k) = (Op::ALL[key.0], key.1);
        if k >= o.arity() {
            problems.push(format!("`{}` has no operand {k}", o.name()));
        }
        match (t.get_mut(&key), e) {
            (None, e) => {
                t.insert(key, e);
            }
            (Some(Entry::Fd(v)), Entry::Fd(w)) => v.extend(w),
            (Some(old), e) => problems.push(format!(
                "`{}` operand {k}: listed as {old:?} and as {e:?}",
                o.name()
            )),
        }
    };
    for c in CASES {
        for (o, ks) in c.covers {
            for &k in *ks {
                add((index(o), k), Entry::Fd(vec![c.name]), &mut problems);
            }
        }
    }
    for run in probe_runs() {
        for (o, ks) in &run.covers {
            for &k in ks {
                add((index(o), k), Entry::Fd(vec![run.name]), &mut problems);
            }
        }
    }
    for (o, k, why) in NO_GRADIENT {
        add((index(o), *k), Entry::NoGradient(why), &mut problems);
    }
    for &o in Op::ALL {
        if let Probe::Args(args) = o.probe() {
            if args.len() != o.arity() {
                problems.push(format!(
                    "`{}`: its probe has {} operands, the op {}",
                    o.name(),
                    args.len(),
                    o.arity()
                ));
            }
            for (k, a) in args.iter().enumerate() {
                if *a == Arg::LastAxis {
                    add(
                        (index(o.name()), k),
                        Entry::NoGradient("an axis (integer)"),
                        &mut problems,
                    );
                }
            }
        }
    }
    for (o, _) in unlisted_helpers() {
        for k in 0..o.arity() {
            add((index(o.name()), k), Entry::Rejected, &mut problems);
        }
    }
    for (o, ks, _, _) in REJECTED {
        let all: Vec<usize> = (0..op(o).arity()).collect();
        let ks = if ks.is_empty() { &all[..] } else { ks };
        for &k in ks {
            add((index(o), k), Entry::Rejected, &mut problems);
        }
    }
    for (i, o) in Op::ALL.iter().enumerate() {
        for k in 0..o.arity() {
            if !t.contains_key(&(i, k)) {
                problems.push(format!(
                    "`{}` operand {k}: neither checked by finite differences nor listed (add a case to tests/vjp_fd/cases.rs)",
                    o.name()
                ));
            }
        }
    }
    if problems.is_empty() {
        Ok(t)
    } else {
        Err(problems)
    }
}

#[test]
fn every_operand_is_accounted_for() {
    if let Err(p) = table() {
        panic!("{}", p.join("\n"));
    }
}

#[test]
fn rejected_operands_are_diagnosed() {
    let mut failures = Vec::new();
    let unlisted: Vec<(String, &str, String)> = unlisted_helpers()
        .into_iter()
        .map(|(o, body)| (o.name().to_string(), "tf32[2, 3] x", body))
        .collect();
    let listed = REJECTED
        .iter()
        .map(|(o, _, params, body)| (o.to_string(), *params, body.to_string()));
    for (o, params, body) in listed.chain(unlisted) {
        let text = format!(
            "@ radix backward \"g\"\nfunctio f({params}) → f32 {{\n    fixum tf32[] semen ← vacua\n    redde {body}\n}}\n"
        );
        match compile("rejected", &text) {
            Err(ds)
                if ds
                    .iter()
                    .any(|d| d.code.id == "SEM024" && d.message.contains(&format!("`{o}`"))) => {}
            Err(ds) => {
                let msgs: Vec<String> = ds
                    .iter()
                    .map(|d| format!("{} {}", d.code.id, d.message))
                    .collect();
                failures.push(format!("{o}: {}\n{text}", msgs.join("; ")));
            }
            Ok(_) => failures.push(format!("{o}: compiled\n{text}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `strue` of a nested list has no rule (the flat case is in the table).
#[test]
fn strue_of_a_nested_list_is_diagnosed() {
    let text = "@ radix backward \"g\"\nfunctio f(f32 a) → f32 {\n    fixum tf32[] semen ← vacua\n    fixum lista<lista<fractus>> l ← [[a, 1.0], [2.0, a]]\n    redde semen.strue(l, [2, 2]).summa()\n}\n";
    let Err(ds) = compile("nested", text) else {
        panic!("a nested list compiled");
    };
    assert!(
        ds.iter()
            .any(|d| d.code.id == "SEM024" && d.message.contains("not a flat `lista<fractus>`")),
        "{:?}",
        ds.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
}

const BEGIN: &str = "<!-- fd-table:begin (tests/vjp_fd_table.rs writes this table) -->";
const END: &str = "<!-- fd-table:end -->";

/// The table as Markdown: one row per op, in `Op::ALL` order.
fn markdown() -> String {
    let t = table().unwrap_or_else(|p| panic!("{}", p.join("\n")));
    let mut out = String::from("| op | operands checked by finite differences | operands without a gradient |\n|---|---|---|\n");
    for (i, o) in Op::ALL.iter().enumerate() {
        let mut fd = Vec::new();
        let mut other = Vec::new();
        for k in 0..o.arity() {
            match &t[&(i, k)] {
                Entry::Fd(cases) => {
                    let cases: BTreeSet<_> = cases.iter().map(|c| format!("`{c}`")).collect();
                    let cases: Vec<_> = cases.into_iter().collect();
                    fd.push(format!("{k} ({})", cases.join(", ")));
                }
                Entry::NoGradient(why) => other.push(format!("{k}: {why}")),
                Entry::Rejected => other.push(format!("{k}: SEM024")),
            }
        }
        let fd = if fd.is_empty() {
            "—".to_string()
        } else {
            fd.join("; ")
        };
        let other = if other.is_empty() {
            "—".to_string()
        } else {
            other.join("; ")
        };
        out.push_str(&format!("| `{}` | {fd} | {other} |\n", o.name()));
    }
    out.push_str("\n| scalar operator (`fractus`) | operands checked by finite differences | without a gradient |\n|---|---|---|\n");
    for (prim, glyph, entry) in scalar_table() {
        let n = if matches!(prim, Prim::Unary(_)) { 1 } else { 2 };
        let all: Vec<String> = (0..n).map(|k| k.to_string()).collect();
        let all = all.join(", ");
        let (fd, other) = match entry {
            ScalarEntry::Fd(case) => (format!("{all} (`{case}`)"), "—".to_string()),
            ScalarEntry::NoGradient(why) => ("—".to_string(), format!("{all}: {why}")),
            ScalarEntry::Rejected(_) => ("—".to_string(), format!("{all}: SEM024")),
        };
        out.push_str(&format!("| {glyph} | {fd} | {other} |\n"));
    }
    out
}

#[test]
fn the_docs_table_is_current() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/ops.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let want = format!("{BEGIN}\n{}{END}", markdown());
    let (Some(a), Some(b)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/ops.md has no `{BEGIN}` … `{END}` section");
    };
    let have = &doc[a..b + END.len()];
    if have != want {
        if std::env::var_os("FD_TABLE_WRITE").is_some() {
            std::fs::write(path, doc.replacen(have, &want, 1)).unwrap();
        } else {
            panic!("docs/ops.md's finite-difference table is stale; rerun with FD_TABLE_WRITE=1. Expected:\n{want}");
        }
    }
}
