//! The command line: clap definitions, one file per verb, and the shared code that
//! loads inputs and prints results. This module and `main.rs` are the only places in
//! faber that touch the file system or write to stdout/stderr; everything below
//! returns data or `Vec<Diagnostic>`.
//!
//! Streams: program output and dumps go to stdout; diagnostics and status lines go
//! to stderr. Exit codes: 0 success, 1 diagnostics (errors) reported, 2 usage.

mod atomic;
mod check;
mod devices;
mod devices_check;
mod explain;
mod flags;
mod format;
mod fsguard;
mod gradcheck;
mod hostdev;
mod hostfs;
mod hostshell;
mod interrupt;
mod ir;
mod load;
pub mod manifest;
mod modules;
mod outdir;
mod output;
mod parse;
mod run;
mod run_multihost;
mod run_xla;
mod test;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use faber::diag::{self, Diagnostic, Severity};
use faber::source::SourceMap;

/// faber: runs and checks programs written in Faber, the Latin-keyword language.
#[derive(Parser, Debug)]
#[command(name = "faber", version, propagate_version = true)]
pub struct Cli {
    /// When to colour diagnostics: `auto` follows NO_COLOR, CLICOLOR_FORCE,
    /// FORCE_COLOR and whether stderr is a terminal.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// Print errors only (no warnings or notes).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Also print notes and status lines (e.g. ignored faber.toml sections).
    #[arg(short, long, global = true)]
    pub verbose: bool,

    /// Load `lib:` imports from DIR/<lib>/src instead of the bundled libraries
    /// (also `FABER_LIBRARY_HOME`).
    #[arg(long, global = true, value_name = "DIR")]
    pub lib_root: Option<std::path::PathBuf>,

    /// Largest tensor a program may allocate, in GiB of f64 elements (default 4).
    /// A larger allocation is a RUN012 diagnostic, not an abort.
    #[arg(long, global = true, value_name = "GIB", default_value_t = 4.0,
          value_parser = flags::positive_f64, allow_hyphen_values = true)]
    pub max_tensor_gib: f64,

    /// Most heap memory faber may use, in GiB: texts, lists, maps and tensors
    /// together (default: 3/4 of the machine's or cgroup's memory). Beyond it RUN012.
    #[arg(long, global = true, value_name = "GIB", value_parser = flags::positive_f64, allow_hyphen_values = true)]
    pub max_memory_gib: Option<f64>,

    /// Threads the tensor kernels may use (default: every available core; also
    /// `FABER_THREADS`). Results never depend on it.
    #[arg(long, global = true, value_name = "N", env = "FABER_THREADS",
          value_parser = flags::positive_usize, allow_hyphen_values = true)]
    pub threads: Option<usize>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Check a file or package for errors without running it; prints nothing when it is clean.
    Check(check::CheckArgs),
    /// Parse a file or package entry and print its syntax tree on stdout.
    Parse(parse::ParseArgs),
    /// Run a file or package: its `incipit` block.
    #[command(alias = "script")]
    Run(run::RunArgs),
    /// Run the `proba` cases of a file or of every `.fab`/`.proba` file under a directory.
    Test(test::TestArgs),
    /// Check `@ radix backward` companions against finite differences.
    GradCheck(gradcheck::GradCheckArgs),
    /// Compile a file or package and print its Radix IR on stdout.
    #[command(alias = "hir")]
    Ir(ir::IrArgs),
    /// Explain a diagnostic code (`faber explain SEM001`); without one, list every code.
    Explain(explain::ExplainArgs),
    /// Format a file or every file of a package; `--locale L` translates it.
    Format(format::FormatArgs),
    /// Load a PJRT plugin (XLA) and list its devices.
    Devices(devices::DevicesArgs),
}

/// Settings every verb shares, decided once in `main`.
pub struct Context {
    pub color: bool,
    pub quiet: bool,
    pub verbose: bool,
    pub lib_root: Option<std::path::PathBuf>,
    /// The run configuration from the global flags (tensor limit, threads); `faber
    /// run` adds its own flags to it.
    pub run: faber::eval::RunConfig,
}

/// Runs the chosen verb. Called on the worker thread.
pub fn run(cli: Cli, color: bool) -> ExitCode {
    // Both values were validated by clap (finite, > 0). The memory limit is the
    // process's (it bounds what the binary's allocator counts, docs/pipeline.md).
    faber::mem::set_limit(match cli.max_memory_gib {
        Some(gib) => flags::gib_to_bytes(gib),
        None => faber::mem::default_limit(),
    });
    let run = faber::eval::RunConfig {
        tensor: faber::tensor::Limits {
            max_elements: flags::gib_to_bytes(cli.max_tensor_gib) / std::mem::size_of::<f64>(),
        },
        threads: cli.threads.unwrap_or(0),
        ..faber::eval::RunConfig::default()
    };
    let ctx = Context {
        color,
        quiet: cli.quiet,
        verbose: cli.verbose,
        lib_root: cli.lib_root.clone(),
        run,
    };
    match &cli.command {
        Command::Check(args) => check::run(args, &ctx),
        Command::Parse(args) => parse::run(args, &ctx),
        Command::Ir(args) => ir::run(args, &ctx),
        Command::Run(args) => run::run(args, &ctx),
        Command::GradCheck(args) => gradcheck::run(args, &ctx),
        Command::Test(args) => test::run(args, &ctx),
        Command::Explain(args) => explain::run(args, &ctx),
        Command::Format(args) => format::run(args, &ctx),
        Command::Devices(args) => devices::run(args, &ctx),
    }
}

/// A compiled input: its sources (for rendering), what `load` found, the program.
pub struct Compiled {
    pub sources: faber::source::SourceMap,
    pub input: load::Input,
    pub program: faber::ir::Program,
}

impl Context {
    /// Loads a file or package and compiles it with the CLI's module loader; on
    /// failure the diagnostics are already reported and the exit code is returned.
    pub fn compile(&self, path: &std::path::Path) -> Result<Compiled, ExitCode> {
        self.compile_to(path, faber::Stage::Grad)
    }

    /// [`Context::compile`], stopping at `stage`.
    pub fn compile_to(
        &self,
        path: &std::path::Path,
        stage: faber::Stage,
    ) -> Result<Compiled, ExitCode> {
        let mut sources = faber::source::SourceMap::new();
        let input = match load::load(path, &mut sources) {
            Ok(input) => input,
            Err(diags) => return Err(self.report(&sources, &diags)),
        };
        let mut loader = modules::FsLoader::new(self.lib_root.clone());
        loader.use_package(input.package.as_ref());
        match faber::compile_to(&mut sources, input.entry, &mut loader, stage) {
            Ok(program) => Ok(Compiled {
                sources,
                input,
                program,
            }),
            Err(diags) => Err(self.report(&sources, &diags)),
        }
    }

    /// Prints the diagnostics this run wants to see on stderr and maps them to an
    /// exit code: 1 when any is an error, else 0. `-q` hides warnings and notes;
    /// notes are shown only with `-v`.
    pub fn report(&self, sources: &SourceMap, diags: &[Diagnostic]) -> ExitCode {
        let shown: Vec<Diagnostic> = diags
            .iter()
            .filter(|d| match d.severity {
                Severity::Error => true,
                Severity::Warning => !self.quiet,
                Severity::Note => self.verbose,
            })
            .cloned()
            .collect();
        if !shown.is_empty() {
            print_stderr(&diag::render(&shown, sources, self.color));
        }
        if diag::has_errors(diags) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        }
    }

    /// A cargo-style status line (`Checking hello v0.1.0`) on stderr, only with `-v`.
    pub fn status(&self, verb: &str, what: &str) {
        if self.verbose {
            let verb = if self.color {
                format!("\x1b[1;32m{verb:>12}\x1b[0m")
            } else {
                format!("{verb:>12}")
            };
            print_stderr(&format!("{verb} {what}\n"));
        }
    }
}

/// Writes program output to stdout. A closed pipe (`faber parse x | head`) is not
/// an error worth reporting, so write failures are ignored.
pub fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes diagnostics and status lines to stderr, ignoring write failures.
pub fn print_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}
