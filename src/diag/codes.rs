//! The catalogue of diagnostic codes. A code never changes meaning once published;
//! retired codes stay here, marked. Families: LEX (lexing), PARSE (grammar),
//! SEM (resolution and checking), RUN (runtime), CLI (command line, packages).

/// A stable diagnostic code with a one-line summary (used by `faber explain`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Code {
    pub id: &'static str,
    pub summary: &'static str,
}

macro_rules! codes {
    ($($name:ident = $id:literal, $summary:literal;)*) => {
        $(pub const $name: Code = Code { id: $id, summary: $summary };)*
        /// Every code, in catalogue order.
        pub const ALL: &[Code] = &[$($name),*];
    };
}

codes! {
    // ---- lexing ----
    LEX_UNKNOWN_CHAR = "LEX001", "a character that starts no token";
    LEX_UNTERMINATED_TEXT = "LEX002", "a text literal without its closing quote on the same line";
    LEX_BAD_ESCAPE = "LEX003", "an unknown escape sequence in a text literal";
    LEX_TRAILING_COMMENT = "LEX004", "a `#` comment after code on the same line";
    LEX_BAD_NUMBER = "LEX005", "a malformed or out-of-range number literal";
    LEX_ASCII_OPERATOR = "LEX006", "an ASCII spelling of an operator that Faber writes as a glyph";
    LEX_UNSUPPORTED_GLYPH = "LEX007", "a glyph outside the supported subset";
    LEX_BAD_FRONTMATTER = "LEX008", "frontmatter that is not valid TOML or is not closed";
    LEX_UNSUPPORTED_LOCALE = "LEX009", "a frontmatter locale other than `la`";
    LEX_BAD_BYTES = "LEX010", "a malformed `|…|` byte literal";
    LEX_BAD_ANNOTATION = "LEX011", "a malformed annotation line";
    LEX_UNICODE_SPACE = "LEX012", "a non-ASCII space character outside a literal";
    LEX_TOO_DEEP = "LEX013", "brackets or operators nested beyond the supported depth";
    LEX_BAD_UTF8 = "LEX014", "a source file that is not valid UTF-8";
    // ---- parsing ----
    PARSE_UNEXPECTED = "PARSE001", "a token the grammar does not allow here";
    PARSE_UNEXPECTED_EOF = "PARSE002", "the file ends inside a construct";
    PARSE_EXTRA_TOKEN = "PARSE003", "input continues after a complete construct";
    PARSE_RETIRED_KEYWORD = "PARSE004", "a retired spelling (e.g. `aliter`)";
    PARSE_UNSUPPORTED = "PARSE005", "a construct outside the supported subset";
    PARSE_BAD_STATEMENT_START = "PARSE006", "a statement that starts with a token no statement may start with";
    PARSE_BAD_ASSIGN_TARGET = "PARSE007", "the left side of `←` is not a place";
    PARSE_BAD_TEMPLATE = "PARSE008", "a template call whose holes do not match its arguments";
    // ---- command line and packages ----
    CLI_IO = "CLI001", "a file or directory that cannot be read";
    CLI_MANIFEST = "CLI002", "a malformed `faber.toml`";
}

/// Looks a code up by its id (`"LEX001"`).
pub fn lookup(id: &str) -> Option<Code> {
    ALL.iter().copied().find(|c| c.id.eq_ignore_ascii_case(id))
}
