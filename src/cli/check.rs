//! `faber check <path>`: lex and parse a file, or a package's entry file, and report
//! every problem. Prints nothing when the input is clean. (Resolution and type
//! checks join here as those stages land.)

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{load, Context};
use faber::source::SourceMap;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A `.fab` file, or a package directory that contains `faber.toml`.
    pub path: PathBuf,
}

pub fn run(args: &CheckArgs, ctx: &Context) -> ExitCode {
    let mut sources = SourceMap::new();
    let input = match load::load(&args.path, &mut sources) {
        Ok(input) => input,
        Err(diags) => return ctx.report(&sources, &diags),
    };
    if let Some(package) = &input.package {
        ctx.status("Checking", &package.describe());
    }
    let mut diags = input.notes;
    if let Err(errors) = faber::syntax::parse(&sources, input.entry) {
        diags.extend(errors);
    }
    ctx.report(&sources, &diags)
}
