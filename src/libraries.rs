//! The `norma:` and `gradus:` libraries, embedded in the binary at build time (see
//! grammar/build.rs), so an installed `faber` works from any directory.

include!(concat!(env!("OUT_DIR"), "/libraries.rs"));

/// The bundled source of a canonical library module name (`gradus:nn.fab`).
pub fn bundled(name: &str) -> Option<&'static str> {
    BUNDLED
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}
