//! The header schema: tensor entries (`dtype`, `shape`, `data_offsets`) and the
//! optional `__metadata__`, parsed straight from the JSON text into the result.

use super::dtype::{Dtype, UNSUPPORTED_DTYPES};
use super::json::JsonParser;
use super::{err, header_err, SResult, SafetensorsError, K};

pub(super) struct Entry {
    pub(super) name: String,
    pub(super) dtype: Dtype,
    pub(super) shape: Vec<usize>,
    pub(super) offsets: (usize, usize),
}

pub(super) type Metadata = Vec<(String, String)>;

/// Parses the header JSON straight into tensor entries (header order) and
/// metadata. Nothing but the result is allocated: values of unknown fields
/// are checked and skipped, and a value of the wrong JSON type is an error
/// as soon as it has been checked.
pub(super) fn parse_header(text: &str) -> SResult<(Vec<Entry>, Metadata)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
