//! `faber run <path> [-- args…]`: compiles a file or package and runs its `incipit`.
//! Program output goes to stdout as it is produced (line-buffered, flushed before
//! any diagnostic, progress line and exit); `-` reads the program from stdin; a runtime error is a diagnostic on stderr and exit code 1; otherwise
//! the exit code is the program's `exitus` value (0 by default).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use super::hostfs::{host_file_methods, HostFiles};
use super::manifest::Backend;
use super::output::LineOut;
use super::run_xla::DeviceChoice;
use super::{load, modules::FsLoader, Context};
use faber::diag::{codes, Diagnostic};
use faber::source::{SourceMap, Span};

#[derive(Args, Debug)]
pub struct RunArgs {
    /// A `.fab` file with an `incipit`, a package directory that contains `faber.toml`,
    /// or `-` for a program read from standard input (shown as `<stdin>`).
    pub path: PathBuf,
    /// Accepted for compatibility; faber always targets the CPU interpreter.
    #[arg(short = 't', long, value_name = "TARGET")]
    pub target: Option<String>,
    /// Accepted for compatibility; faber always interprets.
    #[arg(long)]
    pub interpret: bool,
    /// `cpu` (the interpreter) or `xla`: functions whose calls lower to StableHLO run
    /// on a PJRT device (default: `[run] backend` in faber.toml, else cpu;
    /// docs/xla.md).
    #[arg(long, value_name = "cpu|xla")]
    pub backend: Option<String>,
    /// The PJRT device for `--backend xla`, numbered as `faber devices` lists them
    /// (default: `[run] device` in faber.toml, else 0).
    #[arg(long, value_name = "N")]
    pub device: Option<usize>,
    /// The PJRT plugin for `--backend xla` (default: `FABER_PJRT_PLUGIN`, else the
    /// active Python environment, else `.venv-xla/`).
    #[arg(long, value_name = "PATH")]
    pub xla_plugin: Option<PathBuf>,
    /// With `--backend xla`: run the train step (a gradient companion `grad_…` called
    /// with tensors) data-parallel on the plugin's first N devices, the batch split
    /// along its first axis (default: `[run] devices` in faber.toml, else 1;
    /// docs/xla.md).
    #[arg(long, value_name = "N", value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub devices: Option<usize>,
    /// Host devices the XLA CPU plugin presents (its `cpu_device_count` client
    /// option; default 4): with `--devices N`, N up to this many. Passed to whatever
    /// plugin is loaded; meant for the CPU plugin (docs/xla.md).
    #[arg(long, value_name = "N", env = "FABER_XLA_CPU_DEVICES", value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub xla_cpu_devices: Option<usize>,
    /// With `--backend xla`: the number of processes of a multi-process run (each
    /// started with its own `--node-id`; docs/xla.md, "Several processes").
    #[arg(long, value_name = "N", value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub num_nodes: Option<usize>,
    /// This process's number in a multi-process run, 0 to `--num-nodes` − 1; 0
    /// serves the coordinator.
    #[arg(long, value_name = "I")]
    pub node_id: Option<usize>,
    /// Where process 0 of a multi-process run listens and the others connect
    /// (`127.0.0.1:7470`).
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: Option<String>,
    /// How long a process of a multi-process run waits for the others, in seconds
    /// (default 60); past it CLI016.
    #[arg(long, value_name = "SECONDS", value_parser = super::flags::positive_f64, allow_hyphen_values = true)]
    pub join_timeout: Option<f64>,
    /// Stop with RUN014 after N steps (a step is one loop iteration or one call):
    /// a budget for programs that might not end.
    #[arg(long, value_name = "N", value_parser = super::flags::positive_u64, allow_hyphen_values = true)]
    pub max_steps: Option<u64>,
    /// Longest `textus` a program may build, in bytes (default 1 GiB); beyond it RUN012.
    #[arg(long, value_name = "BYTES", default_value_t = faber::eval::TEXT_LIMIT,
          value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub max_text_bytes: usize,
    /// Most items a `lista` may grow to (default 2^27); beyond it RUN012.
    #[arg(long, value_name = "N", default_value_t = faber::eval::LIST_LIMIT,
          value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub max_list_items: usize,
    /// Stop with RUN018 at the first tensor op or scalar arithmetic whose result holds a
    /// NaN or an infinity, naming its line (off by default: nothing is checked).
    #[arg(long)]
    pub check_finite: bool,
    /// Element type of the program's floating tensors: `f32` stores and computes them
    /// in f32, `f64` in f64 (default: `[run] precision` in faber.toml, else f64;
    /// docs/precision.md).
    #[arg(long, value_name = "f32|f64", value_parser = super::flags::precision)]
    pub precision: Option<faber::tensor::DType>,
    /// Arguments passed to the program (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Program output: on a terminal stdout is written line by line; to a pipe or file
/// through [`LineOut`], which writes each line out within milliseconds, batched, so
/// `faber run … | tee log` shows each line when it is printed. stderr is unbuffered.
/// Write errors (a closed pipe) are ignored, as for any filter program.
pub struct ProcessIo {
    out: LineOut,
    /// Program arguments (`hospes.argumenta`).
    args: Vec<String>,
    /// The program's directory (`hospes.directorium`).
    dir: String,
    /// Whether stdout / stderr are terminals: a progress line on stderr is cleared
    /// before stdout output, and `hospes.progressus` lines are shown only on a terminal.
    out_tty: bool,
    err_tty: bool,
    /// A progress line is on screen and must be cleared before other stderr output.
    progress_shown: bool,
    /// The `hospes` file functions.
    files: HostFiles,
}

impl ProcessIo {
    pub fn with_args(args: Vec<String>, dir: String, files: HostFiles) -> ProcessIo {
        use std::io::IsTerminal;
        ProcessIo {
            dir,
            files,
            out: LineOut::new(),
            args,
            out_tty: std::io::stdout().is_terminal(),
            err_tty: std::io::stderr().is_terminal(),
            progress_shown: false,
        }
    }

    fn clear_progress(&mut self) {
        if self.progress_shown {
            let _ = std::io::stderr().lock().write_all(b"\r\x1b[2K");
            self.progress_shown = false;
        }
    }

    pub fn flush(&mut self) {
        self.out.flush();
    }
}

impl faber::eval::Io for ProcessIo {
    host_file_methods!(files);

    fn stdout(&mut self, s: &str) {
        if self.out_tty {
            self.clear_progress();
        }
        self.out.write(s.as_bytes());
        if self.out_tty {
            self.flush();
        }
    }

    fn args(&self) -> Vec<String> {
        self.args.clone()
    }

    fn read_line(&mut self) -> Result<Option<String>, String> {
        // A prompt written without a line break shows before the program waits.
        self.flush();
        super::hostfs::read_stdin_line()
    }

    fn program_dir(&self) -> String {
        self.dir.clone()
    }

    fn stdout_bytes(&mut self, bytes: &[u8]) {
        if self.out_tty {
            self.clear_progress();
        }
        self.out.write(bytes);
        if self.out_tty {
            self.flush();
        }
    }

    fn read_stdin(&mut self, max: u64) -> Result<Vec<u8>, String> {
        self.flush();
        self.files.read_stdin(max)
    }

    fn is_terminal(&self, stream: faber::eval::device::Stream) -> bool {
        use faber::eval::device::Stream;
        match stream {
            Stream::In => std::io::IsTerminal::is_terminal(&std::io::stdin()),
            Stream::Out => self.out_tty,
            Stream::Err => self.err_tty,
        }
    }

    fn progress(&mut self, line: &str) {
        if !self.err_tty {
            return;
        }
        self.flush();
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        self.progress_shown = true;
    }

    fn stderr(&mut self, s: &str) {
        self.clear_progress();
        self.flush();
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(s.as_bytes());
    }
}

pub fn run(args: &RunArgs, ctx: &Context) -> ExitCode {
    let mut sources = SourceMap::new();
    let flag_backend = match args.backend.as_deref() {
        None => None,
        Some(b) => match Backend::from_name(b) {
            Some(b) => Some(b),
            None => {
                super::print_stderr(&format!(
                    "error: backend `{b}` is not available: `cpu` or `xla`\n"
                ));
                return ExitCode::from(2);
            }
        },
    };
    if flag_backend == Some(Backend::Xla) && args.check_finite {
        return check_finite_needs_cpu();
    }
    if flag_backend == Some(Backend::Cpu) && args.device.is_some() {
        super::print_stderr("error: `--device` picks a PJRT device; use it with `--backend xla`\n");
        return ExitCode::from(2);
    }
    let input = match load::load(&args.path, &mut sources) {
        Ok(input) => input,
        Err(diags) => return ctx.report(&sources, &diags),
    };
    // The flag wins over `[run] backend`, which wins over the default, cpu.
    let manifest = input.package.as_ref();
    let backend = flag_backend
        .or(manifest.and_then(|m| m.backend))
        .unwrap_or(Backend::Cpu);
    let xla = backend == Backend::Xla;
    if xla && args.check_finite {
        return check_finite_needs_cpu();
    }
    if let Some(usage) = super::run_xla::devices_usage(xla, args.devices) {
        super::print_stderr(&usage);
        return ExitCode::from(2);
    }
    let nodes = match super::run_multihost::spec(
        xla,
        &super::run_multihost::NodeFlags {
            num_nodes: args.num_nodes,
            node_id: args.node_id,
            coordinator: args.coordinator.clone(),
            join_timeout: args.join_timeout,
        },
    ) {
        Ok(n) => n,
        Err(usage) => {
            super::print_stderr(&usage);
            return ExitCode::from(2);
        }
    };
    if !xla && args.device.is_some() {
        super::print_stderr(
            "error: `--device` picks a PJRT device; use it with `--backend xla` (or \
             `[run] backend = \"xla\"`)\n",
        );
        return ExitCode::from(2);
    }
    let device = match (args.device, manifest.and_then(|m| m.device)) {
        (Some(n), _) => DeviceChoice {
            ordinal: n,
            manifest: None,
        },
        (None, Some((n, at))) => DeviceChoice {
            ordinal: n,
            manifest: Some(at),
        },
        (None, None) => DeviceChoice::default(),
    };
    if let Some(package) = &input.package {
        ctx.status("Running", &package.describe());
    }
    let mut loader = FsLoader::new(ctx.lib_root.clone());
    loader.use_package(input.package.as_ref());
    let program = match faber::compile(&mut sources, input.entry, &mut loader) {
        Ok(p) => p,
        Err(diags) => return ctx.report(&sources, &diags),
    };
    if program.entry.is_none() {
        let d = Diagnostic::error(
            codes::SEM_NO_ENTRY,
            format!(
                "`{}` has no `incipit` block to run",
                sources.name(input.entry)
            ),
            Span::new(input.entry, 0, 0),
        )
        .with_hint("add `incipit { … }`, or use `faber check` / `faber test` on a library");
        return ctx.report(&sources, &[d]);
    }
    let _ = ctx.report(&sources, &input.notes);
    let config = faber::eval::RunConfig {
        max_steps: args.max_steps,
        max_text_bytes: args.max_text_bytes,
        max_list_items: args.max_list_items,
        check_finite: args.check_finite,
        precision: super::flags::precision_of(args.precision, input.package.as_ref()),
        ..ctx.run
    };
    let mut io = ProcessIo::with_args(
        args.args.clone(),
        program_dir(&args.path),
        HostFiles::new(&config),
    );
    let backend = if xla {
        let devices = super::run_xla::devices_of(args.devices, input.package.as_ref());
        let installed = match &nodes {
            Some(spec) => {
                super::run_multihost::install(args.xla_plugin.as_deref(), spec, &mut sources)
            }
            None => super::run_xla::install(
                args.xla_plugin.as_deref(),
                device,
                devices,
                args.xla_cpu_devices,
                input
                    .package
                    .as_ref()
                    .map(|m| m.sharding.clone())
                    .unwrap_or_default(),
                &mut sources,
            ),
        };
        match installed {
            Ok(b) => Some(b),
            Err(d) => return ctx.report(&sources, &[*d]),
        }
    } else {
        None
    };
    super::interrupt::install();
    // A device result whose copy to the host fails unwinds with `DeviceLost`
    // (src/tensor/remote.rs): caught here, so what the program printed is flushed
    // first and the failure is a diagnostic (exit 1), never a crash.
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        faber::eval::run_entry(&program, &mut io, &config).map_err(Box::new)
    }));
    let result = match caught {
        Ok(r) => Ok(r),
        Err(payload) => match payload.downcast::<faber::tensor::DeviceLost>() {
            Ok(lost) => Err(lost.0),
            Err(other) => std::panic::resume_unwind(other),
        },
    };
    if let (Some(b), true) = (&backend, ctx.verbose) {
        super::print_stderr(&super::run_xla::summary(b, &program, &sources));
    }
    drop(backend);
    io.clear_progress();
    io.flush();
    if faber::eval::interrupt::interrupted() {
        super::print_stderr(&format!("{}\n", super::interrupt::MESSAGE));
        return ExitCode::from(super::interrupt::EXIT_INTERRUPTED);
    }
    match result {
        Ok(Ok(code)) => ExitCode::from((code & 0xff) as u8),
        Ok(Err(e)) => ctx.report(&sources, &[(*e).into_diagnostic_in(&sources)]),
        Err(lost) => {
            // Out of device memory keeps its own code (CLI012) here too.
            let code = if faber::xla::plugin::says_out_of_memory(&lost) {
                codes::CLI_XLA_OUT_OF_MEMORY
            } else {
                codes::CLI_XLA_EXECUTE
            };
            let file = sources.add("<xla device>".to_string(), String::new());
            let d = Diagnostic::error(
                code,
                format!("copying a result from the XLA device failed: {lost}"),
                Span::new(file, 0, 0),
            );
            ctx.report(&sources, &[d])
        }
    }
}

/// The usage error for `--check-finite` on the xla backend (exit 2).
fn check_finite_needs_cpu() -> ExitCode {
    super::print_stderr(
        "error: `--check-finite` checks the interpreter's operations; use it with \
         `--backend cpu`\n",
    );
    ExitCode::from(2)
}

/// `hospes.directorium` for a `<path>` argument: the package directory, or the
/// file's directory (`.` for a bare file name and for `-`, standard input).
pub fn program_dir(path: &std::path::Path) -> String {
    dir_of(path).to_string_lossy().into_owned()
}

/// `path` itself when it is a directory, else the directory holding it (`.` for a bare
/// file name).
pub(super) fn dir_of(path: &std::path::Path) -> PathBuf {
    if path.is_dir() {
        path.to_path_buf()
    } else {
        match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    }
}
