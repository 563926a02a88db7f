#!/usr/bin/env bash
# Builds boinc-rs's fuzz targets and runs each for SECONDS (default 30), FUZZ_JOBS at a
# time (default 1): fuzz/run.sh [SECONDS] [TARGET...] (no TARGET: every one in Cargo.toml). Each
# run starts from the target's seeds (fuzz/seeds/TARGET, read only) and the corpus
# earlier runs grew (fuzz/corpus/TARGET, not in git), with its dictionary
# (fuzz/dict/TARGET.dict). With FUZZ_RUNS=N in the environment, a target also stops
# after N executions. Prints each target's executions and executions a second
# (libFuzzer's final stats) and fails if any target crashed, ran out of memory, took
# longer than 10 s on one input, or found a value that does not round-trip; the input
# is kept under fuzz/artifacts/TARGET/. Needs cargo-fuzz, on the machine's own toolchain
# (docs/fuzzing.md).
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-30}"
if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]]; then
    echo "usage: fuzz/run.sh [SECONDS] [TARGET...]; SECONDS is a whole number above 0" >&2
    exit 2
fi
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
    mapfile -t targets < <(cargo fuzz list)
fi

export CARGO_INCREMENTAL=0
# cargo-fuzz passes the compiler unstable flags (the address sanitizer); the machine has
# one toolchain, a stable one, which takes them when told it may.
export RUSTC_BOOTSTRAP=1
# cargo fuzz's default build: optimised, with debug assertions, overflow checks and the
# address sanitizer, so an overflow or a bad access is a crash too. FUZZ_SANITIZER=none
# leaves the sanitizer out (boinc-core forbids unsafe code, so it guards only the
# dependencies' unsafe code) for runs two to four times as fast, built apart so that the
# two builds do not replace each other.
sanitizer="${FUZZ_SANITIZER:-address}"
if ! [[ "$sanitizer" =~ ^(address|leak|memory|thread|none)$ ]]; then
    echo "FUZZ_SANITIZER must be one of address, leak, memory, thread, none" >&2
    exit 2
fi
build_options=(--sanitizer "$sanitizer")
[ "$sanitizer" = address ] || build_options+=(--target-dir "target/sanitizer-$sanitizer")
cargo fuzz build "${build_options[@]}"

# Targets run FUZZ_JOBS at a time (default 1); each still gets its SECONDS.
jobs_at_once="${FUZZ_JOBS:-1}"
if ! [[ "$jobs_at_once" =~ ^[1-9][0-9]*$ ]]; then
    echo "FUZZ_JOBS must be a whole number above 0" >&2
    exit 2
fi
results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT

fuzz_one() {
    local target="$1"
    mkdir -p "corpus/$target" "seeds/$target"
    local log="$results/$target.log"
    local options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    [ -f "dict/$target.dict" ] && options+=(-dict="dict/$target.dict")
    [ -n "${FUZZ_RUNS:-}" ] && options+=(-runs="$FUZZ_RUNS")
    echo "== $target: ${seconds} s (sanitizer: $sanitizer)"
    local status=0
    # libFuzzer stops itself after max_total_time; the outer bound catches a run that
    # cannot (a build or start-up that hangs).
    timeout --kill-after=30 "$((seconds + 600))" \
        cargo fuzz run "${build_options[@]}" "$target" "corpus/$target" "seeds/$target" -- "${options[@]}" \
        >"$log" 2>&1 || status=$?
    local executions per_second line
    executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    per_second="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    line="$(printf '%-22s %12s executions %8s exec/s' "$target" "${executions:-?}" "${per_second:-?}")"
    if ((status != 0)); then
        tail -n 60 "$log"
        line="$line  FAILED (exit $status; input under fuzz/artifacts/$target/)"
        touch "$results/$target.failed"
    fi
    echo "$line"
    echo "$line" >"$results/$target.line"
}

running=0
for target in "${targets[@]}"; do
    fuzz_one "$target" &
    running=$((running + 1))
    if ((running >= jobs_at_once)); then
        wait -n || true
        running=$((running - 1))
    fi
done
wait

summary=()
failed=()
for target in "${targets[@]}"; do
    summary+=("$(cat "$results/$target.line" 2>/dev/null || echo "$target: no result")")
    [ -f "$results/$target.line" ] || failed+=("$target")
    [ -f "$results/$target.failed" ] && failed+=("$target")
done

echo
echo "== fuzzing summary (${seconds} s a target)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz targets that failed: ${failed[*]}" >&2
    exit 1
fi
