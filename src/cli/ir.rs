//! `faber ir <path>`: compiles a program and prints its Radix IR on stdout
//! (`--function NAME` prints only functions whose name ends with NAME).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{print_stdout, Compiled, Context};
use faber::ir::{print, FuncId};

#[derive(Args, Debug)]
pub struct IrArgs {
    /// A `.fab` file, or a package directory that contains `faber.toml`.
    pub path: PathBuf,
    /// Print only the functions whose qualified name ends with this (e.g. `main` or `Genus.method`).
    #[arg(long, short = 'f', value_name = "NAME")]
    pub function: Option<String>,
    /// `lowered`: the IR before the autodiff pass (companions empty); `grad`: after it.
    #[arg(long, value_enum, default_value_t = StageArg::Grad)]
    pub stage: StageArg,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum StageArg {
    Lowered,
    Grad,
}

pub fn run(args: &IrArgs, ctx: &Context) -> ExitCode {
    let Compiled {
        sources,
        input,
        program,
    } = match ctx.compile_to(
        &args.path,
        match args.stage {
            StageArg::Lowered => faber::Stage::Lowered,
            StageArg::Grad => faber::Stage::Grad,
        },
    ) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let text = match &args.function {
        None => print::print_program(&program),
        Some(name) => {
            let mut out = String::new();
            for (i, f) in program.functions.iter().enumerate() {
                let short = f.name.rsplit("::").next().unwrap_or(&f.name);
                if f.name.ends_with(name.as_str())
                    && (short == name || f.name == *name || short.ends_with(&format!(".{name}")))
                {
                    out.push_str(&print::print_function(&program, FuncId(i as u32)));
                    out.push('\n');
                }
            }
            if out.is_empty() {
                super::print_stderr(&format!("error: no function named `{name}`\n"));
                return ExitCode::FAILURE;
            }
            out
        }
    };
    print_stdout(&text);
    ctx.report(&sources, &input.notes)
}
