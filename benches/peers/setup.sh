#!/usr/bin/env bash
# Creates benches/.venv-peers with the Python peers of the benchmarks
# (torch CPU, jax[cpu], numpy, safetensors), pinned in requirements.txt.
# Idempotent: a second run finds everything installed and only checks it.
#
#   bash benches/peers/setup.sh          # PYTHON=python3.x to pick the interpreter
#
# Torch route: the CPU-only wheel index (download.pytorch.org/whl/cpu) is tried
# first; where it cannot be reached, torch comes from PyPI, whose Linux wheel
# pulls the CUDA runtime packages (nvidia-*, triton) too: a few GB, unused here.
# Measured on 2026-11-29 (this machine reaches PyPI only): the CPU index failed at
# once (name not resolved) and the PyPI route worked: torch 2.15.0+cu132 with its
# nvidia-* packages in 99 s; the whole first run took 2 min 15 s and the venv is
# 5.9 GB (3.0 GB nvidia, 1.2 GB torch).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
venv="$root/benches/.venv-peers"
req="$here/requirements.txt"
py="$venv/bin/python"

[[ -x "$py" ]] || "${PYTHON:-python3}" -m venv "$venv"

# Everything already there at the pinned versions: nothing to do.
if "$py" - "$req" <<'PY' 2>/dev/null; then
import sys
from importlib.metadata import version
pins = [l.split("==") for l in open(sys.argv[1]) if "==" in l and not l.startswith("#")]
bad = [n for n, v in pins if version(n.split("[")[0].strip()).split("+")[0] != v.strip()]
sys.exit(1 if bad or not pins else 0)
PY
    echo "benches/.venv-peers is up to date"
    exit 0
fi

# The torch pin from requirements.txt (a `torch==X` line matches X+cpu too).
torch_spec="$(grep -E '^torch==' "$req" || echo torch)"
start=$SECONDS
# (pip --no-index succeeds only when the pinned torch is installed already.)
if "$py" -m pip install --no-index --no-deps --dry-run "$torch_spec" >/dev/null 2>&1; then
    echo "torch: already installed"
elif "$py" -m pip install --timeout 20 --retries 1 \
    --index-url https://download.pytorch.org/whl/cpu "$torch_spec"; then
    echo "torch: CPU-only index ($((SECONDS - start)) s)"
else
    echo "torch: CPU-only index unreachable, falling back to PyPI" >&2
    start=$SECONDS
    "$py" -m pip install "$torch_spec"
    echo "torch: PyPI ($((SECONDS - start)) s)"
fi

# The rest, pinned (torch is already satisfied, so this does not reinstall it).
"$py" -m pip install -r "$req"
"$py" -c 'import torch, jax, numpy, safetensors
print("torch", torch.__version__, "jax", jax.__version__, "numpy", numpy.__version__)'
