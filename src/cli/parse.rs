//! `faber parse <path>`: parse a file, or a package's entry file, and print the syntax
//! tree on stdout (the same text the AST snapshot tests use). Diagnostics go to
//! stderr; nothing is printed on stdout when parsing fails.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{load, print_stdout, Context};
use faber::source::SourceMap;

#[derive(Args, Debug)]
pub struct ParseArgs {
    /// A `.fab` file, or a package directory that contains `faber.toml`.
    pub path: PathBuf,
}

pub fn run(args: &ParseArgs, ctx: &Context) -> ExitCode {
    let mut sources = SourceMap::new();
    let input = match load::load(&args.path, &mut sources) {
        Ok(input) => input,
        Err(diags) => return ctx.report(&sources, &diags),
    };
    let mut diags = input.notes;
    let locale = input
        .package
        .as_ref()
        .map_or_else(Default::default, |m| m.locale);
    match faber::syntax::parse_in(&sources, input.entry, locale) {
        Ok(module) => print_stdout(&faber::syntax::dump_ast(&module)),
        Err(errors) => diags.extend(errors),
    }
    ctx.report(&sources, &diags)
}
