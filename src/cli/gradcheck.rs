//! `faber grad-check <path> [flags] [-- ARGS…]`: every function with `@ radix
//! backward` (or the one named by `--function`), its companion's gradient against
//! central finite differences of the primal, one table row per tensor (leaf) of each
//! parameter.
//!
//! Where the inputs come from (docs/cli.md § grad-check): when the program has an
//! `incipit`, it is run with ARGS, as `faber run` would, and the first `--calls`
//! calls of each function (or of its companion, which takes the same leading
//! arguments) are recorded; the run is ended as soon as every function has them.
//! That is how shape-generic models (`tf32` parameters) get real shapes and values.
//! A function the run never calls, and every function of a program without an
//! `incipit` (or with `--random`), gets random inputs of its declared shapes instead.
//! A function that can be checked neither way is reported as skipped, and a skip makes
//! the exit code 1 unless `--allow-skip`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::hostfs::{host_file_methods, HostFiles};
use super::{print_stderr, print_stdout, Compiled, Context};
use faber::diag::codes;
use faber::eval::{CallCapture, Value};
use faber::gradcheck::{check_at, random_inputs, CheckError, LeafReport, ParamCheck, Sampling};
use faber::ir::{Backward, Program};
use faber::source::SourceMap;

#[derive(Args, Debug)]
pub struct GradCheckArgs {
    /// A `.fab` file, a package directory, or `-` for standard input.
    pub path: PathBuf,
    /// Check only the function with this name (the primal, not the companion).
    #[arg(long, short = 'f')]
    pub function: Option<String>,
    /// Seed of the random inputs (SplitMix64, uniform in [-1, 1)) and of the choice of
    /// sampled elements.
    #[arg(long, default_value_t = 1, allow_hyphen_values = true)]
    pub seed: u64,
    /// Largest accepted relative error |analytic − numeric| / max(1, |analytic|, |numeric|).
    #[arg(long, default_value_t = 1e-6, value_parser = super::flags::non_negative_f64, allow_hyphen_values = true)]
    pub tolerance: f64,
    /// Finite-difference step.
    #[arg(long, default_value_t = 1e-6, value_parser = super::flags::positive_f64, allow_hyphen_values = true)]
    pub step: f64,
    /// Calls of each function to record from the run and check.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub calls: usize,
    /// Elements checked per tensor of a parameter (seeded choice; a tensor with at
    /// most N elements is checked whole); 0 checks every element.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 16,
        allow_hyphen_values = true
    )]
    pub samples: usize,
    /// Do not run the program: random inputs of the declared shapes only.
    #[arg(long)]
    pub random: bool,
    /// Exit 0 even when a function could not be checked (it is still reported).
    #[arg(long)]
    pub allow_skip: bool,
    /// Element type of the program's floating tensors (`f32` or `f64`; default:
    /// `[run] precision` in faber.toml, else f64). The finite differences are computed
    /// in f64 whatever it is (docs/precision.md).
    #[arg(long, value_name = "f32|f64", value_parser = super::flags::precision)]
    pub precision: Option<faber::tensor::DType>,
    /// Arguments for the program's `incipit` (after `--`), as for `faber run`.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Output of the program while its calls are recorded: its stdout is shown (on
/// stderr, the table owns stdout) only with `-v`; its stderr always.
struct CaptureIo {
    args: Vec<String>,
    dir: String,
    verbose: bool,
    files: HostFiles,
}

impl faber::eval::Io for CaptureIo {
    host_file_methods!(files);

    fn stdout(&mut self, s: &str) {
        if self.verbose {
            print_stderr(s);
        }
    }
    fn stderr(&mut self, s: &str) {
        print_stderr(s);
    }
    fn args(&self) -> Vec<String> {
        self.args.clone()
    }
    fn program_dir(&self) -> String {
        self.dir.clone()
    }
}

/// The primal's name without its module path.
fn short_name(program: &Program, req: &Backward) -> String {
    let name = &program.func(req.primal).name;
    name.rsplit("::").next().unwrap_or(name).to_string()
}

/// Runs the program's `incipit` and records the first `calls` calls of each target
/// (its primal, its companion, and the companion's specialised copies, which keep the
/// companion's name). `None` when the program has no `incipit`. A runtime error before
/// the capture is complete is reported (the targets it left without calls are then
/// reported as skipped).
fn capture(
    args: &GradCheckArgs,
    ctx: &Context,
    config: &faber::eval::RunConfig,
    sources: &SourceMap,
    program: &Program,
    targets: &[&Backward],
) -> Option<CallCapture> {
    program.entry?;
    let mut capture = CallCapture::new(program, targets.len(), args.calls);
    for (t, req) in targets.iter().enumerate() {
        let keep = program.func(req.primal).params as usize;
        capture.watch(req.primal, t, keep);
        let companion = &program.func(req.companion).name;
        for (id, f) in program.functions.iter().enumerate() {
            if f.name == *companion {
                capture.watch(faber::ir::FuncId(id as u32), t, keep);
            }
        }
    }
    let mut io = CaptureIo {
        args: args.args.clone(),
        dir: super::run::program_dir(&args.path),
        verbose: ctx.verbose,
        files: HostFiles::new(config),
    };
    let (result, capture) = faber::eval::run_entry_capturing(program, &mut io, config, capture);
    if let Err(e) = result {
        if !capture.complete() {
            let _ = ctx.report(sources, &[e.into_diagnostic_in(sources)]);
        }
    }
    Some(capture)
}

/// The table's rows for one checked input set.
fn rows(
    out: &mut String,
    fname: &str,
    input: &str,
    program: &Program,
    req: &Backward,
    checks: &[ParamCheck],
    tolerance: f64,
) -> bool {
    let f = program.func(req.primal);
    let mut failed = false;
    for (i, c) in checks.iter().enumerate() {
        let name = f.slots.get(i).map_or("?", |s| s.name.as_str());
        match c {
            ParamCheck::Checked(leaves) => {
                for r in leaves {
                    let ok = r.max_rel <= tolerance;
                    failed |= !ok;
                    out.push_str(&leaf_row(fname, input, r, ok));
                }
            }
            ParamCheck::IndexInput => out.push_str(&format!(
                "{fname:<20} {input:<8} {name:<24} not differentiated: read only as indices or for its shape\n"
            )),
            ParamCheck::NoNumbers => out.push_str(&format!(
                "{fname:<20} {input:<8} {name:<24} not differentiated: holds no floating-point number\n"
            )),
        }
    }
    failed
}

fn leaf_row(fname: &str, input: &str, r: &LeafReport, ok: bool) -> String {
    let shape = format!(
        "[{}]",
        r.shape
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    let checked = format!("{}/{}", r.checked, r.elements());
    format!(
        "{fname:<20} {input:<8} {:<24} {shape:>12} {checked:>11} {:>15.3e} {:>15.3e}  {}\n",
        r.path,
        r.max_abs,
        r.max_rel,
        if ok { "yes" } else { "NO" }
    )
}

pub fn run(args: &GradCheckArgs, ctx: &Context) -> ExitCode {
    // Random inputs are built outside any run: the tensor limit holds for the verb.
    let _config = ctx.run.install();
    let Compiled {
        sources,
        input,
        program,
    } = match ctx.compile(&args.path) {
        Ok(c) => c,
        Err(code) => return code,
    };
    // The program runs in the chosen precision; the finite differences stay in f64
    // (an f32 input is widened before it is perturbed, src/gradcheck), and so do
    // scalars declared `f32`: a perturbed scalar input must not be rounded to f32.
    let config = faber::eval::RunConfig {
        precision: super::flags::precision_of(args.precision, input.package.as_ref()),
        narrow_scalars: false,
        ..ctx.run
    };
    let _precision = config.install();
    let targets: Vec<&Backward> = program
        .backward
        .iter()
        .filter(|req| {
            args.function
                .as_ref()
                .is_none_or(|f| *f == short_name(&program, req))
        })
        .collect();
    let mut out = format!(
        "{:<20} {:<8} {:<24} {:>12} {:>11} {:>15} {:>15}  ok\n",
        "function", "input", "parameter", "shape", "checked", "max abs err", "max rel err"
    );
    let (mut checked, mut failed, mut skipped) = (0usize, 0usize, 0usize);
    if let Some(f) = &args.function {
        if targets.is_empty() {
            out.push_str(&format!(
                "{f:<20} skipped: no function of this name has `@ radix backward`\n"
            ));
            skipped += 1;
        }
    }
    let captured = if args.random || targets.is_empty() {
        None
    } else {
        capture(args, ctx, &config, &sources, &program, &targets)
    };
    let sampling = Sampling {
        step: args.step,
        samples: args.samples,
        seed: args.seed,
    };
    for (t, req) in targets.iter().enumerate() {
        let fname = short_name(&program, req);
        let calls = captured.as_ref().map_or(&[][..], |c| c.calls(t));
        let mut sets: Vec<(String, Vec<Value>)> = calls
            .iter()
            .enumerate()
            .map(|(k, a)| (format!("call {}", k + 1), a.clone()))
            .collect();
        let from_run = !sets.is_empty();
        if !from_run {
            match random_inputs(&program, req, args.seed) {
                Ok(i) => sets.push(("random".to_string(), i)),
                Err(CheckError::Runtime(e)) if e.diagnostic.code == codes::RUN_LIMIT => {
                    // A resource limit ends grad-check as it ends `faber run`.
                    print_stdout(&out);
                    return ctx.report(&sources, &[e.into_diagnostic()]);
                }
                Err(e) => {
                    let why = match e {
                        CheckError::UnknownShape(p) => {
                            format!("parameter `{p}` has no fully declared shape")
                        }
                        CheckError::Unsupported(p) => {
                            format!("parameter `{p}` has a type random inputs cannot be drawn for")
                        }
                        CheckError::Runtime(e) => e.diagnostic.message,
                    };
                    let source = match &captured {
                        Some(_) => "the run never calls it",
                        None if program.entry.is_none() => {
                            "the program has no `incipit` to take inputs from"
                        }
                        None => "the program was not run (--random)",
                    };
                    out.push_str(&format!("{fname:<20} skipped: {source}, and {why}\n"));
                    skipped += 1;
                    continue;
                }
            }
        }
        let mut function_failed = false;
        let mut function_skipped = false;
        for (label, inputs) in &sets {
            match check_at(&program, req, inputs, &sampling, &config) {
                Ok(checks) => {
                    function_failed |= rows(
                        &mut out,
                        &fname,
                        label,
                        &program,
                        req,
                        &checks,
                        args.tolerance,
                    );
                }
                Err(CheckError::Runtime(e)) if e.diagnostic.code == codes::RUN_LIMIT => {
                    print_stdout(&out);
                    return ctx.report(&sources, &[e.into_diagnostic_in(&sources)]);
                }
                Err(CheckError::Runtime(e)) => {
                    let d = e.into_diagnostic_in(&sources);
                    let (l, c) = sources.line_col(d.span);
                    let what = format!(": {} [{}]", d.message, d.code.id);
                    if from_run {
                        out.push_str(&format!(
                            "{fname:<20} {label:<8} error: the check fails at {l}:{c}{what}\n"
                        ));
                        function_failed = true;
                    } else {
                        // Random inputs can be outside the function's domain (ids, logs).
                        out.push_str(&format!(
                            "{fname:<20} skipped: random inputs fail at {l}:{c}{what}\n"
                        ));
                        function_skipped = true;
                    }
                }
                Err(e) => {
                    out.push_str(&format!("{fname:<20} {label:<8} error: {e:?}\n"));
                    function_failed = true;
                }
            }
        }
        if function_failed {
            failed += 1;
        } else if function_skipped {
            skipped += 1;
        } else {
            checked += 1;
        }
    }
    if program.backward.is_empty() {
        out.push_str("no function with `@ radix backward` to check\n");
    } else {
        out.push_str(&format!(
            "{checked} function(s) passed, {failed} failed, {skipped} could not be checked\n"
        ));
    }
    print_stdout(&out);
    if skipped > 0 && !args.allow_skip && failed == 0 {
        print_stderr("a function that could not be checked fails grad-check; pass --allow-skip to accept skips\n");
    }
    if failed > 0 || (skipped > 0 && !args.allow_skip) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
