#!/usr/bin/env bash
# Issue 24's comparison: per-step time of the gpt-shakespeare model at three sizes, faber
# on the XLA CPU plugin (`--backend xla --precision f32`) against faber's own kernels
# (`--backend cpu --precision f32`), PyTorch eager float32 and jax.jit float32 (the same
# model, benches/gpt/peers.py), side by side; with the XLA run's compile time and
# compile-cache hits and misses.
#
#   bash benches/xla/run.sh                    (needs benches/peers/setup.sh and
#                                               scripts/xla-setup.sh once; run.sh runs them)
#   SIZES="S M" THREADS="1" ROUNDS=1 bash benches/xla/run.sh
#   FABER_PJRT_PLUGIN=/path/to/plugin.so bash benches/xla/run.sh
#
# Sizes (faber … -- --layers L --heads H --embd E --block T --batch B; the peers the same),
# as benches/gpt/precision.sh:
#   S  2 layers, 4 heads, width 64,  block 64,  batch 16 (the example's default)
#   M  4 layers, 4 heads, width 128, block 64,  batch 12 (nanoGPT's CPU configuration)
#   L  6 layers, 6 heads, width 384, block 256, batch 8  (nanoGPT's Shakespeare model)
# A step is the same work everywhere: draw the batch, forward, backward, gradient
# clipping, AdamW update. faber's step is timed by the example (`--time-steps`), the
# peers' by peers.py. Each cell: the median step time (ms) over the timed steps after
# warm-up steps (S, M: 10 warm-up, 40 timed; L: 3 and 8), then the median over ROUNDS
# rounds; every round runs each contestant once, back to back, so the ratios compare runs
# seconds apart (the host is shared and drifts). Ratios are faber xla over each other
# column, per round, then the median.
#
# Threads, T in THREADS (the cores any contestant may use):
#   - every contestant runs under `taskset -c 0,…,T-1`: the process may run on T CPUs
#     only, whatever threads it starts. This is the bound for XLA: its CPU client
#     (in the plugin and in jaxlib) sizes its intra-op thread pool by the CPUs the
#     process may run on (tsl::port::NumSchedulableCPUs, sched_getaffinity), and no
#     XLA_FLAGS flag sets that size (`intra_op_parallelism_threads` is not an XLA flag:
#     written with dashes XLA_FLAGS stops the process, without them it is passed over);
#   - faber: `--threads T` (its kernels' pool; with `--backend xla` it runs what stays
#     on the host: the optimizer, the batches);
#   - PyTorch: torch.set_num_threads(T) (peers.py --threads);
#   - XLA (faber's plugin run and JAX): XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
#     at T = 1 (Eigen's matmuls on the calling thread), XLA's default (true) above.
#     A caller's XLA_FLAGS is appended to these.
#
# XLA compile: "first − steady" is the XLA run's first step minus its median timed
# step (the first step traces, lowers and compiles the gradient program); "compiling
# calls" is the wall time of the offloaded calls that compiled (tracing, lowering,
# compiling and that call's run), from `faber --verbose run`, whose line "xla: compile
# cache: M miss(es) (programs compiled), H hit(s)" gives the cache columns (over the
# whole run). jax.jit's first step, which traces and compiles its step, is shown beside.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet
FABER="${CARGO_TARGET_DIR:-target}/release/faber"
PY=benches/.venv-peers/bin/python
[ -x "$PY" ] || bash benches/peers/setup.sh
"$FABER" devices >/dev/null 2>&1 || bash scripts/xla-setup.sh >/dev/null

SIZES="${SIZES:-S M L}"
THREADS="${THREADS:-1 2}"
ROUNDS="${ROUNDS:-3}"
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
cpus_of() { seq -s, 0 $(($1 - 1)); }
xla_flags_of() {
    local f=--xla_cpu_multi_thread_eigen=true
    [ "$1" = 1 ] && f=--xla_cpu_multi_thread_eigen=false
    echo "$f ${XLA_FLAGS:-}"
}
m() { printf "%s\n" "$@" | { grep -v '^-\?$' || true; } | med; }
ratio() { if [ "$1" = - ] || [ "$2" = - ]; then echo -; else awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; fi; }

# faber BACKEND THREADS SIZE -> "median_ms first_ms misses hits compiling_ms"
faber_run() {
    local warm timed
    read -r warm timed <<<"$(steps_of "$3")"
    # shellcheck disable=SC2046
    if ! XLA_FLAGS="$(xla_flags_of "$2")" taskset -c "$(cpus_of "$2")" "$FABER" --verbose \
        --threads "$2" run --backend "$1" --precision f32 examples/gpt-shakespeare -- \
        $(size_flags "$3") --steps $((warm + timed)) --eval-interval 100000 --sample 0 \
        --time-steps --out "$OUT/faber" >"$OUT/log" 2>"$OUT/err"; then
        echo "faber --backend $1 failed at $3, $2 thread(s):" >&2
        tail -5 "$OUT/err" >&2
        echo "- - - - -"
        return
    fi
    local ms first cache
    ms=$(awk -v w="$warm" '/^tempus passus/ { n = $3; sub(":", "", n); if (n + 0 >= w) print $4 }' "$OUT/log" | med)
    first=$(awk '/^tempus passus 0:/ { print $4 }' "$OUT/log")
    cache=$(sed -n 's/^xla: compile cache: \([0-9]*\) miss(es) (programs compiled), \([0-9]*\) hit(s); the calls that compiled took \([0-9.]*\) ms$/\1 \2 \3/p' "$OUT/err")
    echo "$ms ${first:--} ${cache:-- - -}"
}

# peers.py PEER THREADS SIZE -> "median_ms [first_ms]"
peer_run() {
    local warm timed extra=()
    read -r warm timed <<<"$(steps_of "$3")"
    [ "$1" = jax ] && extra=(--first)
    # shellcheck disable=SC2046
    if ! XLA_FLAGS="$(xla_flags_of "$2")" taskset -c "$(cpus_of "$2")" "$PY" benches/gpt/peers.py \
        "$1" --threads "$2" --dtype float32 --warmup "$warm" --steps "$timed" "${extra[@]}" \
        $(size_flags "$3") 2>"$OUT/err"; then
        echo "peers.py $1 failed at $3, $2 thread(s):" >&2
        tail -5 "$OUT/err" >&2
        echo "- -"
    fi
}

echo "faber $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src examples || echo '+changes'), $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
"$FABER" devices 2>&1 | sed -n '1,3p'
echo "rounds: $ROUNDS; S, M: 10 warm-up + 40 timed steps; L: 3 + 8"
for t in $THREADS; do
    echo
    echo "**$t thread(s)** (taskset -c $(cpus_of "$t"); XLA_FLAGS=$(xla_flags_of "$t" | sed 's/ *$//')); ms per step, medians:"
    echo
    echo "| size | faber xla | faber cpu | PyTorch eager | jax.jit | xla ÷ cpu | xla ÷ torch | xla ÷ jax | xla first − steady (ms) | compiling calls (ms) | cache misses / hits | jax first step (ms) |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
    notes=""
    for s in $SIZES; do
        x=() c=() p=() j=() rc=() rp=() rj=() comp=() calls=() jf=() miss=() hit=()
        for _ in $(seq "$ROUNDS"); do
            read -r a first m h cc <<<"$(faber_run xla "$t" "$s")"
            read -r b _ <<<"$(faber_run cpu "$t" "$s")"
            read -r e _ <<<"$(peer_run torch "$t" "$s")"
            read -r f ff <<<"$(peer_run jax "$t" "$s")"
            x+=("$a") c+=("$b") p+=("$e") j+=("$f") jf+=("${ff:--}")
            rc+=("$(ratio "$a" "$b")") rp+=("$(ratio "$a" "$e")") rj+=("$(ratio "$a" "$f")")
            if [ "$a" != - ] && [ "$first" != - ]; then
                comp+=("$(awk -v a="$first" -v b="$a" 'BEGIN { printf "%.2f\n", a - b }')")
            fi
            calls+=("$cc") miss+=("$m") hit+=("$h")
        done
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n" "$s" \
            "$(m "${x[@]}")" "$(m "${c[@]}")" "$(m "${p[@]}")" "$(m "${j[@]}")" \
            "$(m "${rc[@]}")" "$(m "${rp[@]}")" "$(m "${rj[@]}")" "$(m "${comp[@]:--}")" \
            "$(m "${calls[@]}")" "$(m "${miss[@]}" | sed 's/\.00$//')" \
            "$(m "${hit[@]}" | sed 's/\.00$//')" "$(m "${jf[@]}")"
        notes+="$s per round: xla ÷ cpu ${rc[*]}; xla ÷ torch ${rp[*]}; xla ÷ jax ${rj[*]}"$'\n'
    done
    echo
    printf "%s" "$notes"
done
