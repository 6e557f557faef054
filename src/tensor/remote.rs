//! Tensors whose elements live on an accelerator (`faber run --backend xla`): the
//! storage a device program's result gets, so that the next device program can take
//! it without a copy. The host copy is made the first time host code reads an element
//! (a kernel, `nota`, indexing, a checkpoint) and kept beside the device buffer; a
//! write first takes the host copy and then owns it (copy-on-write, as for every
//! tensor).
//!
//! This module knows nothing of PJRT: the device side is a [`DeviceData`] trait object
//! (src/xla/resident.rs implements it), so the tensor module imports nothing above it.
//!
//! A copy to the host that fails (the device lost, the transfer refused) cannot be
//! returned through the element accessors, which cannot fail: it unwinds with a
//! [`DeviceLost`] payload, which the command line's panic hook reports as the
//! diagnostic CLI011 with exit code 1 (src/main.rs). Files are written whole or not at
//! all, so a run stopped there leaves no half-written checkpoint.

use std::any::Any;
use std::cell::{Cell, OnceCell};
use std::rc::Rc;

use super::buf::Buf;
use super::dtype::{DType, Store};
use super::{Shape, Tensor};

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
        FETCHED.with(|f| f.set(f.get() + (self.len * self.dtype.size()) as u64));
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

impl Tensor {
    /// A tensor of `shape` and element type `dtype` whose elements are on a device.
    pub fn resident(shape: &[usize], dtype: DType, device: Rc<dyn DeviceData>) -> Tensor {
        Tensor {
            shape: Shape::new(shape),
            data: Store::Remote(Rc::new(Remote {
                len: shape.iter().product(),
                dtype,
                dims: shape.into(),
                device,
                host: OnceCell::new(),
            })),
        }
    }

    /// The device buffer holding exactly this tensor (same shape), if it has one: a
    /// device program can take it without a copy.
    pub fn device_data(&self) -> Option<&Rc<dyn DeviceData>> {
        match &self.data {
            Store::Remote(r) if *r.dims == *self.shape() => Some(&r.device),
            _ => None,
        }
    }

    /// Whether the elements are on a device and not yet copied to the host.
    pub fn on_device_only(&self) -> bool {
        matches!(&self.data, Store::Remote(r) if !r.fetched())
    }

    /// Whether every element is finite, asking the device when the elements are only
    /// there (no copy), else reading them.
    pub fn all_finite(&self) -> bool {
        if let Store::Remote(r) = &self.data {
            if !r.fetched() {
                if let Some(b) = r.device.all_finite() {
                    return b;
                }
            }
        }
        match self.data_f32() {
            Some(d) => d.iter().all(|v| v.is_finite()),
            None => self.values().iter().all(|v| v.is_finite()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A device that counts its copies and can be told to fail.
    struct Fake {
        data: Vec<f32>,
        fetches: Cell<u32>,
        probes: Cell<u32>,
        fail: bool,
    }

    impl DeviceData for Fake {
        fn fetch(&self) -> Result<HostData, String> {
            self.fetches.set(self.fetches.get() + 1);
            if self.fail {
                return Err("the device went away".into());
            }
            Ok(HostData::F32(self.data.clone()))
        }
        fn all_finite(&self) -> Option<bool> {
            self.probes.set(self.probes.get() + 1);
            Some(self.data.iter().all(|v| v.is_finite()))
        }
        fn as_any(&self) -> &dyn Any {
            self
        }
    }

    fn fake(data: Vec<f32>, fail: bool) -> Rc<Fake> {
        Rc::new(Fake {
            data,
            fetches: Cell::new(0),
            probes: Cell::new(0),
            fail,
        })
    }

    #[test]
    fn copied_once_when_read_and_shared_by_clones() {
        let dev = fake(vec![1.0, 2.5, -3.0, 4.0], false);
        let t = Tensor::resident(&[2, 2], DType::F32, dev.clone());
        assert_eq!(t.dtype(), DType::F32);
        assert_eq!(t.numel(), 4);
        assert_eq!(t.shape(), &[2, 2]);
        assert!(t.on_device_only());
        assert_eq!(dev.fetches.get(), 0, "shape and type need no copy");
        let u = t.clone();
        assert_eq!(u.values().as_ref(), &[1.0, 2.5, -3.0, 4.0]);
        assert_eq!(t.value_at(1), Some(2.5));
        assert_eq!(t.data32(), &[1.0, 2.5, -3.0, 4.0]);
        assert_eq!(dev.fetches.get(), 1, "one copy serves every clone");
        assert!(!t.on_device_only());
        // Still the device's buffer: a device program can take it.
        assert!(t.device_data().is_some());
    }

    #[test]
    fn a_write_takes_the_host_copy_and_leaves_the_device() {
        let dev = fake(vec![1.0, 2.0], false);
        let t = Tensor::resident(&[2], DType::F32, dev.clone());
        let mut w = t.clone();
        assert!(w.set_at(0, 7.0));
        assert_eq!(w.values().as_ref(), &[7.0, 2.0]);
        assert!(
            w.device_data().is_none(),
            "the written tensor is the host's"
        );
        assert_eq!(
            t.values().as_ref(),
            &[1.0, 2.0],
            "the original is unchanged"
        );
        assert!(t.device_data().is_some());
    }

    #[test]
    fn another_shape_of_the_same_buffer_is_not_the_devices() {
        let dev = fake(vec![1.0, 2.0, 3.0, 4.0], false);
        let t = Tensor::resident(&[2, 2], DType::F32, dev);
        let r = Tensor::reshaped(&t, &[4]);
        assert!(r.device_data().is_none());
        assert_eq!(r.values().as_ref(), &[1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn finiteness_is_asked_on_the_device_until_copied() {
        let dev = fake(vec![1.0, f32::INFINITY], false);
        let t = Tensor::resident(&[2], DType::F32, dev.clone());
        assert!(!t.all_finite());
        assert_eq!((dev.probes.get(), dev.fetches.get()), (1, 0));
        let _ = t.values();
        assert!(!t.all_finite());
        assert_eq!(dev.probes.get(), 1, "read on the host once copied");
        let ok = Tensor::resident(&[1], DType::F32, fake(vec![3.0], false));
        assert!(ok.all_finite());
    }

    #[test]
    fn a_failed_copy_unwinds_with_device_lost() {
        let t = Tensor::resident(&[1], DType::F32, fake(vec![1.0], true));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.value_at(0)));
        std::panic::set_hook(hook);
        let payload = r.expect_err("a failed copy cannot give a value");
        let lost = payload.downcast_ref::<DeviceLost>().expect("DeviceLost");
        assert!(lost.0.contains("went away"), "{}", lost.0);
    }

    #[test]
    fn a_buffer_of_the_wrong_size_is_refused() {
        let t = Tensor::resident(&[3], DType::F32, fake(vec![1.0], false));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.value_at(0)));
        std::panic::set_hook(hook);
        let payload = r.expect_err("a short buffer is not the tensor");
        assert!(payload.downcast_ref::<DeviceLost>().is_some());
    }
}
