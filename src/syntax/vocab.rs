//! The reader vocabulary: canonical name → spelling per reader locale, for keywords,
//! primitive types and intrinsic methods, read from the data file
//! `src/syntax/vocabulary.txt` (format in its header, rules in docs/syntax.md).
//!
//! A locale is a column of that table, never a code path: the lexer asks which
//! keyword a word is in the file's locale ([`Vocabulary::keyword`]), lowering asks
//! which type or intrinsic a spelling names ([`Vocabulary::type_name`],
//! [`Vocabulary::intrinsic`]) and how to spell a term back in the user's locale for a
//! diagnostic ([`Vocabulary::spell`]). The table is embedded in the binary and parsed
//! once, on first use.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

use super::token::Kw;

/// The table's text, embedded at build time.
const TABLE: &str = include_str!("vocabulary.txt");

pub use super::locale::Locale;

/// A locale's code and list come from the table (src/syntax/locale.rs holds the value).
impl Locale {
    /// The locale a frontmatter or manifest code names (exact, case-sensitive).
    pub fn from_code(code: &str) -> Option<Locale> {
        let v = vocabulary();
        v.codes
            .iter()
            .position(|c| *c == code)
            .map(|i| Locale(i as u8))
    }

    /// The locale a file name declares: `NAME.CODE.fab` with CODE a known locale
    /// (`salve.th-TH.fab`, `main.la.fab`), None for any other name. It stands below
    /// the file's frontmatter and above its package's `[reader] locale`.
    pub fn from_file_name(name: &str) -> Option<Locale> {
        let file = name.rsplit(['/', '\\']).next().unwrap_or(name);
        let stem = file.strip_suffix(".fab")?;
        let (base, code) = stem.rsplit_once('.')?;
        if base.is_empty() {
            return None;
        }
        Locale::from_code(code)
    }

    /// The locale's code as the frontmatter writes it (`la`, `en`, `zh-Hans`, …).
    pub fn code(self) -> &'static str {
        match super::pack_store::get(self) {
            Some(p) => p.base.code(),
            None => vocabulary().codes[self.0 as usize],
        }
    }

    /// The table's locale a package's reader pack is based on (the locale itself for a
    /// column of the table).
    pub fn base(self) -> Locale {
        super::pack_store::get(self).map_or(self, |p| p.base)
    }

    /// Every locale of the table, in column order.
    pub fn all() -> impl Iterator<Item = Locale> {
        (0..vocabulary().codes.len()).map(|i| Locale(i as u8))
    }

    /// The known codes for a diagnostic: "`la`, `en`, …".
    pub fn known_list() -> String {
        Locale::all()
            .map(|l| format!("`{}`", l.code()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The three vocabularies of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Section {
    Keyword,
    Type,
    Intrinsic,
}

/// One term: its canonical name, what faber implements for it, and its spellings.
#[derive(Debug)]
pub struct Row {
    pub section: Section,
    /// The canonical name (the `la` column).
    pub canonical: &'static str,
    /// faber's own names for the term (empty when faber does not implement it). For
    /// an intrinsic: a tensor op and/or a list, text or number method.
    pub faber: Vec<&'static str>,
    /// One spelling per locale (`None`: the pack declares none).
    pub spellings: Vec<Option<&'static str>>,
    /// Older spellings a locale still reads (after `|` in its cell: the pack's
    /// earlier revision), as (locale index, spelling); faber never writes them.
    pub older: Vec<(usize, &'static str)>,
}

impl Row {
    pub fn implemented(&self) -> bool {
        !self.faber.is_empty()
    }

    pub fn spelling(&self, locale: Locale) -> Option<&'static str> {
        if let Some(p) = super::pack_store::get(locale) {
            return p
                .spellings
                .get(&(self.section as usize, self.canonical))
                .copied()
                .or_else(|| self.spelling(p.base));
        }
        self.spellings.get(locale.0 as usize).copied().flatten()
    }
}

/// The parsed table with its per-locale indexes.
pub struct Vocabulary {
    pub codes: Vec<&'static str>,
    pub rows: Vec<Row>,
    /// Per locale: folded spelling → row index, one map per section. Where two rows
    /// share a spelling, the one faber implements wins, else the first.
    index: Vec<[FxHashMap<String, usize>; 3]>,
    /// Per locale: reserved word → keyword.
    keywords: Vec<FxHashMap<String, Kw>>,
    /// Every faber name some intrinsic row maps onto.
    covered: FxHashMap<&'static str, usize>,
}

/// The vocabulary, parsed on first use. The table is part of the binary, so a
/// malformed table is a build defect: the unit tests parse it.
pub fn vocabulary() -> &'static Vocabulary {
    static V: OnceLock<Vocabulary> = OnceLock::new();
    V.get_or_init(|| parse(TABLE).expect("src/syntax/vocabulary.txt is well formed"))
}

/// What a spelling after `.` names in a locale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intrinsic<'v> {
    /// A term of the table that faber implements: its faber names.
    Known(&'v Row),
    /// A term of the table faber does not implement.
    Unimplemented(&'v Row),
    /// Not a spelling of the locale.
    NotInTable,
}

impl PartialEq for Row {
    fn eq(&self, other: &Row) -> bool {
        std::ptr::eq(self, other)
    }
}
impl Eq for Row {}

impl Vocabulary {
    /// The keyword `word` is in `locale`, when it is one faber reserves.
    pub fn keyword(&self, locale: Locale, word: &str) -> Option<Kw> {
        if let Some(p) = super::pack_store::get(locale) {
            // The pack's spellings, then its locale's, then each fallback's.
            if let Some(k) = p.keywords.get(fold(word).as_ref()) {
                return Some(*k);
            }
            return std::iter::once(p.base)
                .chain(p.fallback.iter().copied())
                .find_map(|l| self.keyword(l, word));
        }
        let map = &self.keywords[locale.0 as usize];
        if word.is_ascii() {
            return map.get(word).copied();
        }
        map.get(fold(word).as_ref()).copied()
    }

    /// The canonical keyword of a construct outside faber's subset (`discerne`,
    /// `argumenta`, …, the list `token::OUT_WORDS`) that `word` spells in `locale`.
    pub fn out_of_subset(&self, locale: Locale, word: &str) -> Option<&'static str> {
        use super::token::OUT_WORDS;
        if locale == Locale::LA {
            return OUT_WORDS.iter().find(|w| **w == word).copied();
        }
        let row = self.lookup(Section::Keyword, locale, word)?;
        OUT_WORDS.contains(&row.canonical).then_some(row.canonical)
    }

    /// Whether `word` spells the term `canonical` of `section` in some locale (for a
    /// word read by its position, where the file's locale is not known yet).
    pub fn spells_anywhere(&self, section: Section, canonical: &str, word: &str) -> bool {
        Locale::all().any(|l| {
            self.lookup(section, l, word)
                .is_some_and(|r| r.canonical == canonical)
        })
    }

    /// The row a spelling names in one section of a locale.
    pub fn lookup(&self, section: Section, locale: Locale, word: &str) -> Option<&Row> {
        if let Some(p) = super::pack_store::get(locale) {
            if let Some(&i) = p.index[section as usize].get(fold(word).as_ref()) {
                return Some(&self.rows[i]);
            }
            return std::iter::once(p.base)
                .chain(p.fallback.iter().copied())
                .find_map(|l| self.lookup(section, l, word));
        }
        self.index[locale.0 as usize][section as usize]
            .get(fold(word).as_ref())
            .map(|&i| &self.rows[i])
    }

    /// The index of the row whose canonical name is `canonical` in one section.
    pub fn row_index(&self, section: Section, canonical: &str) -> Option<usize> {
        self.rows
            .iter()
            .position(|r| r.section == section && r.canonical == canonical)
    }

    /// The row whose canonical (Latin) name is `canonical` in one section.
    pub fn by_canonical(&self, section: Section, canonical: &str) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.section == section && r.canonical == canonical)
    }

    /// The canonical name of the primitive type spelled `word` in `locale` (whether
    /// or not faber implements it; lowering decides).
    pub fn type_name(&self, locale: Locale, word: &str) -> Option<&'static str> {
        self.lookup(Section::Type, locale, word)
            .map(|r| r.canonical)
    }

    /// What `.word(…)` names in `locale`.
    pub fn intrinsic(&self, locale: Locale, word: &str) -> Intrinsic<'_> {
        match self.lookup(Section::Intrinsic, locale, word) {
            Some(r) if r.implemented() => Intrinsic::Known(r),
            Some(r) => Intrinsic::Unimplemented(r),
            None => Intrinsic::NotInTable,
        }
    }

    /// True when some intrinsic row maps onto the faber name `name` (a faber-only
    /// operation has none and keeps its own name in every locale).
    pub fn covers(&self, name: &str) -> bool {
        self.covered.contains_key(name)
    }

    /// How `locale` spells the term whose faber name or canonical name is `name`
    /// (keywords, types, intrinsics), for diagnostics in the user's own words.
    pub fn spell(&self, section: Section, locale: Locale, name: &str) -> Option<&'static str> {
        let row = match section {
            Section::Intrinsic => self
                .covered
                .get(name)
                .map(|&i| &self.rows[i])
                .or_else(|| self.lookup(section, Locale::LA, name)),
            _ => self.lookup(section, Locale::LA, name),
        }?;
        row.spelling(locale)
    }

    /// The spellings of the implemented intrinsics in `locale` (hint candidates).
    pub fn intrinsic_spellings(&self, locale: Locale) -> impl Iterator<Item = &'static str> + '_ {
        self.rows
            .iter()
            .filter(|r| r.section == Section::Intrinsic && r.implemented())
            .filter_map(move |r| r.spelling(locale))
    }
}

/// The one compatibility fold faber applies before comparing spellings: Thai SARA AM
/// (U+0E33) as NIKHAHIT + SARA AA (U+0E4D U+0E32), its NFKC decomposition, which the
/// table and keyboards use interchangeably. No other normalisation is done.
pub fn fold(word: &str) -> std::borrow::Cow<'_, str> {
    if word.contains('\u{0E33}') {
        std::borrow::Cow::Owned(word.replace('\u{0E33}', "\u{0E4D}\u{0E32}"))
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// Parses the table text. Errors name the line.
pub fn parse(text: &'static str) -> Result<Vocabulary, String> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let (hline, header) = lines.next().ok_or("the table has no header line")?;
    let cols: Vec<&'static str> = header.split_whitespace().collect();
    if cols.len() < 4 || cols[0] != "section" || cols[1] != "la" || cols[2] != "faber" {
        return Err(format!(
            "line {hline}: the header must start `section la faber`"
        ));
    }
    let mut codes = vec!["la"];
    codes.extend(cols[3..].iter().copied());
    let n = codes.len();
    let mut rows = Vec::new();
    for (line, l) in lines {
        let cells: Vec<&'static str> = l.split_whitespace().collect();
        if cells.len() != cols.len() {
            return Err(format!(
                "line {line}: {} cells, the header has {}",
                cells.len(),
                cols.len()
            ));
        }
        let section = match cells[0] {
            "kw" => Section::Keyword,
            "ty" => Section::Type,
            "fn" => Section::Intrinsic,
            other => return Err(format!("line {line}: unknown section `{other}`")),
        };
        let canonical = cells[1];
        let faber = match cells[2] {
            "-" => Vec::new(),
            "=" => vec![canonical],
            names => names.split('|').collect(),
        };
        let mut spellings = vec![Some(canonical)];
        let mut older = Vec::new();
        for (l, &c) in cells[3..].iter().enumerate() {
            let mut alternatives = c.split('|');
            let first = alternatives.next().filter(|&w| w != "-" && !w.is_empty());
            if first.is_none() && c != "-" {
                return Err(format!("line {line}: an empty spelling in `{c}`"));
            }
            spellings.push(first);
            for w in alternatives {
                if w.is_empty() || w == "-" {
                    return Err(format!("line {line}: an empty spelling in `{c}`"));
                }
                older.push((l + 1, w));
            }
        }
        rows.push(Row {
            section,
            canonical,
            faber,
            spellings,
            older,
        });
    }
    let mut index: Vec<[FxHashMap<String, usize>; 3]> = vec![Default::default(); n];
    let mut keywords: Vec<FxHashMap<String, Kw>> = vec![FxHashMap::default(); n];
    let mut covered = FxHashMap::default();
    for (i, row) in rows.iter().enumerate() {
        if row.section == Section::Intrinsic {
            for &f in &row.faber {
                covered.entry(f).or_insert(i);
            }
        }
        let kw = match row.section {
            Section::Keyword => Kw::from_word(row.canonical),
            _ => None,
        };
        for (l, spelling) in row.spellings.iter().enumerate() {
            let Some(s) = spelling else { continue };
            let key = fold(s).into_owned();
            let map = &mut index[l][row.section as usize];
            match map.get(&key) {
                Some(&j) if rows[j].implemented() || !row.implemented() => {}
                _ => {
                    map.insert(key, i);
                }
            }
            if let Some(k) = kw {
                keywords[l].insert(fold(s).into_owned(), k);
            }
        }
    }
    // Older spellings last: one never displaces a current spelling of any row.
    for (i, row) in rows.iter().enumerate() {
        let kw = match row.section {
            Section::Keyword => Kw::from_word(row.canonical),
            _ => None,
        };
        for &(l, s) in &row.older {
            index[l][row.section as usize]
                .entry(fold(s).into_owned())
                .or_insert(i);
            if let Some(k) = kw {
                keywords[l].entry(fold(s).into_owned()).or_insert(k);
            }
        }
    }
    Ok(Vocabulary {
        codes,
        rows,
        index,
        keywords,
        covered,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_has_every_locale() {
        let v = vocabulary();
        assert_eq!(
            v.codes,
            ["la", "en", "ar", "hi", "th-TH", "vi", "zh-Hans", "zh-Hant"]
        );
        assert_eq!(Locale::from_code("en").map(Locale::code), Some("en"));
        assert_eq!(Locale::from_code("fr"), None);
    }

    #[test]
    fn every_reserved_latin_word_has_a_row_and_a_spelling_everywhere() {
        let v = vocabulary();
        // The Latin keyword map is exactly the reserved words of the subset.
        for row in v.rows.iter().filter(|r| r.section == Section::Keyword) {
            let k = Kw::from_word(row.canonical);
            // `vacua`, `lege`, `argumenta` and `scriptum` are implemented as names read
            // where they stand (an expression, `incipit argumenta x`, a call), not reserved.
            let by_place = ["vacua", "lege", "argumenta", "scriptum"];
            if row.implemented() && !by_place.contains(&row.canonical) {
                assert!(
                    k.is_some(),
                    "`{}` is marked `=` but is no keyword",
                    row.canonical
                );
            }
            if k.is_some() {
                assert!(
                    row.implemented(),
                    "`{}` is a keyword marked `-`",
                    row.canonical
                );
                // The public keyword reference gives English no spelling of the
                // conditional's `sic` of its own (its alias `then` is `ergo`'s).
                const UNSPELLED: &[(&str, &str)] = &[("sic", "en")];
                for l in Locale::all() {
                    let expected = !UNSPELLED.contains(&(row.canonical, l.code()));
                    assert_eq!(
                        row.spelling(l).is_some(),
                        expected,
                        "`{}` in {}",
                        row.canonical,
                        l.code()
                    );
                }
            }
        }
        assert_eq!(v.keyword(Locale::LA, "functio"), Some(Kw::Functio));
        assert_eq!(v.keyword(Locale::LA, "fn"), None);
        let en = Locale::from_code("en").unwrap();
        assert_eq!(v.keyword(en, "fn"), Some(Kw::Functio));
        assert_eq!(v.keyword(en, "functio"), None);
        // `per` is `pro` in English, which faber does not reserve; `step` is `per`.
        assert_eq!(v.keyword(en, "per"), None);
        assert_eq!(v.keyword(en, "step"), Some(Kw::Per));
    }

    #[test]
    fn reserved_spellings_are_unambiguous_in_each_locale() {
        let v = vocabulary();
        for l in Locale::all() {
            let mut seen: FxHashMap<String, &str> = FxHashMap::default();
            for row in v.rows.iter().filter(|r| r.implemented()) {
                let Some(s) = row.spelling(l) else { continue };
                let key = format!("{:?}:{}", row.section, fold(s));
                if let Some(prev) = seen.insert(key, row.canonical) {
                    panic!(
                        "{}: `{s}` spells both `{prev}` and `{}`",
                        l.code(),
                        row.canonical
                    );
                }
            }
            // A type name of the locale is never one of its reserved words (except
            // `nihil`, which the grammar reads as a type where it is the keyword).
            for row in v
                .rows
                .iter()
                .filter(|r| r.section == Section::Type && r.canonical != "nihil")
            {
                if let Some(s) = row.spelling(l) {
                    assert_eq!(
                        v.keyword(l, s),
                        None,
                        "{}: type `{s}` is reserved",
                        l.code()
                    );
                }
            }
        }
    }

    #[test]
    fn intrinsics_map_onto_faber_names() {
        let v = vocabulary();
        let en = Locale::from_code("en").unwrap();
        assert!(matches!(v.intrinsic(en, "added"), Intrinsic::Known(r) if r.faber == ["addita"]));
        assert!(
            matches!(v.intrinsic(en, "exp"), Intrinsic::Known(r) if r.faber == ["exp", "exponens"])
        );
        assert!(matches!(
            v.intrinsic(en, "apply"),
            Intrinsic::Unimplemented(_)
        ));
        assert_eq!(v.intrinsic(en, "tanh"), Intrinsic::NotInTable);
        assert!(v.covers("addita") && !v.covers("tanh"));
        assert_eq!(v.spell(Section::Intrinsic, en, "addita"), Some("added"));
        assert_eq!(v.spell(Section::Intrinsic, en, "exponens"), Some("exp"));
    }

    #[test]
    fn older_spellings_are_read_but_never_written() {
        let v = vocabulary();
        let vi = Locale::from_code("vi").unwrap();
        let hant = Locale::from_code("zh-Hant").unwrap();
        // The current spelling and the pack's earlier one both read as `incipit`.
        assert_eq!(v.keyword(vi, "bắt_đầu"), Some(Kw::Incipit));
        assert_eq!(v.keyword(vi, "bắtđầu"), Some(Kw::Incipit));
        assert_eq!(v.keyword(hant, "常數"), Some(Kw::Fixum));
        assert_eq!(v.keyword(hant, "定值"), Some(Kw::Fixum));
        assert_eq!(v.type_name(vi, "vănbản"), Some("textus"));
        // faber writes (and quotes) the current one.
        assert_eq!(v.spell(Section::Keyword, vi, "incipit"), Some("bắt_đầu"));
        assert_eq!(v.spell(Section::Keyword, hant, "fixum"), Some("定值"));
        // Only in its own locale: `in` is no keyword in English or Latin.
        assert_eq!(v.keyword(Locale::LA, "in"), None);
        assert_eq!(v.keyword(Locale::from_code("en").unwrap(), "in"), None);
        let t = "section la faber en\nkw si = if|\n";
        assert!(parse(t).is_err());
    }

    #[test]
    fn thai_sara_am_folds() {
        let v = vocabulary();
        let th = Locale::from_code("th-TH").unwrap();
        // `ทำ` (fac) written with U+0E33 and with U+0E4D U+0E32.
        assert_eq!(v.keyword(th, "\u{0E17}\u{0E33}"), Some(Kw::Fac));
        assert_eq!(v.keyword(th, "\u{0E17}\u{0E4D}\u{0E32}"), Some(Kw::Fac));
    }

    #[test]
    fn malformed_tables_are_errors() {
        assert!(parse("").is_err());
        assert!(parse("section la faber en\nkw si = if extra\n").is_err());
        assert!(parse("section la faber en\nxx si = if\n").is_err());
    }
}
