//! A package's own reader pack (`reader/<locale>.toml` beside its `faber.toml`): the
//! spellings the package gives keywords and types in its locale, over the table's
//! (`[keywords]`, `[types]`: canonical name = spelling), and the locales whose words
//! its files may also use (`[pack] fallback = ["la"]`). A registered pack is a reader
//! locale of its own: its code is its base locale's, and the vocabulary
//! (src/syntax/vocab.rs) answers for it from the pack's spellings first, then its base
//! locale's, then each fallback locale's, in order. Registered once per process and
//! kept for its lifetime (a program reads one package's pack).

use rustc_hash::FxHashMap;

use super::pack_store::{self, Pack};
use super::token::Kw;
use super::vocab::{fold, vocabulary, Locale, Section};

/// What a pack file says, read from its TOML.
#[derive(Debug, Default)]
pub struct PackSpec {
    pub fallback: Vec<String>,
    /// (canonical, spelling), keywords then types.
    pub keywords: Vec<(String, String)>,
    pub types: Vec<(String, String)>,
}

/// Reads a pack file's text. Errors are messages for the caller's diagnostic.
pub fn parse(text: &str) -> Result<PackSpec, String> {
    let value: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| e.message().to_string())?;
    let mut spec = PackSpec::default();
    if let Some(pack) = value.get("pack") {
        if let Some(f) = pack.get("fallback") {
            let list = f
                .as_array()
                .ok_or("[pack] fallback must be a list of locale codes")?;
            for c in list {
                let code = c
                    .as_str()
                    .ok_or("[pack] fallback must be a list of locale codes")?;
                spec.fallback.push(code.to_string());
            }
        }
    }
    for (table, out) in [("keywords", &mut spec.keywords), ("types", &mut spec.types)] {
        if let Some(t) = value.get(table) {
            let t = t.as_table().ok_or(format!("[{table}] must be a table"))?;
            for (canonical, spelling) in t {
                let s = spelling
                    .as_str()
                    .ok_or(format!("[{table}] {canonical} must be a text"))?;
                out.push((canonical.clone(), s.to_string()));
            }
        }
    }
    Ok(spec)
}

/// Registers the pack of a package whose locale is `base`; its locale value.
pub fn register(base: Locale, spec: &PackSpec) -> Result<Locale, String> {
    let v = vocabulary();
    let mut fallback = Vec::new();
    for code in &spec.fallback {
        match Locale::from_code(code) {
            Some(l) => fallback.push(l),
            None => {
                return Err(format!(
                    "unknown locale `{code}` in [pack] fallback; the known locales are {}",
                    Locale::known_list()
                ))
            }
        }
    }
    let mut pack = Pack {
        base,
        fallback,
        index: Default::default(),
        keywords: FxHashMap::default(),
        spellings: FxHashMap::default(),
    };
    let entries = spec
        .keywords
        .iter()
        .map(|e| (Section::Keyword, e))
        .chain(spec.types.iter().map(|e| (Section::Type, e)));
    for (section, (canonical, spelling)) in entries {
        let Some(i) = v.row_index(section, canonical) else {
            let what = if section == Section::Keyword {
                "keyword"
            } else {
                "type"
            };
            return Err(format!(
                "`{canonical}` is no {what} of the reader vocabulary"
            ));
        };
        let spelling: &'static str = Box::leak(spelling.clone().into_boxed_str());
        let key = fold(spelling).into_owned();
        pack.index[section as usize].insert(key.clone(), i);
        pack.spellings
            .insert((section as usize, v.rows[i].canonical), spelling);
        if section == Section::Keyword && v.rows[i].implemented() {
            if let Some(k) = Kw::from_word(v.rows[i].canonical) {
                pack.keywords.insert(key, k);
            }
        }
    }
    pack_store::add(v.codes.len(), pack)
}
