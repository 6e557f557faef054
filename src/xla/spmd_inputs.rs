//! The inputs of an SPMD call (src/xla/spmd.rs): a function's arguments flattened
//! into the program's parameters, each tensor leaf with how it lies over the N
//! devices and where its elements come from — the host (copied in at the call, a
//! shard per device or the whole to each), or the devices already (a value
//! replicated or split over the mesh, a host parameter copied in by an earlier
//! call).

use std::rc::Rc;

use super::device::FnArg;
use super::exec::{ElementType, HostArray};
use super::resident::{replicas_of, shards_of, Mesh};
use super::sharding::Sharding;
use super::stablehlo::{Param, TensorType};
use crate::tensor::Tensor;

/// Shard `d` of `n` of `data` (of shape `dims`) along `axis`.
pub(super) fn shard(
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
pub(super) fn divides(sharding: Sharding, dims: &[usize], n: usize) -> bool {
    match sharding.axis(dims.len()) {
        None => sharding == Sharding::Replicated,
        Some(a) => dims[a] > 0 && dims[a].is_multiple_of(n),
    }
}

/// Where an input's elements come from.
pub(super) enum Source {
    /// The host: copied in at the call.
    Host(HostArray),
    /// Already on the devices: a value replicated over the mesh (buffer `d` on
    /// device `d`), or split over it as the input's sharding says (shard `d`).
    Mesh(Tensor),
}

/// An input of `Spmd::run_buffers`.
pub(super) struct In {
    pub(super) source: Source,
    pub(super) dims: Vec<usize>,
    pub(super) sharding: Sharding,
    /// A host parameter (a leaf inside a record or list) whose device copies are
    /// kept for the next call that passes the same host tensor ([`Spmd::placed`]).
    pub(super) keep: Option<Tensor>,
}

/// How a value already on the mesh lies, as the sharding of an input: replicated,
/// or split along axis 0 ([`Sharding::Batch`]) or the last axis
/// ([`Sharding::Columns`]); `None` for another axis or a value not on the mesh.
pub(super) fn layout_on(t: &Tensor, mesh: &Rc<Mesh>) -> Option<Sharding> {
    if replicas_of(t, mesh).is_some() {
        return Some(Sharding::Replicated);
    }
    let (_, axis) = shards_of(t, mesh)?;
    match axis {
        0 => Some(Sharding::Batch),
        a if a + 1 == t.rank() => Some(Sharding::Columns),
        _ => None,
    }
}

/// Whether `a` and `b` split an array of `rank` the same way (a rank-1 array's
/// rows are its columns).
pub(super) fn same_axis(a: Sharding, b: Sharding, rank: usize) -> bool {
    a.axis(rank) == b.axis(rank)
}

/// The program's parameters and inputs of a call's arguments, flattened as
/// src/xla/device.rs flattens them, each input with its sharding; a tensor already
/// on `mesh` passed as its buffers, a host parameter copied in before as its copy.
#[derive(Default)]
pub(super) struct Flat<'a> {
    pub(super) params: Vec<Param>,
    pub(super) inputs: Vec<In>,
    pub(super) kinds: String,
    pub(super) mesh: Option<Rc<Mesh>>,
    /// Per tensor leaf (in flattening order), a sharding that replaces its own.
    pub(super) leaves: &'a [Option<Sharding>],
    /// Host parameters on the mesh already (`Spmd`'s `placed`).
    pub(super) placed: &'a [(Tensor, Sharding, Tensor)],
    /// Tensor leaves flattened so far.
    pub(super) tensors: usize,
    /// How deep inside records and lists the flattening is.
    pub(super) depth: usize,
    /// Whether a leaf inside a record or list goes in split (a parameter).
    pub(super) split_params: bool,
    /// Per top-level argument, the indices in `inputs` of its tensor leaves.
    pub(super) groups: Vec<Vec<usize>>,
}
impl<'a> Flat<'a> {
    pub(super) fn push(&mut self, a: &FnArg, elem: ElementType, top: Sharding) {
        self.groups.push(Vec::new());
        let param = self.param(a, elem, top);
        self.params.push(param);
    }

    /// The input of the tensor leaf `t` that should lie as `want`: a value on the
    /// mesh that lies so (or is split: it goes in as it lies, not gathered), a
    /// host parameter's earlier copy, or the host elements.
    fn tensor_input(&self, t: &Tensor, want: Sharding, asked: bool) -> In {
        let nested = self.depth > 0 && t.rank() > 0;
        let on_mesh = self.mesh.as_ref().and_then(|m| layout_on(t, m));
        let (source, sharding, keep) = match on_mesh {
            Some(l) if same_axis(l, want, t.rank()) || l != Sharding::Replicated => {
                (Source::Mesh(t.clone()), l, None)
            }
            _ => {
                // An earlier copy that lies as asked; without a rule for this leaf,
                // any earlier copy (a split parameter stays split).
                let earlier = self
                    .placed
                    .iter()
                    .filter(|_| nested && on_mesh.is_none())
                    .filter(|(h, _, _)| h.shape() == t.shape() && h.shares_storage(t))
                    .find(|(_, s, _)| !asked || same_axis(*s, want, t.rank()));
                match earlier {
                    Some((_, s, m)) => (Source::Mesh(m.clone()), *s, None),
                    None => (
                        Source::Host(HostArray::of(t)),
                        want,
                        (nested && on_mesh.is_none()).then(|| t.clone()),
                    ),
                }
            }
        };
        In {
            source,
            dims: t.shape().to_vec(),
            sharding,
            keep,
        }
    }

    fn param(&mut self, a: &FnArg, elem: ElementType, top: Sharding) -> Param {
        match a {
            FnArg::Tensor(t) => {
                let rule = self.leaves.get(self.tensors).copied().flatten();
                self.tensors += 1;
                let input = self.tensor_input(t, rule.unwrap_or(top), rule.is_some());
                if self.depth > 0 && input.sharding != Sharding::Replicated {
                    self.split_params = true;
                }
                let elem = ElementType::of(t.dtype());
                let ty = TensorType::new(elem, t.shape());
                self.kinds.push(match input.sharding {
                    Sharding::Batch => 'b',
                    Sharding::Columns => 'c',
                    Sharding::Replicated => 't',
                });
                if let Some(g) = self.groups.last_mut() {
                    g.push(self.inputs.len());
                }
                self.inputs.push(input);
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
                    keep: None,
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
                self.depth += 1;
                let inner = fields
                    .iter()
                    .map(|f| self.param(f, elem, Sharding::Replicated))
                    .collect::<Vec<_>>();
                self.depth -= 1;
                self.kinds.push(if open { '}' } else { ']' });
                if open {
                    Param::Record(inner)
                } else {
                    Param::List(inner)
                }
            }
        }
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
