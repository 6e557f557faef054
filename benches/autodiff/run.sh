#!/usr/bin/env bash
# Autodiff step time: faber's primal and generated companion against PyTorch
# eager f64 and jax.jit f64 on the same two-layer MLP (mlp4.fab, mlp256.fab).
#
#   bash benches/autodiff/run.sh                       # uses target/release/faber
#   FABER=/path/to/faber ROUNDS=5 bash benches/autodiff/run.sh
#
# Needs the peers venv: bash benches/peers/setup.sh
# faber: whole-process wall time of variants of each .fab with N primal calls
# only, N companion calls only, and none (start-up, compile, data), best of
# ROUNDS; per call = (variant - none) / N; at FABER_THREADS=1 and 2 (a binary
# older than the --threads option ignores it and uses every core: 2 here).
# The torch/jax side and the table come from peers.py.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
FABER="${FABER:-target/release/faber}"
PY="${PY:-benches/.venv-peers/bin/python}"
ROUNDS="${ROUNDS:-3}"
[[ -x "$FABER" ]] || { echo "no faber binary at $FABER (set FABER=...)" >&2; exit 2; }
[[ -x "$PY" ]] || { echo "no venv: run bash benches/peers/setup.sh" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# variant SRC NF NC OUT: SRC with the primal loop run NF times and the
# companion loop NC times (the 1st and 2nd `itera ab 0 ‥ N` of the file).
variant() {
    awk -v nf="$2" -v nc="$3" '/itera ab 0 ‥ [0-9]+/ {
        k++; sub(/‥ [0-9]+/, "‥ " (k == 1 ? nf : nc)) } { print }' "$1" >"$4"
}

# secs CMD...: wall time of one run, in seconds (bash's clock: no extra fork).
secs() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null
    awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.6f", b - a }'
}

args=()
for m in mlp4 mlp256; do
    src="$here/$m.fab"
    n="$(grep -m1 -oP 'itera ab 0 ‥ \K[0-9]+' "$src")"   # N as in the file
    variant "$src" "$n" 0 "$tmp/$m-f.fab"
    variant "$src" 0 "$n" "$tmp/$m-c.fab"
    variant "$src" 0 0 "$tmp/$m-0.fab"
    for th in 1 2; do
        declare -A best=()
        for ((r = 0; r < ROUNDS; r++)); do   # variants alternate within a round
            for v in 0 f c; do
                t="$(FABER_THREADS=$th secs "$FABER" run "$tmp/$m-$v.fab")"
                if [[ -z "${best[$v]:-}" ]] || awk -v a="$t" -v b="${best[$v]}" 'BEGIN { exit !(a < b) }'; then
                    best[$v]="$t"
                fi
            done
        done
        # per call in µs
        fwd="$(awk -v a="${best[f]}" -v z="${best[0]}" -v n="$n" 'BEGIN { printf "%.3f", (a - z) / n * 1e6 }')"
        comp="$(awk -v a="${best[c]}" -v z="${best[0]}" -v n="$n" 'BEGIN { printf "%.3f", (a - z) / n * 1e6 }')"
        echo "faber $m, $th thread(s): N=$n, best of $ROUNDS: none ${best[0]} s, primal ${best[f]} s, companion ${best[c]} s"
        args+=("$m/$th=$fwd,$comp")
        unset best
    done
done

echo "commit $(git rev-parse --short HEAD), $(date +%F), faber = $FABER, load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$here/peers.py" --rounds "$ROUNDS" "${args[@]}"
