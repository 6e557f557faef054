//! The lexer on arbitrary bytes (read as the CLI reads a file: lossy UTF-8): it must
//! never panic, and every token and diagnostic span must lie inside the text, tokens
//! in order.
//!
//! The lexer's diagnostics are not rendered here: rendering took over half of this
//! target's time (ariadne, formatting) and its thousands of edges made libFuzzer's
//! per-input coverage bookkeeping several times dearer than the lexing itself. The
//! `parser` and `check` targets render every diagnostic, the lexer's included (`parse`
//! returns them), so rendering is still fuzzed on every kind of input.
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

#[path = "altstack.rs"]
mod altstack;

use faber::source::FileId;
use faber::syntax::lexer::lex;
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: altstack::init(), |data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let lexed = lex(FileId(0), &text);
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
        assert!(
            d.span.file == FileId(0) && d.span.lo <= d.span.hi && d.span.hi as usize <= text.len(),
            "{}: span {}..{} of {}",
            d.code.id,
            d.span.lo,
            d.span.hi,
            text.len()
        );
    }
});
