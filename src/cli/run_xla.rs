//! `faber run --backend xla`: finds and loads the PJRT plugin as `faber devices`
//! does (src/cli/devices.rs), opens the device `--device N` (or `[run] device`, else
//! 0) names and installs the evaluator's call hook (src/xla/offload.rs) for the run:
//! calls of functions that lower to StableHLO run on the device, the rest in the
//! interpreter (docs/xla.md).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use faber::diag::{codes, Diagnostic};
use faber::eval::offload::{self, Installed};
use faber::ir::Program;
use faber::source::{SourceMap, Span};
use faber::xla::offload::{DeviceOffload, Stats};
use faber::xla::resident::Traffic;
use faber::xla::spmd::{Sharding, Spmd, SpmdError};
use faber::xla::{Client, Device, Plugin};

use super::devices::{client_options, find_plugin, plugin_error};

/// The hook installed for one run, with the statistics it keeps.
pub struct Backend {
    _installed: Installed,
    pub stats: Rc<RefCell<Stats>>,
    /// The device the run uses, for `--verbose`: `device 1 (cpu: CpuDevice(id=1))`.
    pub device: String,
}

/// Which device to run on: the ordinal (an index into the plugin's addressable
/// devices, as `faber devices` numbers them) and, when `[run] device` gave it,
/// where the manifest says so.
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceChoice {
    pub ordinal: usize,
    pub manifest: Option<Span>,
}

/// Loads the plugin (`--xla-plugin`, `FABER_PJRT_PLUGIN`, the search), opens the
/// chosen device and installs the hook; CLI006–CLI009 when that fails, CLI013 when
/// the plugin has no such device. With `devices` N > 1 the train step runs
/// data-parallel on devices 0..N (CLI014 when the plugin offers fewer). With
/// `cpu_devices` the client is created with the CPU plugin's `cpu_device_count`.
/// `sharding` (`[run.sharding]`) splits the train step's parameters it names over
/// those N devices (tensor parallel; CLI018 at the step for one that does not split).
pub fn install(
    flag: Option<&Path>,
    choice: DeviceChoice,
    devices: usize,
    cpu_devices: Option<usize>,
    sharding: Vec<(String, Sharding)>,
    sources: &mut SourceMap,
) -> Result<Backend, Box<Diagnostic>> {
    let path = find_plugin(flag, sources)?;
    let plugin = Plugin::load(&path).map_err(|e| plugin_error(sources, &path, &e))?;
    // A plugin is never unloaded (src/xla/plugin.rs): the hook may hold it for the
    // rest of the process.
    let plugin: &'static Plugin = Box::leak(Box::new(plugin));
    let client = plugin
        .client_with(&client_options(cpu_devices))
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let count = client
        .addressable_device_count()
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let ordinal = choice.ordinal;
    if ordinal >= count {
        let valid = match count {
            0 => "none".to_string(),
            1 => "0".to_string(),
            n => format!("0 to {}", n - 1),
        };
        let (from, span) = match choice.manifest {
            Some(at) => ("`[run] device`", at),
            None => {
                let file = sources.add("<command line>", String::new());
                ("`--device`", Span::new(file, 0, 0))
            }
        };
        return Err(Box::new(
            Diagnostic::error(
                codes::CLI_XLA_NO_DEVICE,
                format!(
                    "device {ordinal} (from {from}) is not a device of the PJRT plugin `{}`: \
                     it has {count} addressable device(s) ({valid})",
                    path.display()
                ),
                span,
            )
            .with_hint("`faber devices` lists the devices and their numbers"),
        ));
    }
    let described = describe(&client, ordinal);
    let device = Device::new(client.clone(), ordinal).map_err(|e| {
        let file = sources.add(path.display().to_string(), String::new());
        Box::new(Diagnostic::error(
            codes::CLI_PLUGIN_FAILED,
            e.to_string(),
            Span::new(file, 0, 0),
        ))
    })?;
    let spmd = data_parallel(&client, devices, &path, sources)?;
    let stats = Rc::new(RefCell::new(Stats::default()));
    let mut hook = DeviceOffload::new(device, Rc::clone(&stats));
    if let Some(spmd) = spmd {
        hook = hook.with_spmd(spmd).with_sharding(sharding);
    }
    Ok(Backend {
        _installed: offload::install(Box::new(hook)),
        stats,
        device: described,
    })
}

/// The usage error of `--devices` without `--backend xla`, if it is one.
pub fn devices_usage(xla: bool, devices: Option<usize>) -> Option<String> {
    (!xla && devices.is_some()).then(|| {
        "error: `--devices` runs the train step on several PJRT devices; use it with \
         `--backend xla`\n"
            .to_string()
    })
}

/// The device count of a run: `--devices`, else `[run] devices`, else 1.
pub fn devices_of(flag: Option<usize>, manifest: Option<&super::manifest::Manifest>) -> usize {
    flag.or(manifest.and_then(|m| m.devices)).unwrap_or(1)
}

/// The SPMD runner over devices 0..`devices` of `client` (src/xla/spmd.rs), `None`
/// for one device; CLI014 when the plugin offers fewer.
fn data_parallel<'p>(
    client: &Client<'p>,
    devices: usize,
    path: &Path,
    sources: &mut SourceMap,
) -> Result<Option<Spmd<'p>>, Box<Diagnostic>> {
    if devices <= 1 {
        return Ok(None);
    }
    Spmd::new(client.clone(), devices).map(Some).map_err(|e| {
        let file = sources.add(path.display().to_string(), String::new());
        let code = match e {
            SpmdError::TooManyDevices { .. } => codes::CLI_SPMD_DEVICES,
            _ => codes::CLI_PLUGIN_FAILED,
        };
        Box::new(
            Diagnostic::error(code, e.to_string(), Span::new(file, 0, 0))
                .with_hint("`faber devices` lists the devices the plugin offers"),
        )
    })
}

/// `device N (kind: description)`, or `device N` when the plugin cannot say.
fn describe(client: &faber::xla::Client, ordinal: usize) -> String {
    let info = client.addressable_device_id(ordinal).ok().and_then(|id| {
        client
            .devices()
            .ok()?
            .into_iter()
            .find(|d| i64::from(d.id) == id)
    });
    match info {
        Some(d) => format!("device {ordinal} ({}: {})", d.kind, d.description),
        None => format!("device {ordinal}"),
    }
}

/// The `--verbose` summary: the device, how many calls ran there, and the functions
/// left to the interpreter with where they are written (`file:line`) and why.
pub fn summary(backend: &Backend, program: &Program, sources: &SourceMap) -> String {
    let stats = backend.stats.borrow();
    let mut out = format!("xla: {}\n", backend.device);
    out.push_str(&format!(
        "xla: {} call(s) ran on the device\n",
        stats.offloaded
    ));
    out.push_str(&format!(
        "xla: compile cache: {} miss(es) (programs compiled), {} hit(s); the calls that \
         compiled took {:.1} ms\n",
        stats.compiled,
        stats.cache_hits,
        stats.compiling_calls.as_secs_f64() * 1000.0
    ));
    for (name, n) in &stats.by_function {
        out.push_str(&format!("xla: `{name}` ran on the device {n} time(s)\n"));
    }
    for (name, n) in &stats.data_parallel {
        out.push_str(&format!(
            "xla: `{name}` ran data-parallel on {} devices {n} time(s)\n",
            stats.devices
        ));
    }
    for (name, n) in &stats.replicated {
        out.push_str(&format!(
            "xla: `{name}` ran replicated on {} devices {n} time(s)\n",
            stats.devices
        ));
    }
    for (name, n) in &stats.split {
        out.push_str(&format!(
            "xla: `{name}` ran on {} devices with split values {n} time(s)\n",
            stats.devices
        ));
    }
    for (name, why) in &stats.declined {
        let at = location(program, sources, name)
            .map(|l| format!(" ({l})"))
            .unwrap_or_default();
        // The statement whose lowering failed, where the tracer knows it.
        let line = stats
            .declined_at
            .get(name)
            .and_then(|&span| span_line(sources, span))
            .map(|l| format!(" at {l}"))
            .unwrap_or_default();
        out.push_str(&format!("xla: `{name}`{at} runs on the CPU: {why}{line}\n"));
    }
    for (name, n) in &stats.ops {
        out.push_str(&format!(
            "xla: op `{name}` ran on the device {n} time(s) (an operand was there)\n"
        ));
    }
    for (name, why) in &stats.ops_declined {
        out.push_str(&format!("xla: op `{name}` runs on the CPU: {why}\n"));
    }
    let moved = Traffic::since(stats.start);
    out.push_str(&format!(
        "xla: {} program(s) compiled in all (single ops included), {} execution(s)\n",
        stats.programs, moved.executions
    ));
    out.push_str(&format!(
        "xla: {} byte(s) copied to the device, {} byte(s) back to the host\n",
        moved.bytes_in, moved.bytes_out
    ));
    // What the values kept on each device held at most (the parameters, the
    // optimizer's state, the step's results; not XLA's own scratch).
    let held = faber::xla::resident::held();
    if !held.is_empty() {
        let per: Vec<String> = held
            .iter()
            .map(|(id, h)| format!("{} byte(s) on device id {id}", h.peak))
            .collect();
        out.push_str(&format!(
            "xla: values kept on the devices held at most {}\n",
            per.join(", ")
        ));
    }
    out
}

/// `file:line` of the function named `name` (the names [`Stats`] records are the
/// IR's qualified ones), when exactly one function has it.
fn location(program: &Program, sources: &SourceMap, name: &str) -> Option<String> {
    let mut found = program.functions.iter().filter(|f| f.name == name);
    let f = found.next()?;
    if found.next().is_some() {
        return None;
    }
    span_line(sources, f.span)
}

/// `file:line` of `span`, when its file is in `sources`.
fn span_line(sources: &SourceMap, span: faber::source::Span) -> Option<String> {
    sources.files().nth(span.file.0 as usize)?;
    let (line, _) = sources.line_col(span);
    Some(format!("{}:{line}", sources.name(span.file)))
}
