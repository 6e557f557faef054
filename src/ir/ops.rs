//! Tensor operations of the IR (`Rhs::Op`): the op registry. Lowering maps the Latin
//! method spellings (`x.addita(y)`, `a · b`, `x.activatio_softmax()`) to these; the
//! evaluator runs them with the kernels in `src/tensor/` its rows name; the autodiff pass has one
//! VJP rule per variant (src/autodiff/rules.rs) and reads the compiler's fusions from
//! one table (src/autodiff/fusions.rs). Operand 0 is always the receiver.
//!
//! Every row of [`ops!`] names all of its columns — there is no default to fall back
//! on, so a row that forgets one does not compile:
//! - the method name and the operand count (receiver included);
//! - its [`Kind`]: primal, fused (naming the chain it computes in one op), save-split
//!   (naming its residual pair and the op that reads the pair), helper of generated
//!   companions, or backward epilogue (naming the product and the consumer it folds);
//! - its result ([`OpResult`]) and its static shape rule ([`ShapeRule`]);
//! - its finite-difference [`Probe`] (how tests/vjp_fd_table.rs draws its inputs);
//! - how the evaluator runs it: the `crate::tensor` kernel and how each operand is read,
//!   or the evaluator's own function for it (`op_table!` says how; the evaluator's
//!   dispatch is made from these rows, src/eval/tensors.rs);
//! - a one-line doc (`///`), which docs/ops.md's op catalogue shows
//!   (tests/op_catalogue.rs keeps the two equal).
//!
//! Static shapes: [`infer_shape`] computes the result shape from operand shapes where
//! they are known (`None` = unknown rank, `Some(dims)` with `None` entries = unknown
//! extents), so `faber check` reports mismatches that are certain.

/// A tensor shape known at compile time, as far as it is known.
pub type StaticShape = Option<Vec<Option<u64>>>;

/// The most operands (receiver included) an op takes; the evaluator passes at most
/// this many.
pub const MAX_ARITY: usize = 6;

/// What an op is, for the compiler and for a reader of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An operation with its own VJP rule.
    Primal,
    /// A chain of other ops computed in one op with the chain's bits (gradus and
    /// hand-written code choose it); its VJP is the chain's.
    Fused(&'static str),
    /// A primal op that a companion's forward sweep computes as `pair` (the result with
    /// the residual its backward needs, in one pass) and `reads` (the pair's first
    /// part, naming the pair), so the backward reads the residual instead of
    /// recomputing it (src/autodiff/fusions.rs, `SPLITS`).
    SaveSplit { pair: Op, reads: Op },
    /// A helper of generated companions (a backward kernel, a split's pair or
    /// reader); callable by hand, never differentiated.
    Helper,
    /// A backward helper `of` with the `consumer` that follows it in a companion
    /// folded in (src/autodiff/fusions.rs, `EPILOGUES`).
    Epilogue { of: Op, consumer: Op },
}

impl Kind {
    /// The catalogue's text for the kind.
    pub fn describe(self) -> String {
        match self {
            Kind::Primal => "primal".into(),
            Kind::Fused(chain) => format!("fused: {chain}"),
            Kind::SaveSplit { pair, reads } => format!(
                "save-split: pair `{}`, read by `{}`",
                pair.name(),
                reads.name()
            ),
            Kind::Helper => "helper".into(),
            Kind::Epilogue { of, consumer } => format!(
                "epilogue: `{}` with the `{}` after it",
                of.name(),
                consumer.name()
            ),
        }
    }
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
    /// `iuncta` of three tensors: `retro_laminatio` (∂x, ∂γ, ∂β), `adamw_passus`
    /// (p', m', v'), `retro_attentio` (∂q, ∂k, ∂v).
    Triple,
    /// `iuncta` of two tensors: `retro_matmul` (∂a, ∂b), the attention VJPs, and the
    /// split pairs `gelu_cum_derivata` (y, y') and `attentio_cum_ponderibus` (y, p).
    Pair,
}

/// How [`infer_shape`] computes an op's static result shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeRule {
    /// The literal shape operand (`crea`, `strue`, `normalis`, `uniformis`).
    Given,
    /// `forma`: the literal shape, element counts checked when both are known.
    Reshape,
    /// `transpone`: rank 2, axes swapped.
    Transpose,
    /// NumPy broadcasting of operands 0 and 1.
    Broadcast,
    /// `addita_bias`: the receiver's, the bias checked against its last axis.
    Bias,
    /// `·` of operands 0 and 1.
    MatMul,
    /// `·` with operand 1's last two axes swapped (`matmul_nt`).
    MatMulNt,
    /// `·` with operand 0's last two axes swapped (`matmul_tn`).
    MatMulTn,
    /// The receiver's shape.
    Same,
    /// Rank 0.
    Scalar,
    /// Not inferred (known at run time only).
    Unknown,
}

/// Where a finite-difference test draws an operand's values from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// [-1, 1)
    Any,
    /// [0.5, 2): inside the domain of `log`, `sqrt`, a divisor, an ε.
    Pos,
    /// |x| in [0.2, 1), random sign: away from a kink or a pole.
    Away,
}

/// One operand of an automatic finite-difference case (tests/vjp_fd_table.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// A tensor parameter of random shape, rank 0–3 (extents 1–3).
    T(Domain),
    /// A tensor parameter of random shape, rank 1–3 (an op over the last axis).
    Rows(Domain),
    /// A rank-1 tensor parameter as long as the first operand's last axis.
    Row(Domain),
    /// A `fractus` parameter.
    Num(Domain),
    /// The literal index of the first operand's last axis (no gradient: an integer).
    LastAxis,
}

/// How the finite-difference audit covers an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// By the hand-written cases and lists of tests/vjp_fd/cases.rs.
    Cases,
    /// By the program `(x.op(args…) ⊙ w).summa()` with these operands (receiver
    /// first) and a weight `w` of the result's static shape: every operand but
    /// `LastAxis` is checked against finite differences.
    Args(&'static [Arg]),
}

/// The kernel a row names, or `None` for a row the evaluator runs by hand.
macro_rules! kernel_of {
    ([eval $f:ident]) => {
        None
    };
    ([$k:ident($($operand:tt)*)]) => {
        Some(stringify!($k))
    };
}

macro_rules! ops {
    ($(#[doc = $doc:literal] $variant:ident = $name:literal, $arity:expr, $kind:expr,
       $result:ident, $shape:ident, $probe:expr, $run:tt;)*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Op { $(#[doc = $doc] $variant),* }

        impl Op {
            /// The Latin method name (`·` is `matmul`'s glyph, `⊙` `multiplica`'s).
            pub fn name(self) -> &'static str {
                match self { $(Op::$variant => $name),* }
            }

            /// Operands including the receiver.
            pub fn arity(self) -> usize {
                match self { $(Op::$variant => $arity),* }
            }

            pub fn kind(self) -> Kind {
                #[allow(unused_imports)]
                use Kind::*;
                match self { $(Op::$variant => $kind),* }
            }

            pub fn result(self) -> OpResult {
                match self { $(Op::$variant => OpResult::$result),* }
            }

            pub fn shape_rule(self) -> ShapeRule {
                match self { $(Op::$variant => ShapeRule::$shape),* }
            }

            pub fn probe(self) -> Probe {
                #[allow(unused_imports)]
                use {Arg::*, Domain::*, Probe::*};
                match self { $(Op::$variant => $probe),* }
            }

            /// The row's one-line doc (docs/ops.md's catalogue shows it).
            pub fn doc(self) -> &'static str {
                match self { $(Op::$variant => $doc.trim_start()),* }
            }

            /// The `crate::tensor` kernel the evaluator calls for this op (the row's
            /// last column), or `None` when src/eval/tensor_custom.rs runs it.
            pub fn kernel(self) -> Option<&'static str> {
                match self { $(Op::$variant => kernel_of!($run)),* }
            }

            pub fn from_method(name: &str) -> Option<Op> {
                match name { $($name => Some(Op::$variant),)* _ => None }
            }

            pub const ALL: &'static [Op] = &[$(Op::$variant),*];
        }
    };
}

/// The registry's rows, handed to the macro named `$then`: [`ops!`] here makes `Op`
/// and its column methods of them, and the evaluator's dispatch (src/eval/tensors.rs)
/// makes its `match` of the same rows, so an op is declared once.
///
/// Columns: variant = name, operands, kind, result, shape rule, finite-difference
/// probe, run. The run column is `[kernel(K i, …)]`: the evaluator calls
/// `crate::tensor::kernel` with operand `i` read as `K` — `T` a tensor, `Num` a number,
/// `Axis` an axis, `Flag` a truth value, `Heads` a head count, `Dims` a shape — in the
/// order written, and turns the kernel's result into the row's result; or `[eval f]`:
/// the evaluator's own function `f` (src/eval/tensor_custom.rs) reads the operands and
/// calls the kernels.
macro_rules! op_table {
    ($then:ident) => {
        $then! {
    // ---- construction (receiver: a seed that only gives the element kind) ----
    /// `seed.crea(fill, shape)`: a tensor of `shape` with every element `fill`.
    Crea = "crea", 3, Primal, Tensor, Given, Cases, [eval crea];
    /// `seed.strue(flat, shape)`: a flat list of numbers laid out in row-major order.
    Strue = "strue", 3, Primal, Tensor, Given, Cases, [eval strue];
    // ---- shape ----
    /// `x.forma(shape)`: the same elements in another shape (shares the buffer).
    Forma = "forma", 2, Primal, Tensor, Reshape, Cases, [reshape(T 0, Dims 1)];
    /// `x.transpone()`: a rank-2 transpose.
    Transpone = "transpone", 1, Primal, Tensor, Transpose, Cases, [transpose(T 0)];
    /// `x.permute(axes)`: output axis i is input axis `axes[i]`.
    Permute = "permute", 2, Primal, Tensor, Unknown, Cases, [permute(T 0, Dims 1)];
    /// `x.sectio(a, b)`: rows `[a, b)` of axis 0.
    Sectio = "sectio", 3, Primal, Tensor, Unknown, Cases, [eval sectio];
    /// `x.angusta(axis, a, b)`: `[a, b)` along `axis`.
    Angusta = "angusta", 4, Primal, Tensor, Unknown, Cases, [eval angusta];
    /// `x.concatena(y, axis)`: x and y joined along `axis`.
    Concatena = "concatena", 3, Primal, Tensor, Unknown, Cases, [eval concatena];
    // ---- elementwise with broadcasting ----
    /// `a.addita(b)`: a + b, broadcast.
    Addita = "addita", 2, Primal, Tensor, Broadcast, Cases, [eval arith];
    /// `a.subtrahe(b)`: a − b, broadcast.
    Subtrahe = "subtrahe", 2, Primal, Tensor, Broadcast, Cases, [eval arith];
    /// `a.multiplica(b)`, `a ⊙ b`: a · b elementwise, broadcast.
    Multiplica = "multiplica", 2, Primal, Tensor, Broadcast, Cases, [eval arith];
    /// `a.divide(b)`: a / b, broadcast; a zero or non-finite divisor is an error.
    Divide = "divide", 2, Primal, Tensor, Broadcast, Cases, [eval arith];
    /// `x.addita_bias(b)`: b added to every last-axis row of x.
    AdditaBias = "addita_bias", 2, Primal, Tensor, Bias, Cases, [add_bias(T 0, T 1)];
    /// `a · b`, `a.matmul(b)`: the matrix product (dot, mat-vec, batched).
    MatMul = "matmul", 2, Primal, Tensor, MatMul, Cases, [matmul(T 0, T 1)];
    /// `x.lineare(w, b)`: a linear layer in one op, the bias added in place (same bits).
    Lineare = "lineare", 3, Fused("`(x · w).addita_bias(b)`"), Tensor, MatMul, Cases, [linear(T 0, T 1, T 2)];
    // ---- unary ----
    /// `x.neg()`: −x.
    Neg = "neg", 1, Primal, Tensor, Same, Cases, [neg(T 0)];
    /// `x.exp()`: eˣ, correctly rounded.
    Exp = "exp", 1, Primal, Tensor, Same, Cases, [exp(T 0)];
    /// `x.log()`: ln x (libm); x ≤ 0 or NaN is an error.
    Log = "log", 1, Primal, Tensor, Same, Cases, [log(T 0)];
    /// `x.sqrt()`: √x (IEEE); x < 0 or NaN is an error.
    Sqrt = "sqrt", 1, Primal, Tensor, Same, Cases, [sqrt(T 0)];
    /// `x.tanh()`: tanh x, correctly rounded.
    Tanh = "tanh", 1, Primal, Tensor, Same, Cases, [tanh(T 0)];
    /// `x.tanh_per_exp()`: tanh x by the identity `1 − 2/(e^{2x} + 1)`.
    TanhPerExp = "tanh_per_exp", 1, Primal, Tensor, Same, Cases, [tanh_exp_identity(T 0)];
    /// `x.gelu()`: GELU, tanh form, with the correctly rounded tanh.
    Gelu = "gelu", 1, SaveSplit { pair: Op::GeluCumDerivata, reads: Op::GeluExPari }, Tensor, Same, Cases, [gelu(T 0)];
    /// `x.gelu_per_exp()`: GELU with tanh by the exp identity (the bert shim's recipe).
    GeluPerExp = "gelu_per_exp", 1, Primal, Tensor, Same, Cases, [gelu_exp_identity(T 0)];
    /// `x.relu()`: x where x > 0 (NaN stays NaN), else 0.
    Relu = "relu", 1, Primal, Tensor, Same, Cases, [relu(T 0)];
    /// `x.reciproca()`: 1 / x; 0 or non-finite is an error.
    Reciproca = "reciproca", 1, Primal, Tensor, Same, Cases, [reciprocal(T 0)];
    /// `x.scala(f)`: x · f for a number f.
    Scala = "scala", 2, Primal, Tensor, Same, Cases, [scale(T 0, Num 1)];
    // ---- reductions ----
    /// `x.summa()`: the in-order sum of every element, a number.
    Summa = "summa", 1, Primal, Float, Scalar, Cases, [eval summa];
    /// `x.media()`: the sum divided by the count, a number.
    Media = "media", 1, Primal, Float, Scalar, Cases, [mean_value(T 0)];
    /// `x.summa_axis(axis, keep)`: sums along one axis.
    SummaAxis = "summa_axis", 3, Primal, Tensor, Unknown, Cases, [sum_axis(T 0, Axis 1, Flag 2)];
    /// `x.media_axis(axis, keep)`: means along one axis.
    MediaAxis = "media_axis", 3, Primal, Tensor, Unknown, Cases, [mean_axis(T 0, Axis 1, Flag 2)];
    /// `x.maximum_axis(axis, keep)`: maxima along one axis (NaN propagates).
    MaximumAxis = "maximum_axis", 3, Primal, Tensor, Unknown, Cases, [max_axis(T 0, Axis 1, Flag 2)];
    /// `x.argmax()`: the index of the first maximum along the last axis.
    Argmax = "argmax", 1, Primal, Tensor, Unknown, Cases, [argmax(T 0)];
    // ---- neural-network building blocks ----
    /// `x.activatio_softmax()`: softmax of every last-axis row.
    Softmax = "activatio_softmax", 1, Primal, Tensor, Same, Cases, [softmax(T 0)];
    /// `x.log_softmax()`: log-softmax of every last-axis row.
    LogSoftmax = "log_softmax", 1, Primal, Tensor, Same, Cases, [log_softmax(T 0)];
    /// `x.laminatio(axis, ε, γ, β)`: layer normalisation over the last axis.
    Laminatio = "laminatio", 5, Primal, Tensor, Same, Cases, [layernorm(T 0, Axis 1, Num 2, T 3, T 4)];
    /// `x.crux_entropia(t)`: cross-entropy of softmax(x) against targets t, a number.
    CruxEntropia = "crux_entropia", 2, Primal, Float, Scalar, Cases, [eval crux_entropia];
    /// `z.crux_entropia_indices(y)`: mean cross-entropy against class ids, a number.
    CruxEntropiaIndices = "crux_entropia_indices", 2, Primal, Float, Scalar, Cases, [eval crux_entropia];
    /// `E.collige(ids)`: the rows of E at ids (an embedding lookup).
    Collige = "collige", 2, Primal, Tensor, Unknown, Cases, [embedding(T 0, T 1)];
    /// `x.larva_causalis(v)`: x with every entry above the diagonal (last two axes) set to v.
    LarvaCausalis = "larva_causalis", 2, Primal, Tensor, Same, Cases, [causal_mask(T 0, Num 1)];
    /// `x.softmax_causalis(s, v)`: scaled, causally masked softmax in one pass (same bits).
    SoftmaxCausalis = "softmax_causalis", 3, Fused("`x.scala(s).larva_causalis(v).activatio_softmax()`"), Tensor, Same, Cases, [softmax_causal(T 0, Num 1, Num 2)];
    /// `q.attentio_pondera(k, H)`: causal attention weights [B, H, T, T] of [B, T, D] activations, heads read in place.
    AttentioPondera = "attentio_pondera", 3, Fused("per head `forma`, `permute`, `matmul_nt`, `softmax_causalis((D/H)^−½, −1e9)`"), Tensor, Unknown, Cases, [attention_weights(T 0, T 1, Heads 2)];
    /// `p.attentio_applica(v)`: attention weights times values, heads joined to [B, T, D].
    AttentioApplica = "attentio_applica", 2, Fused("per head `p · v`, heads joined (`permute`, `forma`)"), Tensor, Unknown, Cases, [attention_apply(T 0, T 1)];
    /// `q.attentio(k, v, H)`: causal multi-head self-attention without the weights tensor (the chain `q.attentio_pondera(k, H).attentio_applica(v)`, same bits).
    Attentio = "attentio", 4, SaveSplit { pair: Op::AttentioCumPonderibus, reads: Op::AttentioExPari }, Tensor, Unknown, Cases, [attention(T 0, T 1, T 2, Heads 3)];
    /// `q.attentio_cum_ponderibus(k, v, H)`: the pair (attention, weights) in one pass (`attentio`'s split).
    AttentioCumPonderibus = "attentio_cum_ponderibus", 4, Helper, Pair, Unknown, Cases, [attention_with_weights(T 0, T 1, T 2, Heads 3)];
    /// `q.attentio_ex_pari(k, v, H, w)`: the first part of w, naming the operands it came from (`attentio`'s split).
    AttentioExPari = "attentio_ex_pari", 5, Helper, Tensor, Unknown, Cases, [eval attentio_ex_pari];
    // ---- seeded random tensors: pure functions of an integer seed (JAX-style keys) ----
    /// `semen.normalis(seed, shape, μ, σ)`: normal draws μ + σ·z.
    Normalis = "normalis", 5, Primal, Tensor, Given, Cases, [eval normalis];
    /// `semen.uniformis(seed, shape)`: uniform draws in [0, 1).
    Uniformis = "uniformis", 3, Primal, Tensor, Given, Cases, [eval uniformis];
    /// `p.multinomialis(seed)`: one class index drawn per probability row.
    Multinomialis = "multinomialis", 2, Primal, Tensor, Unknown, Cases, [eval multinomialis];
    // ---- inspection ----
    /// `x.magnitudines()`: the shape, a `lista<numerus>`.
    Magnitudines = "magnitudines", 1, Primal, IntList, Unknown, Cases, [eval magnitudines];
    /// `x.planata()`: the elements in row-major order, a `lista<fractus>`.
    Planata = "planata", 1, Primal, FloatList, Unknown, Cases, [eval planata];
    /// `x.numerus_elementorum()`: the element count, a `numerus`.
    Numerus = "numerus_elementorum", 1, Primal, Int, Unknown, Cases, [eval numerus];
    // ---- helpers the generated backward companions use (src/autodiff/rules.rs) ----
    /// `x.transpone_ultimas()`: the last two axes swapped (ranks ≥ 2).
    TransponeUltimas = "transpone_ultimas", 1, Helper, Tensor, Unknown, Cases, [transpose_last(T 0)];
    /// `x.positiva()`: 1 where x > 0, else 0 (`relu`'s mask).
    Positiva = "positiva", 1, Helper, Tensor, Unknown, Cases, [positive(T 0)];
    /// `x.retro_nihil()`: zeros of x's structure (a cotangent's start).
    RetroNihil = "retro_nihil", 1, Helper, Tensor, Unknown, Cases, [eval retro_nihil];
    /// `a.retro_adde(b)`: a + b over values of any structure (cotangent accumulation).
    RetroAdde = "retro_adde", 2, Helper, Tensor, Unknown, Cases, [eval retro_adde];
    /// `x.retro_imple(s)`: x's shape filled with s (`summa`'s VJP).
    RetroImple = "retro_imple", 2, Helper, Tensor, Unknown, Cases, [eval retro_imple];
    /// `g.retro_ad_formam(x)`: g summed down to x's shape (the broadcast VJP).
    RetroAdFormam = "retro_ad_formam", 2, Helper, Tensor, Unknown, Cases, [eval retro_ad_formam];
    /// `g.retro_dilata(x, axis, mean)`: g spread back along a reduced axis (÷ n for a mean).
    RetroDilata = "retro_dilata", 4, Helper, Tensor, Unknown, Cases, [eval retro_axis];
    /// `g.retro_maximum(x, axis, keep)`: g sent to the first arg-max of each reduced run.
    RetroMaximum = "retro_maximum", 4, Helper, Tensor, Unknown, Cases, [eval retro_axis];
    /// `g.retro_inpone(axis, start, x)`: g placed at `start` along `axis` in zeros of x's shape.
    RetroInpone = "retro_inpone", 4, Helper, Tensor, Unknown, Cases, [eval retro_inpone];
    /// `g.retro_softmax(y)`: softmax's VJP, `y ⊙ (g − rowsum(g ⊙ y))`.
    RetroSoftmax = "retro_softmax", 2, Helper, Tensor, Unknown, Cases, [softmax_backward(T 0, T 1)];
    /// `g.retro_softmax_causalis(y, s)`: `softmax_causalis`'s VJP for x in one pass.
    RetroSoftmaxCausalis = "retro_softmax_causalis", 3, Helper, Tensor, Unknown, Cases, [softmax_causal_backward(T 0, T 1, Num 2)];
    /// `g.retro_log_softmax(x)`: log-softmax's VJP, `g − softmax(x) ⊙ rowsum(g)`.
    RetroLogSoftmax = "retro_log_softmax", 2, Helper, Tensor, Unknown, Cases, [log_softmax_backward(T 0, T 1)];
    /// `g.retro_laminatio(x, ε, γ)`: layernorm's VJP, the triple (∂x, ∂γ, ∂β).
    RetroLaminatio = "retro_laminatio", 4, Helper, Triple, Unknown, Cases, [eval retro_laminatio];
    /// `g.retro_laminatio_adde(x, ε, γ, r)`: (r + ∂x, ∂γ, ∂β), r added to each group of rows as it is written.
    RetroLaminatioAdde = "retro_laminatio_adde", 5, Epilogue { of: Op::RetroLaminatio, consumer: Op::Addita }, Triple, Unknown, Cases, [eval retro_laminatio];
    /// `g.retro_gelu(x)`: GELU's VJP, g ⊙ gelu′(x).
    RetroGelu = "retro_gelu", 2, Helper, Tensor, Unknown, Cases, [gelu_backward(T 0, T 1)];
    /// `x.gelu_cum_derivata()`: the pair (gelu(x), gelu′(x)) in one pass (`gelu`'s split).
    GeluCumDerivata = "gelu_cum_derivata", 1, Helper, Pair, Unknown, Cases, [gelu_cum_derivata(T 0)];
    /// `x.gelu_ex_pari(p)`: p's first part, the bits of `x.gelu()` (`gelu`'s split).
    GeluExPari = "gelu_ex_pari", 2, Helper, Tensor, Same, Cases, [eval gelu_ex_pari];
    /// `g.retro_gelu_derivata(d)`: g ⊙ d with GELU's kept derivative d (the bits of `retro_gelu`).
    RetroGeluDerivata = "retro_gelu_derivata", 2, Helper, Tensor, Unknown, Cases, [gelu_backward_derivata(T 0, T 1)];
    /// `g.retro_gelu_per_exp(x)`: `gelu_per_exp`'s VJP.
    RetroGeluPerExp = "retro_gelu_per_exp", 2, Helper, Tensor, Unknown, Cases, [gelu_exp_identity_backward(T 0, T 1)];
    /// `g.retro_crux_entropia(x, t)`: `crux_entropia`'s cotangent for x.
    RetroCruxEntropia = "retro_crux_entropia", 3, Helper, Tensor, Unknown, Cases, [cross_entropy_backward(Num 0, T 1, T 2)];
    /// `g.retro_crux_scopi(x)`: `crux_entropia`'s cotangent for its targets, −ln(softmax(x) + 1e-7)·g / C.
    RetroCruxScopi = "retro_crux_scopi", 2, Helper, Tensor, Unknown, Cases, [cross_entropy_targets_backward(Num 0, T 1)];
    /// `g.retro_crux_indices(z, y)`: `crux_entropia_indices`' VJP, (softmax(z) − onehot(y))·g / T.
    RetroCruxIndices = "retro_crux_indices", 3, Helper, Tensor, Unknown, Cases, [cross_entropy_indices_backward(Num 0, T 1, T 2)];
    /// `g.retro_collige(ids, E)`: `collige`'s VJP, g's rows scatter-added into zeros of E's shape.
    RetroCollige = "retro_collige", 3, Helper, Tensor, Unknown, Cases, [eval retro_collige];
    /// `g.retro_permute(axes)`: g permuted back by the inverse of `axes`.
    RetroPermute = "retro_permute", 2, Helper, Tensor, Unknown, Cases, [eval retro_permute];
    /// `g.retro_pars(x, y, axis, which)`: the part of g that came from x (0) or y (1) of a `concatena`.
    RetroPars = "retro_pars", 5, Helper, Tensor, Unknown, Cases, [eval retro_pars];
    /// `a.retro_matmul(b, g)`: `·`'s VJP (∂a, ∂b) for ranks known only at run time.
    RetroMatMul = "retro_matmul", 3, Helper, Pair, Unknown, Cases, [eval retro_matmul];
    /// `a.retro_matmul_derivata(b, g, d)`: (∂a ⊙ d, ∂b), GELU's backward applied to each finished strip of ∂a.
    RetroMatMulDerivata = "retro_matmul_derivata", 4, Epilogue { of: Op::RetroMatMul, consumer: Op::RetroGeluDerivata }, Pair, Unknown, Cases, [eval retro_matmul];
    /// `a.retro_matmul_adde(b, g, r)`: (r + ∂a, ∂b), r added to each finished strip of ∂a.
    RetroMatMulAdde = "retro_matmul_adde", 4, Epilogue { of: Op::RetroMatMul, consumer: Op::Addita }, Pair, Unknown, Cases, [eval retro_matmul];
    /// `g.retro_attentio_pondera(p, q, k, H)`: `attentio_pondera`'s VJP (∂q, ∂k).
    RetroAttentioPondera = "retro_attentio_pondera", 5, Helper, Pair, Unknown, Cases, [attention_weights_backward(T 0, T 1, T 2, T 3, Heads 4)];
    /// `g.retro_attentio_applica(p, v)`: `attentio_applica`'s VJP (∂p, ∂v).
    RetroAttentioApplica = "retro_attentio_applica", 3, Helper, Pair, Unknown, Cases, [attention_apply_backward(T 0, T 1, T 2)];
    /// `g.retro_attentio(p, q, k, v, H)`: `attentio`'s VJP (∂q, ∂k, ∂v), the weights' cotangent never stored.
    RetroAttentio = "retro_attentio", 6, Helper, Triple, Unknown, Cases, [attention_backward(T 0, T 1, T 2, T 3, T 4, Heads 5)];
    // ---- products with an operand read transposed (last two axes, ranks ≥ 2) ----
    /// `a.matmul_nt(b)`: a · bᵀ without a transposed copy.
    MatMulNT = "matmul_nt", 2, Fused("`a · b.transpone_ultimas()`"), Tensor, MatMulNt, Cases, [eval matmul_t];
    /// `a.matmul_tn(b)`: aᵀ · b without a transposed copy.
    MatMulTN = "matmul_tn", 2, Fused("`a.transpone_ultimas() · b`"), Tensor, MatMulTn, Cases, [eval matmul_t];
    // ---- optimizer ----
    /// `p.adamw_passus(g, m, v, c)`: one AdamW update of a leaf, the triple (p′, m′, v′).
    AdamwPassus = "adamw_passus", 5, Fused("AdamW's update in gradus' order of `scala`, `addita`, `⊙`, `sqrt`, `divide`"), Triple, Unknown, Cases, [eval adamw_passus];
    // ---- Llama-style building blocks ----
    /// `x.rms_norm(axis, ε, γ)`: RMS normalisation over the last axis, x / √(mean(x²) + ε) ⊙ γ.
    RmsNorm = "rms_norm", 4, Primal, Tensor, Same, Args(&[Rows(Any), LastAxis, Num(Pos), Row(Any)]), [rms_norm(T 0, Axis 1, Num 2, T 3)];
    /// `g.retro_rms_norm(x, ε, γ)`: `rms_norm`'s VJP, the pair (∂x, ∂γ).
    RetroRmsNorm = "retro_rms_norm", 4, Helper, Pair, Unknown, Cases, [rms_norm_backward(T 0, T 1, Num 2, T 3)];
    /// `x.silu()`: SiLU (swish), x / (1 + e^{−x}).
    Silu = "silu", 1, Primal, Tensor, Same, Args(&[T(Any)]), [silu(T 0)];
    /// `g.retro_silu(x)`: SiLU's VJP, g ⊙ σ(x)·(1 + x·(1 − σ(x))).
    RetroSilu = "retro_silu", 2, Helper, Tensor, Unknown, Cases, [silu_backward(T 0, T 1)];
        }
    };
}
pub(crate) use op_table;

op_table!(ops);

impl Op {
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
    Ok(match op.shape_rule() {
        ShapeRule::Given => shape_arg.and_then(known),
        ShapeRule::Reshape => {
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
        ShapeRule::Transpose => match s0 {
            Some(d) if d.len() == 2 => Some(vec![d[1], d[0]]),
            Some(d) => {
                return Err(format!(
                    "`transpone` needs a rank-2 tensor, found rank {}",
                    d.len()
                ))
            }
            None => None,
        },
        ShapeRule::Broadcast => broadcast(&s0, &s1)?,
        ShapeRule::Bias => match (&s0, &s1) {
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
        ShapeRule::MatMul => match (&s0, &s1) {
            (Some(a), Some(b)) => matmul_shape(a, b)?,
            _ => None,
        },
        rule @ (ShapeRule::MatMulNt | ShapeRule::MatMulTn) => {
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
            let (a, b) = if rule == ShapeRule::MatMulTn {
                (swap(&s0)?, s1.clone())
            } else {
                (s0.clone(), swap(&s1)?)
            };
            match (&a, &b) {
                (Some(a), Some(b)) => matmul_shape(a, b)?,
                _ => None,
            }
        }
        ShapeRule::Same => s0,
        ShapeRule::Scalar => Some(vec![]),
        ShapeRule::Unknown => None,
    })
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
    fn probes_name_every_operand() {
        for &op in Op::ALL {
            if let Probe::Args(args) = op.probe() {
                assert_eq!(args.len(), op.arity(), "`{}`", op.name());
                assert!(
                    matches!(args.first(), Some(Arg::T(_) | Arg::Rows(_))),
                    "`{}`: a probe starts with its tensor receiver",
                    op.name()
                );
            }
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
