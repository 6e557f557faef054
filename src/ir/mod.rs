//! Radix IR: the program after resolution and lowering.
//!
//! - A [`Program`] holds every function of every loaded module, addressed by
//!   [`FuncId`]; module constants live in global slots ([`GlobalId`]).
//! - A [`Function`] has typed parameters and locals addressed by **slot index**
//!   ([`Slot`]); parameters occupy slots `0..params`. No name is looked up at run time.
//! - Bodies are structured ([`Block`], `If`, `Loop`, `ForRange`, `ForEach`, `Try`) and
//!   in A-normal form: every computation is one [`Stmt::Let`] whose right-hand side
//!   ([`Rhs`]) reads only [`Operand`]s (slots or constants). Short-circuit operators
//!   (`et`, `aut`, `vel`) are lowered to `If`s, so an `Rhs` never skips an operand.
//! - Operators and built-in methods are enums ([`Prim`], [`Method`]), never strings.
//!
//! `print.rs` renders a program as stable text (`faber ir`); `verify.rs` checks
//! slot invariants after each pass.

pub mod cli_spec;
pub mod conversion;
pub mod host;
pub mod lower;
pub mod operators;
pub mod ops;
pub mod print;
pub mod verify;
pub mod visit;

use crate::source::Span;
pub use operators::{BinOp, OutKind, UnOp};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FuncId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GlobalId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GenusId(pub u32);

/// Static types, as far as `check` knows them. `Any` is "not known statically";
/// the evaluator checks at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum Ty {
    Any,
    Int,
    Float,
    Bool,
    Text,
    Bytes,
    Nihil,
    Vacuum,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    Tuple(Vec<Ty>),
    Record(GenusId),
    Func(Vec<Ty>, Box<Ty>),
    /// Element type is always computed as f64; `shape` is `None` for `_`, and a
    /// dimension is `None` where it is a name or `_`. `int`: the declared element
    /// type is an integer one (`tensor<numerus, …>`, `ti64`, …), so reductions that
    /// keep the element type (`summa`, `planata`) give `numerus` values (static
    /// knowledge only: it never makes two tensor types incompatible).
    Tensor {
        shape: Option<Vec<Option<u64>>>,
        int: bool,
        /// The declared element type is f64 (`tf64`, `tensor<f64, …>`,
        /// `tensor<fractus, …>`): the tensors it makes (`vacua`, `↦` from a list) are
        /// F64 under every precision, so `--precision f32` keeps them wide
        /// (docs/precision.md). Like `int`, static knowledge that never makes two
        /// tensor types incompatible; an op's result does not carry it (its element
        /// type is its operands').
        wide: bool,
    },
    Union(Vec<Ty>),
    /// `json` / `valor`: one dynamic JSON value (src/eval/json/). `doc`: declared
    /// `json` (a JSON document) rather than `valor`; the two hold the same values and
    /// are interchangeable, except that the conversion matrix gives them different
    /// rows and columns (src/ir/conversion.rs). Like `Tensor::wide`, static
    /// knowledge that never makes two types incompatible.
    Json {
        doc: bool,
    },
    /// `copia<T>`: a set of `numerus`, `textus` or `bivalens` values (src/eval/set.rs).
    Set(Box<Ty>),
    /// `intervallum<numerus>`: an integer range as a value (src/eval/interval.rs).
    Interval,
}

/// A compile-time constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Const {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
    Bytes(Vec<u8>),
    Nihil,
    Vacuum,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Slot(Slot),
    Global(GlobalId),
    Const(Const),
}

/// A place that can be assigned through: a slot or global followed by a path of
/// field and index steps (`p.x[i] ← v`).
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub root: PlaceRoot,
    pub path: Vec<PlaceStep>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlaceRoot {
    Slot(Slot),
    Global(GlobalId),
}

#[derive(Clone, Debug, PartialEq)]
pub enum PlaceStep {
    /// Field by position in its genus.
    Field(u32),
    /// List index, map key or tensor coordinate list.
    Index(Operand),
}

/// Built-in value operations with fixed arity (arithmetic, comparison, …).
/// Tensor operations join this enum as they are implemented.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prim {
    Unary(UnOp),
    /// Any strict binary operator (`et`, `aut`, `vel` never appear here).
    Binary(BinOp),
}

/// Built-in methods of lists, texts, maps, numbers and bytes (docs/language.md § 7),
/// resolved from their Latin spelling at lowering time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    Longitudo,
    Appende,
    Accipe,
    Primus,
    Ultimus,
    Detrahe,
    Sectio,
    Vacua,
    Nonvacua,
    Inverte,
    Continet,
    Initium,
    Finis,
    Minuscula,
    /// `textus.recide()`: the text without leading and trailing white space.
    Recide,
    /// `textus.divide(sep)`: the pieces of the text between occurrences of `sep` (the
    /// vocabulary's `divide`, English `split`). Chosen by the lowering on a receiver
    /// whose static type is `textus` only: faber's own `divide` is the elementwise
    /// division (`divisa`), so the name maps to no method.
    Divide,
    Habet,
    Pone,
    Dele,
    Claves,
    Absolutum,
    Maximus,
    Minimus,
    Pavimentum,
    Potentia,
    Approximata,
    /// Scalar functions of a number (libm): `x.radix()` √x, `x.exponens()` eˣ,
    /// `x.logarithmus()` ln x, `x.sinus()`, `x.cosinus()`.
    Radix,
    Exponens,
    Logarithmus,
    Sinus,
    Cosinus,
    /// `t.ponde(coordinates, v)`: writes one tensor element.
    Ponde,
    /// `s[a ‥ b per k]` on a text (arguments `a, b, k`; `inclusive` for `…`/`usque`),
    /// made by lowering only (no method spelling): src/eval/slice.rs.
    TextSlice {
        inclusive: bool,
    },
    /// `copia.adde(x)`: inserts one element (changes the set).
    Adde,
    /// `lista.ordina()`: sorts the list in place, ascending (numbers by value, texts
    /// by code points): src/eval/sort.rs.
    Ordina,
    /// `intervallum.inter(r)` / `intervallum.union(r)`: intersection / union of two
    /// ranges, `nihil` when it is not a range.
    Inter,
    Unio,
    /// `a ‥ b` / `a … b` where an `intervallum` is expected: the range value (receiver
    /// `a`, argument `b`), made by lowering only (no method spelling).
    Interval {
        inclusive: bool,
    },
    /// `x ↦ a ‥ b`: the number or range `x` (argument) clamped into the range
    /// (receiver), made by lowering only (no method spelling): src/eval/interval.rs.
    Clamp,
}

impl Method {
    /// Every built-in method (for "did you mean" hints).
    pub const ALL: &'static [Method] = &[
        Method::Longitudo,
        Method::Appende,
        Method::Accipe,
        Method::Primus,
        Method::Ultimus,
        Method::Detrahe,
        Method::Sectio,
        Method::Vacua,
        Method::Nonvacua,
        Method::Inverte,
        Method::Continet,
        Method::Initium,
        Method::Finis,
        Method::Minuscula,
        Method::Recide,
        Method::Habet,
        Method::Pone,
        Method::Dele,
        Method::Claves,
        Method::Absolutum,
        Method::Maximus,
        Method::Minimus,
        Method::Pavimentum,
        Method::Potentia,
        Method::Approximata,
        Method::Radix,
        Method::Exponens,
        Method::Logarithmus,
        Method::Sinus,
        Method::Cosinus,
        Method::Ponde,
        Method::Adde,
        Method::Ordina,
        Method::Inter,
        Method::Unio,
    ];

    pub fn from_name(name: &str) -> Option<Method> {
        Some(match name {
            "longitudo" => Method::Longitudo,
            "appende" => Method::Appende,
            "accipe" => Method::Accipe,
            "primus" => Method::Primus,
            "ultimus" => Method::Ultimus,
            "detrahe" => Method::Detrahe,
            "sectio" => Method::Sectio,
            "vacua" => Method::Vacua,
            "nonvacua" => Method::Nonvacua,
            "inverte" => Method::Inverte,
            "continet" => Method::Continet,
            "initium" => Method::Initium,
            "finis" => Method::Finis,
            "minuscula" => Method::Minuscula,
            "recide" => Method::Recide,
            "habet" => Method::Habet,
            "pone" => Method::Pone,
            "dele" => Method::Dele,
            "claves" => Method::Claves,
            "absolutum" => Method::Absolutum,
            "maximus" => Method::Maximus,
            "minimus" => Method::Minimus,
            "pavimentum" => Method::Pavimentum,
            "potentia" => Method::Potentia,
            "approximata" => Method::Approximata,
            "radix" => Method::Radix,
            "exponens" => Method::Exponens,
            "logarithmus" => Method::Logarithmus,
            "sinus" => Method::Sinus,
            "cosinus" => Method::Cosinus,
            "ponde" => Method::Ponde,
            "adde" => Method::Adde,
            "ordina" => Method::Ordina,
            "inter" => Method::Inter,
            "union" => Method::Unio,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Longitudo => "longitudo",
            Method::Appende => "appende",
            Method::Accipe => "accipe",
            Method::Primus => "primus",
            Method::Ultimus => "ultimus",
            Method::Detrahe => "detrahe",
            Method::Sectio => "sectio",
            Method::Vacua => "vacua",
            Method::Nonvacua => "nonvacua",
            Method::Inverte => "inverte",
            Method::Continet => "continet",
            Method::Initium => "initium",
            Method::Finis => "finis",
            Method::Minuscula => "minuscula",
            Method::Recide => "recide",
            Method::Divide => "divide",
            Method::Habet => "habet",
            Method::Pone => "pone",
            Method::Dele => "dele",
            Method::Claves => "claves",
            Method::Absolutum => "absolutum",
            Method::Maximus => "maximus",
            Method::Minimus => "minimus",
            Method::Pavimentum => "pavimentum",
            Method::Potentia => "potentia",
            Method::Approximata => "approximata",
            Method::Radix => "radix",
            Method::Exponens => "exponens",
            Method::Logarithmus => "logarithmus",
            Method::Sinus => "sinus",
            Method::Cosinus => "cosinus",
            Method::Ponde => "ponde",
            Method::TextSlice { inclusive: false } => "[‥]",
            Method::TextSlice { inclusive: true } => "[…]",
            Method::Adde => "adde",
            Method::Ordina => "ordina",
            Method::Inter => "inter",
            Method::Unio => "union",
            Method::Interval { inclusive: false } => "‥",
            Method::Interval { inclusive: true } => "…",
            Method::Clamp => "↦‥",
        }
    }

    /// Methods that change their receiver in place (value semantics: the receiver
    /// place is written back).
    pub fn mutates(self) -> bool {
        matches!(
            self,
            Method::Appende
                | Method::Detrahe
                | Method::Pone
                | Method::Dele
                | Method::Ponde
                | Method::Adde
                | Method::Ordina
        )
    }
}

/// The right-hand side of a `Let`: one computation over operands.
#[derive(Clone, Debug, PartialEq)]
pub enum Rhs {
    Use(Operand),
    Prim(Prim, Vec<Operand>),
    /// Direct call of a known function.
    Call(FuncId, Vec<Operand>),
    /// Call of a function value (closure or function reference) held in an operand.
    CallValue(Operand, Vec<Operand>),
    /// A function value: `FuncId` plus captured operands (closure environment),
    /// which the callee receives as its first parameters.
    Closure(FuncId, Vec<Operand>),
    /// A built-in method on a receiver. Mutating methods take the receiver as a
    /// [`Place`] through [`Stmt::MethodInPlace`] instead.
    Method(Method, Operand, Vec<Operand>),
    List(Vec<Operand>),
    Map(Vec<(String, Operand)>),
    Tuple(Vec<Operand>),
    /// A record: one operand per field, in declaration order (defaults filled in).
    Record(GenusId, Vec<Operand>),
    Field(Operand, u32),
    Index(Operand, Operand),
    /// `e ↦ T`: fails (throws) when the conversion is impossible.
    Convert(Operand, Ty),
    /// Declared-type coercion (docs/language.md § 3): an Int becomes a Float where the
    /// declared type is a float type (`Ty::Float`), also element-wise for
    /// `Ty::List(Float)`; any other value passes through unchanged. Never fails.
    Coerce(Operand, Ty),
    /// `e est T` (negated when the bool is true).
    Is(Operand, IsTest, bool),
    /// `"a § b"(x, y)`: pieces of literal text interleaved with argument indices.
    Template(Vec<TemplatePiece>, Vec<Operand>),
    /// A tensor operation (`src/ir/ops.rs`); operand 0 is the receiver.
    Op(ops::Op, Vec<Operand>),
    /// A host function (`hospes.name(…)`, `src/ir/host.rs`).
    Host(host::Host, Vec<Operand>),
    /// A range value `a ‥ b per s` used outside `itera ab` (a list of ints).
    Range {
        start: Operand,
        end: Operand,
        step: Operand,
        inclusive: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum TemplatePiece {
    Text(String),
    Arg(u32),
}

#[derive(Clone, Debug, PartialEq)]
pub enum IsTest {
    Nihil,
    Verum,
    Falsum,
    Type(Ty),
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Block {
    pub stmts: Vec<Stmt>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EachKind {
    /// list elements / map values
    Values,
    /// list indices / map keys
    Keys,
}

/// A fatal error raised by the program itself (never caught by `fac … cape`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FatalKind {
    Mori,
    Adfirma,
    /// `e!.f`, `e![i]`, `e!(…)` on a `nihil` value.
    NonNull,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `dst ← rhs`; `span` is the source expression (for runtime errors).
    Let {
        dst: Slot,
        rhs: Rhs,
        span: Span,
    },
    /// `global ← operand` (module constant initialisation).
    SetGlobal {
        dst: GlobalId,
        value: Operand,
    },
    /// Assignment through a place with a non-empty path.
    Store {
        place: Place,
        value: Operand,
        span: Span,
    },
    /// A mutating method on a place, optionally keeping its result.
    MethodInPlace {
        dst: Option<Slot>,
        method: Method,
        place: Place,
        args: Vec<Operand>,
        span: Span,
    },
    /// A genus method called on a place: the receiver is the callee's slot 0 (`ego`);
    /// when the callee returns, its final slot 0 is written back to the place, so
    /// `ego.f ← v` inside the method updates the caller's variable.
    CallInPlace {
        dst: Option<Slot>,
        func: FuncId,
        place: Place,
        args: Vec<Operand>,
        span: Span,
    },
    If {
        cond: Operand,
        then: Block,
        otherwise: Block,
    },
    /// A chain of conditions with two or more arms (`si … sin …`, `elige … casu …`),
    /// kept flat so that no pass recurses once per arm: arm by arm, run `test`, then
    /// take `then` and leave if `cond` holds; when no arm is taken, run `otherwise`.
    /// It means exactly `test₀; If(cond₀, then₀, {test₁; If(cond₁, then₁, {… otherwise})})`
    /// and is printed and compiled that way (docs/robustness.md, "Compile time of long
    /// chains"). The lowerer emits the first arm's test before the chain (its `test`
    /// is empty), as it would for a single `If`.
    Cond {
        arms: Vec<CondArm>,
        otherwise: Block,
    },
    /// Runs until `Break` or `Return`; `dum` lowers to a loop with a test at the top.
    Loop {
        body: Block,
        span: Span,
    },
    /// `itera ab`: bounds and step evaluated once; `var` is fresh each pass.
    ForRange {
        var: Slot,
        start: Operand,
        end: Operand,
        step: Operand,
        inclusive: bool,
        body: Block,
        span: Span,
    },
    /// `itera ex` / `itera de` over a list, map or text.
    ForEach {
        var: Slot,
        kind: EachKind,
        source: Operand,
        body: Block,
        span: Span,
    },
    Break,
    Continue,
    Return(Option<Operand>),
    /// `iace e`: unwinds to the nearest `Try`.
    Throw {
        value: Operand,
        span: Span,
    },
    /// `fac { body } cape e { handler }`: a thrown value lands in `catch_slot`.
    Try {
        body: Block,
        catch_slot: Option<Slot>,
        handler: Block,
    },
    Fatal {
        kind: FatalKind,
        message: Operand,
        span: Span,
    },
    /// `adfirma cond secus message`; `source` is the condition's text for reports.
    Assert {
        cond: Operand,
        message: Option<Operand>,
        source: String,
        span: Span,
    },
    Out {
        kind: OutKind,
        args: Vec<Operand>,
        span: Span,
    },
}

/// One arm of a [`Stmt::Cond`]: `test` computes `cond`, which chooses `then`.
#[derive(Clone, Debug, PartialEq)]
pub struct CondArm {
    pub test: Block,
    pub cond: Operand,
    pub then: Block,
}

/// The first arm of a chain, as the `If` whose `otherwise` holds the rest: the rest's
/// first test, then an `If` (one arm left) or a `Cond`. `arms` is not empty. Passes
/// that handle one `If` at a time (autodiff's inlining) see the same statements as
/// from the nested form, one level deep.
pub fn peel_cond(arms: &[CondArm], otherwise: &Block) -> Peeled {
    let (first, rest) = arms.split_first().expect("a chain has arms");
    let other = match rest {
        [] => otherwise.clone(),
        [only] => {
            let mut stmts = only.test.stmts.clone();
            stmts.push(Stmt::If {
                cond: only.cond.clone(),
                then: only.then.clone(),
                otherwise: otherwise.clone(),
            });
            Block { stmts }
        }
        [next, ..] => {
            let mut stmts = next.test.stmts.clone();
            let mut arms = rest.to_vec();
            arms[0].test = Block::default();
            stmts.push(Stmt::Cond {
                arms,
                otherwise: otherwise.clone(),
            });
            Block { stmts }
        }
    };
    Peeled {
        test: first.test.stmts.clone(),
        cond: first.cond.clone(),
        then: first.then.clone(),
        otherwise: other,
    }
}

/// A chain's first arm, from [`peel_cond`]: `test; If(cond, then, otherwise)`.
pub struct Peeled {
    pub test: Vec<Stmt>,
    pub cond: Operand,
    pub then: Block,
    pub otherwise: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SlotInfo {
    pub name: String,
    pub ty: Ty,
    /// Declared `f32` or `f16` (a local, a parameter): under `--precision f32` every
    /// value stored in the slot is rounded once to f32 (`eval/narrow.rs`,
    /// docs/precision.md). Not printed by `faber ir`.
    pub narrow: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Qualified for display: `module::name`, `Genus.method`, `module::<closure#3>`.
    pub name: String,
    /// Number of parameters; they occupy slots `0..params` (captures first for closures).
    pub params: u32,
    pub slots: Vec<SlotInfo>,
    pub ret: Ty,
    /// The declared result type is `f32` or `f16`: under `--precision f32` the result
    /// is rounded once to f32 at each return (`eval/narrow.rs`).
    pub narrow_ret: bool,
    /// True when the function declares `⇥ E` (may throw to its caller).
    pub throws: bool,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    /// Declared `f32` or `f16`: under `--precision f32` every value stored in the
    /// field (record construction, a field store) is rounded once to f32
    /// (`eval/narrow.rs`, docs/precision.md). Not printed by `faber ir`.
    pub narrow: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Genus {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Global {
    pub name: String,
    pub ty: Ty,
}

/// A test case (`proba`) with its suite path and modifiers.
#[derive(Clone, Debug, PartialEq)]
pub struct TestCase {
    pub file: String,
    pub suites: Vec<String>,
    pub name: String,
    pub tags: Vec<String>,
    pub skip: Option<String>,
    pub only: bool,
    pub repeat: u32,
    pub func: FuncId,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub functions: Vec<Function>,
    pub genera: Vec<Genus>,
    pub globals: Vec<Global>,
    /// Module initialisers in load order (dependencies first): each sets its globals.
    pub inits: Vec<FuncId>,
    /// The entry file's `incipit`, as a function of no parameters returning the exit code.
    pub entry: Option<FuncId>,
    pub tests: Vec<TestCase>,
    /// `@ radix backward "G"` requests: the autodiff pass fills each companion's body.
    pub backward: Vec<Backward>,
    /// Per genus, per field: the declared default when it is a literal
    /// (`textus regio = "Roma"`), which `valor ↦ Genus` puts in a field the object
    /// lacks (src/eval/json/boxing.rs). Shorter than `genera` where nothing is known.
    pub literal_defaults: Vec<Vec<Option<Const>>>,
}

/// A function `primal` annotated `@ radix backward`, and its declared companion.
#[derive(Clone, Debug, PartialEq)]
pub struct Backward {
    pub primal: FuncId,
    pub companion: FuncId,
    /// The annotation, for diagnostics.
    pub span: Span,
}

impl Program {
    pub fn func(&self, id: FuncId) -> &Function {
        &self.functions[id.0 as usize]
    }
}
