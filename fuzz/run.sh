#!/usr/bin/env bash
# Long fuzzing runs (issue 16; figures in docs/reliability.md "Fuzzing"):
#
#   fuzz/run.sh [SECONDS] [TARGET...]     default: 600 s each, every target, one at a time
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Each target starts
# from its committed corpus (fuzz/corpus/<target>, read only) and writes what it finds to a
# scratch corpus under $FUZZ_WORK (default /tmp/openkeel-fuzz); crashes, timeouts and
# out-of-memory inputs land in fuzz/artifacts/<target>/. Limits: 2 GiB RSS, 5 s per input.
# With MERGE=1 the inputs that add coverage are merged into the committed corpus afterwards
# (libFuzzer's -merge=1, as `cargo fuzz cmin` does). The log of each run, with libFuzzer's
# final statistics (executions, exec/s, peak RSS, coverage), is $FUZZ_WORK/<target>.log.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
SECS="${1:-600}"
shift || true
ALL=(pyvalue config patch policy_rule policy_file token_body oslo_message versioned_object csr)
TARGETS=("${@:-${ALL[@]}}")
WORK="${FUZZ_WORK:-/tmp/openkeel-fuzz}"
mkdir -p "$WORK"
cargo +nightly fuzz build -O --fuzz-dir .
status=0
for t in "${TARGETS[@]}"; do
    mkdir -p "$WORK/corpus/$t"
    printf '==> %s: %s s\n' "$t" "$SECS" >&2
    start=$SECONDS
    if ! cargo +nightly fuzz run -O --fuzz-dir . "$t" "$WORK/corpus/$t" "corpus/$t" -- \
        -max_total_time="$SECS" -rss_limit_mb=2048 -timeout=5 -print_final_stats=1 \
        >"$WORK/$t.log" 2>&1; then
        echo "$t: FAILED (see $WORK/$t.log and fuzz/artifacts/$t/)" >&2
        status=1
    fi
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)|^#[0-9]+.*DONE' \
        "$WORK/$t.log" | sed "s/^/$t: /" >&2 || true
    echo "$t: $((SECONDS - start)) s" >&2
    if [ "${MERGE:-0}" = 1 ]; then
        cargo +nightly fuzz run -O --fuzz-dir . "$t" -- -merge=1 "corpus/$t" "$WORK/corpus/$t" \
            >>"$WORK/$t.log" 2>&1
    fi
done
exit "$status"
