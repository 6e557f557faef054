//! `faber grad-check <path> [--function F] [--seed N] [--tolerance T]`: for every
//! function with `@ radix backward` (or the one named F), random inputs of the
//! declared shapes, the companion's gradient against central finite differences,
//! one table row per parameter; exit 1 when any relative error exceeds the tolerance.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::{print_stdout, Compiled, Context};
use faber::autodiff::check::{check, random_inputs, CheckError};

#[derive(Args, Debug)]
pub struct GradCheckArgs {
    /// A `.fab` file or a package directory.
    pub path: PathBuf,
    /// Check only the function with this name (the primal, not the companion).
    #[arg(long, short = 'f')]
    pub function: Option<String>,
    /// Seed of the random inputs (SplitMix64, uniform in [-1, 1)).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Largest accepted relative error |analytic − numeric| / max(1, |analytic|, |numeric|).
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// Finite-difference step.
    #[arg(long, default_value_t = 1e-6)]
    pub step: f64,
}

pub fn run(args: &GradCheckArgs, ctx: &Context) -> ExitCode {
    let Compiled {
        sources,
        input: _,
        program,
    } = match ctx.compile(&args.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let mut out = String::from(
        "function             parameter        elements     max abs err     max rel err  ok\n",
    );
    let mut failed = false;
    let mut checked = 0;
    for req in &program.backward {
        let fname = program
            .func(req.primal)
            .name
            .rsplit("::")
            .next()
            .unwrap_or("")
            .to_string();
        if args.function.as_ref().is_some_and(|f| *f != fname) {
            continue;
        }
        let inputs = match random_inputs(&program, req, args.seed) {
            Ok(i) => i,
            Err(CheckError::UnknownShape(p)) => {
                out.push_str(&format!(
                    "{fname:<20} skipped: parameter `{p}` has no fully declared shape\n"
                ));
                continue;
            }
            Err(e) => {
                out.push_str(&format!("{fname:<20} skipped: {e:?}\n"));
                continue;
            }
        };
        match check(&program, req, &inputs, args.step) {
            Ok(reports) => {
                checked += 1;
                for r in reports {
                    let ok = r.max_rel <= args.tolerance;
                    failed |= !ok;
                    out.push_str(&format!(
                        "{fname:<20} {:<16} {:>8} {:>15.3e} {:>15.3e}  {}\n",
                        r.name,
                        r.elements,
                        r.max_abs,
                        r.max_rel,
                        if ok { "yes" } else { "NO" }
                    ));
                }
            }
            Err(CheckError::Runtime(e)) => {
                // Random inputs can be outside the function's domain (ids, logs).
                let (l, c) = sources.line_col(e.diagnostic.span);
                out.push_str(&format!(
                    "{fname:<20} skipped: random inputs fail at {l}:{c}: {} [{}]\n",
                    e.diagnostic.message, e.diagnostic.code.id
                ));
            }
            Err(e) => {
                failed = true;
                out.push_str(&format!("{fname:<20} error: {e:?}\n"));
            }
        }
    }
    if checked == 0 && !failed {
        out.push_str("no function with `@ radix backward` to check\n");
    }
    print_stdout(&out);
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
