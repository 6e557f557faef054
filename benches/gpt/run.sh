#!/usr/bin/env bash
# Per-step time of the default gpt-shakespeare configuration (2 layers, 4 heads, width 64,
# block 64, batch 16): faber vs PyTorch eager float64 vs jax.jit float64, at 1 and 2
# threads, median of 50 steps after 10 warm-up steps, same data and batch sequence.
#   bash benches/gpt/run.sh            (needs benches/peers/setup.sh once)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
PY=benches/.venv-peers/bin/python
[ -x "$PY" ] || bash benches/peers/setup.sh
faber_ms() {
    ./target/release/faber --threads "$1" run examples/gpt-shakespeare -- \
        --steps 60 --eval-interval 1000 --sample 0 --time-steps --out /tmp/faber-bench-gpt |
        awk '/^tempus passus/ { n = $3; sub(":", "", n); if (n >= 10) print $4 }' |
        sort -g | awk '{ a[NR] = $1 } END { m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m }'
}
printf "%-8s %10s %10s %10s %12s\n" threads faber torch jax faber/torch
for t in 1 2; do
    f=$(faber_ms "$t")
    p=$($PY benches/gpt/peers.py torch --threads "$t")
    j=$($PY benches/gpt/peers.py jax --threads "$t")
    printf "%-8s %8s ms %8s ms %8s ms %12s\n" "$t" "$f" "$p" "$j" "$(echo "scale=2; $f / $p" | bc)"
done
