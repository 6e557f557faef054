//! The cases of the finite-difference table: for each differentiable (op, operand)
//! pair a generator of a random program that reaches the loss through that operand;
//! the operands that have no gradient, each with its reason; and the (op, operand)
//! pairs a companion rejects (SEM024), each with a program that shows it.

use super::gen::{broadcast, list, Dom, Inst, Rng};

pub struct Case {
    pub name: &'static str,
    /// (op, operands) whose rule this case checks: each operand is computed from a
    /// parameter in the generated program.
    pub covers: &'static [(&'static str, &'static [usize])],
    pub build: fn(&mut Rng) -> Inst,
}

fn unary(r: &mut Rng, op: &str, dom: Dom) -> Inst {
    let s = r.shape(0, 3);
    let mut i = Inst::new();
    let x = i.p("x", Some(s.clone()), dom);
    i.weighted(format!("{x}.{op}()"), &s)
}

/// `x.op(y)` over a broadcast pair, or with a `f32` second operand (1 in 4), or
/// `x.op(x)` (1 in 5: both cotangents accumulate into one parameter).
fn binary(r: &mut Rng, op: &str, dom_b: Dom) -> Inst {
    let (a, b) = r.broadcast_pair();
    let mut i = Inst::new();
    if r.int(0, 4) == 0 {
        let x = i.p("x", Some(a.clone()), dom_b);
        return i.weighted(format!("{x}.{op}({x})"), &a);
    }
    let x = i.t("x", &a);
    if r.int(0, 3) == 0 {
        let y = i.p("y", None, dom_b);
        return i.weighted(format!("{x}.{op}({y})"), &a);
    }
    let y = i.p("y", Some(b.clone()), dom_b);
    i.weighted(format!("{x}.{op}({y})"), &broadcast(&a, &b))
}

/// Operand shapes of a product `[…, m, k] · […, k, n]` (vector cases included) and
/// its result.
fn matmul_shapes(r: &mut Rng, vectors: bool) -> (Vec<usize>, Vec<usize>, Vec<usize>) {
    let ranks: &[(usize, usize)] = if vectors {
        &[
            (1, 1),
            (2, 1),
            (1, 2),
            (2, 2),
            (3, 3),
            (3, 2),
            (2, 3),
            (4, 3),
            (3, 4),
        ]
    } else {
        &[(2, 2), (3, 3), (3, 2), (2, 3), (4, 3), (3, 4), (4, 4)]
    };
    let (ra, rb) = ranks[r.int(0, ranks.len() - 1)];
    let (m, k, n) = (r.int(1, 3), r.int(1, 3), r.int(1, 3));
    match (ra, rb) {
        (1, 1) => (vec![k], vec![k], vec![]),
        (2, 1) => (vec![m, k], vec![k], vec![m]),
        (1, 2) => (vec![k], vec![k, n], vec![n]),
        _ => {
            let batch = r.shape(ra.max(rb) - 2, ra.max(rb) - 2);
            let ba = r.squeeze_some(&batch[batch.len() - (ra - 2)..]);
            let bb = r.squeeze_some(&batch[batch.len() - (rb - 2)..]);
            let mut out = broadcast(&ba, &bb);
            out.extend([m, n]);
            let mut a = ba;
            a.extend([m, k]);
            let mut b = bb;
            b.extend([k, n]);
            (a, b, out)
        }
    }
}

fn swap_last(s: &[usize]) -> Vec<usize> {
    let mut s = s.to_vec();
    let n = s.len();
    s.swap(n - 2, n - 1);
    s
}

/// A reduction along a random axis of a rank-1..3 tensor, with or without kept axes.
fn axis_reduction(r: &mut Rng, op: &str) -> Inst {
    let s = r.shape(1, 3);
    let axis = r.int(0, s.len() - 1);
    let keep = r.coin();
    let mut out = s.clone();
    if keep {
        out[axis] = 1;
    } else {
        out.remove(axis);
    }
    let mut i = Inst::new();
    let x = i.t("x", &s);
    let flag = if keep { "verum" } else { "falsum" };
    i.weighted(format!("{x}.{op}({axis}, {flag})"), &out)
}

/// Attention shapes: B, T, H heads of width dh (D = H·dh).
fn attention_dims(r: &mut Rng) -> (usize, usize, usize, usize) {
    (r.int(1, 2), r.int(1, 3), r.int(1, 2), r.int(1, 2))
}

macro_rules! case {
    ($name:literal, [$(($op:literal, [$($k:expr),*])),*], $build:expr) => {
        Case { name: $name, covers: &[$(($op, &[$($k),*])),*], build: $build }
    };
}

pub const CASES: &[Case] = &[
    // ---- construction ----
    case!("crea", [("crea", [1])], |r| {
        let s = r.shape(0, 3);
        let mut i = Inst::new();
        let v = i.p("v", None, Dom::Any);
        i.weighted(format!("semen.crea({v}, {})", list(&s)), &s)
    }),
    // a flat list of numbers computed from parameters, laid out in row-major order
    case!("strue", [("strue", [1])], |r| {
        let s = r.shape(0, 3);
        let n: usize = s.iter().product();
        let mut i = Inst::new();
        let items: Vec<String> = (0..n)
            .map(|j| {
                let name = format!("a{j}");
                // parameters, products of them, constants (the first is a parameter)
                match if j == 0 { 0 } else { r.int(0, 2) } {
                    0 => i.p(&name, None, Dom::Any),
                    1 => format!("{} * {}.0", i.p(&name, None, Dom::Any), r.int(1, 3)),
                    _ => format!("{}.5", r.int(0, 2)),
                }
            })
            .collect();
        i.weighted(
            format!("semen.strue([{}], {})", items.join(", "), list(&s)),
            &s,
        )
    }),
    case!("normalis", [("normalis", [3, 4])], |r| {
        let s = r.shape(1, 3);
        let mut i = Inst::new();
        let mu = i.p("mu", None, Dom::Any);
        let sd = i.p("sd", None, Dom::Pos);
        let seed = r.int(0, 99);
        i.weighted(
            format!("semen.normalis({seed}, {}, {mu}, {sd})", list(&s)),
            &s,
        )
    }),
    // ---- shape ----
    case!("forma", [("forma", [0])], |r| {
        let s = r.shape(1, 3);
        let n: usize = s.iter().product();
        let target = match r.int(0, 2) {
            0 => vec![n],
            1 => vec![1, n],
            _ => s.iter().rev().copied().collect(),
        };
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.forma({})", list(&target)), &target)
    }),
    case!("transpone", [("transpone", [0])], |r| {
        let s = r.dims(2);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.transpone()"), &[s[1], s[0]])
    }),
    case!("transpone_ultimas", [("transpone_ultimas", [0])], |r| {
        let s = r.shape(2, 4);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.transpone_ultimas()"), &swap_last(&s))
    }),
    case!("permute", [("permute", [0])], |r| {
        let s = r.shape(1, 4);
        let p = r.permutation(s.len());
        let out: Vec<usize> = p.iter().map(|&a| s[a]).collect();
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.permute({})", list(&p)), &out)
    }),
    case!("sectio", [("sectio", [0])], |r| {
        let mut s = r.shape(1, 3);
        s[0] = r.int(1, 4);
        let a = r.int(0, s[0] - 1);
        let b = r.int(a + 1, s[0]);
        let mut out = s.clone();
        out[0] = b - a;
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.sectio({a}, {b})"), &out)
    }),
    case!("angusta", [("angusta", [0])], |r| {
        let mut s = r.shape(1, 3);
        let axis = r.int(0, s.len() - 1);
        s[axis] = r.int(1, 4);
        let a = r.int(0, s[axis] - 1);
        let b = r.int(a + 1, s[axis]);
        let mut out = s.clone();
        out[axis] = b - a;
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.angusta({axis}, {a}, {b})"), &out)
    }),
    case!("concatena", [("concatena", [0, 1])], |r| {
        let s = r.shape(1, 3);
        let axis = r.int(0, s.len() - 1);
        let mut t = s.clone();
        t[axis] = r.int(1, 3);
        let mut out = s.clone();
        out[axis] += t[axis];
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let y = i.t("y", &t);
        i.weighted(format!("{x}.concatena({y}, {axis})"), &out)
    }),
    // ---- elementwise with broadcasting ----
    case!("addita", [("addita", [0, 1])], |r| binary(
        r,
        "addita",
        Dom::Any
    )),
    case!("subtrahe", [("subtrahe", [0, 1])], |r| binary(
        r,
        "subtrahe",
        Dom::Any
    )),
    case!("multiplica", [("multiplica", [0, 1])], |r| binary(
        r,
        "multiplica",
        Dom::Any
    )),
    case!("divide", [("divide", [0, 1])], |r| binary(
        r,
        "divide",
        Dom::Pos
    )),
    case!("addita_bias", [("addita_bias", [0, 1])], |r| {
        let s = r.shape(1, 3);
        let c = s[s.len() - 1];
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let b = i.t("b", &[c]);
        i.weighted(format!("{x}.addita_bias({b})"), &s)
    }),
    // ---- products ----
    case!("matmul", [("matmul", [0, 1])], |r| {
        let (a, b, out) = matmul_shapes(r, true);
        let mut i = Inst::new();
        let x = i.t("a", &a);
        let y = i.t("b", &b);
        i.weighted(format!("({x} · {y})"), &out)
    }),
    case!("matmul_nt", [("matmul_nt", [0, 1])], |r| {
        let (a, b, out) = matmul_shapes(r, false);
        let mut i = Inst::new();
        let x = i.t("a", &a);
        let y = i.t("b", &swap_last(&b));
        i.weighted(format!("{x}.matmul_nt({y})"), &out)
    }),
    case!("matmul_tn", [("matmul_tn", [0, 1])], |r| {
        let (a, b, out) = matmul_shapes(r, false);
        let mut i = Inst::new();
        let x = i.t("a", &swap_last(&a));
        let y = i.t("b", &b);
        i.weighted(format!("{x}.matmul_tn({y})"), &out)
    }),
    case!("lineare", [("lineare", [0, 1, 2])], |r| {
        let mut s = r.shape(2, 3);
        let k = s[s.len() - 1];
        let n = r.int(1, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let m = i.t("m", &[k, n]);
        let b = i.t("b", &[n]);
        *s.last_mut().unwrap() = n;
        i.weighted(format!("{x}.lineare({m}, {b})"), &s)
    }),
    // ---- unary ----
    case!("neg", [("neg", [0])], |r| unary(r, "neg", Dom::Any)),
    case!("exp", [("exp", [0])], |r| unary(r, "exp", Dom::Any)),
    case!("log", [("log", [0])], |r| unary(r, "log", Dom::Pos)),
    case!("sqrt", [("sqrt", [0])], |r| unary(r, "sqrt", Dom::Pos)),
    case!("tanh", [("tanh", [0])], |r| unary(r, "tanh", Dom::Any)),
    case!("tanh_per_exp", [("tanh_per_exp", [0])], |r| unary(
        r,
        "tanh_per_exp",
        Dom::Any
    )),
    case!("gelu", [("gelu", [0])], |r| unary(r, "gelu", Dom::Any)),
    case!("gelu_per_exp", [("gelu_per_exp", [0])], |r| unary(
        r,
        "gelu_per_exp",
        Dom::Any
    )),
    case!("relu", [("relu", [0])], |r| unary(r, "relu", Dom::Away)),
    case!("reciproca", [("reciproca", [0])], |r| unary(
        r,
        "reciproca",
        Dom::Away
    )),
    // zero gradients, checked as such: a step function and a constant
    case!("positiva", [("positiva", [0])], |r| unary(
        r,
        "positiva",
        Dom::Away
    )),
    case!("retro_nihil", [("retro_nihil", [0])], |r| unary(
        r,
        "retro_nihil",
        Dom::Any
    )),
    case!("scala", [("scala", [0, 1])], |r| {
        let s = r.shape(0, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let f = i.p("f", None, Dom::Any);
        i.weighted(format!("{x}.scala({f})"), &s)
    }),
    // ---- reductions ----
    case!("summa", [("summa", [0])], |r| {
        let s = r.shape(0, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.scaled(format!("{x}.summa()"))
    }),
    case!("media", [("media", [0])], |r| {
        let s = r.shape(0, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.scaled(format!("{x}.media()"))
    }),
    case!("summa_axis", [("summa_axis", [0])], |r| axis_reduction(
        r,
        "summa_axis"
    )),
    case!("media_axis", [("media_axis", [0])], |r| axis_reduction(
        r,
        "media_axis"
    )),
    case!("maximum_axis", [("maximum_axis", [0])], |r| axis_reduction(
        r,
        "maximum_axis"
    )),
    // an index result: piecewise constant, zero gradient
    case!("argmax", [("argmax", [0])], |r| {
        let s = r.shape(1, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.argmax()"), &s[..s.len() - 1])
    }),
    case!("multinomialis", [("multinomialis", [0])], |r| {
        let s = vec![r.int(1, 3), r.int(1, 3)];
        let mut i = Inst::new();
        let p = i.p("p", Some(s.clone()), Dom::Pos);
        let seed = r.int(0, 99);
        i.weighted(format!("{p}.multinomialis({seed})"), &s[..1])
    }),
    // ---- neural-network building blocks ----
    case!("activatio_softmax", [("activatio_softmax", [0])], |r| {
        let s = r.shape(1, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.activatio_softmax()"), &s)
    }),
    case!("log_softmax", [("log_softmax", [0])], |r| {
        let s = r.shape(1, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        i.weighted(format!("{x}.log_softmax()"), &s)
    }),
    case!("laminatio", [("laminatio", [0, 3, 4])], |r| {
        let s = r.shape(1, 3);
        let d = s[s.len() - 1];
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let g = i.t("g", &[d]);
        let b = i.t("b", &[d]);
        let axis = s.len() - 1;
        i.weighted(format!("{x}.laminatio({axis}, 0.00001, {g}, {b})"), &s)
    }),
    // an ε that depends on a parameter (positive, large enough to matter)
    case!("laminatio_eps", [("laminatio", [0, 2, 3, 4])], |r| {
        let s = r.shape(1, 3);
        let d = s[s.len() - 1];
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let e = i.p("e", None, Dom::Pos);
        let g = i.t("g", &[d]);
        let b = i.t("b", &[d]);
        let axis = s.len() - 1;
        i.weighted(format!("{x}.laminatio({axis}, {e}, {g}, {b})"), &s)
    }),
    case!("crux_entropia", [("crux_entropia", [0, 1])], |r| {
        let s = r.shape(1, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let t = i.t("t", &s);
        i.scaled(format!("{x}.crux_entropia({t})"))
    }),
    // targets that are probabilities computed from a parameter (issue 18)
    case!(
        "crux_entropia_softmax_targets",
        [("crux_entropia", [0, 1])],
        |r| {
            let s = r.shape(1, 3);
            let mut i = Inst::new();
            let x = i.t("x", &s);
            let y = i.t("y", &s);
            i.scaled(format!("{x}.crux_entropia({y}.activatio_softmax())"))
        }
    ),
    case!(
        "crux_entropia_indices",
        [("crux_entropia_indices", [0])],
        |r| {
            let s = r.shape(2, 3);
            let c = s[s.len() - 1];
            let rows = &s[..s.len() - 1];
            let n: usize = rows.iter().product();
            let ids: Vec<String> = (0..n).map(|_| format!("{}.0", r.int(0, c - 1))).collect();
            let mut i = Inst::new();
            let z = i.t("z", &s);
            let ids = format!("semen.strue([{}], {})", ids.join(", "), list(rows));
            i.scaled(format!("{z}.crux_entropia_indices({ids})"))
        }
    ),
    case!("collige", [("collige", [0])], |r| {
        let (v, d) = (r.int(1, 4), r.int(1, 3));
        let shape = r.shape(1, 2);
        let n: usize = shape.iter().product();
        let ids: Vec<String> = (0..n).map(|_| format!("{}.0", r.int(0, v - 1))).collect();
        let mut out = shape.clone();
        out.push(d);
        let mut i = Inst::new();
        let e = i.t("e", &[v, d]);
        let ids = format!("semen.strue([{}], {})", ids.join(", "), list(&shape));
        i.weighted(format!("{e}.collige({ids})"), &out)
    }),
    case!("larva_causalis", [("larva_causalis", [0, 1])], |r| {
        let s = r.shape(2, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let v = i.p("v", None, Dom::Any);
        i.weighted(format!("{x}.larva_causalis({v})"), &s)
    }),
    case!("softmax_causalis", [("softmax_causalis", [0, 1, 2])], |r| {
        let s = r.shape(2, 3);
        let mut i = Inst::new();
        let x = i.t("x", &s);
        let f = i.p("f", None, Dom::Any);
        let v = i.p("v", None, Dom::Any);
        i.weighted(format!("{x}.softmax_causalis({f}, {v})"), &s)
    }),
    case!("attentio_pondera", [("attentio_pondera", [0, 1])], |r| {
        let (b, t, h, dh) = attention_dims(r);
        let mut i = Inst::new();
        let q = i.t("q", &[b, t, h * dh]);
        let k = i.t("k", &[b, t, h * dh]);
        i.weighted(format!("{q}.attentio_pondera({k}, {h})"), &[b, h, t, t])
    }),
    case!("attentio_applica", [("attentio_applica", [0, 1])], |r| {
        let (b, t, h, dh) = attention_dims(r);
        let mut i = Inst::new();
        let p = i.t("p", &[b, h, t, t]);
        let v = i.t("v", &[b, t, h * dh]);
        i.weighted(format!("{p}.attentio_applica({v})"), &[b, t, h * dh])
    }),
    case!("attentio", [("attentio", [0, 1, 2])], |r| {
        let (b, t, h, dh) = attention_dims(r);
        let mut i = Inst::new();
        let q = i.t("q", &[b, t, h * dh]);
        let k = i.t("k", &[b, t, h * dh]);
        let v = i.t("v", &[b, t, h * dh]);
        i.weighted(format!("{q}.attentio({k}, {v}, {h})"), &[b, t, h * dh])
    }),
];

/// `(a ∘ b) * c` on `f32` parameters (the scalar operators, `Rhs::Prim`).
fn scalar(r: &mut Rng, glyph: &str, dom_b: Dom) -> Inst {
    let _ = r;
    let mut i = Inst::new();
    let a = i.p("a", None, Dom::Any);
    let b = i.p("b", None, dom_b);
    i.scaled(format!("({a} {glyph} {b})"))
}

/// Cases of the scalar operators, named by `scalar_entry` in tests/vjp_fd_table.rs.
pub const SCALAR_CASES: &[Case] = &[
    case!("scalar_add", [], |r| scalar(r, "+", Dom::Any)),
    case!("scalar_sub", [], |r| scalar(r, "-", Dom::Any)),
    case!("scalar_mul", [], |r| scalar(r, "*", Dom::Any)),
    case!("scalar_div", [], |r| scalar(r, "/", Dom::Away)),
    case!("scalar_hadamard", [], |r| scalar(r, "⊙", Dom::Any)),
    case!("scalar_dot", [], |r| scalar(r, "·", Dom::Any)),
    case!("scalar_neg", [], |r| {
        let _ = r;
        let mut i = Inst::new();
        let a = i.p("a", None, Dom::Any);
        i.scaled(format!("(-{a})"))
    }),
];

/// Operands with no gradient to check, and why.
pub const NO_GRADIENT: &[(&str, usize, &str)] = &[
    ("crea", 0, "the receiver gives only the element kind"),
    ("crea", 2, "a shape (integers)"),
    ("strue", 0, "the receiver gives only the element kind"),
    ("strue", 2, "a shape (integers)"),
    ("forma", 1, "a shape (integers)"),
    ("permute", 1, "an axis order (integers)"),
    ("sectio", 1, "a bound (integer)"),
    ("sectio", 2, "a bound (integer)"),
    ("angusta", 1, "an axis (integer)"),
    ("angusta", 2, "a bound (integer)"),
    ("angusta", 3, "a bound (integer)"),
    ("concatena", 2, "an axis (integer)"),
    ("summa_axis", 1, "an axis (integer)"),
    ("summa_axis", 2, "a keep-axis flag (truth value)"),
    ("media_axis", 1, "an axis (integer)"),
    ("media_axis", 2, "a keep-axis flag (truth value)"),
    ("maximum_axis", 1, "an axis (integer)"),
    ("maximum_axis", 2, "a keep-axis flag (truth value)"),
    ("laminatio", 1, "an axis (integer)"),
    ("crux_entropia_indices", 1, "class ids (integers)"),
    ("collige", 1, "row ids (integers)"),
    ("attentio_pondera", 2, "a head count (integer)"),
    ("attentio", 3, "a head count (integer)"),
    ("normalis", 0, "the receiver gives only the element kind"),
    ("normalis", 1, "a seed (integer)"),
    ("normalis", 2, "a shape (integers)"),
    ("uniformis", 0, "the receiver gives only the element kind"),
    ("uniformis", 1, "a seed (integer)"),
    ("uniformis", 2, "a shape (integers)"),
    ("multinomialis", 1, "a seed (integer)"),
    ("magnitudines", 0, "its result is a shape (integers)"),
    ("numerus_elementorum", 0, "its result is a count (integer)"),
];

/// (op, operands — empty for all of them, parameters, body): differentiating through
/// these is SEM024, a diagnostic naming the op; each program shows it.
pub const REJECTED: &[(&str, &[usize], &str, &str)] = &[
    ("planata", &[], "tf32[2, 3] x", "x.planata()[0] * 2.0"),
    (
        "adamw_passus",
        &[],
        "tf32[2, 3] x",
        "x.adamw_passus(x, x, x, [0.9, 0.1, 0.99, 0.01, 1.0, 0.00000001, 1.0, 0.001])[0].summa()",
    ),
    (
        "gelu_cum_derivata",
        &[],
        "tf32[2, 3] x",
        "x.gelu_cum_derivata()[0].summa()",
    ),
    (
        "gelu_ex_pari",
        &[],
        "tf32[2, 3] x",
        "x.gelu_ex_pari(x.gelu_cum_derivata()).summa()",
    ),
    (
        "attentio_cum_ponderibus",
        &[],
        "tf32[1, 2, 2] x",
        "x.attentio_cum_ponderibus(x, x, 1)[0].summa()",
    ),
    (
        "attentio_ex_pari",
        &[],
        "tf32[1, 2, 2] x",
        "x.attentio_ex_pari(x, x, 1, x.attentio_cum_ponderibus(x, x, 1)).summa()",
    ),
    ("retro_adde", &[], "tf32[2, 3] x", "x.retro_adde(x).summa()"),
    (
        "retro_imple",
        &[],
        "tf32[2, 3] x",
        "x.retro_imple(2.0).summa()",
    ),
    (
        "retro_ad_formam",
        &[],
        "tf32[2, 3] x",
        "x.retro_ad_formam(x).summa()",
    ),
    (
        "retro_dilata",
        &[],
        "tf32[2, 3] x",
        "x.retro_dilata(x, 1, falsum).summa()",
    ),
    (
        "retro_maximum",
        &[],
        "tf32[2, 3] x",
        "x.retro_maximum(x, 1, falsum).summa()",
    ),
    (
        "retro_inpone",
        &[],
        "tf32[2, 3] x",
        "x.retro_inpone(0, 0, x).summa()",
    ),
    (
        "retro_softmax",
        &[],
        "tf32[2, 3] x",
        "x.retro_softmax(x).summa()",
    ),
    (
        "retro_softmax_causalis",
        &[],
        "tf32[2, 3] x",
        "x.retro_softmax_causalis(x, 1.0).summa()",
    ),
    (
        "retro_log_softmax",
        &[],
        "tf32[2, 3] x",
        "x.retro_log_softmax(x).summa()",
    ),
    (
        "retro_laminatio",
        &[],
        "tf32[2, 3] x, tf32[3] g",
        "x.retro_laminatio(x, 0.00001, g)[0].summa()",
    ),
    (
        "retro_laminatio_adde",
        &[],
        "tf32[2, 3] x, tf32[3] g",
        "x.retro_laminatio_adde(x, 0.00001, g, x)[0].summa()",
    ),
    ("retro_gelu", &[], "tf32[2, 3] x", "x.retro_gelu(x).summa()"),
    (
        "retro_gelu_derivata",
        &[],
        "tf32[2, 3] x",
        "x.retro_gelu_derivata(x).summa()",
    ),
    (
        "retro_gelu_per_exp",
        &[],
        "tf32[2, 3] x",
        "x.retro_gelu_per_exp(x).summa()",
    ),
    (
        "retro_crux_entropia",
        &[],
        "f32 a, tf32[2, 3] x",
        "a.retro_crux_entropia(x, x).summa()",
    ),
    (
        "retro_crux_scopi",
        &[],
        "f32 a, tf32[2, 3] x",
        "a.retro_crux_scopi(x).summa()",
    ),
    (
        "retro_crux_indices",
        &[],
        "f32 a, tf32[2, 3] x",
        "a.retro_crux_indices(x, semen.strue([0.0, 1.0], [2])).summa()",
    ),
    (
        "retro_collige",
        &[],
        "tf32[2, 3] x, tf32[4, 3] e",
        "x.retro_collige(semen.strue([0.0, 1.0], [2]), e).summa()",
    ),
    (
        "retro_permute",
        &[],
        "tf32[2, 3] x",
        "x.retro_permute([1, 0]).summa()",
    ),
    (
        "retro_pars",
        &[],
        "tf32[2, 3] x",
        "x.retro_pars(x, x, 0, 0).summa()",
    ),
    (
        "retro_matmul",
        &[],
        "tf32[2, 2] x",
        "x.retro_matmul(x, x)[0].summa()",
    ),
    (
        "retro_matmul_derivata",
        &[],
        "tf32[2, 2] x",
        "x.retro_matmul_derivata(x, x, x)[0].summa()",
    ),
    (
        "retro_matmul_adde",
        &[],
        "tf32[2, 2] x",
        "x.retro_matmul_adde(x, x, x)[0].summa()",
    ),
    (
        "retro_attentio_pondera",
        &[],
        "tf32[1, 1, 2, 2] p, tf32[1, 2, 2] x",
        "x.retro_attentio_pondera(p, x, x, 1)[0].summa()",
    ),
    (
        "retro_attentio_applica",
        &[],
        "tf32[1, 1, 2, 2] p, tf32[1, 2, 2] x",
        "x.retro_attentio_applica(p, x)[0].summa()",
    ),
    (
        "retro_attentio",
        &[],
        "tf32[1, 1, 2, 2] p, tf32[1, 2, 2] x",
        "x.retro_attentio(p, x, x, x, 1)[0].summa()",
    ),
];
