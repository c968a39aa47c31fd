#!/usr/bin/env bash
# The Cluster API driver's status sync at scale (issue 12): BENCH_CLUSTERS clusters
# CREATE_IN_PROGRESS on the test rig's real kube-apiserver and Cluster API manager
# (tests/services/kapi.sh), BENCH_TICKS status ticks over all of them, BENCH_CONCURRENCY at a
# time (the conductor's sync_concurrency). A benchmark, not a test.
#
#   bench/capi-status.sh
#
# Environment (defaults in brackets): BENCH_CLUSTERS [100], BENCH_TICKS [5],
# BENCH_CONCURRENCY [8]. The services must be up (tests/services/start.sh).
#
# What it measures (docs/performance.md, "Cluster API status sync"): Kubernetes API
# requests and the driver's CPU time (the process and its helm children) per cluster per
# tick, a tick's wall time; the same per create (the driver's create_cluster with the real
# helm) and the requests per delete. The clusters are deleted at the end.
# Results: bench/results/<UTC time>/capi-status.json (printed).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
eval "$(tests/services/env.sh)"
: "${OPENKEEL_TEST_KUBECONFIG:?the Kubernetes API rig is not running (tests/services/start.sh)}"
cargo build -q --release -p openkeel-driver-capi --example capi_status_bench
out="$HERE/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
target/release/examples/capi_status_bench "${BENCH_CLUSTERS:-100}" "${BENCH_TICKS:-5}" \
    "${BENCH_CONCURRENCY:-8}" | tee "$out/capi-status.json"
