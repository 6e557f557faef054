//! The parser on arbitrary bytes: a syntax tree (dumped as `faber parse` does) or
//! diagnostics whose spans lie inside the text; never a panic. Rendering is left to the
//! `check` target, which parses the same kind of input and renders every diagnostic,
//! the parser's included (docs/robustness.md, Throughput, round 5).
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

#[path = "altstack.rs"]
mod altstack;

use faber::source::SourceMap;
use faber::syntax::{dump_ast, parse};
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: altstack::init(), |data: &[u8]| {
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.fab", String::from_utf8_lossy(data).into_owned());
    match parse(&sources, id) {
        Ok(module) => {
            let _ = dump_ast(&module);
        }
        Err(diags) => {
            let len = sources.text(id).len();
            for d in &diags {
                assert!(d.span.lo <= d.span.hi && d.span.hi as usize <= len);
            }
        }
    }
});
