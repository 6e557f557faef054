#!/usr/bin/env bash
# Creates .venv-xla/ at the repository root with OpenXLA's CPU PJRT plugin
# (`xla-cpu-pjrt` from PyPI) and prints the plugin's path. Idempotent: a second run
# reuses the environment and installs nothing new. `faber devices` (and, later,
# `faber run --backend xla`) finds the plugin there without flags (docs/xla.md).
#
#   scripts/xla-setup.sh            # create or reuse .venv-xla/
#   PYTHON=python3.12 scripts/xla-setup.sh
#   XLA_VENV=/elsewhere scripts/xla-setup.sh
#   XLA_CPU_PJRT_VERSION=0.0.1 (the default: the wheel whose PJRT C API 0.81 src/xla/ binds)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${XLA_VENV:-$root/.venv-xla}"
python="${PYTHON:-python3}"

find_plugin() {
    find "$venv"/lib/python*/site-packages/xla_plugins -name '*.so' 2>/dev/null | sort | head -n 1
}

plugin="$(find_plugin || true)"
if [ -z "$plugin" ]; then
    if [ ! -x "$venv/bin/python" ]; then
        echo "xla-setup: creating $venv" >&2
        "$python" -m venv "$venv"
    fi
    echo "xla-setup: installing xla-cpu-pjrt" >&2
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "xla-cpu-pjrt==${XLA_CPU_PJRT_VERSION:-0.0.1}" >&2
    plugin="$(find_plugin || true)"
fi
if [ -z "$plugin" ]; then
    echo "xla-setup: xla-cpu-pjrt installed no plugin under $venv/lib/python*/site-packages/xla_plugins" >&2
    exit 1
fi
echo "$plugin"
