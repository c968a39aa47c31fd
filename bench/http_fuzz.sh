#!/usr/bin/env bash
# HTTP fuzzing drill (issue 16, "hostile input"): bench/http_fuzz.py against
#   (a) the all-in-one `openkeel` (SQLite, noauth, simulator, in-process RPC) and
#   (b) the split `openkeel-conductor` + `openkeel-api` on the test MariaDB and RabbitMQ
#       (the configuration of crates/cli/tests/common/split.rs),
# each fuzzed with HTTPFUZZ_REQUESTS requests across all 38 routes and microversions 1.1-1.14
# (and invalid version headers). A target passes when: no answer >= 500, every 4xx body is
# Magnum's error envelope, no request hangs (client timeout), the process is alive at the end,
# and its database is consistent once the conductor had time (no cluster without its two
# default nodegroups, no nodegroup without its cluster, no cluster or nodegroup stuck in
# *_IN_PROGRESS, no duplicate or negative quota).
#
#   bench/http_fuzz.sh            # both targets
#   bench/http_fuzz.sh allinone   # one of them: allinone | split
#
# Environment (defaults in brackets):
#   HTTPFUZZ_REQUESTS  requests per target                                      [100000]
#   HTTPFUZZ_WORKERS   concurrent connections                                   [8]
#   HTTPFUZZ_SEED      generator seed (deterministic request sequence per worker) [1]
#   HTTPFUZZ_BUILD     1: cargo build the three binaries first                 [1]
#   HTTPFUZZ_PROFILE   cargo profile directory of the binaries (debug|release)  [debug]
# Needs the test services for (b) (eval "$(tests/services/env.sh)"; they are not started here).
# Results: bench/results/<UTC time>/http_fuzz-<target>.json (summary) and
# http_fuzz-<target>.findings.jsonl, printed at the end.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
REQUESTS=${HTTPFUZZ_REQUESTS:-100000}
WORKERS=${HTTPFUZZ_WORKERS:-8}
SEED=${HTTPFUZZ_SEED:-1}
PROFILE=${HTTPFUZZ_PROFILE:-debug}
TARGETS=${1:-allinone split}

if [ "${HTTPFUZZ_BUILD:-1}" = 1 ]; then
    flag=""
    [ "$PROFILE" = release ] && flag=--release
    cargo build -q $flag -p openkeel --bin openkeel --bin openkeel-api --bin openkeel-conductor \
        --bin openkeel-db-manage >&2
fi
BIN="${CARGO_TARGET_DIR:-target}/$PROFILE"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true
RUN=$(mktemp -d)
PIDS=()
MDB=""

mysql_args() { # the test MariaDB's client arguments from OPENKEEL_TEST_MYSQL_URL
    python3 - "$OPENKEEL_TEST_MYSQL_URL" <<'EOF'
import sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
print(f"--host={u.hostname} --port={u.port or 3306} --user={u.username} "
      f"--password={urllib.parse.unquote(u.password or '')}")
EOF
}
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    if [ -n "$MDB" ]; then
        # shellcheck disable=SC2046
        mysql $(mysql_args) -e "DROP DATABASE IF EXISTS \`$MDB\`" 2>/dev/null || true
    fi
    rm -rf "$RUN"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() { # wait_port PORT PID
    for _ in $(seq 1 300); do
        if ! kill -0 "$2" 2>/dev/null; then echo "process $2 exited before listening" >&2; return 1; fi
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),1)" 2>/dev/null; then return 0; fi
        sleep 0.2
    done
    echo "port $1 never opened" >&2
    return 1
}

# sql QUERY: rows of the target's database, tab-separated (sqlite3 / mysql client)
sql() {
    if [ "$KIND" = allinone ]; then
        sqlite3 -separator $'\t' "$RUN/allinone/openkeel.sqlite" "$1"
    else
        # shellcheck disable=SC2046
        mysql $(mysql_args) -N -B "$MDB" -e "$1" 2>/dev/null
    fi
}

# The consistency checks of bench/http_fuzz_consistency.sql; prints one line per violation.
consistency() {
    grep -v '^--' bench/http_fuzz_consistency.sql | tr '\n' ' ' | tr ';' '\n' | while read -r q; do
        if [ -n "${q// /}" ]; then sql "$q"; fi
    done
}

start_allinone() {
    mkdir -p "$RUN/allinone"
    printf '[openkeel]\nstatus_sync_interval = 1\n' >"$RUN/allinone/extra.conf"
    PORT=$(free_port)
    "$BIN/openkeel" --data-dir "$RUN/allinone" --bind "127.0.0.1:$PORT" \
        --config-file "$RUN/allinone/extra.conf" >"$OUT/allinone.log" 2>&1 &
    API_PID=$!
    COND_PID=$API_PID
    PIDS+=("$API_PID")
    wait_port "$PORT" "$API_PID"
}

start_split() {
    eval "$(tests/services/env.sh 2>/dev/null)"
    if [ -z "${OPENKEEL_TEST_MYSQL_URL:-}" ] || [ -z "${OPENKEEL_TEST_RABBIT_URL:-}" ]; then
        echo "split target needs the test MariaDB and RabbitMQ (tests/services/env.sh)" >&2
        return 1
    fi
    MDB="okfuzz_$$"
    # shellcheck disable=SC2046
    mysql $(mysql_args) -e "CREATE DATABASE \`$MDB\` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    local exchange="okfuzz-$$" rabbit
    rabbit=${OPENKEEL_TEST_RABBIT_URL/amqp:\/\//rabbit://}
    mkdir -p "$RUN/split"
    PORT=$(free_port)
    cat >"$RUN/split/magnum.conf" <<EOF
[DEFAULT]
transport_url = $rabbit
control_exchange = $exchange
rpc_response_timeout = 30
host = okfuzz-conductor
[api]
host = 127.0.0.1
port = $PORT
[conductor]
topic = $exchange-conductor
[database]
connection = $OPENKEEL_TEST_MYSQL_URL/$MDB
[certificates]
cert_manager_type = x509keypair
[openkeel]
auth_strategy = noauth
rpc_transport = rabbit
enable_simulator_driver = true
simulated_cloud = true
status_sync_interval = 1
EOF
    "$BIN/openkeel-db-manage" --config-file "$RUN/split/magnum.conf" upgrade >"$OUT/split-db-manage.log" 2>&1
    "$BIN/openkeel-conductor" --config-file "$RUN/split/magnum.conf" >"$OUT/split-conductor.log" 2>&1 &
    COND_PID=$!
    PIDS+=("$COND_PID")
    "$BIN/openkeel-api" --config-file "$RUN/split/magnum.conf" >"$OUT/split-api.log" 2>&1 &
    API_PID=$!
    PIDS+=("$API_PID")
    wait_port "$PORT" "$API_PID"
}

FAILED=0
for KIND in $TARGETS; do
    echo "[http_fuzz] $KIND: starting" >&2
    "start_$KIND"
    echo "[http_fuzz] $KIND: $REQUESTS requests, $WORKERS workers, seed $SEED" >&2
    rc=0
    python3 bench/http_fuzz.py --base "127.0.0.1:$PORT" --requests "$REQUESTS" --workers "$WORKERS" \
        --seed "$SEED" --tag "fz$KIND" --findings "$OUT/http_fuzz-$KIND.findings.jsonl" \
        >"$OUT/http_fuzz-$KIND.json" || rc=$?
    cat "$OUT/http_fuzz-$KIND.json"
    [ "$rc" = 0 ] || { echo "[http_fuzz] $KIND: findings (exit $rc), see $OUT/http_fuzz-$KIND.findings.jsonl" >&2; FAILED=1; }
    for p in "$API_PID" "$COND_PID"; do
        kill -0 "$p" 2>/dev/null || { echo "[http_fuzz] $KIND: process $p died" >&2; FAILED=1; }
    done
    # The conductor's status loop finishes what the fuzzer started (deletes, resizes, ...).
    bad=""
    for _ in $(seq 1 90); do
        bad=$(consistency)
        [ -z "$bad" ] && break
        sleep 1
    done
    if [ -n "$bad" ]; then
        echo "[http_fuzz] $KIND: database inconsistent:" >&2
        echo "$bad" | tee "$OUT/http_fuzz-$KIND.db.txt" >&2
        FAILED=1
    else
        echo "[http_fuzz] $KIND: database consistent" >&2
    fi
    for p in "$API_PID" "$COND_PID"; do kill "$p" 2>/dev/null || true; done
    for p in "$API_PID" "$COND_PID"; do wait "$p" 2>/dev/null || true; done
    if grep -q "panicked" "$OUT/"*.log 2>/dev/null; then
        echo "[http_fuzz] $KIND: a panic in the logs" >&2
        grep -h "panicked" "$OUT/"*.log | head -5 >&2
        FAILED=1
    fi
done
echo "[http_fuzz] results in $OUT" >&2
exit "$FAILED"
