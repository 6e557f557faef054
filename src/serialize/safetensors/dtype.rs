//! Element types and their byte codecs: decoding stored little-endian elements
//! to f64 and encoding f64 or exact integers back (the conversions the module
//! documentation describes).

use std::fmt;

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
pub(super) const UNSUPPORTED_DTYPES: [&str; 9] = [
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

pub(super) fn le<const N: usize>(c: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    a.copy_from_slice(c);
    a
}

/// Converts `bytes` (exactly `numel` elements of `dtype`) to f64.
pub(super) fn decode(dtype: Dtype, bytes: &[u8], numel: usize) -> Result<Vec<f64>, String> {
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

/// `x` if it is an integer within `[lo, hi_exclusive)` (NaN and ±inf are not).
fn integral_in(x: f64, lo: f64, hi_exclusive: f64) -> Option<f64> {
    (x.fract() == 0.0 && x >= lo && x < hi_exclusive).then_some(x)
}

/// Appends `data` converted to `dtype`, little-endian.
pub(super) fn encode(dtype: Dtype, data: &[f64], out: &mut Vec<u8>) -> Result<(), String> {
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

/// Appends f32 `data` converted to `dtype`: F32 bit for bit, any other dtype as
/// [`encode`] converts the (exactly) widened values.
pub(super) fn encode_f32(dtype: Dtype, data: &[f32], out: &mut Vec<u8>) -> Result<(), String> {
    if dtype == Dtype::F32 {
        out.reserve(data.len() * 4);
        data.iter().for_each(|x| out.extend(x.to_le_bytes()));
        return Ok(());
    }
    let wide: Vec<f64> = data.iter().map(|&x| f64::from(x)).collect();
    encode(dtype, &wide, out)
}

/// Converts `bytes` (F32 elements) to f32 bit for bit.
pub(super) fn decode_f32(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(le(c)))
        .collect()
}

/// Appends exact integers as `dtype` (an integer dtype, or `BOOL` for 0 and 1),
/// little-endian; a value out of the dtype's range, or a float dtype, is an error.
pub(super) fn encode_integers(dtype: Dtype, data: &[i64], out: &mut Vec<u8>) -> Result<(), String> {
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
}
