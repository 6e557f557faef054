//! `itera ab` (counted ranges) and `itera ex`/`itera de` (walking lists, maps,
//! texts and bytes).

use super::machine::{Flow, Machine, Res};
use super::value::Value;
use crate::diag::codes;
use crate::ir::{Block, EachKind, Operand, Slot};
use crate::source::Span;

impl<'p> Machine<'p, '_> {
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    pub(super) fn for_range(
        &mut self,
        var: Slot,
        start: &Operand,
        end: &Operand,
        step: &Operand,
        inclusive: bool,
        body: &'p Block,
        span: Span,
    ) -> Res<Flow> {
        let s = self.int_of(start, "a range start", span)?;
        let e = self.int_of(end, "a range end", span)?;
        let st = self.int_of(step, "a range step", span)?;
        if st == 0 {
            return Err(self.error(codes::RUN_ZERO_STEP, "range step is zero", span));
        }
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
            self.set(var, Value::Int(i));
            loop_body!(self, body, span);
            match i.checked_add(st) {
                Some(n) => i = n,
                None => break,
            }
        }
        Ok(Flow::Normal)
    }

    #[inline(never)]
    pub(super) fn for_each(
        &mut self,
        var: Slot,
        kind: EachKind,
        source: &Operand,
        body: &'p Block,
        span: Span,
    ) -> Res<Flow> {
        // A snapshot: value semantics make later changes to the source invisible.
        let src = self.val(source);
        match (&src, kind) {
            (Value::List(items) | Value::Tuple(items), EachKind::Values) => {
                for x in items.iter() {
                    self.set(var, x.clone());
                    loop_body!(self, body, span);
                }
            }
            (Value::List(items) | Value::Tuple(items), EachKind::Keys) => {
                for i in 0..items.len() {
                    self.set(var, Value::Int(i as i64));
                    loop_body!(self, body, span);
                }
            }
            (Value::Map(m), EachKind::Values) => {
                for x in m.values() {
                    self.set(var, x.clone());
                    loop_body!(self, body, span);
                }
            }
            (Value::Map(m), EachKind::Keys) => {
                for k in m.keys() {
                    self.set(var, k.to_value());
                    loop_body!(self, body, span);
                }
            }
            (Value::Text(t), EachKind::Values) => {
                for c in t.chars() {
                    self.set(var, Value::text(c.to_string()));
                    loop_body!(self, body, span);
                }
            }
            (Value::Text(t), EachKind::Keys) => {
                for i in 0..t.chars().count() {
                    self.set(var, Value::Int(i as i64));
                    loop_body!(self, body, span);
                }
            }
            (Value::Bytes(b), EachKind::Values) => {
                for x in b.iter() {
                    self.set(var, Value::Int(*x as i64));
                    loop_body!(self, body, span);
                }
            }
            (Value::Bytes(b), EachKind::Keys) => {
                for i in 0..b.len() {
                    self.set(var, Value::Int(i as i64));
                    loop_body!(self, body, span);
                }
            }
            (Value::Interval(r), EachKind::Values) => {
                let r = **r;
                for k in 0..r.len() {
                    self.set(var, Value::Int(r.start.wrapping_add(k as i64)));
                    loop_body!(self, body, span);
                }
            }
            (other, EachKind::Values) if super::data::each(other).is_some() => {
                for x in super::data::each(other).unwrap_or_default() {
                    self.set(var, x);
                    loop_body!(self, body, span);
                }
            }
            (other, _) => {
                return Err(self.error(
                    codes::RUN_TYPE,
                    format!("`itera` cannot walk a {}", other.type_name()),
                    span,
                ))
            }
        }
        Ok(Flow::Normal)
    }
}
