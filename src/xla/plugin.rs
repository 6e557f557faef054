//! Loading a PJRT plugin and asking it for its devices: [`Plugin::load`] opens the
//! shared library, finds `GetPjrtApi`, checks the API version and initialises the
//! plugin; [`Plugin::client`] creates a client, whose [`Client::devices`] lists what
//! the plugin offers. Every `PJRT_Error` becomes a [`PluginError::Call`] carrying
//! the plugin's own message (read with `PJRT_Error_Message`, then destroyed).
//!
//! The library is never closed: a PJRT plugin starts threads and registers
//! process-wide state that outlive its client, and unloading it under them is
//! undefined behaviour. One plugin is loaded per process, so nothing accumulates.

use std::ffi::{c_char, CStr};
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::pjrt_api::{self as c, StructSize};

/// Why a plugin could not be loaded or used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PluginError {
    /// The dynamic loader refused the file (missing, not a shared library, wrong
    /// architecture, missing dependencies); `reason` is its message.
    NotLoadable { path: PathBuf, reason: String },
    /// A shared library that does not export `GetPjrtApi`.
    NoEntryPoint { path: PathBuf },
    /// `GetPjrtApi` returned null, or a `PJRT_Api` smaller than the fields faber reads.
    BadApi { path: PathBuf, reason: String },
    /// A plugin built for a PJRT C API major version faber was not written for.
    IncompatibleVersion {
        path: PathBuf,
        major: i32,
        minor: i32,
    },
    /// A PJRT call returned an error; `call` names it (`PJRT_Client_Create`);
    /// `code` is the error's `PJRT_Error_Code` (`PJRT_Error_GetCode`; 0 when the
    /// plugin gives none, or the error is faber's own).
    Call {
        call: &'static str,
        message: String,
        code: i32,
    },
}

impl fmt::Display for PluginError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PluginError::NotLoadable { path, reason } => {
                write!(f, "cannot load `{}`: {reason}", path.display())
            }
            PluginError::NoEntryPoint { path } => write!(
                f,
                "`{}` is a shared library but not a PJRT plugin: it does not export `GetPjrtApi`",
                path.display()
            ),
            PluginError::BadApi { path, reason } => {
                write!(
                    f,
                    "`{}` is not a usable PJRT plugin: {reason}",
                    path.display()
                )
            }
            PluginError::IncompatibleVersion { path, major, minor } => write!(
                f,
                "`{}` implements PJRT C API {major}.{minor}; faber supports major version {}",
                path.display(),
                c::API_MAJOR
            ),
            PluginError::Call { call, message, .. } => write!(f, "{call} failed: {message}"),
        }
    }
}

impl std::error::Error for PluginError {}

/// The part of the work a failed PJRT call belongs to; the command line gives each
/// its own diagnostic code (src/cli/devices.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Loading, initialising, creating a client, listing devices.
    Setup,
    /// Compiling a program (`PJRT_Client_Compile` and asking the result about
    /// itself).
    Compile,
    /// Moving arrays to and from a device and executing (src/xla/exec.rs).
    Execute,
}

impl PluginError {
    /// The stage of the failed call.
    pub fn stage(&self) -> Stage {
        let PluginError::Call { call, .. } = self else {
            return Stage::Setup;
        };
        match *call {
            "PJRT_Client_Compile"
            | "PJRT_LoadedExecutable_GetExecutable"
            | "PJRT_Executable_NumOutputs"
            | "PJRT_Executable_Destroy" => Stage::Compile,
            c if c.starts_with("PJRT_Buffer_")
                || c.starts_with("PJRT_Event_")
                || c == "PJRT_Client_BufferFromHostBuffer"
                || c == "PJRT_LoadedExecutable_Execute" =>
            {
                Stage::Execute
            }
            _ => Stage::Setup,
        }
    }

    /// Whether the plugin ran out of memory: its error code is
    /// `RESOURCE_EXHAUSTED`, or (for a plugin without `PJRT_Error_GetCode`) its
    /// message says so (`RESOURCE_EXHAUSTED: Out of memory while trying to
    /// allocate …`, the form XLA's allocators write).
    pub fn is_out_of_memory(&self) -> bool {
        let PluginError::Call { message, code, .. } = self else {
            return false;
        };
        *code == c::ERROR_CODE_RESOURCE_EXHAUSTED || says_out_of_memory(message)
    }
}

/// Whether a plugin's message says it ran out of memory ("resource exhausted", "out
/// of (device) memory"): how an error is classified when its code is unknown, as for
/// a plugin without `PJRT_Error_GetCode` or a failure that reaches the command line
/// as text only (a device-resident tensor's copy to the host, src/main.rs).
pub fn says_out_of_memory(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "resource_exhausted",
        "resource exhausted",
        "out of memory",
        "out of device memory",
    ]
    .iter()
    .any(|w| m.contains(w))
}

/// A loaded, initialised PJRT plugin.
pub struct Plugin {
    path: PathBuf,
    api: &'static c::Api,
}

/// One device as the plugin describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `PJRT_DeviceDescription_Id`: unique among the client's devices.
    pub id: i32,
    /// `PJRT_DeviceDescription_Kind` (`cpu`, `NVIDIA H100 80GB HBM3`, …).
    pub kind: String,
    /// `PJRT_DeviceDescription_ToString`: the plugin's short description.
    pub description: String,
}

/// A PJRT client; destroyed (`PJRT_Client_Destroy`) when it and everything made
/// with it (executables, buffers: src/xla/exec.rs) are dropped. A clone shares the
/// one PJRT client.
#[derive(Clone)]
pub struct Client<'p> {
    plugin: &'p Plugin,
    pub(super) handle: Rc<ClientHandle>,
}

/// The raw client with the plugin's table, shared by the [`Client`] and the
/// executables and buffers made with it, so the client is destroyed after them.
pub(super) struct ClientHandle {
    pub(super) api: &'static c::Api,
    pub(super) raw: *mut c::Client,
}

/// OpenXLA's plugins log through TSL, which prints its warnings on stderr (the
/// GSPMD partitioner's deprecation notice at every SPMD compile, absl's note that
/// logging is not initialised): noise for a faber user, who can do nothing about
/// them. Unless the environment says otherwise, the plugin's log shows errors only
/// (`TF_CPP_MIN_LOG_LEVEL=2`, read by TSL when it first logs); `TF_CPP_MIN_LOG_LEVEL=0`
/// in the environment shows everything (docs/xla.md).
fn quiet_plugin_log() {
    const VAR: &str = "TF_CPP_MIN_LOG_LEVEL";
    if std::env::var_os(VAR).is_none() {
        // Set once, before the plugin is loaded: faber's own threads never read the
        // environment.
        std::env::set_var(VAR, "2");
    }
}

impl Plugin {
    /// Loads the plugin at `path`, checks its API version and runs
    /// `PJRT_Plugin_Initialize`.
    pub fn load(path: &Path) -> Result<Plugin, PluginError> {
        quiet_plugin_log();
        let entry = dl::open_entry(path, "GetPjrtApi")?;
        // SAFETY: `GetPjrtApi` is the plugin's documented entry point with the C
        // signature `const PJRT_Api* GetPjrtApi(void)`; it takes no arguments and
        // returns a pointer to a static table (or, for a broken plugin, null).
        let api_ptr = unsafe {
            let get: c::GetPjrtApi =
                std::mem::transmute::<*mut std::ffi::c_void, c::GetPjrtApi>(entry);
            get()
        };
        let bad = |reason: String| PluginError::BadApi {
            path: path.to_path_buf(),
            reason,
        };
        if api_ptr.is_null() {
            return Err(bad("`GetPjrtApi` returned null".to_string()));
        }
        // Read the leading fields every version shares before trusting the rest.
        // SAFETY: a non-null `GetPjrtApi` result points at a `PJRT_Api`, which
        // starts with `struct_size`, `extension_start` and `PJRT_Api_Version` in
        // every version of the header; the table is static, so `'static` holds.
        let (size, version) = unsafe {
            let head = api_ptr.cast::<usize>();
            let version = api_ptr
                .cast::<u8>()
                .add(std::mem::offset_of!(c::Api, pjrt_api_version))
                .cast::<c::ApiVersion>();
            (head.read(), version.read())
        };
        if version.major_version != c::API_MAJOR {
            return Err(PluginError::IncompatibleVersion {
                path: path.to_path_buf(),
                major: version.major_version,
                minor: version.minor_version,
            });
        }
        if size < c::API_PREFIX_SIZE {
            return Err(bad(format!(
                "its PJRT_Api is {size} bytes, fewer than the {} faber reads",
                c::API_PREFIX_SIZE
            )));
        }
        // SAFETY: the table holds at least `API_PREFIX_SIZE` bytes (checked above),
        // laid out as `c::Api` for this major version, and lives as long as the
        // library, which is never unloaded.
        let api: &'static c::Api = unsafe { &*api_ptr };
        if api.error_destroy.is_none() || api.error_message.is_none() {
            return Err(bad(
                "it has no PJRT_Error_Message/PJRT_Error_Destroy".to_string()
            ));
        }
        let plugin = Plugin {
            path: path.to_path_buf(),
            api,
        };
        let mut args = c::PluginInitializeArgs::new();
        plugin.call("PJRT_Plugin_Initialize", api.plugin_initialize, &mut args)?;
        Ok(plugin)
    }

    /// The path it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The PJRT C API version the plugin implements, (major, minor).
    pub fn api_version(&self) -> (i32, i32) {
        let v = self.api.pjrt_api_version;
        (v.major_version, v.minor_version)
    }

    /// Creates a client with no options (`PJRT_Client_Create`).
    pub fn client(&self) -> Result<Client<'_>, PluginError> {
        self.client_with(&[])
    }

    /// Creates a client with integer options (`PJRT_Client_Create`'s
    /// `create_options`, each a `PJRT_NamedValue` of type int64): the CPU plugin
    /// takes `cpu_device_count`, the number of host devices it presents (4 without
    /// it). What a plugin does with a name it does not know is its own affair.
    pub fn client_with(&self, options: &[(&str, i64)]) -> Result<Client<'_>, PluginError> {
        self.create_client(options, None)
    }

    /// [`Plugin::client_with`] with key-value callbacks for a multi-process client
    /// (src/xla/distributed.rs).
    pub fn client_with_kv(
        &self,
        options: &[(&str, i64)],
        kv: &super::kv_callbacks::KvHooks,
    ) -> Result<Client<'_>, PluginError> {
        self.create_client(options, Some(kv))
    }

    fn create_client(
        &self,
        options: &[(&str, i64)],
        kv: Option<&super::kv_callbacks::KvHooks>,
    ) -> Result<Client<'_>, PluginError> {
        let named: Vec<c::NamedValue> = options
            .iter()
            .map(|(name, v)| {
                let mut n = c::NamedValue::new();
                n.name = name.as_ptr().cast();
                n.name_size = name.len();
                n.type_ = c::NAMED_VALUE_INT64;
                n.int64_value = *v;
                n.value_size = 1;
                n
            })
            .collect();
        let mut args = c::ClientCreateArgs::new();
        if !named.is_empty() {
            args.create_options = named.as_ptr();
            args.num_options = named.len();
        }
        if let Some(kv) = kv {
            args.kv_get_callback = kv.get;
            args.kv_get_user_arg = kv.user_arg;
            args.kv_put_callback = kv.put;
            args.kv_put_user_arg = kv.user_arg;
            args.kv_try_get_callback = kv.try_get;
            args.kv_try_get_user_arg = kv.user_arg;
        }
        self.call("PJRT_Client_Create", self.api.client_create, &mut args)?;
        if args.client.is_null() {
            return Err(PluginError::Call {
                call: "PJRT_Client_Create",
                message: "the plugin returned no client".to_string(),
                code: 0,
            });
        }
        Ok(Client {
            plugin: self,
            handle: Rc::new(ClientHandle {
                api: self.api,
                raw: args.client,
            }),
        })
    }

    /// [`call`] with this plugin's table.
    fn call<A>(&self, name: &'static str, f: c::Call<A>, args: &mut A) -> Result<(), PluginError> {
        call(self.api, name, f, args)
    }
}

/// Calls the entry point `f` of `api` with `args`, turning a returned `PJRT_Error`
/// into [`PluginError::Call`]. A missing entry point is an error too.
pub(super) fn call<A>(
    api: &c::Api,
    name: &'static str,
    f: c::Call<A>,
    args: &mut A,
) -> Result<(), PluginError> {
    let Some(f) = f else {
        return Err(PluginError::Call {
            call: name,
            message: "the plugin does not implement it".to_string(),
            code: 0,
        });
    };
    // SAFETY: `f` comes from the plugin's `PJRT_Api` at the slot whose header
    // type takes `A*` (the typed fields of `c::Api`); `args` is a valid,
    // exclusively borrowed `A` with `struct_size` set by `StructSize::new`.
    let error = unsafe { f(args) };
    if error.is_null() {
        Ok(())
    } else {
        let (message, code) = take_error(api, error);
        Err(PluginError::Call {
            call: name,
            message,
            code,
        })
    }
}

/// The `PJRT_Error_Code` of the live `error`, 0 when the plugin cannot say.
fn error_code(api: &c::Api, error: *mut c::Error) -> i32 {
    let Some(f) = api.error_get_code else {
        return 0;
    };
    let mut g = c::ErrorGetCodeArgs::new();
    g.error = error;
    // SAFETY: `error` is a live `PJRT_Error` the plugin returned; `g` is a valid
    // `PJRT_Error_GetCode_Args` with `struct_size` set.
    let failed = unsafe { f(&mut g) };
    if failed.is_null() {
        return g.code;
    }
    // The call's own error is destroyed without asking it anything more.
    if let Some(d) = api.error_destroy {
        let mut a = c::ErrorDestroyArgs::new();
        a.error = failed;
        // SAFETY: `failed` is a live error just returned, destroyed once.
        unsafe { d(&mut a) };
    }
    0
}

/// The message and code of `error`, which is then destroyed.
fn take_error(api: &c::Api, error: *mut c::Error) -> (String, i32) {
    let code = error_code(api, error);
    let mut m = c::ErrorMessageArgs::new();
    m.error = error;
    let message = match api.error_message {
        Some(f) => {
            // SAFETY: `error` is a live `PJRT_Error` the plugin just returned;
            // `m` is a valid `PJRT_Error_Message_Args`.
            unsafe { f(&mut m) };
            // SAFETY: the plugin sets `message`/`message_size` to a buffer owned
            // by `error`, which is still alive here.
            unsafe { text(m.message, m.message_size) }
        }
        None => String::new(),
    };
    if let Some(f) = api.error_destroy {
        let mut d = c::ErrorDestroyArgs::new();
        d.error = error;
        // SAFETY: `error` is live and destroyed exactly once, after its message
        // was copied out.
        unsafe { f(&mut d) };
    }
    let message = if message.is_empty() {
        "(the plugin gave no message)".to_string()
    } else {
        message
    };
    (message, code)
}

impl Client<'_> {
    /// `PJRT_Client_PlatformName` (`cpu`, `cuda`, …).
    pub fn platform_name(&self) -> Result<String, PluginError> {
        let mut args = c::ClientPlatformNameArgs::new();
        args.client = self.handle.raw;
        let api = self.plugin.api;
        self.plugin.call(
            "PJRT_Client_PlatformName",
            api.client_platform_name,
            &mut args,
        )?;
        // SAFETY: the out fields point at a string owned by the live client.
        Ok(unsafe { text(args.platform_name, args.platform_name_size) })
    }

    /// `PJRT_Client_PlatformVersion`: the plugin's own version string.
    pub fn platform_version(&self) -> Result<String, PluginError> {
        let mut args = c::ClientPlatformVersionArgs::new();
        args.client = self.handle.raw;
        let api = self.plugin.api;
        self.plugin.call(
            "PJRT_Client_PlatformVersion",
            api.client_platform_version,
            &mut args,
        )?;
        // SAFETY: the out fields point at a string owned by the live client.
        Ok(unsafe { text(args.platform_version, args.platform_version_size) })
    }

    /// Every device of the client (`PJRT_Client_Devices`), each described.
    pub fn devices(&self) -> Result<Vec<DeviceInfo>, PluginError> {
        let api = self.plugin.api;
        let mut args = c::ClientDevicesArgs::new();
        args.client = self.handle.raw;
        self.plugin
            .call("PJRT_Client_Devices", api.client_devices, &mut args)?;
        let handles: &[*mut c::Device] = if args.num_devices == 0 || args.devices.is_null() {
            &[]
        } else {
            // SAFETY: the plugin returned `num_devices` handles at `devices`, an
            // array owned by the client, which outlives this borrow.
            unsafe { std::slice::from_raw_parts(args.devices, args.num_devices) }
        };
        handles.iter().map(|&d| self.describe(d)).collect()
    }

    pub(super) fn describe(&self, device: *mut c::Device) -> Result<DeviceInfo, PluginError> {
        let api = self.plugin.api;
        let plugin = self.plugin;
        let mut g = c::DeviceGetDescriptionArgs::new();
        g.device = device;
        plugin.call(
            "PJRT_Device_GetDescription",
            api.device_get_description,
            &mut g,
        )?;
        let desc = g.device_description;
        let mut id = c::DeviceDescriptionIdArgs::new();
        id.device_description = desc;
        plugin.call(
            "PJRT_DeviceDescription_Id",
            api.device_description_id,
            &mut id,
        )?;
        let mut kind = c::DeviceDescriptionKindArgs::new();
        kind.device_description = desc;
        plugin.call(
            "PJRT_DeviceDescription_Kind",
            api.device_description_kind,
            &mut kind,
        )?;
        let mut s = c::DeviceDescriptionToStringArgs::new();
        s.device_description = desc;
        plugin.call(
            "PJRT_DeviceDescription_ToString",
            api.device_description_to_string,
            &mut s,
        )?;
        // SAFETY: both strings are owned by the device description, which the
        // live client owns.
        let (kind, description) = unsafe {
            (
                text(kind.device_kind, kind.device_kind_size),
                text(s.to_string, s.to_string_size),
            )
        };
        Ok(DeviceInfo {
            id: id.id,
            kind,
            description,
        })
    }
}

impl Drop for ClientHandle {
    fn drop(&mut self) {
        let mut args = c::ClientDestroyArgs::new();
        args.client = self.raw;
        // A failure to destroy has nowhere to go; its message is read and dropped.
        let _ = call(
            self.api,
            "PJRT_Client_Destroy",
            self.api.client_destroy,
            &mut args,
        );
    }
}

/// Copies a (pointer, length) string the plugin returned; invalid UTF-8 is replaced.
///
/// # Safety
/// `ptr` is null or points at `len` readable bytes.
pub(super) unsafe fn text(ptr: *const c_char, len: usize) -> String {
    if ptr.is_null() || len == 0 {
        return String::new();
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// The dynamic loader: `dlopen`/`dlsym` through libc on Unix.
#[cfg(unix)]
mod dl {
    use super::*;
    use std::ffi::{c_void, CString};
    use std::os::unix::ffi::OsStrExt;

    /// The last `dlerror()` message, or `fallback`.
    fn last_error(fallback: &str) -> String {
        // SAFETY: `dlerror` returns null or a NUL-terminated, thread-local message
        // valid until the next dl* call on this thread; it is copied at once.
        let e = unsafe { libc::dlerror() };
        if e.is_null() {
            fallback.to_string()
        } else {
            // SAFETY: see above.
            unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
        }
    }

    /// Opens `path` and looks up `symbol`; the handle is deliberately never closed
    /// (module doc).
    pub fn open_entry(path: &Path, symbol: &str) -> Result<*mut c_void, PluginError> {
        let not_loadable = |reason: String| PluginError::NotLoadable {
            path: path.to_path_buf(),
            reason,
        };
        // A bare name would make dlopen search the library path; a plugin is a file.
        let mut name = path.as_os_str().as_bytes().to_vec();
        if !name.contains(&b'/') {
            name.splice(0..0, *b"./");
        }
        let cpath = CString::new(name)
            .map_err(|_| not_loadable("the path contains a NUL byte".to_string()))?;
        // SAFETY: `cpath` is a valid NUL-terminated path. Loading runs the
        // library's initialisers: that is what loading a plugin means, and the
        // user named this file as one.
        let handle = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(not_loadable(last_error("the dynamic loader refused it")));
        }
        let csym = CString::new(symbol).expect("symbol names have no NUL");
        // SAFETY: `handle` is a live handle from dlopen; `csym` is NUL-terminated.
        let entry = unsafe { libc::dlsym(handle, csym.as_ptr()) };
        if entry.is_null() {
            return Err(PluginError::NoEntryPoint {
                path: path.to_path_buf(),
            });
        }
        Ok(entry)
    }
}

#[cfg(not(unix))]
mod dl {
    use super::*;

    pub fn open_entry(path: &Path, _symbol: &str) -> Result<*mut std::ffi::c_void, PluginError> {
        Err(PluginError::NotLoadable {
            path: path.to_path_buf(),
            reason: "faber loads PJRT plugins only on Unix (Linux, macOS)".to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call_error(message: &str, code: i32) -> PluginError {
        PluginError::Call {
            call: "PJRT_LoadedExecutable_Execute",
            message: message.to_string(),
            code,
        }
    }

    #[test]
    fn out_of_memory_by_code_or_by_message() {
        // RESOURCE_EXHAUSTED whatever the message says.
        assert!(call_error("allocation refused", 8).is_out_of_memory());
        // A plugin without PJRT_Error_GetCode: XLA's allocator messages.
        for m in [
            "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 1073741824 bytes.",
            "fake plugin: out of device memory",
            "Resource exhausted: OOM when allocating tensor",
        ] {
            assert!(call_error(m, 0).is_out_of_memory(), "{m}");
        }
        // Other failures, and other codes (13 is INTERNAL).
        assert!(!call_error("device lost", 13).is_out_of_memory());
        assert!(!call_error("memory layout not supported", 0).is_out_of_memory());
        let not_a_call = PluginError::NoEntryPoint {
            path: PathBuf::from("p.so"),
        };
        assert!(!not_a_call.is_out_of_memory());
    }
}
