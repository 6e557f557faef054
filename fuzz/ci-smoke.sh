#!/usr/bin/env bash
# CI smoke run of the fuzz targets: installs cargo-fuzz when missing (crates.io),
# builds every target and runs each for 60 s on the seed corpus (the project's own
# programs). Exits non-zero when a target panics or trips the sanitizer (or the build
# fails). Out-of-memory and timeout inputs of the `run` target are reported but do not
# fail the smoke run (maps and range values are not capped yet); set
# FUZZ_STRICT=1 to fail on them too. Measured on 2 shared cores: cargo-fuzz install
# ~2 min, cold build ~5.5 min, 4 × 60 s of fuzzing ~5 min (see docs/robustness.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz (crates.io)"
    cargo install cargo-fuzz --locked
fi
exec ./run.sh "${FUZZ_SMOKE_SECONDS:-60}" lexer parser check run
