//! The abstract syntax tree. Every node carries the byte span of the source it came
//! from. The tree is plain data: resolution and checking read it, nothing mutates it.

use crate::source::{FileId, Span};

/// A name as written, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A text literal's decoded contents, with its span.
#[derive(Clone, Debug, PartialEq)]
pub struct StrLit {
    pub value: String,
    pub span: Span,
}

/// One parsed source file.
#[derive(Clone, Debug, PartialEq)]
pub struct Module {
    pub file: FileId,
    /// The raw TOML between the `+++` lines, when the file has frontmatter.
    pub frontmatter: Option<String>,
    /// The reader locale the file is written in (src/syntax/vocab.rs).
    pub locale: super::locale::Locale,
    pub items: Vec<Item>,
}

// ---------------------------------------------------------------- annotations

/// `@ name arg…` or `@ name { key = value, … }`, attached to the next declaration.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: Ident,
    pub args: Vec<AnnotArg>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AnnotArg {
    Word(String),
    Text(String),
    Int(i64),
    Float(f64),
    /// `key = value` inside the block form.
    Pair(String, Box<AnnotArg>),
}

// ---------------------------------------------------------------- items

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub annotations: Vec<Annotation>,
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ItemKind {
    Import(Import),
    Func(Func),
    Genus(Genus),
    Alias(Alias),
    Fixum(TopFixum),
    Entry(Entry),
    Suite(Suite),
    Case(Case),
    /// A top-level statement that is not a declaration (a `check` error later).
    Stmt(Stmt),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Visibility {
    Privata,
    Publica,
}

/// `importa ex "lib:stem" privata name ut alias`
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub path: StrLit,
    pub visibility: Option<Visibility>,
    pub name: Option<Ident>,
    pub alias: Option<Ident>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Generic {
    pub magnitudo: bool,
    pub name: Ident,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub ty: Type,
    pub name: Ident,
    /// `sponte` (a function parameter the caller may omit), with its `vel` default.
    pub sponte: Option<Sponte>,
    pub span: Span,
}

/// `T x sponte` or `T x sponte vel e`: the marker's span runs to the default's end.
#[derive(Clone, Debug, PartialEq)]
pub struct Sponte {
    pub default: Option<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: Ident,
    pub generics: Vec<Generic>,
    pub params: Vec<Param>,
    /// `functio f() argumenta args`: the name bound to the command's parsed command line
    /// (a command of a CLI program, docs/language.md § "Commands").
    pub args: Option<Ident>,
    pub ret: Option<Type>,
    pub throws: Option<Type>,
    pub body: Block,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Genus {
    pub name: Ident,
    /// `genus Capsa<T>`: type parameters, erased like a function's.
    pub generics: Vec<Generic>,
    pub members: Vec<GenusMember>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum GenusMember {
    Field {
        annotations: Vec<Annotation>,
        ty: Type,
        name: Ident,
        /// `T f sponte`: a record literal may omit the field (it is then `nihil`).
        sponte: bool,
        default: Option<Expr>,
        span: Span,
    },
    Method {
        annotations: Vec<Annotation>,
        func: Func,
    },
}

/// `typus Name = Type`
#[derive(Clone, Debug, PartialEq)]
pub struct Alias {
    pub name: Ident,
    pub ty: Type,
}

/// A top-level `fixum Type name ← value`.
#[derive(Clone, Debug, PartialEq)]
pub struct TopFixum {
    pub ty: Type,
    pub name: Ident,
    pub value: Expr,
}

/// `incipit (argumenta name)? (exitus code)? { … }`
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// `argumenta name`: the name bound to the parsed command line.
    pub args: Option<Ident>,
    pub exit: Option<Expr>,
    pub body: Block,
}

/// A test modifier such as `tag "x"`, `solum`, `repete 3`.
#[derive(Clone, Debug, PartialEq)]
pub struct Modifier {
    pub name: Ident,
    pub arg: Option<Literal>,
    pub span: Span,
}

/// `probandum "name" mods { suites and cases }`
#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    pub name: StrLit,
    pub modifiers: Vec<Modifier>,
    pub items: Vec<Item>,
    /// `praepara` / `postpara` blocks, in source order.
    pub hooks: Vec<Hook>,
}

/// `praepara [omnia] { … }` (before) or `postpara [omnia] { … }` (after) in a suite.
/// `all` is the word after the keyword (`omnia`, in the file's locale), checked by
/// the lowering.
#[derive(Clone, Debug, PartialEq)]
pub struct Hook {
    pub before: bool,
    pub all: Option<Ident>,
    pub body: Block,
    pub span: Span,
}

/// One entry of a suite's body, as the parser reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum SuiteEntry {
    Item(Box<Item>),
    Hook(Hook),
}

/// `proba "name" mods { … }`
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub name: StrLit,
    pub modifiers: Vec<Modifier>,
    pub body: Block,
}

// ---------------------------------------------------------------- types

#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    pub kind: TypeKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// `_`: infer / any.
    Hole,
    /// `nihil`
    Nihil,
    /// `numerus`, `lista<f32>`, `alias.Genus`, `tensor<f32, [2, 3]>`
    Path {
        path: Vec<Ident>,
        args: Vec<TypeArg>,
    },
    /// `tf32[2, 3]`: a path followed by a shape.
    Shaped { path: Vec<Ident>, dims: Vec<Dim> },
    /// `iuncta<A, B>`
    Tuple(Vec<TypeArg>),
    /// `(A, B) → R ⇥ E`
    Func {
        params: Vec<Type>,
        ret: Box<Type>,
        throws: Option<Box<Type>>,
    },
    /// `A ∪ B ∪ …` (two or more members)
    Union(Vec<Type>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum TypeArg {
    Type(Type),
    Nat(u64, Span),
    Shape(Vec<Dim>, Span),
}

/// One entry of a tensor shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Dim {
    Hole(Span),
    Nat(u64, Span),
    Name(Ident),
    Nested(Vec<Dim>, Span),
}

// ---------------------------------------------------------------- statements

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindKind {
    Fixum,
    Varia,
    Sit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IterKind {
    /// `itera ex`: elements / map values
    Ex,
    /// `itera de`: indices / map keys
    De,
    /// `itera ab`: a counted range
    Ab,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutKind {
    Nota,
    Scribe,
    Vide,
    Mone,
}

#[derive(Clone, Debug, PartialEq)]
pub struct CondArm {
    pub cond: Expr,
    pub body: Block,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    Block(Block),
    /// `fixum T x ← e`, `varia T x`, `sit x ← e`; `name` is `None` for `_`.
    Decl {
        kind: BindKind,
        ty: Option<Type>,
        name: Option<Ident>,
        value: Option<Expr>,
    },
    /// `fixum [a, _, b] ← e`
    Destructure {
        kind: BindKind,
        names: Vec<Option<Ident>>,
        value: Expr,
    },
    If {
        arms: Vec<CondArm>,
        otherwise: Option<Block>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    Iterate {
        kind: IterKind,
        source: Expr,
        binding: BindKind,
        var: Ident,
        body: Block,
    },
    Elige {
        subject: Expr,
        cases: Vec<CondArm>,
        otherwise: Option<Block>,
    },
    Fac {
        body: Block,
        catch: Option<(Ident, Block)>,
    },
    /// `fac { … } (cape e { … })? dum c`: runs the body, then again while `c` holds.
    DoWhile {
        body: Block,
        catch: Option<(Ident, Block)>,
        cond: Expr,
    },
    Adfirma {
        cond: Expr,
        message: Option<Expr>,
    },
    Expr(Expr),
    Assign {
        target: Expr,
        value: Expr,
    },
    Redde(Option<Expr>),
    Tacet,
    Rumpe,
    Perge,
    Iace(Expr),
    Mori(Expr),
    Out {
        kind: OutKind,
        args: Vec<Expr>,
    },
    /// Placeholder left by error recovery; a diagnostic was reported.
    Error,
}

// ---------------------------------------------------------------- expressions

#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Int(i64),
    Float(f64),
    Text(String),
    Ascii(String),
    Bytes(Vec<u8>),
    Bool(bool),
    Nihil,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `¬`
    BitNot,
    /// `non`
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Aut,
    Et,
    Eq,
    Ne,
    NumEq,
    NumNe,
    Lt,
    Gt,
    Le,
    Ge,
    BitOr,
    BitXor,
    BitAnd,
    Shl,
    Shr,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    /// `·`
    Dot,
    /// `⊙`
    Hadamard,
    /// `vel`
    Vel,
}

impl BinOp {
    pub fn glyph(self) -> &'static str {
        match self {
            BinOp::Aut => "aut",
            BinOp::Et => "et",
            BinOp::Eq => "≡",
            BinOp::Ne => "≠",
            BinOp::NumEq => "≈",
            BinOp::NumNe => "≉",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "≤",
            BinOp::Ge => "≥",
            BinOp::BitOr => "∨",
            BinOp::BitXor => "⊻",
            BinOp::BitAnd => "∧",
            BinOp::Shl => "⇐",
            BinOp::Shr => "⇒",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Dot => "·",
            BinOp::Hadamard => "⊙",
            BinOp::Vel => "vel",
        }
    }
}

/// What `est` tests against.
#[derive(Clone, Debug, PartialEq)]
pub enum IsTarget {
    Verum,
    Falsum,
    Type(Type),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    Lit(Literal),
    /// `cond sic then secus otherwise`: one of two values.
    Ternary {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    Name(Ident),
    Ego,
    Unary {
        op: UnOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `e est T` / `e non est T`
    Is {
        expr: Box<Expr>,
        negated: bool,
        target: IsTarget,
    },
    /// `a ‥ b per s` (`inclusive` for `…` and `usque`)
    Range {
        start: Box<Expr>,
        end: Box<Expr>,
        inclusive: bool,
        step: Option<Box<Expr>>,
    },
    /// `e ↦ T` with an optional `⇥ default`
    Convert {
        expr: Box<Expr>,
        ty: Type,
        fallback: Option<Box<Expr>>,
    },
    /// `e ↦ a ‥ b` with an optional `⇥ default`: `e` clamped into the range `a ‥ b`
    /// (`range` is an [`ExprKind::Range`] without a step; docs/language.md § 6).
    Clamp {
        expr: Box<Expr>,
        range: Box<Expr>,
        fallback: Option<Box<Expr>>,
    },
    /// `e ∷ T`
    Ascribe {
        expr: Box<Expr>,
        ty: Type,
    },
    Call {
        callee: Box<Expr>,
        type_args: Vec<TypeArg>,
        args: Vec<Expr>,
    },
    /// `"a § b"(x, y)`: a text literal applied to arguments.
    Template {
        text: String,
        args: Vec<Expr>,
    },
    Field {
        expr: Box<Expr>,
        name: Ident,
    },
    Index {
        expr: Box<Expr>,
        index: Box<Expr>,
    },
    List(Vec<Expr>),
    Map(Vec<(StrLit, Expr)>),
    Record {
        path: Vec<Ident>,
        fields: Vec<(Ident, Expr)>,
    },
    /// `iuncta<A, B>[a, b]`
    Tuple {
        types: Vec<TypeArg>,
        elems: Vec<Expr>,
    },
    /// `(T a, U b) → R ∴ body`
    Closure {
        params: Vec<Param>,
        ret: Option<Type>,
        body: Box<Expr>,
    },
    /// `ad 'route' (arg)`
    Ad {
        route: StrLit,
        arg: Option<Box<Expr>>,
    },
    /// `e!` in `e!.name`, `e![i]`, `e!(args)`: `e`, which must not be `nihil`.
    NonNull(Box<Expr>),
    /// Placeholder left by error recovery.
    Error,
}
