//! Text slicing `s[a ‥ b per k]` (upstream Faber's bracket form; lowering makes it
//! `Method::TextSlice`). Indices count Unicode scalar values, as `s[i]` and
//! `s.sectio(a, b)` do.
//!
//! The slice takes the characters at the indices the range visits (`itera ab` order):
//! from `a` by `k` while `< b` (`‥`) or `≤ b` (`…`, `usque`); a negative `k` counts
//! down while `> b` (`≥ b`). Its bounds must lie in the text, as `sectio`'s do: with
//! `e` the exclusive end (`b`, or `b + 1` for the inclusive forms; `b − 1` when
//! counting down), counting up needs `0 ≤ a ≤ e ≤ len` and counting down
//! `-1 ≤ e ≤ a < len`, else RUN001. So `s[a‥b]` is exactly `s.sectio(a, b)`, and
//! `s[0‥s.longitudo()]` is the whole text. `k = 0` is RUN011, like a range's.

use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;

fn int(v: &Value, what: &str) -> FResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        other => fault(
            codes::RUN_TYPE,
            format!(
                "a text slice's {what} must be numerus, found {}",
                other.type_name()
            ),
        ),
    }
}

/// `recv[a ‥ b per k]` (`…` when `inclusive`).
pub(crate) fn text_slice(recv: &Value, args: &[Value], inclusive: bool) -> FResult<Value> {
    let text = match recv {
        Value::Text(t) => t,
        other => {
            let hint = match other {
                Value::List(_) | Value::Tensor(_) => ": copy a part with `sectio(a, b)`",
                _ => "",
            };
            return fault(
                codes::RUN_TYPE,
                format!("{} cannot be sliced by a range{hint}", other.type_name()),
            );
        }
    };
    let [a, b, k] = args else {
        return fault(
            codes::RUN_TYPE,
            "a text slice takes a start, an end and a step",
        );
    };
    let (a, b, k) = (int(a, "start")?, int(b, "end")?, int(k, "step")?);
    let glyph = if inclusive { "…" } else { "‥" };
    let shown = if k == 1 {
        format!("{a}{glyph}{b}")
    } else {
        format!("{a}{glyph}{b} per {k}")
    };
    if k == 0 {
        return fault(
            codes::RUN_ZERO_STEP,
            format!("the text slice {shown} has step zero"),
        );
    }
    let len = text.chars().count() as i128;
    let (a, b, k) = (a as i128, b as i128, k as i128);
    let up = k > 0;
    let end = match (up, inclusive) {
        (_, false) => b,
        (true, true) => b + 1,
        (false, true) => b - 1,
    };
    let inside = if up {
        0 <= a && a <= end && end <= len
    } else {
        -1 <= end && end <= a && a < len
    };
    if !inside {
        return fault(
            codes::RUN_INDEX,
            format!("the text slice {shown} is out of range for length {len}"),
        );
    }
    // Within the checks every index below is in 0..len.
    let out: String = if k == 1 {
        text.chars()
            .skip(a as usize)
            .take((end - a) as usize)
            .collect()
    } else {
        let chars: Vec<char> = text.chars().collect();
        let mut out = String::new();
        let mut i = a;
        while (up && i < end) || (!up && i > end) {
            out.push(chars[i as usize]);
            i += k;
        }
        out
    };
    Ok(Value::text(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice(s: &str, a: i64, b: i64, k: i64, inclusive: bool) -> Result<String, &'static str> {
        let args = [Value::Int(a), Value::Int(b), Value::Int(k)];
        match text_slice(&Value::text(s), &args, inclusive) {
            Ok(Value::Text(t)) => Ok(t.to_string()),
            Ok(_) => Err("not a text"),
            Err(super::super::Fault::Error(c, _)) => Err(c.id),
            Err(_) => Err("throw"),
        }
    }

    #[test]
    fn forms() {
        // The upstream examples (docs/EBNF.md of faberlang/faber), checked by hand.
        assert_eq!(slice("hello world", 0, 5, 1, false), Ok("hello".into()));
        assert_eq!(
            slice("hello world", 0, 10, 1, true),
            Ok("hello world".into())
        );
        assert_eq!(slice("abcdef", 0, 6, 2, false), Ok("ace".into()));
        // Characters, not bytes.
        assert_eq!(slice("añob", 1, 3, 1, false), Ok("ño".into()));
        assert_eq!(slice("añob", 1, 2, 1, true), Ok("ño".into()));
        // Counting down.
        assert_eq!(slice("abc", 2, -1, -1, false), Ok("cba".into()));
        assert_eq!(slice("abc", 2, 0, -1, true), Ok("cba".into()));
        assert_eq!(slice("abcde", 4, 0, -2, false), Ok("ec".into()));
        // Empty slices at the edges.
        assert_eq!(slice("abc", 3, 3, 1, false), Ok("".into()));
        assert_eq!(slice("abc", 1, 0, 1, true), Ok("".into()));
        assert_eq!(slice("", 0, 0, 1, false), Ok("".into()));
    }

    #[test]
    fn bounds() {
        assert_eq!(slice("abc", 0, 4, 1, false), Err("RUN001"));
        assert_eq!(slice("abc", 0, 3, 1, true), Err("RUN001"));
        assert_eq!(slice("abc", -1, 2, 1, false), Err("RUN001"));
        assert_eq!(slice("abc", 2, 1, 1, false), Err("RUN001"));
        assert_eq!(slice("abc", 3, 0, -1, false), Err("RUN001"));
        assert_eq!(slice("abc", 1, -2, -1, false), Err("RUN001"));
        assert_eq!(slice("abc", 0, 2, 0, false), Err("RUN011"));
        assert_eq!(
            slice("abc", i64::MAX, i64::MAX, 1, true),
            Err("RUN001"),
            "no overflow at the ends of i64"
        );
        assert_eq!(slice("abc", i64::MIN, i64::MIN, -1, true), Err("RUN001"));
    }
}
