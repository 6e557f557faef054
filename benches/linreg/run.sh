#!/usr/bin/env bash
# Linear regression (examples/linear-regression: 2×2 linear + MSE, SGD lr 0.1) — faber
# against PyTorch eager, jax.jit and numpy (float64), issue 6's benchmark:
#   whole process  `faber run examples/linear-regression` (8 steps, prints 8 losses) and
#                  `peers.py program <peer>` (python start-up + import + the same 8 steps);
#                  hyperfine, min and median of RUNS (faber) / PEER_RUNS (python) runs
#   per step       faber: benches/linreg/steps.fab at N and 2N steps, best of ROUNDS each,
#                  per step = (t(2N) − t(N)) / N, which cancels start-up and compile;
#                  peers: peers.py steps (N chained steps after warm-up, best of ROUNDS;
#                  mean = loop time / N, and the median of N steps timed one by one)
# Targets (issue 6): faber ≤ 10 ms whole process, ≤ 2 µs per step.
#
#   bash benches/linreg/run.sh                 # uses target/release/faber
#   FABER=path/to/faber N=100000 ROUNDS=3 RUNS=20 PEER_RUNS=5 bash benches/linreg/run.sh
#
# Also prints faber's instructions per step (valgrind --tool=callgrind, 2000 vs 4000
# steps; INSTR=0 skips it), which repeat where wall times on this shared host do not.
# Needs the peers venv (bash benches/peers/setup.sh); hyperfine is used for the
# whole-process figures when installed (otherwise python's perf_counter around
# subprocess.run). Before timing, every peer's 8-step loss trace is checked against
# faber's (relative 1e-9).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
FABER="${FABER:-target/release/faber}"
PY="${PY:-benches/.venv-peers/bin/python}"
N="${N:-100000}"
ROUNDS="${ROUNDS:-3}"
RUNS="${RUNS:-20}"
PEER_RUNS="${PEER_RUNS:-5}"
PEERS=(torch jax numpy)
[[ -x "$FABER" ]] || { echo "no faber binary at $FABER (cargo build --release)" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "no venv: run bash benches/peers/setup.sh" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# 1. Same numbers: each peer's 8-step trace against faber's.
"$FABER" run examples/linear-regression >"$tmp/faber.trace"
for p in "${PEERS[@]}"; do
    "$PY" "$here/peers.py" program "$p" >"$tmp/$p.trace"
    "$PY" - "$tmp/faber.trace" "$tmp/$p.trace" "$p" <<'PY'
import sys
a = [float(l) for l in open(sys.argv[1])]
b = [float(l) for l in open(sys.argv[2])]
bad = len(a) != 8 or len(a) != len(b) or any(abs(u - v) > 1e-9 * abs(u) for u, v in zip(a, b))
sys.exit("%s: loss trace differs from faber's: %r vs %r" % (sys.argv[3], b, a) if bad else 0)
PY
done

# whole MIN_RUNS CMD... → "min_ms median_ms" of the command's wall time
whole() {
    local runs="$1"
    shift
    if command -v hyperfine >/dev/null 2>&1; then
        hyperfine --style none --warmup 2 --runs "$runs" -N --export-json "$tmp/h.json" \
            -- "$(printf '%q ' "$@")" >/dev/null 2>"$tmp/h.err" || { cat "$tmp/h.err" >&2; exit 1; }
        "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["results"][0]
print("%.1f %.1f" % (r["min"] * 1e3, r["median"] * 1e3))' "$tmp/h.json"
    else
        "$PY" -c '
import statistics, subprocess, sys, time
runs, cmd, ts = int(sys.argv[1]), sys.argv[2:], []
for _ in range(runs):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    ts.append(time.perf_counter() - t0)
print("%.1f %.1f" % (min(ts) * 1e3, statistics.median(ts) * 1e3))' "$runs" "$@"
    fi
}

# secs CMD...: wall time of one run in seconds (bash's clock, no extra process).
secs() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }'
}

load0="$(cut -d' ' -f1-3 /proc/loadavg)"

# 2. Whole process.
declare -A W=()
W[faber]="$(whole "$RUNS" "$FABER" run examples/linear-regression)"
for p in "${PEERS[@]}"; do
    W[$p]="$(whole "$PEER_RUNS" "$PY" "$here/peers.py" program "$p")"
done

# 3. faber per step: N and 2N steps alternate within a round; best of ROUNDS each.
b1="" b2=""
for ((r = 0; r < ROUNDS; r++)); do
    t="$(secs "$FABER" run "$here/steps.fab" -- "$N")"
    [[ -z "$b1" ]] || awk -v a="$t" -v b="$b1" 'BEGIN { exit !(a < b) }' && b1="$t"
    t="$(secs "$FABER" run "$here/steps.fab" -- "$((2 * N))")"
    [[ -z "$b2" ]] || awk -v a="$t" -v b="$b2" 'BEGIN { exit !(a < b) }' && b2="$t"
done
declare -A S=() M=([faber]="-")
S[faber]="$(awk -v a="$b1" -v b="$b2" -v n="$N" 'BEGIN { printf "%.3f", (b - a) / n * 1e6 }')"
if awk -v a="$b1" -v b="$b2" 'BEGIN { exit !(b <= a) }'; then
    echo "warning: t(2N) ≤ t(N): noise exceeds the difference; raise N or ROUNDS" >&2
fi

# 3b. faber instructions per step (repeatable where wall times are not): callgrind at
# 2000 and 4000 steps, difference / 2000. INSTR=0 skips it.
instr="-"
if [[ "${INSTR:-1}" != 0 ]] && command -v valgrind >/dev/null 2>&1; then
    ir() {
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$FABER" run "$here/steps.fab" -- "$1" 2>&1 |
            grep -oP 'Collected : \K[0-9]+'
    }
    i1="$(ir 2000)"
    i2="$(ir 4000)"
    instr="$(( (i2 - i1) / 2000 ))"
fi

# 4. Peers per step.
while read -r name us med _; do
    S[$name]="$us"
    M[$name]="$med"
done < <("$PY" "$here/peers.py" steps --n "$N" --rounds "$ROUNDS")

echo "linear regression 2×2, float64: commit $(git rev-parse --short HEAD), $(date +%F), $(nproc) cpus," \
    "load average before/after: $load0 / $(cut -d' ' -f1-3 /proc/loadavg)"
echo "faber steps.fab best of $ROUNDS: $N steps ${b1} s, $((2 * N)) steps ${b2} s;" \
    "instructions per step (callgrind): $instr"
printf '%-7s %15s %15s %14s %16s %17s\n' "" "whole min ms" "whole med ms" "µs/step mean" "µs/step median" "peer/faber mean"
for p in faber "${PEERS[@]}"; do
    read -r wmin wmed <<<"${W[$p]}"
    ratio="$(awk -v f="${S[faber]}" -v s="${S[$p]}" 'BEGIN { printf "%.1f", s / f }')"
    printf '%-7s %15s %15s %14s %16s %17s\n' "$p" "$wmin" "$wmed" "${S[$p]}" "${M[$p]}" "${ratio}x"
done
echo "whole = 8-step program incl. start-up (faber: $RUNS runs, peers: $PEER_RUNS runs);" \
    "mean = loop time / N (faber: difference of two runs); median = steps timed one by one" \
    "(peers only); targets: faber ≤ 10 ms whole, ≤ 2 µs/step"
