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
//! * [`Api`] is only the prefix of `PJRT_Api` up to `PJRT_Buffer_ToHostBuffer`;
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
    /// `PJRT_Event`: completion of an asynchronous transfer; awaited, then destroyed.
    Event;
    /// `PJRT_Memory`: faber copies to a device's default memory (always null).
    Memory;
    /// `PJRT_Buffer_MemoryLayout`: faber uses dense row-major layouts (always null).
    MemoryLayout;
    /// `PJRT_LoadedExecutable`: a compiled program loaded on its devices.
    LoadedExecutable;
    /// `PJRT_Executable`: the compiled program behind a loaded one (asked for its
    /// output count).
    Executable;
    /// `PJRT_Buffer`: an array in device memory.
    Buffer;
    /// `PJRT_ExecuteContext`, `PJRT_SendCallbackInfo`, `PJRT_RecvCallbackInfo`:
    /// execution extras faber does not use (always null).
    Opaque;
}

/// `PJRT_Buffer_Type`: the element types faber moves (the enum's values in the
/// header: `INVALID` = 0, `PRED`, `S8`, `S16`, `S32`, `S64`, `U8`, `U16`, `U32`,
/// `U64`, `F16`, `F32` = 11, `F64` = 12, …).
pub type BufferType = c_int;
/// `PJRT_Buffer_Type_F32`.
pub const BUFFER_TYPE_F32: BufferType = 11;
/// `PJRT_Buffer_Type_F64`.
pub const BUFFER_TYPE_F64: BufferType = 12;

/// `PJRT_HostBufferSemantics`.
pub type HostBufferSemantics = c_int;
/// `PJRT_HostBufferSemantics_kImmutableOnlyDuringCall`: the plugin copies the host
/// data before `PJRT_Client_BufferFromHostBuffer` returns.
pub const HOST_IMMUTABLE_ONLY_DURING_CALL: HostBufferSemantics = 0;

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

/// The prefix of `PJRT_Api` up to `PJRT_Buffer_ToHostBuffer` (field order as in
/// the header; names are the header's without `PJRT_`, in snake case).
#[repr(C)]
pub struct Api {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub pjrt_api_version: ApiVersion,

    pub error_destroy: Option<unsafe extern "C" fn(args: *mut ErrorDestroyArgs)>,
    pub error_message: Option<unsafe extern "C" fn(args: *mut ErrorMessageArgs)>,
    pub error_get_code: Call<ErrorGetCodeArgs>,

    pub plugin_initialize: Call<PluginInitializeArgs>,
    pub plugin_attributes: Unused,

    pub event_destroy: Call<EventDestroyArgs>,
    pub event_is_ready: Unused,
    pub event_error: Unused,
    pub event_await: Call<EventAwaitArgs>,
    pub event_on_ready: Unused,

    pub client_create: Call<ClientCreateArgs>,
    pub client_destroy: Call<ClientDestroyArgs>,
    pub client_platform_name: Call<ClientPlatformNameArgs>,
    pub client_process_index: Unused,
    pub client_platform_version: Call<ClientPlatformVersionArgs>,
    pub client_devices: Call<ClientDevicesArgs>,
    pub client_addressable_devices: Call<ClientAddressableDevicesArgs>,
    pub client_lookup_device: Unused,
    pub client_lookup_addressable_device: Unused,
    pub client_addressable_memories: Unused,
    pub client_compile: Call<ClientCompileArgs>,
    pub client_default_device_assignment: Unused,
    pub client_buffer_from_host_buffer: Call<ClientBufferFromHostBufferArgs>,

    pub device_description_id: Call<DeviceDescriptionIdArgs>,
    pub device_description_process_index: Unused,
    pub device_description_attributes: Unused,
    pub device_description_kind: Call<DeviceDescriptionKindArgs>,
    pub device_description_debug_string: Unused,
    pub device_description_to_string: Call<DeviceDescriptionToStringArgs>,

    pub device_get_description: Call<DeviceGetDescriptionArgs>,
    pub device_is_addressable: Unused,
    pub device_local_hardware_id: Unused,
    pub device_addressable_memories: Unused,
    pub device_default_memory: Unused,
    pub device_memory_stats: Unused,

    pub memory_id: Unused,
    pub memory_kind: Unused,
    pub memory_debug_string: Unused,
    pub memory_to_string: Unused,
    pub memory_addressable_by_devices: Unused,

    pub executable_destroy: Call<ExecutableDestroyArgs>,
    pub executable_name: Unused,
    pub executable_num_replicas: Unused,
    pub executable_num_partitions: Unused,
    pub executable_num_outputs: Call<ExecutableNumOutputsArgs>,
    pub executable_size_of_generated_code_in_bytes: Unused,
    pub executable_get_cost_analysis: Unused,
    pub executable_output_memory_kinds: Unused,
    pub executable_optimized_program: Unused,
    pub executable_serialize: Unused,

    pub loaded_executable_destroy: Call<LoadedExecutableDestroyArgs>,
    pub loaded_executable_get_executable: Call<LoadedExecutableGetExecutableArgs>,
    pub loaded_executable_addressable_devices: Unused,
    pub loaded_executable_delete: Unused,
    pub loaded_executable_is_deleted: Unused,
    pub loaded_executable_execute: Call<LoadedExecutableExecuteArgs>,
    pub executable_deserialize_and_load: Unused,
    pub loaded_executable_fingerprint: Unused,

    pub buffer_destroy: Call<BufferDestroyArgs>,
    pub buffer_element_type: Call<BufferElementTypeArgs>,
    pub buffer_dimensions: Call<BufferDimensionsArgs>,
    pub buffer_unpadded_dimensions: Unused,
    pub buffer_dynamic_dimension_indices: Unused,
    pub buffer_get_memory_layout: Unused,
    pub buffer_on_device_size_in_bytes: Unused,
    pub buffer_device: Unused,
    pub buffer_memory: Unused,
    pub buffer_delete: Unused,
    pub buffer_is_deleted: Unused,
    pub buffer_copy_to_device: Unused,
    pub buffer_to_host_buffer: Call<BufferToHostBufferArgs>,
}

/// How many bytes of `PJRT_Api` faber reads: a plugin must report at least this
/// `struct_size`.
pub const API_PREFIX_SIZE: usize =
    offset_of!(Api, buffer_to_host_buffer) + size_of::<Call<BufferToHostBufferArgs>>();

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

/// `PJRT_Error_GetCode_Args`: `code` is a `PJRT_Error_Code`, absl's status codes.
#[repr(C)]
pub struct ErrorGetCodeArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub error: *const Error,
    pub code: c_int,
}

/// `PJRT_Error_Code_RESOURCE_EXHAUSTED`: what a plugin returns when device memory
/// runs out (the header's enum: `OK` = 0, `CANCELLED`, `UNKNOWN`,
/// `INVALID_ARGUMENT`, `DEADLINE_EXCEEDED`, `NOT_FOUND`, `ALREADY_EXISTS`,
/// `PERMISSION_DENIED`, `RESOURCE_EXHAUSTED` = 8, …).
pub const ERROR_CODE_RESOURCE_EXHAUSTED: c_int = 8;

/// `PJRT_Plugin_Initialize_Args`.
#[repr(C)]
pub struct PluginInitializeArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
}

/// `PJRT_Client_Create_Args`. The key-value callbacks serve multi-process
/// clients: their argument structs are in src/xla/distributed.rs.
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

/// `PJRT_Client_AddressableDevices_Args`: the devices this process can run on.
#[repr(C)]
pub struct ClientAddressableDevicesArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub addressable_devices: *const *mut Device,
    pub num_addressable_devices: usize,
}

/// `PJRT_Event_Destroy_Args`.
#[repr(C)]
pub struct EventDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub event: *mut Event,
}

/// `PJRT_Event_Await_Args`: blocks until the event is ready; its error, if any, is
/// the call's.
#[repr(C)]
pub struct EventAwaitArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub event: *mut Event,
}

/// `PJRT_Program`: `code` is the program text (`format` "mlir": StableHLO as MLIR
/// text or bytecode).
#[repr(C)]
pub struct Program {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub code: *mut c_char,
    pub code_size: usize,
    pub format: *const c_char,
    pub format_size: usize,
}

/// `PJRT_Client_Compile_Args`: `compile_options` is a serialized
/// `xla.CompileOptionsProto` (src/xla/proto.rs).
#[repr(C)]
pub struct ClientCompileArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub program: *const Program,
    pub compile_options: *const c_char,
    pub compile_options_size: usize,
    pub executable: *mut LoadedExecutable,
}

/// `PJRT_Client_BufferFromHostBuffer_Args`: a dense row-major host array copied to
/// `device` (`byte_strides`, `memory` and `device_layout` null).
#[repr(C)]
pub struct ClientBufferFromHostBufferArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub client: *mut Client,
    pub data: *const c_void,
    pub type_: BufferType,
    pub dims: *const i64,
    pub num_dims: usize,
    pub byte_strides: *const i64,
    pub num_byte_strides: usize,
    pub host_buffer_semantics: HostBufferSemantics,
    pub device: *mut Device,
    pub memory: *mut Memory,
    pub device_layout: *mut MemoryLayout,
    pub done_with_host_buffer: *mut Event,
    pub buffer: *mut Buffer,
}

/// `PJRT_LoadedExecutable_Destroy_Args`.
#[repr(C)]
pub struct LoadedExecutableDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub executable: *mut LoadedExecutable,
}

/// `PJRT_LoadedExecutable_GetExecutable_Args`: the returned executable is the
/// caller's to destroy.
#[repr(C)]
pub struct LoadedExecutableGetExecutableArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub loaded_executable: *mut LoadedExecutable,
    pub executable: *mut Executable,
}

/// `PJRT_Executable_NumOutputs_Args`.
#[repr(C)]
pub struct ExecutableNumOutputsArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub executable: *mut Executable,
    pub num_outputs: usize,
}

/// `PJRT_Executable_Destroy_Args`.
#[repr(C)]
pub struct ExecutableDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub executable: *mut Executable,
}

/// `PJRT_ExecuteOptions`: no callbacks, launch id 0, every input donatable (faber
/// declares no donation in its programs, so none is donated), no context.
#[repr(C)]
pub struct ExecuteOptions {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub send_callbacks: *mut *mut Opaque,
    pub recv_callbacks: *mut *mut Opaque,
    pub num_send_ops: usize,
    pub num_recv_ops: usize,
    pub launch_id: c_int,
    pub non_donatable_input_indices: *const i64,
    pub num_non_donatable_input_indices: usize,
    pub context: *mut Opaque,
    pub call_location: *const c_char,
    pub num_tasks: usize,
    pub task_ids: *mut c_int,
    pub incarnation_ids: *mut i64,
}

/// `PJRT_LoadedExecutable_Execute_Args`: `argument_lists[d][i]` is argument `i`
/// on device `d`; `output_lists[d]` is a caller-allocated array the plugin fills
/// with the outputs' buffers.
#[repr(C)]
pub struct LoadedExecutableExecuteArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub executable: *mut LoadedExecutable,
    pub options: *mut ExecuteOptions,
    pub argument_lists: *const *const *mut Buffer,
    pub num_devices: usize,
    pub num_args: usize,
    pub output_lists: *const *mut *mut Buffer,
    pub device_complete_events: *mut *mut Event,
    pub execute_device: *mut Device,
}

/// `PJRT_Buffer_Destroy_Args`.
#[repr(C)]
pub struct BufferDestroyArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub buffer: *mut Buffer,
}

/// `PJRT_Buffer_ElementType_Args`.
#[repr(C)]
pub struct BufferElementTypeArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub buffer: *mut Buffer,
    pub type_: BufferType,
}

/// `PJRT_Buffer_Dimensions_Args`: `dims` is owned by the buffer.
#[repr(C)]
pub struct BufferDimensionsArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub buffer: *mut Buffer,
    pub dims: *const i64,
    pub num_dims: usize,
}

/// `PJRT_Buffer_ToHostBuffer_Args`: copies `src` into `dst` (`dst_size` bytes) in
/// the buffer's own (dense row-major) layout; `event` signals the copy's end.
#[repr(C)]
pub struct BufferToHostBufferArgs {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub src: *mut Buffer,
    pub host_layout: *mut MemoryLayout,
    pub dst: *mut c_void,
    pub dst_size: usize,
    pub event: *mut Event,
}

/// `PJRT_NamedValue`: an option of `PJRT_Client_Create`. faber passes int64 ones
/// only (the CPU plugin's `cpu_device_count`), so the header's anonymous union
/// (`string_value`, `int64_value`, `int64_array_value`, `float_value`,
/// `bool_value`; 8 bytes, 8-aligned) is declared as its `int64_value` member.
#[repr(C)]
pub struct NamedValue {
    pub struct_size: usize,
    pub extension_start: *mut ExtensionBase,
    pub name: *const c_char,
    pub name_size: usize,
    /// `PJRT_NamedValue_Type`, a C enum.
    pub type_: c_int,
    pub int64_value: i64,
    /// 1 for a scalar.
    pub value_size: usize,
}

/// `PJRT_NamedValue_kInt64`.
pub const NAMED_VALUE_INT64: c_int = 1;

struct_size! {
    NamedValue: value_size as usize;
    ErrorDestroyArgs: error as *mut Error;
    ErrorMessageArgs: message_size as usize;
    ErrorGetCodeArgs: code as c_int;
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
    ClientAddressableDevicesArgs: num_addressable_devices as usize;
    EventDestroyArgs: event as *mut Event;
    EventAwaitArgs: event as *mut Event;
    Program: format_size as usize;
    ClientCompileArgs: executable as *mut LoadedExecutable;
    ClientBufferFromHostBufferArgs: buffer as *mut Buffer;
    LoadedExecutableDestroyArgs: executable as *mut LoadedExecutable;
    LoadedExecutableGetExecutableArgs: executable as *mut Executable;
    ExecutableNumOutputsArgs: num_outputs as usize;
    ExecutableDestroyArgs: executable as *mut Executable;
    ExecuteOptions: incarnation_ids as *mut i64;
    LoadedExecutableExecuteArgs: execute_device as *mut Device;
    BufferDestroyArgs: buffer as *mut Buffer;
    BufferElementTypeArgs: type_ as BufferType;
    BufferDimensionsArgs: num_dims as usize;
    BufferToHostBufferArgs: event as *mut Event;
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
        assert_eq!(offset_of!(Api, event_destroy), 80);
        assert_eq!(offset_of!(Api, event_await), 104);
        assert_eq!(offset_of!(Api, client_addressable_devices), 168);
        assert_eq!(offset_of!(Api, client_compile), 200);
        assert_eq!(offset_of!(Api, client_buffer_from_host_buffer), 216);
        assert_eq!(offset_of!(Api, executable_destroy), 360);
        assert_eq!(offset_of!(Api, executable_num_outputs), 392);
        assert_eq!(offset_of!(Api, loaded_executable_destroy), 440);
        assert_eq!(offset_of!(Api, loaded_executable_get_executable), 448);
        assert_eq!(offset_of!(Api, loaded_executable_execute), 480);
        assert_eq!(offset_of!(Api, buffer_destroy), 504);
        assert_eq!(offset_of!(Api, buffer_element_type), 512);
        assert_eq!(offset_of!(Api, buffer_dimensions), 520);
        assert_eq!(offset_of!(Api, buffer_to_host_buffer), 600);
        assert_eq!(API_PREFIX_SIZE, 608);

        assert_eq!(ErrorDestroyArgs::SIZE, 24);
        assert_eq!(ErrorMessageArgs::SIZE, 40);
        assert_eq!(offset_of!(Api, error_get_code), 56);
        assert_eq!(offset_of!(ErrorGetCodeArgs, code), 24);
        assert_eq!(ErrorGetCodeArgs::SIZE, 28);
        assert_eq!(PluginInitializeArgs::SIZE, 16);
        assert_eq!(NamedValue::SIZE, 56);
        assert_eq!(offset_of!(NamedValue, type_), 32);
        assert_eq!(offset_of!(NamedValue, int64_value), 40);
        assert_eq!(offset_of!(NamedValue, value_size), 48);
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

        assert_eq!(ClientAddressableDevicesArgs::SIZE, 40);
        assert_eq!(EventDestroyArgs::SIZE, 24);
        assert_eq!(EventAwaitArgs::SIZE, 24);
        assert_eq!(Program::SIZE, 48);
        assert_eq!(ClientCompileArgs::SIZE, 56);
        assert_eq!(ClientBufferFromHostBufferArgs::SIZE, 120);
        assert_eq!(offset_of!(ClientBufferFromHostBufferArgs, type_), 32);
        assert_eq!(offset_of!(ClientBufferFromHostBufferArgs, dims), 40);
        assert_eq!(
            offset_of!(ClientBufferFromHostBufferArgs, host_buffer_semantics),
            72
        );
        assert_eq!(offset_of!(ClientBufferFromHostBufferArgs, device), 80);
        assert_eq!(
            offset_of!(ClientBufferFromHostBufferArgs, done_with_host_buffer),
            104
        );
        assert_eq!(LoadedExecutableDestroyArgs::SIZE, 24);
        assert_eq!(LoadedExecutableGetExecutableArgs::SIZE, 32);
        assert_eq!(ExecutableNumOutputsArgs::SIZE, 32);
        assert_eq!(ExecutableDestroyArgs::SIZE, 24);
        assert_eq!(ExecuteOptions::SIZE, 112);
        assert_eq!(offset_of!(ExecuteOptions, launch_id), 48);
        assert_eq!(offset_of!(ExecuteOptions, non_donatable_input_indices), 56);
        assert_eq!(offset_of!(ExecuteOptions, call_location), 80);
        assert_eq!(offset_of!(ExecuteOptions, num_tasks), 88);
        assert_eq!(LoadedExecutableExecuteArgs::SIZE, 80);
        assert_eq!(offset_of!(LoadedExecutableExecuteArgs, output_lists), 56);
        assert_eq!(BufferDestroyArgs::SIZE, 24);
        // 28, not size_of's 32, as for DeviceDescriptionIdArgs.
        assert_eq!(BufferElementTypeArgs::SIZE, 28);
        assert_eq!(offset_of!(BufferElementTypeArgs, type_), 24);
        assert_eq!(BufferDimensionsArgs::SIZE, 40);
        assert_eq!(BufferToHostBufferArgs::SIZE, 56);
        assert_eq!(offset_of!(BufferToHostBufferArgs, event), 48);
    }

    #[test]
    fn new_sets_struct_size_and_zeroes_the_rest() {
        let a = ClientCreateArgs::new();
        assert_eq!(a.struct_size, ClientCreateArgs::SIZE);
        assert!(a.client.is_null() && a.create_options.is_null());
        assert!(a.kv_get_callback.is_none());
    }
}
