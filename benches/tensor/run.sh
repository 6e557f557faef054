#!/usr/bin/env bash
# Tensor kernels: faber's runtime (benches/tensor.rs) against numpy on the same
# sizes, side by side, 1 and 2 threads, with ratios (faber ÷ numpy; > 1 means
# faber is faster).
#
#   benches/tensor/run.sh            # full run (~1 min)
#   benches/tensor/run.sh --quick    # shorter timings
#   ROUNDS=5 benches/tensor/run.sh   # best of 5 alternating rounds (default 3)
#
# Needs the bench venv: python3 -m venv benches/.venv &&
#   benches/.venv/bin/pip install numpy mpmath threadpoolctl
# Threads: faber's GEMM and row-parallel kernels use TENSOR_THREADS threads
# (tensor::set_threads); numpy's BLAS is pinned with threadpoolctl.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"
PY="${PY:-benches/.venv/bin/python}"
if [[ ! -x "$PY" ]]; then
    echo "no venv at benches/.venv (see the header of this script)" >&2
    exit 2
fi
extra=("$@")

cargo bench --bench tensor --no-run
bin="$(cargo bench --bench tensor --no-run --message-format=json 2>/dev/null |
    "$PY" -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "tensor" and m.get("executable"):
        print(m["executable"])')"

# Keeps the best (largest; ns/elem: smallest) value seen for a figure.
declare -A R N
keep() {
    local key="$1" val="$2" unit="$3" old="${R[$1]:-}"
    if [[ -z "$old" ]] || awk -v a="$val" -v b="$old" -v u="$unit" \
        'BEGIN{exit !((u ~ /^ns/) ? a < b : a > b)}'; then
        R["$key"]="$val"
    fi
}
# faber and numpy alternate, so load from other processes hits both sides.
for ((round = 0; round < ${ROUNDS:-3}; round++)); do
    for t in 1 2; do
        while read -r name val unit; do
            keep "$t/$name" "$val" "$unit"
            N["$name"]="$unit"
        done < <(TENSOR_THREADS=$t "$bin" "${extra[@]}")
        # Only this command sees the OpenBLAS variables unset.
        while read -r name val unit; do
            keep "np$t/$name" "$val" "$unit"
        done < <(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$PY" "$here/numpy_bench.py" "$t" "${extra[@]}")
    done
done

printf '%-16s %-10s %10s %10s %7s   %10s %10s %7s\n' figure unit "faber/1t" "numpy/1t" ratio "faber/2t" "numpy/2t" ratio
for name in gemm_64 gemm_256 gemm_1024 add_1M softmax_1M gemm_exact_64 gemm_exact_256 tanh_cr gelu exp; do
    [[ -n "${R[1/$name]:-}" ]] || continue
    row=()
    for t in 1 2; do
        f="${R[$t/$name]}"
        n="${R[np$t/$name]:-}"
        if [[ -n "$n" ]]; then
            row+=("$f" "$n" "$(awk -v a="$f" -v b="$n" 'BEGIN{printf "%.2f", a/b}')")
        else
            row+=("$f" "-" "-")
        fi
    done
    printf '%-16s %-10s %10s %10s %7s   %10s %10s %7s\n' "$name" "${N[$name]}" "${row[@]}"
done
