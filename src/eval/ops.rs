//! Operators (docs/language.md § 6): arithmetic, comparison, logic, bitwise, shifts,
//! indexing. Int op Int stays Int with checked arithmetic; a Float operand promotes
//! both to IEEE f64.

use std::cmp::Ordering;
use std::rc::Rc;

use super::value::{Key, Value};
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::{BinOp, UnOp};

#[cold]
#[inline(never)]
fn overflow<T>(op: BinOp, a: i64, b: i64) -> FResult<T> {
    fault(
        codes::RUN_OVERFLOW,
        format!("integer overflow in {a} {} {b}", op.glyph()),
    )
}

#[cold]
#[inline(never)]
fn div_zero<T>(op: BinOp) -> FResult<T> {
    let what = if op == BinOp::Rem {
        "remainder"
    } else {
        "division"
    };
    fault(codes::RUN_DIV_ZERO, format!("integer {what} by zero"))
}

#[cold]
#[inline(never)]
fn bad_operands<T>(op: BinOp, a: &Value, b: &Value) -> FResult<T> {
    fault(
        codes::RUN_TYPE,
        format!(
            "`{}` cannot be applied to {} and {}",
            op.glyph(),
            a.type_name(),
            b.type_name()
        ),
    )
}

/// Int op Int when it cannot fail (the hot path); `None` sends the caller to
/// [`binary`], which also reports errors.
#[inline(always)]
pub(crate) fn int_fast(op: BinOp, a: i64, b: i64) -> Option<Value> {
    Some(match op {
        BinOp::Add => Value::Int(a.checked_add(b)?),
        BinOp::Sub => Value::Int(a.checked_sub(b)?),
        BinOp::Mul => Value::Int(a.checked_mul(b)?),
        BinOp::Lt => Value::Bool(a < b),
        BinOp::Gt => Value::Bool(a > b),
        BinOp::Le => Value::Bool(a <= b),
        BinOp::Ge => Value::Bool(a >= b),
        BinOp::Eq | BinOp::NumEq => Value::Bool(a == b),
        BinOp::Ne | BinOp::NumNe => Value::Bool(a != b),
        BinOp::Div if b != 0 => Value::Int(a.checked_div(b)?),
        BinOp::Rem if b != 0 => Value::Int(a.checked_rem(b)?),
        BinOp::BitAnd => Value::Int(a & b),
        BinOp::BitOr => Value::Int(a | b),
        BinOp::BitXor => Value::Int(a ^ b),
        _ => return None,
    })
}

/// Arithmetic and comparison on two numbers of which at least one is a Float.
#[inline(always)]
pub(crate) fn float_fast(op: BinOp, a: f64, b: f64) -> Option<Value> {
    Some(match op {
        BinOp::Add => Value::Float(a + b),
        BinOp::Sub => Value::Float(a - b),
        BinOp::Mul => Value::Float(a * b),
        BinOp::Div => Value::Float(a / b),
        BinOp::Lt => Value::Bool(a < b),
        BinOp::Gt => Value::Bool(a > b),
        BinOp::Le => Value::Bool(a <= b),
        BinOp::Ge => Value::Bool(a >= b),
        _ => return None,
    })
}

/// Int op Int.
#[inline]
pub(crate) fn int_binary(op: BinOp, a: i64, b: i64) -> FResult<Value> {
    let r = match op {
        BinOp::Add => a.checked_add(b),
        BinOp::Sub => a.checked_sub(b),
        BinOp::Mul | BinOp::Dot | BinOp::Hadamard => a.checked_mul(b),
        BinOp::Div | BinOp::Rem => {
            if b == 0 {
                return div_zero(op);
            }
            if op == BinOp::Div {
                a.checked_div(b)
            } else {
                a.checked_rem(b)
            }
        }
        BinOp::Lt => return Ok(Value::Bool(a < b)),
        BinOp::Gt => return Ok(Value::Bool(a > b)),
        BinOp::Le => return Ok(Value::Bool(a <= b)),
        BinOp::Ge => return Ok(Value::Bool(a >= b)),
        BinOp::Eq | BinOp::NumEq => return Ok(Value::Bool(a == b)),
        BinOp::Ne | BinOp::NumNe => return Ok(Value::Bool(a != b)),
        BinOp::BitAnd => Some(a & b),
        BinOp::BitOr => Some(a | b),
        BinOp::BitXor => Some(a ^ b),
        BinOp::Shl | BinOp::Shr => {
            if !(0..64).contains(&b) {
                return fault(
                    codes::RUN_OVERFLOW,
                    format!("shift count {b} is outside 0‥64"),
                );
            }
            Some(if op == BinOp::Shl { a << b } else { a >> b })
        }
        BinOp::Vel => Some(a),
        BinOp::Et | BinOp::Aut => {
            return bad_operands(op, &Value::Int(a), &Value::Int(b));
        }
    };
    match r {
        Some(v) => Ok(Value::Int(v)),
        None => overflow(op, a, b),
    }
}

/// Float op Float (also used for mixed Int/Float after promotion).
#[inline]
pub(crate) fn float_binary(op: BinOp, a: f64, b: f64) -> FResult<Value> {
    Ok(match op {
        BinOp::Add => Value::Float(a + b),
        BinOp::Sub => Value::Float(a - b),
        BinOp::Mul | BinOp::Dot | BinOp::Hadamard => Value::Float(a * b),
        BinOp::Div => Value::Float(a / b),
        BinOp::Rem => Value::Float(a % b),
        BinOp::Lt => Value::Bool(a < b),
        BinOp::Gt => Value::Bool(a > b),
        BinOp::Le => Value::Bool(a <= b),
        BinOp::Ge => Value::Bool(a >= b),
        BinOp::Eq | BinOp::NumEq => Value::Bool(a == b),
        BinOp::Ne | BinOp::NumNe => Value::Bool(a != b),
        BinOp::Vel => Value::Float(a),
        _ => return bad_operands(op, &Value::Float(a), &Value::Float(b)),
    })
}

/// `·` and `⊙` with a tensor operand: matrix product, elementwise product (a number
/// on either side of `⊙` scales).
fn tensor_binary(op: BinOp, a: &Value, b: &Value) -> FResult<Value> {
    use crate::ir::ops::Op;
    match (op, a, b) {
        (BinOp::Dot, Value::Tensor(_), Value::Tensor(_)) => {
            super::tensors::apply(Op::MatMul, &[a, b])
        }
        (BinOp::Hadamard, Value::Tensor(_), _) => super::tensors::apply(Op::Multiplica, &[a, b]),
        (BinOp::Hadamard, _, Value::Tensor(_)) => super::tensors::apply(Op::Multiplica, &[b, a]),
        _ => fault(
            codes::RUN_TYPE,
            format!(
                "`{}` needs two tensors, found {} and {}",
                op.glyph(),
                a.type_name(),
                b.type_name()
            ),
        ),
    }
}

/// Any binary operator on any operands.
pub(crate) fn binary(op: BinOp, a: &Value, b: &Value) -> FResult<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => return int_binary(op, *x, *y),
        (Value::Float(x), Value::Float(y)) => return float_binary(op, *x, *y),
        (Value::Tensor(_), _) | (_, Value::Tensor(_))
            if matches!(op, BinOp::Dot | BinOp::Hadamard) =>
        {
            return tensor_binary(op, a, b)
        }
        _ => {}
    }
    match op {
        BinOp::Eq => return Ok(Value::Bool(a.deep_eq(b))),
        BinOp::Ne => return Ok(Value::Bool(!a.deep_eq(b))),
        BinOp::Vel => {
            return Ok(if matches!(a, Value::Nihil) {
                b.clone()
            } else {
                a.clone()
            })
        }
        _ => {}
    }
    match (a, b) {
        (Value::Int(x), Value::Float(y)) => match op {
            BinOp::NumEq | BinOp::NumNe | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                compare(op, a, b)
            }
            _ => float_binary(op, *x as f64, *y),
        },
        (Value::Float(x), Value::Int(y)) => match op {
            BinOp::NumEq | BinOp::NumNe | BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => {
                compare(op, a, b)
            }
            _ => float_binary(op, *x, *y as f64),
        },
        (Value::Bool(x), Value::Bool(y)) => match op {
            BinOp::BitAnd | BinOp::Et => Ok(Value::Bool(*x & *y)),
            BinOp::BitOr | BinOp::Aut => Ok(Value::Bool(*x | *y)),
            BinOp::BitXor => Ok(Value::Bool(*x ^ *y)),
            _ => bad_operands(op, a, b),
        },
        (Value::Text(x), Value::Text(y)) => match op {
            BinOp::Add => {
                if x.len() + y.len() > super::config::text_limit() {
                    return fault(
                        codes::RUN_LIMIT,
                        format!(
                            "a textus longer than {} bytes ({} + {})",
                            super::config::text_limit(),
                            x.len(),
                            y.len()
                        ),
                    );
                }
                crate::mem::check(x.len() + y.len()).or_else(|m| fault(codes::RUN_LIMIT, m))?;
                let mut s = String::with_capacity(x.len() + y.len());
                s.push_str(x);
                s.push_str(y);
                Ok(Value::Text(Rc::new(s)))
            }
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => compare(op, a, b),
            _ => bad_operands(op, a, b),
        },
        _ => {
            if matches!(op, BinOp::Dot | BinOp::Hadamard) && (is_tensorish(a) || is_tensorish(b)) {
                return fault(codes::RUN_TYPE, "tensors are not supported yet");
            }
            bad_operands(op, a, b)
        }
    }
}

fn is_tensorish(v: &Value) -> bool {
    matches!(v, Value::List(_))
}

fn compare(op: BinOp, a: &Value, b: &Value) -> FResult<Value> {
    let ord = a.compare(b);
    Ok(Value::Bool(match op {
        BinOp::NumEq => ord == Some(Ordering::Equal),
        BinOp::NumNe => ord != Some(Ordering::Equal),
        BinOp::Lt => ord == Some(Ordering::Less),
        BinOp::Gt => ord == Some(Ordering::Greater),
        BinOp::Le => matches!(ord, Some(Ordering::Less | Ordering::Equal)),
        BinOp::Ge => matches!(ord, Some(Ordering::Greater | Ordering::Equal)),
        _ => return bad_operands(op, a, b),
    }))
}

pub(crate) fn unary(op: UnOp, a: &Value) -> FResult<Value> {
    match (op, a) {
        (UnOp::Neg, Value::Int(i)) => match i.checked_neg() {
            Some(n) => Ok(Value::Int(n)),
            None => fault(codes::RUN_OVERFLOW, format!("integer overflow in -({i})")),
        },
        (UnOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnOp::BitNot, Value::Int(i)) => Ok(Value::Int(!i)),
        (UnOp::BitNot | UnOp::Not, Value::Bool(b)) => Ok(Value::Bool(!b)),
        (UnOp::Narrow, Value::Float(f)) => Ok(Value::Float(*f as f32 as f64)),
        (UnOp::Narrow, v) => Ok(v.clone()),
        _ => {
            let g = match op {
                UnOp::Neg => "-",
                UnOp::BitNot => "¬",
                UnOp::Not => "non",
                UnOp::Narrow => "narrow",
            };
            fault(
                codes::RUN_TYPE,
                format!("`{g}` cannot be applied to {}", a.type_name()),
            )
        }
    }
}

/// A list/tuple/text/bytes index as usize, or RUN001.
pub(crate) fn index_of(i: &Value, len: usize) -> FResult<usize> {
    match i {
        Value::Int(n) if *n >= 0 && (*n as u64) < len as u64 => Ok(*n as usize),
        Value::Int(n) => fault(
            codes::RUN_INDEX,
            format!("index {n} is out of range for length {len}"),
        ),
        other => fault(
            codes::RUN_TYPE,
            format!("an index must be numerus, found {}", other.type_name()),
        ),
    }
}

pub(crate) fn key_of(k: &Value) -> FResult<Key> {
    match Key::from_value(k) {
        Some(k) => Ok(k),
        None => fault(
            codes::RUN_TYPE,
            format!(
                "a map key must be numerus, textus or bivalens, found {}",
                k.type_name()
            ),
        ),
    }
}

#[cold]
#[inline(never)]
pub(crate) fn missing_key<T>(k: &Key) -> FResult<T> {
    let shown = match k {
        Key::Text(t) => format!("{:?}", t.as_str()),
        Key::Int(i) => i.to_string(),
        Key::Bool(b) => if *b { "verum" } else { "falsum" }.to_string(),
    };
    fault(
        codes::RUN_MISSING_KEY,
        format!("key {shown} is not in the map"),
    )
}

/// `a[i]` read.
pub(crate) fn index(a: &Value, i: &Value) -> FResult<Value> {
    match a {
        Value::List(items) | Value::Tuple(items) => {
            if let Value::Int(n) = i {
                if let Some(v) = usize::try_from(*n).ok().and_then(|n| items.get(n)) {
                    return Ok(v.clone());
                }
            }
            Ok(items[index_of(i, items.len())?].clone())
        }
        Value::Map(m) => {
            let k = key_of(i)?;
            match m.get(&k) {
                Some(v) => Ok(v.clone()),
                None => missing_key(&k),
            }
        }
        Value::Text(t) => {
            let n = t.chars().count();
            let at = index_of(i, n)?;
            Ok(Value::text(
                t.chars().nth(at).unwrap_or_default().to_string(),
            ))
        }
        Value::Bytes(b) => Ok(Value::Int(b[index_of(i, b.len())?] as i64)),
        Value::Tensor(t) => super::tensors::element(t, i),
        other => fault(
            codes::RUN_TYPE,
            format!("{} cannot be indexed", other.type_name()),
        ),
    }
}

/// `r.f` by position.
pub(crate) fn field(a: &Value, f: u32) -> FResult<Value> {
    let fields = match a {
        Value::Record(r) => &r.fields,
        Value::Tuple(t) => &**t,
        other => {
            return fault(
                codes::RUN_TYPE,
                format!("{} has no fields", other.type_name()),
            )
        }
    };
    match fields.get(f as usize) {
        Some(v) => Ok(v.clone()),
        None => fault(codes::RUN_INDEX, format!("field #{f} does not exist")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Fault;

    fn code(r: FResult<Value>) -> &'static str {
        match r {
            Err(Fault::Error(c, _)) => c.id,
            Err(Fault::Throw(_)) => "throw",
            Err(Fault::Exit(_)) => "exit",
            Ok(_) => "ok",
        }
    }

    #[test]
    fn integer_edges() {
        assert!(matches!(int_binary(BinOp::Div, -7, 2), Ok(Value::Int(-3))));
        assert!(matches!(int_binary(BinOp::Rem, -7, 2), Ok(Value::Int(-1))));
        assert_eq!(code(int_binary(BinOp::Div, 1, 0)), "RUN003");
        assert_eq!(code(int_binary(BinOp::Rem, 1, 0)), "RUN003");
        assert_eq!(code(int_binary(BinOp::Div, i64::MIN, -1)), "RUN004");
        assert_eq!(code(int_binary(BinOp::Add, i64::MAX, 1)), "RUN004");
        assert_eq!(code(int_binary(BinOp::Shl, 1, 64)), "RUN004");
        assert_eq!(code(int_binary(BinOp::Shr, 1, -1)), "RUN004");
        assert!(matches!(int_binary(BinOp::Shr, -8, 1), Ok(Value::Int(-4))));
        assert_eq!(code(unary(UnOp::Neg, &Value::Int(i64::MIN))), "RUN004");
    }

    #[test]
    fn mixed_and_text() {
        assert!(matches!(
            binary(BinOp::Div, &Value::Int(7), &Value::Float(0.0)),
            Ok(Value::Float(f)) if f == f64::INFINITY
        ));
        assert!(matches!(
            binary(BinOp::Add, &Value::text("a"), &Value::text("b")),
            Ok(Value::Text(t)) if t.as_str() == "ab"
        ));
        assert_eq!(
            code(binary(BinOp::Add, &Value::text("a"), &Value::Int(1))),
            "RUN010"
        );
        assert!(matches!(
            binary(BinOp::Lt, &Value::text("abc"), &Value::text("abd")),
            Ok(Value::Bool(true))
        ));
        assert!(matches!(
            binary(BinOp::NumEq, &Value::Int(2), &Value::Float(2.0)),
            Ok(Value::Bool(true))
        ));
        assert_eq!(
            code(binary(BinOp::NumEq, &Value::text("a"), &Value::text("a"))),
            "RUN010"
        );
        assert!(matches!(
            binary(BinOp::BitXor, &Value::Bool(true), &Value::Bool(true)),
            Ok(Value::Bool(false))
        ));
        assert_eq!(
            code(binary(BinOp::Dot, &Value::list(vec![]), &Value::Int(1))),
            "RUN010"
        );
    }
}
