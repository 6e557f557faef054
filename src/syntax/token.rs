//! Tokens. `Raw` is what the logos-generated scanner recognises; `Tok` is what the
//! parser sees after the adapter in `lexer.rs` has decoded literals, mapped keywords,
//! folded annotation lines and applied the context rules (type-argument `<`,
//! record braces, closure parentheses, bare `redde`).

use logos::Logos;

use super::ast::Annotation;

/// The raw scanner. Whitespace is skipped here; everything else, including errors
/// and spellings we reject, becomes a token so the adapter can report it with a span.
#[derive(Logos, Clone, Copy, Debug, PartialEq, Eq)]
#[logos(skip r"[ \t\r\n]+")]
pub enum Raw {
    #[regex(r"#[^\n]*", allow_greedy = true)]
    Comment,

    /// A name or keyword: a Unicode identifier (UAX #31: XID_Start or `_`, then
    /// XID_Continue), so that every reader locale's words lex the same way. The middle
    /// dots U+00B7 and U+0387, which XID_Continue includes, are left out: `·` is the
    /// matrix product, so `a·b` stays three tokens.
    #[regex(r"[\p{XID_Start}_][\p{XID_Continue}--[\u{00B7}\u{0387}]]*")]
    Word,
    #[token("_", priority = 10)]
    Underscore,

    #[regex(r"[0-9][0-9_]*", priority = 5)]
    Int,
    #[regex(r"0x[0-9A-Fa-f_]*", priority = 6)]
    Hex,
    #[regex(r"0b[01_]*", priority = 6)]
    Bin,
    #[regex(r"0o[0-7_]*", priority = 6)]
    Oct,
    #[regex(r"[0-9][0-9_]*\.[0-9][0-9_]*([eE][+-]?[0-9]+)?", priority = 6)]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", priority = 6)]
    Float,
    /// A digit run glued to letters that form no number (`1e`, `12ab`, `0x1g`).
    #[regex(r"[0-9][0-9A-Za-z_]*", priority = 2)]
    BadNumber,

    #[regex(r#""([^"\\\n]|\\[^\n])*""#)]
    Text,
    #[regex(r#""([^"\\\n]|\\[^\n])*\\?"#)]
    UnterminatedText,
    #[regex(r"'([^'\\\n]|\\[^\n])*'")]
    Ascii,
    #[regex(r"'([^'\\\n]|\\[^\n])*\\?")]
    UnterminatedAscii,
    /// `«…»`: a block text; it may span lines (docs/language.md § 2).
    #[regex(r"«([^»\\]|\\[^\n])*»")]
    BlockText,
    #[regex(r"«([^»\\]|\\[^\n])*\\?")]
    UnterminatedBlockText,
    #[regex(r"\|[^|\n]*\|")]
    Bytes,
    #[regex(r"\|[^|\n]*")]
    UnterminatedBytes,

    // ---- glyphs ----
    #[token("←")]
    Bind,
    #[token("→")]
    Arrow,
    #[token("⇥")]
    Throws,
    #[token("↦")]
    MapsTo,
    #[token("∷")]
    Ascribe,
    #[token("∪")]
    Union,
    #[token("∴")]
    Therefore,
    #[token("≡")]
    Eq,
    #[token("≠")]
    Ne,
    #[token("≈")]
    NumEq,
    #[token("≉")]
    NumNe,
    #[token("<")]
    Lt,
    #[token(">")]
    Gt,
    #[token("≤")]
    Le,
    #[token("≥")]
    Ge,
    #[token("‥")]
    RangeExcl,
    #[token("…")]
    RangeIncl,
    #[token("·")]
    Dot,
    #[token("⊙")]
    Hadamard,
    #[token("∧")]
    BitAnd,
    #[token("∨")]
    BitOr,
    #[token("⊻")]
    BitXor,
    #[token("¬")]
    BitNot,
    #[token("⇐")]
    Shl,
    #[token("⇒")]
    Shr,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
    #[token("=")]
    Assign,
    #[token(":")]
    Colon,
    #[token(",")]
    Comma,
    #[token(".")]
    Period,
    #[token(";")]
    Semi,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("@")]
    At,
    /// `!`: only as the start of `!.`, `![`, `!(` (non-null access); alone it is LEX001.
    #[token("!")]
    Bang,

    // ---- spellings we reject with a suggestion ----
    #[token("==")]
    #[token("!=")]
    #[token("<=")]
    #[token(">=")]
    #[token("->")]
    #[token("..")]
    #[token("&&")]
    AsciiOperator,
    #[token("×")]
    #[token("⊗")]
    #[token("⊕")]
    #[token("⊖")]
    #[token("↑")]
    #[token("↓")]
    #[token("∇")]
    #[token("↤")]
    #[token("⋆")]
    #[token("≢")]
    #[token("?.")]
    #[token("`")]
    UnsupportedGlyph,
    #[regex(
        r"[\u{00A0}\u{1680}\u{2000}-\u{200A}\u{2028}\u{2029}\u{202F}\u{205F}\u{3000}\u{FEFF}]"
    )]
    UnicodeSpace,
}

/// Upstream keywords of constructs outside our subset (docs/language.md § 10). They lex as
/// identifiers; the parser and the resolver name them when they cause an error.
pub const OUT_WORDS: &[&str] = &[
    "discerne",
    "custodi",
    "cura",
    "implendum",
    "ordo",
    "discretio",
    "sub",
    "implet",
    "incipiet",
    "fiet",
    "fiunt",
    "fient",
    "argumenta",
    "requirit",
    "praeparabit",
    "postparabit",
    "sparge",
    "finge",
    "clausura",
    "aliter",
];

/// Reserved words of the subset (docs/language.md § 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kw {
    Functio,
    Genus,
    Typus,
    Importa,
    Ex,
    Privata,
    Publica,
    Ut,
    Incipit,
    Exitus,
    Fixum,
    Varia,
    Sit,
    Si,
    Sin,
    Secus,
    Sic,
    Ergo,
    Dum,
    Fac,
    Itera,
    De,
    Ab,
    Per,
    Ante,
    Usque,
    Redde,
    Tacet,
    Rumpe,
    Perge,
    Elige,
    Casu,
    Ceterum,
    Iace,
    Mori,
    Cape,
    Adfirma,
    Nota,
    Scribe,
    Vide,
    Mone,
    Probandum,
    Proba,
    /// `praepara` (English `setup`): code run before each test of a suite.
    Praepara,
    /// `postpara` (English `teardown`): code run after each test of a suite.
    Postpara,
    Et,
    Aut,
    Non,
    Est,
    Vel,
    Verum,
    Falsum,
    Nihil,
    Ego,
    Ad,
    Iuncta,
    Sponte,
}

impl Kw {
    pub fn from_word(w: &str) -> Option<Kw> {
        Some(match w {
            "functio" => Kw::Functio,
            "genus" => Kw::Genus,
            "typus" => Kw::Typus,
            "importa" => Kw::Importa,
            "ex" => Kw::Ex,
            "privata" => Kw::Privata,
            "publica" => Kw::Publica,
            "ut" => Kw::Ut,
            "incipit" => Kw::Incipit,
            "exitus" => Kw::Exitus,
            "fixum" => Kw::Fixum,
            "varia" => Kw::Varia,
            "sit" => Kw::Sit,
            "si" => Kw::Si,
            "sin" => Kw::Sin,
            "secus" => Kw::Secus,
            "sic" => Kw::Sic,
            "ergo" => Kw::Ergo,
            "dum" => Kw::Dum,
            "fac" => Kw::Fac,
            "itera" => Kw::Itera,
            "de" => Kw::De,
            "ab" => Kw::Ab,
            "per" => Kw::Per,
            "ante" => Kw::Ante,
            "usque" => Kw::Usque,
            "redde" => Kw::Redde,
            "tacet" => Kw::Tacet,
            "rumpe" => Kw::Rumpe,
            "perge" => Kw::Perge,
            "elige" => Kw::Elige,
            "casu" => Kw::Casu,
            "ceterum" => Kw::Ceterum,
            "iace" => Kw::Iace,
            "mori" => Kw::Mori,
            "cape" => Kw::Cape,
            "adfirma" => Kw::Adfirma,
            "nota" => Kw::Nota,
            "scribe" => Kw::Scribe,
            "vide" => Kw::Vide,
            "mone" => Kw::Mone,
            "probandum" => Kw::Probandum,
            "proba" => Kw::Proba,
            "praepara" => Kw::Praepara,
            "postpara" => Kw::Postpara,
            "et" => Kw::Et,
            "aut" => Kw::Aut,
            "non" => Kw::Non,
            "est" => Kw::Est,
            "vel" => Kw::Vel,
            "verum" => Kw::Verum,
            "falsum" => Kw::Falsum,
            "nihil" => Kw::Nihil,
            "ego" => Kw::Ego,
            "ad" => Kw::Ad,
            "iuncta" => Kw::Iuncta,
            "sponte" => Kw::Sponte,
            _ => return None,
        })
    }
}

/// A token as the parser sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Kw(Kw),
    /// `redde` directly followed by `}`, `;`, `sin`, `secus`, `casu`, `ceterum` or EOF.
    ReddeBare,
    /// `dum` on the line of the `}` that closes a `fac` body (or its `cape` handler):
    /// the condition of a `fac … dum` loop.
    DumPost,
    /// Zero-width, before the parameter type of a closure without parentheses
    /// (`numerus x ∴ x + 1`).
    ClosureBare,
    /// The `!` of `!.`, `![` and `!(` (non-null access).
    Bang,
    Underscore,
    Int(i64),
    Float(f64),
    Text(String),
    Ascii(String),
    Bytes(Vec<u8>),
    Annotation(Box<Annotation>),

    Bind,
    Arrow,
    Throws,
    MapsTo,
    Ascribe,
    Union,
    Therefore,
    Eq,
    Ne,
    NumEq,
    NumNe,
    Lt,
    /// `<` touching the preceding word: opens type arguments.
    LtArgs,
    Gt,
    Le,
    Ge,
    RangeExcl,
    RangeIncl,
    Dot,
    Hadamard,
    BitAnd,
    BitOr,
    BitXor,
    BitNot,
    Shl,
    Shr,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Assign,
    Colon,
    Comma,
    Period,
    Semi,
    LParen,
    /// `(` whose matching `)` is followed by `→` or `∴`: a closure or function type.
    LParenFn,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    /// `{` opening a record literal after a type name.
    LBraceRec,
    RBrace,
    /// A lexing error, already reported; lets the parser recover.
    Error,
}

impl Tok {
    /// An operator that stands between two operands (`+`, `·`, `≡`, `‥`, `et`, …).
    pub(crate) fn is_binary_operator(&self) -> bool {
        matches!(
            self,
            Tok::Plus
                | Tok::Minus
                | Tok::Star
                | Tok::Slash
                | Tok::Percent
                | Tok::Dot
                | Tok::Hadamard
                | Tok::Eq
                | Tok::Ne
                | Tok::NumEq
                | Tok::NumNe
                | Tok::Lt
                | Tok::Gt
                | Tok::Le
                | Tok::Ge
                | Tok::BitAnd
                | Tok::BitOr
                | Tok::BitXor
                | Tok::Shl
                | Tok::Shr
                | Tok::RangeExcl
                | Tok::RangeIncl
                | Tok::Kw(Kw::Et | Kw::Aut | Kw::Vel | Kw::Est)
        )
    }

    /// How the token is shown in "expected …" and "unexpected …" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("identifier `{s}`"),
            Tok::Kw(k) => format!("keyword `{}`", format!("{k:?}").to_lowercase()),
            Tok::ReddeBare => "keyword `redde`".into(),
            Tok::DumPost => "keyword `dum`".into(),
            Tok::ClosureBare => "closure".into(),
            Tok::Int(v) => format!("number `{v}`"),
            Tok::Float(v) => format!("number `{v}`"),
            Tok::Text(_) => "text literal".into(),
            Tok::Ascii(_) => "ascii literal".into(),
            Tok::Bytes(_) => "byte literal".into(),
            Tok::Annotation(_) => "annotation".into(),
            Tok::Error => "invalid token".into(),
            other => format!("`{}`", other.spelling()),
        }
    }

    pub fn spelling(&self) -> &'static str {
        match self {
            Tok::Underscore => "_",
            Tok::Bind => "←",
            Tok::Arrow => "→",
            Tok::Throws => "⇥",
            Tok::MapsTo => "↦",
            Tok::Ascribe => "∷",
            Tok::Union => "∪",
            Tok::Therefore => "∴",
            Tok::Eq => "≡",
            Tok::Ne => "≠",
            Tok::NumEq => "≈",
            Tok::NumNe => "≉",
            Tok::Lt | Tok::LtArgs => "<",
            Tok::Gt => ">",
            Tok::Le => "≤",
            Tok::Ge => "≥",
            Tok::RangeExcl => "‥",
            Tok::RangeIncl => "…",
            Tok::Dot => "·",
            Tok::Hadamard => "⊙",
            Tok::BitAnd => "∧",
            Tok::BitOr => "∨",
            Tok::BitXor => "⊻",
            Tok::BitNot => "¬",
            Tok::Shl => "⇐",
            Tok::Shr => "⇒",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Assign => "=",
            Tok::Colon => ":",
            Tok::Comma => ",",
            Tok::Period => ".",
            Tok::Semi => ";",
            Tok::LParen | Tok::LParenFn => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace | Tok::LBraceRec => "{",
            Tok::RBrace => "}",
            Tok::Bang => "!",
            _ => "?",
        }
    }
}
