//! Compiling and running on a PJRT client: [`Client::compile`] turns StableHLO text
//! into an [`Executable`] (`PJRT_Client_Compile`), [`Client::to_device`] copies a host
//! array into a device [`Buffer`] (`PJRT_Client_BufferFromHostBuffer`),
//! [`Executable::execute`] runs on buffers (`PJRT_LoadedExecutable_Execute`) and
//! [`Buffer::to_host`] copies a result back (`PJRT_Buffer_ToHostBuffer`). Every
//! asynchronous call's event is awaited (`PJRT_Event_Await`) and destroyed
//! (`PJRT_Event_Destroy`) before the call returns, so a value here is always
//! complete. Executables and buffers hold the client's handle, so the client is
//! destroyed after the last of them; each is destroyed when dropped.
//!
//! Every failure is a [`PluginError::Call`] naming the PJRT call with the plugin's
//! message; nothing here panics on what a plugin returns.

use std::ffi::c_char;
use std::rc::Rc;

use super::pjrt_api::{self as c, StructSize};
use super::plugin::{call, Client, ClientHandle, PluginError};
use super::proto::CompileOptions;
use crate::tensor::{DType, Tensor};

/// An element type faber moves to and from a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementType {
    F32,
    F64,
}

impl ElementType {
    fn pjrt(self) -> c::BufferType {
        match self {
            ElementType::F32 => c::BUFFER_TYPE_F32,
            ElementType::F64 => c::BUFFER_TYPE_F64,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            ElementType::F32 => 4,
            ElementType::F64 => 8,
        }
    }

    /// The element type of a tensor of `dtype`.
    pub fn of(dtype: DType) -> ElementType {
        match dtype {
            DType::F32 => ElementType::F32,
            DType::F64 => ElementType::F64,
        }
    }

    /// The tensor element type of this one.
    pub fn dtype(self) -> DType {
        match self {
            ElementType::F32 => DType::F32,
            ElementType::F64 => DType::F64,
        }
    }
}

/// A dense row-major array on the host.
#[derive(Clone, Debug, PartialEq)]
pub enum HostArray {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl HostArray {
    /// A tensor's elements (a resident value's host copy: read once).
    pub fn of(t: &Tensor) -> HostArray {
        match (t.data_f32(), t.data_f64()) {
            (Some(v), _) => HostArray::F32(v.to_vec()),
            (_, Some(v)) => HostArray::F64(v.to_vec()),
            (None, None) => HostArray::F64(t.values().into_owned()),
        }
    }

    /// The elements' size in bytes.
    pub fn bytes(&self) -> usize {
        self.len() * self.element_type().size()
    }

    pub fn element_type(&self) -> ElementType {
        match self {
            HostArray::F32(_) => ElementType::F32,
            HostArray::F64(_) => ElementType::F64,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            HostArray::F32(v) => v.len(),
            HostArray::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A compiled program loaded on the client's devices.
pub struct Executable {
    client: Rc<ClientHandle>,
    raw: *mut c::LoadedExecutable,
    num_outputs: usize,
}

/// An array in device memory.
pub struct Buffer {
    client: Rc<ClientHandle>,
    raw: *mut c::Buffer,
}

fn failed(call: &'static str, message: &str) -> PluginError {
    PluginError::Call {
        call,
        message: message.to_string(),
        code: 0,
    }
}

/// Awaits `event` (when the plugin returned one), then destroys it; the await's
/// error, if any, is the result.
fn await_event(api: &c::Api, event: *mut c::Event) -> Result<(), PluginError> {
    if event.is_null() {
        return Ok(());
    }
    let mut a = c::EventAwaitArgs::new();
    a.event = event;
    let awaited = call(api, "PJRT_Event_Await", api.event_await, &mut a);
    let mut d = c::EventDestroyArgs::new();
    d.event = event;
    let destroyed = call(api, "PJRT_Event_Destroy", api.event_destroy, &mut d);
    awaited.and(destroyed)
}

/// The `index`-th device the client `h` can address
/// (`PJRT_Client_AddressableDevices`).
fn addressable_device(h: &ClientHandle, index: usize) -> Result<*mut c::Device, PluginError> {
    {
        let mut args = c::ClientAddressableDevicesArgs::new();
        args.client = h.raw;
        call(
            h.api,
            "PJRT_Client_AddressableDevices",
            h.api.client_addressable_devices,
            &mut args,
        )?;
        if args.addressable_devices.is_null() || index >= args.num_addressable_devices {
            return Err(failed(
                "PJRT_Client_AddressableDevices",
                &format!(
                    "device {index} asked for; the client addresses {}",
                    args.num_addressable_devices
                ),
            ));
        }
        // SAFETY: the plugin returned `num_addressable_devices` handles at
        // `addressable_devices`, owned by the live client; `index` is in range.
        Ok(unsafe { *args.addressable_devices.add(index) })
    }
}

/// [`Client::compile`] on the client's shared handle (also what a resident buffer's
/// finiteness probe compiles with: src/xla/resident.rs).
pub(super) fn compile_on(
    h: &Rc<ClientHandle>,
    mlir: &str,
    options: &CompileOptions,
) -> Result<Executable, PluginError> {
    compile_encoded(h, mlir, &options.encode())
}

/// Compiles StableHLO text with serialized compile options `opts` (a
/// `CompileOptionsProto`: [`CompileOptions`], or the SPMD options of
/// src/xla/spmd.rs).
pub(super) fn compile_encoded(
    h: &Rc<ClientHandle>,
    mlir: &str,
    opts: &[u8],
) -> Result<Executable, PluginError> {
    let api = h.api;
    let format = b"mlir";
    let mut code = mlir.as_bytes().to_vec();
    let mut program = c::Program::new();
    program.code = code.as_mut_ptr().cast::<c_char>();
    program.code_size = code.len();
    program.format = format.as_ptr().cast::<c_char>();
    program.format_size = format.len();
    let mut args = c::ClientCompileArgs::new();
    args.client = h.raw;
    args.program = &program;
    args.compile_options = opts.as_ptr().cast::<c_char>();
    args.compile_options_size = opts.len();
    call(api, "PJRT_Client_Compile", api.client_compile, &mut args)?;
    if args.executable.is_null() {
        return Err(failed(
            "PJRT_Client_Compile",
            "the plugin returned no executable",
        ));
    }
    let mut exe = Executable {
        client: Rc::clone(h),
        raw: args.executable,
        num_outputs: 0,
    };
    exe.num_outputs = exe.count_outputs()?;
    Ok(exe)
}

impl Client<'_> {
    /// How many devices the client can address (`PJRT_Client_AddressableDevices`):
    /// the ordinals `0..n` that [`Client::to_device`] and a device take.
    pub fn addressable_device_count(&self) -> Result<usize, PluginError> {
        let h = &self.handle;
        let mut args = c::ClientAddressableDevicesArgs::new();
        args.client = h.raw;
        call(
            h.api,
            "PJRT_Client_AddressableDevices",
            h.api.client_addressable_devices,
            &mut args,
        )?;
        Ok(if args.addressable_devices.is_null() {
            0
        } else {
            args.num_addressable_devices
        })
    }

    /// The id (`PJRT_DeviceDescription_Id`) of addressable device `index`, what a
    /// device assignment names.
    pub fn addressable_device_id(&self, index: usize) -> Result<i64, PluginError> {
        let device = addressable_device(&self.handle, index)?;
        Ok(i64::from(self.describe(device)?.id))
    }

    /// Compiles StableHLO MLIR text (`PJRT_Client_Compile`, format "mlir").
    pub fn compile(&self, mlir: &str, options: &CompileOptions) -> Result<Executable, PluginError> {
        compile_on(&self.handle, mlir, options)
    }

    /// Copies `data` (dense, row-major, of shape `dims`) to addressable device
    /// `device` (`PJRT_Client_BufferFromHostBuffer`, the data copied during the call).
    pub fn to_device(
        &self,
        data: &HostArray,
        dims: &[usize],
        device: usize,
    ) -> Result<Buffer, PluginError> {
        const CALL: &str = "PJRT_Client_BufferFromHostBuffer";
        let n = dims.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
        if n != Some(data.len()) {
            return Err(failed(
                CALL,
                &format!("{} elements given for dimensions {dims:?}", data.len()),
            ));
        }
        let h = &self.handle;
        let device = addressable_device(h, device)?;
        let dims64: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let mut args = c::ClientBufferFromHostBufferArgs::new();
        args.client = h.raw;
        args.data = match data {
            HostArray::F32(v) => v.as_ptr().cast(),
            HostArray::F64(v) => v.as_ptr().cast(),
        };
        args.type_ = data.element_type().pjrt();
        args.dims = dims64.as_ptr();
        args.num_dims = dims64.len();
        args.host_buffer_semantics = c::HOST_IMMUTABLE_ONLY_DURING_CALL;
        args.device = device;
        call(h.api, CALL, h.api.client_buffer_from_host_buffer, &mut args)?;
        // Own the buffer first, so it is destroyed if the event reports an error.
        let buffer = (!args.buffer.is_null()).then(|| Buffer {
            client: Rc::clone(h),
            raw: args.buffer,
        });
        await_event(h.api, args.done_with_host_buffer)?;
        buffer.ok_or_else(|| failed(CALL, "the plugin returned no buffer"))
    }
}

impl Executable {
    /// How many arrays one execution returns (`PJRT_Executable_NumOutputs` of
    /// `PJRT_LoadedExecutable_GetExecutable`).
    pub fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    fn count_outputs(&self) -> Result<usize, PluginError> {
        let api = self.client.api;
        let mut g = c::LoadedExecutableGetExecutableArgs::new();
        g.loaded_executable = self.raw;
        call(
            api,
            "PJRT_LoadedExecutable_GetExecutable",
            api.loaded_executable_get_executable,
            &mut g,
        )?;
        if g.executable.is_null() {
            return Err(failed(
                "PJRT_LoadedExecutable_GetExecutable",
                "the plugin returned no executable",
            ));
        }
        let mut n = c::ExecutableNumOutputsArgs::new();
        n.executable = g.executable;
        let counted = call(
            api,
            "PJRT_Executable_NumOutputs",
            api.executable_num_outputs,
            &mut n,
        );
        let mut d = c::ExecutableDestroyArgs::new();
        d.executable = g.executable;
        let destroyed = call(
            api,
            "PJRT_Executable_Destroy",
            api.executable_destroy,
            &mut d,
        );
        counted.and(destroyed)?;
        Ok(n.num_outputs)
    }

    /// Runs on the device the program was compiled for (its device assignment, else
    /// the plugin's default) with `args`, which must live there
    /// (`PJRT_LoadedExecutable_Execute`), waits for the outputs and returns them.
    pub fn execute(&self, args: &[&Buffer]) -> Result<Vec<Buffer>, PluginError> {
        let mut outs = self.execute_on_devices(&[args.to_vec()])?;
        outs.pop()
            .ok_or_else(|| failed("PJRT_LoadedExecutable_Execute", "no output list"))
    }

    /// Runs once on each device of the program's device assignment, argument list
    /// `d` on device `d` (its buffers must live there), as one
    /// `PJRT_LoadedExecutable_Execute` with `num_devices` = `lists.len()`: an SPMD
    /// program's partitions (src/xla/spmd.rs). Waits for every device; returns the
    /// output lists in the same order.
    pub fn execute_on_devices(
        &self,
        lists: &[Vec<&Buffer>],
    ) -> Result<Vec<Vec<Buffer>>, PluginError> {
        const CALL: &str = "PJRT_LoadedExecutable_Execute";
        let api = self.client.api;
        let num_args = lists.first().map_or(0, Vec::len);
        if lists.is_empty() || lists.iter().any(|l| l.len() != num_args) {
            return Err(failed(CALL, "argument lists of different lengths"));
        }
        if lists
            .iter()
            .flatten()
            .any(|b| !Rc::ptr_eq(&b.client, &self.client))
        {
            return Err(failed(CALL, "an argument lives on another client"));
        }
        let raw_args: Vec<Vec<*mut c::Buffer>> = lists
            .iter()
            .map(|l| l.iter().map(|b| b.raw).collect())
            .collect();
        let arg_lists: Vec<*const *mut c::Buffer> = raw_args.iter().map(|l| l.as_ptr()).collect();
        let mut outputs: Vec<Vec<*mut c::Buffer>> =
            vec![vec![std::ptr::null_mut(); self.num_outputs]; lists.len()];
        let output_lists: Vec<*mut *mut c::Buffer> =
            outputs.iter_mut().map(|l| l.as_mut_ptr()).collect();
        let mut done: Vec<*mut c::Event> = vec![std::ptr::null_mut(); lists.len()];
        let mut options = c::ExecuteOptions::new();
        let mut e = c::LoadedExecutableExecuteArgs::new();
        e.executable = self.raw;
        e.options = &mut options;
        e.argument_lists = arg_lists.as_ptr();
        e.num_devices = lists.len();
        e.num_args = num_args;
        e.output_lists = output_lists.as_ptr();
        e.device_complete_events = done.as_mut_ptr();
        call(api, CALL, api.loaded_executable_execute, &mut e)?;
        // Own every output first, so all are destroyed on any later error.
        let owned: Vec<Vec<Option<Buffer>>> = outputs
            .iter()
            .map(|l| {
                l.iter()
                    .map(|&raw| {
                        (!raw.is_null()).then(|| Buffer {
                            client: Rc::clone(&self.client),
                            raw,
                        })
                    })
                    .collect()
            })
            .collect();
        let mut awaited = Ok(());
        for &event in &done {
            awaited = awaited.and(await_event(api, event));
        }
        awaited?;
        owned
            .into_iter()
            .map(|l| {
                l.into_iter()
                    .map(|b| b.ok_or_else(|| failed(CALL, "the plugin returned a null output")))
                    .collect()
            })
            .collect()
    }
}

impl Buffer {
    /// The buffer's dimensions (`PJRT_Buffer_Dimensions`).
    pub fn dims(&self) -> Result<Vec<usize>, PluginError> {
        let api = self.client.api;
        let mut a = c::BufferDimensionsArgs::new();
        a.buffer = self.raw;
        call(api, "PJRT_Buffer_Dimensions", api.buffer_dimensions, &mut a)?;
        if a.num_dims == 0 {
            return Ok(Vec::new());
        }
        if a.dims.is_null() {
            return Err(failed("PJRT_Buffer_Dimensions", "no dimensions returned"));
        }
        // SAFETY: the plugin returned `num_dims` extents at `dims`, owned by the
        // live buffer; they are copied at once.
        let dims = unsafe { std::slice::from_raw_parts(a.dims, a.num_dims) };
        dims.iter()
            .map(|&d| {
                usize::try_from(d)
                    .map_err(|_| failed("PJRT_Buffer_Dimensions", &format!("extent {d}")))
            })
            .collect()
    }

    /// The buffer's element type (`PJRT_Buffer_ElementType`), `None` for a type
    /// faber does not move.
    pub fn element_type(&self) -> Result<Option<ElementType>, PluginError> {
        let api = self.client.api;
        let mut a = c::BufferElementTypeArgs::new();
        a.buffer = self.raw;
        call(
            api,
            "PJRT_Buffer_ElementType",
            api.buffer_element_type,
            &mut a,
        )?;
        Ok(match a.type_ {
            c::BUFFER_TYPE_F32 => Some(ElementType::F32),
            c::BUFFER_TYPE_F64 => Some(ElementType::F64),
            _ => None,
        })
    }

    /// Copies the buffer to the host (`PJRT_Buffer_ToHostBuffer`); returns the
    /// elements in row-major order and the dimensions.
    pub fn to_host(&self) -> Result<(HostArray, Vec<usize>), PluginError> {
        const CALL: &str = "PJRT_Buffer_ToHostBuffer";
        let dims = self.dims()?;
        let Some(ty) = self.element_type()? else {
            return Err(failed(CALL, "an element type other than f32 or f64"));
        };
        let n: usize = dims.iter().product();
        let mut out = match ty {
            ElementType::F32 => HostArray::F32(vec![0.0; n]),
            ElementType::F64 => HostArray::F64(vec![0.0; n]),
        };
        let api = self.client.api;
        let mut a = c::BufferToHostBufferArgs::new();
        a.src = self.raw;
        a.dst = match &mut out {
            HostArray::F32(v) => v.as_mut_ptr().cast(),
            HostArray::F64(v) => v.as_mut_ptr().cast(),
        };
        a.dst_size = n * ty.size();
        call(api, CALL, api.buffer_to_host_buffer, &mut a)?;
        await_event(api, a.event)?;
        Ok((out, dims))
    }
}

impl Drop for Executable {
    fn drop(&mut self) {
        let api = self.client.api;
        let mut d = c::LoadedExecutableDestroyArgs::new();
        d.executable = self.raw;
        // A failure to destroy has nowhere to go; its message is read and dropped.
        let _ = call(
            api,
            "PJRT_LoadedExecutable_Destroy",
            api.loaded_executable_destroy,
            &mut d,
        );
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let api = self.client.api;
        let mut d = c::BufferDestroyArgs::new();
        d.buffer = self.raw;
        let _ = call(api, "PJRT_Buffer_Destroy", api.buffer_destroy, &mut d);
    }
}
