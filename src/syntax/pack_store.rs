//! The registry of the packages' own reader packs (src/syntax/pack.rs reads and
//! registers them; src/syntax/vocab.rs answers for a pack's locale from here). A
//! leaf: it knows locale values and keywords, not the table.

use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The first locale value that is a pack (the table's column count once a pack is
/// registered): every value below it is a column, answered without the lock, so the
/// lexer's keyword look-up costs one atomic load when no pack exists.
static FIRST: AtomicUsize = AtomicUsize::new(usize::MAX);

fn packs() -> &'static RwLock<Vec<&'static Pack>> {
    static P: OnceLock<RwLock<Vec<&'static Pack>>> = OnceLock::new();
    P.get_or_init(|| RwLock::new(Vec::new()))
}

/// The pack a locale value stands for, when it is one.
pub(super) fn get(locale: Locale) -> Option<&'static Pack> {
    let i = (locale.0 as usize).checked_sub(FIRST.load(Ordering::Acquire))?;
    packs().read().ok()?.get(i).copied()
}

/// Adds `pack` after the table's `columns`; its locale value.
pub(super) fn add(columns: usize, pack: Pack) -> Result<Locale, String> {
    let mut all = packs()
        .write()
        .map_err(|_| "the reader packs are unavailable")?;
    let Ok(id) = u8::try_from(columns + all.len()) else {
        return Err("too many reader packs".into());
    };
    all.push(Box::leak(Box::new(pack)));
    FIRST.store(columns, Ordering::Release);
    Ok(Locale(id))
}
