//! `faber check <path>`: lex, parse, resolve imports and names, and run the static
//! checks of lowering on a file or a package's entry file (and everything it
//! imports), reporting every problem. Prints nothing when the input is clean.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{load, Context};
use faber::source::SourceMap;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A `.fab` file, a package directory that contains `faber.toml`, or `-` for
    /// standard input.
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
    let mut loader = super::modules::FsLoader::new(ctx.lib_root.clone());
    loader.use_package(input.package.as_ref());
    if let Err(errors) = faber::compile(&mut sources, input.entry, &mut loader) {
        diags.extend(errors);
    }
    ctx.report(&sources, &diags)
}
