#!/usr/bin/env bash
# RPC benchmark (issue: oslo.messaging over RabbitMQ): call round trip and cast throughput of
# OpenKeel's transport against the real oslo.messaging (Magnum 23.0.0's, from the test venv),
# on the same broker, in all four client/server pairings.
#
#   bench/rpc.sh                      # BENCH_CALLS=2000 BENCH_CASTS=5000 by default
#
# Uses the test services (tests/services/start.sh: RabbitMQ on loopback, the venv); run as
# root like the tests. Results: bench/results/<UTC time>/rpc.jsonl and rpc.md.
# A benchmark, not a test: its figures depend on the machine and on what else runs on it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
CALLS=${BENCH_CALLS:-2000}
CASTS=${BENCH_CASTS:-5000}

. bench/lib.sh # test_services
test_services
URL="${OPENKEEL_TEST_RABBIT_URL/amqp:\/\//rabbit://}"
PY="$OPENKEEL_TEST_VENV/bin/python"
cargo build --release -q -p openkeel-rpc --example rpc_bench --example amqp_pingpong
BIN="${CARGO_TARGET_DIR:-target}/release/examples/rpc_bench"
PINGPONG="${CARGO_TARGET_DIR:-target}/release/examples/amqp_pingpong"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true

server_pid=""
stop_server() { [ -z "$server_pid" ] || { kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; server_pid=""; }; }
trap stop_server EXIT

cmd() { # cmd KIND MODE ARGS...
    local kind=$1
    shift
    case $kind in
        openkeel) echo "$BIN" "$@" ;;
        python) echo "$PY" bench/oslo_rpc_bench.py "$@" ;;
    esac
}

for server in openkeel python; do
    for client in openkeel python; do
        topic="rpc-bench-$server-$client-$$"
        # shellcheck disable=SC2046
        $(cmd "$server" server "$URL" "$topic") >"$OUT/server-$server-$client.log" 2>&1 &
        server_pid=$!
        sleep 3
        # shellcheck disable=SC2046
        line=$($(cmd "$client" client "$URL" "$topic" "$CALLS" "$CASTS"))
        stop_server
        echo "{\"server\": \"$server\", \"client\": \"$client\", \"result\": $line}" | tee -a "$OUT/rpc.jsonl"
    done
done

# The limit: a raw AMQP ping-pong (lapin, no oslo, no confirms, no acks) through the same
# broker, with bodies the size of the echo calls above; then the same with the AMQP of an
# oslo call as OpenKeel speaks it (confirms, mandatory, topic exchange, acks; still no
# envelope or dispatch): crates/rpc/examples/amqp_pingpong.rs.
for mode in raw protocol; do
    queue="rpc-bench-pingpong-$mode-$$"
    arg=""
    [ "$mode" = raw ] || arg=protocol
    # shellcheck disable=SC2086
    "$PINGPONG" server "$URL" "$queue" $arg >"$OUT/server-pingpong-$mode.log" 2>&1 &
    server_pid=$!
    sleep 1
    # shellcheck disable=SC2086
    line=$("$PINGPONG" client "$URL" "$queue" "$CALLS" $arg)
    stop_server
    echo "{\"server\": \"amqp-pingpong-$mode\", \"client\": \"amqp-pingpong-$mode\", \"result\": $line}" | tee -a "$OUT/rpc.jsonl"
done

"$PY" - "$OUT/rpc.jsonl" >"$OUT/rpc.md" <<'PYEOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
limits = {r["server"]: r["result"] for r in rows if r["server"].startswith("amqp-pingpong")}
raw, proto = limits.get("amqp-pingpong-raw"), limits.get("amqp-pingpong-protocol")
print("| server | client | call p50 ms | call p99 ms | calls/s | p50 / raw ping-pong | p50 / protocol ping-pong | casts published/s | casts consumed/s |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for r in rows:
    x = r["result"]
    ratio = lambda l: f"{x['call_p50_ms'] / l['call_p50_ms']:.2f}×" if l else ""
    casts = (f"{x['casts_published_per_s']:.0f} | {x['casts_consumed_per_s']:.0f}"
             if "casts_published_per_s" in x else "– | –")
    print(f"| {r['server']} | {r['client']} | {x['call_p50_ms']:.2f} | {x['call_p99_ms']:.2f} | "
          f"{x['calls_per_s']:.0f} | {ratio(raw)} | {ratio(proto)} | {casts} |")
PYEOF
cat "$OUT/rpc.md"
