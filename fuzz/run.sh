#!/usr/bin/env bash
# Builds the fuzz targets and runs each for SECONDS (default 60), one after another:
#   fuzz/run.sh SECONDS [TARGET…]   (targets: lexer parser check run safetensors manifest)
# Seeds fuzz/corpus/<target>/ from the project's own programs, installs cargo-fuzz
# from crates.io when it is missing, prints executions and coverage per target, and
# exits 1 if any target found a crash (a panic, a sanitizer report, or a timeout or
# out-of-memory input of lexer/parser/check; for `run` those two count only with
# FUZZ_STRICT=1, see below) and 2 if the build fails or fuzz/Cargo.lock is out of
# sync with the main Cargo.lock (see check_lock). Failing inputs are saved under
# fuzz/artifacts/<target>/. See docs/robustness.md.
set -uo pipefail

SECONDS_PER_TARGET="${1:-60}"
shift || true
TARGETS=("$@")
ALL_TARGETS=(lexer parser check run safetensors manifest)
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL_TARGETS[@]}")

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
seed_fab() {
    local target="$1" dir="$FUZZ_DIR/corpus/$1" src f name
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

seed() {
    local target="$1" dir="$FUZZ_DIR/corpus/$1" f name
    mkdir -p "$dir"
    case "$target" in
    safetensors)
        # The reader's fixtures: valid files and one of each rejected form.
        for f in "$ROOT"/tests/fixtures/safetensors/*.safetensors \
            "$ROOT"/tests/fixtures/safetensors/cases/*.safetensors; do
            [ -f "$f" ] || continue
            name="seed-$(basename "$f")"
            [ -e "$dir/$name" ] || cp "$f" "$dir/$name"
        done
        ;;
    manifest)
        # Every faber.toml of the repository (packages, examples, the malformed case).
        while IFS= read -r f; do
            name="seed-$(echo "${f#"$ROOT"/}" | tr / _)"
            [ -e "$dir/$name" ] || cp "$f" "$dir/$name"
        done < <(find "$ROOT" -name faber.toml -not -path "$ROOT/target/*" \
            -not -path "$ROOT/fuzz/*" | sort)
        ;;
    *) seed_fab "$target" ;;
    esac
}

# Dictionaries help the mutator: the grammar's terminals (keywords, glyphs) for the
# `.fab` targets, the format's keys and dtype names for safetensors, the manifest's
# tables and keys for faber.toml. Every byte is written as \xNN: libFuzzer's
# dictionary parser takes ASCII only.
dict_words() {
    case "$1" in
    safetensors)
        printf '%s\n' '"dtype"' '"shape"' '"data_offsets"' '"__metadata__"' \
            F64 F32 F16 BF16 I64 I32 I16 I8 U64 U32 U16 U8 BOOL F8_E4M3 C64 \
            '":' '{' '}' '[' ']' ',' 'null' '\u' '18446744073709551615'
        ;;
    manifest)
        printf '%s\n' '[package]' '[paths]' '[reader]' '[locale]' '[build]' '[device]' \
            '[dependencies]' '[library]' 'name = ' 'version = ' 'edition = ' 'source = ' \
            'entry = ' 'locale = ' '"la"' '"""' "'''" '[[' ']]' '= {' '.'
        ;;
    *)
        grep -o '^ *"[^"]*" => Tok::' "$ROOT/grammar/faber.lalrpop" |
            sed -e 's/^ *"\([^"]*\)" => Tok::$/\1/'
        printf '%s\n' "+++" "incipit" "%%% " "importa ex " "norma:" "gradus:" \
            "@ radix backward " "tf32" "fixum" "varia"
        ;;
    esac
}

# Writes the dictionary of one target to fuzz/corpus/<target>.dict; prints its path.
dict() {
    local out="$FUZZ_DIR/corpus/$1.dict" word
    mkdir -p "$FUZZ_DIR/corpus"
    dict_words "$1" | sort -u | while IFS= read -r word; do
        [ -n "$word" ] || continue
        printf '"%s"\n' "$(printf '%s' "$word" | od -An -tx1 | tr -d ' \n' | sed 's/../\\x&/g')"
    done >"$out"
    printf '"\\x0A"\n' >>"$out"
    echo "$out"
}

for t in "${TARGETS[@]}"; do seed "$t"; done

# Longest input libFuzzer generates (seeds longer than this are cut when loaded).
# Without it, libFuzzer takes the longest seed (55 KB, a gradus module): the
# parser-based targets then spent most of their time on a few huge inputs (80-160 ms
# each under ASan) and reached ~100 exec/s. Faber's constructs are short: 4 KB holds
# any of the test programs (p90 1.2 KB) and the front of every library module. See
# docs/robustness.md for the measurements behind these numbers.
max_len() {
    case "$1" in
    manifest) echo 2048 ;;
    *) echo 4096 ;;
    esac
}

# ---- fuzz/Cargo.lock in sync with the main Cargo.lock ----
# The fuzz crate is its own workspace with its own lock file. When faber's
# dependencies change (new, removed or updated crates in Cargo.lock), the committed
# fuzz/Cargo.lock must change with them, or every `cargo fuzz build` rewrites it.
# Two checks: every crate both lock files name has the same version(s) in both, and
# the lock needs no update (`cargo tree --locked`). Fix a failure with
# `cargo update --workspace` in fuzz/ (or `cargo fuzz build` once) and commit the lock.
lock_versions() { # "name version" per package
    awk '/^\[\[package\]\]/ { n = "" }
         /^name = /    { gsub(/"/, "", $3); n = $3 }
         /^version = / { gsub(/"/, "", $3); if (n != "") print n, $3 }' "$1" | sort -u
}
check_lock() {
    local drift
    drift=$(awk 'FNR == 1 { f++ }
        f == 1 { main[$1] = 1; mainv[$0] = 1 }
        f == 2 { fuzz[$1] = 1; fuzzv[$0] = 1 }
        END {
            for (p in mainv) { split(p, a, " "); if (a[1] in fuzz && !(p in fuzzv)) print "  Cargo.lock has " p }
            for (p in fuzzv) { split(p, a, " "); if (a[1] in main && !(p in mainv)) print "  fuzz/Cargo.lock has " p }
        }' <(lock_versions "$ROOT/Cargo.lock") <(lock_versions "$FUZZ_DIR/Cargo.lock") | sort)
    if [ -n "$drift" ]; then
        echo "fuzz/Cargo.lock and Cargo.lock disagree on versions:"
        echo "$drift"
        return 1
    fi
    if ! cargo tree --locked -e normal >/dev/null; then
        echo "fuzz/Cargo.lock is out of date with faber's dependencies (see above)"
        return 1
    fi
}
check_lock || exit 2
lock_before=$(cksum <"$FUZZ_DIR/Cargo.lock")

# Without `-sanitizer-coverage-trace-compares`: its hooks cost a third of the parser's
# time (the `__sanitizer_cov_trace_switch` hook walks all of a switch's cases, and
# LALRPOP's `__reduce` is one switch over every production), while the comparisons it
# reports are mostly the grammar's keywords and glyphs, which the dictionary supplies.
# Reproduce with the binary the run used, e.g. `fuzz/target/sanitizer-none/<host>/release/parser FILE`
# (or `cargo fuzz run --no-trace-compares -s none --target-dir target/sanitizer-none parser FILE`).
BUILD_FLAGS=(--no-trace-compares)

# Two builds. `lexer`, `parser` and `check` run faber's own safe Rust (a panic, a failed
# assertion, an overflow or a stack overflow aborts and is a crash either way; the
# signal stack of fuzz_targets/altstack.rs lets libFuzzer report and save a stack
# overflow without ASan), and AddressSanitizer cost them about 80 % of their time: they
# are built with `--sanitizer none` into fuzz/target/sanitizer-none/. `run` (the tensor
# kernels' `unsafe` code), `safetensors` (the byte converters') and `manifest` (the TOML
# parser's dependencies) keep ASan, in fuzz/target/ as before. FUZZ_SANITIZER=address
# (or none) builds and runs every target with that one, e.g. for long runs that should
# also catch memory errors in the lexer's and parser's dependencies.
sanitizer() {
    if [ -n "${FUZZ_SANITIZER:-}" ]; then
        echo "$FUZZ_SANITIZER"
        return
    fi
    case "$1" in
    lexer | parser | check) echo none ;;
    *) echo address ;;
    esac
}
target_dir() {
    case "$(sanitizer "$1")" in
    address) echo "$FUZZ_DIR/target" ;;
    *) echo "$FUZZ_DIR/target/sanitizer-$(sanitizer "$1")" ;;
    esac
}
# mimalloc as the Rust allocator (fuzz_targets/mialloc.rs, the faber CLI's allocator) in
# the plain build only: ASan must keep its own malloc to see the Rust allocations.
features() {
    case "$(sanitizer "$1")" in
    none) echo --features=mimalloc ;;
    esac
}
HOST="$(rustc -vV | sed -n 's/^host: //p')"
build_start=$(date +%s)
for t in "${TARGETS[@]}"; do
    echo "== building $t (cargo fuzz build ${BUILD_FLAGS[*]} -s $(sanitizer "$t") $(features "$t"): release + debug assertions)"
    # shellcheck disable=SC2046 # features: no word or one
    cargo fuzz build "${BUILD_FLAGS[@]}" -s "$(sanitizer "$t")" $(features "$t") \
        --target-dir "$(target_dir "$t")" "$t" ||
        exit 2
done
echo "== build took $(( $(date +%s) - build_start )) s"
if [ "$(cksum <"$FUZZ_DIR/Cargo.lock")" != "$lock_before" ]; then
    echo "the build rewrote fuzz/Cargo.lock: commit the new one (see check_lock above)"
    exit 2
fi

# ---- the working corpus on a RAM disk ----
# libFuzzer writes every input that reaches a new feature to the corpus directory, and
# deletes the ones it replaces by shorter ones: from the seeds, thousands of small
# files in a minute. On this machine's disk that was a quarter of the plain `parser`
# target's CPU time (ext4 allocating inodes, in the kernel). So each target fuzzes a
# copy of fuzz/corpus/<target>/ under /dev/shm (FUZZ_WORKDIR overrides; set it to
# "none" to fuzz fuzz/corpus/ in place), and sync_corpus mirrors the copy back when the
# target stops, whatever its exit code: a crash (its input is written straight to
# fuzz/artifacts/<target>/, never to the copy) keeps the inputs found before it. The
# EXIT trap syncs too, so an interrupted run (Ctrl-C) keeps them; a killed machine
# loses only that session's additions.
WORKROOT="${FUZZ_WORKDIR:-/dev/shm}"
if [ "$WORKROOT" != none ] && ! { [ -d "$WORKROOT" ] && [ -w "$WORKROOT" ]; }; then
    WORKROOT=none
fi
work_dir="" # the copy of the target running now; "" when none
work_target=""
sync_corpus() {
    [ -n "$work_dir" ] || return 0
    local saved="$FUZZ_DIR/corpus/$work_target" f before
    before=$(find "$saved" -maxdepth 1 -type f | wc -l)
    # New inputs in, replaced ones out (libFuzzer deletes only files it wrote itself).
    cp -p -r -n "$work_dir"/. "$saved"/ 2>/dev/null || true
    (cd "$saved" && for f in *; do [ -e "$work_dir/$f" ] || rm -f -- "$f"; done)
    echo "== corpus/$work_target synced from $work_dir: $before -> $(find "$saved" -maxdepth 1 -type f | wc -l) inputs"
    rm -rf -- "$work_dir"
    work_dir=""
}
trap 'sync_corpus' EXIT
trap 'exit 130' INT TERM

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
    if [ "$t" = parser ] || [ "$t" = check ]; then
        # Without the entropic power schedule: keeping its per-input frequencies of
        # rare features up to date was over half of these two targets' CPU time once
        # ASan was gone (an input runs thousands of the parser's edges); without it
        # they ran about twice the inputs per CPU-second and reached the same or more
        # coverage in the same time. See docs/robustness.md § Throughput.
        extra+=(-entropic=0)
    fi
    # Extra libFuzzer flags for every target, after the ones above (a later flag wins),
    # e.g. FUZZ_FLAGS=-entropic=1 for a long run.
    read -r -a user_flags <<<"${FUZZ_FLAGS:-}"
    extra+=("${user_flags[@]}")
    # The binary built above, run directly: `cargo fuzz run` would rebuild first and
    # could pick up a half-edited tree or fail to compile mid-session.
    mkdir -p "$FUZZ_DIR/artifacts/$t"
    corpus="corpus/$t"
    if [ "$WORKROOT" != none ] && work_dir=$(mktemp -d "$WORKROOT/faber-fuzz-$t.XXXXXX"); then
        work_target="$t"
        cp -p -r "$FUZZ_DIR/corpus/$t"/. "$work_dir"/
        corpus="$work_dir"
    else
        work_dir=""
    fi
    "$(target_dir "$t")/$HOST/release/$t" -artifact_prefix="$FUZZ_DIR/artifacts/$t/" \
        -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 \
        -dict="$(dict "$t")" -max_len="$(max_len "$t")" -print_final_stats=1 "${extra[@]}" "$corpus" >"$log" 2>&1
    rc=$?
    sync_corpus
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
    summary+=("$(printf '%-11s %5ss  execs %-10s exec/s %-6s cov %-6s ft %-7s corpus %-6s %s' \
        "$t" "$SECONDS_PER_TARGET" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$verdict")")
done

echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
