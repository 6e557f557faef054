//! The safetensors format: read and write named tensors as bytes.
//!
//! Layout: an 8-byte little-endian header length `N`, then `N` bytes of UTF-8
//! JSON (an object mapping each tensor name to
//! `{"dtype", "shape", "data_offsets": [begin, end]}`, plus an optional
//! `"__metadata__"` object of string → string), then the byte buffer. Offsets
//! are relative to the start of the buffer; every tensor is stored row-major
//! and little-endian, and the tensors together cover the buffer exactly.
//!
//! # Dtypes
//!
//! faber's tensors hold f64, so every element is converted on the way in and
//! out. Supported: `F64`, `F32`, `F16`, `BF16`, `I64`, `I32`, `I16`, `I8`,
//! `U64`, `U32`, `U16`, `U8` and `BOOL`, for both reading and writing.
//!
//! * Reading is exact for every dtype except `I64`/`U64` values beyond ±2⁵³,
//!   which are rounded to the nearest f64 (ties to even), as `as f64` does.
//!   `BOOL` bytes other than 0 and 1 are a `Value` error.
//! * Writing `F32` rounds each f64 to the nearest f32 (ties to even, `as f32`);
//!   finite values beyond the f32 range become ±infinity. `F16` and `BF16`
//!   round once, directly from f64, to the nearest value (ties to even; no
//!   double rounding through f32); overflow gives ±infinity and NaN a quiet
//!   NaN of the same sign. Integer dtypes and `BOOL` accept only values that
//!   are exactly representable (integral and in range; 0 or 1 for `BOOL`),
//!   anything else is a `Value` error — nothing is truncated silently.
//! * Exact integers: [`write_items`] takes `i64` elements ([`Data::Integers`]) for
//!   integer dtypes and `BOOL`, and [`read_raw`] gives each tensor's stored bytes,
//!   whose [`RawTensor::integers`] are exact for every integer dtype (a `U64` above
//!   `i64::MAX` is a `Value` error); checkpoints store `numerus` fields this way.
//! * The other dtypes of the format (`F8_*`, `F6_*`, `F4`, `C64`) are
//!   recognised and rejected with a `Dtype` error; any other name is an
//!   unknown dtype.
//!
//! # Validation (reading)
//!
//! Every input the Python `safetensors` package (0.8) rejects is rejected here
//! too (tests/fixtures/safetensors/cases.json records its verdicts). faber is
//! stricter in four ways: a tensor name given twice is an error even when both
//! entries are identical (the Python package keeps the last one), `BOOL`
//! bytes must be 0 or 1, the dtypes above that faber does not convert are
//! errors, and tensors larger than the thread's `tensor::Limits` are `Limit`
//! errors. Unknown fields inside a tensor entry are checked as JSON and
//! ignored, as there, and `"__metadata__": null` means no metadata. Limits:
//! the header is at most [`MAX_HEADER_BYTES`], JSON nesting at most 128
//! levels, and element counts are checked for overflow (left-to-right
//! product, as the reference does, so `[0, 2^32, 2^32]` is a valid empty
//! shape). The header is parsed straight into the result, no JSON tree is
//! built, so every allocation is bounded by the input length.
//!
//! Tensors come back in buffer order (sorted by `data_offsets`; for files
//! faber writes, the order they were given in), metadata in header order.
//!
//! # Writing
//!
//! The output is deterministic: `__metadata__` first (omitted when empty),
//! then the tensors in the order given, laid out contiguously in that order;
//! the JSON is written by hand with keys in the fixed order `dtype`, `shape`,
//! `data_offsets`, strings escaped as `serde_json` does, and the header padded
//! with spaces to a multiple of 8 bytes, as the reference implementation does.
//! (The Python package sorts tensors by dtype alignment and name when it
//! writes; readers accept any order.) Tensors are not padded for alignment.
//!
//! # Files
//!
//! `dtype` (the element types and their byte codecs), `json` (the strict JSON
//! reader and the string escaper), `header` (the header schema), `read` (validation
//! of the layout, conversion) and `write`.

mod dtype;
mod header;
mod json;
mod read;
mod write;

use std::fmt;

pub use dtype::Dtype;
pub use read::{read, read_all, read_raw, File, RawFile, RawTensor};
pub use write::{write, write_items, write_with_dtypes, Data, Item};

/// Largest header the reader accepts (the reference implementation's limit).
pub const MAX_HEADER_BYTES: usize = 100_000_000;

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SafetensorsErrorKind {
    /// The input ends early: shorter than the 8-byte length, shorter than the
    /// header length says, or shorter than the tensors' data needs.
    Truncated,
    /// The header is not UTF-8, not JSON, not an object, or lacks the expected
    /// structure (missing, mistyped or duplicate fields, a name given twice,
    /// metadata that is not string → string). Writing: a duplicate or
    /// reserved name.
    Header,
    /// An unknown dtype, or one of the format's dtypes that faber does not support.
    Dtype,
    /// `data_offsets` that do not match shape × dtype size, run backwards,
    /// leave gaps, overlap, or leave bytes of the buffer uncovered.
    Offsets,
    /// A header longer than [`MAX_HEADER_BYTES`], a size whose product
    /// overflows, or a tensor larger than the thread's `tensor::Limits`.
    Limit,
    /// An element that cannot be represented: writing a non-integer or
    /// out-of-range value as an integer dtype (or not 0/1 as `BOOL`), or
    /// reading a `BOOL` byte other than 0 or 1.
    Value,
}

impl SafetensorsErrorKind {
    /// A stable lowercase name ("truncated", "header", …).
    pub fn name(self) -> &'static str {
        match self {
            SafetensorsErrorKind::Truncated => "truncated",
            SafetensorsErrorKind::Header => "header",
            SafetensorsErrorKind::Dtype => "dtype",
            SafetensorsErrorKind::Offsets => "offsets",
            SafetensorsErrorKind::Limit => "limit",
            SafetensorsErrorKind::Value => "value",
        }
    }
}

/// A failed read or write: a kind and a message naming the offending part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SafetensorsError {
    pub kind: SafetensorsErrorKind,
    pub message: String,
}

impl SafetensorsError {
    fn new(kind: SafetensorsErrorKind, message: impl Into<String>) -> Self {
        SafetensorsError {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for SafetensorsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "safetensors ({}): {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for SafetensorsError {}

type SResult<T> = Result<T, SafetensorsError>;

use SafetensorsErrorKind as K;

fn err<T>(kind: SafetensorsErrorKind, message: impl Into<String>) -> SResult<T> {
    Err(SafetensorsError::new(kind, message))
}

fn header_err<T>(message: impl Into<String>) -> SResult<T> {
    err(K::Header, message)
}
