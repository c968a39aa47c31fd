#!/usr/bin/env bash
# The conductor's status sweep at scale (issue 14): BENCH_CLUSTERS clusters in progress on the
# simulator driver and MariaDB, BENCH_TICKS status ticks with one conductor and with three.
# A benchmark, not a test.
#
#   bench/status-sweep.sh
#
# Environment (defaults in brackets): BENCH_CLUSTERS [10000], BENCH_TICKS [3]. The services
# must be up (tests/services/start.sh).
#
# What it measures (docs/performance.md, "The status sweep at 10,000 clusters"): per
# conductor and tick the wall time, the CPU time, the SQL statements and the clusters synced;
# the process's resident memory. Results: bench/results/<UTC time>/status-sweep.json.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
eval "$(tests/services/env.sh)"
: "${OPENKEEL_TEST_MYSQL_URL:?MariaDB is not running (tests/services/start.sh)}"
cargo build -q --release -p openkeel-conductor --example status_sweep_bench
out="$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
"${CARGO_TARGET_DIR:-target}"/release/examples/status_sweep_bench "${BENCH_CLUSTERS:-10000}" \
    "${BENCH_TICKS:-3}" | tee "$out/status-sweep.json"
