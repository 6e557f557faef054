//! `faber check` in memory: load (imports among `%%% name.fab` sections of the input
//! and the bundled `norma:`/`gradus:` libraries), resolve, type and shape checks,
//! lowering, autodiff and IR verification; on the worker stack the CLI uses.
#![no_main]

#[cfg(feature = "mimalloc")]
#[path = "mialloc.rs"]
mod mialloc;
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mialloc::Mimalloc = mialloc::Mimalloc;

#[path = "altstack.rs"]
mod altstack;
#[path = "common.rs"]
mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(init: altstack::init(), |data: &[u8]| {
    let data = data.to_vec();
    common::on_worker(move || {
        altstack::on_this_thread();
        let _limits = common::fuzz_limits();
        let _ = common::compile(&data);
    });
});
