//! Many devices (issue 25): one program compiled for N devices with XLA's SPMD
//! partitioner. The StableHLO's `@main` carries an `mhlo.sharding` attribute on
//! every argument and result — [`Sharding::Batch`], split along axis 0 into N
//! equal shards (`{devices=[N,1]0,1,…}` for a rank-2 array), or
//! [`Sharding::Replicated`] (`{replicated}`) — and the module says
//! `mhlo.num_partitions = N`; it is compiled with `num_partitions` = N,
//! `use_spmd_partitioning` and a device assignment of one replica × N computations
//! ([`SpmdOptions`]). XLA then writes the per-device program and inserts the
//! collectives (a sum over a sharded axis becomes a local sum and an all-reduce).
//! One `PJRT_LoadedExecutable_Execute` runs it with N argument lists: device `d`
//! takes shard `d` of a sharded argument and its own copy of a replicated one, and
//! returns its shard of each result (a replicated result: the whole of it).
//!
//! [`Spmd::call_function`] runs a whole Radix IR function that way, the rule of
//! `faber run --devices N` (docs/xla.md): the function's top-level tensor
//! arguments of rank ≥ 1 are the batch, sharded along axis 0; everything else
//! (records, lists, numbers) is replicated; the results are replicated.
//! [`Spmd::call_replicated`] runs one with every argument and result replicated
//! (the optimizer's leaf update, whose inputs are replicated values).
//! [`Spmd::call_function_sharded`] is the train step with some parameters split
//! too (tensor parallel, `[run.sharding]`): a leaf marked [`Sharding::Columns`]
//! (`{devices=[1,N]…}`) or [`Sharding::Batch`] ("rows") goes in as its N shards,
//! and the results stay replicated.
//!
//! Values stay on the devices: a replicated result is one buffer per device, kept
//! as a resident tensor replicated over the runner's [`Mesh`]
//! (src/xla/resident.rs), which the next SPMD program takes without a copy; a
//! one-device program takes its device's buffer, and a read copies that one to the
//! host. A host value (the batch, the step's numbers, the parameters before the
//! first step) is copied in: a sharded one as its shards, a replicated one whole to
//! every device.

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::device::{FnArg, XlaError};
use super::exec::{compile_encoded, Buffer, ElementType, Executable, HostArray};
use super::plugin::{Client, PluginError};
use super::proto::{CompileOptions, SpmdOptions};
use super::resident::{note_execution, note_in, replicas_of, replicated_tensor, Mesh, Probe};
pub use super::sharding::{annotate, path_matches, result_count, rule_for, Sharding};
use super::stablehlo::{lower_function_with_template, Param, Template, TensorType};
use crate::ir::{FuncId, Program};
use crate::tensor::{self as k, DType, Tensor};

/// Why an SPMD run could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SpmdError {
    /// More devices asked for than the client addresses.
    TooManyDevices { asked: usize, offered: usize },
    /// A batch-sharded argument whose leading axis the device count does not divide.
    Indivisible { shape: Vec<usize>, devices: usize },
    /// Compiling or running failed.
    Xla(XlaError),
}

impl fmt::Display for SpmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpmdError::TooManyDevices { asked, offered } => write!(
                f,
                "{asked} devices asked for; the PJRT plugin offers {offered}"
            ),
            SpmdError::Indivisible { shape, devices } => write!(
                f,
                "a batch of {} (an argument of shape {shape:?}) does not split into {devices} \
                 equal shards",
                shape.first().copied().unwrap_or(0)
            ),
            SpmdError::Xla(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SpmdError {}

impl From<XlaError> for SpmdError {
    fn from(e: XlaError) -> Self {
        SpmdError::Xla(e)
    }
}

impl From<PluginError> for SpmdError {
    fn from(e: PluginError) -> Self {
        SpmdError::Xla(XlaError::Plugin(e))
    }
}

/// Shard `d` of `n` of `data` (of shape `dims`) along `axis`.
fn shard(
    data: &HostArray,
    dims: &[usize],
    n: usize,
    d: usize,
    axis: usize,
) -> (HostArray, Vec<usize>) {
    let outer: usize = dims[..axis].iter().product();
    let len = dims.get(axis).copied().unwrap_or(1);
    let inner: usize = dims.get(axis + 1..).map_or(1, |r| r.iter().product());
    let per = len / n;
    let mut sd = dims.to_vec();
    if let Some(a) = sd.get_mut(axis) {
        *a = per;
    }
    fn take<T: Copy>(
        v: &[T],
        outer: usize,
        len: usize,
        inner: usize,
        lo: usize,
        hi: usize,
    ) -> Vec<T> {
        let mut out = Vec::with_capacity(outer * (hi - lo) * inner);
        for o in 0..outer {
            out.extend_from_slice(&v[(o * len + lo) * inner..(o * len + hi) * inner]);
        }
        out
    }
    let (lo, hi) = (d * per, (d + 1) * per);
    let part = match data {
        HostArray::F32(v) => HostArray::F32(take(v, outer, len, inner, lo, hi)),
        HostArray::F64(v) => HostArray::F64(take(v, outer, len, inner, lo, hi)),
    };
    (part, sd)
}

/// Whether `dims` splits into `n` equal shards along the axis `sharding` splits
/// (a replicated value always does).
fn divides(sharding: Sharding, dims: &[usize], n: usize) -> bool {
    match sharding.axis(dims.len()) {
        None => sharding == Sharding::Replicated,
        Some(a) => dims[a] > 0 && dims[a].is_multiple_of(n),
    }
}

/// An input of an SPMD run: the elements, the (global) shape, how it lies.
pub struct Input {
    pub data: HostArray,
    pub dims: Vec<usize>,
    pub sharding: Sharding,
}

/// Where an input's elements come from.
enum Source<'a> {
    /// The host: copied in at the call.
    Host(HostArray),
    /// Already on every device (a replicated value): buffer `d` on device `d`.
    Replicas(&'a [Buffer]),
}

/// An input of [`Spmd::run_buffers`].
struct In<'a> {
    source: Source<'a>,
    dims: Vec<usize>,
    sharding: Sharding,
}

/// N devices of one client, with a compile cache of SPMD programs.
pub struct Spmd<'p> {
    client: Client<'p>,
    options: SpmdOptions,
    mesh: Rc<Mesh>,
    cache: HashMap<String, Rc<Executable>>,
    templates: HashMap<String, Template>,
    /// Programs compiled, and cache lookups that found one.
    pub compiles: u64,
    pub hits: u64,
}

impl<'p> Spmd<'p> {
    /// Addressable devices `0..n` of `client`; more than it addresses is
    /// [`SpmdError::TooManyDevices`].
    pub fn new(client: Client<'p>, n: usize) -> Result<Spmd<'p>, SpmdError> {
        let offered = client.addressable_device_count()?;
        if n == 0 || n > offered {
            return Err(SpmdError::TooManyDevices { asked: n, offered });
        }
        let device_ids: Vec<i64> = (0..n)
            .map(|d| client.addressable_device_id(d))
            .collect::<Result<_, _>>()?;
        let home = CompileOptions {
            device_id: Some(device_ids[0]),
            ..CompileOptions::default()
        };
        let probe = Rc::new(Probe::new(Rc::clone(&client.handle), home));
        Ok(Spmd {
            client,
            options: SpmdOptions { device_ids },
            mesh: Rc::new(Mesh {
                devices: n,
                home: 0,
                probe,
            }),
            cache: HashMap::new(),
            templates: HashMap::new(),
            compiles: 0,
            hits: 0,
        })
    }

    /// Makes device `ordinal` (one of the N) the replicated values' home, sharing
    /// `probe` (the one-device runner's, src/xla/device.rs): a one-device program
    /// there takes a replicated value's buffer without a copy. Before any value is
    /// made; a device outside the N changes nothing.
    pub(super) fn share_home(&mut self, ordinal: usize, probe: &Rc<Probe>) {
        if ordinal < self.devices() {
            self.mesh = Rc::new(Mesh {
                devices: self.devices(),
                home: ordinal,
                probe: Rc::clone(probe),
            });
        }
    }

    /// The device count N.
    pub fn devices(&self) -> usize {
        self.options.device_ids.len()
    }

    /// Whether `t` is replicated over these devices (its buffers on every one).
    pub fn holds(&self, t: &Tensor) -> bool {
        replicas_of(t, &self.mesh).is_some()
    }

    /// `text` (already annotated) compiled for the N devices, once per `key`.
    pub fn compile(&mut self, key: &str, text: &str) -> Result<Rc<Executable>, SpmdError> {
        if let Some(e) = self.cache.get(key) {
            self.hits += 1;
            return Ok(Rc::clone(e));
        }
        let exe = compile_encoded(&self.client.handle, text, &self.options.encode())?;
        let exe = Rc::new(exe);
        self.compiles += 1;
        self.cache.insert(key.to_string(), Rc::clone(&exe));
        Ok(exe)
    }

    /// Runs `exe` on the N devices: each input copied whole (replicated) or as its
    /// shard (batch) to every device; the results gathered — a replicated one from
    /// device 0, a batch one by joining the shards along axis 0.
    pub fn run(
        &self,
        exe: &Executable,
        inputs: &[Input],
        results: &[Sharding],
    ) -> Result<Vec<(HostArray, Vec<usize>)>, SpmdError> {
        let ins: Vec<In> = inputs
            .iter()
            .map(|i| In {
                source: Source::Host(i.data.clone()),
                dims: i.dims.clone(),
                sharding: i.sharding,
            })
            .collect();
        let outs = self.run_buffers(exe, &ins)?;
        if outs.iter().any(|l| l.len() != results.len()) {
            return Err(XlaError::Result(format!(
                "{} results expected from each device",
                results.len()
            ))
            .into());
        }
        let mut gathered = Vec::with_capacity(results.len());
        for (r, s) in results.iter().enumerate() {
            let (mut data, mut dims) = outs[0][r].to_host()?;
            if *s == Sharding::Batch {
                for list in &outs[1..] {
                    let (more, more_dims) = list[r].to_host()?;
                    match (&mut data, more) {
                        (HostArray::F32(a), HostArray::F32(b)) => a.extend(b),
                        (HostArray::F64(a), HostArray::F64(b)) => a.extend(b),
                        _ => return Err(XlaError::Result("mixed element types".into()).into()),
                    }
                    if let (Some(a), Some(b)) = (dims.first_mut(), more_dims.first()) {
                        *a += b;
                    }
                }
            }
            gathered.push((data, dims));
        }
        Ok(gathered)
    }

    /// Runs `exe` on the N devices and returns each device's output list: a host
    /// input is copied whole (replicated) or as its shard (batch) to every device,
    /// a replicated value's buffers are passed as they are.
    fn run_buffers(&self, exe: &Executable, inputs: &[In]) -> Result<Vec<Vec<Buffer>>, SpmdError> {
        let n = self.devices();
        for i in inputs {
            match (&i.source, i.sharding) {
                (Source::Host(_), s) if !divides(s, &i.dims, n) => {
                    return Err(SpmdError::Indivisible {
                        shape: i.dims.clone(),
                        devices: n,
                    })
                }
                (Source::Replicas(r), Sharding::Replicated) if r.len() != n => {
                    return Err(XlaError::Result(format!(
                        "a value replicated over {} devices passed to {n}",
                        r.len()
                    ))
                    .into())
                }
                (Source::Replicas(_), Sharding::Batch | Sharding::Columns) => {
                    return Err(
                        XlaError::Result("a replicated value passed as a shard".into()).into(),
                    )
                }
                _ => {}
            }
        }
        // Copies first (every device's), then the lists of references.
        let mut copies: Vec<Vec<Option<Buffer>>> = Vec::with_capacity(n);
        for d in 0..n {
            let mut list = Vec::with_capacity(inputs.len());
            for i in inputs {
                let Source::Host(data) = &i.source else {
                    list.push(None);
                    continue;
                };
                // A replicated input whole, a sharded one its shard `d`.
                let part = i
                    .sharding
                    .axis(i.dims.len())
                    .map(|a| shard(data, &i.dims, n, d, a));
                let (data, dims) = part.as_ref().map_or((data, &i.dims), |(p, d)| (p, d));
                list.push(Some(self.client.to_device(data, dims, d)?));
                note_in(data.len() * element_size(data));
            }
            copies.push(list);
        }
        let lists: Vec<Vec<&Buffer>> = copies
            .iter()
            .enumerate()
            .map(|(d, list)| {
                list.iter()
                    .zip(inputs)
                    .map(|(c, i)| match (c, &i.source) {
                        (Some(b), _) => Some(b),
                        (None, Source::Replicas(r)) => r.get(d),
                        (None, Source::Host(_)) => None,
                    })
                    .collect::<Option<Vec<&Buffer>>>()
            })
            .collect::<Option<_>>()
            .ok_or_else(|| XlaError::Result("an argument left the devices".into()))?;
        let outs = exe.execute_on_devices(&lists)?;
        note_execution();
        Ok(outs)
    }

    /// `func` of `program` on `args`, data-parallel over the N devices: its
    /// top-level tensor arguments of rank ≥ 1 sharded along axis 0, everything else
    /// replicated, its results replicated; lowered and compiled once per argument
    /// signature. Returns the outputs — tensors replicated over the devices, which
    /// stay there — and the template that rebuilds the function's result.
    pub fn call_function(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
    ) -> Result<(Vec<Tensor>, Template), SpmdError> {
        self.call(program, func, args, true, &[])
    }

    /// [`Spmd::call_function`] with the tensor leaves of `args` (depth first, in
    /// the order the function's parameters flatten them) that `leaves` gives a
    /// sharding split that way instead (tensor parallel, `[run.sharding]`): such a
    /// leaf is copied in as its N shards, and XLA's SPMD partitioner splits the
    /// step's matmuls along it; the results stay replicated (the gradient of a
    /// split parameter gathered on every device).
    pub fn call_function_sharded(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
        leaves: &[Option<Sharding>],
    ) -> Result<(Vec<Tensor>, Template), SpmdError> {
        self.call(program, func, args, true, leaves)
    }

    /// `func` of `program` on `args` with every argument and result replicated over
    /// the N devices: each device computes all of it (the optimizer's leaf update,
    /// so the parameters stay replicated on every device between steps). Replicated
    /// values are passed as they are, host values copied to every device.
    pub fn call_replicated(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
    ) -> Result<(Vec<Tensor>, Template), SpmdError> {
        self.call(program, func, args, false, &[])
    }

    fn call(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
        split: bool,
        leaves: &[Option<Sharding>],
    ) -> Result<(Vec<Tensor>, Template), SpmdError> {
        let elem = match k::precision() {
            DType::F32 => ElementType::F32,
            DType::F64 => ElementType::F64,
        };
        let mut flat = Flat {
            mesh: Some(Rc::clone(&self.mesh)),
            leaves,
            ..Flat::default()
        };
        for a in args {
            let top = match a {
                FnArg::Tensor(t) if split && t.rank() > 0 => Sharding::Batch,
                _ => Sharding::Replicated,
            };
            flat.push(a, elem, top)?;
        }
        let n = self.devices();
        let key = format!(
            "fn #{} {} ({}) {elem:?} {:?}",
            func.0,
            program.func(func).name,
            flat.kinds,
            flat.inputs.iter().map(|i| &i.dims).collect::<Vec<_>>()
        );
        // Refuse an indivisible batch before tracing or compiling anything.
        for i in &flat.inputs {
            if !divides(i.sharding, &i.dims, n) {
                return Err(SpmdError::Indivisible {
                    shape: i.dims.clone(),
                    devices: n,
                });
            }
        }
        let cached = self.cache.get(&key).cloned();
        let exe = match cached {
            Some(e) => {
                self.hits += 1;
                e
            }
            None => {
                let (text, template) =
                    lower_function_with_template(program, func, &flat.params, elem)
                        .map_err(XlaError::Lower)?;
                let outs = result_count(&text)
                    .ok_or_else(|| XlaError::Result("a program without @main".into()))?;
                let shardings: Vec<Sharding> = flat.inputs.iter().map(|i| i.sharding).collect();
                let text = annotate(&text, &shardings, &vec![Sharding::Replicated; outs], n)
                    .map_err(XlaError::Result)?;
                self.templates.insert(key.clone(), template);
                self.compile(&key, &text)?
            }
        };
        let template =
            self.templates.get(&key).cloned().ok_or_else(|| {
                XlaError::Result("a compiled function without its template".into())
            })?;
        let outs = self.run_buffers(&exe, &flat.inputs)?;
        Ok((self.replicated_outputs(outs)?, template))
    }

    /// Each device's output lists turned into tensors replicated over the mesh:
    /// output `r` of every device is one value.
    fn replicated_outputs(&self, outs: Vec<Vec<Buffer>>) -> Result<Vec<Tensor>, SpmdError> {
        let count = outs.first().map_or(0, Vec::len);
        if outs.len() != self.devices() || outs.iter().any(|l| l.len() != count) {
            return Err(XlaError::Result("an output list per device expected".into()).into());
        }
        let mut per_result: Vec<Vec<Buffer>> = (0..count).map(|_| Vec::new()).collect();
        for list in outs {
            for (r, b) in list.into_iter().enumerate() {
                per_result[r].push(b);
            }
        }
        per_result
            .into_iter()
            .map(|buffers| {
                let first = buffers
                    .first()
                    .ok_or_else(|| XlaError::Result("no devices".into()))?;
                let dims = first.dims()?;
                let Some(elem) = first.element_type()? else {
                    return Err(
                        XlaError::Result("an element type other than f32 or f64".into()).into(),
                    );
                };
                replicated_tensor(buffers, &dims, elem, &self.mesh)
                    .ok_or_else(|| XlaError::Result("a result missing on a device".into()).into())
            })
            .collect()
    }
}

fn element_size(a: &HostArray) -> usize {
    match a {
        HostArray::F32(_) => 4,
        HostArray::F64(_) => 8,
    }
}

/// A tensor's elements as a host array (a resident value's host copy: read once).
fn host_array(t: &Tensor) -> HostArray {
    match (t.data_f32(), t.data_f64()) {
        (Some(v), _) => HostArray::F32(v.to_vec()),
        (_, Some(v)) => HostArray::F64(v.to_vec()),
        (None, None) => HostArray::F64(t.values().into_owned()),
    }
}

/// The program's parameters and inputs of a call's arguments, flattened as
/// src/xla/device.rs flattens them, each input with its sharding; a tensor
/// replicated over `mesh` passed as its buffers.
#[derive(Default)]
struct Flat<'a> {
    params: Vec<Param>,
    inputs: Vec<In<'a>>,
    kinds: String,
    mesh: Option<Rc<Mesh>>,
    /// Per tensor leaf (in flattening order), a sharding that replaces its own.
    leaves: &'a [Option<Sharding>],
    /// Tensor leaves flattened so far.
    tensors: usize,
}
impl<'a> Flat<'a> {
    fn push(&mut self, a: &FnArg<'a>, elem: ElementType, top: Sharding) -> Result<(), SpmdError> {
        let param = self.param(a, elem, top)?;
        self.params.push(param);
        Ok(())
    }

    fn param(
        &mut self,
        a: &FnArg<'a>,
        elem: ElementType,
        top: Sharding,
    ) -> Result<Param, SpmdError> {
        Ok(match a {
            FnArg::Tensor(t) => {
                let top = self
                    .leaves
                    .get(self.tensors)
                    .copied()
                    .flatten()
                    .unwrap_or(top);
                self.tensors += 1;
                let replicas = match (top, &self.mesh) {
                    (Sharding::Replicated, Some(m)) => replicas_of(t, m),
                    _ => None,
                };
                let source = match replicas {
                    Some(r) => Source::Replicas(r),
                    None => Source::Host(host_array(t)),
                };
                let elem = match t.dtype() {
                    DType::F32 => ElementType::F32,
                    DType::F64 => ElementType::F64,
                };
                let ty = TensorType::new(elem, t.shape());
                self.inputs.push(In {
                    source,
                    dims: t.shape().to_vec(),
                    sharding: top,
                });
                self.kinds.push(match top {
                    Sharding::Batch => 'b',
                    Sharding::Columns => 'c',
                    Sharding::Replicated => 't',
                });
                Param::Tensor(ty)
            }
            FnArg::Number(x) => {
                let data = match elem {
                    ElementType::F32 => HostArray::F32(vec![*x as f32]),
                    ElementType::F64 => HostArray::F64(vec![*x]),
                };
                self.inputs.push(In {
                    source: Source::Host(data),
                    dims: Vec::new(),
                    sharding: Sharding::Replicated,
                });
                self.kinds.push('n');
                Param::Number(elem)
            }
            FnArg::Nihil => {
                self.kinds.push('_');
                Param::Nihil
            }
            FnArg::Int(n) => {
                self.kinds.push_str(&format!("i{n};"));
                Param::Int(*n)
            }
            FnArg::Bool(b) => {
                self.kinds.push(if *b { 'T' } else { 'F' });
                Param::Bool(*b)
            }
            FnArg::Record(fields) | FnArg::List(fields) => {
                let open = matches!(a, FnArg::Record(_));
                self.kinds.push(if open { '{' } else { '[' });
                let inner = fields
                    .iter()
                    .map(|f| self.param(f, elem, Sharding::Replicated))
                    .collect::<Result<Vec<_>, _>>()?;
                self.kinds.push(if open { '}' } else { ']' });
                if open {
                    Param::Record(inner)
                } else {
                    Param::List(inner)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_axis_zero() {
        let data = HostArray::F32((0..12).map(|i| i as f32).collect());
        let (p, d) = shard(&data, &[4, 3], 2, 1, 0);
        assert_eq!(d, vec![2, 3]);
        assert_eq!(p, HostArray::F32((6..12).map(|i| i as f32).collect()));
        // Columns: the last axis of a 2×4, shard 1 of 2 is columns 2 and 3.
        let (p, d) = shard(&data, &[3, 4], 2, 1, 1);
        assert_eq!(d, vec![3, 2]);
        assert_eq!(p, HostArray::F32(vec![2., 3., 6., 7., 10., 11.]));
    }
}
