//! Tensor operations of the IR (`Rhs::Op`). Lowering maps the Latin method
//! spellings (`x.addita(y)`, `a · b`, `x.activatio_softmax()`) to these; the
//! evaluator runs them with the kernels in `src/tensor/`; the autodiff pass has one
//! VJP rule per variant. Operand 0 is always the receiver.
//!
//! Static shapes: [`infer_shape`] computes the result shape from operand shapes where
//! they are known (`None` = unknown rank, `Some(dims)` with `None` entries = unknown
//! extents), so `faber check` reports mismatches that are certain.

/// A tensor shape known at compile time, as far as it is known.
pub type StaticShape = Option<Vec<Option<u64>>>;

/// The most operands (receiver included) an op takes; the evaluator passes at most
/// this many.
pub const MAX_ARITY: usize = 6;

macro_rules! ops {
    ($($variant:ident = $name:literal, $arity:expr;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op { $($variant),* }

        impl Op {
            /// The Latin method name (`·` is `matmul`'s glyph, `⊙` `multiplica`'s).
            pub fn name(self) -> &'static str {
                match self { $(Op::$variant => $name),* }
            }

            /// Operands including the receiver.
            pub fn arity(self) -> usize {
                match self { $(Op::$variant => $arity),* }
            }

            pub fn from_method(name: &str) -> Option<Op> {
                match name { $($name => Some(Op::$variant),)* _ => None }
            }

            pub const ALL: &'static [Op] = &[$(Op::$variant),*];
        }
    };
}

ops! {
    // construction (receiver: a seed that only gives the element kind)
    Crea = "crea", 3;
    Strue = "strue", 3;
    // shape
    Forma = "forma", 2;
    Transpone = "transpone", 1;
    Permute = "permute", 2;
    Sectio = "sectio", 3;
    Angusta = "angusta", 4;
    Concatena = "concatena", 3;
    // elementwise with broadcasting
    Addita = "addita", 2;
    Subtrahe = "subtrahe", 2;
    Multiplica = "multiplica", 2;
    Divide = "divide", 2;
    AdditaBias = "addita_bias", 2;
    MatMul = "matmul", 2;
    // `x.lineare(w, b)`: `(x · w).addita_bias(b)` in one op (same bits)
    Lineare = "lineare", 3;
    // unary
    Neg = "neg", 1;
    Exp = "exp", 1;
    Log = "log", 1;
    Sqrt = "sqrt", 1;
    Tanh = "tanh", 1;
    TanhPerExp = "tanh_per_exp", 1;
    Gelu = "gelu", 1;
    GeluPerExp = "gelu_per_exp", 1;
    Relu = "relu", 1;
    Reciproca = "reciproca", 1;
    Scala = "scala", 2;
    // reductions
    Summa = "summa", 1;
    Media = "media", 1;
    SummaAxis = "summa_axis", 3;
    MediaAxis = "media_axis", 3;
    MaximumAxis = "maximum_axis", 3;
    Argmax = "argmax", 1;
    // neural-network building blocks
    Softmax = "activatio_softmax", 1;
    LogSoftmax = "log_softmax", 1;
    Laminatio = "laminatio", 5;
    CruxEntropia = "crux_entropia", 2;
    CruxEntropiaIndices = "crux_entropia_indices", 2;
    Collige = "collige", 2;
    LarvaCausalis = "larva_causalis", 2;
    // `x.softmax_causalis(s, v)`: `x.scala(s).larva_causalis(v).activatio_softmax()` in
    // one pass (same bits)
    SoftmaxCausalis = "softmax_causalis", 3;
    // causal multi-head self-attention on [B, T, D] activations, heads read in place:
    // `q.attentio_pondera(k, capita)` → weights [B, H, T, T] (what `forma`, `permute`,
    // `matmul_nt` and `softmax_causalis(dh^−½, −1e9)` give per head, same bits) and
    // `p.attentio_applica(v)` → [B, T, D] (the product per head, heads joined)
    AttentioPondera = "attentio_pondera", 3;
    AttentioApplica = "attentio_applica", 2;
    // `q.attentio(k, v, capita)`: `q.attentio_pondera(k, capita).attentio_applica(v)`
    // without the weights tensor (same bits); a companion's forward sweep splits it into
    // `w ← q.attentio_cum_ponderibus(k, v, capita)` (the pair (y, weights), one pass) and
    // `q.attentio_ex_pari(k, v, capita, w)` (w's first part, naming where w came from)
    // and keeps the weights for the backward
    Attentio = "attentio", 4;
    AttentioCumPonderibus = "attentio_cum_ponderibus", 4;
    AttentioExPari = "attentio_ex_pari", 5;
    // seeded random tensors, pure functions of an integer seed (JAX-style keys):
    // `semen.normalis(seed, shape, mean, std)`, `semen.uniformis(seed, shape)`,
    // `p.multinomialis(seed)` (one class index per probability row)
    Normalis = "normalis", 5;
    Uniformis = "uniformis", 3;
    Multinomialis = "multinomialis", 2;
    // inspection
    Magnitudines = "magnitudines", 1;
    Planata = "planata", 1;
    Numerus = "numerus_elementorum", 1;
    // helpers the generated backward companions use (src/autodiff/rules.rs)
    TransponeUltimas = "transpone_ultimas", 1;
    Positiva = "positiva", 1;
    RetroNihil = "retro_nihil", 1;
    RetroAdde = "retro_adde", 2;
    RetroImple = "retro_imple", 2;
    RetroAdFormam = "retro_ad_formam", 2;
    RetroDilata = "retro_dilata", 4;
    RetroMaximum = "retro_maximum", 4;
    RetroInpone = "retro_inpone", 4;
    RetroSoftmax = "retro_softmax", 2;
    RetroSoftmaxCausalis = "retro_softmax_causalis", 3;
    RetroLogSoftmax = "retro_log_softmax", 2;
    RetroLaminatio = "retro_laminatio", 4;
    // `g.retro_laminatio_adde(x, eps, γ, r)` = (r + ∂x, ∂γ, ∂β): the cotangent sum
    // `addita(r, ∂x)` after it folded in (src/autodiff/fuse.rs)
    RetroLaminatioAdde = "retro_laminatio_adde", 5;
    RetroGelu = "retro_gelu", 2;
    // GELU for a companion's forward sweep, which keeps the derivative for the
    // backward: `p = x.gelu_cum_derivata()` (the pair (gelu(x), gelu'(x)), one pass),
    // `y = x.gelu_ex_pari(p)` (p's first part: the bits of `x.gelu()`), and
    // `g.retro_gelu_derivata(d)` = g ⊙ d (the bits of `g.retro_gelu(x)`)
    GeluCumDerivata = "gelu_cum_derivata", 1;
    GeluExPari = "gelu_ex_pari", 2;
    RetroGeluDerivata = "retro_gelu_derivata", 2;
    RetroGeluPerExp = "retro_gelu_per_exp", 2;
    RetroCruxEntropia = "retro_crux_entropia", 3;
    // `g.retro_crux_scopi(x)` = −ln(softmax(x) + 1e-7)·g / C: `crux_entropia`'s
    // cotangent for its targets
    RetroCruxScopi = "retro_crux_scopi", 2;
    RetroCruxIndices = "retro_crux_indices", 3;
    RetroCollige = "retro_collige", 3;
    RetroPermute = "retro_permute", 2;
    RetroPars = "retro_pars", 5;
    RetroMatMul = "retro_matmul", 3;
    // `a.retro_matmul_derivata(b, g, d)` = (∂a ⊙ d, ∂b): `retro_matmul` with the GELU
    // backward `retro_gelu_derivata(∂a, d)` that follows it in a companion folded in
    // (src/autodiff/fuse.rs)
    RetroMatMulDerivata = "retro_matmul_derivata", 4;
    // `a.retro_matmul_adde(b, g, r)` = (r + ∂a, ∂b): `retro_matmul` with the cotangent sum
    // `addita(r, ∂a)` that follows it folded in (src/autodiff/fuse.rs)
    RetroMatMulAdde = "retro_matmul_adde", 4;
    // `g.retro_attentio_pondera(p, q, k, capita)` → (∂q, ∂k);
    // `g.retro_attentio_applica(p, v)` → (∂p, ∂v)
    RetroAttentioPondera = "retro_attentio_pondera", 5;
    RetroAttentioApplica = "retro_attentio_applica", 3;
    // `g.retro_attentio(p, q, k, v, capita)` → (∂q, ∂k, ∂v): both VJPs above per head,
    // the weights' cotangent never stored
    RetroAttentio = "retro_attentio", 6;
    // products with an operand read transposed (last two axes, ranks ≥ 2): the
    // matmul VJP's `g · bᵀ` and `aᵀ · g` without a transposed copy
    MatMulNT = "matmul_nt", 2;
    MatMulTN = "matmul_tn", 2;
    // optimizer update fused over a leaf: `p.adamw_passus(g, m, v, [β₁, 1 − β₁, β₂,
    // 1 − β₂, 1/√(1 − β₂ᵗ), ε, 1 − lr·wd, lr/(1 − β₁ᵗ)])` → (p', m', v')
    AdamwPassus = "adamw_passus", 5;
}

/// How an op's result relates to a tensor: most return a tensor; a few return a
/// number or a list (lowering uses this for static types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpResult {
    Tensor,
    /// `summa`, `media`, `crux_entropia*`: a `fractus`.
    Float,
    /// `magnitudines`: `lista<numerus>`.
    IntList,
    /// `planata`: `lista<fractus>`.
    FloatList,
    /// `numerus_elementorum`: a `numerus`.
    Int,
    /// `retro_laminatio`: `iuncta` of three tensors (∂x, ∂γ, ∂β); `adamw_passus`:
    /// (p', m', v').
    Triple,
    /// `retro_matmul`: `iuncta` of two tensors (∂a, ∂b); likewise the attention VJPs
    /// and the helpers `gelu_cum_derivata` (y, y') and `attentio_cum_ponderibus` (y, p).
    Pair,
}

impl Op {
    pub fn result(self) -> OpResult {
        match self {
            Op::Summa | Op::Media | Op::CruxEntropia | Op::CruxEntropiaIndices => OpResult::Float,
            Op::Magnitudines => OpResult::IntList,
            Op::Planata => OpResult::FloatList,
            Op::Numerus => OpResult::Int,
            Op::RetroLaminatio | Op::RetroLaminatioAdde | Op::AdamwPassus | Op::RetroAttentio => {
                OpResult::Triple
            }
            Op::RetroMatMul
            | Op::RetroMatMulDerivata
            | Op::RetroMatMulAdde
            | Op::RetroAttentioPondera
            | Op::RetroAttentioApplica
            | Op::GeluCumDerivata
            | Op::AttentioCumPonderibus => OpResult::Pair,
            _ => OpResult::Tensor,
        }
    }

    /// Method names that lists or texts also have: with a receiver of unknown static
    /// type these stay built-in methods and dispatch on the value at run time.
    pub fn shared_with_lists(name: &str) -> bool {
        matches!(name, "sectio" | "longitudo" | "accipe")
    }
}

/// Why a static shape check failed: a message naming both shapes.
pub fn shape_text(s: &StaticShape) -> String {
    match s {
        None => "_".into(),
        Some(d) => {
            let parts: Vec<String> = d
                .iter()
                .map(|x| x.map_or("_".into(), |n| n.to_string()))
                .collect();
            format!("[{}]", parts.join(", "))
        }
    }
}

fn dim_eq(a: Option<u64>, b: Option<u64>) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// NumPy broadcasting of two static shapes.
pub fn broadcast(a: &StaticShape, b: &StaticShape) -> Result<StaticShape, String> {
    let (Some(a), Some(b)) = (a, b) else {
        return Ok(None);
    };
    let n = a.len().max(b.len());
    let mut out = vec![None; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            Some(1)
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            Some(1)
        };
        out[i] = match (da, db) {
            (Some(1), d) | (d, Some(1)) => d,
            (Some(x), Some(y)) if x == y => Some(x),
            (Some(x), Some(y)) => {
                let (ia, ib) = (i + a.len() - n, i + b.len() - n);
                let (sa, sb) = (shape_text(&Some(a.clone())), shape_text(&Some(b.clone())));
                let axis = if ia == ib {
                    format!("axis {ia}: {x} against {y}")
                } else {
                    format!("axis {ia} of {sa} ({x}) against axis {ib} of {sb} ({y})")
                };
                return Err(format!(
                    "shapes {sa} and {sb} do not broadcast ({axis}; sizes must be equal or 1)"
                ));
            }
            _ => None,
        };
    }
    Ok(Some(out))
}

/// The result shape of `op` given operand shapes (`None` for non-tensor or unknown
/// operands) and, for ops whose shape comes from an operand's value, that value when
/// it is a literal (`shape_arg`). Err when the shapes certainly do not fit.
pub fn infer_shape(
    op: Op,
    shapes: &[StaticShape],
    shape_arg: Option<&[u64]>,
) -> Result<StaticShape, String> {
    let s0 = shapes.first().cloned().flatten();
    let s1 = shapes.get(1).cloned().flatten();
    let known = |v: &[u64]| Some(v.iter().map(|&d| Some(d)).collect::<Vec<_>>());
    Ok(match op {
        Op::Crea | Op::Strue => shape_arg.and_then(known),
        Op::Normalis | Op::Uniformis => shapes_arg_or_none(shape_arg),
        Op::Forma => {
            if let (Some(target), Some(src)) = (shape_arg, &s0) {
                if src.iter().all(|d| d.is_some()) {
                    let a: u64 = src.iter().map(|d| d.unwrap_or(1)).product();
                    let b: u64 = target.iter().product();
                    if a != b {
                        return Err(format!(
                            "cannot reshape {} ({a} elements) to {} ({b} elements)",
                            shape_text(&s0),
                            shape_text(&known(target))
                        ));
                    }
                }
            }
            shape_arg.and_then(known)
        }
        Op::Transpone => match s0 {
            Some(d) if d.len() == 2 => Some(vec![d[1], d[0]]),
            Some(d) => {
                return Err(format!(
                    "`transpone` needs a rank-2 tensor, found rank {}",
                    d.len()
                ))
            }
            None => None,
        },
        Op::Addita | Op::Subtrahe | Op::Multiplica | Op::Divide => broadcast(&s0, &s1)?,
        Op::AdditaBias => match (&s0, &s1) {
            (Some(x), Some(b)) if x.len() == 2 && b.len() == 1 => {
                if !dim_eq(x[1], b[0]) {
                    return Err(format!(
                        "`addita_bias` needs a bias of {} elements for {}, found {}",
                        x[1].map_or("_".into(), |n| n.to_string()),
                        shape_text(&s0),
                        shape_text(&s1)
                    ));
                }
                s0.clone()
            }
            _ => s0.clone(),
        },
        Op::MatMul | Op::Lineare => match (&s0, &s1) {
            (Some(a), Some(b)) => matmul_shape(a, b)?,
            _ => None,
        },
        Op::MatMulNT | Op::MatMulTN => {
            // The same as `·` on the operand with its last two axes swapped.
            let swap = |s: &StaticShape| -> Result<StaticShape, String> {
                match s {
                    Some(d) if d.len() >= 2 => {
                        let mut d = d.clone();
                        let r = d.len();
                        d.swap(r - 2, r - 1);
                        Ok(Some(d))
                    }
                    Some(d) => Err(format!(
                        "`{}` needs operands of rank ≥ 2, found {}",
                        op.name(),
                        shape_text(&Some(d.clone()))
                    )),
                    None => Ok(None),
                }
            };
            let (a, b) = if op == Op::MatMulTN {
                (swap(&s0)?, s1.clone())
            } else {
                (s0.clone(), swap(&s1)?)
            };
            match (&a, &b) {
                (Some(a), Some(b)) => matmul_shape(a, b)?,
                _ => None,
            }
        }
        Op::Neg
        | Op::Exp
        | Op::Log
        | Op::Sqrt
        | Op::Tanh
        | Op::TanhPerExp
        | Op::Gelu
        | Op::GeluPerExp
        | Op::GeluExPari
        | Op::Relu
        | Op::Reciproca
        | Op::Scala
        | Op::Softmax
        | Op::LogSoftmax
        | Op::Laminatio
        | Op::SoftmaxCausalis
        | Op::LarvaCausalis => s0,
        Op::Summa | Op::Media | Op::CruxEntropia | Op::CruxEntropiaIndices => Some(vec![]),
        _ => None,
    })
}

fn shapes_arg_or_none(shape_arg: Option<&[u64]>) -> StaticShape {
    shape_arg.map(|v| v.iter().map(|&d| Some(d)).collect())
}

fn matmul_shape(a: &[Option<u64>], b: &[Option<u64>]) -> Result<StaticShape, String> {
    let text = |a: &[Option<u64>]| shape_text(&Some(a.to_vec()));
    let mismatch = |ia: usize, ib: usize| {
        let size = |d: Option<u64>| d.map_or("_".into(), |n| n.to_string());
        format!(
            "`·`: {} · {}: the inner dimensions differ ({} against {}: axis {ia} of the left, axis {ib} of the right)",
            text(a),
            text(b),
            size(a[ia]),
            size(b[ib])
        )
    };
    let (ra, rb) = (a.len(), b.len());
    Ok(match (ra, rb) {
        (1, 1) => {
            if !dim_eq(a[0], b[0]) {
                return Err(mismatch(0, 0));
            }
            Some(vec![])
        }
        (2, 1) => {
            if !dim_eq(a[1], b[0]) {
                return Err(mismatch(1, 0));
            }
            Some(vec![a[0]])
        }
        (1, 2) => {
            if !dim_eq(a[0], b[0]) {
                return Err(mismatch(0, 0));
            }
            Some(vec![b[1]])
        }
        (ra, rb) if ra >= 2 && rb >= 2 && ra <= 4 && rb <= 4 => {
            if !dim_eq(a[ra - 1], b[rb - 2]) {
                return Err(mismatch(ra - 1, rb - 2));
            }
            // Batch axes broadcast like elementwise operands.
            let batch = broadcast(&Some(a[..ra - 2].to_vec()), &Some(b[..rb - 2].to_vec()))
                .map_err(|e| format!("`·` batch axes: {e}"))?;
            let mut out = batch.unwrap_or_default();
            out.push(a[ra - 2]);
            out.push(b[rb - 1]);
            Some(out)
        }
        (ra, rb) => return Err(format!("`·` does not combine rank {ra} with rank {rb}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(d: &[u64]) -> StaticShape {
        Some(d.iter().map(|&x| Some(x)).collect())
    }

    #[test]
    fn names_round_trip() {
        for &op in Op::ALL {
            assert_eq!(Op::from_method(op.name()), Some(op));
        }
    }

    #[test]
    fn no_op_takes_more_than_max_arity() {
        for &op in Op::ALL {
            assert!(
                op.arity() <= MAX_ARITY,
                "`{}` takes {}",
                op.name(),
                op.arity()
            );
        }
        assert!(Op::ALL.iter().any(|op| op.arity() == MAX_ARITY));
    }

    #[test]
    fn static_shapes() {
        assert_eq!(
            infer_shape(Op::MatMul, &[s(&[2, 3]), s(&[3, 4])], None).unwrap(),
            s(&[2, 4])
        );
        assert_eq!(
            infer_shape(Op::MatMul, &[s(&[2, 3]), s(&[2, 4])], None).unwrap_err(),
            "`·`: [2, 3] · [2, 4]: the inner dimensions differ (3 against 2: axis 1 of the left, axis 0 of the right)"
        );
        assert_eq!(
            infer_shape(Op::MatMul, &[s(&[5, 2, 3]), s(&[5, 3, 4])], None).unwrap(),
            s(&[5, 2, 4])
        );
        assert_eq!(
            infer_shape(Op::Addita, &[s(&[2, 3]), s(&[3])], None).unwrap(),
            s(&[2, 3])
        );
        assert_eq!(
            infer_shape(Op::Addita, &[s(&[2, 3]), s(&[2])], None).unwrap_err(),
            "shapes [2, 3] and [2] do not broadcast (axis 1 of [2, 3] (3) against axis 0 of [2] (2); sizes must be equal or 1)"
        );
        assert_eq!(
            infer_shape(Op::Addita, &[s(&[2, 3]), s(&[2, 4])], None).unwrap_err(),
            "shapes [2, 3] and [2, 4] do not broadcast (axis 1: 3 against 4; sizes must be equal or 1)"
        );
        assert_eq!(
            infer_shape(Op::Transpone, &[s(&[2, 3])], None).unwrap(),
            s(&[3, 2])
        );
        assert!(infer_shape(Op::Forma, &[s(&[2, 3])], Some(&[4, 2])).is_err());
        assert_eq!(
            infer_shape(Op::Forma, &[s(&[2, 3])], Some(&[3, 2])).unwrap(),
            s(&[3, 2])
        );
        assert_eq!(
            infer_shape(Op::Addita, &[None, s(&[3])], None).unwrap(),
            None
        );
    }
}
