//! What the function tracer (function.rs) holds and the small steps it takes on it:
//! the traced value of a slot ([`Bound`]), stores into records and lists, `appende`,
//! the passes of an unrolled `itera`, and the names of what does not lower.

use super::lower::LowerError;
use super::Value;
use crate::ir::{self, Rhs, Stmt};

fn unsupported<T>(what: impl Into<String>) -> Result<T, LowerError> {
    Err(LowerError::Unsupported { what: what.into() })
}

/// What a slot holds while the body is traced.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Bound {
    /// A tensor of the device program.
    Device(Value),
    /// A number (`fractus`) the device computes, as a rank-0 tensor: a number
    /// parameter, a reduction's result (`summa`, `media`), arithmetic on them.
    Number(Value),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A literal list of integers (a shape, an axis list).
    Ints(Vec<i64>),
    /// A list: numbers, some the device computes (optimizer coefficients), tensors,
    /// records (a model's layers).
    List(Vec<Bound>),
    Tuple(Vec<Bound>),
    /// A record's fields in declaration order.
    Record(Vec<Bound>),
    Nihil,
}

/// A short name of a statement kind for messages.
pub(super) fn stmt_name(s: &Stmt) -> &'static str {
    match s {
        Stmt::If { .. } | Stmt::Cond { .. } => "`si`",
        Stmt::Loop { .. } => "`dum` (a loop)",
        Stmt::ForRange { .. } | Stmt::ForEach { .. } => "`itera`",
        Stmt::MethodInPlace { .. } => "method call in place",
        Stmt::Try { .. } | Stmt::Throw { .. } => "`fac … cape` / `iace`",
        Stmt::Return(None) => "`redde` without a value",
        _ => "other than `fixum`/`varia` and `redde`",
    }
}

/// A short name of an expression kind for messages.
pub(super) fn rhs_name(r: &Rhs) -> &'static str {
    match r {
        Rhs::Method(..) => "method call",
        Rhs::Host(..) => "host function call",
        Rhs::CallValue(..) | Rhs::Closure(..) => "function value",
        Rhs::Record(..) | Rhs::Field(..) => "record",
        Rhs::Map(..) => "map",
        Rhs::Template(..) => "text template",
        Rhs::Prim(..) => "operator",
        Rhs::Convert(..) => "conversion `↦`",
        Rhs::Is(..) => "type test `est`",
        Rhs::Range { .. } => "range",
        _ => "kind",
    }
}

/// `b` with the part at `path` (a record's fields, a list's items, by position)
/// replaced by `v`.
pub(super) fn store(b: &mut Bound, path: &[usize], v: Bound) -> Result<(), LowerError> {
    let Some((&i, rest)) = path.split_first() else {
        *b = v;
        return Ok(());
    };
    match b {
        Bound::Record(parts) | Bound::List(parts) => match parts.get_mut(i) {
            Some(part) => store(part, rest, v),
            None => unsupported(format!("a store into part {i}")),
        },
        _ => unsupported("a store into other than a record or a list"),
    }
}

/// How a traced block ended.
pub(super) enum Flow {
    Next,
    Return(Bound),
}

/// The most passes of an `itera` the lowering unrolls.
pub(super) const MAX_UNROLLED: usize = 4096;

/// The values of an `itera ab a ‥ e per st` (… `e` included when `inclusive`).
pub(super) fn unrolled(a: i64, e: i64, st: i64, inclusive: bool) -> Result<Vec<i64>, LowerError> {
    if st == 0 {
        return unsupported("`itera` with step 0");
    }
    let mut out = Vec::new();
    let mut i = a;
    while (st > 0 && (i < e || (inclusive && i == e)))
        || (st < 0 && (i > e || (inclusive && i == e)))
    {
        if out.len() == MAX_UNROLLED {
            return unsupported(format!("`itera` of more than {MAX_UNROLLED} passes"));
        }
        out.push(i);
        match i.checked_add(st) {
            Some(n) => i = n,
            None => break,
        }
    }
    Ok(out)
}

/// The slot a place starts at.
pub(super) fn place_root<'s>(
    place: &ir::Place,
    slots: &'s mut [Option<Bound>],
) -> Result<&'s mut Bound, LowerError> {
    let ir::PlaceRoot::Slot(root) = place.root else {
        return unsupported("a store into a module constant");
    };
    match slots.get_mut(root.0 as usize) {
        Some(Some(b)) => Ok(b),
        _ => unsupported(format!("a store into slot %{} before it is set", root.0)),
    }
}

/// `list.appende(v)`: a list of traced values (an empty literal list starts as
/// the empty shape `[]`).
pub(super) fn append(list: &mut Bound, v: Bound) -> Result<(), LowerError> {
    match list {
        Bound::Ints(items) if items.is_empty() || matches!(v, Bound::Int(_)) => {
            if let Bound::Int(n) = v {
                items.push(n);
            } else {
                *list = Bound::List(vec![v]);
            }
            Ok(())
        }
        Bound::Ints(items) => {
            let mut parts: Vec<Bound> = items.iter().map(|&n| Bound::Int(n)).collect();
            parts.push(v);
            *list = Bound::List(parts);
            Ok(())
        }
        Bound::List(items) => {
            items.push(v);
            Ok(())
        }
        other => unsupported(format!("`appende` to {other:?}")),
    }
}
