//! `faber format`: canonical layout and translation between reader locales.
//!
//! The formatter works on the lexer's token stream and the file's comment lines, not
//! on the syntax tree: it re-emits every token with canonical indentation and spacing
//! and keeps the author's line breaks ([`layout`]), so every construct the grammar
//! accepts is kept without a printer per node, and comments (which always have a line
//! of their own, LEX004) are kept where they stand. With a target locale it first
//! respells the vocabulary ([`translate`]), a method call by what the front end
//! resolved it to where the file checks ([`Resolved`]). docs/format.md describes the
//! rules.
//!
//! A file is formatted only when it parses, and the result is checked before it is
//! returned: it must parse, and lex to the same tokens (with the translated words in
//! place of the originals); a layout without translation must also give the same
//! syntax tree. A result that fails the check is CLI005, and nothing is written.

mod builtin;
mod frontmatter;
mod layout;
mod names;
mod planner;
mod resolved;
mod spacing;
mod translate;

pub mod diff;

pub use resolved::Resolved;

use rustc_hash::FxHashSet;

use crate::diag::{codes, Diagnostic};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::Module;
use crate::syntax::lexer::{lex_in, Spanned};
use crate::syntax::token::Tok;
use crate::syntax::vocab::{vocabulary, Locale};

/// Method names of the genera a program can see: a call `x.m(…)` whose `m` is one
/// of them may be a user method, which translation must not respell (where the file
/// does not check, and no [`Resolved`] tells what the call names).
#[derive(Default, Clone)]
pub struct Members(FxHashSet<String>);

impl Members {
    pub fn new() -> Members {
        Members::default()
    }

    /// The members of every bundled library (`norma:`, `gradus:`).
    pub fn bundled() -> Members {
        let mut m = Members::new();
        let mut sources = SourceMap::new();
        for (name, text) in crate::libraries::BUNDLED {
            let file = sources.add(*name, *text);
            if let Ok(module) = crate::syntax::parse(&sources, file) {
                m.add(&module);
            }
        }
        m
    }

    /// The methods of every genus `entry` can see: its own and those of the modules it
    /// imports, directly or not, loaded through `loader`. `None` when the imports do
    /// not load (the caller then falls back to a wider set).
    pub fn of_program(
        sources: &mut SourceMap,
        entry: FileId,
        loader: &mut dyn crate::resolve::Loader,
    ) -> Option<Members> {
        let graph = crate::resolve::load_graph(sources, entry, loader).ok()?;
        let mut m = Members::new();
        for module in &graph.modules {
            m.add(&module.ast);
        }
        Some(m)
    }

    /// Adds the methods of one module's genera.
    pub fn add(&mut self, module: &Module) {
        self.0.extend(names::words(module).members);
    }
}

/// What to do with a file.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// The reader locale of a file whose frontmatter names none (the package's).
    pub default: Locale,
    /// Translate into this locale; `None` keeps the file's own.
    pub target: Option<Locale>,
    pub members: &'a Members,
    /// What the front end made of the file's method calls ([`Resolved::check`] of
    /// this very text; [`Resolved::none`] judges every call by its tokens).
    pub resolved: &'a Resolved,
}

/// Formats `file` of `sources`. A file that does not parse gives its diagnostics.
pub fn format(
    sources: &SourceMap,
    file: FileId,
    opts: &Options,
) -> Result<String, Vec<Diagnostic>> {
    let module = crate::syntax::parse_in(sources, file, opts.default)?;
    let text = sources.text(file);
    let lexed = lex_in(file, text, opts.default);
    let tokens: Vec<Spanned> = lexed.tokens.into_iter().filter(|t| t.0 < t.2).collect();
    let head = frontmatter::head(text);
    let from = module.locale;
    let (prefix, repl, to) = match opts.target {
        None => (frontmatter::kept(text, &head), Default::default(), from),
        Some(to) => {
            let words = names::words(&module);
            let cx = translate::Context {
                members: &opts.members.0,
                resolved: opts.resolved,
            };
            let plan = translate::plan(file, text, &tokens, &words, &cx, from, to);
            if !plan.errors.is_empty() {
                return Err(plan.errors);
            }
            // A file named `NAME.CODE.fab` reads CODE without frontmatter (the parser's
            // rule): the frontmatter names the target wherever the package's locale or
            // the name's differs from it.
            let named = Locale::from_file_name(sources.name(file)).unwrap_or(opts.default);
            let code = (to != opts.default || to != named).then(|| to.code());
            let prefix = if to == from && head_names_locale(&module) == code.is_some() {
                frontmatter::kept(text, &head)
            } else {
                frontmatter::with_locale(text, &head, code)
            };
            (prefix, plan.repl, to)
        }
    };
    let out = layout::layout(text, head.body_start, &prefix, &tokens, &repl);
    let translated = opts.target.is_some();
    verify(
        sources,
        file,
        &module,
        &tokens,
        &repl,
        &out,
        opts.default,
        to,
        translated,
    )?;
    Ok(out)
}

/// Whether the file's frontmatter has a `locale` line.
fn head_names_locale(module: &Module) -> bool {
    module
        .frontmatter
        .as_ref()
        .and_then(|f| f.parse::<toml::Table>().ok())
        .is_some_and(|t| t.contains_key("locale"))
}

/// The result must parse in the target locale and lex to the original tokens with
/// the replacements in place; without replacements it must give the same tree.
#[allow(clippy::too_many_arguments)]
fn verify(
    sources: &SourceMap,
    file: FileId,
    module: &Module,
    tokens: &[Spanned],
    repl: &layout::Replacements,
    out: &str,
    default: Locale,
    to: Locale,
    translated: bool,
) -> Result<(), Vec<Diagnostic>> {
    let fail = |lo: usize, hi: usize, why: &str| {
        vec![Diagnostic::error(
            codes::CLI_FORMAT_UNSAFE,
            format!("the formatted text would not read as this file does: {why}; the file is left as it is"),
            Span::new(file, lo, hi),
        )
        .with_hint("this is a formatter defect: please report it with the file")]
    };
    let mut scratch = SourceMap::new();
    let id = scratch.add(sources.name(file), out);
    let formatted = match crate::syntax::parse_in(&scratch, id, default) {
        Ok(m) => m,
        Err(_) => return Err(fail(0, 0, "it does not parse")),
    };
    if formatted.locale != to {
        return Err(fail(0, 0, "its reader locale is not the target's"));
    }
    let lexed = lex_in(id, out, default);
    let new: Vec<&Spanned> = lexed.tokens.iter().filter(|t| t.0 < t.2).collect();
    if new.len() != tokens.len() {
        return Err(fail(0, 0, "it has a different number of tokens"));
    }
    for ((lo, old, hi), (_, now, _)) in tokens.iter().zip(new) {
        // A replacement inside the token: the token itself, or an annotation's name.
        let expected = repl.range(*lo..*hi).next().map(|(_, (_, s))| s.as_str());
        if !same_token(old, expected, now, to) {
            return Err(fail(*lo, *hi, "a token changed"));
        }
    }
    if !translated && crate::syntax::dump_ast(module) != crate::syntax::dump_ast(&formatted) {
        return Err(fail(0, 0, "its syntax tree is different"));
    }
    Ok(())
}

/// Whether `now` is the token `old` becomes (respelled `expected`, when it is).
fn same_token(old: &Tok, expected: Option<&str>, now: &Tok, to: Locale) -> bool {
    match (old, now) {
        (Tok::Ident(_), Tok::Ident(b)) if expected.is_some() => Some(b.as_str()) == expected,
        // A type word may be a keyword of the target (`none` → `nihil`).
        (Tok::Ident(_), Tok::Kw(k)) => {
            expected.is_some_and(|e| vocabulary().keyword(to, e) == Some(*k))
        }
        (Tok::Annotation(a), Tok::Annotation(b)) => {
            expected.unwrap_or(a.name.name.as_str()) == b.name.name && a.args == b.args
        }
        _ => old == now,
    }
}
