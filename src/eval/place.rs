//! Places (`p.f[i] ← v`, mutating methods, genus methods on a receiver): the path
//! is resolved mutably with copy-on-write at every step. Also the range-list builder.

use std::rc::Rc;

use super::machine::Machine;
use super::ops::{index_of, key_of, missing_key};
use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;
use crate::ir::{Place, PlaceRoot, PlaceStep};

/// Largest list a range literal may build.
const RANGE_LIMIT: usize = 100_000_000;

impl Machine<'_, '_> {
    pub(super) fn root_mut(&mut self, root: PlaceRoot) -> &mut Value {
        match root {
            PlaceRoot::Slot(s) => &mut self.stack[self.base + s.0 as usize],
            PlaceRoot::Global(g) => &mut self.globals[g.0 as usize],
        }
    }

    /// `place ← v`. A last index step into a tensor writes one element.
    pub(super) fn store(&mut self, place: &Place, v: Value) -> FResult<()> {
        if let Some((PlaceStep::Index(k), parent_path)) = place.path.split_last() {
            let key = self.val(k);
            let keys: Vec<Value> = parent_path
                .iter()
                .filter_map(|s| match s {
                    PlaceStep::Index(o) => Some(self.val(o)),
                    PlaceStep::Field(_) => None,
                })
                .collect();
            let parent = resolve_path(self.root_mut(place.root), parent_path, &keys, false)?;
            if let Value::Tensor(t) = parent {
                return super::tensors::store(t, &key, &v);
            }
            *index_mut(parent, &key, true)? = v;
            return Ok(());
        }
        *self.place_mut(place, true)? = v;
        Ok(())
    }

    /// The value a place designates, made unique (copy-on-write) along the path.
    /// With `insert_last`, a final map step inserts a missing key.
    pub(super) fn place_mut(&mut self, place: &Place, insert_last: bool) -> FResult<&mut Value> {
        match &place.path[..] {
            [] => Ok(self.root_mut(place.root)),
            [PlaceStep::Index(k)] => {
                let key = self.val(k);
                index_mut(self.root_mut(place.root), &key, insert_last)
            }
            path => {
                let keys: Vec<Value> = path
                    .iter()
                    .filter_map(|s| match s {
                        PlaceStep::Index(o) => Some(self.val(o)),
                        PlaceStep::Field(_) => None,
                    })
                    .collect();
                resolve_path(self.root_mut(place.root), path, &keys, insert_last)
            }
        }
    }
}

/// The list of ints of `s ‥ e per st` (`…` when `inclusive`).
pub(super) fn range_list(s: i64, e: i64, st: i64, inclusive: bool) -> FResult<Value> {
    if st == 0 {
        return fault(codes::RUN_ZERO_STEP, "range step is zero");
    }
    let mut out = Vec::new();
    let mut i = s;
    loop {
        let go = match (st > 0, inclusive) {
            (true, false) => i < e,
            (true, true) => i <= e,
            (false, false) => i > e,
            (false, true) => i >= e,
        };
        if !go {
            break;
        }
        if out.len() >= RANGE_LIMIT {
            return fault(
                codes::RUN_LIMIT,
                format!("a range longer than {RANGE_LIMIT} elements"),
            );
        }
        super::value::check_push(out.len(), out.capacity(), super::value::ITEM_BYTES)?;
        out.push(Value::Int(i));
        match i.checked_add(st) {
            Some(n) => i = n,
            None => break,
        }
    }
    Ok(Value::list(out))
}

/// One index step for writing: a list element (in range) or a map entry (inserted
/// when `insert`, else it must exist).
fn index_mut<'v>(cur: &'v mut Value, key: &Value, insert: bool) -> FResult<&'v mut Value> {
    match cur {
        Value::List(items) => {
            let i = index_of(key, items.len())?;
            Ok(&mut Rc::make_mut(items)[i])
        }
        Value::Map(m) => {
            let k = key_of(key)?;
            if insert {
                super::value::check_push(m.len(), m.capacity(), super::value::ENTRY_BYTES)?;
            }
            let m = Rc::make_mut(m);
            if insert {
                Ok(m.entry(k).or_insert(Value::Nihil))
            } else {
                match m.get_index_of(&k) {
                    Some(i) => Ok(&mut m[i]),
                    None => missing_key(&k),
                }
            }
        }
        other => fault(
            codes::RUN_TYPE,
            format!("cannot assign into an element of {}", other.type_name()),
        ),
    }
}

fn resolve_path<'v>(
    mut cur: &'v mut Value,
    path: &[PlaceStep],
    keys: &[Value],
    insert_last: bool,
) -> FResult<&'v mut Value> {
    let mut k = 0;
    for (i, step) in path.iter().enumerate() {
        cur = match step {
            PlaceStep::Field(f) => {
                let fields: &mut Vec<Value> = match cur {
                    Value::Record(r) => &mut Rc::make_mut(r).fields,
                    Value::Tuple(t) => Rc::make_mut(t),
                    other => {
                        return fault(
                            codes::RUN_TYPE,
                            format!("{} has no fields", other.type_name()),
                        )
                    }
                };
                match fields.get_mut(*f as usize) {
                    Some(v) => v,
                    None => return fault(codes::RUN_INDEX, format!("field #{f} does not exist")),
                }
            }
            PlaceStep::Index(_) => {
                let key = &keys[k];
                k += 1;
                index_mut(cur, key, insert_last && i + 1 == path.len())?
            }
        };
    }
    Ok(cur)
}
