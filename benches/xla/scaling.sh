#!/usr/bin/env bash
# Issue 25's scaling figure: the per-step time of the gpt-shakespeare model's largest
# size (L: 6 layers, 6 heads, width 384, block 256, batch 8) trained data-parallel on
# 1, 2 and 4 devices of the XLA CPU plugin (`faber run --backend xla --devices N
# --precision f32`), with what each run copied to and from the devices, and the
# on-paper estimate of the step's all-reduce on GPUs.
#
#   bash benches/xla/scaling.sh                      (needs scripts/xla-setup.sh once;
#                                                     the script runs it)
#   DEVICES="1 2" ROUNDS=1 WARM=1 TIMED=2 bash benches/xla/scaling.sh   (a quick look)
#   FABER_PJRT_PLUGIN=/path/to/plugin.so bash benches/xla/scaling.sh
#   SPLIT=1 bash benches/xla/scaling.sh              (tensor parallel: the example's
#                                                     copy with the Megatron table below)
#
# A step is the example's (`--time-steps`): draw the batch on the host, the gradient
# companion data-parallel (the batch of 8 split into N shards, the parameters
# replicated, the gradient all-reduced by XLA), the finiteness check and the norm,
# clipping and AdamW replicated on the N devices. Each cell: the median over the
# TIMED steps after WARM warm-up steps (the first step compiles), then the median over
# ROUNDS rounds; each round runs every device count once, back to back. The CPU
# plugin's N devices share the host's cores (`--xla-cpu-devices` presents more than
# its default 4 when DEVICES asks for them), so on a small host no speed-up is to
# be expected: the figure checks the mechanism's overhead, not a GPU's scaling.
#
# With SPLIT=1 the runs use a copy of the example whose faber.toml splits every
# block's wq, wk, wv, wf, bf by columns and wo, wp by rows (`[run.sharding]`,
# docs/xla.md "Tensor parallel"): the batch and those weights split over the N
# devices, the weights' gradients, moments and updates kept split. Each row also
# gives the most bytes the values kept on one device held (`--verbose`).
#
# The estimate (printed last): the gradient is the parameters' size in f32
# (parameters × 4 bytes); a ring all-reduce over N devices sends and receives
# 2·(N − 1)/N of it per device; at a link bandwidth BW (bytes/s per direction,
# default 450e9: NVLink 4 on an H100/H200 SXM, 900 GB/s both ways) that takes
# 2·(N − 1)/N · G / BW. EST_N (default 8) devices.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
FABER="${CARGO_TARGET_DIR:-target}/release/faber"
"$FABER" devices >/dev/null 2>&1 || bash scripts/xla-setup.sh >/dev/null

DEVICES="${DEVICES:-1 2 4}"
ROUNDS="${ROUNDS:-3}"
WARM="${WARM:-2}"
TIMED="${TIMED:-5}"
BW="${BW:-450e9}"
EST_N="${EST_N:-8}"
SIZE="--layers 6 --heads 6 --embd 384 --block 256 --batch 8"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
EXAMPLE=examples/gpt-shakespeare
if [ -n "${SPLIT:-}" ]; then
    EXAMPLE="$OUT/gpt"
    mkdir -p "$EXAMPLE"
    cp -r examples/gpt-shakespeare/src examples/gpt-shakespeare/data examples/gpt-shakespeare/faber.toml "$EXAMPLE/"
    printf '\n[run.sharding]\n"strata.*.wq" = "columns"\n"strata.*.wk" = "columns"\n"strata.*.wv" = "columns"\n"strata.*.wo" = "rows"\n"strata.*.wf" = "columns"\n"strata.*.bf" = "columns"\n"strata.*.wp" = "rows"\n' >>"$EXAMPLE/faber.toml"
fi

med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit } m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.1f\n", m }'; }
m() { printf "%s\n" "$@" | { grep -v '^-\?$' || true; } | med; }
max_n=$(printf "%s\n" $DEVICES | sort -g | tail -1)
cpu_devices=$((max_n > 4 ? max_n : 4))

# one N -> "median_ms bytes_in bytes_out params most_held"
run_one() {
    # shellcheck disable=SC2086
    if ! "$FABER" --verbose run --backend xla --xla-cpu-devices "$cpu_devices" --devices "$1" \
        --precision f32 "$EXAMPLE" -- $SIZE --steps $((WARM + TIMED)) \
        --eval-interval 100000 --sample 0 --time-steps --out "$OUT/faber" \
        >"$OUT/log" 2>"$OUT/err"; then
        echo "faber --devices $1 failed:" >&2
        tail -5 "$OUT/err" >&2
        echo "- - - - -"
        return
    fi
    local ms moved params held
    ms=$(awk -v w="$WARM" '/^tempus passus/ { n = $3; sub(":", "", n); if (n + 0 >= w) print $4 }' "$OUT/log" | med)
    moved=$(sed -n 's/^xla: \([0-9]*\) byte(s) copied to the device, \([0-9]*\) byte(s) back to the host$/\1 \2/p' "$OUT/err")
    params=$(grep -o '[0-9]* parameters' "$OUT/log" | head -1 | cut -d' ' -f1)
    held=$(sed -n 's/^xla: values kept on the devices held at most //p' "$OUT/err" | grep -o '[0-9]* byte' | cut -d' ' -f1 | sort -g | tail -1)
    echo "$ms ${moved:-- -} ${params:--} ${held:--}"
}

echo "faber $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src examples || echo '+changes'), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
"$FABER" devices --xla-cpu-devices "$cpu_devices" 2>/dev/null | sed -n '1,4p'
echo "size L ($SIZE); rounds: $ROUNDS; $WARM warm-up + $TIMED timed steps; ${SPLIT:+tensor parallel ([run.sharding]) and }data parallel"
declare -A ms held
params=-
for _ in $(seq "$ROUNDS"); do
    for n in $DEVICES; do
        read -r t bin bout p h <<<"$(run_one "$n")"
        ms[$n]="${ms[$n]:-} $t"
        held[$n]=$h
        [ "$p" != - ] && params=$p
        echo "round: $n device(s): $t ms/step; $bin B in, $bout B out over the run; at most $h B held on a device" >&2
    done
done
echo
echo "| devices | batch per device | ms per step (median) | ÷ 1 device | rounds | most bytes held on a device |"
echo "|---|---|---|---|---|---|"
one=$(m ${ms[1]:-})
for n in $DEVICES; do
    # shellcheck disable=SC2086
    t=$(m ${ms[$n]})
    r=$(awk -v a="$t" -v b="$one" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f\n", a / b }')
    echo "| $n | $((8 / n)) | $t | $r |${ms[$n]} | ${held[$n]:--} |"
done
echo
if [ "$params" != - ]; then
    awk -v p="$params" -v n="$EST_N" -v bw="$BW" 'BEGIN {
        g = p * 4
        moved = 2 * (n - 1) / n * g
        printf "all-reduce estimate: %d parameters, gradient G = %.1f MB (f32); ring over %d devices: 2·(%d−1)/%d · G = %.1f MB per device; at %.0f GB/s per direction: %.3f ms per step\n", p, g / 1e6, n, n, n, moved / 1e6, bw / 1e9, moved / bw * 1e3
    }'
fi
