#!/usr/bin/env bash
# Times `faber check` on generated long chains (docs/robustness.md, "Compile time of
# long chains"). Usage: benches/chain/run.sh [FABER] [LIMIT_S] [KIND:N ...]
# Prints one line per program: kind, N, exit status, wall seconds, CPU seconds
# (user + system: the machine may be shared), peak RSS (MiB).
set -u
faber=${1:-target/release/faber}
limit=${2:-120}
shift 2 2>/dev/null || shift $#
cases=${*:-"si:10000 si:100000 si:1000000 redde:10000 redde:100000 redde:1000000 elige:10000 elige:100000 elige:1000000"}
dir=$(mktemp -d)
here=$(dirname "$0")
printf '%-6s %8s %4s %9s %9s %9s\n' kind N rc wall_s cpu_s peak_MiB
for c in $cases; do
    kind=${c%%:*}
    n=${c##*:}
    python3 "$here/gen.py" "$kind" "$n" > "$dir/p.fab"
    timeout "$limit" /usr/bin/time -v "$faber" check "$dir/p.fab" > /dev/null 2> "$dir/time.txt"
    rc=$?
    secs=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt" |
        awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
    cpu=$(sed -n 's/.*\(User\|System\) time (seconds): //p' "$dir/time.txt" | awk '{ s += $1 } END { print s }')
    kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
    if [ "$rc" = 124 ]; then secs=">$limit"; cpu="?"; kb=0; fi
    printf '%-6s %8s %4s %9s %9s %9s\n' "$kind" "$n" "$rc" "${secs:-?}" "${cpu:-?}" "$(( ${kb:-0} / 1024 ))"
done
rm -rf "$dir"
