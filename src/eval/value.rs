//! Runtime values. Every value is 16 bytes: scalars inline, everything else behind
//! an `Rc` with copy-on-write (`Rc::make_mut`) so that binding and passing copy
//! logically (docs/language.md § 9) while sharing storage until a mutation.
//!
//! Heap payloads use thin pointers (`Rc<String>`, `Rc<Vec<_>>`) rather than fat
//! `Rc<str>`/`Rc<[_]>`: a fat pointer plus the enum tag would make `Value` 24 bytes.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};
use std::rc::Rc;

use indexmap::IndexMap;
use rustc_hash::FxBuildHasher;

pub use super::numbers::{int_float_cmp, int_float_eq};

/// `v ↦ ty` as src/eval/convert.rs defines it, handed to the conversions of the data
/// types and the matrix pairs (data.rs, set.rs, convert_pairs.rs) so that they convert
/// parts of a value without importing convert.rs, which calls them.
pub(crate) type Convert = fn(&Value, &crate::ir::Ty, &crate::ir::Program) -> super::FResult<Value>;
use crate::ir::{FuncId, GenusId};
use crate::tensor::Tensor;

/// An insertion-ordered map (`tabula`).
pub type Map = IndexMap<Key, Value, FxBuildHasher>;

#[derive(Clone, Debug, Default)]
pub enum Value {
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(Rc<String>),
    Bytes(Rc<Vec<u8>>),
    List(Rc<Vec<Value>>),
    Map(Rc<Map>),
    Tuple(Rc<Vec<Value>>),
    Record(Rc<Record>),
    Func(Rc<Closure>),
    /// A dense f64 tensor (its own storage is shared copy-on-write too).
    Tensor(Rc<Tensor>),
    /// `json` / `valor` (src/eval/json/).
    Json(Rc<super::json::Json>),
    /// `copia<T>`: an insertion-ordered set (src/eval/set.rs).
    Set(Rc<Set>),
    /// `intervallum<numerus>` (src/eval/interval.rs).
    Interval(Rc<super::range::Interval>),
    Nihil,
    #[default]
    Vacuum,
}

/// An insertion-ordered set (`copia`).
pub type Set = indexmap::IndexSet<Key, FxBuildHasher>;

/// A `genus` value: one value per declared field, in declaration order.
#[derive(Clone, Debug)]
pub struct Record {
    pub genus: GenusId,
    pub fields: Vec<Value>,
}

/// A function value: the callee receives `captures` as its first parameters.
#[derive(Clone, Debug)]
pub struct Closure {
    pub func: FuncId,
    pub captures: Vec<Value>,
}

/// A map key: `numerus`, `textus` or `bivalens`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    Int(i64),
    Text(Rc<String>),
    Bool(bool),
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match self {
            Key::Int(i) => {
                state.write_u8(0);
                state.write_i64(*i);
            }
            Key::Text(t) => {
                state.write_u8(1);
                t.as_str().hash(state);
            }
            Key::Bool(b) => {
                state.write_u8(2);
                state.write_u8(*b as u8);
            }
        }
    }
}

impl Key {
    /// The key of a value, or `None` when the value cannot be a map key.
    pub fn from_value(v: &Value) -> Option<Key> {
        match v {
            Value::Int(i) => Some(Key::Int(*i)),
            Value::Text(t) => Some(Key::Text(t.clone())),
            Value::Bool(b) => Some(Key::Bool(*b)),
            _ => None,
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Key::Int(i) => Value::Int(*i),
            Key::Text(t) => Value::Text(t.clone()),
            Key::Bool(b) => Value::Bool(*b),
        }
    }
}

impl Value {
    pub fn text(s: impl Into<String>) -> Value {
        Value::Text(Rc::new(s.into()))
    }

    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    pub fn tensor(t: Tensor) -> Value {
        Value::Tensor(Rc::new(t))
    }

    /// The core type name used in messages (`numerus`, `textus`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "numerus",
            Value::Float(_) => "fractus",
            Value::Bool(_) => "bivalens",
            Value::Text(_) => "textus",
            Value::Bytes(_) => "octeti",
            Value::List(_) => "lista",
            Value::Map(_) => "tabula",
            Value::Tuple(_) => "iuncta",
            Value::Record(_) => "genus",
            Value::Func(_) => "functio",
            Value::Tensor(_) => "tensor",
            Value::Json(_) => "valor",
            Value::Set(_) => "copia",
            Value::Interval(_) => "intervallum",
            Value::Nihil => "nihil",
            Value::Vacuum => "vacuum",
        }
    }

    /// Deep structural equality (`≡`): Int and Float compare by value; maps compare
    /// as key sets with equal values (order does not matter); different kinds are
    /// simply unequal.
    pub fn deep_eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Float(a), Value::Float(b)) => a == b,
            (Value::Int(a), Value::Float(b)) | (Value::Float(b), Value::Int(a)) => {
                int_float_eq(*a, *b)
            }
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Text(a), Value::Text(b)) => a == b,
            (Value::Bytes(a), Value::Bytes(b)) => a == b,
            (Value::List(a), Value::List(b)) | (Value::Tuple(a), Value::Tuple(b)) => {
                Rc::ptr_eq(a, b)
                    || (a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.deep_eq(y)))
            }
            (Value::Map(a), Value::Map(b)) => {
                Rc::ptr_eq(a, b)
                    || (a.len() == b.len()
                        && a.iter()
                            .all(|(k, v)| b.get(k).is_some_and(|w| v.deep_eq(w))))
            }
            (Value::Record(a), Value::Record(b)) => {
                Rc::ptr_eq(a, b)
                    || (a.genus == b.genus
                        && a.fields.len() == b.fields.len()
                        && a.fields.iter().zip(&b.fields).all(|(x, y)| x.deep_eq(y)))
            }
            (Value::Func(a), Value::Func(b)) => {
                a.func == b.func
                    && a.captures.len() == b.captures.len()
                    && a.captures
                        .iter()
                        .zip(&b.captures)
                        .all(|(x, y)| x.deep_eq(y))
            }
            (Value::Tensor(a), Value::Tensor(b)) => Rc::ptr_eq(a, b) || **a == **b,
            (Value::Json(a), Value::Json(b)) => a == b,
            (Value::Set(a), Value::Set(b)) => {
                Rc::ptr_eq(a, b) || (a.len() == b.len() && a.iter().all(|k| b.contains(k)))
            }
            (Value::Interval(a), Value::Interval(b)) => a == b,
            (Value::Nihil, Value::Nihil) | (Value::Vacuum, Value::Vacuum) => true,
            _ => false,
        }
    }

    /// Numeric value as f64 (Int or Float), for mixed arithmetic.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    /// Ordering (`< > ≤ ≥`): numbers (mixed Int/Float by value) and texts (code
    /// points). `None` for other kinds or when a NaN is involved.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Float(a), Value::Float(b)) => a.partial_cmp(b),
            (Value::Int(a), Value::Float(b)) => int_float_cmp(*a, *b),
            (Value::Float(a), Value::Int(b)) => int_float_cmp(*b, *a).map(Ordering::reverse),
            (Value::Text(a), Value::Text(b)) => Some(a.as_str().cmp(b.as_str())),
            _ => None,
        }
    }
}

/// RUN012 unless pushing one more item onto a vector of `len` items with room for
/// `cap` stays within the memory limit (`--max-memory-gib`). Only a full vector
/// allocates: its new block (twice the room) exists next to the old one while the
/// items move, so that block is what is asked for.
#[inline]
pub(crate) fn check_push(len: usize, cap: usize, item_bytes: usize) -> super::FResult<()> {
    if len < cap {
        return Ok(());
    }
    let bytes = cap.max(4).saturating_mul(2).saturating_mul(item_bytes);
    crate::mem::check(bytes).or_else(|m| super::fault(crate::diag::codes::RUN_LIMIT, m))
}

/// Bytes a list item takes in its vector.
pub(crate) const ITEM_BYTES: usize = std::mem::size_of::<Value>();

/// Bytes a map entry takes: the entry (hash, key, value) and its index slot.
pub(crate) const ENTRY_BYTES: usize =
    std::mem::size_of::<(u64, Key, Value)>() + std::mem::size_of::<usize>();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_is_small() {
        assert!(std::mem::size_of::<Value>() <= 16);
    }

    #[test]
    fn mixed_equality_is_exact() {
        assert!(Value::Int(3).deep_eq(&Value::Float(3.0)));
        assert!(!Value::Int(3).deep_eq(&Value::Float(3.5)));
        assert!(!Value::Int(i64::MAX).deep_eq(&Value::Float(9_223_372_036_854_775_808.0)));
        assert_eq!(
            Value::Int(3).compare(&Value::Float(3.5)),
            Some(Ordering::Less)
        );
        assert_eq!(
            Value::Float(-3.5).compare(&Value::Int(-3)),
            Some(Ordering::Less)
        );
        assert_eq!(Value::Int(1).compare(&Value::Float(f64::NAN)), None);
    }

    #[test]
    fn deep_equality_of_containers() {
        let a = Value::list(vec![Value::Int(1), Value::text("x")]);
        let b = Value::list(vec![Value::Float(1.0), Value::text("x")]);
        assert!(a.deep_eq(&b));
        assert!(!a.deep_eq(&Value::list(vec![Value::Int(1)])));
        let mut m1 = Map::default();
        m1.insert(Key::Int(1), Value::Int(2));
        m1.insert(Key::Bool(true), Value::Nihil);
        let mut m2 = Map::default();
        m2.insert(Key::Bool(true), Value::Nihil);
        m2.insert(Key::Int(1), Value::Int(2));
        assert!(Value::Map(Rc::new(m1)).deep_eq(&Value::Map(Rc::new(m2))));
    }
}
