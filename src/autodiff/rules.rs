//! The VJP rules: one exhaustive `match` over the IR's operations (no catch-all arm),
//! so a new op does not compile until it has a rule — a gradient, "no gradient", or a
//! named "not differentiable" error. Each rule emits ordinary IR into the reverse
//! sweep and returns the contribution for each operand (docs/ops.md, the rule table).

use rustc_hash::FxHashSet;

use super::fusions::{split_with, SplitBackward};
use super::{not_differentiable, Gen};
use crate::diag::Diagnostic;
use crate::ir::ops::Op;
use crate::ir::*;
use crate::ir::{BinOp, UnOp};

type Contribs = Vec<(Operand, Operand)>;

/// The operands an rhs reads (for activity analysis).
pub fn operands(rhs: &Rhs) -> Vec<Operand> {
    let mut v = Vec::new();
    crate::ir::visit::rhs_operands(rhs, &mut |o| v.push(o.clone()));
    v
}

fn tensor() -> Ty {
    Ty::Tensor {
        shape: None,
        int: false,
        wide: false,
    }
}

fn s(x: Slot) -> Operand {
    Operand::Slot(x)
}

fn fl(v: f64) -> Operand {
    Operand::Const(Const::Float(v))
}

impl Gen<'_> {
    fn op(&mut self, op: Op, args: Vec<Operand>) -> Operand {
        s(self.emit(Rhs::Op(op, args), tensor()))
    }

    /// Emits `op(args)`, an op whose result is a tuple of `n` tensors, and reads each
    /// element out: the elements in order.
    fn tensor_parts(&mut self, op: Op, args: Vec<Operand>, n: usize) -> Vec<Operand> {
        let tuple = s(self.emit(Rhs::Op(op, args), Ty::Tuple(vec![tensor(); n])));
        (0..n as i64)
            .map(|i| {
                s(self.emit(
                    Rhs::Index(tuple.clone(), Operand::Const(Const::Int(i))),
                    tensor(),
                ))
            })
            .collect()
    }

    fn prim(&mut self, op: BinOp, a: Operand, b: Operand) -> Operand {
        s(self.emit(Rhs::Prim(Prim::Binary(op), vec![a, b]), Ty::Float))
    }

    fn is_tensor(&self, o: &Operand) -> bool {
        matches!(self.ty(o), Ty::Tensor { .. } | Ty::Any)
    }

    /// Reduces `g` to the shape of operand `like` (broadcast VJP); a number operand
    /// gets the total. Skipped when both static shapes are known and equal.
    fn unbroadcast(&mut self, g: Operand, like: &Operand, out_ty: &Ty) -> Operand {
        let lt = self.ty(like);
        if let (Ty::Tensor { shape: Some(a), .. }, Ty::Tensor { shape: Some(b), .. }) =
            (&lt, out_ty)
        {
            if a == b && a.iter().all(|d| d.is_some()) {
                return g;
            }
        }
        let ty = if matches!(lt, Ty::Float | Ty::Int) {
            Ty::Float
        } else {
            tensor()
        };
        s(self.emit(Rhs::Op(Op::RetroAdFormam, vec![g, like.clone()]), ty))
    }
}

/// Contributions of `dst = rhs` to its operands, given `dst`'s cotangent `g`. `active`:
/// the slots that depend on a parameter — a rule emits the contribution of an operand
/// that only sometimes carries a gradient (a fill value, a mask value, targets) only
/// when it is active, and rejects an active operand it has no rule for (SEM024)
/// instead of giving it a silent zero.
pub fn vjp(
    gen: &mut Gen,
    rhs: &Rhs,
    dst: Slot,
    g: Operand,
    active: &FxHashSet<Slot>,
) -> Result<Contribs, Diagnostic> {
    let span = gen.span;
    let y = s(dst);
    let out_ty = gen.slots[dst.0 as usize].ty.clone();
    Ok(match rhs {
        Rhs::Use(o) | Rhs::Coerce(o, _) => vec![(o.clone(), g)],
        Rhs::Prim(Prim::Unary(UnOp::Neg), a) => {
            let n = if gen.is_tensor(&g) {
                gen.op(Op::Neg, vec![g])
            } else {
                s(gen.emit(Rhs::Prim(Prim::Unary(UnOp::Neg), vec![g]), Ty::Float))
            };
            vec![(a[0].clone(), n)]
        }
        Rhs::Prim(Prim::Unary(UnOp::Not | UnOp::BitNot), _) => vec![],
        // `narrow` is inserted at run time only (eval/narrow.rs), after this pass: the
        // companion's copy of a rounded store is rounded there too.
        Rhs::Prim(Prim::Unary(UnOp::Narrow), _) => vec![],
        Rhs::Prim(Prim::Binary(op), a) => scalar_binary(gen, *op, &a[0], &a[1], g, &y, span)?,
        Rhs::Op(op, a) => {
            let act = |o: &Operand| matches!(o, Operand::Slot(x) if active.contains(x));
            let active_at: Vec<bool> = a.iter().map(act).collect();
            op_rule(gen, *op, a, &active_at, g, &y, &out_ty, span)?
        }
        Rhs::Is(..) | Rhs::Template(..) | Rhs::Range { .. } => vec![],
        Rhs::Convert(..) => return Err(not_differentiable(span, "a `↦` conversion")),
        Rhs::Call(..) | Rhs::CallValue(..) | Rhs::Closure(..) => {
            return Err(not_differentiable(span, "a call through a function value"))
        }
        Rhs::Method(m, ..) => {
            return Err(not_differentiable(span, &format!("the built-in method `{}`", m.name())))
        }
        Rhs::Host(h, _) => {
            return Err(not_differentiable(
                span,
                &format!("the host function `hospes.{}`", h.name()),
            ))
        }
        Rhs::List(_) | Rhs::Map(_) | Rhs::Tuple(_) | Rhs::Record(..) | Rhs::Field(..) | Rhs::Index(..) => {
            return Err(not_differentiable(
                span,
                "values built from or read out of lists, records or tuples (parameter trees are not supported yet)",
            ))
        }
    })
}

fn scalar_binary(
    gen: &mut Gen,
    op: BinOp,
    a: &Operand,
    b: &Operand,
    g: Operand,
    _y: &Operand,
    span: crate::source::Span,
) -> Result<Contribs, Diagnostic> {
    Ok(match op {
        BinOp::Add => vec![(a.clone(), g.clone()), (b.clone(), g)],
        BinOp::Sub => {
            let n = s(gen.emit(
                Rhs::Prim(Prim::Unary(UnOp::Neg), vec![g.clone()]),
                Ty::Float,
            ));
            vec![(a.clone(), g), (b.clone(), n)]
        }
        BinOp::Mul | BinOp::Hadamard | BinOp::Dot => {
            let ga = gen.prim(BinOp::Mul, g.clone(), b.clone());
            let gb = gen.prim(BinOp::Mul, g, a.clone());
            vec![(a.clone(), ga), (b.clone(), gb)]
        }
        BinOp::Div => {
            let ga = gen.prim(BinOp::Div, g.clone(), b.clone());
            let ab = gen.prim(BinOp::Mul, g, a.clone());
            let bb = gen.prim(BinOp::Mul, b.clone(), b.clone());
            let q = gen.prim(BinOp::Div, ab, bb);
            let gb = s(gen.emit(Rhs::Prim(Prim::Unary(UnOp::Neg), vec![q]), Ty::Float));
            vec![(a.clone(), ga), (b.clone(), gb)]
        }
        BinOp::Eq
        | BinOp::Ne
        | BinOp::NumEq
        | BinOp::NumNe
        | BinOp::Lt
        | BinOp::Gt
        | BinOp::Le
        | BinOp::Ge
        | BinOp::Et
        | BinOp::Aut => vec![],
        BinOp::Rem
        | BinOp::BitAnd
        | BinOp::BitOr
        | BinOp::BitXor
        | BinOp::Shl
        | BinOp::Shr
        | BinOp::Vel => {
            return Err(not_differentiable(
                span,
                &format!("the operator `{}`", op.glyph()),
            ))
        }
    })
}

#[allow(clippy::too_many_arguments)]
fn op_rule(
    gen: &mut Gen,
    op: Op,
    a: &[Operand],
    active: &[bool],
    g: Operand,
    y: &Operand,
    out_ty: &Ty,
    span: crate::source::Span,
) -> Result<Contribs, Diagnostic> {
    let x = || a[0].clone();
    Ok(match op {
        // ---- linear ----
        Op::Addita => {
            let ga = gen.unbroadcast(g.clone(), &a[0], out_ty);
            let gb = gen.unbroadcast(g, &a[1], out_ty);
            vec![(a[0].clone(), ga), (a[1].clone(), gb)]
        }
        Op::Subtrahe => {
            let ga = gen.unbroadcast(g.clone(), &a[0], out_ty);
            let n = gen.op(Op::Neg, vec![g]);
            let gb = gen.unbroadcast(n, &a[1], out_ty);
            vec![(a[0].clone(), ga), (a[1].clone(), gb)]
        }
        Op::AdditaBias => {
            let gb = gen.op(Op::RetroAdFormam, vec![g.clone(), a[1].clone()]);
            vec![(x(), g), (a[1].clone(), gb)]
        }
        Op::Neg => vec![(x(), gen.op(Op::Neg, vec![g]))],
        Op::Scala => {
            let gx = gen.op(Op::Scala, vec![g.clone(), a[1].clone()]);
            let prod = gen.op(Op::Multiplica, vec![g, x()]);
            let gf = s(gen.emit(Rhs::Op(Op::Summa, vec![prod]), Ty::Float));
            vec![(x(), gx), (a[1].clone(), gf)]
        }
        Op::Transpone => vec![(x(), gen.op(Op::Transpone, vec![g]))],
        Op::TransponeUltimas => vec![(x(), gen.op(Op::TransponeUltimas, vec![g]))],
        Op::Forma => {
            let shape = s(gen.emit(
                Rhs::Op(Op::Magnitudines, vec![x()]),
                Ty::List(Box::new(Ty::Int)),
            ));
            vec![(x(), gen.op(Op::Forma, vec![g, shape]))]
        }
        Op::Summa => vec![(x(), gen.op(Op::RetroImple, vec![x(), g]))],
        Op::Media => {
            let n = s(gen.emit(Rhs::Op(Op::Numerus, vec![x()]), Ty::Int));
            let inv = gen.prim(BinOp::Div, fl(1.0), n);
            let gn = gen.prim(BinOp::Mul, g, inv);
            vec![(x(), gen.op(Op::RetroImple, vec![x(), gn]))]
        }
        Op::SummaAxis | Op::MediaAxis => {
            let mean = Operand::Const(Const::Bool(op == Op::MediaAxis));
            let gx = gen.op(Op::RetroDilata, vec![g, x(), a[1].clone(), mean]);
            vec![(x(), gx)]
        }
        Op::MaximumAxis => {
            let gx = gen.op(Op::RetroMaximum, vec![g, x(), a[1].clone(), a[2].clone()]);
            vec![(x(), gx)]
        }
        Op::Sectio => {
            let gx = gen.op(
                Op::RetroInpone,
                vec![g, Operand::Const(Const::Int(0)), a[1].clone(), x()],
            );
            vec![(x(), gx)]
        }
        Op::Angusta => {
            let gx = gen.op(Op::RetroInpone, vec![g, a[1].clone(), a[2].clone(), x()]);
            vec![(x(), gx)]
        }
        Op::LarvaCausalis => {
            // Masked entries get no gradient: mask the cotangent the same way. The
            // fill value gets the masked entries' cotangents: Σ g − Σ (g masked to 0).
            let gx = gen.op(Op::LarvaCausalis, vec![g.clone(), fl(0.0)]);
            let mut c = vec![(x(), gx.clone())];
            if active[1] {
                let gv = masked_sum(gen, g, gx);
                c.push((a[1].clone(), gv));
            }
            c
        }
        Op::Collige => {
            let gt = gen.op(Op::RetroCollige, vec![g, a[1].clone(), x()]);
            vec![(x(), gt)]
        }
        // ---- products ----
        Op::Multiplica => {
            let ga = gen.op(Op::Multiplica, vec![g.clone(), a[1].clone()]);
            let ga = gen.unbroadcast(ga, &a[0], out_ty);
            let gb = gen.op(Op::Multiplica, vec![g, x()]);
            let gb = gen.unbroadcast(gb, &a[1], out_ty);
            vec![(x(), ga), (a[1].clone(), gb)]
        }
        Op::Divide => {
            let ga = gen.op(Op::Divide, vec![g.clone(), a[1].clone()]);
            let ga = gen.unbroadcast(ga, &a[0], out_ty);
            // −g ⊙ a / b² (b² a number when b is one: `multiplica` needs a tensor)
            let bb = if gen.is_tensor(&a[1]) {
                gen.op(Op::Multiplica, vec![a[1].clone(), a[1].clone()])
            } else {
                gen.prim(BinOp::Mul, a[1].clone(), a[1].clone())
            };
            let gab = gen.op(Op::Multiplica, vec![g, x()]);
            let q = gen.op(Op::Divide, vec![gab, bb]);
            let n = gen.op(Op::Neg, vec![q]);
            let gb = gen.unbroadcast(n, &a[1], out_ty);
            vec![(x(), ga), (a[1].clone(), gb)]
        }
        Op::MatMul => matmul_rule(gen, &a[0], &a[1], g, out_ty, span)?,
        // `addita_bias`'s rule (the bias gets g's column sums, the product g), then
        // `·`'s rule with that g: what the two unfused ops emit.
        Op::Lineare => {
            let gb = gen.op(Op::RetroAdFormam, vec![g.clone(), a[2].clone()]);
            let mut c = matmul_rule(gen, &a[0], &a[1], g, out_ty, span)?;
            c.push((a[2].clone(), gb));
            c
        }
        Op::MatMulNT | Op::MatMulTN => matmul_t_rule(gen, op, &a[0], &a[1], g, out_ty, span)?,
        // ---- elementwise with a derivative ----
        Op::Exp => vec![(x(), gen.op(Op::Multiplica, vec![g, y.clone()]))],
        Op::Log => vec![(x(), gen.op(Op::Divide, vec![g, x()]))],
        Op::Sqrt => {
            let two_y = gen.op(Op::Scala, vec![y.clone(), fl(2.0)]);
            vec![(x(), gen.op(Op::Divide, vec![g, two_y]))]
        }
        Op::Tanh | Op::TanhPerExp => {
            let yy = gen.op(Op::Multiplica, vec![y.clone(), y.clone()]);
            let m = gen.op(Op::Scala, vec![yy, fl(-1.0)]);
            let one_minus = gen.op(Op::Addita, vec![m, fl(1.0)]);
            vec![(x(), gen.op(Op::Multiplica, vec![g, one_minus]))]
        }
        Op::Gelu => vec![(x(), gen.op(Op::RetroGelu, vec![g, x()]))],
        Op::GeluPerExp => vec![(x(), gen.op(Op::RetroGeluPerExp, vec![g, x()]))],
        // A save-split's pair and reader (fusions.rs, `SPLITS`): the reader's operands
        // get their cotangents from the kept residual; the pair itself is not active.
        Op::GeluExPari | Op::AttentioExPari => split_reader(gen, op, a, g, span)?,
        Op::GeluCumDerivata | Op::AttentioCumPonderibus => {
            let write = split_with(op).map_or("", |s| s.write);
            return Err(not_differentiable(
                span,
                &format!(
                    "`{}` (a helper of generated companions; write `{write}`)",
                    op.name()
                ),
            ));
        }
        Op::Relu => {
            let mask = gen.op(Op::Positiva, vec![x()]);
            vec![(x(), gen.op(Op::Multiplica, vec![g, mask]))]
        }
        Op::Reciproca => {
            let xx = gen.op(Op::Multiplica, vec![x(), x()]);
            let q = gen.op(Op::Divide, vec![g, xx]);
            vec![(x(), gen.op(Op::Neg, vec![q]))]
        }
        // ---- fused recipes ----
        Op::Softmax => vec![(x(), gen.op(Op::RetroSoftmax, vec![g, y.clone()]))],
        // The unfused chain's rules in one: x gets the masked softmax VJP times s; s
        // gets Σ (masked VJP ⊙ x) as `scala`'s rule gives it (dead, so removed, when s
        // is a constant); v gets nothing, as under `larva_causalis`'s rule.
        Op::SoftmaxCausalis => {
            let gx = gen.op(
                Op::RetroSoftmaxCausalis,
                vec![g.clone(), y.clone(), a[1].clone()],
            );
            let gz = gen.op(
                Op::RetroSoftmaxCausalis,
                vec![g.clone(), y.clone(), fl(1.0)],
            );
            let prod = gen.op(Op::Multiplica, vec![gz, x()]);
            let gs = s(gen.emit(Rhs::Op(Op::Summa, vec![prod]), Ty::Float));
            let mut c = vec![(x(), gx), (a[1].clone(), gs)];
            // The mask value: the masked entries' share of the softmax VJP (the
            // cotangent of the masked logits before the softmax).
            if active[2] {
                let dz = gen.op(Op::RetroSoftmax, vec![g, y.clone()]);
                let kept = gen.op(Op::LarvaCausalis, vec![dz.clone(), fl(0.0)]);
                let gv = masked_sum(gen, dz, kept);
                c.push((a[2].clone(), gv));
            }
            c
        }
        // Both attention VJPs give a pair: (∂q, ∂k) from the weights' cotangent (the
        // head count gets none), (∂p, ∂v) from the output's.
        Op::AttentioPondera | Op::AttentioApplica => {
            let (retro, args) = if op == Op::AttentioPondera {
                let args = vec![g, y.clone(), x(), a[1].clone(), a[2].clone()];
                (Op::RetroAttentioPondera, args)
            } else {
                (Op::RetroAttentioApplica, vec![g, x(), a[1].clone()])
            };
            let g = gen.tensor_parts(retro, args, 2);
            vec![(x(), g[0].clone()), (a[1].clone(), g[1].clone())]
        }
        // Fused attention: (∂q, ∂k, ∂v) from one VJP over the weights, recomputed here
        // (a companion's forward copy splits `attentio` and keeps them instead).
        Op::Attentio => {
            let p = gen.op(Op::AttentioPondera, vec![x(), a[1].clone(), a[3].clone()]);
            attention_vjp(gen, g, p, a)
        }
        Op::LogSoftmax => vec![(x(), gen.op(Op::RetroLogSoftmax, vec![g, x()]))],
        Op::Laminatio => {
            let ge = active[2].then(|| norm_eps(gen, g.clone(), a, true));
            let args = vec![g, x(), a[2].clone(), a[3].clone()];
            let g = gen.tensor_parts(Op::RetroLaminatio, args, 3);
            let mut c = vec![
                (x(), g[0].clone()),
                (a[3].clone(), g[1].clone()),
                (a[4].clone(), g[2].clone()),
            ];
            if let Some(ge) = ge {
                c.push((a[2].clone(), ge));
            }
            c
        }
        // Like `laminatio` without the mean and the offset: x and γ from one helper, ε
        // (when it depends on a parameter) from ordinary ops; the axis gets none.
        Op::RmsNorm => {
            let ge = active[2].then(|| norm_eps(gen, g.clone(), a, false));
            let args = vec![g, x(), a[2].clone(), a[3].clone()];
            let g = gen.tensor_parts(Op::RetroRmsNorm, args, 2);
            let mut c = vec![(x(), g[0].clone()), (a[3].clone(), g[1].clone())];
            if let Some(ge) = ge {
                c.push((a[2].clone(), ge));
            }
            c
        }
        Op::Silu => vec![(x(), gen.op(Op::RetroSilu, vec![g, x()]))],
        // The loss is linear in the targets: ∂t = −ln(softmax(x) + 1e-7)·g / C.
        Op::CruxEntropia => {
            let gx = gen.op(Op::RetroCruxEntropia, vec![g.clone(), x(), a[1].clone()]);
            let mut c = vec![(x(), gx)];
            if active[1] {
                let gt = gen.op(Op::RetroCruxScopi, vec![g, x()]);
                c.push((a[1].clone(), gt));
            }
            c
        }
        Op::CruxEntropiaIndices => vec![(
            x(),
            gen.op(Op::RetroCruxIndices, vec![g, x(), a[1].clone()]),
        )],
        // ---- construction: the fill value, a normal's mean and std ----
        // `crea(s, shape)`: every element is s, so ∂s = Σ g.
        Op::Crea if active[1] => {
            let gs = s(gen.emit(Rhs::Op(Op::Summa, vec![g]), Ty::Float));
            vec![(a[1].clone(), gs)]
        }
        // `strue(list, shape)` lays a flat list of numbers out in row-major order, so
        // the list's cotangent is `g`'s elements in that order (`planata`), which the
        // list's own definition then splits among its items. A nested list has no
        // such rule.
        Op::Strue if active[1] => {
            let flat = Ty::List(Box::new(Ty::Float));
            if gen.ty(&a[1]) != flat {
                return Err(not_differentiable(
                    span,
                    "`strue` of numbers that depend on a parameter in a list that is not a flat `lista<fractus>` (a nested list has no rule; pass a flat one)",
                ));
            }
            let gl = s(gen.emit(Rhs::Op(Op::Planata, vec![g]), flat));
            vec![(a[1].clone(), gl)]
        }
        // `normalis(seed, shape, μ, σ)` = μ + σ·z with z the standard draw of the same
        // seed: ∂μ = Σ g, ∂σ = Σ g ⊙ z.
        Op::Normalis if active[3] || active[4] => {
            let mut c = Vec::new();
            if active[3] {
                let gm = s(gen.emit(Rhs::Op(Op::Summa, vec![g.clone()]), Ty::Float));
                c.push((a[3].clone(), gm));
            }
            if active[4] {
                let z = gen.op(
                    Op::Normalis,
                    vec![a[0].clone(), a[1].clone(), a[2].clone(), fl(0.0), fl(1.0)],
                );
                let gz = gen.op(Op::Multiplica, vec![g, z]);
                let gsd = s(gen.emit(Rhs::Op(Op::Summa, vec![gz]), Ty::Float));
                c.push((a[4].clone(), gsd));
            }
            c
        }
        // ---- no gradient flows: integer or piecewise-constant results, seeds ----
        Op::Crea | Op::Strue | Op::Argmax | Op::Magnitudines | Op::Numerus | Op::Positiva => vec![],
        Op::Normalis | Op::Uniformis | Op::Multinomialis | Op::RetroNihil => vec![],
        // ---- permutations and joins ----
        Op::Permute => vec![(x(), gen.op(Op::RetroPermute, vec![g, a[1].clone()]))],
        Op::Concatena => {
            let part = |gen: &mut Gen, which: i64| {
                let w = Operand::Const(Const::Int(which));
                gen.op(
                    Op::RetroPars,
                    vec![g.clone(), a[0].clone(), a[1].clone(), a[2].clone(), w],
                )
            };
            let gx = part(gen, 0);
            let gy = part(gen, 1);
            vec![(x(), gx), (a[1].clone(), gy)]
        }
        // A list of numbers leaves the tensor world: no gradient flows back through it.
        Op::Planata => {
            return Err(not_differentiable(
                span,
                "`planata` (its result is a list, not a tensor)",
            ))
        }
        Op::AdamwPassus => {
            return Err(not_differentiable(
                span,
                "`adamw_passus` (an optimizer update)",
            ))
        }
        Op::RetroImple
        | Op::RetroAdde
        | Op::RetroAdFormam
        | Op::RetroDilata
        | Op::RetroMaximum
        | Op::RetroInpone
        | Op::RetroSoftmax
        | Op::RetroSoftmaxCausalis
        | Op::RetroLogSoftmax
        | Op::RetroLaminatio
        | Op::RetroLaminatioAdde
        | Op::RetroGelu
        | Op::RetroGeluDerivata
        | Op::RetroGeluPerExp
        | Op::RetroCruxEntropia
        | Op::RetroCruxScopi
        | Op::RetroCruxIndices
        | Op::RetroCollige
        | Op::RetroPermute
        | Op::RetroPars
        | Op::RetroMatMul
        | Op::RetroMatMulDerivata
        | Op::RetroMatMulAdde
        | Op::RetroAttentioPondera
        | Op::RetroAttentioApplica
        | Op::RetroAttentio
        | Op::RetroRmsNorm
        | Op::RetroSilu => {
            return Err(not_differentiable(
                span,
                &format!("the backward helper `{}` (second derivatives)", op.name()),
            ))
        }
    })
}

/// The cotangent for ε of `x.laminatio(axis, ε, γ, β)` (`centred`) or of
/// `x.rms_norm(axis, ε, γ)`, when ε depends on a parameter: with `c = x − mean`
/// (`laminatio`) or `c = x` (`rms_norm`), `v = mean(c²)` per row and
/// `y = γ ⊙ c / √(v + ε) (+ β)`, `∂ε = −½ Σ g ⊙ γ ⊙ c / √(v + ε) / (v + ε)`. Built from
/// ordinary ops (rare: ε is almost always a constant, and then this is not emitted).
fn norm_eps(gen: &mut Gen, g: Operand, a: &[Operand], centred: bool) -> Operand {
    let keep = Operand::Const(Const::Bool(true));
    let c = if centred {
        let m = gen.op(
            Op::MediaAxis,
            vec![a[0].clone(), a[1].clone(), keep.clone()],
        );
        gen.op(Op::Subtrahe, vec![a[0].clone(), m])
    } else {
        a[0].clone()
    };
    let cc = gen.op(Op::Multiplica, vec![c.clone(), c.clone()]);
    let v = gen.op(Op::MediaAxis, vec![cc, a[1].clone(), keep]);
    let ve = gen.op(Op::Addita, vec![v, a[2].clone()]);
    let root = gen.op(Op::Sqrt, vec![ve.clone()]);
    let xhat = gen.op(Op::Divide, vec![c, root]);
    let gg = gen.op(Op::Multiplica, vec![g, a[3].clone()]);
    let t = gen.op(Op::Multiplica, vec![gg, xhat]);
    let q = gen.op(Op::Divide, vec![t, ve]);
    let total = s(gen.emit(Rhs::Op(Op::Summa, vec![q]), Ty::Float));
    gen.prim(BinOp::Mul, total, fl(-0.5))
}

/// The VJP of a save-split's reader `op` (fusions.rs): its last operand is the pair,
/// which must be the pair op of the reader's own other operands (`gen.tangents`
/// records what each pair was made from); the residual is the pair's second part.
fn split_reader(
    gen: &mut Gen,
    op: Op,
    a: &[Operand],
    g: Operand,
    span: crate::source::Span,
) -> Result<Contribs, Diagnostic> {
    let Some(split) = split_with(op) else {
        return Err(not_differentiable(span, &format!("`{}`", op.name())));
    };
    let n = a.len() - 1;
    let own = match &a[n] {
        Operand::Slot(p) => gen.tangents.get(p).map(Vec::as_slice) == Some(&a[..n]),
        _ => false,
    };
    if !own {
        return Err(not_differentiable(
            span,
            &format!(
                "`{}` of a pair other than {} (write `{}`)",
                op.name(),
                split.own_pair,
                split.write
            ),
        ));
    }
    let r = s(gen.emit(
        Rhs::Index(a[n].clone(), Operand::Const(Const::Int(1))),
        tensor(),
    ));
    Ok(match split.backward {
        SplitBackward::Receiver(h) => vec![(a[0].clone(), gen.op(h, vec![g, r]))],
        SplitBackward::Parts(h, k) => {
            let mut args = vec![g, r];
            args.extend(a[..n].iter().cloned());
            let parts = gen.tensor_parts(h, args, k);
            a[..k].iter().cloned().zip(parts).collect()
        }
    })
}

/// `Σ all − Σ kept`: the total cotangent of the entries a mask replaced (`kept` is
/// `all` with them set to 0).
fn masked_sum(gen: &mut Gen, all: Operand, kept: Operand) -> Operand {
    let total = s(gen.emit(Rhs::Op(Op::Summa, vec![all]), Ty::Float));
    let unmasked = s(gen.emit(Rhs::Op(Op::Summa, vec![kept]), Ty::Float));
    gen.prim(BinOp::Sub, total, unmasked)
}

/// The rank of a tensor operand when its static type knows it.
fn static_rank(gen: &Gen, o: &Operand) -> Option<usize> {
    match gen.ty(o) {
        Ty::Tensor { shape: Some(d), .. } => Some(d.len()),
        _ => None,
    }
}

/// `a · b`: `g · bᵀ`, `aᵀ · g` (last two axes for batched products, read in place by
/// `matmul_nt` / `matmul_tn`), reduced back over broadcast batch axes; vector cases as
/// outer products.
fn matmul_rule(
    gen: &mut Gen,
    a: &Operand,
    b: &Operand,
    g: Operand,
    out_ty: &Ty,
    span: crate::source::Span,
) -> Result<Contribs, Diagnostic> {
    let (ra, rb) = (static_rank(gen, a), static_rank(gen, b));
    Ok(match (ra, rb) {
        (Some(1), Some(1)) => {
            // dot: g is a rank-0 tensor
            let ga = gen.op(Op::Multiplica, vec![b.clone(), g.clone()]);
            let gb = gen.op(Op::Multiplica, vec![a.clone(), g]);
            vec![(a.clone(), ga), (b.clone(), gb)]
        }
        (Some(2), Some(1)) => {
            // [m,k]·[k] = [m]: ga = g[m,1] · b[1,k], gb = aᵀ · g
            let gcol = reshape_like(gen, g.clone(), &[-1, 1]);
            let brow = reshape_like(gen, b.clone(), &[1, -1]);
            let ga = gen.op(Op::MatMul, vec![gcol, brow]);
            let at = gen.op(Op::Transpone, vec![a.clone()]);
            let gb = gen.op(Op::MatMul, vec![at, g]);
            vec![(a.clone(), ga), (b.clone(), gb)]
        }
        (Some(ra), Some(rb)) if ra >= 2 && rb >= 2 => {
            let ga = gen.op(Op::MatMulNT, vec![g.clone(), b.clone()]);
            let gb = gen.op(Op::MatMulTN, vec![a.clone(), g]);
            let (ga, gb) = if ra == rb && ra == 2 {
                (ga, gb)
            } else {
                (
                    gen.unbroadcast(ga, a, out_ty),
                    gen.unbroadcast(gb, b, out_ty),
                )
            };
            vec![(a.clone(), ga), (b.clone(), gb)]
        }
        _ => {
            // Ranks known only at run time (shape-generic code): one helper picks the
            // same products as the arms above once it sees the operands.
            let _ = span;
            let g = gen.tensor_parts(Op::RetroMatMul, vec![a.clone(), b.clone(), g], 2);
            vec![(a.clone(), g[0].clone()), (b.clone(), g[1].clone())]
        }
    })
}

/// The fused attention VJP for `qkvh` = [q, k, v, capita] and the weights `p`:
/// `g.retro_attentio(p, q, k, v, capita)` read out as ∂q, ∂k, ∂v.
fn attention_vjp(gen: &mut Gen, g: Operand, p: Operand, qkvh: &[Operand]) -> Contribs {
    let [q, k, v, h] = [0, 1, 2, 3].map(|i| qkvh[i].clone());
    let args = vec![g, p, q.clone(), k.clone(), v.clone(), h];
    let parts = gen.tensor_parts(Op::RetroAttentio, args, 3);
    vec![
        (q, parts[0].clone()),
        (k, parts[1].clone()),
        (v, parts[2].clone()),
    ]
}

/// `a · bᵀ` (`matmul_nt`) and `aᵀ · b` (`matmul_tn`), ranks ≥ 2: the family is closed
/// under the rule — NT: ∂a = g · b, ∂b = gᵀ · a; TN: ∂a = b · gᵀ, ∂b = a · g — reduced
/// over broadcast batch axes like `·`. With ranks known only at run time the
/// transposed operand is made explicit and `·`'s rule applies.
fn matmul_t_rule(
    gen: &mut Gen,
    op: Op,
    a: &Operand,
    b: &Operand,
    g: Operand,
    out_ty: &Ty,
    span: crate::source::Span,
) -> Result<Contribs, Diagnostic> {
    match (static_rank(gen, a), static_rank(gen, b)) {
        (Some(ra), Some(rb)) if ra >= 2 && rb >= 2 => {
            let (ga, gb) = if op == Op::MatMulNT {
                let ga = gen.op(Op::MatMul, vec![g.clone(), b.clone()]);
                (ga, gen.op(Op::MatMulTN, vec![g, a.clone()]))
            } else {
                let ga = gen.op(Op::MatMulNT, vec![b.clone(), g.clone()]);
                (ga, gen.op(Op::MatMul, vec![a.clone(), g]))
            };
            Ok(if ra == 2 && rb == 2 {
                vec![(a.clone(), ga), (b.clone(), gb)]
            } else {
                vec![
                    (a.clone(), gen.unbroadcast(ga, a, out_ty)),
                    (b.clone(), gen.unbroadcast(gb, b, out_ty)),
                ]
            })
        }
        _ => {
            let (t, other) = if op == Op::MatMulNT { (b, a) } else { (a, b) };
            let tt = gen.op(Op::TransponeUltimas, vec![t.clone()]);
            let (x, y) = if op == Op::MatMulNT {
                (other.clone(), tt.clone())
            } else {
                (tt.clone(), other.clone())
            };
            let mut contribs = matmul_rule(gen, &x, &y, g, out_ty, span)?;
            for (target, grad) in contribs.iter_mut() {
                if *target == tt {
                    *target = t.clone();
                    *grad = gen.op(Op::TransponeUltimas, vec![grad.clone()]);
                }
            }
            Ok(contribs)
        }
    }
}

/// `forma` to a shape built from the operand's own size: `[-1, 1]` means "all
/// elements, one column", resolved at run time through `numerus_elementorum`.
fn reshape_like(gen: &mut Gen, x: Operand, pattern: &[i64]) -> Operand {
    let n = s(gen.emit(Rhs::Op(Op::Numerus, vec![x.clone()]), Ty::Int));
    let dims: Vec<Operand> = pattern
        .iter()
        .map(|&d| {
            if d < 0 {
                n.clone()
            } else {
                Operand::Const(Const::Int(d))
            }
        })
        .collect();
    let shape = s(gen.emit(Rhs::List(dims), Ty::List(Box::new(Ty::Int))));
    gen.op(Op::Forma, vec![x, shape])
}
