//! `lista.ordina()` (docs/language.md § 7, "Lists"): sorts a list in place, ascending,
//! stable. A list of numbers (`numerus` and `fractus` mixed, by value) or of texts
//! (by code points) is ordered; any other element, a NaN, or numbers mixed with texts
//! is RUN010 and leaves the list as it was.

use std::rc::Rc;

use super::value::Value;
use super::{fault, FResult};
use crate::diag::codes;

pub(crate) fn ordina(items: &mut Rc<Vec<Value>>) -> FResult<()> {
    // Every pair must be comparable: check each element against the first of its kind.
    let mut first: Option<&Value> = None;
    for x in items.iter() {
        let ok = match first {
            None => x.compare(x).is_some(),
            Some(f) => f.compare(x).is_some() && x.compare(x).is_some(),
        };
        if !ok {
            let what = match first {
                Some(f) if x.compare(x).is_some() => {
                    format!("{} and {}", f.type_name(), x.type_name())
                }
                _ => x.type_name().to_string(),
            };
            return fault(
                codes::RUN_TYPE,
                format!("`ordina` orders numbers or texts, found {what}"),
            );
        }
        first.get_or_insert(x);
    }
    if items.len() > 1 {
        Rc::make_mut(items).sort_by(|a, b| a.compare(b).unwrap_or(std::cmp::Ordering::Equal));
    }
    Ok(())
}
