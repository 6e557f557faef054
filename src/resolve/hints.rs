//! "did you mean …?" for an import that names no module: the loader lists the
//! modules it could have meant ([`super::Loader::candidates`]); this compares the
//! missing module's file stem with the stems in the same folder of the same library,
//! and its library name with the libraries that have a module at the same path.

use crate::diag::suggest;

/// A canonical module name split into (library, folder, stem): `gradus:a/b.fab` is
/// (`Some("gradus")`, `a`, `b`); `dir/x.fab` is (`None`, `dir`, `x`).
fn split(canonical: &str) -> (Option<&str>, &str, &str) {
    let (lib, path) = match canonical.split_once(':') {
        Some((lib, p)) => (Some(lib), p),
        None => (None, canonical),
    };
    let path = path.strip_suffix(".fab").unwrap_or(path);
    match path.rsplit_once('/') {
        Some((dir, stem)) => (lib, dir, stem),
        None => (lib, "", path),
    }
}

/// The import string the user would write for the suggestion: `spec` with its last
/// component (after the last `/` or `:`) replaced by `stem`, keeping a `.fab` suffix.
fn with_stem(spec: &str, stem: &str) -> String {
    let cut = spec.rfind(['/', ':']).map_or(0, |i| i + 1);
    let suffix = if spec.ends_with(".fab") { ".fab" } else { "" };
    format!("{}{stem}{suffix}", &spec[..cut])
}

/// The hint for import `spec`, whose canonical name `missing` was not found, given
/// the canonical names the loader offers.
pub fn import_hint(spec: &str, missing: &str, candidates: &[String]) -> Option<String> {
    let (lib, dir, stem) = split(missing);
    let mut stems: Vec<&str> = candidates
        .iter()
        .map(|c| split(c))
        .filter(|(l, d, _)| *l == lib && *d == dir)
        .map(|(_, _, s)| s)
        .collect();
    stems.sort();
    if let Some(s) = suggest::nearest(stem, stems) {
        return suggest::did_you_mean(&[&with_stem(spec, s)]);
    }
    let lib = lib?;
    let mut libs: Vec<&str> = candidates
        .iter()
        .map(|c| split(c))
        .filter(|(l, d, s)| l.is_some() && *d == dir && *s == stem)
        .filter_map(|(l, _, _)| l)
        .collect();
    libs.sort();
    let other = suggest::nearest(lib, libs)?;
    let rest = &spec[spec.find(':')?..];
    suggest::did_you_mean(&[&format!("{other}{rest}")])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stems_and_libraries() {
        let c = names(&[
            "gradus:optimize.fab",
            "gradus:nn.fab",
            "norma:nn.fab",
            "dir/util.fab",
        ]);
        assert_eq!(
            import_hint("gradus:optimise", "gradus:optimise.fab", &c).unwrap(),
            "did you mean `gradus:optimize`?"
        );
        assert_eq!(
            import_hint("gradu:nn", "gradu:nn.fab", &c).unwrap(),
            "did you mean `gradus:nn`?"
        );
        assert_eq!(
            import_hint("./utli", "dir/utli.fab", &c).unwrap(),
            "did you mean `./util`?"
        );
        // A file in another folder is not offered.
        assert_eq!(import_hint("./utli", "other/utli.fab", &c), None);
    }
}
