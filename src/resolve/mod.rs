//! Modules and imports: loads the entry file and everything it imports (each module
//! once, dependencies first), reports missing files, cycles and paths that escape
//! their library root. File access goes through the [`Loader`] trait, implemented by
//! the CLI (filesystem + embedded libraries) and by tests (in memory).

use rustc_hash::FxHashMap;

use crate::diag::{codes, Diagnostic};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::{ItemKind, Module};
use crate::syntax::parse_in;
use crate::syntax::vocab::Locale;

mod hints;
pub mod kernel;

/// Why an import string could not be resolved.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadError {
    /// No file for this import (the message names where it looked).
    NotFound(String),
    /// The path leaves its library root (`gradus:../x`).
    Escapes,
    /// The file lies outside the root its imports must stay in (a relative import
    /// that climbs out of the package, or a symlink out of it); names that root.
    LeavesRoot(String),
    /// The file exists but cannot be read as a module (a FIFO, a device, a symlink
    /// loop, too large, no permission): where and why, as "from `PATH`: REASON".
    Unreadable(String),
    /// An import form outside the subset (bare names).
    Unsupported(String),
}

/// Resolves an import string, relative to the importing module's canonical name,
/// to a canonical module name and its text.
pub trait Loader {
    /// Called once with the entry module's name before any import is loaded (the
    /// filesystem loader finds the package root from it). Nothing by default.
    fn entry(&mut self, _name: &str) {}

    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError>;

    /// Canonical names of modules that exist near the missing module `missing`
    /// (its folder, its library, the same path in other libraries), for the "did
    /// you mean" hint of an import that was not found. None by default.
    fn candidates(&self, _missing: &str) -> Vec<String> {
        Vec::new()
    }

    /// The reader locale of module `name` when its frontmatter names none: the
    /// package's `[reader] locale` for the package's own files. Latin by default.
    fn default_locale(&self, _name: &str) -> Locale {
        Locale::LA
    }

    /// The package's entry module (name, text) when it is not the file being compiled:
    /// a command module compiled on its own reads its package entry's `ubique`
    /// options from it (docs/language.md § "Commands"). None by default.
    fn package_entry(&mut self) -> Option<(String, String)> {
        None
    }
}

/// One loaded module.
pub struct LoadedModule {
    pub name: String,
    pub file: FileId,
    pub ast: Module,
    /// For each item index holding an import: the imported module's index.
    pub imports: FxHashMap<usize, usize>,
}

/// Every module of a program in dependency order (each after all it imports);
/// the entry module is last.
pub struct ModuleGraph {
    pub modules: Vec<LoadedModule>,
    /// The annotations on the `incipit` of the package's entry when the graph's entry is
    /// another file of the package ([`Loader::package_entry`]); None otherwise.
    pub host_entry: Option<Vec<crate::syntax::ast::Annotation>>,
}

struct Walk<'a> {
    sources: &'a mut SourceMap,
    loader: &'a mut dyn Loader,
    by_name: FxHashMap<String, usize>,
    /// Modules whose imports are being loaded (for cycle detection), with the
    /// span of the import that led into each.
    stack: Vec<(String, Option<Span>)>,
    slots: Vec<Option<LoadedModule>>,
    order: Vec<usize>,
    diags: Vec<Diagnostic>,
}

/// Loads `entry` (already in `sources`) and its imports.
pub fn load_graph(
    sources: &mut SourceMap,
    entry: FileId,
    loader: &mut dyn Loader,
) -> Result<ModuleGraph, Vec<Diagnostic>> {
    let name = sources.name(entry).to_string();
    loader.entry(&name);
    let mut w = Walk {
        sources,
        loader,
        by_name: FxHashMap::default(),
        stack: Vec::new(),
        slots: Vec::new(),
        order: Vec::new(),
        diags: Vec::new(),
    };
    w.visit(name, entry, None);
    if !w.diags.is_empty() {
        return Err(w.diags);
    }
    // Renumber modules into dependency order.
    let mut remap = vec![0usize; w.slots.len()];
    for (new, &old) in w.order.iter().enumerate() {
        remap[old] = new;
    }
    let mut slots = w.slots;
    let mut modules = Vec::with_capacity(slots.len());
    for &old in &w.order {
        let mut m = slots[old]
            .take()
            .expect("every visited module is stored once");
        for target in m.imports.values_mut() {
            *target = remap[*target];
        }
        modules.push(m);
    }
    let host_entry = host_entry(&mut *w.sources, &mut *w.loader);
    Ok(ModuleGraph {
        modules,
        host_entry,
    })
}

impl Walk<'_> {
    fn visit(&mut self, name: String, file: FileId, via: Option<Span>) -> Option<usize> {
        let default = self.loader.default_locale(&name);
        let ast = match parse_in(self.sources, file, default) {
            Ok(ast) => ast,
            Err(ds) => {
                self.diags.extend(ds);
                return None;
            }
        };
        let index = self.slots.len();
        self.slots.push(None);
        self.by_name.insert(name.clone(), index);
        self.stack.push((name.clone(), via));
        let mut imports = FxHashMap::default();
        for (i, item) in ast.items.iter().enumerate() {
            let ItemKind::Import(imp) = &item.kind else {
                continue;
            };
            let span = imp.path.span;
            let spec = imp.path.value.as_str();
            let loaded = match kernel::kernel_import(spec) {
                None => self.loader.load(spec, &name),
                Some(Ok(kernel::Kernel::Module(norma))) => self.loader.load(&norma, &name),
                Some(Ok(kernel::Kernel::Glob)) => {
                    Ok((kernel::GLOB.to_string(), kernel::glob_text()))
                }
                Some(Err(hint)) => {
                    let d = Diagnostic::error(
                        codes::SEM_IMPORT_NOT_FOUND,
                        format!("`{spec}` is not a script-kernel module"),
                        span,
                    )
                    .with_hint(hint);
                    let d = self.with_chain(d);
                    self.diags.push(d);
                    continue;
                }
            };
            match loaded {
                Ok((canonical, text)) => {
                    if let Some(pos) = self.stack.iter().position(|(n, _)| *n == canonical) {
                        let chain: Vec<&str> = self.stack[pos..]
                            .iter()
                            .map(|(n, _)| n.as_str())
                            .chain(std::iter::once(canonical.as_str()))
                            .collect();
                        let d = Diagnostic::error(
                            codes::SEM_IMPORT_CYCLE,
                            format!("import cycle: {}", chain.join(" → ")),
                            span,
                        );
                        self.diags.push(d);
                        continue;
                    }
                    if let Some(&done) = self.by_name.get(&canonical) {
                        imports.insert(i, done);
                        continue;
                    }
                    let fid = self.sources.add(canonical.clone(), text);
                    if let Some(target) = self.visit(canonical, fid, Some(span)) {
                        imports.insert(i, target);
                    }
                }
                Err(e) => {
                    let d = match e {
                        LoadError::NotFound(looked) => {
                            let near = canonical_name(spec, &name).ok().and_then(|missing| {
                                let cands = self.loader.candidates(&missing);
                                hints::import_hint(spec, &missing, &cands)
                            });
                            let hint = match near {
                                Some(near) => format!("looked for {looked}; {near}"),
                                None => format!("looked for {looked}"),
                            };
                            Diagnostic::error(
                                codes::SEM_IMPORT_NOT_FOUND,
                                format!("cannot find module `{spec}`"),
                                span,
                            )
                            .with_hint(hint)
                        }
                        LoadError::Escapes => Diagnostic::error(
                            codes::SEM_IMPORT_ESCAPE,
                            format!("import `{spec}` leaves its library root"),
                            span,
                        ),
                        LoadError::LeavesRoot(root) => Diagnostic::error(
                            codes::SEM_IMPORT_ESCAPE,
                            format!("import `{spec}` leaves {root}"),
                            span,
                        )
                        .with_hint(
                            "relative imports stay inside the package root: the directory \
                             of the nearest faber.toml above the entry file, else the entry \
                             file's own directory",
                        ),
                        LoadError::Unreadable(why) => Diagnostic::error(
                            codes::CLI_IO,
                            format!("cannot read module `{spec}` {why}"),
                            span,
                        ),
                        LoadError::Unsupported(why) => Diagnostic::error(
                            codes::SEM_UNSUPPORTED,
                            format!("unsupported import `{spec}`: {why}"),
                            span,
                        ),
                    };
                    let d = self.with_chain(d);
                    self.diags.push(d);
                }
            }
        }
        self.stack.pop();
        self.slots[index] = Some(LoadedModule {
            name,
            file,
            ast,
            imports,
        });
        self.order.push(index);
        Some(index)
    }

    /// Adds the chain of imports that led to the current module as labels.
    fn with_chain(&self, mut d: Diagnostic) -> Diagnostic {
        for (name, via) in self.stack.iter().rev() {
            if let Some(span) = via {
                d = d.with_label(*span, format!("`{name}` imported here"));
            }
        }
        d
    }
}

/// A loader over an in-memory map from canonical names to texts; relative imports
/// (`./x`, `../x`) resolve against the importer's folder, `lib:stem` to `lib/stem`.
/// Used by tests and by embedding callers.
pub struct MemoryLoader {
    pub files: FxHashMap<String, String>,
}

impl Loader for MemoryLoader {
    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        let name = canonical_name(spec, importer)?;
        match self.files.get(&name) {
            Some(text) => Ok((name, text.clone())),
            None => Err(LoadError::NotFound(format!("`{name}`"))),
        }
    }

    fn candidates(&self, _missing: &str) -> Vec<String> {
        let mut names: Vec<String> = self.files.keys().cloned().collect();
        names.sort();
        names
    }
}

/// The canonical module name of an import: `dir/x.fab` for relative imports
/// (normalised), `lib:path` for library imports. Rejects escapes and OUT forms.
pub fn canonical_name(spec: &str, importer: &str) -> Result<String, LoadError> {
    if let Some(rest) = spec.strip_prefix("./").or_else(|| {
        if spec.starts_with("../") {
            Some(spec)
        } else {
            None
        }
    }) {
        let (lib, importer_path) = match importer.split_once(':') {
            Some((lib, p)) => (Some(lib), p),
            None => (None, importer),
        };
        let base = match importer_path.rfind('/') {
            Some(i) => &importer_path[..i],
            None => "",
        };
        let mut parts: Vec<&str> = base.split('/').filter(|p| !p.is_empty()).collect();
        let absolute = importer_path.starts_with('/');
        for part in rest.split('/') {
            match part {
                "" | "." => {}
                ".." => match parts.last() {
                    Some(&"..") | None if lib.is_some() => return Err(LoadError::Escapes),
                    // Above the start of a relative name: keep the `..` (the name
                    // stays a path relative to the same directory as the importer's).
                    Some(&"..") | None if !absolute => parts.push(".."),
                    Some(&"..") | None => {}
                    Some(_) => {
                        parts.pop();
                    }
                },
                p => parts.push(p),
            }
        }
        let mut path = parts.join("/");
        if absolute {
            path.insert(0, '/');
        }
        if !path.ends_with(".fab") {
            path.push_str(".fab");
        }
        return Ok(match lib {
            Some(lib) => format!("{lib}:{path}"),
            None => path,
        });
    }
    if let Some(rest) = spec.strip_prefix('§') {
        return template_name(spec, rest);
    }
    if let Some((lib, stem)) = spec.split_once(':') {
        if lib.is_empty() || !lib.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(LoadError::Unsupported(
                "library names are letters and digits".into(),
            ));
        }
        if lib == "faber" {
            // The module walk maps `faber:` imports onto norma (kernel.rs) before a
            // loader sees them.
            return Err(LoadError::Unsupported(
                "a script-kernel import is resolved by the module walk, not a loader".into(),
            ));
        }
        return Ok(format!("{lib}:{}.fab", module_stem(spec, stem)?));
    }
    Err(LoadError::Unsupported(
        "write `./name` for a sibling file or `lib:stem` for a library".into(),
    ))
}

/// `§name/stem` (a module of the package's template folder `name`, faber.toml's
/// `[paths.templates]`): the canonical name `§name:stem.fab`, so that the template's
/// own relative imports stay inside its folder as a library's do.
fn template_name(spec: &str, rest: &str) -> Result<String, LoadError> {
    let Some((name, stem)) = rest.split_once('/') else {
        return Err(LoadError::Unsupported(
            "a template import names a folder and a module: `§name/stem`".into(),
        ));
    };
    let named = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    if !named {
        return Err(LoadError::Unsupported(
            "template folder names are letters, digits, `_` and `-`".into(),
        ));
    }
    Ok(format!("§{name}:{}.fab", module_stem(spec, stem)?))
}

/// The module path of a library or template import without `.`/empty parts and
/// without a `.fab` suffix; `..` leaves the root (an error), nothing left is NotFound.
fn module_stem(spec: &str, stem: &str) -> Result<String, LoadError> {
    let mut parts = Vec::new();
    for part in stem.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err(LoadError::Escapes),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(LoadError::NotFound(format!(
            "an empty module path in `{spec}`"
        )));
    }
    let path = parts.join("/");
    Ok(path.strip_suffix(".fab").unwrap_or(&path).to_string())
}

/// The `incipit` annotations of the package's entry, when the loader names one that is
/// not the graph's entry and it parses.
fn host_entry(
    sources: &mut SourceMap,
    loader: &mut dyn Loader,
) -> Option<Vec<crate::syntax::ast::Annotation>> {
    let (name, text) = loader.package_entry()?;
    let default = loader.default_locale(&name);
    let file = sources.add(name, text);
    let module = parse_in(sources, file, default).ok()?;
    module.items.into_iter().find_map(|i| match i.kind {
        crate::syntax::ast::ItemKind::Entry(_) => Some(i.annotations),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_library_names() {
        assert_eq!(
            canonical_name("./util", "dir/main.fab").unwrap(),
            "dir/util.fab"
        );
        assert_eq!(canonical_name("../x", "a/b/main.fab").unwrap(), "a/x.fab");
        // A `..` above the importer's folder is kept, not dropped.
        assert_eq!(canonical_name("../x", "main.fab").unwrap(), "../x.fab");
        assert_eq!(canonical_name("../../x", "a/main.fab").unwrap(), "../x.fab");
        assert_eq!(canonical_name("../x", "/main.fab").unwrap(), "/x.fab");
        assert_eq!(
            canonical_name("gradus:nn", "main.fab").unwrap(),
            "gradus:nn.fab"
        );
        assert_eq!(
            canonical_name("./loss", "gradus:nn.fab").unwrap(),
            "gradus:loss.fab"
        );
        assert_eq!(
            canonical_name("gradus:../x", "m.fab"),
            Err(LoadError::Escapes)
        );
        assert_eq!(
            canonical_name("../../x", "gradus:nn.fab"),
            Err(LoadError::Escapes)
        );
        assert_eq!(
            canonical_name("§gnu/stdio", "src/main.fab").unwrap(),
            "§gnu:stdio.fab"
        );
        assert_eq!(
            canonical_name("./bytes", "§gnu:stdio.fab").unwrap(),
            "§gnu:bytes.fab"
        );
        assert_eq!(
            canonical_name("§gnu/../x", "m.fab"),
            Err(LoadError::Escapes)
        );
        assert!(matches!(
            canonical_name("§gnu", "m.fab"),
            Err(LoadError::Unsupported(_))
        ));
        assert!(matches!(
            canonical_name("nn", "m.fab"),
            Err(LoadError::Unsupported(_))
        ));
    }
}
