//! Parsers for numeric flag values (clap `value_parser`s). A value outside the
//! flag's meaningful range (NaN, ±∞, a negative size, zero threads) is a usage error:
//! clap prints `invalid value 'X' for '--flag <V>': <why>` and exits with 2, like any
//! other bad flag value (docs/cli.md § Exit codes).

/// A finite number > 0 (sizes in GiB, finite-difference steps).
pub fn positive_f64(s: &str) -> Result<f64, String> {
    let x = finite_f64(s)?;
    if x > 0.0 {
        Ok(x)
    } else {
        Err("must be greater than 0".to_string())
    }
}

/// A finite number ≥ 0 (tolerances).
pub fn non_negative_f64(s: &str) -> Result<f64, String> {
    let x = finite_f64(s)?;
    if x >= 0.0 {
        Ok(x)
    } else {
        Err("must not be negative".to_string())
    }
}

fn finite_f64(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| "not a number".to_string())?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err("must be a finite number".to_string())
    }
}

/// A whole number ≥ 1 (thread counts, step budgets, sizes, call counts).
pub fn positive_usize(s: &str) -> Result<usize, String> {
    positive(s)
}

/// [`positive_usize`] for u64 flags.
pub fn positive_u64(s: &str) -> Result<u64, String> {
    positive(s)
}

fn positive<T: std::str::FromStr + PartialOrd + From<u8>>(s: &str) -> Result<T, String> {
    let n: T = s
        .trim()
        .parse()
        .map_err(|_| "not a whole number ≥ 1".to_string())?;
    if n >= T::from(1) {
        Ok(n)
    } else {
        Err("must be at least 1".to_string())
    }
}

/// `--precision f32|f64`: the element type of the program's floating tensors.
pub fn precision(s: &str) -> Result<faber::tensor::DType, String> {
    faber::tensor::DType::from_name(s.trim()).ok_or_else(|| "must be f32 or f64".to_string())
}

/// The precision of a run: the flag, else the manifest's `[run] precision`, else f64
/// (docs/precision.md § The default).
pub fn precision_of(
    flag: Option<faber::tensor::DType>,
    manifest: Option<&super::manifest::Manifest>,
) -> faber::tensor::DType {
    flag.or(manifest.and_then(|m| m.precision))
        .unwrap_or(faber::tensor::DType::F64)
}

/// Bytes in `gib` GiB (a finite, positive number), saturating at `usize::MAX`.
pub fn gib_to_bytes(gib: f64) -> usize {
    // `as` saturates: a huge finite value is "no limit in practice".
    (gib * (1u64 << 30) as f64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_outside_the_range_are_refused() {
        for bad in ["NaN", "nan", "inf", "-inf", "infinity", "0", "-1", "", "x"] {
            assert!(positive_f64(bad).is_err(), "{bad}");
        }
        assert_eq!(positive_f64("0.5"), Ok(0.5));
        assert_eq!(non_negative_f64("0"), Ok(0.0));
        assert!(non_negative_f64("-0.1").is_err());
        assert!(non_negative_f64("NaN").is_err());
        assert!(positive_usize("0").is_err());
        assert!(positive_usize("-3").is_err());
        assert_eq!(positive_usize("3"), Ok(3));
        assert!(positive_u64("0").is_err());
    }

    #[test]
    fn precision_names() {
        use faber::tensor::DType;
        assert_eq!(precision("f32"), Ok(DType::F32));
        assert_eq!(precision("f64"), Ok(DType::F64));
        assert!(precision("f16").is_err());
        assert!(precision("F32").is_err());
        assert_eq!(precision_of(None, None), DType::F64);
        assert_eq!(precision_of(Some(DType::F32), None), DType::F32);
    }

    #[test]
    fn gib_are_binary() {
        assert_eq!(gib_to_bytes(1.0), 1 << 30);
        assert_eq!(gib_to_bytes(1.0 / 1024.0), 1 << 20);
        assert_eq!(gib_to_bytes(1e300), usize::MAX);
    }
}
