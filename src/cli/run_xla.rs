//! `faber run --backend xla`: finds and loads the PJRT plugin as `faber devices`
//! does (src/cli/devices.rs), opens its first device and installs the evaluator's
//! call hook (src/xla/offload.rs) for the run: calls of functions that lower to
//! StableHLO run on the device, the rest in the interpreter (docs/xla.md).

use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

use faber::diag::{codes, Diagnostic};
use faber::eval::offload::{self, Installed};
use faber::source::{SourceMap, Span};
use faber::xla::offload::{DeviceOffload, Stats};
use faber::xla::resident::Traffic;
use faber::xla::spmd::{Spmd, SpmdError};
use faber::xla::{Client, Device, Plugin};

use super::devices::{find_plugin, plugin_error};

/// The hook installed for one run, with the statistics it keeps.
pub struct Backend {
    _installed: Installed,
    pub stats: Rc<RefCell<Stats>>,
}

/// Loads the plugin (`--xla-plugin`, `FABER_PJRT_PLUGIN`, the search), opens device
/// 0 and installs the hook; CLI006–CLI009 when that fails. With `devices` N > 1 the
/// train step runs data-parallel on devices 0..N (CLI014 when the plugin offers
/// fewer).
pub fn install(
    flag: Option<&Path>,
    devices: usize,
    sources: &mut SourceMap,
) -> Result<Backend, Box<Diagnostic>> {
    let path = find_plugin(flag, sources)?;
    let plugin = Plugin::load(&path).map_err(|e| plugin_error(sources, &path, &e))?;
    // A plugin is never unloaded (src/xla/plugin.rs): the hook may hold it for the
    // rest of the process.
    let plugin: &'static Plugin = Box::leak(Box::new(plugin));
    let client = plugin
        .client()
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let device = Device::new(client.clone(), 0).map_err(|e| {
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
        hook = hook.with_spmd(spmd);
    }
    Ok(Backend {
        _installed: offload::install(Box::new(hook)),
        stats,
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

/// The `--verbose` summary: how many calls ran on the device, and the functions left
/// to the interpreter with why.
pub fn summary(stats: &Stats) -> String {
    let mut out = format!("xla: {} call(s) ran on the device\n", stats.offloaded);
    for (name, n) in &stats.by_function {
        out.push_str(&format!("xla: `{name}` ran on the device {n} time(s)\n"));
    }
    for (name, n) in &stats.data_parallel {
        out.push_str(&format!(
            "xla: `{name}` ran data-parallel on {} devices {n} time(s)\n",
            stats.devices
        ));
    }
    for (name, why) in &stats.declined {
        out.push_str(&format!("xla: `{name}` runs on the CPU: {why}\n"));
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
        "xla: {} program(s) compiled, {} compile-cache hit(s), {} execution(s)\n",
        stats.compiles, stats.cache_hits, moved.executions
    ));
    out.push_str(&format!(
        "xla: {} byte(s) copied to the device, {} byte(s) back to the host\n",
        moved.bytes_in, moved.bytes_out
    ));
    out
}
