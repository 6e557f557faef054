//! `faber.toml` (`manifest::parse`) on arbitrary bytes (lossy UTF-8, as the CLI reads
//! it): a manifest or one CLI002 diagnostic, never a panic. Every span (the error's,
//! the notes') lies inside the text and renders; an accepted manifest has a non-empty
//! name and relative, non-empty `source` and `entry` paths.
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

use faber::diag::codes;
// The manifest parser is the CLI's (src/cli/manifest.rs, written against `faber::…`
// paths so that it builds here too).
#[path = "../../src/cli/manifest.rs"]
#[allow(dead_code)] // `Manifest::describe` is the CLI's
mod manifest;

use faber::source::SourceMap;
use libfuzzer_sys::fuzz_target;
use manifest::parse;

fuzz_target!(|data: &[u8]| {
    let mut sources = SourceMap::new();
    let id = sources.add("faber.toml", String::from_utf8_lossy(data).into_owned());
    let text = sources.text(id);
    let diags = match parse(text, id) {
        Ok(m) => {
            assert!(!m.name.trim().is_empty(), "empty package name accepted");
            for path in [&m.source, &m.entry] {
                assert!(
                    !path.trim().is_empty() && !std::path::Path::new(path).has_root(),
                    "path `{path}` accepted"
                );
            }
            m.notes
        }
        Err(d) => {
            assert_eq!(
                d.code.id,
                codes::CLI_MANIFEST.id,
                "manifest error with another code"
            );
            vec![d]
        }
    };
    for d in &diags {
        assert!(
            d.span.file == id && d.span.lo <= d.span.hi && d.span.hi as usize <= text.len(),
            "span {}..{} outside a manifest of {} bytes",
            d.span.lo,
            d.span.hi,
            text.len()
        );
    }
    let _ = faber::diag::render(&diags, &sources, false);
});
