//! Reading: the length prefix and header, the layout check (the tensors tile the
//! buffer exactly), and conversion of the stored elements.

use super::dtype::{decode, decode_f32, le, Dtype};
use super::header::parse_header;
use super::{err, SResult, SafetensorsError, K, MAX_HEADER_BYTES};
use crate::tensor::{checked_numel, DType, Tensor};

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

    /// The elements as a tensor of element type `to`: F32 into f32 bit for bit,
    /// everything else through [`RawTensor::to_tensor`]'s f64 and then rounded once
    /// to f32 where `to` is F32.
    pub fn to_tensor_as(&self, to: DType) -> SResult<Tensor> {
        let limit = |te: crate::tensor::TensorError| {
            SafetensorsError::new(K::Limit, format!("tensor `{}`: {}", self.name, te.message))
        };
        if self.dtype == Dtype::F32 && to == DType::F32 {
            checked_numel(&self.shape).map_err(limit)?;
            return Tensor::from_f32(decode_f32(self.data), &self.shape).map_err(limit);
        }
        self.to_tensor()?.to_dtype(to).map_err(limit)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serialize::safetensors::write;

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
