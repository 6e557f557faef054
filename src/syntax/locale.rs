//! A reader locale as a value: an index into the locale columns of the reader
//! vocabulary (src/syntax/vocab.rs, which gives it its code and the list of all
//! locales). Its own file, with no imports, so the AST can carry a file's locale
//! without depending on the table.

/// A reader locale: an index into the table's locale columns (`la` is column 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Locale(pub(super) u8);

impl Locale {
    /// The canonical (Latin) locale, the default of every file.
    pub const LA: Locale = Locale(0);
}
