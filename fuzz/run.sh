#!/usr/bin/env bash
# Builds the fuzz targets and runs each for SECONDS (default 60), one after another:
#   fuzz/run.sh SECONDS [TARGET…]        (targets: lexer parser check run)
# Seeds fuzz/corpus/<target>/ from the project's own programs, installs cargo-fuzz
# from crates.io when it is missing, prints executions and coverage per target, and
# exits 1 if any target found a crash (a panic, a sanitizer report, or a timeout or
# out-of-memory input of lexer/parser/check; for `run` those two count only with
# FUZZ_STRICT=1, see below) and 2 if the build fails. Failing inputs are saved under
# fuzz/artifacts/<target>/. See docs/robustness.md.
set -uo pipefail

SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(lexer parser check run)

FUZZ_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$FUZZ_DIR/.." && pwd)"
cd "$FUZZ_DIR" || exit 2

# -Zsanitizer=address needs nightly features; let the stable toolchain allow them.
export RUSTC_BOOTSTRAP=1

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "== installing cargo-fuzz (crates.io)"
    cargo install cargo-fuzz --locked || exit 2
fi

# ---- seed corpora (gitignored: fuzz/corpus) ----
seed() {
    local target="$1" dir="$FUZZ_DIR/corpus/$1" src f name
    mkdir -p "$dir"
    for src in tests/run tests/run/fail tests/parse/ok tests/parse/err tests/errors \
        stdlib/src gradus-fab/src; do
        for f in "$ROOT/$src"/*.fab; do
            [ -f "$f" ] || continue
            # Error-matrix programs marked TODO hit a missing limit on purpose.
            grep -qs '^todo:' "${f%.fab}.err" && continue
            name="seed-${src//\//_}-$(basename "$f")"
            [ -e "$dir/$name" ] || cp "$f" "$dir/$name"
        done
    done
    # A multi-module seed for `check` and `run`: `%%% name.fab` starts a module.
    if [ "$target" = check ] || [ "$target" = run ]; then
        {
            cat "$ROOT/tests/errors/16_import_cycle/main.fab"
            for f in a b; do
                echo "%%% $f.fab"
                cat "$ROOT/tests/errors/16_import_cycle/$f.fab"
            done
        } >"$dir/seed-import-cycle.fab"
        {
            printf 'importa ex "./util" privata util\nincipit {\n    nota util.duplex(21)\n}\n'
            printf '%%%%%% util.fab\nfunctio duplex(numerus x) → numerus {\n    redde 2 * x\n}\n'
        } >"$dir/seed-import-ok.fab"
    fi
}

# A dictionary of the grammar's terminals (keywords, glyphs) helps the mutator.
# Every byte is written as \xNN: libFuzzer's dictionary parser takes ASCII only.
dict() {
    local out="$FUZZ_DIR/corpus/faber.dict" word
    mkdir -p "$FUZZ_DIR/corpus"
    {
        grep -o '^ *"[^"]*" => Tok::' "$ROOT/grammar/faber.lalrpop" |
            sed -e 's/^ *"\([^"]*\)" => Tok::$/\1/'
        printf '%s\n' "+++" "incipit" "%%% " "importa ex " "norma:" "gradus:" \
            "@ radix backward " "tf32" "fixum" "varia"
    } | sort -u | while IFS= read -r word; do
        [ -n "$word" ] || continue
        printf '"%s"\n' "$(printf '%s' "$word" | od -An -tx1 | tr -d ' \n' | sed 's/../\\x&/g')"
    done >"$out"
    printf '"\\x0A"\n' >>"$out"
    echo "$out"
}

DICT="$(dict)"
for t in "${TARGETS[@]}"; do seed "$t"; done

echo "== building ${TARGETS[*]} (cargo fuzz build, release + debug assertions, ASan)"
build_start=$(date +%s)
for t in "${TARGETS[@]}"; do
    cargo fuzz build "$t" || exit 2
done
echo "== build took $(( $(date +%s) - build_start )) s"
BIN_DIR="$FUZZ_DIR/target/$(rustc -vV | sed -n 's/^host: //p')/release"

mkdir -p "$FUZZ_DIR/artifacts/logs"
status=0
summary=()
for t in "${TARGETS[@]}"; do
    log="$FUZZ_DIR/artifacts/logs/$t.log"
    echo "== fuzzing $t for ${SECONDS_PER_TARGET} s (log: fuzz/artifacts/logs/$t.log)"
    extra=()
    if [ "$t" = run ]; then
        # Fork mode keeps going past out-of-memory and timeout inputs (saved as
        # artifacts/run/oom-*, timeout-*): the target has a step budget and growth
        # limits, but maps and range values are not capped and one step can be expensive. A panic or a
        # sanitizer error still stops it.
        extra=(-fork=1 -ignore_ooms=1 -ignore_timeouts=1 -ignore_crashes=0)
    fi
    # The binary built above, run directly: `cargo fuzz run` would rebuild first and
    # could pick up a half-edited tree or fail to compile mid-session.
    mkdir -p "$FUZZ_DIR/artifacts/$t"
    "$BIN_DIR/$t" -artifact_prefix="$FUZZ_DIR/artifacts/$t/" \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -dict="$DICT" -print_final_stats=1 "${extra[@]}" "corpus/$t" >"$log" 2>&1
    rc=$?
    # Plain mode: `#N DONE cov: … ft: … corp: N/…` and stat:: lines; fork mode:
    # `#N: cov: … ft: … corp: N exec/s: … oom/timeout/crash: a/b/c time: …`.
    last=$(grep -E '^#[0-9]+:?[[:space:]]' "$log" | grep ' cov: ' | tail -1)
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    [ -n "$execs" ] || execs=$(echo "$last" | grep -o '^#[0-9]*' | tr -d '#')
    rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    [ -n "$rate" ] || rate=$(echo "$last" | grep -o 'exec/s: [0-9]*' | grep -o '[0-9]*')
    cov=$(echo "$last" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$last" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    corp=$(echo "$last" | grep -o 'corp: [0-9]*' | grep -o '[0-9]*')
    ooms=$(echo "$last" | grep -o 'oom/timeout/crash: [0-9/]*' | cut -d' ' -f2)
    # Fork mode with -ignore_ooms/-ignore_timeouts can still end with the exit code of
    # its last job when that job hit the memory or time limit (71 / 70): per the policy
    # above that is a report, not a failure, unless the log shows a crash.
    if [ "$t" = run ] && { [ $rc -eq 71 ] || [ $rc -eq 70 ]; } &&
        ! grep -qE 'panicked at|deadly signal|ERROR: AddressSanitizer' "$log"; then
        kind=oom; [ $rc -eq 70 ] && kind=timeout
        ooms="last job: $kind ($(ls -t "$FUZZ_DIR/artifacts/$t" | grep -m1 -E '^(oom|timeout)-' || true))"
        rc=0
    fi
    if [ $rc -eq 0 ]; then
        verdict="ok"
        if [ -n "$ooms" ] && [ "$ooms" != "0/0/0" ]; then
            verdict="ok, oom/timeout/crash $ooms (missing limits, see docs/robustness.md)"
            [ "${FUZZ_STRICT:-0}" = 1 ] && status=1
        fi
    else
        verdict="FAILED (exit $rc): $(grep -m1 -E 'ERROR: libFuzzer|panicked at|deadly signal|ERROR: AddressSanitizer' "$log")"
        status=1
        grep -E 'Test unit written' "$log" | tail -2
    fi
    summary+=("$(printf '%-7s %5ss  execs %-10s exec/s %-6s cov %-6s ft %-7s corpus %-6s %s' \
        "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")")
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
