//! The module loader the CLI gives the compiler: relative imports are files on disk;
//! `lib:stem` imports come from `--lib-root DIR` or `$FABER_LIBRARY_HOME`
//! (`DIR/<lib>/src/<stem>.fab`) when given, else from the libraries bundled in the
//! binary (`norma:` = stdlib/src, `gradus:` = gradus-fab/src).

use std::path::PathBuf;

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
}
