//! The safetensors reader (`serialize::safetensors::read_all`) on arbitrary bytes: an
//! `Err` or a file, never a panic or an allocation the input does not warrant. A file
//! it accepts is written back with the dtypes it was stored as and read again: the
//! second read gives the same names, dtypes, shapes, values (bit for bit; NaN as NaN)
//! and metadata, and writing that again gives the same bytes (the writer's output is a
//! fixed point). The one write that may fail is an `I64`/`U64` tensor whose value was
//! rounded to an f64 outside the dtype's range (documented in the module).
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

use faber::serialize::safetensors::{read_all, write_with_dtypes, File};
use faber::serialize::{Dtype, SafetensorsErrorKind};
use libfuzzer_sys::fuzz_target;

fn write(file: &File) -> Result<Vec<u8>, faber::serialize::SafetensorsError> {
    let tensors: Vec<_> = file
        .tensors
        .iter()
        .map(|(n, d, t)| (n.as_str(), t, *d))
        .collect();
    let metadata: Vec<_> = file
        .metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    write_with_dtypes(&tensors, &metadata)
}

fn same_value(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

fuzz_target!(|data: &[u8]| {
    // Tensors of at most 2^16 elements, as in the other targets.
    faber::tensor::Limits::set_current(faber::tensor::Limits {
        max_elements: 1 << 16,
    });
    let Ok(file) = read_all(data) else {
        return;
    };
    let bytes = match write(&file) {
        Ok(bytes) => bytes,
        Err(e) => {
            let wide = file
                .tensors
                .iter()
                .any(|(_, d, _)| matches!(d, Dtype::I64 | Dtype::U64));
            assert!(
                wide && e.kind == SafetensorsErrorKind::Value,
                "a file read back cannot be written: {e}"
            );
            return;
        }
    };
    let again = read_all(&bytes).unwrap_or_else(|e| panic!("written file does not read: {e}"));
    assert_eq!(again.metadata, file.metadata, "metadata changed");
    assert_eq!(
        again.tensors.len(),
        file.tensors.len(),
        "tensor count changed"
    );
    for ((n1, d1, t1), (n2, d2, t2)) in file.tensors.iter().zip(&again.tensors) {
        assert_eq!((n1, d1, t1.shape()), (n2, d2, t2.shape()), "tensor changed");
        assert!(
            t1.data()
                .iter()
                .zip(t2.data())
                .all(|(&a, &b)| same_value(a, b)),
            "values of `{n1}` ({d1}) changed"
        );
    }
    let twice = write(&again).unwrap_or_else(|e| panic!("second write failed: {e}"));
    assert!(twice == bytes, "writing is not a fixed point");
});
