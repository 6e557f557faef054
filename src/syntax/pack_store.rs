//! The registry of the packages' own reader packs (src/syntax/pack.rs reads and
//! registers them; src/syntax/vocab.rs answers for a pack's locale from here). A
//! leaf: it knows locale values and keywords, not the table.

use std::sync::{OnceLock, RwLock};

use rustc_hash::FxHashMap;

use super::locale::Locale;
use super::token::Kw;

/// A registered pack.
pub(super) struct Pack {
    pub base: Locale,
    pub fallback: Vec<Locale>,
    /// Folded spelling → row of the table, one map per section (keyword, type,
    /// intrinsic; only the pack's own spellings).
    pub index: [FxHashMap<String, usize>; 3],
    pub keywords: FxHashMap<String, Kw>,
    /// (section index, canonical) → the pack's spelling.
    pub spellings: FxHashMap<(usize, &'static str), &'static str>,
}

struct Store {
    /// The table's column count: pack locales are the values after it.
    first: usize,
    packs: Vec<&'static Pack>,
}

fn store() -> &'static RwLock<Store> {
    static S: OnceLock<RwLock<Store>> = OnceLock::new();
    S.get_or_init(|| {
        RwLock::new(Store {
            first: usize::MAX,
            packs: Vec::new(),
        })
    })
}

/// The pack a locale value stands for, when it is one.
pub(super) fn get(locale: Locale) -> Option<&'static Pack> {
    let s = store().read().ok()?;
    let i = (locale.0 as usize).checked_sub(s.first)?;
    s.packs.get(i).copied()
}

/// Adds `pack` after the table's `columns`; its locale value.
pub(super) fn add(columns: usize, pack: Pack) -> Result<Locale, String> {
    let mut s = store()
        .write()
        .map_err(|_| "the reader packs are unavailable")?;
    s.first = columns;
    let Ok(id) = u8::try_from(columns + s.packs.len()) else {
        return Err("too many reader packs".into());
    };
    s.packs.push(Box::leak(Box::new(pack)));
    Ok(Locale(id))
}
