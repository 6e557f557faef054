//! Several processes, one run (issue 25, "multi-host"): the processes of a run
//! meet through a small key-value store that process 0 serves on a TCP address
//! (the coordinator; `127.0.0.1:PORT` in the tests), and each creates its PJRT
//! client with that store behind `PJRT_Client_Create`'s key-value callbacks
//! (`kv_get_callback`, `kv_put_callback`, `kv_try_get_callback`) and its node id
//! and count as create options (`node_id`, `num_nodes`: the int64 options and the
//! callbacks OpenXLA's GPU plugin reads, `xla/pjrt/c/pjrt_c_api_gpu_internal.cc`,
//! and hands to its client as the node's place and key-value store).
//!
//! The store is src/xla/kv_store.rs ([`KvServer`], [`KvClient`]: `put`, a blocking
//! `get` with a deadline, `try_get`), the callbacks src/xla/kv_callbacks.rs. This
//! file provides [`join`] (every process announces
//! itself and waits, bounded, for the others: a peer that never joins is
//! [`DistError::NeverJoined`] naming it), [`Session::create_client`] (the client
//! with the callbacks; it counts how often the plugin called them) and
//! [`Session::check_client`] (whether the client presents every process's devices,
//! which a plugin that runs one program over several processes must do).
//!
//! What the CPU plugin of the `xla-cpu-pjrt` wheel (PJRT C API 0.81) does with
//! all this, measured (tests/xla_multihost.rs, docs/xla.md): its `PJRT_Client_Create`
//! reads the one create option `cpu_device_count`, ignores other names and never
//! calls the key-value callbacks; its client lists only its own devices; its
//! collectives are in-process only (no Gloo or MPI implementation in the library).
//! So on that plugin a multi-process run stops after the processes have met, with
//! [`DistError::SingleProcessPlugin`].

use std::ffi::c_void;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::kv_callbacks::*;
use super::kv_store::*;
use super::plugin::{Client, Plugin, PluginError};

// ---------------------------------------------------------------------------
// The processes of a run.
// ---------------------------------------------------------------------------

/// This process's place in a multi-process run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// How many processes take part (≥ 2).
    pub num_nodes: usize,
    /// This one's number, `0..num_nodes`; 0 serves the store.
    pub node_id: usize,
    /// Where node 0 listens and the others connect.
    pub coordinator: SocketAddr,
    /// How long a process waits for the others at each meeting point.
    pub timeout: Duration,
}

/// Why a multi-process run could not go on.
#[derive(Debug)]
pub enum DistError {
    /// Node 0 could not listen at the coordinator address.
    Listen { addr: SocketAddr, reason: String },
    /// Some processes did not arrive at `stage` within the wait. `missing` are
    /// their node ids; `reached` says whether the coordinator answered at all.
    NeverJoined {
        stage: &'static str,
        missing: Vec<usize>,
        waited: Duration,
        coordinator: SocketAddr,
        reached: bool,
        reason: Option<String>,
    },
    /// The store broke in the middle of the run.
    Store(String),
    /// A PJRT call failed.
    Plugin(PluginError),
    /// The plugin's client does not present the other processes' devices: it
    /// cannot run one program over several processes.
    SingleProcessPlugin {
        /// `PJRT_Client_Devices` of this process's client.
        devices: usize,
        /// `PJRT_Client_AddressableDevices`.
        addressable: usize,
        /// The devices of all processes together, as each announced.
        expected: usize,
        /// How many times the plugin called the key-value callbacks.
        kv_calls: usize,
    },
}

impl fmt::Display for DistError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DistError::Listen { addr, reason } => {
                write!(f, "node 0 cannot serve the coordinator at {addr}: {reason}")
            }
            DistError::NeverJoined {
                stage,
                missing,
                waited,
                coordinator,
                reached,
                reason,
            } => {
                let who: Vec<String> = missing.iter().map(|n| format!("node {n}")).collect();
                write!(
                    f,
                    "{} never {stage} within {:.1} s (coordinator {coordinator}",
                    who.join(", "),
                    waited.as_secs_f64()
                )?;
                if *reached {
                    write!(f, ")")
                } else {
                    write!(f, ", which never answered")?;
                    if let Some(r) = reason {
                        write!(f, ": {r}")?;
                    }
                    write!(f, ")")
                }
            }
            DistError::Store(m) => write!(f, "{m}"),
            DistError::Plugin(e) => write!(f, "{e}"),
            DistError::SingleProcessPlugin {
                devices,
                addressable,
                expected,
                kv_calls,
            } => write!(
                f,
                "the PJRT plugin cannot run one program over several processes: created \
                 with `node_id`/`num_nodes` and the key-value callbacks, its client lists \
                 {devices} device(s), {addressable} of them this process's, where the \
                 processes together have {expected}; it called the key-value store {kv_calls} \
                 time(s)"
            ),
        }
    }
}

impl std::error::Error for DistError {}

/// A process that has met the others ([`join`]).
pub struct Session {
    spec: NodeSpec,
    kv: KvClient,
    /// Node 0's server, kept for the life of the session.
    _server: Option<KvServer>,
    /// What each node announced when it joined, by node id.
    pub announced: Vec<String>,
}

/// The key faber's own entries live under (the plugin's under `pjrt/`).
fn key(parts: &str) -> Vec<u8> {
    format!("faber/{parts}").into_bytes()
}

/// Starts the store when this is node 0, announces this process (`announce`, a
/// short text: its device count, say) and waits until every node has: a node
/// missing after `spec.timeout` is [`DistError::NeverJoined`].
pub fn join(spec: &NodeSpec, announce: &str) -> Result<Session, DistError> {
    let server = if spec.node_id == 0 {
        Some(
            KvServer::start(spec.coordinator).map_err(|e| DistError::Listen {
                addr: spec.coordinator,
                reason: e.to_string(),
            })?,
        )
    } else {
        None
    };
    let kv = KvClient::new(spec.coordinator);
    let session = Session {
        spec: spec.clone(),
        kv,
        _server: server,
        announced: Vec::new(),
    };
    let announced = session.meet("joined", announce)?;
    Ok(Session {
        announced,
        ..session
    })
}

impl Session {
    /// The node this process is.
    pub fn spec(&self) -> &NodeSpec {
        &self.spec
    }

    /// The store.
    pub fn kv(&self) -> &KvClient {
        &self.kv
    }

    /// A meeting point: this node stores `value` under `stage/<id>` and waits for
    /// every node's, returned by node id.
    pub fn meet(&self, stage: &'static str, value: &str) -> Result<Vec<String>, DistError> {
        let start = Instant::now();
        let deadline = start + self.spec.timeout;
        // How the message says what a missing node did not do.
        let verb = if stage == "joined" {
            "joined"
        } else {
            "reached the same point of the run"
        };
        let never =
            |missing: Vec<usize>, reached: bool, reason: Option<String>| DistError::NeverJoined {
                stage: verb,
                missing,
                waited: start.elapsed(),
                coordinator: self.spec.coordinator,
                reached,
                reason,
            };
        let me = self.spec.node_id;
        let others: Vec<usize> = (0..self.spec.num_nodes).filter(|&n| n != me).collect();
        match self
            .kv
            .put(&key(&format!("{stage}/{me}")), value.as_bytes(), deadline)
        {
            Ok(()) => {}
            Err(KvError::Unreachable { reason, .. }) => {
                return Err(never(vec![0], false, Some(reason)))
            }
            Err(e) => return Err(DistError::Store(e.to_string())),
        }
        let mut values = vec![String::new(); self.spec.num_nodes];
        values[me] = value.to_string();
        let mut missing = Vec::new();
        for &n in &others {
            match self.kv.get(&key(&format!("{stage}/{n}")), deadline) {
                Ok(Some(v)) => values[n] = String::from_utf8_lossy(&v).into_owned(),
                Ok(None) => missing.push(n),
                Err(KvError::Unreachable { reason, .. }) => {
                    return Err(never(vec![0], false, Some(reason)))
                }
                Err(e) => return Err(DistError::Store(e.to_string())),
            }
        }
        if missing.is_empty() {
            Ok(values)
        } else {
            Err(never(missing, true, None))
        }
    }

    /// The end of the processes' exchange: each node past its last request says so,
    /// and node 0, which serves the store, waits (bounded) for all of them before
    /// it goes on and may exit.
    pub fn finish(&self) -> Result<(), DistError> {
        let start = Instant::now();
        let deadline = start + self.spec.timeout;
        let me = self.spec.node_id;
        let stage = "reached the end of the exchange";
        let failed =
            |missing: Vec<usize>, reached: bool, reason: Option<String>| DistError::NeverJoined {
                stage,
                missing,
                waited: start.elapsed(),
                coordinator: self.spec.coordinator,
                reached,
                reason,
            };
        if me != 0 {
            return match self.kv.put(&key(&format!("done/{me}")), b"", deadline) {
                Ok(()) => Ok(()),
                Err(KvError::Unreachable { reason, .. }) => {
                    Err(failed(vec![0], false, Some(reason)))
                }
                Err(e) => Err(DistError::Store(e.to_string())),
            };
        }
        let mut missing = Vec::new();
        for n in 1..self.spec.num_nodes {
            match self.kv.get(&key(&format!("done/{n}")), deadline) {
                Ok(Some(_)) => {}
                Ok(None) => missing.push(n),
                Err(e) => return Err(DistError::Store(e.to_string())),
            }
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(failed(missing, true, None))
        }
    }

    /// Creates this process's client with the run's options: `node_id` and
    /// `num_nodes` (int64 create options) beside `options`, and the store behind
    /// the key-value callbacks (keys under `pjrt/`). Returns the client and the
    /// count of the plugin's calls to the callbacks so far (it keeps counting).
    pub fn create_client<'p>(
        &self,
        plugin: &'p Plugin,
        options: &[(&str, i64)],
    ) -> Result<(Client<'p>, &'static AtomicUsize), DistError> {
        let id = i64::try_from(self.spec.node_id).unwrap_or(i64::MAX);
        let count = i64::try_from(self.spec.num_nodes).unwrap_or(i64::MAX);
        let mut all: Vec<(&str, i64)> = vec![("node_id", id), ("num_nodes", count)];
        all.extend_from_slice(options);
        // The plugin may call the callbacks from its threads for as long as the
        // client lives, which is the rest of the process: the context is leaked.
        let context: &'static KvContext = Box::leak(Box::new(KvContext {
            kv: self.kv.clone(),
            calls: AtomicUsize::new(0),
            timeout: self.spec.timeout,
        }));
        let arg = (context as *const KvContext).cast_mut().cast::<c_void>();
        let hooks = KvHooks {
            get: Some(kv_get),
            put: Some(kv_put),
            try_get: Some(kv_try_get),
            user_arg: arg,
        };
        let client = plugin
            .client_with_kv(&all, &hooks)
            .map_err(DistError::Plugin)?;
        Ok((client, &context.calls))
    }

    /// Whether `client` presents the devices of every process, `expected` in all:
    /// [`DistError::SingleProcessPlugin`] when it lists fewer.
    pub fn check_client(
        &self,
        client: &Client<'_>,
        expected: usize,
        kv_calls: &AtomicUsize,
    ) -> Result<(), DistError> {
        let devices = client.devices().map_err(DistError::Plugin)?.len();
        let addressable = client
            .addressable_device_count()
            .map_err(DistError::Plugin)?;
        if devices >= expected && devices > addressable {
            return Ok(());
        }
        Err(DistError::SingleProcessPlugin {
            devices,
            addressable,
            expected,
            kv_calls: kv_calls.load(Ordering::SeqCst),
        })
    }
}

/// `text` (annotated for `device_ids.len()` partitions, src/xla/spmd.rs) compiled
/// with partition `i` on the device of global id `device_ids[i]`: the device
/// assignment of a multi-process run, where the ids of the other processes'
/// devices appear beside this one's. A plugin that knows only its own devices
/// refuses the ids it does not have.
pub fn compile_global(
    client: &Client<'_>,
    text: &str,
    device_ids: &[i64],
) -> Result<super::Executable, PluginError> {
    let options = super::proto::SpmdOptions {
        device_ids: device_ids.to_vec(),
        propagate_to_output: false,
    };
    super::exec::compile_encoded(&client.handle, text, &options.encode())
}

#[cfg(test)]
mod tests {
    use super::super::pjrt_api::{self as c, StructSize};
    use super::*;
    use std::ffi::{c_char, c_int};
    use std::mem::offset_of;
    use std::net::TcpListener;
    use std::sync::Mutex;

    /// Read off `pjrt_c_api.h` 0.81 with `offsetof` / `PJRT_STRUCT_SIZE` (gcc,
    /// x86-64 Linux).
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn layouts_match_the_header_on_lp64() {
        assert_eq!(offset_of!(KvGetArgs, key), 16);
        assert_eq!(offset_of!(KvGetArgs, key_size), 24);
        assert_eq!(offset_of!(KvGetArgs, timeout_in_ms), 32);
        assert_eq!(offset_of!(KvGetArgs, callback_error), 40);
        assert_eq!(offset_of!(KvGetArgs, user_arg), 48);
        assert_eq!(offset_of!(KvGetArgs, value), 56);
        assert_eq!(offset_of!(KvGetArgs, value_size), 64);
        assert_eq!(offset_of!(KvGetArgs, value_deleter_callback), 72);
        assert_eq!(KvGetArgs::SIZE, 80);
        assert_eq!(offset_of!(KvTryGetArgs, callback_error), 32);
        assert_eq!(offset_of!(KvTryGetArgs, user_arg), 40);
        assert_eq!(offset_of!(KvTryGetArgs, value), 48);
        assert_eq!(offset_of!(KvTryGetArgs, value_deleter_callback), 64);
        assert_eq!(KvTryGetArgs::SIZE, 72);
        assert_eq!(offset_of!(KvPutArgs, value), 32);
        assert_eq!(offset_of!(KvPutArgs, value_size), 40);
        assert_eq!(offset_of!(KvPutArgs, callback_error), 48);
        assert_eq!(offset_of!(KvPutArgs, user_arg), 56);
        assert_eq!(KvPutArgs::SIZE, 64);
        assert_eq!(offset_of!(c::ClientCreateArgs, kv_get_callback), 32);
        assert_eq!(offset_of!(c::ClientCreateArgs, kv_put_callback), 48);
        assert_eq!(offset_of!(c::ClientCreateArgs, kv_try_get_callback), 72);
    }

    fn server() -> (KvServer, KvClient) {
        let s = KvServer::start("127.0.0.1:0".parse().expect("an address")).expect("listens");
        let c = KvClient::new(s.addr());
        (s, c)
    }

    fn soon(ms: u64) -> Instant {
        Instant::now() + Duration::from_millis(ms)
    }

    #[test]
    fn put_get_try_get() {
        let (_s, kv) = server();
        assert_eq!(kv.try_get(b"k", soon(2000)).expect("try"), None);
        kv.put(b"k", b"v\0\xff", soon(2000)).expect("put");
        assert_eq!(
            kv.get(b"k", soon(2000)).expect("get"),
            Some(b"v\0\xff".to_vec())
        );
        assert_eq!(
            kv.try_get(b"k", soon(2000)).expect("try"),
            Some(b"v\0\xff".to_vec())
        );
        // An empty value is a value.
        kv.put(b"e", b"", soon(2000)).expect("put");
        assert_eq!(kv.get(b"e", soon(2000)).expect("get"), Some(Vec::new()));
    }

    #[test]
    fn get_waits_for_a_later_put_and_gives_up_at_its_deadline() {
        let (_s, kv) = server();
        let writer = kv.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            writer.put(b"late", b"1", soon(2000))
        });
        assert_eq!(
            kv.get(b"late", soon(5000)).expect("get"),
            Some(b"1".to_vec())
        );
        assert!(t.join().expect("the writer").is_ok());
        let start = Instant::now();
        assert_eq!(kv.get(b"never", soon(200)).expect("get"), None);
        let waited = start.elapsed();
        assert!(waited >= Duration::from_millis(150), "{waited:?}");
        assert!(waited < Duration::from_secs(3), "{waited:?}");
    }

    #[test]
    fn two_nodes_meet_and_a_missing_one_is_named() {
        let port = {
            let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().expect("addr").port()
        };
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
        let spec = move |id| NodeSpec {
            num_nodes: 2,
            node_id: id,
            coordinator: addr,
            timeout: Duration::from_secs(10),
        };
        let one = std::thread::spawn(move || join(&spec(1), "one").map(|s| s.announced));
        let zero = join(&spec(0), "zero").expect("node 0 joins");
        assert_eq!(zero.announced, ["zero", "one"]);
        assert_eq!(
            one.join().expect("node 1").expect("node 1 joins"),
            ["zero", "one"]
        );

        // Three expected, two come: node 2 is named after the wait.
        let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr3 = l.local_addr().expect("addr");
        drop(l);
        let spec3 = move |id| NodeSpec {
            num_nodes: 3,
            node_id: id,
            coordinator: addr3,
            timeout: Duration::from_millis(300),
        };
        let one = std::thread::spawn(move || join(&spec3(1), "one").err());
        let err = join(&spec3(0), "zero").err().expect("node 2 never joins");
        match err {
            DistError::NeverJoined {
                missing, reached, ..
            } => {
                assert_eq!(missing, [2]);
                assert!(reached);
            }
            other => panic!("{other}"),
        }
        assert!(one.join().expect("node 1").is_some());
    }

    /// What the fake `PJRT_CallbackError` below was last asked to make.
    static LAST_ERROR: Mutex<Option<(c_int, String)>> = Mutex::new(None);

    unsafe extern "C" fn fake_error(code: c_int, m: *const c_char, n: usize) -> *mut c::Error {
        // SAFETY: the callbacks pass a message of `n` bytes.
        let text = unsafe { std::slice::from_raw_parts(m.cast::<u8>(), n) };
        if let Ok(mut last) = LAST_ERROR.lock() {
            *last = Some((code, String::from_utf8_lossy(text).into_owned()));
        }
        // Any non-null pointer: the callbacks only pass it on.
        std::ptr::NonNull::<c::Error>::dangling().as_ptr()
    }

    /// The callbacks driven as a plugin drives them: a put, a get that finds the
    /// value (copied into `malloc`ed memory freed by the deleter it sets), a
    /// try-get of a missing key (NOT_FOUND through `callback_error`) and a get
    /// that waits out its timeout (DEADLINE_EXCEEDED).
    #[test]
    fn the_callbacks_reach_the_store() {
        let (_s, kv) = server();
        let ctx = KvContext {
            kv: kv.clone(),
            calls: AtomicUsize::new(0),
            timeout: Duration::from_secs(5),
        };
        let arg = (&ctx as *const KvContext).cast_mut().cast::<c_void>();
        let make: CallbackError = Some(fake_error);
        let k = b"topology";
        let v = b"\x01\x02\x00\x03";

        let mut put = KvPutArgs::new();
        put.key = k.as_ptr().cast();
        put.key_size = k.len();
        put.value = v.as_ptr().cast();
        put.value_size = v.len();
        put.callback_error = &make;
        put.user_arg = arg;
        // SAFETY: a live, filled args struct.
        assert!(unsafe { kv_put((&mut put as *mut KvPutArgs).cast()) }.is_null());
        // The plugin's keys live under `pjrt/`.
        assert_eq!(
            kv.try_get(b"pjrt/topology", soon(2000)).expect("try"),
            Some(v.to_vec())
        );

        let mut get = KvGetArgs::new();
        get.key = k.as_ptr().cast();
        get.key_size = k.len();
        get.timeout_in_ms = 2000;
        get.callback_error = &make;
        get.user_arg = arg;
        // SAFETY: as above.
        assert!(unsafe { kv_get((&mut get as *mut KvGetArgs).cast()) }.is_null());
        // SAFETY: the callback set `value_size` bytes at `value`.
        let got = unsafe { std::slice::from_raw_parts(get.value.cast::<u8>(), get.value_size) };
        assert_eq!(got, v);
        let deleter = get.value_deleter_callback.expect("a deleter");
        // SAFETY: the value the callback allocated, freed once by its deleter.
        unsafe { deleter(get.value) };

        let mut try_get = KvTryGetArgs::new();
        let missing = b"absent";
        try_get.key = missing.as_ptr().cast();
        try_get.key_size = missing.len();
        try_get.callback_error = &make;
        try_get.user_arg = arg;
        // SAFETY: as above.
        assert!(!unsafe { kv_try_get((&mut try_get as *mut KvTryGetArgs).cast()) }.is_null());
        let last = LAST_ERROR.lock().expect("lock").clone();
        assert_eq!(last.map(|l| l.0), Some(CODE_NOT_FOUND));

        let mut late = KvGetArgs::new();
        late.key = missing.as_ptr().cast();
        late.key_size = missing.len();
        late.timeout_in_ms = 100;
        late.callback_error = &make;
        late.user_arg = arg;
        // SAFETY: as above.
        assert!(!unsafe { kv_get((&mut late as *mut KvGetArgs).cast()) }.is_null());
        let last = LAST_ERROR.lock().expect("lock").clone();
        assert_eq!(last.map(|l| l.0), Some(CODE_DEADLINE_EXCEEDED));
        assert_eq!(ctx.calls.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn no_coordinator_is_a_bounded_wait() {
        let l = TcpListener::bind("127.0.0.1:0").expect("a free port");
        let addr = l.local_addr().expect("addr");
        drop(l);
        let spec = NodeSpec {
            num_nodes: 2,
            node_id: 1,
            coordinator: addr,
            timeout: Duration::from_millis(300),
        };
        let start = Instant::now();
        let err = join(&spec, "one").err().expect("nobody serves");
        assert!(start.elapsed() < Duration::from_secs(5));
        let text = err.to_string();
        assert!(text.contains("node 0 never joined"), "{text}");
        assert!(text.contains("never answered"), "{text}");
    }
}
