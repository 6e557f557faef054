//! Element types: a tensor stores its elements as f64 or as f32 ([`DType`]), the
//! precision policy of the run in force on this thread (the element type of floating
//! tensors made from numbers, lists and files), and the conversions between the two.
//!
//! * F64 storage is the copy-on-write block of buf.rs; the f64 kernels read and write
//!   f64 slices through [`Tensor::data`].
//! * F32 storage is a shared, copy-on-write `Vec<f32>` ([`Tensor::data_f32`],
//!   [`Tensor::from_f32`]): half the bytes. The dtype-aware entries run it with their
//!   native f32 kernels; for the other ops the evaluator widens an op's f32 operands to
//!   f64, runs the f64 kernel and rounds each tensor result once to f32
//!   (src/eval/tensor_dtype.rs; docs/precision.md). A native f32 kernel takes `&[f32]`
//!   and fills a `Vec<f32>` from [`f32_vec`] handed to [`Tensor::from_f32`].
//! * f64 → f32 is Rust's `as`: round to nearest, ties to even, once; f32 → f64 is exact.
//!
//! [`Tensor::data`] on an f32 tensor is a bug of the caller (an f64-only path reached
//! by an f32 tensor) and panics with a message saying so; code outside the kernels
//! reads elements through the dtype-neutral accessors ([`Tensor::values`],
//! [`Tensor::value_at`], [`Tensor::item`], [`Tensor::get`]).

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::rc::Rc;

use super::buf::Buf;
use super::device_data::{count_fetched, DeviceData, DeviceLost, HostData};
use super::{checked_numel, Shape, TResult, Tensor, TensorError};

/// The element type a tensor stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F32,
    F64,
}

impl DType {
    /// `"f32"` / `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// The element type named `"f32"` or `"f64"`.
    pub fn from_name(s: &str) -> Option<DType> {
        match s {
            "f32" => Some(DType::F32),
            "f64" => Some(DType::F64),
            _ => None,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    /// The type two operands of these types are computed in and give: the wider one
    /// (as JAX and PyTorch promote f32 with f64).
    pub fn promote(self, other: DType) -> DType {
        if self == DType::F64 || other == DType::F64 {
            DType::F64
        } else {
            DType::F32
        }
    }
}

thread_local! {
    static PRECISION: Cell<DType> = const { Cell::new(DType::F64) };
}

/// The element type of floating tensors made from numbers, lists or files on this
/// thread (`faber run --precision`; F64 unless set).
#[inline(always)]
pub fn precision() -> DType {
    PRECISION.with(|p| p.get())
}

/// Sets [`precision`] for this thread; returns the previous one.
pub fn set_precision(d: DType) -> DType {
    PRECISION.with(|p| p.replace(d))
}

/// A tensor's elements: f64 in a buf.rs block, or f32.
#[derive(Clone)]
pub(in crate::tensor) enum Store {
    F64(Buf),
    F32(Rc<Vec<f32>>),
    /// On a device (remote.rs); [`Tensor::held`] gives the host copy.
    Remote(Rc<Remote>),
}

impl Store {
    #[inline(always)]
    pub(in crate::tensor) fn len(&self) -> usize {
        match self {
            Store::F64(b) => b.len(),
            Store::F32(v) => v.len(),
            Store::Remote(r) => r.len(),
        }
    }
}

/// A resident tensor's storage: the device buffer, its element count, type and shape
/// on the device, and the host copy once made.
pub(in crate::tensor) struct Remote {
    len: usize,
    dtype: DType,
    dims: Box<[usize]>,
    device: Rc<dyn DeviceData>,
    host: OnceCell<Store>,
}

impl Remote {
    /// Elements of shape `dims` and type `dtype` held by `device`, not yet copied.
    pub(in crate::tensor) fn new(
        dims: &[usize],
        dtype: DType,
        device: Rc<dyn DeviceData>,
    ) -> Remote {
        Remote {
            len: dims.iter().product(),
            dtype,
            dims: dims.into(),
            device,
            host: OnceCell::new(),
        }
    }

    /// The shape on the device.
    pub(in crate::tensor) fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The device side.
    pub(in crate::tensor) fn device(&self) -> &Rc<dyn DeviceData> {
        &self.device
    }

    #[inline(always)]
    pub(in crate::tensor) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub(in crate::tensor) fn dtype(&self) -> DType {
        self.dtype
    }

    /// Whether the host copy has been made.
    pub(in crate::tensor) fn fetched(&self) -> bool {
        self.host.get().is_some()
    }

    /// The host copy, made on first use.
    pub(in crate::tensor) fn host(&self) -> &Store {
        self.host.get_or_init(|| match self.copy_in() {
            Ok(s) => s,
            Err(m) => std::panic::panic_any(DeviceLost(m)),
        })
    }

    fn copy_in(&self) -> Result<Store, String> {
        let host = self.device.fetch()?;
        let store = match host {
            HostData::F64(v) if self.dtype == DType::F64 && v.len() == self.len => {
                Store::F64(Buf::from_vec(v).map_err(|e| e.message)?)
            }
            HostData::F32(v) if self.dtype == DType::F32 && v.len() == self.len => {
                Store::F32(Rc::new(v))
            }
            _ => {
                return Err(format!(
                    "the device returned a buffer other than the {} {} elements it holds",
                    self.len,
                    self.dtype.name()
                ))
            }
        };
        count_fetched(self.len * self.dtype.size());
        Ok(store)
    }
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.host.get() {
            Some(s) => s.fmt(f),
            None => write!(f, "device {}{:?}", self.dtype.name(), self.dims),
        }
    }
}

/// A host store was expected: [`Tensor::held`] never gives a remote one.
#[cold]
#[inline(never)]
pub(in crate::tensor) fn remote_not_held() -> ! {
    panic!("internal error: a device-resident tensor was read without its host copy")
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Store::F64(b) => b.fmt(f),
            Store::F32(v) => write!(f, "f32{:?}", v.as_slice()),
            Store::Remote(r) => r.fmt(f),
        }
    }
}

#[cold]
#[inline(never)]
pub(in crate::tensor) fn f32_in_f64_path() -> ! {
    panic!(
        "internal error: an f32 tensor reached an f64-only path \
         (the evaluator widens f32 operands before an f64 kernel)"
    )
}

#[cold]
#[inline(never)]
pub(in crate::tensor) fn f64_in_f32_path() -> ! {
    panic!(
        "internal error: an f64 tensor reached an f32-only path \
         (the evaluator runs a native f32 kernel only when every tensor operand is f32)"
    )
}

/// Room for `n` f32 elements (an empty vector of that capacity), checked against the
/// memory limit: what every native f32 kernel allocates its result with.
pub(in crate::tensor) fn f32_vec(n: usize) -> TResult<Vec<f32>> {
    crate::mem::check(n.saturating_mul(4)).map_err(TensorError::limit)?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| TensorError::limit(format!("cannot allocate a tensor of {n} elements")))?;
    Ok(v)
}

impl Tensor {
    /// The element type this tensor stores.
    #[inline(always)]
    pub fn dtype(&self) -> DType {
        match &self.data {
            Store::F64(_) => DType::F64,
            Store::F32(_) => DType::F32,
            Store::Remote(r) => r.dtype(),
        }
    }

    /// The host store: the elements themselves, or a resident tensor's host copy
    /// (made here on first use; remote.rs). Never [`Store::Remote`].
    #[inline(always)]
    pub(in crate::tensor) fn held(&self) -> &Store {
        match &self.data {
            Store::Remote(r) => r.host(),
            s => s,
        }
    }

    /// The host store for writing: a resident tensor first adopts its host copy.
    #[inline(always)]
    pub(in crate::tensor) fn held_mut(&mut self) -> &mut Store {
        if let Store::Remote(r) = &self.data {
            self.data = r.host().clone();
        }
        &mut self.data
    }

    /// The elements of an f64 tensor (`None` for an f32 one).
    #[inline(always)]
    pub fn data_f64(&self) -> Option<&[f64]> {
        match self.held() {
            Store::F64(b) => Some(b.as_slice()),
            Store::F32(_) => None,
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// The elements of an f32 tensor (`None` for an f64 one).
    #[inline(always)]
    pub fn data_f32(&self) -> Option<&[f32]> {
        match self.held() {
            Store::F32(v) => Some(v.as_slice()),
            Store::F64(_) => None,
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// The elements of an f32 tensor, for the native f32 kernels (an f64 tensor here is
    /// a bug of the caller: the evaluator sends an op to its f32 kernel only when every
    /// tensor operand is f32; it panics with a message saying so, as [`Tensor::data`]
    /// does for the other type).
    #[inline(always)]
    pub fn data32(&self) -> &[f32] {
        match self.held() {
            Store::F32(v) => v.as_slice(),
            Store::F64(_) => f64_in_f32_path(),
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// Mutable elements of an f32 tensor, copying shared storage first.
    pub fn data_f32_mut(&mut self) -> Option<&mut [f32]> {
        match self.held_mut() {
            Store::F32(v) => Some(Rc::make_mut(v).as_mut_slice()),
            Store::F64(_) => None,
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// An f32 tensor adopting `data` (exactly product(shape) elements, else a `Shape`
    /// error; the element count is checked against the limit).
    pub fn from_f32(data: Vec<f32>, shape: &[usize]) -> TResult<Tensor> {
        super::flat_len(data.len(), shape)?;
        Ok(Tensor {
            shape: Shape::new(shape),
            data: Store::F32(Rc::new(data)),
        })
    }

    /// An f32 tensor of `shape` with every element `fill`.
    pub fn full_f32(fill: f32, shape: &[usize]) -> TResult<Tensor> {
        let n = checked_numel(shape)?;
        let mut v = f32_vec(n)?;
        v.resize(n, fill);
        Tensor::from_f32(v, shape)
    }

    /// Every element as an f64 (exact for both types): borrowed for an f64 tensor,
    /// widened into a new vector for an f32 one.
    pub fn values(&self) -> Cow<'_, [f64]> {
        match self.held() {
            Store::F64(b) => Cow::Borrowed(b.as_slice()),
            Store::F32(v) => Cow::Owned(v.iter().map(|&x| f64::from(x)).collect()),
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// Element `i` (row-major) as an f64, `None` past the end.
    #[inline]
    pub fn value_at(&self, i: usize) -> Option<f64> {
        match self.held() {
            Store::F64(b) => b.as_slice().get(i).copied(),
            Store::F32(v) => v.get(i).map(|&x| f64::from(x)),
            Store::Remote(_) => remote_not_held(),
        }
    }

    /// This tensor with elements of type `to`: itself (shared) when it already is;
    /// f64 → f32 rounds each element once to nearest-even; f32 → f64 is exact.
    pub fn to_dtype(&self, to: DType) -> TResult<Tensor> {
        if self.dtype() == to {
            return Ok(self.clone());
        }
        let data = match (self.held(), to) {
            (Store::F64(_), DType::F64) | (Store::F32(_), DType::F32) => return Ok(self.clone()),
            (Store::Remote(_), _) => remote_not_held(),
            (Store::F64(b), DType::F32) => {
                let mut v = f32_vec(b.len())?;
                v.extend(b.as_slice().iter().map(|&x| x as f32));
                Store::F32(Rc::new(v))
            }
            (Store::F32(v), DType::F64) => {
                let mut out = super::alloc(v.len())?;
                out.extend(v.iter().map(|&x| f64::from(x)));
                Store::F64(out.finish())
            }
        };
        Ok(Tensor {
            shape: self.shape.clone(),
            data,
        })
    }

    /// Writes element `i` (row-major; an f32 tensor stores `v` rounded once), copying
    /// shared storage first; `false` past the end.
    pub fn set_at(&mut self, i: usize, v: f64) -> bool {
        if let Some(d) = self.data_f32_mut() {
            return d.get_mut(i).map(|e| *e = v as f32).is_some();
        }
        match self.held_mut() {
            Store::F64(b) => b.make_mut().get_mut(i).map(|e| *e = v).is_some(),
            Store::F32(_) | Store::Remote(_) => false,
        }
    }

    /// Bytes of the elements (4 or 8 per element).
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype().size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rounding() {
        let x = Tensor::from_flat(vec![0.1, 1e8 + 1.0, -0.0, f64::NAN], &[2, 2]).unwrap();
        let y = x.to_dtype(DType::F32).unwrap();
        assert_eq!(y.dtype(), DType::F32);
        assert_eq!(y.shape(), &[2, 2]);
        let d = y.data_f32().unwrap();
        assert_eq!(d[0], 0.1f32);
        assert_eq!(d[1], 1e8f32);
        assert!(d[2] == 0.0 && d[2].is_sign_negative());
        assert!(d[3].is_nan());
        let z = y.to_dtype(DType::F64).unwrap();
        assert_eq!(z.dtype(), DType::F64);
        assert_eq!(z.data()[0], 0.1f32 as f64);
        assert_eq!(y.value_at(1), Some(1e8));
        assert_eq!(y.nbytes(), 16);
        assert_eq!(z.nbytes(), 32);
        // same dtype: shared, not copied
        assert!(y.to_dtype(DType::F32).unwrap().shares_storage(&y));
    }

    #[test]
    fn element_access_is_dtype_aware() {
        let mut t = Tensor::from_f32(vec![1.5, 2.5], &[2]).unwrap();
        assert_eq!(t.get(&[1]).unwrap(), 2.5);
        t.set(&[0], 0.1).unwrap();
        assert_eq!(t.get(&[0]).unwrap(), 0.1f32 as f64);
        t.fill_with(0.2);
        assert_eq!(t.data_f32().unwrap(), &[0.2f32, 0.2]);
        assert_eq!(
            t.to_indices(3, "x").unwrap_err().kind,
            super::super::TensorErrorKind::Index
        );
        assert!(Tensor::from_f32(vec![1.0], &[2]).is_err());
        assert_eq!(DType::F32.promote(DType::F64), DType::F64);
        assert_eq!(DType::F32.promote(DType::F32), DType::F32);
    }
}
