//! PJRT's key-value callbacks (`PJRT_Client_Create`'s `kv_get_callback`,
//! `kv_put_callback`, `kv_try_get_callback`) over the store of kv_store.rs: the
//! argument structs as the 0.81 header lays them out, and the `extern "C"`
//! functions a plugin calls ([`KvHooks`], which src/xla/plugin.rs puts in the
//! create args). A leaf below plugin.rs: it imports only the C declarations and the
//! store.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::kv_store::{KvClient, KvError};
use super::pjrt_api::{self as c, StructSize};

// ---------------------------------------------------------------------------
// The header's key-value callback argument structs.
// ---------------------------------------------------------------------------

/// `PJRT_CallbackError`: the function the plugin passes (by pointer) so a
/// callback can return a `PJRT_Error` of its making.
pub type CallbackError =
    Option<unsafe extern "C" fn(code: c_int, message: *const c_char, size: usize) -> *mut c::Error>;

/// `PJRT_KeyValueGetCallback_ValueDeleter` (and the try-get one, the same type).
pub type ValueDeleter = Option<unsafe extern "C" fn(value: *mut c_char)>;

/// `PJRT_KeyValueGetCallback_Args`.
#[repr(C)]
pub struct KvGetArgs {
    pub struct_size: usize,
    pub extension_start: *mut c::ExtensionBase,
    pub key: *const c_char,
    pub key_size: usize,
    pub timeout_in_ms: c_int,
    pub callback_error: *const CallbackError,
    pub user_arg: *mut c_void,
    pub value: *mut c_char,
    pub value_size: usize,
    pub value_deleter_callback: ValueDeleter,
}

/// `PJRT_KeyValueTryGetCallback_Args`.
#[repr(C)]
pub struct KvTryGetArgs {
    pub struct_size: usize,
    pub extension_start: *mut c::ExtensionBase,
    pub key: *const c_char,
    pub key_size: usize,
    pub callback_error: *const CallbackError,
    pub user_arg: *mut c_void,
    pub value: *mut c_char,
    pub value_size: usize,
    pub value_deleter_callback: ValueDeleter,
}

/// `PJRT_KeyValuePutCallback_Args`.
#[repr(C)]
pub struct KvPutArgs {
    pub struct_size: usize,
    pub extension_start: *mut c::ExtensionBase,
    pub key: *const c_char,
    pub key_size: usize,
    pub value: *const c_char,
    pub value_size: usize,
    pub callback_error: *const CallbackError,
    pub user_arg: *mut c_void,
}

macro_rules! kv_struct_size {
    ($($ty:ident: $last:ident as $last_ty:ty;)*) => {$(
        impl StructSize for $ty {
            const SIZE: usize = offset_of!($ty, $last) + size_of::<$last_ty>();
            fn new() -> Self {
                // SAFETY: every field is a raw pointer, an integer or an `Option`
                // of a function pointer, for which all-zero bytes are valid.
                let mut args: Self = unsafe { std::mem::zeroed() };
                args.struct_size = Self::SIZE;
                args
            }
        }
    )*};
}

kv_struct_size! {
    KvGetArgs: value_deleter_callback as ValueDeleter;
    KvTryGetArgs: value_deleter_callback as ValueDeleter;
    KvPutArgs: user_arg as *mut c_void;
}

/// `PJRT_Error_Code_DEADLINE_EXCEEDED`, `_NOT_FOUND`, `_UNAVAILABLE`.
pub(super) const CODE_DEADLINE_EXCEEDED: c_int = 4;
pub(super) const CODE_NOT_FOUND: c_int = 5;
pub(super) const CODE_UNAVAILABLE: c_int = 14;

// ---------------------------------------------------------------------------
// The callbacks.
// ---------------------------------------------------------------------------

/// The callbacks and their user argument, as `PJRT_Client_Create_Args` takes
/// them (src/xla/plugin.rs fills the args).
pub struct KvHooks {
    pub get: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut c::Error>,
    pub put: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut c::Error>,
    pub try_get: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut c::Error>,
    pub user_arg: *mut c_void,
}

/// What the callbacks' `user_arg` points at.
pub(super) struct KvContext {
    pub(super) kv: KvClient,
    pub(super) calls: AtomicUsize,
    /// The deadline for reaching the coordinator on a put or try-get.
    pub(super) timeout: Duration,
}

/// The plugin's key, under `pjrt/`.
///
/// # Safety
/// `key` is null or points at `size` readable bytes.
pub(super) unsafe fn plugin_key(key: *const c_char, size: usize) -> Vec<u8> {
    let mut k = b"pjrt/".to_vec();
    if !key.is_null() && size > 0 {
        // SAFETY: the caller's contract.
        k.extend_from_slice(unsafe { std::slice::from_raw_parts(key.cast::<u8>(), size) });
    }
    k
}

/// A `PJRT_Error` made by the plugin's `callback_error`, or null when it gave none.
///
/// # Safety
/// `make` is null or points at a `PJRT_CallbackError` the plugin passed.
pub(super) unsafe fn callback_error(
    make: *const CallbackError,
    code: c_int,
    message: &str,
) -> *mut c::Error {
    if make.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: the caller's contract.
    match unsafe { *make } {
        // SAFETY: the plugin's function; the message lives for the call, which
        // is all it requires ("must copy `message`").
        Some(f) => unsafe { f(code, message.as_ptr().cast(), message.len()) },
        None => std::ptr::null_mut(),
    }
}

/// A copy of `v` in memory from `malloc`, for the plugin to hand back to
/// [`free_value`].
pub(super) fn malloc_copy(v: &[u8]) -> *mut c_char {
    // SAFETY: malloc of at least one byte; null is checked by the caller.
    let p = unsafe { libc::malloc(v.len().max(1)) }.cast::<u8>();
    if !p.is_null() {
        // SAFETY: `p` holds at least `v.len()` bytes and does not overlap `v`.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p, v.len()) };
    }
    p.cast()
}

pub(super) unsafe extern "C" fn free_value(value: *mut c_char) {
    // SAFETY: `value` came from `malloc_copy` (or is null).
    unsafe { libc::free(value.cast()) }
}

/// # Safety
/// `user_arg` is the `KvContext` [`Session::create_client`] leaked.
pub(super) unsafe fn context<'a>(user_arg: *mut c_void) -> Option<&'a KvContext> {
    // SAFETY: the caller's contract; a leaked context is never freed.
    unsafe { user_arg.cast::<KvContext>().as_ref() }
}

/// Hands `found` to the plugin through the out fields, or an error.
///
/// # Safety
/// The pointers are the out fields of a live args struct.
pub(super) unsafe fn give(
    found: Result<Option<Vec<u8>>, KvError>,
    make: *const CallbackError,
    missing: (c_int, &str),
    value: *mut *mut c_char,
    size: *mut usize,
    deleter: *mut ValueDeleter,
) -> *mut c::Error {
    match found {
        Ok(Some(v)) => {
            let p = malloc_copy(&v);
            if p.is_null() {
                // SAFETY: the caller's contract.
                return unsafe { callback_error(make, 8, "out of memory copying a value") };
            }
            // SAFETY: the caller's contract.
            unsafe {
                *value = p;
                *size = v.len();
                *deleter = Some(free_value);
            }
            std::ptr::null_mut()
        }
        // SAFETY: the caller's contract.
        Ok(None) => unsafe { callback_error(make, missing.0, missing.1) },
        // SAFETY: the caller's contract.
        Err(e) => unsafe { callback_error(make, CODE_UNAVAILABLE, &e.to_string()) },
    }
}

pub(super) unsafe extern "C" fn kv_get(args: *mut c_void) -> *mut c::Error {
    // SAFETY: the plugin passes a live `PJRT_KeyValueGetCallback_Args`.
    let Some(a) = (unsafe { args.cast::<KvGetArgs>().as_mut() }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the user arg faber set.
    let Some(ctx) = (unsafe { context(a.user_arg) }) else {
        return std::ptr::null_mut();
    };
    ctx.calls.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the key's bytes live for the call.
    let k = unsafe { plugin_key(a.key, a.key_size) };
    let wait = Duration::from_millis(u64::try_from(a.timeout_in_ms.max(0)).unwrap_or(0));
    let found = ctx.kv.get(&k, Instant::now() + wait);
    // SAFETY: the out fields of `a`.
    unsafe {
        give(
            found,
            a.callback_error,
            (CODE_DEADLINE_EXCEEDED, "the key did not appear in time"),
            &mut a.value,
            &mut a.value_size,
            &mut a.value_deleter_callback,
        )
    }
}

pub(super) unsafe extern "C" fn kv_try_get(args: *mut c_void) -> *mut c::Error {
    // SAFETY: the plugin passes a live `PJRT_KeyValueTryGetCallback_Args`.
    let Some(a) = (unsafe { args.cast::<KvTryGetArgs>().as_mut() }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the user arg faber set.
    let Some(ctx) = (unsafe { context(a.user_arg) }) else {
        return std::ptr::null_mut();
    };
    ctx.calls.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the key's bytes live for the call.
    let k = unsafe { plugin_key(a.key, a.key_size) };
    let found = ctx.kv.try_get(&k, Instant::now() + ctx.timeout);
    // SAFETY: the out fields of `a`.
    unsafe {
        give(
            found,
            a.callback_error,
            (CODE_NOT_FOUND, "no such key"),
            &mut a.value,
            &mut a.value_size,
            &mut a.value_deleter_callback,
        )
    }
}

pub(super) unsafe extern "C" fn kv_put(args: *mut c_void) -> *mut c::Error {
    // SAFETY: the plugin passes a live `PJRT_KeyValuePutCallback_Args`.
    let Some(a) = (unsafe { args.cast::<KvPutArgs>().as_ref() }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: the user arg faber set.
    let Some(ctx) = (unsafe { context(a.user_arg) }) else {
        return std::ptr::null_mut();
    };
    ctx.calls.fetch_add(1, Ordering::SeqCst);
    // SAFETY: key and value live for the call.
    let (k, v) = unsafe {
        let v = if a.value.is_null() || a.value_size == 0 {
            &[][..]
        } else {
            std::slice::from_raw_parts(a.value.cast::<u8>(), a.value_size)
        };
        (plugin_key(a.key, a.key_size), v)
    };
    match ctx.kv.put(&k, v, Instant::now() + ctx.timeout) {
        Ok(()) => std::ptr::null_mut(),
        // SAFETY: the plugin's callback_error.
        Err(e) => unsafe { callback_error(a.callback_error, CODE_UNAVAILABLE, &e.to_string()) },
    }
}
