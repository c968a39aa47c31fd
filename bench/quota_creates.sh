#!/usr/bin/env bash
# Concurrent cluster creates in one project, with and without a quota (issue 17): the real
# magnum-api 23.0.0 + magnum-conductor (the test venv's) against openkeel-api +
# openkeel-conductor (release build), one after the other in one run, on the same machine,
# test MariaDB and RabbitMQ, each with a stand-in cloud. A benchmark, not a test.
#
#   bench/quota_creates.sh
#
# Environment (defaults in brackets):
#   BENCH_CREATES  POST /v1/clusters sent at once                                       [50]
#   BENCH_LIMIT    [quotas] max_clusters_per_project in the quota case (1000 otherwise)  [30]
#   BENCH_ROUNDS   rounds of both implementations, the order alternating                 [2]
#   BENCH_BUILD    1: cargo build --release the services and the bench                    [1]
#
# What it measures: crates/cli/examples/quota_creates_bench.rs. Results:
# bench/results/<UTC time>/quota_creates.jsonl and quota_creates.md (printed).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
CREATES=${BENCH_CREATES:-50}
LIMIT=${BENCH_LIMIT:-30}
ROUNDS=${BENCH_ROUNDS:-2}

. "$HERE/lib.sh" # test_services
test_services
if [ "${BENCH_BUILD:-1}" = 1 ]; then
    cargo build --release -q -p openkeel --bin openkeel-api --bin openkeel-conductor \
        --example quota_creates_bench >&2
fi
BIN="${CARGO_TARGET_DIR:-target}/release"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true

"$BIN/examples/quota_creates_bench" "$BIN" "$CREATES" "$LIMIT" "$ROUNDS" |
    tee "$OUT/quota_creates.jsonl"

python3 - "$OUT/quota_creates.jsonl" >"$OUT/quota_creates.md" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print("| round | impl | quota | answers | p50 ms | p90 ms | max ms | batch ms | rows in ms | clusters | API CPU ms | conductor CPU ms (rows in) | conductor idle after ms | conductor CPU ms until idle |")
print("|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    answers = ", ".join(f"{n} × {s}" for s, n in r["answers"].items())
    quota = "none" if r["limit"] is None else str(r["limit"])
    clusters = str(r["rows"]) + ("" if r["exact"] is None else (" ✔" if r["exact"] else " ✘"))
    l = r["latency_ms"]
    print(f"| {r['round']} | {r['impl']} | {quota} | {answers} | {l['p50']:.0f} | {l['p90']:.0f} | "
          f"{l['max']:.0f} | {r['batch_ms']:.0f} | {r['rows_in_ms']:.0f} | {clusters} | "
          f"{r['api_cpu_ms']:.0f} | {r['conductor_cpu_ms']:.0f} | {r['conductor_idle_ms']:.0f} | "
          f"{r['conductor_cpu_until_idle_ms']:.0f} |")
PYEOF
cat "$OUT/quota_creates.md"
