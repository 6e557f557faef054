//! The module loader the CLI gives the compiler: relative imports are files on disk;
//! `lib:stem` imports come from `--lib-root DIR` or `$FABER_LIBRARY_HOME`
//! (`DIR/<lib>/src/<stem>.fab`) when given, else from the libraries bundled in the
//! binary (`norma:` = stdlib/src, `gradus:` = gradus-fab/src); `§name/stem` imports
//! come from the folder faber.toml's `[paths.templates]` names `name`.

use std::path::{Path, PathBuf};

use super::fsguard::{self, ContainError, ReadError, SOURCE_LIMIT};
use faber::resolve::{canonical_name, LoadError, Loader};
use faber::syntax::vocab::Locale;
use rustc_hash::FxHashMap;

use super::load::STDIN_NAME;

pub struct FsLoader {
    pub lib_root: Option<PathBuf>,
    /// The real directory relative imports stay inside (see [`fsguard::package_root`]);
    /// set from the entry module.
    root: Option<PathBuf>,
    /// Real path of every module loaded from disk, by module name.
    real: FxHashMap<String, PathBuf>,
    /// Module name of every real path loaded, so that two spellings of one file
    /// (`./a`, `../d/a`, a symlink) are one module.
    names: FxHashMap<PathBuf, String>,
    /// The package's `[reader] locale`: the default of its own files (library
    /// modules, `lib:…`, stay Latin unless their frontmatter says otherwise).
    pub package_locale: Locale,
    /// The package's `[paths.templates]`: template name → folder (as the manifest's
    /// directory joined with the setting).
    templates: Vec<(String, PathBuf)>,
    /// The package's entry file (`[paths] source` / `entry`), for a command module
    /// compiled on its own ([`Loader::package_entry`]).
    package_entry: Option<PathBuf>,
}

impl FsLoader {
    pub fn new(lib_root: Option<PathBuf>) -> FsLoader {
        let lib_root = lib_root.or_else(|| {
            std::env::var_os("FABER_LIBRARY_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        FsLoader {
            lib_root,
            root: None,
            real: FxHashMap::default(),
            names: FxHashMap::default(),
            package_locale: Locale::LA,
            templates: Vec::new(),
            package_entry: None,
        }
    }

    /// Takes the package settings the loader needs from its manifest (none: a lone
    /// file): the reader locale of its files and its template folders.
    pub fn use_package(&mut self, package: Option<&super::manifest::Manifest>) {
        let Some(m) = package else { return };
        self.package_locale = m.locale;
        self.package_entry = Some(m.dir.join(&m.source).join(&m.entry));
        self.templates = m
            .templates
            .iter()
            .map(|(name, dir)| (name.clone(), m.dir.join(dir)))
            .collect();
    }

    /// `rel` inside the folder `dir`, which it may not leave (a library's `src`, a
    /// template folder); `what` names the folder in messages.
    fn load_inside(
        dir: &Path,
        rel: &str,
        name: String,
        what: &str,
    ) -> Result<(String, String), LoadError> {
        let path = dir.join(rel);
        let shown = path.display().to_string();
        let Ok(dir_real) = std::fs::canonicalize(dir) else {
            return Err(LoadError::NotFound(format!("`{shown}`")));
        };
        match fsguard::contain(&dir_real, Path::new(rel)) {
            Ok(real) => read_module(&real, &shown)
                .map(|text| (name, text))
                .map_err(|e| match e {
                    LoadError::NotFound(_) => LoadError::NotFound(format!("`{shown}`")),
                    e => e,
                }),
            Err(ContainError::Escapes) => Err(LoadError::LeavesRoot(format!(
                "{what}, `{}`",
                dir_real.display()
            ))),
            Err(ContainError::Unresolved(ReadError::NotFound)) => {
                Err(LoadError::NotFound(format!("`{shown}`")))
            }
            Err(ContainError::Unresolved(e)) => {
                Err(LoadError::Unreadable(format!("from `{shown}`: {e}")))
            }
        }
    }

    /// The real directory of the module `importer`: the folder of its real path,
    /// or the current directory for standard input.
    fn importer_dir(&self, importer: &str) -> Result<PathBuf, LoadError> {
        if let Some(real) = self.real.get(importer) {
            return Ok(real.parent().unwrap_or(Path::new("/")).to_path_buf());
        }
        let unreadable = |e: std::io::Error| {
            LoadError::Unreadable(format!(
                "relative to `{importer}`, whose path cannot be resolved: {}",
                ReadError::from(e)
            ))
        };
        if importer == STDIN_NAME {
            return std::fs::canonicalize(".").map_err(unreadable);
        }
        let real = std::fs::canonicalize(importer).map_err(unreadable)?;
        Ok(real.parent().unwrap_or(Path::new("/")).to_path_buf())
    }

    /// A relative import `spec` of `importer`, whose display name is `name`.
    fn load_relative(
        &mut self,
        spec: &str,
        importer: &str,
        name: String,
    ) -> Result<(String, String), LoadError> {
        let dir = self.importer_dir(importer)?;
        let root = match &self.root {
            Some(r) => r.clone(),
            None => fsguard::package_root(&dir),
        };
        let mut rel = PathBuf::from(spec);
        if rel.extension().is_none_or(|e| e != "fab") {
            let mut os = rel.into_os_string();
            os.push(".fab");
            rel = PathBuf::from(os);
        }
        // Relative to the importer's real directory, whatever the working directory.
        let target = dir.join(rel);
        let real = match fsguard::contain(&root, &target) {
            Ok(real) => real,
            Err(ContainError::Escapes) => {
                return Err(LoadError::LeavesRoot(format!(
                    "the package root `{}`",
                    root.display()
                )))
            }
            Err(ContainError::Unresolved(ReadError::NotFound)) => {
                return Err(LoadError::NotFound(format!("the file `{name}`")))
            }
            Err(ContainError::Unresolved(e)) => {
                return Err(LoadError::Unreadable(format!("from `{name}`: {e}")))
            }
        };
        let text = read_module(&real, &name)?;
        let name = match self.names.get(&real) {
            Some(first) => first.clone(),
            None => {
                self.names.insert(real.clone(), name.clone());
                self.real.insert(name.clone(), real);
                name
            }
        };
        Ok((name, text))
    }
}

/// The text of a module file (regular, at most [`SOURCE_LIMIT`] bytes, UTF-8).
fn read_module(path: &Path, shown: &str) -> Result<String, LoadError> {
    match fsguard::read_regular_file(path, SOURCE_LIMIT) {
        Ok(bytes) => String::from_utf8(bytes)
            .map_err(|_| LoadError::Unreadable(format!("from `{shown}`: it is not valid UTF-8"))),
        Err(ReadError::NotFound) => Err(LoadError::NotFound(format!("the file `{shown}`"))),
        Err(e) => Err(LoadError::Unreadable(format!("from `{shown}`: {e}"))),
    }
}

impl Loader for FsLoader {
    fn default_locale(&self, name: &str) -> Locale {
        let library = name.split_once(':').is_some_and(|(lib, _)| {
            !lib.is_empty() && lib.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if library {
            Locale::LA
        } else {
            self.package_locale
        }
    }

    fn package_entry(&mut self) -> Option<(String, String)> {
        let real = std::fs::canonicalize(self.package_entry.as_ref()?).ok()?;
        if self.names.contains_key(&real) {
            return None;
        }
        let bytes = fsguard::read_regular_file(&real, SOURCE_LIMIT).ok()?;
        Some((real.display().to_string(), String::from_utf8(bytes).ok()?))
    }

    fn entry(&mut self, name: &str) {
        let dir = if name == STDIN_NAME {
            std::fs::canonicalize(".").ok()
        } else {
            std::fs::canonicalize(name).ok().map(|real| {
                let dir = real.parent().unwrap_or(Path::new("/")).to_path_buf();
                self.names.insert(real.clone(), name.to_string());
                self.real.insert(name.to_string(), real);
                dir
            })
        };
        self.root = dir.map(|d| fsguard::package_root(&d));
    }

    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        let name = canonical_name(spec, importer)?;
        if let Some((lib, rel)) = name.split_once(':') {
            if let Some(template) = lib.strip_prefix('§') {
                let Some((_, dir)) = self.templates.iter().find(|(n, _)| n == template) else {
                    return Err(LoadError::NotFound(format!(
                        "a folder named `{template}` under [paths.templates] in faber.toml, \
                         which names none"
                    )));
                };
                let what = format!("the template folder `{template}`");
                return Self::load_inside(dir, rel, name.clone(), &what);
            }
            if let Some(root) = &self.lib_root {
                let lib_dir = root.join(lib).join("src");
                let what = format!("the root of library `{lib}`");
                return Self::load_inside(&lib_dir, rel, name.clone(), &what);
            }
            return match faber::libraries::bundled(&name) {
                Some(text) => Ok((name, text.to_string())),
                None => Err(LoadError::NotFound(format!(
                    "`{rel}` in the bundled `{lib}` library"
                ))),
            };
        }
        self.load_relative(spec, importer, name)
    }

    /// The `.fab` files in the missing file's folder; for a library module, every
    /// module of every library under the library root, or every bundled module.
    fn candidates(&self, missing: &str) -> Vec<String> {
        if let Some((lib, _)) = missing.split_once(':').filter(|(l, _)| l.starts_with('§')) {
            let name = lib.trim_start_matches('§');
            let dir = self.templates.iter().find(|(n, _)| n == name);
            return dir.map_or_else(Vec::new, |(_, d)| {
                fab_files(d)
                    .into_iter()
                    .map(|f| format!("{lib}:{f}"))
                    .collect()
            });
        }
        if missing.contains(':') {
            return match &self.lib_root {
                Some(root) => library_modules(root),
                None => faber::libraries::BUNDLED
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect(),
            };
        }
        let (dir, prefix) = match missing.rsplit_once('/') {
            Some((d, _)) => (Path::new(d).to_path_buf(), format!("{d}/")),
            None => (PathBuf::from("."), String::new()),
        };
        fab_files(&dir)
            .into_iter()
            .map(|f| format!("{prefix}{f}"))
            .collect()
    }
}

/// The names of the `.fab` files directly in `dir` (none if it cannot be read).
fn fab_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".fab"))
        .collect()
}

/// `lib:stem.fab` for every `ROOT/<lib>/src/<stem>.fab` (top-level modules only).
fn library_modules(root: &Path) -> Vec<String> {
    let Ok(libs) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut names = Vec::new();
    for lib in libs.flatten() {
        let Ok(lib_name) = lib.file_name().into_string() else {
            continue;
        };
        for f in fab_files(&lib.path().join("src")) {
            names.push(format!("{lib_name}:{f}"));
        }
    }
    names
}
