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

use crate::tensor::{checked_numel, Tensor};
use std::fmt;

/// Largest header the reader accepts (the reference implementation's limit).
pub const MAX_HEADER_BYTES: usize = 100_000_000;

/// Deepest JSON nesting accepted in the header (serde_json's default).
const MAX_DEPTH: usize = 128;

/// Element types faber reads and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
}

/// Dtypes of the format that faber recognises but does not convert.
const UNSUPPORTED_DTYPES: [&str; 9] = [
    "F8_E5M2",
    "F8_E4M3",
    "F8_E8M0",
    "F8_E4M3FNUZ",
    "F8_E5M2FNUZ",
    "F6_E2M3",
    "F6_E3M2",
    "F4",
    "C64",
];

impl Dtype {
    /// Every supported dtype.
    pub const ALL: [Dtype; 13] = [
        Dtype::F64,
        Dtype::F32,
        Dtype::F16,
        Dtype::BF16,
        Dtype::I64,
        Dtype::I32,
        Dtype::I16,
        Dtype::I8,
        Dtype::U64,
        Dtype::U32,
        Dtype::U16,
        Dtype::U8,
        Dtype::Bool,
    ];

    /// The name used in the header (`"F64"`, `"BF16"`, `"BOOL"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Dtype::F64 => "F64",
            Dtype::F32 => "F32",
            Dtype::F16 => "F16",
            Dtype::BF16 => "BF16",
            Dtype::I64 => "I64",
            Dtype::I32 => "I32",
            Dtype::I16 => "I16",
            Dtype::I8 => "I8",
            Dtype::U64 => "U64",
            Dtype::U32 => "U32",
            Dtype::U16 => "U16",
            Dtype::U8 => "U8",
            Dtype::Bool => "BOOL",
        }
    }

    /// The dtype with header name `name` (case-sensitive, as in the format).
    pub fn from_name(name: &str) -> Option<Dtype> {
        Dtype::ALL.into_iter().find(|d| d.name() == name)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Dtype::F64 | Dtype::I64 | Dtype::U64 => 8,
            Dtype::F32 | Dtype::I32 | Dtype::U32 => 4,
            Dtype::F16 | Dtype::BF16 | Dtype::I16 | Dtype::U16 => 2,
            Dtype::I8 | Dtype::U8 | Dtype::Bool => 1,
        }
    }
}

impl fmt::Display for Dtype {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

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

/// A whole safetensors file: tensors in buffer order (the order of their
/// `data_offsets`; for files faber writes, the order they were given in),
/// each with the dtype it was stored as, and the metadata in header order.
#[derive(Clone, Debug, PartialEq)]
pub struct File {
    pub tensors: Vec<(String, Dtype, Tensor)>,
    pub metadata: Vec<(String, String)>,
}

impl File {
    /// The tensor called `name`.
    pub fn tensor(&self, name: &str) -> Option<&Tensor> {
        self.tensors
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, t)| t)
    }

    /// The metadata value for `key`.
    pub fn metadata_value(&self, key: &str) -> Option<&str> {
        self.metadata
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

// ---------------------------------------------------------------- reading

/// Reads the tensors of a safetensors file (in buffer order), converted to f64.
pub fn read(bytes: &[u8]) -> SResult<Vec<(String, Tensor)>> {
    Ok(read_all(bytes)?
        .tensors
        .into_iter()
        .map(|(name, _, t)| (name, t))
        .collect())
}

/// Reads a safetensors file: tensors with their stored dtypes, and metadata.
pub fn read_all(bytes: &[u8]) -> SResult<File> {
    let raw = read_raw(bytes)?;
    let mut tensors = Vec::with_capacity(raw.tensors.len());
    for r in &raw.tensors {
        tensors.push((r.name.clone(), r.dtype, r.to_tensor()?));
    }
    Ok(File {
        tensors,
        metadata: raw.metadata,
    })
}

/// A tensor of a validated file, its elements not yet converted: the stored
/// dtype, the shape and the element bytes (little-endian, row-major).
#[derive(Clone, Debug, PartialEq)]
pub struct RawTensor<'a> {
    pub name: String,
    pub dtype: Dtype,
    pub shape: Vec<usize>,
    pub data: &'a [u8],
}

/// A validated file whose tensors are not yet converted (buffer order, as
/// [`File`]), for readers that need the stored integers exactly.
#[derive(Clone, Debug, PartialEq)]
pub struct RawFile<'a> {
    pub tensors: Vec<RawTensor<'a>>,
    pub metadata: Vec<(String, String)>,
}

impl RawTensor<'_> {
    /// The elements converted to f64, as [`read_all`] converts them.
    pub fn to_tensor(&self) -> SResult<Tensor> {
        let numel = self.data.len() / self.dtype.size();
        let data = decode(self.dtype, self.data, numel)
            .map_err(|m| SafetensorsError::new(K::Value, format!("tensor `{}`: {m}", self.name)))?;
        Tensor::from_flat(data, &self.shape).map_err(|te| {
            SafetensorsError::new(K::Limit, format!("tensor `{}`: {}", self.name, te.message))
        })
    }

    /// The elements of an integer or `BOOL` tensor as exact i64 (no rounding
    /// through f64); a float dtype, or a `U64` value above `i64::MAX`, is a
    /// `Value` error.
    pub fn integers(&self) -> SResult<Vec<i64>> {
        let bad =
            |m: String| SafetensorsError::new(K::Value, format!("tensor `{}`: {m}", self.name));
        let c = self.data.chunks_exact(self.dtype.size());
        Ok(match self.dtype {
            Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16 => {
                return Err(bad(format!("{} is not an integer dtype", self.dtype)))
            }
            Dtype::I64 => c.map(|c| i64::from_le_bytes(le(c))).collect(),
            Dtype::I32 => c.map(|c| i32::from_le_bytes(le(c)) as i64).collect(),
            Dtype::I16 => c.map(|c| i16::from_le_bytes(le(c)) as i64).collect(),
            Dtype::I8 => c.map(|c| c[0] as i8 as i64).collect(),
            Dtype::U64 => c
                .map(|c| {
                    let u = u64::from_le_bytes(le(c));
                    i64::try_from(u).map_err(|_| bad(format!("U64 value {u} exceeds i64")))
                })
                .collect::<SResult<_>>()?,
            Dtype::U32 => c.map(|c| u32::from_le_bytes(le(c)) as i64).collect(),
            Dtype::U16 => c.map(|c| u16::from_le_bytes(le(c)) as i64).collect(),
            Dtype::U8 => c.map(|c| c[0] as i64).collect(),
            Dtype::Bool => c
                .enumerate()
                .map(|(i, c)| match c[0] {
                    b @ (0 | 1) => Ok(b as i64),
                    b => Err(bad(format!(
                        "BOOL element {i} is byte {b}, neither 0 nor 1"
                    ))),
                })
                .collect::<SResult<_>>()?,
        })
    }
}

/// Reads and validates a safetensors file without converting its elements.
pub fn read_raw(bytes: &[u8]) -> SResult<RawFile<'_>> {
    if bytes.len() < 8 {
        return err(
            K::Truncated,
            format!(
                "input is {} bytes, shorter than the 8-byte header length",
                bytes.len()
            ),
        );
    }
    let mut len_bytes = [0u8; 8];
    len_bytes.copy_from_slice(&bytes[..8]);
    let n = u64::from_le_bytes(len_bytes);
    if n > MAX_HEADER_BYTES as u64 {
        return err(
            K::Limit,
            format!("header length {n} is larger than the limit of {MAX_HEADER_BYTES} bytes"),
        );
    }
    let n = n as usize;
    let rest = bytes.len() - 8;
    if n > rest {
        return err(
            K::Truncated,
            format!("header length is {n} bytes but only {rest} bytes follow"),
        );
    }
    let header = std::str::from_utf8(&bytes[8..8 + n]).map_err(|e| {
        SafetensorsError::new(
            K::Header,
            format!("header is not valid UTF-8 (at byte {})", e.valid_up_to()),
        )
    })?;
    let buffer = &bytes[8 + n..];
    let (entries, metadata) = parse_header(header)?;

    // Sizes first, then the layout: sorted by offsets, the tensors must tile
    // the buffer exactly (this is the reference implementation's check).
    for e in &entries {
        let numel = checked_numel(&e.shape).map_err(|te| {
            SafetensorsError::new(K::Limit, format!("tensor `{}`: {}", e.name, te.message))
        })?;
        let nbytes = numel.checked_mul(e.dtype.size()).ok_or_else(|| {
            SafetensorsError::new(
                K::Limit,
                format!("tensor `{}`: byte size overflows", e.name),
            )
        })?;
        let (begin, end) = e.offsets;
        if end < begin {
            return err(
                K::Offsets,
                format!(
                    "tensor `{}`: data_offsets [{begin}, {end}] end before they begin",
                    e.name
                ),
            );
        }
        if end - begin != nbytes {
            return err(
                K::Offsets,
                format!(
                    "tensor `{}`: data_offsets [{begin}, {end}] span {} bytes but {} of shape {} needs {nbytes}",
                    e.name,
                    end - begin,
                    e.dtype,
                    crate::tensor::fmt_shape(&e.shape)
                ),
            );
        }
    }
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by_key(|&i| entries[i].offsets); // stable: ties keep header order
    let mut pos = 0usize;
    for &i in &order {
        let e = &entries[i];
        let (begin, end) = e.offsets;
        if begin != pos {
            let what = if begin < pos {
                "overlaps the previous tensor"
            } else {
                "leaves a gap after the previous tensor"
            };
            return err(
                K::Offsets,
                format!(
                    "tensor `{}`: data_offsets [{begin}, {end}] {what} (expected to begin at {pos})",
                    e.name
                ),
            );
        }
        pos = end;
    }
    if pos > buffer.len() {
        return err(
            K::Truncated,
            format!(
                "the tensors need {pos} bytes of data but only {} follow the header",
                buffer.len()
            ),
        );
    }
    if pos < buffer.len() {
        return err(
            K::Offsets,
            format!(
                "{} bytes follow the header but the tensors cover only {pos}",
                buffer.len()
            ),
        );
    }

    let tensors = order
        .iter()
        .map(|&i| {
            let e = &entries[i];
            RawTensor {
                name: e.name.clone(),
                dtype: e.dtype,
                shape: e.shape.clone(),
                data: &buffer[e.offsets.0..e.offsets.1],
            }
        })
        .collect();
    Ok(RawFile { tensors, metadata })
}

fn le<const N: usize>(c: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(c);
    a
}

/// Converts `bytes` (exactly `numel` elements of `dtype`) to f64.
fn decode(dtype: Dtype, bytes: &[u8], numel: usize) -> Result<Vec<f64>, String> {
    let mut out = Vec::with_capacity(numel);
    let c = bytes.chunks_exact(dtype.size());
    match dtype {
        Dtype::F64 => out.extend(c.map(|c| f64::from_le_bytes(le(c)))),
        Dtype::F32 => out.extend(c.map(|c| f32::from_le_bytes(le(c)) as f64)),
        Dtype::F16 => out.extend(c.map(|c| small_float_to_f64(u16::from_le_bytes(le(c)), 5, 10))),
        Dtype::BF16 => out.extend(c.map(|c| small_float_to_f64(u16::from_le_bytes(le(c)), 8, 7))),
        Dtype::I64 => out.extend(c.map(|c| i64::from_le_bytes(le(c)) as f64)),
        Dtype::I32 => out.extend(c.map(|c| i32::from_le_bytes(le(c)) as f64)),
        Dtype::I16 => out.extend(c.map(|c| i16::from_le_bytes(le(c)) as f64)),
        Dtype::I8 => out.extend(c.map(|c| c[0] as i8 as f64)),
        Dtype::U64 => out.extend(c.map(|c| u64::from_le_bytes(le(c)) as f64)),
        Dtype::U32 => out.extend(c.map(|c| u32::from_le_bytes(le(c)) as f64)),
        Dtype::U16 => out.extend(c.map(|c| u16::from_le_bytes(le(c)) as f64)),
        Dtype::U8 => out.extend(c.map(|c| c[0] as f64)),
        Dtype::Bool => {
            for (i, &b) in bytes.iter().enumerate() {
                match b {
                    0 => out.push(0.0),
                    1 => out.push(1.0),
                    _ => return Err(format!("BOOL element {i} is byte {b}, neither 0 nor 1")),
                }
            }
        }
    }
    Ok(out)
}

/// 2^k as an f64, for k in the normal range [-1022, 1023].
fn pow2(k: i32) -> f64 {
    f64::from_bits(((1023 + k) as u64) << 52)
}

/// The exact value of a 16-bit binary float with `exp_bits` exponent bits and
/// `man_bits` stored mantissa bits (F16: 5, 10; BF16: 8, 7).
fn small_float_to_f64(bits: u16, exp_bits: u32, man_bits: u32) -> f64 {
    let negative = bits >> (exp_bits + man_bits) & 1 == 1;
    let field = ((bits >> man_bits) & ((1 << exp_bits) - 1)) as i32;
    let mant = (bits & ((1 << man_bits) - 1)) as f64;
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let magnitude = if field == (1 << exp_bits) - 1 {
        if mant == 0.0 {
            f64::INFINITY
        } else {
            f64::NAN
        }
    } else if field == 0 {
        mant * pow2(1 - bias - man_bits as i32)
    } else {
        (pow2(man_bits as i32) + mant) * pow2(field - bias - man_bits as i32)
    };
    if negative {
        -magnitude
    } else {
        magnitude
    }
}

/// The bits of the 16-bit binary float nearest to `x` (ties to even), rounded
/// once from f64: overflow gives ±infinity, NaN a quiet NaN with `x`'s sign.
fn f64_to_small_float(x: f64, exp_bits: u32, man_bits: u32) -> u16 {
    let sign: u16 = if x.is_sign_negative() {
        1 << (exp_bits + man_bits)
    } else {
        0
    };
    let inf: u16 = ((1 << exp_bits) - 1) << man_bits;
    if x.is_nan() {
        return sign | inf | (1 << (man_bits - 1));
    }
    let a = x.abs();
    let bias = (1i32 << (exp_bits - 1)) - 1;
    let (emin, emax) = (1 - bias, bias);
    // Binary exponent of `a`, clamped to the target's subnormal exponent
    // (f64 subnormals and zero are far below every target's normal range).
    let mut e = (((a.to_bits() >> 52) & 0x7ff) as i32 - 1023).max(emin);
    if e > emax {
        return sign | inf;
    }
    let m = man_bits as i32;
    // a / 2^(e - m) is exact (power-of-two scaling, result below 2^(m+1)).
    let mut n = (a * pow2(m - e)).round_ties_even();
    if n >= pow2(m + 1) {
        e += 1;
        n = pow2(m);
        if e > emax {
            return sign | inf;
        }
    }
    let n = n as u16;
    if n >= 1 << man_bits {
        sign | (((e + bias) as u16) << man_bits) | (n - (1 << man_bits))
    } else {
        sign | n // subnormal (e == emin) or zero
    }
}

struct Entry {
    name: String,
    dtype: Dtype,
    shape: Vec<usize>,
    offsets: (usize, usize),
}

type Metadata = Vec<(String, String)>;

fn header_err<T>(message: impl Into<String>) -> SResult<T> {
    err(K::Header, message)
}

/// Parses the header JSON straight into tensor entries (header order) and
/// metadata. Nothing but the result is allocated: values of unknown fields
/// are checked and skipped, and a value of the wrong JSON type is an error
/// as soon as it has been checked.
fn parse_header(text: &str) -> SResult<(Vec<Entry>, Metadata)> {
    let mut p = JsonParser::new(text);
    p.ws();
    if p.peek() != Some(b'{') {
        let found = p.check_kind()?;
        return header_err(format!("header is JSON {found} but must be an object"));
    }
    let mut entries: Vec<Entry> = Vec::new();
    let mut metadata: Option<Metadata> = None;
    let mut names = std::collections::HashSet::new();
    p.object(1, true, |p, key| {
        if key == "__metadata__" {
            if metadata.is_some() {
                return header_err("`__metadata__` is given twice");
            }
            metadata = Some(parse_metadata(p)?);
        } else {
            if names.contains(&key) {
                return header_err(format!("tensor `{key}` is given twice"));
            }
            let entry = parse_entry(p, key)?;
            names.insert(entry.name.clone());
            entries.push(entry);
        }
        Ok(())
    })?;
    p.ws();
    if p.pos != p.s.len() {
        return p.fail("unexpected characters after the JSON value");
    }
    Ok((entries, metadata.unwrap_or_default()))
}

fn parse_metadata(p: &mut JsonParser) -> SResult<Metadata> {
    match p.peek() {
        Some(b'n') => {
            p.literal("null")?;
            return Ok(Vec::new());
        }
        Some(b'{') => {}
        _ => {
            let found = p.check_kind()?;
            return header_err(format!(
                "`__metadata__` is JSON {found} but must be an object of strings"
            ));
        }
    }
    let mut keys = std::collections::HashSet::new();
    let mut out = Vec::new();
    p.object(2, true, |p, k| {
        if keys.contains(&k) {
            return header_err(format!("metadata key `{k}` is given twice"));
        }
        if p.peek() != Some(b'"') {
            let found = p.check_kind()?;
            return header_err(format!(
                "metadata `{k}` is JSON {found} but must be a string"
            ));
        }
        let v = p.string(true)?;
        keys.insert(k.clone());
        out.push((k, v));
        Ok(())
    })?;
    Ok(out)
}

fn parse_entry(p: &mut JsonParser, name: String) -> SResult<Entry> {
    if p.peek() != Some(b'{') {
        let found = p.check_kind()?;
        return header_err(format!(
            "tensor `{name}` is JSON {found} but must be an object"
        ));
    }
    let (mut dtype, mut shape, mut offsets) = (None::<String>, None, None);
    p.object(2, true, |p, field| {
        let taken = match field.as_str() {
            "dtype" => {
                if p.peek() != Some(b'"') {
                    let found = p.check_kind()?;
                    return header_err(format!(
                        "tensor `{name}`: dtype is JSON {found} but must be a string"
                    ));
                }
                dtype.replace(p.string(true)?).is_some()
            }
            "shape" => shape.replace(uint_array(p, &name, "shape")?).is_some(),
            "data_offsets" => offsets
                .replace(uint_array(p, &name, "data_offsets")?)
                .is_some(),
            // Unknown fields are ignored, as by the reference.
            _ => {
                p.skip_value(3)?;
                false
            }
        };
        if taken {
            return header_err(format!("tensor `{name}`: field `{field}` is given twice"));
        }
        Ok(())
    })?;
    let missing =
        |f: &str| SafetensorsError::new(K::Header, format!("tensor `{name}`: missing field `{f}`"));
    let dtype = dtype.ok_or_else(|| missing("dtype"))?;
    let shape = shape.ok_or_else(|| missing("shape"))?;
    let offsets = offsets.ok_or_else(|| missing("data_offsets"))?;
    let dtype = match Dtype::from_name(&dtype) {
        Some(d) => d,
        None if UNSUPPORTED_DTYPES.contains(&dtype.as_str()) => {
            return err(
                K::Dtype,
                format!("tensor `{name}`: dtype {dtype} is not supported by faber"),
            )
        }
        None => {
            return err(
                K::Dtype,
                format!("tensor `{name}`: unknown dtype `{dtype}`"),
            )
        }
    };
    let [begin, end] = offsets[..] else {
        return header_err(format!(
            "tensor `{name}`: data_offsets has {} elements but must have 2",
            offsets.len()
        ));
    };
    Ok(Entry {
        name,
        dtype,
        shape,
        offsets: (begin, end),
    })
}

/// An array of non-negative integers (`shape`, `data_offsets`).
fn uint_array(p: &mut JsonParser, name: &str, field: &str) -> SResult<Vec<usize>> {
    if p.peek() != Some(b'[') {
        let found = p.check_kind()?;
        return header_err(format!(
            "tensor `{name}`: {field} is JSON {found} but must be an array"
        ));
    }
    let mut out = Vec::new();
    p.array(3, |p| {
        let start = p.pos;
        if !matches!(p.peek(), Some(b'-' | b'0'..=b'9')) {
            let found = p.check_kind()?;
            return header_err(format!(
                "tensor `{name}`: {field} holds JSON {found}, not a non-negative integer"
            ));
        }
        match p.number()? {
            Some(v) => match usize::try_from(v) {
                Ok(v) => out.push(v),
                Err(_) => {
                    return err(
                        K::Limit,
                        format!("tensor `{name}`: {field} value {v} does not fit in usize"),
                    )
                }
            },
            None => {
                let text = String::from_utf8_lossy(&p.s[start..p.pos.min(start + 40)]);
                return header_err(format!(
                    "tensor `{name}`: {field} holds `{text}`, not a non-negative integer below 2^64"
                ));
            }
        }
        Ok(())
    })?;
    Ok(out)
}

// ---------------------------------------------------------------- JSON

/// A strict RFC 8259 reader over the header text, driven by the schema
/// above: containers are walked member by member, nothing is built that the
/// caller does not keep.
struct JsonParser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl<'a> JsonParser<'a> {
    fn new(text: &'a str) -> Self {
        JsonParser {
            s: text.as_bytes(),
            pos: 0,
        }
    }

    fn fail<T>(&self, what: &str) -> SResult<T> {
        header_err(format!(
            "invalid JSON in header at byte {}: {what}",
            self.pos
        ))
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn literal(&mut self, word: &str) -> SResult<()> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(())
        } else {
            self.fail("expected a value")
        }
    }

    /// Checks the value at the cursor (skipping it) and names its JSON type,
    /// for messages about a value of the wrong type; invalid JSON is reported
    /// as such instead.
    fn check_kind(&mut self) -> SResult<&'static str> {
        let kind = match self.peek() {
            Some(b'{') => "object",
            Some(b'[') => "array",
            Some(b'"') => "string",
            Some(b't' | b'f') => "boolean",
            Some(b'n') => "null",
            _ => "number",
        };
        self.skip_value(1)?;
        Ok(kind)
    }

    /// Checks one value of any type without keeping it.
    fn skip_value(&mut self, depth: usize) -> SResult<()> {
        match self.peek() {
            None => self.fail("unexpected end of header"),
            Some(b'{') => self.object(depth, false, |p, _| p.skip_value(depth + 1)),
            Some(b'[') => self.array(depth, |p| p.skip_value(depth + 1)),
            Some(b'"') => self.string(false).map(drop),
            Some(b'-' | b'0'..=b'9') => self.number().map(drop),
            Some(b't') => self.literal("true"),
            Some(b'f') => self.literal("false"),
            Some(b'n') => self.literal("null"),
            Some(_) => self.fail("expected a value"),
        }
    }

    fn enter(&self, depth: usize) -> SResult<()> {
        if depth > MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        Ok(())
    }

    /// Walks the object at the cursor (nesting level `depth`), calling
    /// `member` with each key (empty unless `keep_keys`) and the cursor at
    /// its value; `member` must consume the value.
    fn object(
        &mut self,
        depth: usize,
        keep_keys: bool,
        mut member: impl FnMut(&mut Self, String) -> SResult<()>,
    ) -> SResult<()> {
        self.enter(depth)?;
        self.pos += 1; // '{'
        self.ws();
        if self.eat(b'}') {
            return Ok(());
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.fail("expected a string key");
            }
            let key = self.string(keep_keys)?;
            self.ws();
            if !self.eat(b':') {
                return self.fail("expected `:`");
            }
            self.ws();
            member(self, key)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                return Ok(());
            }
            return self.fail("expected `,` or `}`");
        }
    }

    /// Walks the array at the cursor, calling `item` at each element.
    fn array(
        &mut self,
        depth: usize,
        mut item: impl FnMut(&mut Self) -> SResult<()>,
    ) -> SResult<()> {
        self.enter(depth)?;
        self.pos += 1; // '['
        self.ws();
        if self.eat(b']') {
            return Ok(());
        }
        loop {
            self.ws();
            item(self)?;
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                return Ok(());
            }
            return self.fail("expected `,` or `]`");
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Reads a number: `Some(v)` for a non-negative integer without fraction
    /// or exponent that fits in u64, `None` for any other valid number.
    fn number(&mut self) -> SResult<Option<u64>> {
        let negative = self.eat(b'-');
        let int_start = self.pos;
        match self.digits() {
            0 => return self.fail("expected a digit"),
            n if n > 1 && self.s[int_start] == b'0' => {
                self.pos = int_start;
                return self.fail("number with a leading zero");
            }
            _ => {}
        }
        let int_end = self.pos;
        let mut integral = !negative;
        if self.eat(b'.') {
            integral = false;
            if self.digits() == 0 {
                return self.fail("expected a digit after `.`");
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            integral = false;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.fail("expected a digit in the exponent");
            }
        }
        if !integral {
            return Ok(None);
        }
        let mut v: u64 = 0;
        for &d in &self.s[int_start..int_end] {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
            {
                Some(n) => v = n,
                None => return Ok(None),
            }
        }
        Ok(Some(v))
    }

    fn hex4(&mut self) -> SResult<u32> {
        let mut v = 0u32;
        for _ in 0..4 {
            let d = match self.peek() {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return self.fail("expected 4 hex digits after `\\u`"),
            };
            v = v * 16 + u32::from(d);
            self.pos += 1;
        }
        Ok(v)
    }

    /// Reads the string at the cursor; its text is returned when `keep`,
    /// otherwise it is only checked and the result is empty.
    fn string(&mut self, keep: bool) -> SResult<String> {
        self.pos += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let run = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            if keep {
                out.extend_from_slice(&self.s[run..self.pos]);
            }
            match self.peek() {
                None => return self.fail("unterminated string"),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let simple = match self.peek() {
                        Some(b'"') => Some('"'),
                        Some(b'\\') => Some('\\'),
                        Some(b'/') => Some('/'),
                        Some(b'b') => Some('\u{8}'),
                        Some(b'f') => Some('\u{c}'),
                        Some(b'n') => Some('\n'),
                        Some(b'r') => Some('\r'),
                        Some(b't') => Some('\t'),
                        Some(b'u') => None,
                        _ => return self.fail("invalid escape"),
                    };
                    self.pos += 1;
                    let c = match simple {
                        Some(c) => c,
                        None => self.unicode_escape()?,
                    };
                    if keep {
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                }
                Some(_) => return self.fail("control character in a string"),
            }
        }
        // Whole UTF-8 sequences of valid text and encoded chars: always valid.
        String::from_utf8(out).or_else(|_| self.fail("string is not valid UTF-8"))
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a UTF-16
    /// surrogate pair; a lone surrogate is an error.
    fn unicode_escape(&mut self) -> SResult<char> {
        let hi = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&hi) {
            if !(self.eat(b'\\') && self.eat(b'u')) {
                return self.fail("high surrogate not followed by a low surrogate");
            }
            let lo = self.hex4()?;
            if !(0xDC00..0xE000).contains(&lo) {
                return self.fail("high surrogate not followed by a low surrogate");
            }
            0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
        } else if (0xDC00..0xE000).contains(&hi) {
            return self.fail("lone low surrogate");
        } else {
            hi
        };
        match char::from_u32(code) {
            Some(c) => Ok(c),
            None => self.fail("invalid \\u escape"),
        }
    }
}

// ---------------------------------------------------------------- writing

/// Writes `tensors`, all stored as `dtype`, and `metadata` as a safetensors
/// file (see the module documentation for the layout and the conversions).
pub fn write(
    tensors: &[(&str, &Tensor)],
    dtype: Dtype,
    metadata: &[(&str, &str)],
) -> SResult<Vec<u8>> {
    let with: Vec<(&str, &Tensor, Dtype)> = tensors.iter().map(|&(n, t)| (n, t, dtype)).collect();
    write_with_dtypes(&with, metadata)
}

/// Like [`write`], with a dtype per tensor.
pub fn write_with_dtypes(
    tensors: &[(&str, &Tensor, Dtype)],
    metadata: &[(&str, &str)],
) -> SResult<Vec<u8>> {
    let items: Vec<Item<'_>> = tensors
        .iter()
        .map(|&(name, t, dtype)| Item {
            name,
            dtype,
            shape: t.shape(),
            data: Data::Floats(t.data()),
        })
        .collect();
    write_items(&items, metadata)
}

/// The elements of an [`Item`]: f64 values (converted to the item's dtype as
/// [`write`] converts them), or exact integers for an integer or `BOOL` dtype.
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    Floats(&'a [f64]),
    Integers(&'a [i64]),
}

impl Data<'_> {
    fn len(&self) -> usize {
        match self {
            Data::Floats(x) => x.len(),
            Data::Integers(x) => x.len(),
        }
    }
}

/// One tensor to write: its name, stored dtype, shape and row-major elements.
#[derive(Clone, Copy, Debug)]
pub struct Item<'a> {
    pub name: &'a str,
    pub dtype: Dtype,
    pub shape: &'a [usize],
    pub data: Data<'a>,
}

/// Like [`write_with_dtypes`], for items whose elements may be exact integers
/// (an element count that differs from the shape's is a `Value` error).
pub fn write_items(tensors: &[Item<'_>], metadata: &[(&str, &str)]) -> SResult<Vec<u8>> {
    for item in tensors {
        let numel = checked_numel(item.shape).map_err(|te| {
            SafetensorsError::new(K::Limit, format!("tensor `{}`: {}", item.name, te.message))
        })?;
        if numel != item.data.len() {
            return err(
                K::Value,
                format!(
                    "tensor `{}`: {} elements given for shape {}",
                    item.name,
                    item.data.len(),
                    crate::tensor::fmt_shape(item.shape)
                ),
            );
        }
    }
    let mut names = std::collections::HashSet::new();
    for &Item { name, .. } in tensors {
        if name == "__metadata__" {
            return header_err("`__metadata__` cannot name a tensor");
        }
        if !names.insert(name) {
            return header_err(format!("tensor `{name}` is given twice"));
        }
    }
    let mut keys = std::collections::HashSet::new();
    for &(k, _) in metadata {
        if !keys.insert(k) {
            return header_err(format!("metadata key `{k}` is given twice"));
        }
    }

    let mut header = String::from("{");
    if !metadata.is_empty() {
        header.push_str("\"__metadata__\":{");
        for (i, &(k, v)) in metadata.iter().enumerate() {
            if i > 0 {
                header.push(',');
            }
            json_string(&mut header, k);
            header.push(':');
            json_string(&mut header, v);
        }
        header.push('}');
    }
    let mut pos = 0usize;
    for (i, item) in tensors.iter().enumerate() {
        let (name, dtype) = (item.name, item.dtype);
        if i > 0 || !metadata.is_empty() {
            header.push(',');
        }
        let nbytes = item.data.len().checked_mul(dtype.size()).ok_or_else(|| {
            SafetensorsError::new(K::Limit, format!("tensor `{name}`: byte size overflows"))
        })?;
        let end = pos.checked_add(nbytes).ok_or_else(|| {
            SafetensorsError::new(K::Limit, "total data size overflows".to_string())
        })?;
        json_string(&mut header, name);
        let dims: Vec<String> = item.shape.iter().map(|d| d.to_string()).collect();
        header.push_str(&format!(
            ":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{pos},{end}]}}",
            dtype.name(),
            dims.join(",")
        ));
        pos = end;
    }
    header.push('}');
    while header.len() % 8 != 0 {
        header.push(' ');
    }
    if header.len() > MAX_HEADER_BYTES {
        return err(
            K::Limit,
            format!(
                "header of {} bytes is larger than the limit of {MAX_HEADER_BYTES}",
                header.len()
            ),
        );
    }
    let total = (8 + header.len())
        .checked_add(pos)
        .ok_or_else(|| SafetensorsError::new(K::Limit, "total file size overflows".to_string()))?;
    let mut out = Vec::new();
    out.try_reserve_exact(total)
        .map_err(|_| SafetensorsError::new(K::Limit, format!("cannot allocate {total} bytes")))?;
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for item in tensors {
        match item.data {
            Data::Floats(x) => encode(item.dtype, x, &mut out),
            Data::Integers(x) => encode_integers(item.dtype, x, &mut out),
        }
        .map_err(|m| SafetensorsError::new(K::Value, format!("tensor `{}`: {m}", item.name)))?;
    }
    Ok(out)
}

/// Appends `s` as a JSON string, escaped as serde_json escapes it: `"`, `\`,
/// the short escapes `\b \f \n \r \t`, other control characters as `\u00xx`;
/// everything else (including non-ASCII) verbatim.
fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `x` if it is an integer within `[lo, hi_exclusive)` (NaN and ±inf are not).
fn integral_in(x: f64, lo: f64, hi_exclusive: f64) -> Option<f64> {
    (x.fract() == 0.0 && x >= lo && x < hi_exclusive).then_some(x)
}

/// Appends `data` converted to `dtype`, little-endian.
fn encode(dtype: Dtype, data: &[f64], out: &mut Vec<u8>) -> Result<(), String> {
    let bad = |i: usize, x: f64| format!("element {i} = {x:?} is not representable as {dtype}");
    match dtype {
        Dtype::F64 => data.iter().for_each(|x| out.extend(x.to_le_bytes())),
        Dtype::F32 => data
            .iter()
            .for_each(|&x| out.extend((x as f32).to_le_bytes())),
        Dtype::F16 => data
            .iter()
            .for_each(|&x| out.extend(f64_to_small_float(x, 5, 10).to_le_bytes())),
        Dtype::BF16 => data
            .iter()
            .for_each(|&x| out.extend(f64_to_small_float(x, 8, 7).to_le_bytes())),
        Dtype::Bool => {
            for (i, &x) in data.iter().enumerate() {
                if x == 0.0 {
                    out.push(0);
                } else if x == 1.0 {
                    out.push(1);
                } else {
                    return Err(bad(i, x));
                }
            }
        }
        _ => {
            // Integer dtypes: bounds are powers of two, exact in f64.
            let bits = dtype.size() as i32 * 8;
            let signed = matches!(dtype, Dtype::I64 | Dtype::I32 | Dtype::I16 | Dtype::I8);
            let (lo, hi) = if signed {
                (-pow2(bits - 1), pow2(bits - 1))
            } else {
                (0.0, pow2(bits))
            };
            for (i, &x) in data.iter().enumerate() {
                let v = integral_in(x, lo, hi).ok_or_else(|| bad(i, x))?;
                let size = dtype.size();
                if signed {
                    out.extend_from_slice(&(v as i64).to_le_bytes()[..size]);
                } else {
                    out.extend_from_slice(&(v as u64).to_le_bytes()[..size]);
                }
            }
        }
    }
    Ok(())
}

/// Appends exact integers as `dtype` (an integer dtype, or `BOOL` for 0 and 1),
/// little-endian; a value out of the dtype's range, or a float dtype, is an error.
fn encode_integers(dtype: Dtype, data: &[i64], out: &mut Vec<u8>) -> Result<(), String> {
    let size = dtype.size();
    let (lo, hi): (i128, i128) = match dtype {
        Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16 => {
            return Err(format!("integers cannot be stored as {dtype}"))
        }
        Dtype::Bool => (0, 1),
        Dtype::I64 | Dtype::I32 | Dtype::I16 | Dtype::I8 => {
            (-(1i128 << (size * 8 - 1)), (1i128 << (size * 8 - 1)) - 1)
        }
        _ => (0, (1i128 << (size * 8)) - 1),
    };
    for (i, &x) in data.iter().enumerate() {
        if !(lo..=hi).contains(&(x as i128)) {
            return Err(format!("element {i} = {x} is not representable as {dtype}"));
        }
        out.extend_from_slice(&x.to_le_bytes()[..size]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `text` as one JSON value, as unknown fields are checked.
    fn valid(text: &str) -> SResult<()> {
        let mut p = JsonParser::new(text);
        p.ws();
        p.skip_value(1)?;
        p.ws();
        if p.pos != p.s.len() {
            return p.fail("trailing characters");
        }
        Ok(())
    }

    fn string(text: &str) -> SResult<String> {
        let mut p = JsonParser::new(text);
        assert_eq!(p.peek(), Some(b'"'));
        let s = p.string(true)?;
        assert_eq!(p.pos, text.len(), "{text}");
        Ok(s)
    }

    fn number(text: &str) -> SResult<Option<u64>> {
        let mut p = JsonParser::new(text);
        let v = p.number()?;
        if p.pos != p.s.len() {
            return p.fail("trailing characters");
        }
        Ok(v)
    }

    #[test]
    fn json_strings_decode_escapes_and_surrogate_pairs() {
        let text = r#""a\"\\\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00é""#;
        assert_eq!(string(text).unwrap(), "a\"\\/\u{8}\u{c}\n\r\tAé😀é");
        assert!(valid(text).is_ok());
        for bad in [
            r#""\ud83d""#,
            r#""\ud83dx""#,
            r#""\ud83d\u0041""#,
            r#""\ude00""#,
            r#""\u12""#,
            r#""\x""#,
            "\"a\u{1}\"",
            r#""abc"#,
        ] {
            let e = string(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"));
            assert_eq!(e.kind, K::Header, "{bad}");
            assert!(valid(bad).is_err(), "{bad} accepted when skipped");
        }
    }

    #[test]
    fn json_numbers_are_strict() {
        for (text, want) in [("0", 0), ("7", 7), ("18446744073709551615", u64::MAX)] {
            assert_eq!(number(text), Ok(Some(want)), "{text}");
        }
        for text in [
            "18446744073709551616",
            "-0",
            "-1",
            "1.5",
            "1e3",
            "2E-2",
            "0.0",
        ] {
            assert_eq!(number(text), Ok(None), "{text}");
        }
        for text in [
            "01", "-", "1.", ".5", "1e", "1e+", "+1", "--1", "0x10", "1 2", "Infinity", "NaN",
        ] {
            assert!(
                number(text).is_err() && valid(text).is_err(),
                "{text} accepted"
            );
        }
    }

    #[test]
    fn json_structure_and_depth() {
        assert!(valid(" { \"a\" : [ 1 , { } , [ ] , null , true , false , -1.5e3 ] } ").is_ok());
        for bad in [
            "",
            "{",
            "{]",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1:2}",
            "[1 2]",
            "{} x",
            "\u{feff}{}",
            "nul",
            "tru",
            "[true false]",
        ] {
            assert!(valid(bad).is_err(), "{bad:?} accepted");
        }
        let ok = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        assert!(valid(&ok).is_ok());
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(valid(&deep)
            .unwrap_err()
            .message
            .contains("nested too deeply"));
        // Far deeper than the stack could take if the limit were missing.
        assert!(valid(&"[".repeat(1_000_000)).is_err());
    }

    #[test]
    fn header_schema() {
        let (entries, meta) = parse_header(
            r#"{"b":{"x":[[{"y":"\u0000"}]],"data_offsets":[4,8],"shape":[1],"dtype":"U32"},"__metadata__":{"k":"v"}}"#,
        )
        .unwrap();
        assert_eq!(meta, vec![("k".to_string(), "v".to_string())]);
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].dtype, entries[0].offsets), (Dtype::U32, (4, 8)));
        for (bad, needle) in [
            (r#"[]"#, "header is JSON array"),
            (r#"{"a":[]}"#, "tensor `a` is JSON array"),
            (
                r#"{"a":{"dtype":"F32","shape":"1"}}"#,
                "shape is JSON string",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[true]}}"#,
                "holds JSON boolean",
            ),
            (r#"{"a":{"dtype":"F32","shape":[1.5]}}"#, "holds `1.5`"),
            (r#"{"a":{"dtype":"F32","shape":[nul]}}"#, "invalid JSON"),
            (r#"{"a":{"dtype":1}}"#, "dtype is JSON number"),
            (
                r#"{"a":{"shape":[],"data_offsets":[0,0]}}"#,
                "missing field `dtype`",
            ),
            (
                r#"{"a":{"dtype":"F32","shape":[],"data_offsets":[0]}}"#,
                "has 1 elements",
            ),
            (
                r#"{"__metadata__":{"k":null}}"#,
                "metadata `k` is JSON null",
            ),
        ] {
            let e = parse_header(bad)
                .err()
                .unwrap_or_else(|| panic!("{bad} accepted"));
            assert!(e.message.contains(needle), "{bad}: {}", e.message);
        }
    }

    #[test]
    fn json_string_escapes_like_serde_json() {
        let mut out = String::new();
        json_string(&mut out, "q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀");
        assert_eq!(
            out,
            r#""q\"b\\\b\f\n\r\t\u0001\u001f"#.to_string() + "\u{7f}/é😀\""
        );
        let back = string(&out).unwrap();
        assert_eq!(back, "q\"b\\\u{8}\u{c}\n\r\t\u{1}\u{1f}\u{7f}/é😀");
    }

    #[test]
    fn small_float_conversions() {
        // F16: 1, max, min normal, min subnormal, -2; BF16: 1, max, min subnormal.
        for (bits, v) in [
            (0x3c00u16, 1.0),
            (0x7bff, 65504.0),
            (0x0400, 6.103515625e-5),
            (0x0001, 5.960464477539063e-8),
            (0xc000, -2.0),
        ] {
            assert_eq!(small_float_to_f64(bits, 5, 10), v);
            assert_eq!(f64_to_small_float(v, 5, 10), bits);
        }
        for (bits, v) in [
            (0x3f80u16, 1.0),
            (0x7f7f, 3.3895313892515355e38),
            (0x0001, 9.183549615799121e-41),
        ] {
            assert_eq!(small_float_to_f64(bits, 8, 7), v);
            assert_eq!(f64_to_small_float(v, 8, 7), bits);
        }
        // Round to nearest, ties to even, overflow to infinity, NaN quiet.
        assert_eq!(f64_to_small_float(1.0 + 2f64.powi(-11), 5, 10), 0x3c00);
        assert_eq!(
            f64_to_small_float(1.0 + 3.0 * 2f64.powi(-11), 5, 10),
            0x3c02
        );
        assert_eq!(f64_to_small_float(65520.0, 5, 10), 0x7c00);
        assert_eq!(f64_to_small_float(-1e300, 5, 10), 0xfc00);
        assert_eq!(f64_to_small_float(2f64.powi(-25), 5, 10), 0x0000);
        assert_eq!(f64_to_small_float(-5e-324, 5, 10), 0x8000);
        assert_eq!(f64_to_small_float(-f64::NAN, 8, 7), 0xffc0);
        assert_eq!(f64_to_small_float(f64::NAN, 5, 10), 0x7e00);
    }

    #[test]
    fn headers_read_and_errors_display() {
        let x = Tensor::from_flat(vec![1.0, 2.0], &[2]).unwrap();
        let bytes = write(&[("x", &x)], Dtype::F32, &[("k", "v")]).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        assert_eq!(n % 8, 0);
        assert_eq!(bytes.len(), 8 + n + 8);
        assert!(bytes[8..8 + n].ends_with(b"} "), "padded with spaces");
        let f = read_all(&bytes).unwrap();
        assert_eq!(f.tensor("x").unwrap().data(), &[1.0, 2.0]);
        assert_eq!(f.metadata_value("k"), Some("v"));
        let e = read_all(&bytes[..bytes.len() - 1]).unwrap_err();
        assert_eq!(e.kind, K::Truncated);
        assert_eq!(
            e.to_string(),
            "safetensors (truncated): the tensors need 8 bytes of data but only 7 follow the header"
        );
    }
}
