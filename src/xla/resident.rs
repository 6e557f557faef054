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
//!
//! With `--devices N` a value may be replicated over the N devices of an SPMD
//! runner's [`Mesh`]: one buffer per device (the train step's parameters and
//! gradients, the optimizer's state), so the next SPMD program takes them without a
//! copy, and a one-device program takes the buffer on its own device.
//!
//! A value may also be split over the mesh (tensor parallel, `[run.sharding]`):
//! buffer `d` is shard `d` along one axis. The next SPMD program takes the shards as
//! they are; a one-device program or a host read gets the whole value, the shards
//! copied to the host and joined. [`held`] counts the bytes resident values hold on
//! each device (`--verbose`; the tests that check a split model's footprint).

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::exec::{compile_on, Buffer, ElementType, Executable, HostArray};
use super::plugin::ClientHandle;
use super::proto::CompileOptions;
use super::stablehlo::{Binary, Compare, Function, Reduction, TensorType};
use crate::tensor::{DeviceData, HostData, Tensor};

thread_local! {
    static BYTES_IN: Cell<u64> = const { Cell::new(0) };
    static EXECUTIONS: Cell<u64> = const { Cell::new(0) };
    static HELD: RefCell<std::collections::BTreeMap<i64, Held>> =
        const { RefCell::new(std::collections::BTreeMap::new()) };
}

/// The bytes resident values hold on one device: now, and the most at any time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    pub now: u64,
    pub peak: u64,
}

/// Per device id, the bytes this thread's resident values hold there.
pub fn held() -> Vec<(i64, Held)> {
    HELD.with(|h| h.borrow().iter().map(|(&d, &b)| (d, b)).collect())
}

fn hold(device: i64, bytes: u64) {
    HELD.with(|h| {
        let mut h = h.borrow_mut();
        let e = h.entry(device).or_default();
        e.now += bytes;
        e.peak = e.peak.max(e.now);
    });
}

fn release(device: i64, bytes: u64) {
    // `try_with`: a value dropped while the thread ends has nobody to tell.
    let _ = HELD.try_with(|h| {
        if let Some(e) = h.borrow_mut().get_mut(&device) {
            e.now = e.now.saturating_sub(bytes);
        }
    });
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
    finite: RefCell<HashMap<Vec<TensorType>, Rc<Executable>>>,
}

impl Probe {
    /// The id of the device this probe compiles for (`-1`: the plugin's default).
    pub(super) fn device_id(&self) -> i64 {
        self.options.device_id.unwrap_or(-1)
    }

    pub(super) fn new(handle: Rc<ClientHandle>, options: CompileOptions) -> Probe {
        Probe {
            handle,
            options,
            finite: RefCell::new(HashMap::new()),
        }
    }

    /// The number of non-finite elements of each buffer (of the types `types`),
    /// counted on the device by one program: `d = x − x` is 0 exactly where `x` is
    /// finite (∞ − ∞ and NaN give NaN), and `d == d` is false exactly for NaN. The
    /// counts come back as one f32 vector.
    pub(super) fn count_non_finite(
        &self,
        buffers: &[&Buffer],
        types: &[TensorType],
    ) -> Option<Vec<f64>> {
        if buffers.is_empty() || buffers.len() != types.len() {
            return None;
        }
        let exe = {
            let mut cache = self.finite.borrow_mut();
            match cache.get(types) {
                Some(e) => Rc::clone(e),
                None => {
                    let text = counts_program(types);
                    let exe = Rc::new(compile_on(&self.handle, &text, &self.options).ok()?);
                    cache.insert(types.to_vec(), Rc::clone(&exe));
                    exe
                }
            }
        };
        let out = exe.execute(buffers).ok()?;
        note_execution();
        let (data, _) = out.first()?.to_host().ok()?;
        crate::tensor::count_fetched(4 * types.len());
        match data {
            HostArray::F32(v) if v.len() == types.len() => {
                Some(v.iter().map(|&x| f64::from(x)).collect())
            }
            _ => None,
        }
    }
}

/// The program of [`Probe::count_non_finite`].
pub(super) fn counts_program(types: &[TensorType]) -> String {
    let (mut f, params) = Function::new(types);
    let mut acc: Option<super::stablehlo::Value> = None;
    for (&x, ty) in params.iter().zip(types) {
        let d = f.binary(Binary::Subtract, x, x);
        let zero = f.splat(ty.elem, 0.0, &ty.dims);
        let one = f.splat(ty.elem, 1.0, &ty.dims);
        let bad = f.select_if(d, Compare::Eq, d, zero, one);
        let axes: Vec<usize> = (0..ty.rank()).collect();
        let n = f.reduce(bad, &axes, Reduction::Sum);
        let n = f.convert(n, ElementType::F32);
        let n = f.reshape(n, &[1]);
        acc = Some(match acc {
            None => n,
            Some(a) => f.concatenate(a, n, 0),
        });
    }
    let results: Vec<_> = acc.into_iter().collect();
    f.finish(&results)
}

/// The devices an SPMD runner's replicated values live on (src/xla/spmd.rs): a
/// value replicated over them is one buffer per device, buffer `d` on the mesh's
/// device `d`. Compared by identity: a value is the mesh's only when it names it.
pub struct Mesh {
    /// The device count N.
    pub(super) devices: usize,
    /// The devices' ids, in mesh order.
    pub(super) ids: Vec<i64>,
    /// Which of the N devices the one-device programs run on (`--device`), and its
    /// probe: a replicated value's buffer there is what they take and what a read
    /// copies to the host.
    pub(super) home: usize,
    pub(super) probe: Rc<Probe>,
}

/// A tensor's elements in device memory: one buffer, or — replicated over a
/// [`Mesh`] — one per device of the mesh, all holding the same elements.
pub struct Resident {
    buffers: Vec<Buffer>,
    /// The buffer on the probe's device (`buffers[home]`).
    home: usize,
    /// The whole value's type (a split value's shards are smaller).
    ty: TensorType,
    probe: Rc<Probe>,
    mesh: Option<Rc<Mesh>>,
    /// Split over the mesh along this axis: buffer `d` is shard `d`.
    split: Option<usize>,
    /// Per buffer, the device id and the bytes it holds there (for [`held`]).
    holds: Vec<(i64, u64)>,
}

impl Drop for Resident {
    fn drop(&mut self) {
        for &(d, b) in &self.holds {
            release(d, b);
        }
    }
}

impl Resident {
    fn new(
        buffers: Vec<Buffer>,
        home: usize,
        ty: TensorType,
        probe: &Rc<Probe>,
        mesh: Option<&Rc<Mesh>>,
        split: Option<usize>,
    ) -> Resident {
        let whole = (ty.dims.iter().product::<usize>() * ty.elem.size()) as u64;
        let per = if split.is_some() {
            whole / buffers.len().max(1) as u64
        } else {
            whole
        };
        let holds: Vec<(i64, u64)> = match mesh {
            Some(m) => m.ids.iter().map(|&d| (d, per)).collect(),
            None => vec![(probe.device_id(), per)],
        };
        for &(d, b) in &holds {
            hold(d, b);
        }
        Resident {
            buffers,
            home,
            ty,
            probe: Rc::clone(probe),
            mesh: mesh.cloned(),
            split,
            holds,
        }
    }

    /// The buffer, when the whole value lives on the device `probe` belongs to.
    pub(super) fn buffer_on(&self, probe: &Rc<Probe>) -> Option<&Buffer> {
        if Rc::ptr_eq(&self.probe, probe) && self.split.is_none() {
            self.buffers.get(self.home)
        } else {
            None
        }
    }

    /// The buffers, one per device of `mesh`, when the value is replicated over it.
    pub(super) fn replicas_on(&self, mesh: &Rc<Mesh>) -> Option<&[Buffer]> {
        let m = self.mesh.as_ref()?;
        (Rc::ptr_eq(m, mesh) && self.buffers.len() == mesh.devices && self.split.is_none())
            .then_some(&self.buffers[..])
    }

    /// The shards, one per device of `mesh`, and the axis they split, when the
    /// value is split over it.
    pub(super) fn shards_on(&self, mesh: &Rc<Mesh>) -> Option<(&[Buffer], usize)> {
        let m = self.mesh.as_ref()?;
        let axis = self.split?;
        (Rc::ptr_eq(m, mesh) && self.buffers.len() == mesh.devices)
            .then_some((&self.buffers[..], axis))
    }
}

/// The shards `parts` (each of shape `dims` with axis `axis` divided by their
/// count) joined along `axis`.
fn join<T: Copy>(parts: &[Vec<T>], dims: &[usize], axis: usize) -> Vec<T> {
    let n = parts.len().max(1);
    let outer: usize = dims[..axis].iter().product();
    let per = dims.get(axis).copied().unwrap_or(0) / n;
    let inner: usize = dims.get(axis + 1..).map_or(1, |r| r.iter().product());
    let mut out = Vec::with_capacity(outer * per * n * inner);
    for o in 0..outer {
        for p in parts {
            out.extend_from_slice(&p[o * per * inner..(o + 1) * per * inner]);
        }
    }
    out
}

impl DeviceData for Resident {
    fn fetch(&self) -> Result<HostData, String> {
        if let Some(axis) = self.split {
            let mut f32s = Vec::new();
            let mut f64s = Vec::new();
            for b in &self.buffers {
                match b.to_host().map_err(|e| e.to_string())? {
                    (HostArray::F32(v), _) => f32s.push(v),
                    (HostArray::F64(v), _) => f64s.push(v),
                }
            }
            return match (f32s.is_empty(), f64s.is_empty()) {
                (false, true) => Ok(HostData::F32(join(&f32s, &self.ty.dims, axis))),
                (true, false) => Ok(HostData::F64(join(&f64s, &self.ty.dims, axis))),
                _ => Err("a split value's shards of mixed element types".into()),
            };
        }
        let buffer = self
            .buffers
            .get(self.home)
            .ok_or("a resident value without its buffer")?;
        match buffer.to_host() {
            Ok((HostArray::F32(v), _)) => Ok(HostData::F32(v)),
            Ok((HostArray::F64(v), _)) => Ok(HostData::F64(v)),
            Err(e) => Err(e.to_string()),
        }
    }

    fn all_finite(&self) -> Option<bool> {
        if self.split.is_some() {
            return None;
        }
        let buffer = self.buffers.get(self.home)?;
        let n = self
            .probe
            .count_non_finite(&[buffer], std::slice::from_ref(&self.ty))?;
        Some(n.first()? == &0.0)
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
    let r = Resident::new(
        vec![buffer],
        0,
        TensorType::new(elem, dims),
        probe,
        None,
        None,
    );
    Tensor::resident(dims, elem.dtype(), Rc::new(r))
}

/// `buffers` (one per device of `mesh`, each of shape `dims` and elements `elem`,
/// holding the same elements) as a tensor replicated over the mesh: an SPMD program
/// takes the buffers as they are, a one-device program on the mesh's home device
/// takes that device's, and a read copies that one to the host. `None` when there
/// is not one buffer per device.
pub(super) fn replicated_tensor(
    buffers: Vec<Buffer>,
    dims: &[usize],
    elem: ElementType,
    mesh: &Rc<Mesh>,
) -> Option<Tensor> {
    if buffers.len() != mesh.devices || mesh.home >= mesh.devices {
        return None;
    }
    let r = Resident::new(
        buffers,
        mesh.home,
        TensorType::new(elem, dims),
        &mesh.probe,
        Some(mesh),
        None,
    );
    Some(Tensor::resident(dims, elem.dtype(), Rc::new(r)))
}

/// `shards` (shard `d` on device `d` of `mesh`, splitting the value of shape `dims`
/// along `axis` into equal parts) as a tensor split over the mesh: an SPMD program
/// takes the shards as they are; a one-device program or a host read gets the
/// whole value, joined on the host. `None` when there is not one shard per device
/// or `axis` does not split `dims` into them.
pub(super) fn split_tensor(
    shards: Vec<Buffer>,
    dims: &[usize],
    axis: usize,
    elem: ElementType,
    mesh: &Rc<Mesh>,
) -> Option<Tensor> {
    let n = mesh.devices;
    if shards.len() != n || axis >= dims.len() || !dims[axis].is_multiple_of(n) {
        return None;
    }
    let r = Resident::new(
        shards,
        mesh.home,
        TensorType::new(elem, dims),
        &mesh.probe,
        Some(mesh),
        Some(axis),
    );
    Some(Tensor::resident(dims, elem.dtype(), Rc::new(r)))
}

/// The shards holding `t` on the devices of `mesh` and the axis they split, if it
/// is split there.
pub(super) fn shards_of<'t>(t: &'t Tensor, mesh: &Rc<Mesh>) -> Option<(&'t [Buffer], usize)> {
    t.device_data()?
        .as_any()
        .downcast_ref::<Resident>()?
        .shards_on(mesh)
}

/// The buffers holding `t` on every device of `mesh`, if it is replicated there.
pub(super) fn replicas_of<'t>(t: &'t Tensor, mesh: &Rc<Mesh>) -> Option<&'t [Buffer]> {
    t.device_data()?
        .as_any()
        .downcast_ref::<Resident>()?
        .replicas_on(mesh)
}

/// The index of the first of `leaves` holding a NaN or an infinity (`Some(None)`
/// when every one is finite), counted on the device in one program when every leaf
/// is a buffer there and not yet copied; `None` otherwise (the caller reads them).
pub(super) fn first_non_finite(leaves: &[&Tensor], probe: &Rc<Probe>) -> Option<Option<usize>> {
    let mut buffers = Vec::with_capacity(leaves.len());
    let mut types = Vec::with_capacity(leaves.len());
    for t in leaves {
        if !t.on_device_only() {
            return None;
        }
        let r = t.device_data()?.as_any().downcast_ref::<Resident>()?;
        buffers.push(r.buffer_on(probe)?);
        types.push(r.ty.clone());
    }
    let counts = probe.count_non_finite(&buffers, &types)?;
    Some(counts.iter().position(|&n| n != 0.0))
}

/// The buffer holding `t` on the device of `probe`, if it is there.
pub(super) fn buffer_of<'t>(t: &'t Tensor, probe: &Rc<Probe>) -> Option<&'t Buffer> {
    t.device_data()?
        .as_any()
        .downcast_ref::<Resident>()?
        .buffer_on(probe)
}

#[cfg(test)]
mod tests {
    use super::join;

    /// A 2 × 4 array split in two along each axis, joined back: along the last
    /// axis the shards interleave row by row, along the first they follow.
    #[test]
    fn shards_join_along_their_axis() {
        let whole: Vec<u32> = (0..8).collect();
        let cols = vec![vec![0, 1, 4, 5], vec![2, 3, 6, 7]];
        assert_eq!(join(&cols, &[2, 4], 1), whole);
        let rows = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
        assert_eq!(join(&rows, &[2, 4], 0), whole);
        // A rank-1 array in four.
        let parts = vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]];
        assert_eq!(join(&parts, &[8], 0), whole);
    }
}
