//! `faber devices`: finds a PJRT plugin, loads it and lists its devices (issue 24,
//! docs/xla.md). Where the plugin comes from, first found wins:
//!
//! 1. `--xla-plugin PATH`;
//! 2. the environment variable `FABER_PJRT_PLUGIN`, when set and not empty;
//! 3. the active Python environment (`$VIRTUAL_ENV`): the first `*.so` under
//!    `lib/python*/site-packages/xla_plugins/`, then under `…/jax_plugins/`;
//! 4. the same search in `.venv-xla/` (what scripts/xla-setup.sh creates) in the
//!    current directory or the nearest directory above it that has one.
//!
//! Errors are diagnostics: CLI006 (no plugin found), CLI007 (not a PJRT plugin),
//! CLI008 (an incompatible PJRT C API version), CLI009 (a PJRT call failed).
//! `--check` also compiles and runs a small program on every device
//! (src/cli/devices_check.rs): CLI010 when compiling fails, CLI011 when running does,
//! CLI012 when the device runs out of memory.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::{print_stdout, Context};
use faber::diag::{codes, Code, Diagnostic};
use faber::source::{SourceMap, Span};
use faber::xla::{Plugin, PluginError, XlaError};

/// The command that installs a plugin, named by CLI006.
pub const SETUP_COMMAND: &str = "scripts/xla-setup.sh";

/// The environment variable naming a plugin.
pub const PLUGIN_VAR: &str = "FABER_PJRT_PLUGIN";

#[derive(Args, Debug)]
pub struct DevicesArgs {
    /// The PJRT plugin to load (a shared library exporting `GetPjrtApi`); default:
    /// `FABER_PJRT_PLUGIN`, else the active Python environment, else `.venv-xla/`.
    #[arg(long, value_name = "PATH")]
    pub xla_plugin: Option<PathBuf>,
    /// Also compile and run a small program on every device and compare its result
    /// with the native kernel's.
    #[arg(long)]
    pub check: bool,
    /// Host devices the XLA CPU plugin presents (its `cpu_device_count` client
    /// option; default 4): with `--devices N`, N up to this many. Passed to whatever
    /// plugin is loaded; meant for the CPU plugin (docs/xla.md).
    #[arg(long, value_name = "N", env = "FABER_XLA_CPU_DEVICES", value_parser = super::flags::positive_usize, allow_hyphen_values = true)]
    pub xla_cpu_devices: Option<usize>,
}

/// The client options of `--xla-cpu-devices N` (or `FABER_XLA_CPU_DEVICES`): the
/// CPU plugin's `cpu_device_count`; none without it.
pub fn client_options(cpu_devices: Option<usize>) -> Vec<(&'static str, i64)> {
    cpu_devices
        .map(|n| ("cpu_device_count", i64::try_from(n).unwrap_or(i64::MAX)))
        .into_iter()
        .collect()
}

/// Where a plugin path came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Flag,
    Env,
    Found,
}

pub fn run(args: &DevicesArgs, ctx: &Context) -> ExitCode {
    let mut sources = SourceMap::new();
    match list(args, &mut sources) {
        Ok(text) => {
            print_stdout(&text);
            ExitCode::SUCCESS
        }
        Err(d) => ctx.report(&sources, &[*d]),
    }
}

/// The plugin to load (module doc: `--xla-plugin`, `FABER_PJRT_PLUGIN`, the search),
/// or CLI006.
pub(super) fn find_plugin(
    flag: Option<&Path>,
    sources: &mut SourceMap,
) -> Result<PathBuf, Box<Diagnostic>> {
    let env_plugin = std::env::var_os(PLUGIN_VAR).filter(|v| !v.is_empty());
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let venv = std::env::var_os("VIRTUAL_ENV").filter(|v| !v.is_empty());
    let (path, origin) =
        match (flag, env_plugin) {
            (Some(p), _) => (p.to_path_buf(), Origin::Flag),
            (None, Some(p)) => (PathBuf::from(p), Origin::Env),
            (None, None) => match discover(venv.as_deref().map(Path::new), &cwd) {
                Some(p) => (p, Origin::Found),
                None => return Err(not_found(
                    sources,
                    "no PJRT plugin found: no `--xla-plugin`, no `FABER_PJRT_PLUGIN`, and none \
                     under the active Python environment or `.venv-xla/`"
                        .to_string(),
                )),
            },
        };
    if !path.is_file() {
        let from = match origin {
            Origin::Flag => "`--xla-plugin`",
            Origin::Env => "`FABER_PJRT_PLUGIN`",
            Origin::Found => "the search",
        };
        return Err(not_found(
            sources,
            format!(
                "no PJRT plugin at `{}` (from {from}): no such file",
                path.display()
            ),
        ));
    }
    Ok(path)
}

fn list(args: &DevicesArgs, sources: &mut SourceMap) -> Result<String, Box<Diagnostic>> {
    let path = find_plugin(args.xla_plugin.as_deref(), sources)?;
    let plugin = Plugin::load(&path).map_err(|e| plugin_error(sources, &path, &e))?;
    let options = client_options(args.xla_cpu_devices);
    let client = plugin
        .client_with(&options)
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let describe = || -> Result<String, PluginError> {
        let name = client.platform_name()?;
        let version = client.platform_version()?;
        let devices = client.devices()?;
        let (major, minor) = plugin.api_version();
        let mut out = format!("plugin: {}\n", plugin.path().display());
        out.push_str(&format!("PJRT C API: {major}.{minor}\n"));
        out.push_str(&format!("platform: {name} (version {version})\n"));
        out.push_str(&format!("devices: {}\n", devices.len()));
        for d in &devices {
            out.push_str(&format!("  {}  {}  {}\n", d.id, d.kind, d.description));
        }
        Ok(out)
    };
    let text = describe().map_err(|e| plugin_error(sources, &path, &e));
    let devices = client.devices().map_or(0, |d| d.len());
    drop(client);
    let mut text = text?;
    if args.check {
        let report = super::devices_check::check(&plugin, &options, devices)
            .map_err(|e| check_error(sources, &path, &e))?;
        text.push_str(&report);
    }
    Ok(text)
}

/// CLI010, CLI011 or CLI012 (out of device memory) for a failed `--check`.
fn check_error(sources: &mut SourceMap, path: &Path, e: &XlaError) -> Box<Diagnostic> {
    let file = sources.add(path.display().to_string(), String::new());
    let (code, hint) = if matches!(e, XlaError::Plugin(p) if p.is_out_of_memory()) {
        (
            codes::CLI_XLA_OUT_OF_MEMORY,
            "the device ran out of memory; the message is the plugin's own",
        )
    } else if super::devices_check::is_compile_failure(e) {
        (
            codes::CLI_XLA_COMPILE,
            "the plugin could not compile the StableHLO faber writes; the message is its own",
        )
    } else {
        (
            codes::CLI_XLA_EXECUTE,
            "the plugin compiled the program but could not run it; the message is its own",
        )
    };
    Box::new(Diagnostic::error(code, e.to_string(), Span::new(file, 0, 0)).with_hint(hint))
}

/// The plugin search of steps 3 and 4 (module doc).
fn discover(venv: Option<&Path>, cwd: &Path) -> Option<PathBuf> {
    if let Some(found) = venv.and_then(plugin_in_env) {
        return Some(found);
    }
    cwd.ancestors()
        .map(|dir| dir.join(".venv-xla"))
        .find(|v| v.is_dir())
        .and_then(|v| plugin_in_env(&v))
}

/// The first `*.so` (in path order) under `xla_plugins/`, else `jax_plugins/`, of
/// any `lib/python*/site-packages` of the environment at `env`.
pub fn plugin_in_env(env: &Path) -> Option<PathBuf> {
    let mut site_packages: Vec<PathBuf> = std::fs::read_dir(env.join("lib"))
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("python"))
        .map(|e| e.path().join("site-packages"))
        .filter(|p| p.is_dir())
        .collect();
    site_packages.sort();
    for family in ["xla_plugins", "jax_plugins"] {
        for sp in &site_packages {
            let mut found = Vec::new();
            shared_libraries(&sp.join(family), 3, &mut found);
            found.sort();
            if let Some(first) = found.into_iter().next() {
                return Some(first);
            }
        }
    }
    None
}

/// Every `*.so` file under `dir`, `depth` levels deep at most.
fn shared_libraries(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if depth > 0 {
                shared_libraries(&p, depth - 1, out);
            }
        } else if p.extension().is_some_and(|x| x == "so") {
            out.push(p);
        }
    }
}

/// CLI006, naming the setup command.
fn not_found(sources: &mut SourceMap, message: String) -> Box<Diagnostic> {
    let file = sources.add("<command line>", String::new());
    Box::new(
        Diagnostic::error(codes::CLI_NO_PLUGIN, message, Span::new(file, 0, 0)).with_hint(format!(
            "run `{SETUP_COMMAND}` in the faber repository (it creates `.venv-xla/` with the \
             `xla-cpu-pjrt` plugin from PyPI), `pip install xla-cpu-pjrt` in an active virtual \
             environment, or name a plugin with `--xla-plugin PATH` or `{PLUGIN_VAR}`"
        )),
    )
}

/// The code of a [`PluginError`].
fn code_of(e: &PluginError) -> Code {
    match e {
        PluginError::NotLoadable { .. }
        | PluginError::NoEntryPoint { .. }
        | PluginError::BadApi { .. } => codes::CLI_NOT_A_PLUGIN,
        PluginError::IncompatibleVersion { .. } => codes::CLI_PLUGIN_VERSION,
        PluginError::Call { .. } => codes::CLI_PLUGIN_FAILED,
    }
}

/// CLI007–CLI009 for a plugin at `path`.
pub(super) fn plugin_error(
    sources: &mut SourceMap,
    path: &Path,
    e: &PluginError,
) -> Box<Diagnostic> {
    let file = sources.add(path.display().to_string(), String::new());
    let hint = match e {
        PluginError::NotLoadable { .. }
        | PluginError::NoEntryPoint { .. }
        | PluginError::BadApi { .. } => {
            "a PJRT plugin is a shared library that exports `GetPjrtApi`, such as \
             `xla_cpu_pjrt.so` from the `xla-cpu-pjrt` wheel"
                .to_string()
        }
        PluginError::IncompatibleVersion { .. } => format!(
            "faber's binding was written for PJRT C API {}.{}; install a plugin of major \
             version {} (`{SETUP_COMMAND}` installs one)",
            faber::xla::pjrt_api::API_MAJOR,
            faber::xla::pjrt_api::API_MINOR,
            faber::xla::pjrt_api::API_MAJOR
        ),
        PluginError::Call { .. } => {
            "the message is the plugin's own; check that the plugin fits this machine \
             (a GPU plugin needs its GPU and driver)"
                .to_string()
        }
    };
    Box::new(Diagnostic::error(code_of(e), e.to_string(), Span::new(file, 0, 0)).with_hint(hint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn discovery_prefers_xla_plugins_then_jax_plugins() {
        let root = std::env::temp_dir().join(format!("faber-devices-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let sp = root.join("env/lib/python3.11/site-packages");
        touch(&sp.join("jax_plugins/xla_cuda12/xla_cuda_plugin.so"));
        assert_eq!(
            plugin_in_env(&root.join("env")),
            Some(sp.join("jax_plugins/xla_cuda12/xla_cuda_plugin.so"))
        );
        touch(&sp.join("xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"));
        touch(&sp.join("xla_plugins/xla_cpu_pjrt/__init__.py"));
        assert_eq!(
            plugin_in_env(&root.join("env")),
            Some(sp.join("xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"))
        );
        // `.venv-xla` above the working directory is found; VIRTUAL_ENV wins over it.
        let project = root.join("project");
        let venv_sp = project.join(".venv-xla/lib/python3.12/site-packages");
        touch(&venv_sp.join("xla_plugins/p/p.so"));
        let sub = project.join("src/deep");
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(
            discover(None, &sub),
            Some(venv_sp.join("xla_plugins/p/p.so"))
        );
        assert_eq!(
            discover(Some(&root.join("env")), &sub),
            Some(sp.join("xla_plugins/xla_cpu_pjrt/xla_cpu_pjrt.so"))
        );
        assert_eq!(discover(Some(&root.join("nowhere")), &root), None);
        let _ = std::fs::remove_dir_all(&root);
    }
}
