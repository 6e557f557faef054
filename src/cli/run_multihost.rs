//! `faber run --backend xla --num-nodes N --node-id I --coordinator HOST:PORT`:
//! one run in N processes (issue 25, "multi-host"; src/xla/distributed.rs).
//! Process 0 serves a key-value store at the coordinator address; every process
//! joins (a process that does not arrive within `--join-timeout` seconds is
//! CLI016, naming it), creates its PJRT client with its node id and count and the
//! store behind the key-value callbacks, and checks that the client presents every
//! process's devices. A plugin whose client shows only its own process's devices —
//! the CPU plugin of `xla-cpu-pjrt` — cannot run one program over the processes:
//! CLI017, with what the plugin did (docs/xla.md).

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::Path;
use std::time::Duration;

use faber::diag::{codes, Diagnostic};
use faber::source::{SourceMap, Span};
use faber::xla::distributed::{self, DistError, NodeSpec};
use faber::xla::Plugin;

use super::devices::{find_plugin, plugin_error};

/// How long a process waits for the others without `--join-timeout`.
pub const DEFAULT_JOIN_TIMEOUT_S: f64 = 60.0;

/// The multi-process flags as given.
#[derive(Clone, Debug, Default)]
pub struct NodeFlags {
    pub num_nodes: Option<usize>,
    pub node_id: Option<usize>,
    pub coordinator: Option<String>,
    pub join_timeout: Option<f64>,
}

/// The run's [`NodeSpec`], `None` for a one-process run; a usage error (exit 2)
/// for flags that do not fit together.
pub fn spec(xla: bool, flags: &NodeFlags) -> Result<Option<NodeSpec>, String> {
    let any = flags.num_nodes.is_some()
        || flags.node_id.is_some()
        || flags.coordinator.is_some()
        || flags.join_timeout.is_some();
    if !any {
        return Ok(None);
    }
    if !xla {
        return Err(
            "error: `--num-nodes`, `--node-id`, `--coordinator` and `--join-timeout` run \
             one program over several processes; use them with `--backend xla`\n"
                .to_string(),
        );
    }
    let Some(num_nodes) = flags.num_nodes else {
        return Err(
            "error: `--node-id`, `--coordinator` and `--join-timeout` need `--num-nodes N`\n"
                .to_string(),
        );
    };
    if num_nodes == 1 {
        if flags.node_id.unwrap_or(0) != 0 {
            return Err("error: `--node-id` must be 0 with `--num-nodes 1`\n".to_string());
        }
        return Ok(None);
    }
    let (Some(node_id), Some(coordinator)) = (flags.node_id, flags.coordinator.as_deref()) else {
        return Err(format!(
            "error: `--num-nodes {num_nodes}` needs `--node-id I` (0 to {}) and \
             `--coordinator HOST:PORT` (where process 0 listens)\n",
            num_nodes - 1
        ));
    };
    if node_id >= num_nodes {
        return Err(format!(
            "error: `--node-id {node_id}` is not below `--num-nodes {num_nodes}` (ids are 0 to {})\n",
            num_nodes - 1
        ));
    }
    let coordinator = resolve(coordinator).ok_or_else(|| {
        format!(
            "error: `--coordinator {coordinator}` is not an address HOST:PORT \
             (such as 127.0.0.1:7470)\n"
        )
    })?;
    let timeout = Duration::from_secs_f64(flags.join_timeout.unwrap_or(DEFAULT_JOIN_TIMEOUT_S));
    Ok(Some(NodeSpec {
        num_nodes,
        node_id,
        coordinator,
        timeout,
    }))
}

fn resolve(text: &str) -> Option<SocketAddr> {
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Some(a);
    }
    text.to_socket_addrs().ok()?.next()
}

/// Meets the other processes and creates the multi-process client. On success the
/// run would go on over every process's devices; with a plugin that cannot (every
/// plugin faber has met) this is CLI017, and a process that never joins CLI016.
pub fn install(
    flag: Option<&Path>,
    spec: &NodeSpec,
    sources: &mut SourceMap,
) -> Result<super::run_xla::Backend, Box<Diagnostic>> {
    let path = find_plugin(flag, sources)?;
    let plugin = Plugin::load(&path).map_err(|e| plugin_error(sources, &path, &e))?;
    let plugin: &'static Plugin = Box::leak(Box::new(plugin));
    let session = distributed::join(spec, &std::process::id().to_string())
        .map_err(|e| dist_error(sources, spec, &path, e))?;
    let (client, kv_calls) = session
        .create_client(plugin, &[])
        .map_err(|e| dist_error(sources, spec, &path, e))?;
    let local = client
        .addressable_device_count()
        .map_err(|e| plugin_error(sources, &path, &e))?;
    let counts = session
        .meet("devices", &local.to_string())
        .map_err(|e| dist_error(sources, spec, &path, e))?;
    let expected: usize = counts.iter().filter_map(|c| c.parse::<usize>().ok()).sum();
    let checked = session.check_client(&client, expected, kv_calls);
    // Node 0 serves the store: it waits until every process is past its last
    // request before it may exit.
    session
        .finish()
        .map_err(|e| dist_error(sources, spec, &path, e))?;
    checked.map_err(|e| dist_error(sources, spec, &path, e))?;
    let all = client
        .devices()
        .map_err(|e| plugin_error(sources, &path, &e))?
        .len();
    let file = sources.add(path.display().to_string(), String::new());
    Err(Box::new(Diagnostic::error(
        codes::CLI_MULTIHOST_UNSUPPORTED,
        format!(
            "node {} of {}: the PJRT plugin presents the devices of all the processes ({all} \
             in all, {local} of them this process's; it called the key-value store {} \
             time(s)), but faber does not yet place one program over several processes' \
             devices",
            spec.node_id,
            spec.num_nodes,
            kv_calls.load(std::sync::atomic::Ordering::SeqCst)
        ),
        Span::new(file, 0, 0),
    )))
}

fn dist_error(
    sources: &mut SourceMap,
    spec: &NodeSpec,
    path: &Path,
    e: DistError,
) -> Box<Diagnostic> {
    let me = format!("node {} of {}", spec.node_id, spec.num_nodes);
    match e {
        DistError::Plugin(p) => plugin_error(sources, path, &p),
        DistError::SingleProcessPlugin { .. } => {
            let file = sources.add(path.display().to_string(), String::new());
            Box::new(
                Diagnostic::error(
                    codes::CLI_MULTIHOST_UNSUPPORTED,
                    format!("{me}: {e}"),
                    Span::new(file, 0, 0),
                )
                .with_hint(
                    "this plugin runs a program within one process: run one process with \
                     `--devices N` instead (docs/xla.md, \"Several processes\")",
                ),
            )
        }
        _ => {
            let file = sources.add("<command line>", String::new());
            Box::new(
                Diagnostic::error(
                    codes::CLI_MULTIHOST_JOIN,
                    format!("{me}: {e}"),
                    Span::new(file, 0, 0),
                )
                .with_hint(
                    "start every process with the same `--num-nodes` and `--coordinator` \
                     and its own `--node-id`; `--join-timeout SECONDS` sets the wait",
                ),
            )
        }
    }
}
