//! What the f32 kernel tests share (tests/f32_products.rs, tests/f32_attention.rs):
//! random f32 tensors, their elements, and the 1-and-2-thread bit check.

use faber::tensor::{self as k, DType, SplitMix64, Tensor};

/// A random f32 tensor (normal, σ = `scale`; full 24-bit significands).
pub fn rand32(seed: u64, shape: &[usize], scale: f64) -> Tensor {
    SplitMix64::new(seed)
        .normal_tensor(shape, 0.0, scale)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap()
}

/// The elements of an f32 result (asserting it is one).
pub fn f32s(t: &Tensor) -> &[f32] {
    assert_eq!(t.dtype(), DType::F32, "an f32 result");
    t.data_f32().unwrap()
}

/// `f` at 1 thread and at 2; asserts the same bits (`key`), returns the result.
pub fn both_threads<R>(f: impl Fn() -> R, key: impl Fn(&R) -> Vec<u32>, what: &str) -> R {
    k::set_threads(1);
    let one = f();
    k::set_threads(2);
    let two = f();
    k::set_threads(0);
    assert_eq!(key(&one), key(&two), "{what}: 1 and 2 threads differ");
    one
}
