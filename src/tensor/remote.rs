//! Tensors whose elements live on an accelerator (`faber run --backend xla`): the
//! storage a device program's result gets, so that the next device program can take
//! it without a copy. The host copy is made the first time host code reads an element
//! (a kernel, `nota`, indexing, a checkpoint) and kept beside the device buffer; a
//! write first takes the host copy and then owns it (copy-on-write, as for every
//! tensor). The storage itself is `Store::Remote` (dtype.rs); the device side is a
//! [`DeviceData`] trait object (device_data.rs; src/xla/resident.rs implements it), so
//! the tensor module imports nothing above it.
//!
//! A copy to the host that fails (the device lost, the transfer refused) cannot be
//! returned through the element accessors, which cannot fail: it unwinds with a
//! [`DeviceLost`] payload, which `faber run` catches and reports as CLI011 (CLI012 out
//! of device memory) with exit code 1 (src/cli/run.rs). Files are written whole or not
//! at all, so a run stopped there leaves no half-written checkpoint.

use std::rc::Rc;

use super::device_data::DeviceData;
#[cfg(test)]
use super::device_data::{DeviceLost, HostData};
use super::dtype::{DType, Remote, Store};
use super::{Shape, Tensor};

impl Tensor {
    /// A tensor of `shape` and element type `dtype` whose elements are on a device.
    pub fn resident(shape: &[usize], dtype: DType, device: Rc<dyn DeviceData>) -> Tensor {
        Tensor {
            shape: Shape::new(shape),
            data: Store::Remote(Rc::new(Remote::new(shape, dtype, device))),
        }
    }

    /// The device buffer holding exactly this tensor (same shape), if it has one: a
    /// device program can take it without a copy.
    pub fn device_data(&self) -> Option<&Rc<dyn DeviceData>> {
        match &self.data {
            Store::Remote(r) if r.dims() == self.shape() => Some(r.device()),
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
                if let Some(b) = r.device().all_finite() {
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
    use std::any::Any;
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
