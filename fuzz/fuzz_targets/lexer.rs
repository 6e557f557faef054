//! The lexer on arbitrary bytes (read as the CLI reads a file: lossy UTF-8): it must
//! never panic, every token and diagnostic span must lie inside the text, and the
//! diagnostics must render.
#![no_main]

use faber::source::SourceMap;
use faber::syntax::lexer::lex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut sources = SourceMap::new();
    let id = sources.add("fuzz.fab", String::from_utf8_lossy(data).into_owned());
    let text = sources.text(id);
    let lexed = lex(id, text);
    let mut last = 0;
    for (lo, _, hi) in &lexed.tokens {
        assert!(
            lo <= hi && *hi <= text.len(),
            "token {lo}..{hi} of {}",
            text.len()
        );
        assert!(*lo >= last, "tokens out of order at {lo}");
        last = *lo;
    }
    for d in &lexed.diagnostics {
        assert!(d.span.lo <= d.span.hi && d.span.hi as usize <= text.len());
    }
    let _ = faber::diag::render(&lexed.diagnostics, &sources, false);
});
