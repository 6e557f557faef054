//! Device-resident tensors: a device program's result stays in device memory as a
//! [`Resident`] buffer inside the interpreter's tensor value (src/tensor/remote.rs),
//! so the next program on the same device takes it as it is; the host gets a copy
//! only when host code reads the elements. What moves is counted per thread in
//! [`Traffic`] (`--verbose`, and the tests that check that a training step moves
//! only its batch in and its loss out).
//!
//! A resident buffer also answers "is every element finite?" on the device — a
//! program of a few operations, compiled once per shape by its device's [`Probe`] —
//! so gradus' divergence checks (`hospes.primum_non_finitum`) read one number per
//! leaf instead of the leaf.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::exec::{compile_on, Buffer, ElementType, Executable, HostArray};
use super::plugin::ClientHandle;
use super::proto::CompileOptions;
use super::stablehlo::{Binary, Compare, Function, Reduction, TensorType};
use crate::tensor::{DType, DeviceData, HostData, Tensor};

thread_local! {
    static BYTES_IN: Cell<u64> = const { Cell::new(0) };
    static EXECUTIONS: Cell<u64> = const { Cell::new(0) };
}

/// What this thread has moved and run on devices so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Bytes copied from the host into device buffers.
    pub bytes_in: u64,
    /// Bytes copied from device buffers to the host (src/tensor/remote.rs).
    pub bytes_out: u64,
    /// Programs executed (finiteness probes included).
    pub executions: u64,
}

impl Traffic {
    /// The counts now.
    pub fn now() -> Traffic {
        Traffic {
            bytes_in: BYTES_IN.with(Cell::get),
            bytes_out: crate::tensor::fetched_bytes(),
            executions: EXECUTIONS.with(Cell::get),
        }
    }

    /// What happened since `start`.
    pub fn since(start: Traffic) -> Traffic {
        let now = Traffic::now();
        Traffic {
            bytes_in: now.bytes_in - start.bytes_in,
            bytes_out: now.bytes_out - start.bytes_out,
            executions: now.executions - start.executions,
        }
    }
}

/// Counts `n` bytes copied to a device.
pub(super) fn note_in(n: usize) {
    BYTES_IN.with(|c| c.set(c.get() + n as u64));
}

/// Counts one program executed.
pub(super) fn note_execution() {
    EXECUTIONS.with(|c| c.set(c.get() + 1));
}

/// What one device shares with its resident buffers: the client to compile with,
/// the compile options placing programs there, and the finiteness programs by type.
pub struct Probe {
    handle: Rc<ClientHandle>,
    options: CompileOptions,
    finite: RefCell<HashMap<TensorType, Rc<Executable>>>,
}

impl Probe {
    pub(super) fn new(handle: Rc<ClientHandle>, options: CompileOptions) -> Probe {
        Probe {
            handle,
            options,
            finite: RefCell::new(HashMap::new()),
        }
    }

    /// The number of non-finite elements of `buffer` (of type `ty`), counted on the
    /// device: `d = x − x` is 0 exactly where `x` is finite (∞ − ∞ and NaN give NaN),
    /// and `d == d` is false exactly for NaN.
    fn count_non_finite(&self, buffer: &Buffer, ty: &TensorType) -> Option<f64> {
        let exe = {
            let mut cache = self.finite.borrow_mut();
            match cache.get(ty) {
                Some(e) => Rc::clone(e),
                None => {
                    let (mut f, p) = Function::new(std::slice::from_ref(ty));
                    let x = p[0];
                    let d = f.binary(Binary::Subtract, x, x);
                    let zero = f.splat(ty.elem, 0.0, &ty.dims);
                    let one = f.splat(ty.elem, 1.0, &ty.dims);
                    let bad = f.select_if(d, Compare::Eq, d, zero, one);
                    let axes: Vec<usize> = (0..ty.rank()).collect();
                    let n = f.reduce(bad, &axes, Reduction::Sum);
                    let exe =
                        Rc::new(compile_on(&self.handle, &f.finish(&[n]), &self.options).ok()?);
                    cache.insert(ty.clone(), Rc::clone(&exe));
                    exe
                }
            }
        };
        let out = exe.execute(&[buffer]).ok()?;
        note_execution();
        let (data, _) = out.first()?.to_host().ok()?;
        crate::tensor::count_fetched(match ty.elem {
            ElementType::F32 => 4,
            ElementType::F64 => 8,
        });
        match data {
            HostArray::F32(v) => v.first().map(|&x| f64::from(x)),
            HostArray::F64(v) => v.first().copied(),
        }
    }
}

/// A tensor's elements in device memory.
pub struct Resident {
    buffer: Buffer,
    ty: TensorType,
    probe: Rc<Probe>,
}

impl Resident {
    /// The buffer, when it lives on the device `probe` belongs to.
    pub(super) fn buffer_on(&self, probe: &Rc<Probe>) -> Option<&Buffer> {
        Rc::ptr_eq(&self.probe, probe).then_some(&self.buffer)
    }
}

impl DeviceData for Resident {
    fn fetch(&self) -> Result<HostData, String> {
        match self.buffer.to_host() {
            Ok((HostArray::F32(v), _)) => Ok(HostData::F32(v)),
            Ok((HostArray::F64(v), _)) => Ok(HostData::F64(v)),
            Err(e) => Err(e.to_string()),
        }
    }

    fn all_finite(&self) -> Option<bool> {
        self.probe
            .count_non_finite(&self.buffer, &self.ty)
            .map(|n| n == 0.0)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// `buffer` (of shape `dims`, elements `elem`) as a tensor whose elements stay on
/// the device of `probe`.
pub(super) fn resident_tensor(
    buffer: Buffer,
    dims: &[usize],
    elem: ElementType,
    probe: &Rc<Probe>,
) -> Tensor {
    let dtype = match elem {
        ElementType::F32 => DType::F32,
        ElementType::F64 => DType::F64,
    };
    let r = Resident {
        buffer,
        ty: TensorType::new(elem, dims),
        probe: Rc::clone(probe),
    };
    Tensor::resident(dims, dtype, Rc::new(r))
}

/// The buffer holding `t` on the device of `probe`, if it is there.
pub(super) fn buffer_of<'t>(t: &'t Tensor, probe: &Rc<Probe>) -> Option<&'t Buffer> {
    t.device_data()?
        .as_any()
        .downcast_ref::<Resident>()?
        .buffer_on(probe)
}
