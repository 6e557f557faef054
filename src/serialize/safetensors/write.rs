//! Writing: the header JSON by hand, in a fixed key order and padded to a
//! multiple of 8 bytes, then the tensors' elements in the order given.

use super::dtype::{encode, encode_f32, encode_integers, Dtype};
use super::json::json_string;
use super::{err, header_err, SResult, SafetensorsError, K, MAX_HEADER_BYTES};
use crate::tensor::{checked_numel, Tensor};

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
            data: Data::of(t),
        })
        .collect();
    write_items(&items, metadata)
}

/// The elements of an [`Item`]: f64 or f32 values (converted to the item's dtype as
/// [`write`] converts them; f32 values stored as F32 are copied bit for bit), or exact
/// integers for an integer or `BOOL` dtype.
#[derive(Clone, Copy, Debug)]
pub enum Data<'a> {
    Floats(&'a [f64]),
    Floats32(&'a [f32]),
    Integers(&'a [i64]),
}

impl<'a> Data<'a> {
    fn len(&self) -> usize {
        match self {
            Data::Floats(x) => x.len(),
            Data::Floats32(x) => x.len(),
            Data::Integers(x) => x.len(),
        }
    }

    /// A tensor's elements as it stores them (f64 or f32).
    pub fn of(t: &'a Tensor) -> Data<'a> {
        match t.data_f32() {
            Some(x) => Data::Floats32(x),
            None => Data::Floats(t.data()),
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
            Data::Floats32(x) => encode_f32(item.dtype, x, &mut out),
            Data::Integers(x) => encode_integers(item.dtype, x, &mut out),
        }
        .map_err(|m| SafetensorsError::new(K::Value, format!("tensor `{}`: {m}", item.name)))?;
    }
    Ok(out)
}
