//! `intervallum<numerus>`: a range of integers as a value (docs/language.md § 7,
//! "Ranges"). `a ‥ b` holds `a ≤ i < b`, `a … b` holds `a ≤ i ≤ b`; a range whose end
//! comes before its start is empty.

use std::rc::Rc;

pub use super::range::Interval;
use super::value::Value;
use super::{arity, fault, FResult, Fault};
use crate::diag::codes;
use crate::ir::Method;

impl Interval {
    /// Whether the number `x` lies in the range (a `fractus` by its value).
    fn contains(&self, x: &Value) -> Option<bool> {
        let (lo, hi) = (self.start, self.end);
        match x {
            Value::Int(i) => Some(lo <= *i && if self.inclusive { *i <= hi } else { *i < hi }),
            Value::Float(f) => {
                let (lo, hi) = (lo as f64, hi as f64);
                Some(lo <= *f && if self.inclusive { *f <= hi } else { *f < hi })
            }
            _ => None,
        }
    }

    /// The elements, in order (RUN012 beyond the list limit).
    pub(crate) fn items(&self) -> FResult<Vec<Value>> {
        let n = self.len();
        let max = super::config::list_limit();
        if n > max as u64 {
            return fault(
                codes::RUN_LIMIT,
                format!("an intervallum of {n} numbers made into a lista longer than {max} items"),
            );
        }
        crate::mem::check((n as usize).saturating_mul(super::value::ITEM_BYTES))
            .or_else(|m| fault(codes::RUN_LIMIT, m))?;
        Ok((0..n as i64).map(|k| Value::Int(self.start + k)).collect())
    }
}

fn int_of(what: &str, v: &Value) -> FResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => fault(
            codes::RUN_TYPE,
            format!("{what} must be a numerus, found {}", other.type_name()),
        ),
    }
}

/// `a ‥ b` / `a … b` made into a value (`Method::Interval`).
pub(crate) fn make(start: &Value, end: &Value, inclusive: bool) -> FResult<Value> {
    Ok(Value::Interval(Rc::new(Interval {
        start: int_of("an intervallum start", start)?,
        end: int_of("an intervallum end", end)?,
        inclusive,
    })))
}

/// `x ↦ range` (`Method::Clamp`): a number moved to the nearest integer of the range
/// (a thrown conversion failure when it holds none); a range with each end moved into
/// the range, written like `x` (empty when they do not meet). Other values have no
/// such conversion (thrown, like any failed `↦`).
pub(crate) fn clamp(range: &Value, x: &Value) -> FResult<Value> {
    let Value::Interval(r) = range else {
        return fault(codes::RUN_TYPE, "a clamp needs a range");
    };
    let (b0, b1) = r.half_open();
    let shown = format!(
        "{}{}{}",
        r.start,
        if r.inclusive { "…" } else { "‥" },
        r.end
    );
    let throw = |msg: String| Err(Fault::Throw(Value::text(msg)));
    match x {
        Value::Int(i) => {
            if b0 >= b1 {
                return throw(format!("cannot convert {i} to {shown}: the range is empty"));
            }
            let c = (*i as i128).clamp(b0, b1 - 1);
            Ok(Value::Int(c as i64))
        }
        Value::Interval(a) => {
            let (a0, a1) = a.half_open();
            let lo = a0.clamp(b0, b1.max(b0));
            let hi = a1.clamp(lo, b1.max(lo));
            Ok(Value::Interval(Rc::new(Interval::from_half_open(
                lo,
                hi,
                a.inclusive,
            ))))
        }
        other => throw(format!(
            "there is no conversion from {} to intervallum",
            other.type_name()
        )),
    }
}

fn other_range(m: Method, v: &Value) -> FResult<Interval> {
    match v {
        Value::Interval(r) => Ok(**r),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs an intervallum argument, found {}",
                m.name(),
                other.type_name()
            ),
        ),
    }
}

/// A method on a range.
pub(crate) fn call(m: Method, r: &Interval, args: &[Value]) -> FResult<Value> {
    match m {
        Method::Longitudo => {
            arity(m, args, 0)?;
            Ok(Value::Int(i64::try_from(r.len()).unwrap_or(i64::MAX)))
        }
        Method::Vacua | Method::Nonvacua => {
            arity(m, args, 0)?;
            Ok(Value::Bool(r.is_empty() == (m == Method::Vacua)))
        }
        Method::Continet => {
            arity(m, args, 1)?;
            match r.contains(&args[0]) {
                Some(b) => Ok(Value::Bool(b)),
                None => fault(
                    codes::RUN_TYPE,
                    format!(
                        "`continet` of an intervallum needs a number, found {}",
                        args[0].type_name()
                    ),
                ),
            }
        }
        Method::Inter | Method::Unio => {
            arity(m, args, 1)?;
            let o = other_range(m, &args[0])?;
            let (a0, a1) = r.half_open();
            let (b0, b1) = o.half_open();
            let out = if m == Method::Inter {
                let (lo, hi) = (a0.max(b0), a1.min(b1));
                (lo < hi).then_some((lo, hi))
            } else if a0 >= a1 {
                (b0 < b1).then_some((b0, b1))
            } else if b0 >= b1 {
                Some((a0, a1))
            } else {
                // Overlapping or touching ranges join; a gap between them is `nihil`.
                (a0.max(b0) <= a1.min(b1)).then_some((a0.min(b0), a1.max(b1)))
            };
            Ok(out.map_or(Value::Nihil, |(lo, hi)| {
                Value::Interval(Rc::new(Interval::from_half_open(lo, hi, r.inclusive)))
            }))
        }
        _ => fault(
            codes::RUN_TYPE,
            format!("intervallum has no method `{}`", m.name()),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(start: i64, end: i64, inclusive: bool) -> Interval {
        Interval {
            start,
            end,
            inclusive,
        }
    }

    fn show(v: FResult<Value>) -> String {
        match v {
            Ok(Value::Interval(x)) => x.to_string(),
            Ok(Value::Nihil) => "nihil".into(),
            Ok(Value::Int(i)) => i.to_string(),
            Ok(Value::Bool(b)) => b.to_string(),
            _ => "?".into(),
        }
    }

    fn iv(x: Interval) -> Value {
        Value::Interval(Rc::new(x))
    }

    #[test]
    fn algebra() {
        // [0, 6) ∩ [4, 10) = [4, 6); [0, 5) ∪ [5, 10) = [0, 10); [0, 3) and [6, 9) do not join.
        assert_eq!(
            show(call(Method::Inter, &r(0, 6, false), &[iv(r(4, 10, false))])),
            "4‥6"
        );
        assert_eq!(
            show(call(Method::Unio, &r(0, 5, false), &[iv(r(5, 10, false))])),
            "0‥10"
        );
        assert_eq!(
            show(call(Method::Unio, &r(0, 3, false), &[iv(r(6, 9, false))])),
            "nihil"
        );
        assert_eq!(
            show(call(Method::Inter, &r(0, 3, false), &[iv(r(3, 9, false))])),
            "nihil"
        );
        // [0, 5] ∩ [3, 9) = {3, 4, 5}, written inclusively like the receiver.
        assert_eq!(
            show(call(Method::Inter, &r(0, 5, true), &[iv(r(3, 9, false))])),
            "3…5"
        );
        assert_eq!(r(0, 3, true).len(), 4);
        assert_eq!(r(0, 6, false), r(0, 5, true));
        assert_eq!(r(5, 5, false), r(9, 2, true));
        assert_ne!(r(0, 6, false), r(0, 6, true));
        assert_eq!(r(5, 0, false).len(), 0);
        assert_eq!(r(i64::MIN, i64::MAX, true).len(), u64::MAX);
        assert_eq!(
            show(call(Method::Continet, &r(0, 10, false), &[Value::Int(10)])),
            "false"
        );
        assert_eq!(
            show(call(Method::Continet, &r(0, 10, true), &[Value::Int(10)])),
            "true"
        );
        assert_eq!(
            show(call(
                Method::Unio,
                &r(0, i64::MAX, true),
                &[iv(r(-5, 0, false))]
            )),
            format!("-5…{}", i64::MAX)
        );
    }
}
