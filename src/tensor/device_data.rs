//! The device side of a tensor whose elements live on an accelerator (remote.rs): what
//! a device gives the tensor module — a copy of the elements, a finiteness answer — and
//! the bytes copied back, counted per thread. A leaf: it knows nothing of tensors.

use std::any::Any;
use std::cell::Cell;

/// Elements copied back from a device.
pub enum HostData {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

/// The device side of a resident tensor.
pub trait DeviceData {
    /// The elements, copied to the host.
    fn fetch(&self) -> Result<HostData, String>;
    /// Whether every element is finite, computed where the elements are (`None` when
    /// the device cannot tell: the caller then reads the host copy).
    fn all_finite(&self) -> Option<bool>;
    /// For the device's own code to recognise its buffers.
    fn as_any(&self) -> &dyn Any;
}

thread_local! {
    static FETCHED: Cell<u64> = const { Cell::new(0) };
}

/// Bytes copied from devices to the host on this thread so far (for `--verbose` and
/// the tests that check what a training step moves).
pub fn fetched_bytes() -> u64 {
    FETCHED.with(|f| f.get())
}

/// Counts `n` bytes copied from a device outside a tensor (a device's answer to
/// [`DeviceData::all_finite`]).
pub fn count_fetched(n: usize) {
    FETCHED.with(|f| f.set(f.get() + n as u64));
}

/// The payload a failed copy to the host unwinds with (see the module doc).
#[derive(Debug)]
pub struct DeviceLost(pub String);
