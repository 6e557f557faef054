//! The few `#[repr(C)]` types of the PJRT C API that faber uses, written by hand from
//! the facts of `pjrt_c_api.h` (field order and types) at API version
//! [`API_MAJOR`].[`API_MINOR`], the version the `xla-cpu-pjrt` wheel ships.
//!
//! Layout rules the header sets and this file follows:
//! * every argument struct starts with `size_t struct_size` and
//!   `PJRT_Extension_Base* extension_start`;
//! * `struct_size` is `offsetof(last field) + sizeof(last field)` (the header's
//!   `PJRT_STRUCT_SIZE`, without trailing padding): [`StructSize::SIZE`] computes it
//!   the same way, so a plugin built for a newer header sees exactly which fields
//!   this caller knows;
//! * [`Api`] is only the prefix of `PJRT_Api` up to `PJRT_Device_GetDescription`;
//!   the function pointers before it that faber does not call are kept as
//!   [`Unused`] slots so every offset matches. A plugin whose `PJRT_Api.struct_size`
//!   is smaller than this prefix lacks a field faber reads and is refused.
//!
//! Opaque handles (`PJRT_Error`, `PJRT_Client`, …) are zero-sized `#[repr(C)]` types
//! only ever used behind raw pointers.

use std::ffi::{c_char, c_int, c_void};
use std::mem::{offset_of, size_of};

/// `PJRT_API_MAJOR` of the header this binding was written from. A plugin with
/// another major version is ABI-incompatible (the header: "Incremented when an
/// ABI-incompatible change is made").
pub const API_MAJOR: c_int = 0;
/// `PJRT_API_MINOR` of that header. Minor versions only add fields at the end of
/// structs, which `struct_size` negotiates, so a plugin of another minor version is
/// accepted as long as its `PJRT_Api` holds every field of [`Api`].
pub const API_MINOR: c_int = 81;

/// The header's `struct_size` value for an argument struct.
pub trait StructSize: Sized {
    /// `offsetof(last field) + sizeof(last field)`.
    const SIZE: usize;
    /// The struct with every field zero (null pointers, no callbacks, 0) and
    /// `struct_size` set to [`StructSize::SIZE`].
    fn new() -> Self;
}

/// Implements [`StructSize`] for an args struct whose fields are all raw pointers,
/// integers or `Option<fn>` (for which all-zero bytes are a valid value) and whose
/// first field is `struct_size: usize`.
macro_rules! struct_size {
    ($($ty:ident: $last:ident as $last_ty:ty;)*) => {$(
        impl StructSize for $ty {
            const SIZE: usize = offset_of!($ty, $last) + size_of::<$last_ty>();
            fn new() -> Self {
                // SAFETY: every field of `$ty` is a raw pointer, an integer or an
                // `Option` of a function pointer; all-zero bytes are a valid value of
                // each (null, 0, `None`).
                let mut args: Self = unsafe { std::mem::zeroed() };
                args.struct_size = Self::SIZE;
                args
            }
        }
    )*};
}

/// Declares opaque C types used only behind pointers.
macro_rules! opaque {
    ($($(#[$doc:meta])* $name:ident;)*) => {$(
        $(#[$doc])*
        #[repr(C)]
        pub struct $name {
            _private: [u8; 0],
        }
    )*};
}

opaque! {
    /// `PJRT_Error`: returned non-null by a failing call; read with
    /// `PJRT_Error_Message`, freed with `PJRT_Error_Destroy`.
    Error;
    /// `PJRT_Extension_Base`: faber passes no extensions (always null).
    ExtensionBase;
    /// `PJRT_Client`.
    Client;
    /// `PJRT_Device`, owned by its client.
    Device;
    /// `PJRT_DeviceDescription`, owned by its device.
    DeviceDescription;
    /// `PJRT_NamedValue`: faber passes no options (always null).
    NamedValue;
}

/// A function pointer slot of `PJRT_Api` that faber does not call.
pub type Unused = Option<unsafe extern "C" fn()>;

/// A PJRT entry point that returns a `PJRT_Error*` (null on success).
pub type Call<A> = Option<unsafe extern "C" fn(args: *mut A) -> *mut Error>;

/// `PJRT_Api_Version`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct ApiVersion {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub major_version: c_int,
    pub minor_version: c_int,
}

/// The prefix of `PJRT_Api` up to `PJRT_Device_GetDescription` (field order as in
/// the header; names are the header's without `PJRT_`).
#[repr(C)]
pub struct Api {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub pjrt_api_version: ApiVersion,

    pub error_destroy: Option<unsafe extern "C" fn(args: *mut ErrorDestroyArgs)>,
    pub error_message: Option<unsafe extern "C" fn(args: *mut ErrorMessageArgs)>,
    pub error_get_code: Unused,

    pub plugin_initialize: Call<PluginInitializeArgs>,
    pub plugin_attributes: Unused,

    pub event_destroy: Unused,
    pub event_is_ready: Unused,
    pub event_error: Unused,
    pub event_await: Unused,
    pub event_on_ready: Unused,

    pub client_create: Call<ClientCreateArgs>,
    pub client_destroy: Call<ClientDestroyArgs>,
    pub client_platform_name: Call<ClientPlatformNameArgs>,
    pub client_process_index: Unused,
    pub client_platform_version: Call<ClientPlatformVersionArgs>,
    pub client_devices: Call<ClientDevicesArgs>,
    pub client_addressable_devices: Unused,
    pub client_lookup_device: Unused,
    pub client_lookup_addressable_device: Unused,
    pub client_addressable_memories: Unused,
    pub client_compile: Unused,
    pub client_default_device_assignment: Unused,
    pub client_buffer_from_host_buffer: Unused,

    pub device_description_id: Call<DeviceDescriptionIdArgs>,
    pub device_description_process_index: Unused,
    pub device_description_attributes: Unused,
    pub device_description_kind: Call<DeviceDescriptionKindArgs>,
    pub device_description_debug_string: Unused,
    pub device_description_to_string: Call<DeviceDescriptionToStringArgs>,

    pub device_get_description: Call<DeviceGetDescriptionArgs>,
}

/// How many bytes of `PJRT_Api` faber reads: a plugin must report at least this
/// `struct_size`.
pub const API_PREFIX_SIZE: usize =
    offset_of!(Api, device_get_description) + size_of::<Call<DeviceGetDescriptionArgs>>();

/// The signature of the plugin's one exported symbol, `GetPjrtApi`.
pub type GetPjrtApi = unsafe extern "C" fn() -> *const Api;

/// `PJRT_Error_Destroy_Args`.
#[repr(C)]
pub struct ErrorDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub error: *mut Error,
}

/// `PJRT_Error_Message_Args`.
#[repr(C)]
pub struct ErrorMessageArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub error: *const Error,
    pub message: *const c_char,
    pub message_size: usize,
}

/// `PJRT_Plugin_Initialize_Args`.
#[repr(C)]
pub struct PluginInitializeArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
}

/// `PJRT_Client_Create_Args`. faber passes no options and no key-value callbacks
/// (they serve multi-process clients).
#[repr(C)]
pub struct ClientCreateArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub create_options: *const NamedValue,
    pub num_options: usize,
    pub kv_get_callback: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut Error>,
    pub kv_get_user_arg: *mut c_void,
    pub kv_put_callback: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut Error>,
    pub kv_put_user_arg: *mut c_void,
    pub client: *mut Client,
    pub kv_try_get_callback: Option<unsafe extern "C" fn(args: *mut c_void) -> *mut Error>,
    pub kv_try_get_user_arg: *mut c_void,
}

/// `PJRT_Client_Destroy_Args`.
#[repr(C)]
pub struct ClientDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
}

/// `PJRT_Client_PlatformName_Args`.
#[repr(C)]
pub struct ClientPlatformNameArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub platform_name: *const c_char,
    pub platform_name_size: usize,
}

/// `PJRT_Client_PlatformVersion_Args`.
#[repr(C)]
pub struct ClientPlatformVersionArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub platform_version: *const c_char,
    pub platform_version_size: usize,
}

/// `PJRT_Client_Devices_Args`: `devices` points at `num_devices` device handles
/// owned by the client.
#[repr(C)]
pub struct ClientDevicesArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub devices: *const *mut Device,
    pub num_devices: usize,
}

/// `PJRT_Device_GetDescription_Args`.
#[repr(C)]
pub struct DeviceGetDescriptionArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub device: *mut Device,
    pub device_description: *mut DeviceDescription,
}

/// `PJRT_DeviceDescription_Id_Args`.
#[repr(C)]
pub struct DeviceDescriptionIdArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub device_description: *mut DeviceDescription,
    pub id: c_int,
}

/// `PJRT_DeviceDescription_Kind_Args`.
#[repr(C)]
pub struct DeviceDescriptionKindArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub device_description: *mut DeviceDescription,
    pub device_kind: *const c_char,
    pub device_kind_size: usize,
}

/// `PJRT_DeviceDescription_ToString_Args`.
#[repr(C)]
pub struct DeviceDescriptionToStringArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub device_description: *mut DeviceDescription,
    pub to_string: *const c_char,
    pub to_string_size: usize,
}

struct_size! {
    ErrorDestroyArgs: error as *mut Error;
    ErrorMessageArgs: message_size as usize;
    PluginInitializeArgs: extension_start as *mut ExtensionBase;
    ClientCreateArgs: kv_try_get_user_arg as *mut c_void;
    ClientDestroyArgs: client as *mut Client;
    ClientPlatformNameArgs: platform_name_size as usize;
    ClientPlatformVersionArgs: platform_version_size as usize;
    ClientDevicesArgs: num_devices as usize;
    DeviceGetDescriptionArgs: device_description as *mut DeviceDescription;
    DeviceDescriptionIdArgs: id as c_int;
    DeviceDescriptionKindArgs: device_kind_size as usize;
    DeviceDescriptionToStringArgs: to_string_size as usize;
}

#[cfg(all(test, target_pointer_width = "64"))]
mod tests {
    use super::*;

    /// The sizes and offsets below were read off `pjrt_c_api.h` 0.81 compiled with
    /// `offsetof`/`PJRT_STRUCT_SIZE` on x86-64 Linux (LP64).
    #[test]
    fn layouts_match_the_header_on_lp64() {
        assert_eq!(size_of::<ApiVersion>(), 24);
        assert_eq!(offset_of!(Api, pjrt_api_version), 16);
        assert_eq!(offset_of!(Api, error_destroy), 40);
        assert_eq!(offset_of!(Api, plugin_initialize), 64);
        assert_eq!(offset_of!(Api, client_create), 120);
        assert_eq!(offset_of!(Api, client_platform_name), 136);
        assert_eq!(offset_of!(Api, client_platform_version), 152);
        assert_eq!(offset_of!(Api, client_devices), 160);
        assert_eq!(offset_of!(Api, device_description_id), 224);
        assert_eq!(offset_of!(Api, device_description_kind), 248);
        assert_eq!(offset_of!(Api, device_description_to_string), 264);
        assert_eq!(offset_of!(Api, device_get_description), 272);
        assert_eq!(API_PREFIX_SIZE, 280);

        assert_eq!(ErrorDestroyArgs::SIZE, 24);
        assert_eq!(ErrorMessageArgs::SIZE, 40);
        assert_eq!(PluginInitializeArgs::SIZE, 16);
        assert_eq!(ClientCreateArgs::SIZE, 88);
        assert_eq!(offset_of!(ClientCreateArgs, client), 64);
        assert_eq!(ClientDestroyArgs::SIZE, 24);
        assert_eq!(ClientPlatformNameArgs::SIZE, 40);
        assert_eq!(ClientPlatformVersionArgs::SIZE, 40);
        assert_eq!(ClientDevicesArgs::SIZE, 40);
        assert_eq!(DeviceGetDescriptionArgs::SIZE, 32);
        // 28, not size_of's 32: the header's size stops at the last field.
        assert_eq!(DeviceDescriptionIdArgs::SIZE, 28);
        assert_eq!(size_of::<DeviceDescriptionIdArgs>(), 32);
        assert_eq!(DeviceDescriptionKindArgs::SIZE, 40);
        assert_eq!(DeviceDescriptionToStringArgs::SIZE, 40);
    }

    #[test]
    fn new_sets_struct_size_and_zeroes_the_rest() {
        let a = ClientCreateArgs::new();
        assert_eq!(a.struct_size, ClientCreateArgs::SIZE);
        assert!(a.client.is_null() && a.create_options.is_null());
        assert!(a.kv_get_callback.is_none());
    }
}
