//! `faber run` in memory: compile as the `check` target does, then run the program
//! with a sandboxed `Io` (no file access) on the CLI's worker stack.
//!
//! Every program that compiles is run under a step budget (`RunConfig::max_steps`, the
//! `faber run --max-steps` machinery: one step per loop iteration and per call), so a
//! fuzzed `dum verum {}` or runaway recursion ends with RUN014 instead of hanging.
//! Texts, lists and tensors are capped small (`common::fuzz_config`), but a
//! single step can still be expensive: maps are not limited and a range value may
//! hold 10^8 elements. `fuzz/run.sh` therefore runs this target in fork mode, which
//! records out-of-memory and timeout inputs and keeps going.
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

/// Loop iterations plus calls per run.
const MAX_STEPS: u64 = 100_000;

fuzz_target!(|data: &[u8]| {
    let data = data.to_vec();
    common::on_worker(move || {
        let config = faber::eval::RunConfig {
            max_steps: Some(MAX_STEPS),
            ..common::fuzz_config()
        };
        let _limits = config.install();
        let (sources, result) = common::compile(&data);
        let Ok(program) = result else {
            if std::env::var_os("FABER_FUZZ_VERBOSE").is_some() {
                eprintln!("run target: does not compile");
            }
            return;
        };
        let mut io = common::SandboxIo::default();
        let outcome = faber::eval::run_entry(&program, &mut io, &config);
        if std::env::var_os("FABER_FUZZ_VERBOSE").is_some() {
            match &outcome {
                Ok(code) => eprintln!("run target: exit {code}"),
                Err(e) => eprintln!("run target: {}", e.code().id),
            }
        }
        if let Err(e) = outcome {
            // Runtime errors are fine; they must render like any diagnostic.
            common::check_diagnostics(&sources, &[e.into_diagnostic()]);
        }
    });
});
