//! Surface syntax: tokens, the lexer adapter, the generated parser and the AST.
//! Everything outside this module sees only [`parse`] and the AST.

pub mod ast;
pub mod desugar;
mod dump;
pub(crate) mod hints;
pub mod lexer;
pub mod locale;
pub mod pack;
mod pack_store;
mod parser;
pub mod token;
pub mod vocab;

lalrpop_util::lalrpop_mod!(
    #[allow(
        clippy::all,
        clippy::pedantic,
        unused_parens,
        unused_imports,
        dead_code
    )]
    grammar,
    "/faber.rs"
);

pub use dump::dump_ast;
pub use parser::{parse, parse_in};
