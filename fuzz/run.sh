#!/usr/bin/env bash
# Builds boinc-rs's fuzz targets and runs each for SECONDS (default 30), one after the
# other: fuzz/run.sh [SECONDS] [TARGET...] (no TARGET: every one in Cargo.toml). Each
# run starts from the target's seeds (fuzz/seeds/TARGET, read only) and the corpus
# earlier runs grew (fuzz/corpus/TARGET, not in git), with its dictionary
# (fuzz/dict/TARGET.dict). With FUZZ_RUNS=N in the environment, a target also stops
# after N executions. Prints each target's executions and executions a second
# (libFuzzer's final stats) and fails if any target crashed, ran out of memory, took
# longer than 10 s on one input, or found a value that does not round-trip; the input
# is kept under fuzz/artifacts/TARGET/. Needs cargo-fuzz and the nightly toolchain
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
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

export CARGO_INCREMENTAL=0
# cargo fuzz's default build: optimised, with debug assertions, overflow checks and the
# address sanitizer, so an overflow or a bad access is a crash too.
cargo +nightly fuzz build

failed=()
summary=()
for target in "${targets[@]}"; do
    mkdir -p "corpus/$target" "seeds/$target"
    log="$(mktemp)"
    options=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
    [ -f "dict/$target.dict" ] && options+=(-dict="dict/$target.dict")
    [ -n "${FUZZ_RUNS:-}" ] && options+=(-runs="$FUZZ_RUNS")
    echo "== $target: ${seconds} s"
    status=0
    # libFuzzer stops itself after max_total_time; the outer bound catches a run that
    # cannot (a build or start-up that hangs).
    timeout --kill-after=30 "$((seconds + 600))" \
        cargo +nightly fuzz run "$target" "corpus/$target" "seeds/$target" -- "${options[@]}" \
        >"$log" 2>&1 || status=$?
    executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
    per_second="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
    line="$(printf '%-22s %12s executions %8s exec/s' "$target" "${executions:-?}" "${per_second:-?}")"
    if ((status != 0)); then
        tail -n 60 "$log"
        line="$line  FAILED (exit $status; input under fuzz/artifacts/$target/)"
        failed+=("$target")
    fi
    echo "$line"
    summary+=("$line")
    rm -f "$log"
done

echo
echo "== fuzzing summary (${seconds} s a target)"
printf '%s\n' "${summary[@]}"
if ((${#failed[@]})); then
    echo "fuzz targets that failed: ${failed[*]}" >&2
    exit 1
fi
