//! Two edits of the parser LALRPOP generates (`OUT_DIR/faber.rs`), both for speed and
//! both without changing what it parses or reports (docs/robustness.md § Throughput,
//! round 4): [`accepts_without_copy`] and [`box_large_symbols`].
//!
//! An edited file ends with [`MARKER`]. LALRPOP leaves an up-to-date file alone, so a
//! file without the current marker (written before these edits, or by an older version
//! of them) is removed first and LALRPOP writes it again. Generated code without the
//! expected shapes (another LALRPOP version) stops the build rather than silently
//! losing an edit.

use std::path::Path;

/// The last line of an edited file; change the version when the edits change.
const MARKER: &str = "// Edited by grammar/postprocess.rs (faber), version 2.\n";

/// Before LALRPOP runs: removes a generated parser that lacks the current edits.
pub fn remove_unedited(path: &Path) {
    if let Ok(text) = std::fs::read_to_string(path) {
        if !text.ends_with(MARKER) {
            std::fs::remove_file(path).expect("OUT_DIR is writable");
        }
    }
}

/// After LALRPOP runs: applies both edits to the generated parser at `path`.
pub fn edit_generated_parser(path: &Path) {
    let text = std::fs::read_to_string(path).expect("the generated parser is readable");
    if text.ends_with(MARKER) {
        return;
    }
    let mut text = box_large_symbols(&accepts_without_copy(&text));
    text.push_str(MARKER);
    std::fs::write(path, text).expect("OUT_DIR is writable");
}

/// The body of the generated `__accepts` after its signature, as LALRPOP 0.23 writes it.
const ACCEPTS_ORIGINAL: &str = "    {
        let mut __states = __states.to_vec();
        __states.extend(__error_state);
        loop {
            let mut __states_len = __states.len();
            let __top = __states[__states_len - 1];
            let __action = match __opt_integer {
                None => __EOF_ACTION[__top as usize],
                Some(__integer) => __action(__top, __integer),
            };
            if __action == 0 { return false; }
            if __action > 0 { return true; }
            let (__to_pop, __nt) = match __simulate_reduce(-(__action + 1), core::marker::PhantomData::<(&())>) {
                __state_machine::SimulatedReduce::Reduce {
                    states_to_pop, nonterminal_produced
                } => (states_to_pop, nonterminal_produced),
                __state_machine::SimulatedReduce::Accept => return true,
            };
            __states_len -= __to_pop;
            __states.truncate(__states_len);
            let __top = __states[__states_len - 1];
            let __next_state = __goto(__top, __nt);
            __states.push(__next_state);
        }
    }
";

/// The same simulation on the stack as given plus the states pushed on top of it: the
/// simulated stack is `__states[..__base]` followed by `__pushed`.
const ACCEPTS_WITHOUT_COPY: &str = "    {
        // Edited by grammar/postprocess.rs: no copy of the stack.
        let mut __base = __states.len();
        let mut __pushed: alloc::vec::Vec<i16> = alloc::vec::Vec::new();
        __pushed.extend(__error_state);
        loop {
            let __top = match __pushed.last() {
                Some(&__top) => __top,
                None => __states[__base - 1],
            };
            let __action = match __opt_integer {
                None => __EOF_ACTION[__top as usize],
                Some(__integer) => __action(__top, __integer),
            };
            if __action == 0 { return false; }
            if __action > 0 { return true; }
            let (__to_pop, __nt) = match __simulate_reduce(-(__action + 1), core::marker::PhantomData::<(&())>) {
                __state_machine::SimulatedReduce::Reduce {
                    states_to_pop, nonterminal_produced
                } => (states_to_pop, nonterminal_produced),
                __state_machine::SimulatedReduce::Accept => return true,
            };
            if __to_pop <= __pushed.len() {
                __pushed.truncate(__pushed.len() - __to_pop);
            } else {
                __base -= __to_pop - __pushed.len();
                __pushed.clear();
            }
            let __top = match __pushed.last() {
                Some(&__top) => __top,
                None => __states[__base - 1],
            };
            let __next_state = __goto(__top, __nt);
            __pushed.push(__next_state);
        }
    }
";

/// Rewrites the generated `__accepts`, which tells whether the parser with a given
/// state stack would accept a terminal, after simulating the reductions that terminal
/// triggers. LALRPOP calls it for each of the grammar's 107 terminals whenever it
/// builds an error (`__expected_tokens_from_states`, the "expected …" lists), and the
/// generated code starts each call by copying the whole state stack, whose depth grows
/// with the input's nesting. The rewrite simulates the same steps without the copy: it
/// reads the stack as given and keeps the states the simulation pushes in a separate
/// vector (empty, so not allocated, when the first action already answers). Each step
/// reads the same top state as the original, so every answer is the same.
fn accepts_without_copy(text: &str) -> String {
    let functions = text.matches("    fn __accepts<").count();
    let bodies = text.matches(ACCEPTS_ORIGINAL).count();
    assert!(
        functions > 0 && bodies == functions,
        "grammar/build.rs: the generated parser's __accepts has changed ({functions} functions, \
         {bodies} known bodies); update grammar/postprocess.rs"
    );
    text.replace(ACCEPTS_ORIGINAL, ACCEPTS_WITHOUT_COPY)
}

/// Nonterminal types larger than the rest (Item 328 bytes, GenusMember 312, ItemKind
/// and Func 288, Stmt 264, StmtKind 248, the others 160, on x86-64), spelled as
/// LALRPOP writes them in its `__Symbol` enum.
const BOXED: &[&str] = &[
    "Item",
    "ItemKind",
    "Func",
    "GenusMember",
    "Stmt",
    "StmtKind",
    "Entry",
    "CondArm",
    "(Ident, Expr)",
    "(StrLit, Expr)",
    "Option<(Ident, Expr)>",
    "Option<(StrLit, Expr)>",
];

/// Holds the [`BOXED`] nonterminals in the generated `__Symbol` enum behind a `Box`.
/// The parser's stack is a `Vec<(usize, __Symbol, usize)>`, and every shift and every
/// reduction moves whole entries: with an `Item` inline an entry is about 350 bytes, most of
/// them copied for an expression's chain of unit reductions (one per precedence level).
/// Boxed, the largest variant left is the error-recovery record (144 bytes), and an
/// entry about 170. The grammar's actions still produce and receive the plain types: the
/// edit boxes a value where a reduction pushes it (`__Symbol::VariantN(__nt)`) and
/// unboxes it where `__pop_VariantN` takes it off the stack, and it checks that these
/// are the only places the variant occurs. A type not in the generated enum (after a
/// grammar change) is skipped; a new large one is simply not boxed.
fn box_large_symbols(text: &str) -> String {
    // One `__Symbol` enum per parser module (`mod __parse__Module`, `__parse__Expr`):
    // the variant numbers are per module, so each module is edited on its own.
    let starts: Vec<usize> = text
        .match_indices("\nmod __parse__")
        .map(|(i, _)| i)
        .collect();
    assert!(
        !starts.is_empty(),
        "grammar/build.rs: no parser module in the generated code; update grammar/postprocess.rs"
    );
    let mut out = String::with_capacity(text.len() + 4096);
    out.push_str(&text[..starts[0]]);
    for (k, &lo) in starts.iter().enumerate() {
        let hi = starts.get(k + 1).copied().unwrap_or(text.len());
        out.push_str(&box_in_module(&text[lo..hi]));
    }
    out
}

fn box_in_module(module: &str) -> String {
    let Some(enum_at) = module.find("enum __Symbol<>") else {
        return module.to_string();
    };
    let body_end = enum_at
        + module[enum_at..]
            .find("\n    }\n")
            .expect("end of __Symbol");
    let variants: Vec<(String, String)> = module[enum_at..body_end]
        .lines()
        .filter_map(|line| {
            let line = line.trim().strip_prefix("Variant")?.strip_suffix("),")?;
            let (n, ty) = line.split_once('(')?;
            Some((format!("Variant{n}"), ty.to_string()))
        })
        .collect();
    assert!(
        !variants.is_empty(),
        "grammar/build.rs: no variants in the generated __Symbol; update grammar/postprocess.rs"
    );
    let mut module = module.to_string();
    for (variant, ty) in variants
        .iter()
        .filter(|(_, ty)| BOXED.contains(&ty.as_str()))
    {
        let edits = [
            (
                format!("        {variant}({ty}),\n"),
                format!("        {variant}(alloc::boxed::Box<{ty}>),\n"),
            ),
            (
                format!("__Symbol::{variant}(__v), __r)) => (__l, __v, __r),"),
                format!("__Symbol::{variant}(__v), __r)) => (__l, *__v, __r),"),
            ),
            (
                format!("__Symbol::{variant}(__nt), __end));"),
                format!("__Symbol::{variant}(alloc::boxed::Box::new(__nt)), __end));"),
            ),
        ];
        let uses = module.matches(&format!("__Symbol::{variant}(")).count();
        let (defs, pops, pushes) = (
            module.matches(&edits[0].0).count(),
            module.matches(&edits[1].0).count(),
            module.matches(&edits[2].0).count(),
        );
        assert!(
            defs == 1 && pops <= 1 && uses == pops + pushes,
            "grammar/build.rs: __Symbol::{variant}({ty}) is used in an unexpected way \
             ({defs} definitions, {pops} pops, {pushes} pushes, {uses} uses); update \
             grammar/postprocess.rs"
        );
        for (from, to) in &edits {
            module = module.replace(from.as_str(), to);
        }
    }
    module
}
