#!/usr/bin/env bash
# Times faber against CPython on the same algorithms (whole-process wall time, best of 5).
#
#   benches/interp/run.sh                 # uses target/release/faber
#   FABER=path/to/faber benches/interp/run.sh
#   RUNS=10 benches/interp/run.sh
#
# Uses hyperfine when it is installed, otherwise python3's time.perf_counter around
# subprocess.run. Each program's stdout is checked against its expected value first.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

FABER="${FABER:-target/release/faber}"
PYTHON="${PYTHON:-python3}"
RUNS="${RUNS:-5}"
BENCHES=(fib sieve)
declare -A EXPECT=([fib]=832040 [sieve]=78498)

if [[ ! -x "$FABER" ]]; then
    echo "faber binary not found at $FABER (build with: cargo build --release)" >&2
    exit 2
fi

for b in "${BENCHES[@]}"; do
    got_f="$("$FABER" run "$here/$b.fab")"
    got_p="$("$PYTHON" "$here/$b.py")"
    if [[ "$got_f" != "${EXPECT[$b]}" || "$got_p" != "${EXPECT[$b]}" ]]; then
        echo "$b: wrong output (faber: '$got_f', python: '$got_p', expected ${EXPECT[$b]})" >&2
        exit 1
    fi
done

# best_of CMD... → prints the best wall time in seconds
best_of() {
    if command -v hyperfine >/dev/null 2>&1; then
        local json
        json="$(mktemp)"
        hyperfine --style none --warmup 1 --runs "$RUNS" --export-json "$json" -N -- "$(printf '%q ' "$@")" >/dev/null
        "$PYTHON" -c 'import json,sys; print("%.4f" % json.load(open(sys.argv[1]))["results"][0]["min"])' "$json"
        rm -f "$json"
    else
        "$PYTHON" -c '
import subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
best = float("inf")
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    best = min(best, time.perf_counter() - t0)
print("%.4f" % best)
' "$RUNS" "$@"
    fi
}

printf '%-8s %12s %12s %14s\n' bench "faber (s)" "python (s)" "faber/python"
for b in "${BENCHES[@]}"; do
    tf="$(best_of "$FABER" run "$here/$b.fab")"
    tp="$(best_of "$PYTHON" "$here/$b.py")"
    ratio="$("$PYTHON" -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$tf" "$tp")"
    printf '%-8s %12s %12s %14s\n' "$b" "$tf" "$tp" "${ratio}x"
done
echo "(best of $RUNS runs, whole-process wall time; faber = $FABER)"
