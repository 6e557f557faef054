//! The checker's reading of a file's method calls, for the translation: faber's front
//! end (imports, names, types: `ir::lower`) is run over the file as it stands, and
//! each call `x.m(…)` of the file is known to name a method the program declares or
//! a built-in, and which one ([`CallTarget`]). Where the file does not check, nothing
//! is known and the translation decides from the tokens (src/format/translate.rs).

use rustc_hash::FxHashMap;

use crate::ir::lower::calls::CallTarget;
use crate::resolve::{LoadError, Loader};
use crate::source::{FileId, SourceMap};
use crate::syntax::vocab::Locale;

/// What the front end made of one file's method calls.
#[derive(Default)]
pub struct Resolved {
    /// The text that was checked: the resolution holds for it alone.
    text: String,
    /// The method name's byte range → what it names; `None` when the file did not
    /// check.
    sites: Option<FxHashMap<(u32, u32), CallTarget>>,
}

impl Resolved {
    /// Nothing known: every call is judged from the tokens.
    pub fn none() -> Resolved {
        Resolved::default()
    }

    /// Runs the front end over `file` of `sources` and the modules it imports,
    /// loaded through `loader`; `default` is the file's reader locale when its
    /// frontmatter names none.
    pub fn check(
        sources: &SourceMap,
        file: FileId,
        default: Locale,
        loader: &mut dyn Loader,
    ) -> Resolved {
        let text = sources.text(file).to_string();
        let mut scratch = SourceMap::new();
        let name = sources.name(file).to_string();
        let id = scratch.add(name.clone(), text.clone());
        let mut loader = EntryLocale {
            inner: loader,
            entry: name,
            locale: default,
        };
        let sites = crate::resolve::load_graph(&mut scratch, id, &mut loader)
            .ok()
            .and_then(|graph| crate::ir::lower::lower_with_calls(&scratch, &graph).ok())
            .map(|(_, calls)| {
                calls
                    .iter()
                    .filter(|(span, _)| span.file == id)
                    .map(|(span, t)| ((span.lo, span.hi), t.clone()))
                    .collect()
            });
        Resolved { text, sites }
    }

    /// Whether the file checked (as `text`).
    pub fn checked(&self, text: &str) -> bool {
        self.sites.is_some() && self.text == text
    }

    /// What the method name at `lo..hi` of `text` names, when known.
    pub(super) fn site(&self, text: &str, lo: u32, hi: u32) -> Option<&CallTarget> {
        if self.text != text {
            return None;
        }
        self.sites.as_ref()?.get(&(lo, hi))
    }
}

/// A loader that reads the entry file in the locale the formatter was given.
struct EntryLocale<'a> {
    inner: &'a mut dyn Loader,
    entry: String,
    locale: Locale,
}

impl Loader for EntryLocale<'_> {
    fn entry(&mut self, name: &str) {
        self.inner.entry(name);
    }

    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        self.inner.load(spec, importer)
    }

    fn candidates(&self, missing: &str) -> Vec<String> {
        self.inner.candidates(missing)
    }

    fn default_locale(&self, name: &str) -> Locale {
        if name == self.entry {
            self.locale
        } else {
            self.inner.default_locale(name)
        }
    }
}
