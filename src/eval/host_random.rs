//! The host functions behind `norma:aleator` (docs/norma.md § aleator): `fractum` and
//! `sortire` draw from one SplitMix64 stream (src/tensor/rng.rs) per thread, seeded
//! from the operating system's random source at its first draw, or by `semina(n)` with
//! n ≥ 0 (reproducible); `semina(n < 0)` goes back to a fresh random seed. `octetos`
//! always reads the operating system's random source ([`Device::Entropy`]), never the
//! seeded stream.

use std::cell::RefCell;
use std::rc::Rc;

use super::device::{Device, Reply};
use super::host_device::{count, int, what};
use super::value::Value;
use super::{fault, FResult, Io};
use crate::diag::codes;
use crate::ir::host::Host;
use crate::tensor::SplitMix64;

thread_local! {
    /// The stream of `fractum` / `sortire`; `None` until the first draw or after
    /// `semina(n < 0)`.
    static STREAM: RefCell<Option<SplitMix64>> = const { RefCell::new(None) };
}

pub(super) fn call(h: Host, args: &[Value], io: &mut dyn Io) -> FResult<Value> {
    match h {
        Host::AleatorFractum => Ok(Value::Float(with_stream(io, |r| r.uniform())?)),
        Host::AleatorSortire => {
            let (lo, hi) = (int(h, &args[0])?, int(h, &args[1])?);
            if lo > hi {
                return fault(
                    codes::RUN_HOST,
                    format!("`aleator.sortire`: the minimum {lo} is above the maximum {hi}"),
                );
            }
            // hi − lo + 1 values, at most 2^64: counted in u128.
            let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
            let k = with_stream(io, |r| below(r, span))?;
            Ok(Value::Int((i128::from(lo) + k as i128) as i64))
        }
        Host::AleatorOctetos => {
            let n = count(h, &args[0], "the byte count")?;
            Ok(Value::Bytes(Rc::new(entropy(io, n)?)))
        }
        Host::AleatorSemina => {
            let n = int(h, &args[0])?;
            let seeded = u64::try_from(n).ok().map(SplitMix64::new);
            STREAM.with(|s| *s.borrow_mut() = seeded);
            Ok(Value::Vacuum)
        }
        _ => fault(
            codes::RUN_HOST,
            format!("`hospes.{}` is not a random function", h.name()),
        ),
    }
}

/// A draw from the stream, seeding it from the random source first when needed.
fn with_stream<T>(io: &mut dyn Io, draw: impl FnOnce(&mut SplitMix64) -> T) -> FResult<T> {
    let seeded = STREAM.with(|s| s.borrow().is_some());
    if !seeded {
        let bytes = entropy(io, 8)?;
        let seed = u64::from_le_bytes(bytes.try_into().unwrap_or([0; 8]));
        STREAM.with(|s| *s.borrow_mut() = Some(SplitMix64::new(seed)));
    }
    Ok(STREAM.with(|s| {
        let mut s = s.borrow_mut();
        let r = s.get_or_insert_with(|| SplitMix64::new(0));
        draw(r)
    }))
}

/// Uniform in `[0, span)` (1 ≤ span ≤ 2^64) without modulo bias: draws in the largest
/// multiple of `span` below 2^64 are kept.
fn below(r: &mut SplitMix64, span: u128) -> u64 {
    const WHOLE: u128 = 1 << 64;
    if span >= WHOLE {
        return r.next_u64();
    }
    let limit = WHOLE - WHOLE % span;
    loop {
        let x = u128::from(r.next_u64());
        if x < limit {
            return (x % span) as u64;
        }
    }
}

fn entropy(io: &mut dyn Io, n: u64) -> FResult<Vec<u8>> {
    let req = Device::Entropy(n);
    match io.device(&req) {
        Ok(Reply::Bytes(b)) if b.len() as u64 == n => Ok(b),
        Ok(_) => fault(
            codes::RUN_HOST,
            format!("{}: the host gave another answer", what(&req)),
        ),
        Err(e) => fault(codes::RUN_HOST, format!("{}: {e}", what(&req))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_reaches_both_ends() {
        let mut r = SplitMix64::new(7);
        let mut seen = [false; 3];
        for _ in 0..200 {
            let k = below(&mut r, 3);
            assert!(k < 3);
            seen[k as usize] = true;
        }
        assert_eq!(seen, [true; 3]);
        assert_eq!(below(&mut r, 1), 0);
    }

    #[test]
    fn the_whole_range_is_one_draw() {
        let mut a = SplitMix64::new(9);
        let mut b = SplitMix64::new(9);
        assert_eq!(below(&mut a, 1 << 64), b.next_u64());
    }
}
