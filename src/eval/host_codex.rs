//! The host functions behind `norma:codex` (docs/norma.md § codex): bytes to and from
//! hexadecimal and base64 text (RFC 4648), and text to and from percent-encoding
//! (RFC 3986). The decoders give `nihil` for input that is not in their form; the
//! library turns that into a thrown text or passes it on.

use std::rc::Rc;

use super::host_device::{bytes, text};
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::host::Host;

const HEX: &[u8; 16] = b"0123456789abcdef";
const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Runs codex host function `h` (one of the `codex_*` functions).
pub(super) fn call(h: Host, args: &[Value]) -> FResult<Value> {
    match h {
        Host::CodexHex => encoded(hex(bytes(h, &args[0])?)),
        Host::CodexDeHex => Ok(decoded_bytes(de_hex(text(h, &args[0])?))),
        Host::CodexBase64 => encoded(base64(bytes(h, &args[0])?)),
        Host::CodexDeBase64 => Ok(decoded_bytes(de_base64(text(h, &args[0])?))),
        Host::CodexUrl => {
            let component = match &args[1] {
                Value::Bool(b) => *b,
                other => {
                    return fault(
                        codes::RUN_TYPE,
                        format!(
                            "`hospes.codex_url` needs a bivalens, not a {}",
                            other.type_name()
                        ),
                    )
                }
            };
            encoded(percent(text(h, &args[0])?, component))
        }
        Host::CodexDeUrl => Ok(de_percent(text(h, &args[0])?).map_or(Value::Nihil, Value::text)),
        _ => fault(
            codes::RUN_HOST,
            format!("`hospes.{}` is not a codex function", h.name()),
        ),
    }
}

/// An encoder's text, within the run's text limit (RUN012 beyond it).
fn encoded(s: String) -> FResult<Value> {
    super::display::within_text_limit(&s)?;
    Ok(Value::text(s))
}

fn decoded_bytes(b: Option<Vec<u8>>) -> Value {
    b.map_or(Value::Nihil, |b| Value::Bytes(Rc::new(b)))
}

/// Two lowercase hexadecimal digits per byte.
pub(crate) fn hex(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 2);
    for &b in data {
        out.push(HEX[usize::from(b >> 4)] as char);
        out.push(HEX[usize::from(b & 15)] as char);
    }
    out
}

fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The bytes of an even number of hexadecimal digits (either case); `None` otherwise.
pub(crate) fn de_hex(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(2) {
        return None;
    }
    b.chunks(2)
        .map(|p| Some(hex_digit(p[0])? << 4 | hex_digit(p[1])?))
        .collect()
}

/// RFC 4648 § 4 base64: the standard alphabet, `=` padding to a multiple of 4.
pub(crate) fn base64(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(BASE64[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base64_digit(c: u8) -> Option<u32> {
    match c {
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'a'..=b'z' => Some(u32::from(c - b'a') + 26),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// The bytes of canonical base64 text: groups of 4 alphabet characters, the last group
/// possibly ending in one or two `=`, and the bits a padded group leaves over zero
/// (RFC 4648 § 3.5). No line breaks or other characters. `None` otherwise.
pub(crate) fn de_base64(s: &str) -> Option<Vec<u8>> {
    let b = s.as_bytes();
    if !b.len().is_multiple_of(4) {
        return None;
    }
    let groups = b.len() / 4;
    let mut out = Vec::with_capacity(groups * 3);
    for (g, quad) in b.chunks(4).enumerate() {
        let pad = quad.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && g + 1 != groups) {
            return None;
        }
        let mut n = 0u32;
        for (i, &c) in quad[..4 - pad].iter().enumerate() {
            n |= base64_digit(c)? << (18 - 6 * i);
        }
        let kept = 3 - pad;
        // The bits below the kept bytes must be zero (the canonical encoding).
        if n & ((1u32 << (8 * (3 - kept))) - 1) != 0 {
            return None;
        }
        out.extend((0..kept).map(|i| (n >> (16 - 8 * i) & 255) as u8));
    }
    Some(out)
}

/// RFC 3986 § 2.3 unreserved characters.
fn unreserved(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 § 2.2 reserved characters (gen-delims and sub-delims).
fn reserved(c: u8) -> bool {
    matches!(
        c,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'$'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'*'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// Percent-encoding of the text's UTF-8 bytes with uppercase digits (RFC 3986 § 2.1):
/// unreserved characters stay; reserved ones stay too unless `component`.
pub(crate) fn percent(s: &str, component: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s.as_bytes() {
        if unreserved(c) || (!component && reserved(c)) {
            out.push(c as char);
        } else {
            out.push('%');
            out.push(HEX_UPPER[usize::from(c >> 4)] as char);
            out.push(HEX_UPPER[usize::from(c & 15)] as char);
        }
    }
    out
}

/// Every `%` followed by two hexadecimal digits (either case) made the byte they name;
/// everything else kept. `None` for a `%` without two digits or bytes that are not UTF-8.
pub(crate) fn de_percent(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hi = hex_digit(*b.get(i + 1)?)?;
            let lo = hex_digit(*b.get(i + 2)?)?;
            out.push(hi << 4 | lo);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4648 § 10 test vectors.
    const RFC4648: &[(&str, &str, &str)] = &[
        ("", "", ""),
        ("f", "Zg==", "66"),
        ("fo", "Zm8=", "666f"),
        ("foo", "Zm9v", "666f6f"),
        ("foob", "Zm9vYg==", "666f6f62"),
        ("fooba", "Zm9vYmE=", "666f6f6261"),
        ("foobar", "Zm9vYmFy", "666f6f626172"),
    ];

    #[test]
    fn rfc4648_vectors() {
        for (plain, b64, b16) in RFC4648 {
            assert_eq!(base64(plain.as_bytes()), *b64);
            assert_eq!(de_base64(b64).as_deref(), Some(plain.as_bytes()));
            assert_eq!(hex(plain.as_bytes()), *b16);
            assert_eq!(
                de_hex(&b16.to_uppercase()).as_deref(),
                Some(plain.as_bytes())
            );
        }
    }

    #[test]
    fn malformed_input_is_none() {
        for bad in [
            "Zg=", "Zg", "Z===", "Zh==", "Zm9=", "Zg==Zg==", "Zm 9v", "Zm9v\n",
        ] {
            assert_eq!(de_base64(bad), None, "{bad:?}");
        }
        for bad in ["6", "6g", "0x66", "é1"] {
            assert_eq!(de_hex(bad), None, "{bad:?}");
        }
        for bad in ["%", "%4", "%G0", "%FF", "a%c3"] {
            assert_eq!(de_percent(bad), None, "{bad:?}");
        }
    }
}
