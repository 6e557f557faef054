#!/usr/bin/env bash
# Per-step time of the default gpt-shakespeare configuration (2 layers, 4 heads, width 64,
# block 64, batch 16): faber vs PyTorch eager float64 vs jax.jit float64, at 1 and 2
# threads, median of 50 steps after 10 warm-up steps, same data and batch sequence;
# ROUNDS rounds (default 3) per thread count, medians over rounds.
#   bash benches/gpt/run.sh            (needs benches/peers/setup.sh once)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
PY=benches/.venv-peers/bin/python
[ -x "$PY" ] || bash benches/peers/setup.sh
faber_ms() {
    ./target/release/faber --threads "$1" run examples/gpt-shakespeare -- \
        --steps 60 --eval-interval 1000 --sample 0 --time-steps --out /tmp/faber-bench-gpt |
        awk '/^tempus passus/ { n = $3; sub(":", "", n); if (n + 0 >= 10) print $4 }' |
        sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m }'
}
# The host is shared and its speed drifts by tens of percent within minutes, so each
# thread count runs ROUNDS rounds of faber, torch, jax back to back; the table gives
# the median of each column over the rounds and the median of the rounds' faber/torch
# ratios (each ratio from runs seconds apart).
ROUNDS="${ROUNDS:-3}"
med() { sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m }'; }
printf "%-8s %10s %10s %10s %12s %s\n" threads faber torch jax faber/torch "rounds (faber/torch)"
for t in 1 2; do
    fs=(); ps=(); js=(); rs=()
    for _ in $(seq "$ROUNDS"); do
        f=$(faber_ms "$t")
        p=$($PY benches/gpt/peers.py torch --threads "$t")
        j=$($PY benches/gpt/peers.py jax --threads "$t")
        fs+=("$f"); ps+=("$p"); js+=("$j"); rs+=("$(echo "scale=3; $f / $p" | bc)")
    done
    printf "%-8s %8s ms %8s ms %8s ms %12s %s\n" "$t" \
        "$(printf "%s\n" "${fs[@]}" | med)" "$(printf "%s\n" "${ps[@]}" | med)" \
        "$(printf "%s\n" "${js[@]}" | med)" "$(printf "%s\n" "${rs[@]}" | med)" "${rs[*]}"
done
