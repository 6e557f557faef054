#!/usr/bin/env bash
# CI smoke run of the fuzz targets: installs cargo-fuzz when missing (crates.io),
# builds every target and runs each of the six for FUZZ_SMOKE_SECONDS (default 20)
# on the seed corpus (the project's own programs, safetensors fixtures and manifests).
# `lexer`, `parser` and `check` are built without a sanitizer (fuzz/target/sanitizer-none/),
# with mimalloc as the Rust allocator, `run`, `safetensors` and `manifest` with ASan
# (fuzz/target/); run.sh says why. Each target fuzzes a copy of its corpus on
# /dev/shm, synced back to fuzz/corpus/ when it stops.
# Exits non-zero when a target panics or trips the sanitizer, when the build fails,
# or when fuzz/Cargo.lock is out of sync (run.sh checks it before and after the
# build). Out-of-memory and timeout inputs of the `run` target are reported but do not
# fail the smoke run (maps and range values are not capped yet); set FUZZ_STRICT=1
# to fail on them too.
#
# Budget: at most 5 minutes in all. 6 × 20 s of fuzzing plus each target's start-up
# (loading and running its seeds) is about 2.5 minutes; the build of the targets
# after a change to src/ compiles faber twice (once per sanitizer configuration).
# A cold build (empty fuzz/target/) of both configurations takes far longer than the
# budget on 2 shared cores (see docs/robustness.md § CI smoke budget) and an install
# of cargo-fuzz 3 minutes, so CI must cache fuzz/target/ (both configurations live
# under it) and ~/.cargo/bin to stay within the budget.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz (crates.io)"
    cargo install cargo-fuzz --locked
fi
exec ./run.sh "${FUZZ_SMOKE_SECONDS:-20}" lexer parser check run safetensors manifest
