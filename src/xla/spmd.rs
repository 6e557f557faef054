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
//! (records, lists, numbers) is replicated; the results are replicated. Values
//! are copied from the host at each call and the results come back to the host.

use std::collections::HashMap;
use std::fmt;
use std::rc::Rc;

use super::device::{FnArg, XlaError};
use super::exec::{compile_encoded, Buffer, ElementType, Executable, HostArray};
use super::plugin::{Client, PluginError};
use super::proto::SpmdOptions;
use super::stablehlo::{lower_function_with_template, Param, Template, TensorType};
use crate::ir::{FuncId, Program};
use crate::tensor::{self as k, DType, Tensor};

/// How an argument or result of an SPMD program lies across its devices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharding {
    /// Every device holds all of it.
    Replicated,
    /// Split along axis 0 into equal shards, shard `d` on device `d`.
    Batch,
}

impl Sharding {
    /// The `mhlo.sharding` text for an array of `rank` over `n` devices
    /// (XLA's HloSharding syntax): `{replicated}`, or `{devices=[n,1,…]0,1,…,n−1}`
    /// — the tile grid (n along axis 0, 1 along every other axis), then the devices
    /// in tile order.
    pub fn attribute(self, rank: usize, n: usize) -> String {
        match self {
            Sharding::Batch if rank > 0 && n > 1 => {
                let mut grid = vec![n.to_string()];
                grid.extend(std::iter::repeat_n("1".to_string(), rank - 1));
                let ids: Vec<String> = (0..n).map(|d| d.to_string()).collect();
                format!("{{devices=[{}]{}}}", grid.join(","), ids.join(","))
            }
            _ => "{replicated}".to_string(),
        }
    }
}

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

/// The rank of an MLIR tensor type's text (`tensor<8x3xf32>` is 2).
fn rank_of(ty: &str) -> usize {
    ty.trim()
        .trim_start_matches("tensor<")
        .trim_end_matches('>')
        .matches('x')
        .count()
}

/// The `@main` header's parameter types and result types, and where the header's
/// parameter list and result list lie in `text`.
struct Header {
    params: (usize, usize),
    results: (usize, usize),
}

fn header(text: &str) -> Option<Header> {
    let open = text.find("func.func public @main(")? + "func.func public @main(".len();
    let arrow = open + text[open..].find(") -> (")?;
    let res_open = arrow + ") -> (".len();
    let res_close = res_open + text[res_open..].find(") {")?;
    Some(Header {
        params: (open, arrow),
        results: (res_open, res_close),
    })
}

fn split_types(list: &str) -> Vec<&str> {
    if list.trim().is_empty() {
        Vec::new()
    } else {
        list.split(", ").collect()
    }
}

/// How many results the module's `@main` returns.
pub fn result_count(text: &str) -> Option<usize> {
    let h = header(text)?;
    Some(split_types(&text[h.results.0..h.results.1]).len())
}

/// `text` (a module as [`Function::finish`](super::stablehlo::Function::finish)
/// writes it) with `mhlo.sharding` on every argument and result of `@main` for `n`
/// devices, and the module's `mhlo.num_partitions` / `mhlo.num_replicas`.
pub fn annotate(
    text: &str,
    args: &[Sharding],
    results: &[Sharding],
    n: usize,
) -> Result<String, String> {
    let h = header(text).ok_or("no `func.func public @main` header")?;
    let params = split_types(&text[h.params.0..h.params.1]);
    let outs = split_types(&text[h.results.0..h.results.1]);
    if params.len() != args.len() || outs.len() != results.len() {
        return Err(format!(
            "{} argument and {} result shardings for a program of {} and {}",
            args.len(),
            results.len(),
            params.len(),
            outs.len()
        ));
    }
    let params: Vec<String> = params
        .iter()
        .zip(args)
        .map(|(p, s)| {
            let ty = p.split_once(": ").map_or(*p, |(_, t)| t);
            format!(
                "{p} {{mhlo.sharding = \"{}\"}}",
                s.attribute(rank_of(ty), n)
            )
        })
        .collect();
    let outs: Vec<String> = outs
        .iter()
        .zip(results)
        .map(|(t, s)| format!("{t} {{mhlo.sharding = \"{}\"}}", s.attribute(rank_of(t), n)))
        .collect();
    let body = format!(
        "{}{}) -> ({}{}",
        &text[..h.params.0],
        params.join(", "),
        outs.join(", "),
        &text[h.results.1..]
    );
    let module = format!(
        "module @faber attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{"
    );
    Ok(body.replacen("module @faber {", &module, 1))
}

/// Shard `d` of `n` of `data` (of shape `dims`) along axis 0.
fn shard(data: &HostArray, dims: &[usize], n: usize, d: usize) -> (HostArray, Vec<usize>) {
    let per = data.len() / n;
    let mut sd = dims.to_vec();
    if let Some(first) = sd.first_mut() {
        *first /= n;
    }
    let part = match data {
        HostArray::F32(v) => HostArray::F32(v[d * per..(d + 1) * per].to_vec()),
        HostArray::F64(v) => HostArray::F64(v[d * per..(d + 1) * per].to_vec()),
    };
    (part, sd)
}

/// An input of an SPMD run: the elements, the (global) shape, how it lies.
pub struct Input {
    pub data: HostArray,
    pub dims: Vec<usize>,
    pub sharding: Sharding,
}

/// N devices of one client, with a compile cache of SPMD programs.
pub struct Spmd<'p> {
    client: Client<'p>,
    options: SpmdOptions,
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
        let device_ids = (0..n)
            .map(|d| client.addressable_device_id(d))
            .collect::<Result<_, _>>()?;
        Ok(Spmd {
            client,
            options: SpmdOptions { device_ids },
            cache: HashMap::new(),
            templates: HashMap::new(),
            compiles: 0,
            hits: 0,
        })
    }

    /// The device count N.
    pub fn devices(&self) -> usize {
        self.options.device_ids.len()
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
        let n = self.devices();
        for i in inputs {
            if i.sharding == Sharding::Batch
                && (i.dims.is_empty() || i.dims[0] % n != 0 || i.dims[0] == 0)
            {
                return Err(SpmdError::Indivisible {
                    shape: i.dims.clone(),
                    devices: n,
                });
            }
        }
        let mut owned: Vec<Vec<Buffer>> = Vec::with_capacity(n);
        for d in 0..n {
            let mut list = Vec::with_capacity(inputs.len());
            for i in inputs {
                let b = match i.sharding {
                    Sharding::Replicated => self.client.to_device(&i.data, &i.dims, d)?,
                    Sharding::Batch => {
                        let (part, dims) = shard(&i.data, &i.dims, n, d);
                        self.client.to_device(&part, &dims, d)?
                    }
                };
                super::resident::note_in(i.data.len() * element_size(&i.data));
                list.push(b);
            }
            owned.push(list);
        }
        let lists: Vec<Vec<&Buffer>> = owned.iter().map(|l| l.iter().collect()).collect();
        let outs = exe.execute_on_devices(&lists)?;
        super::resident::note_execution();
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

    /// `func` of `program` on `args`, data-parallel over the N devices: its
    /// top-level tensor arguments of rank ≥ 1 sharded along axis 0, everything else
    /// replicated, its results replicated; lowered and compiled once per argument
    /// signature. Returns the outputs as host tensors and the template that rebuilds
    /// the function's result.
    pub fn call_function(
        &mut self,
        program: &Program,
        func: FuncId,
        args: &[FnArg],
    ) -> Result<(Vec<Tensor>, Template), SpmdError> {
        let elem = match k::precision() {
            DType::F32 => ElementType::F32,
            DType::F64 => ElementType::F64,
        };
        let mut flat = Flat::default();
        for a in args {
            let top = match a {
                FnArg::Tensor(t) if t.rank() > 0 => Sharding::Batch,
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
            if i.sharding == Sharding::Batch && (i.dims[0] % n != 0 || i.dims[0] == 0) {
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
        let results = vec![Sharding::Replicated; exe.num_outputs()];
        let outs = self.run(&exe, &flat.inputs, &results)?;
        let tensors = outs
            .into_iter()
            .map(|(data, dims)| {
                match data {
                    HostArray::F32(v) => Tensor::from_f32(v, &dims),
                    HostArray::F64(v) => Tensor::from_flat(v, &dims),
                }
                .map_err(|e| SpmdError::Xla(XlaError::Result(e.to_string())))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((tensors, template))
    }
}

fn element_size(a: &HostArray) -> usize {
    match a {
        HostArray::F32(_) => 4,
        HostArray::F64(_) => 8,
    }
}

/// A tensor's elements as a host array.
fn host_array(t: &Tensor) -> HostArray {
    match (t.data_f32(), t.data_f64()) {
        (Some(v), _) => HostArray::F32(v.to_vec()),
        (_, Some(v)) => HostArray::F64(v.to_vec()),
        (None, None) => HostArray::F64(t.values().into_owned()),
    }
}

/// The program's parameters and inputs of a call's arguments, flattened as
/// src/xla/device.rs flattens them, each input with its sharding.
#[derive(Default)]
struct Flat {
    params: Vec<Param>,
    inputs: Vec<Input>,
    kinds: String,
}

impl Flat {
    fn push(&mut self, a: &FnArg, elem: ElementType, top: Sharding) -> Result<(), SpmdError> {
        let param = self.param(a, elem, top)?;
        self.params.push(param);
        Ok(())
    }

    fn param(&mut self, a: &FnArg, elem: ElementType, top: Sharding) -> Result<Param, SpmdError> {
        Ok(match a {
            FnArg::Tensor(t) => {
                let data = host_array(t);
                let ty = TensorType::new(data.element_type(), t.shape());
                self.inputs.push(Input {
                    data,
                    dims: t.shape().to_vec(),
                    sharding: top,
                });
                self.kinds
                    .push(if top == Sharding::Batch { 'b' } else { 't' });
                Param::Tensor(ty)
            }
            FnArg::Number(x) => {
                let data = match elem {
                    ElementType::F32 => HostArray::F32(vec![*x as f32]),
                    ElementType::F64 => HostArray::F64(vec![*x]),
                };
                self.inputs.push(Input {
                    data,
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
    fn sharding_attributes_in_hlo_syntax() {
        assert_eq!(Sharding::Batch.attribute(2, 4), "{devices=[4,1]0,1,2,3}");
        assert_eq!(Sharding::Batch.attribute(1, 2), "{devices=[2]0,1}");
        assert_eq!(Sharding::Batch.attribute(3, 2), "{devices=[2,1,1]0,1}");
        assert_eq!(Sharding::Replicated.attribute(2, 4), "{replicated}");
        // One device, or a rank-0 value, has nothing to split.
        assert_eq!(Sharding::Batch.attribute(2, 1), "{replicated}");
        assert_eq!(Sharding::Batch.attribute(0, 2), "{replicated}");
    }

    #[test]
    fn annotate_marks_every_argument_and_result() {
        use crate::xla::stablehlo::{Function, Reduction};
        let x = TensorType::new(ElementType::F32, &[8, 3]);
        let w = TensorType::new(ElementType::F32, &[3]);
        let (mut f, p) = Function::new(&[x, w]);
        let s = f.reduce(p[0], &[0], Reduction::Sum);
        let text = f.finish(&[s, p[1]]);
        assert_eq!(result_count(&text), Some(2));
        let out = annotate(
            &text,
            &[Sharding::Batch, Sharding::Replicated],
            &[Sharding::Replicated, Sharding::Replicated],
            2,
        )
        .unwrap();
        assert!(out.starts_with(
            "module @faber attributes {mhlo.num_partitions = 2 : i32, mhlo.num_replicas = 1 : i32} {"
        ));
        assert!(out.contains(
            "@main(%arg0: tensor<8x3xf32> {mhlo.sharding = \"{devices=[2,1]0,1}\"}, \
             %arg1: tensor<3xf32> {mhlo.sharding = \"{replicated}\"}) -> \
             (tensor<3xf32> {mhlo.sharding = \"{replicated}\"}, \
             tensor<3xf32> {mhlo.sharding = \"{replicated}\"}) {"
        ));
        assert!(annotate(&text, &[Sharding::Batch], &[], 2).is_err());
    }

    #[test]
    fn shards_split_axis_zero() {
        let data = HostArray::F32((0..12).map(|i| i as f32).collect());
        let (p, d) = shard(&data, &[4, 3], 2, 1);
        assert_eq!(d, vec![2, 3]);
        assert_eq!(p, HostArray::F32((6..12).map(|i| i as f32).collect()));
    }
}
