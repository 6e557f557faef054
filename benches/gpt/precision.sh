#!/usr/bin/env bash
# Issue 21's comparison: per-step time and peak memory of the gpt-shakespeare model at
# three sizes, faber f32 and f64 against PyTorch eager float32 (the reference attention
# and F.scaled_dot_product_attention) and torch.compile (float32, SDPA), side by side.
#
#   bash benches/gpt/precision.sh                 (needs benches/peers/setup.sh once)
#   SIZES="S M" THREADS="1" ROUNDS=3 COMPILE=0 bash benches/gpt/precision.sh
#
# Sizes (faber … -- --layers L --heads H --embd E --block T --batch B; PyTorch the same):
#   S  2 layers, 4 heads, width 64,  block 64,  batch 16 (the example's default)
#   M  4 layers, 4 heads, width 128, block 64,  batch 12 (nanoGPT's CPU configuration)
#   L  6 layers, 6 heads, width 384, block 256, batch 8  (nanoGPT's Shakespeare model)
# Each cell: the median step time (ms) over the timed steps after warm-up steps (S, M:
# 10 warm-up, 40 timed; L: 3 and 8), then the median over ROUNDS rounds; every round
# runs each contestant once, back to back, so the ratios compare runs seconds apart (the
# host is shared and drifts). Peak RSS (MB) is the process's maximum resident set
# (/usr/bin/time -f %M), the interpreter's and libraries' own memory included, median
# over the rounds. Ratios are faber f32 over each PyTorch column, per round, then the
# median.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
PY=benches/.venv-peers/bin/python
[ -x "$PY" ] || bash benches/peers/setup.sh

SIZES="${SIZES:-S M L}"
THREADS="${THREADS:-1 2}"
ROUNDS="${ROUNDS:-3}"
COMPILE="${COMPILE:-1}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

size_flags() {
    case "$1" in
    S) echo "--layers 2 --heads 4 --embd 64 --block 64 --batch 16" ;;
    M) echo "--layers 4 --heads 4 --embd 128 --block 64 --batch 12" ;;
    L) echo "--layers 6 --heads 6 --embd 384 --block 256 --batch 8" ;;
    esac
}
steps_of() { case "$1" in L) echo "3 8" ;; *) echo "10 40" ;; esac; }
med() { sort -g | awk '{ a[NR] = $1 } END { if (NR == 0) { print "-"; exit } m = (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2; printf "%.2f\n", m }'; }

# "ms rss_mb" of one faber run
faber_run() { # precision threads size
    local warm timed
    read -r warm timed <<<"$(steps_of "$3")"
    # shellcheck disable=SC2046
    /usr/bin/time -f "%M" -o "$OUT/rss" ./target/release/faber --threads "$2" run --precision "$1" \
        examples/gpt-shakespeare -- $(size_flags "$3") --steps $((warm + timed)) \
        --eval-interval 100000 --sample 0 --time-steps --out "$OUT/faber" >"$OUT/log" 2>/dev/null
    local ms
    ms=$(awk -v w="$warm" '/^tempus passus/ { n = $3; sub(":", "", n); if (n + 0 >= w) print $4 }' "$OUT/log" | med)
    echo "$ms $(($(cat "$OUT/rss") / 1024))"
}

torch_run() { # mode threads size
    local warm timed
    read -r warm timed <<<"$(steps_of "$3")"
    # shellcheck disable=SC2046
    if ms=$(/usr/bin/time -f "%M" -o "$OUT/rss" "$PY" benches/gpt/peers.py torch --threads "$2" \
        --dtype float32 --mode "$1" --warmup "$warm" --steps "$timed" $(size_flags "$3") 2>"$OUT/err"); then
        echo "$ms $(($(tail -1 "$OUT/rss") / 1024))"
    else
        echo "- -"
    fi
}

cols=(faber_f32 faber_f64 torch_eager torch_sdpa torch_compile)
printf "%-4s %-3s" size thr
for c in "${cols[@]}"; do printf " %14s" "$c ms/MB"; done
printf " %s\n" "f32/eager f32/sdpa f32/compile"
for t in $THREADS; do
    for s in $SIZES; do
        declare -A ms=() mb=()
        r_eager=() r_sdpa=() r_comp=()
        for _ in $(seq "$ROUNDS"); do
            read -r a1 b1 <<<"$(faber_run f32 "$t" "$s")"
            read -r a2 b2 <<<"$(faber_run f64 "$t" "$s")"
            read -r a3 b3 <<<"$(torch_run eager "$t" "$s")"
            read -r a4 b4 <<<"$(torch_run sdpa "$t" "$s")"
            if [ "$COMPILE" = 1 ] && [ "$s" != L ]; then
                read -r a5 b5 <<<"$(torch_run compile "$t" "$s")"
            else
                a5=-; b5=-
            fi
            ms[faber_f32]+="$a1 "; mb[faber_f32]+="$b1 "
            ms[faber_f64]+="$a2 "; mb[faber_f64]+="$b2 "
            ms[torch_eager]+="$a3 "; mb[torch_eager]+="$b3 "
            ms[torch_sdpa]+="$a4 "; mb[torch_sdpa]+="$b4 "
            ms[torch_compile]+="$a5 "; mb[torch_compile]+="$b5 "
            r_eager+=("$(echo "scale=3; $a1 / $a3" | bc)")
            r_sdpa+=("$(echo "scale=3; $a1 / $a4" | bc)")
            if [ "$a5" != - ]; then r_comp+=("$(echo "scale=3; $a1 / $a5" | bc)"); fi
        done
        printf "%-4s %-3s" "$s" "$t"
        for c in "${cols[@]}"; do
            m=$(tr ' ' '\n' <<<"${ms[$c]}" | { grep -v '^-\?$' || true; } | med)
            r=$(tr ' ' '\n' <<<"${mb[$c]}" | { grep -v '^-\?$' || true; } | med)
            printf " %14s" "$m/${r%.*}"
        done
        printf " %s %s %s   (rounds f32/eager: %s)\n" \
            "$(printf "%s\n" "${r_eager[@]}" | med)" "$(printf "%s\n" "${r_sdpa[@]}" | med)" \
            "$(printf "%s\n" "${r_comp[@]:-}" | { grep -v '^$' || true; } | med)" "${r_eager[*]}"
        unset ms mb
    done
done
