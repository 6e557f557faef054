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
//! * The other dtypes of the format (`F8_*`, `F6_*`, `F4`, `C64`) are
//!   recognised and rejected with a `Dtype` error; any other name is an
//!   unknown dtype.
//!
//! # Validation (reading)
//!
//! What the Python `safetensors` package rejects is rejected here too, with
//! one deliberate difference: a tensor name given twice is an error even when
//! both entries are identical (the Python package keeps the last one).
//! Unknown fields inside a tensor entry are ignored, as there. Limits: the
//! header is at most [`MAX_HEADER_BYTES`], JSON nesting at most 128 levels,
//! element counts are checked for overflow (left-to-right product, as the
//! reference does) and against the thread's `tensor::Limits`. Every
//! allocation is bounded by the input length.
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
    let mut numels = Vec::with_capacity(entries.len());
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
        numels.push(numel);
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

    let mut tensors = Vec::with_capacity(entries.len());
    for &i in &order {
        let e = &entries[i];
        let data = decode(e.dtype, &buffer[e.offsets.0..e.offsets.1], numels[i])
            .map_err(|m| SafetensorsError::new(K::Value, format!("tensor `{}`: {m}", e.name)))?;
        let t = Tensor::from_flat(data, &e.shape).map_err(|te| {
            SafetensorsError::new(K::Limit, format!("tensor `{}`: {}", e.name, te.message))
        })?;
        tensors.push((e.name.clone(), e.dtype, t));
    }
    Ok(File { tensors, metadata })
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

/// Interprets the header JSON: tensor entries in header order, and metadata.
fn parse_header(text: &str) -> SResult<(Vec<Entry>, Metadata)> {
    let top = JsonParser::parse(text)?;
    let Json::Obj(members) = top else {
        return header_err(format!(
            "header is JSON {} but must be an object",
            top.kind()
        ));
    };
    let mut entries: Vec<Entry> = Vec::new();
    let mut metadata: Option<Metadata> = None;
    let mut names = std::collections::HashSet::new();
    for (key, value) in members {
        if key == "__metadata__" {
            if metadata.is_some() {
                return header_err("`__metadata__` is given twice");
            }
            metadata = Some(parse_metadata(value)?);
            continue;
        }
        if !names.insert(key.clone()) {
            return header_err(format!("tensor `{key}` is given twice"));
        }
        entries.push(parse_entry(key, value)?);
    }
    Ok((entries, metadata.unwrap_or_default()))
}

fn parse_metadata(value: Json) -> SResult<Metadata> {
    let members = match value {
        Json::Null => return Ok(Vec::new()),
        Json::Obj(members) => members,
        other => {
            return header_err(format!(
                "`__metadata__` is JSON {} but must be an object of strings",
                other.kind()
            ))
        }
    };
    let mut keys = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(members.len());
    for (k, v) in members {
        if !keys.insert(k.clone()) {
            return header_err(format!("metadata key `{k}` is given twice"));
        }
        match v {
            Json::Str(s) => out.push((k, s)),
            other => {
                return header_err(format!(
                    "metadata `{k}` is JSON {} but must be a string",
                    other.kind()
                ))
            }
        }
    }
    Ok(out)
}

fn parse_entry(name: String, value: Json) -> SResult<Entry> {
    let Json::Obj(fields) = value else {
        return header_err(format!(
            "tensor `{name}` is JSON {} but must be an object",
            value.kind()
        ));
    };
    let (mut dtype, mut shape, mut offsets) = (None, None, None);
    for (field, v) in fields {
        let slot_taken = match field.as_str() {
            "dtype" => dtype.replace(v).is_some(),
            "shape" => shape.replace(v).is_some(),
            "data_offsets" => offsets.replace(v).is_some(),
            _ => false, // unknown fields are ignored, as by the reference
        };
        if slot_taken {
            return header_err(format!("tensor `{name}`: field `{field}` is given twice"));
        }
    }
    let missing = |f: &str| SafetensorsError::new(K::Header, format!("tensor `{name}`: missing field `{f}`"));
    let dtype = match dtype.ok_or_else(|| missing("dtype"))? {
        Json::Str(s) => match Dtype::from_name(&s) {
            Some(d) => d,
            None if UNSUPPORTED_DTYPES.contains(&s.as_str()) => {
                return err(
                    K::Dtype,
                    format!("tensor `{name}`: dtype {s} is not supported by faber"),
                )
            }
            None => return err(K::Dtype, format!("tensor `{name}`: unknown dtype `{s}`")),
        },
        other => {
            return header_err(format!(
                "tensor `{name}`: dtype is JSON {} but must be a string",
                other.kind()
            ))
        }
    };
    let shape = usize_array(&name, "shape", shape.ok_or_else(|| missing("shape"))?)?;
    let offsets = usize_array(
        &name,
        "data_offsets",
        offsets.ok_or_else(|| missing("data_offsets"))?,
    )?;
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

fn usize_array(name: &str, field: &str, value: Json) -> SResult<Vec<usize>> {
    let Json::Arr(items) = value else {
        return header_err(format!(
            "tensor `{name}`: {field} is JSON {} but must be an array",
            value.kind()
        ));
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Json::UInt(u) => match usize::try_from(u) {
                Ok(u) => out.push(u),
                Err(_) => {
                    return err(
                        K::Limit,
                        format!("tensor `{name}`: {field} value {u} does not fit in usize"),
                    )
                }
            },
            Json::Num(text) => {
                return header_err(format!(
                    "tensor `{name}`: {field} holds `{text}`, not a non-negative integer below 2^64"
                ))
            }
            other => {
                return header_err(format!(
                    "tensor `{name}`: {field} holds JSON {}, not a non-negative integer",
                    other.kind()
                ))
            }
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------- JSON

/// A parsed JSON value. Object members keep their order and duplicates.
enum Json {
    Null,
    Bool,
    /// A non-negative integer without fraction or exponent that fits in u64.
    UInt(u64),
    /// Any other number, as written.
    Num(String),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool => "boolean",
            Json::UInt(_) | Json::Num(_) => "number",
            Json::Str(_) => "string",
            Json::Arr(_) => "array",
            Json::Obj(_) => "object",
        }
    }
}

/// A strict RFC 8259 parser over the header text.
struct JsonParser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> JsonParser<'a> {
    fn parse(text: &'a str) -> SResult<Json> {
        let mut p = JsonParser {
            s: text.as_bytes(),
            pos: 0,
            depth: 0,
        };
        p.ws();
        let v = p.value()?;
        p.ws();
        if p.pos != p.s.len() {
            return p.fail("unexpected characters after the JSON value");
        }
        Ok(v)
    }

    fn fail<T>(&self, what: &str) -> SResult<T> {
        header_err(format!("invalid JSON in header at byte {}: {what}", self.pos))
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

    fn literal(&mut self, word: &str, v: Json) -> SResult<Json> {
        if self.s[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.fail("expected a value")
        }
    }

    fn value(&mut self) -> SResult<Json> {
        match self.peek() {
            None => self.fail("unexpected end of header"),
            Some(b'{') => self.nested(Self::object),
            Some(b'[') => self.nested(Self::array),
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Json::Bool),
            Some(b'f') => self.literal("false", Json::Bool),
            Some(b'n') => self.literal("null", Json::Null),
            Some(_) => self.fail("expected a value"),
        }
    }

    fn nested(&mut self, f: fn(&mut Self) -> SResult<Json>) -> SResult<Json> {
        if self.depth >= MAX_DEPTH {
            return self.fail("nested too deeply");
        }
        self.depth += 1;
        let v = f(self);
        self.depth -= 1;
        v
    }

    fn object(&mut self) -> SResult<Json> {
        self.pos += 1; // '{'
        let mut members = Vec::new();
        self.ws();
        if self.eat(b'}') {
            return Ok(Json::Obj(members));
        }
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return self.fail("expected a string key");
            }
            let key = self.string()?;
            self.ws();
            if !self.eat(b':') {
                return self.fail("expected `:`");
            }
            self.ws();
            let v = self.value()?;
            members.push((key, v));
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                return Ok(Json::Obj(members));
            }
            return self.fail("expected `,` or `}`");
        }
    }

    fn array(&mut self) -> SResult<Json> {
        self.pos += 1; // '['
        let mut items = Vec::new();
        self.ws();
        if self.eat(b']') {
            return Ok(Json::Arr(items));
        }
        loop {
            self.ws();
            items.push(self.value()?);
            self.ws();
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                return Ok(Json::Arr(items));
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

    fn number(&mut self) -> SResult<Json> {
        let start = self.pos;
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
        let text = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
        if integral {
            let mut v: u64 = 0;
            for &d in &self.s[int_start..int_end] {
                match v
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')))
                {
                    Some(n) => v = n,
                    None => return Ok(Json::Num(text)),
                }
            }
            return Ok(Json::UInt(v));
        }
        Ok(Json::Num(text))
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

    fn string(&mut self) -> SResult<String> {
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
            out.extend_from_slice(&self.s[run..self.pos]);
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
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                Some(_) => return self.fail("control character in a string"),
            }
        }
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
    let mut names = std::collections::HashSet::new();
    for &(name, _, _) in tensors {
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
    for (i, &(name, t, dtype)) in tensors.iter().enumerate() {
        if i > 0 || !metadata.is_empty() {
            header.push(',');
        }
        let nbytes = t.numel().checked_mul(dtype.size()).ok_or_else(|| {
            SafetensorsError::new(K::Limit, format!("tensor `{name}`: byte size overflows"))
        })?;
        let end = pos.checked_add(nbytes).ok_or_else(|| {
            SafetensorsError::new(K::Limit, "total data size overflows".to_string())
        })?;
        json_string(&mut header, name);
        let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
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
    let total = (8 + header.len()).checked_add(pos).ok_or_else(|| {
        SafetensorsError::new(K::Limit, "total file size overflows".to_string())
    })?;
    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| {
        SafetensorsError::new(K::Limit, format!("cannot allocate {total} bytes"))
    })?;
    out.extend_from_slice(&(header.len() as u64).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    for &(name, t, dtype) in tensors {
        encode(dtype, t.data(), &mut out)
            .map_err(|m| SafetensorsError::new(K::Value, format!("tensor `{name}`: {m}")))?;
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
        Dtype::F32 => data.iter().for_each(|&x| out.extend((x as f32).to_le_bytes())),
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
