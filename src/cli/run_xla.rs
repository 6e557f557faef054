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
use faber::xla::{Device, Plugin};

use super::devices::{find_plugin, plugin_error};

/// The hook installed for one run, with the statistics it keeps.
pub struct Backend {
    _installed: Installed,
    pub stats: Rc<RefCell<Stats>>,
}

/// Loads the plugin (`--xla-plugin`, `FABER_PJRT_PLUGIN`, the search), opens device
/// 0 and installs the hook; CLI006–CLI009 when that fails.
pub fn install(flag: Option<&Path>, sources: &mut SourceMap) -> Result<Backend, Box<Diagnostic>> {
    let path = find_plugin(flag, sources)?;
    let plugin = Plugin::load(&path).map_err(|e| plugin_error(sources, &path, &e))?;
    // A plugin is never unloaded (src/xla/plugin.rs): the hook may hold it for the
    // rest of the process.
    let plugin: &'static Plugin = Box::leak(Box::new(plugin));
    let client = plugin
        .client()
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let device = Device::new(client, 0).map_err(|e| {
        let file = sources.add(path.display().to_string(), String::new());
        Box::new(Diagnostic::error(
            codes::CLI_PLUGIN_FAILED,
            e.to_string(),
            Span::new(file, 0, 0),
        ))
    })?;
    let stats = Rc::new(RefCell::new(Stats::default()));
    let hook = DeviceOffload::new(device, Rc::clone(&stats));
    Ok(Backend {
        _installed: offload::install(Box::new(hook)),
        stats,
    })
}

/// The `--verbose` summary: how many calls ran on the device, and the functions left
/// to the interpreter with why.
pub fn summary(stats: &Stats) -> String {
    let mut out = format!("xla: {} call(s) ran on the device\n", stats.offloaded);
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
        "xla: {} program(s) compiled in all (single ops included), {} execution(s)\n",
        stats.programs, moved.executions
    ));
    out.push_str(&format!(
        "xla: {} byte(s) copied to the device, {} byte(s) back to the host\n",
        moved.bytes_in, moved.bytes_out
    ));
    out
}
