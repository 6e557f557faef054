//! The module loader the CLI gives the compiler: relative imports are files on disk;
//! `lib:stem` imports come from `--lib-root DIR` or `$FABER_LIBRARY_HOME`
//! (`DIR/<lib>/src/<stem>.fab`) when given, else from the libraries bundled in the
//! binary (`norma:` = stdlib/src, `gradus:` = gradus-fab/src).

use std::path::{Path, PathBuf};

use faber::resolve::{canonical_name, LoadError, Loader};

pub struct FsLoader {
    pub lib_root: Option<PathBuf>,
}

impl FsLoader {
    pub fn new(lib_root: Option<PathBuf>) -> FsLoader {
        let lib_root = lib_root.or_else(|| {
            std::env::var_os("FABER_LIBRARY_HOME")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        FsLoader { lib_root }
    }
}

impl Loader for FsLoader {
    fn load(&mut self, spec: &str, importer: &str) -> Result<(String, String), LoadError> {
        let name = canonical_name(spec, importer)?;
        if let Some((lib, rel)) = name.split_once(':') {
            if let Some(root) = &self.lib_root {
                let path = root.join(lib).join("src").join(rel);
                return match std::fs::read_to_string(&path) {
                    Ok(text) => Ok((name, text)),
                    Err(_) => Err(LoadError::NotFound(format!("`{}`", path.display()))),
                };
            }
            return match faber::libraries::bundled(&name) {
                Some(text) => Ok((name, text.to_string())),
                None => Err(LoadError::NotFound(format!(
                    "`{rel}` in the bundled `{lib}` library"
                ))),
            };
        }
        match std::fs::read_to_string(&name) {
            Ok(text) => Ok((name, text)),
            Err(_) => Err(LoadError::NotFound(format!("the file `{name}`"))),
        }
    }

    /// The `.fab` files in the missing file's folder; for a library module, every
    /// module of every library under the library root, or every bundled module.
    fn candidates(&self, missing: &str) -> Vec<String> {
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
