#!/usr/bin/env bash
# Memory at rest (issue 17): openkeel-api + openkeel-conductor (release build) against the real
# magnum-api + magnum-conductor 23.0.0 (the test venv's), one pair after the other, on the same
# machine, test MariaDB database (fresh, migrated by the real magnum-db-manage) and RabbitMQ,
# from one magnum.conf. A benchmark, not a test.
#
#   bench/memory_at_rest.sh
#
# Environment (defaults in brackets):
#   BENCH_SETTLE   seconds each pair runs before it is measured (periodic tasks on)      [60]
#   BENCH_BUILD    1: cargo build --release the two programs                              [1]
#   BENCH_IMPLS    which pairs to run: "openkeel", "magnum" or both          [openkeel magnum]
#
# Each pair is started, answers `GET /` once, then runs BENCH_SETTLE seconds at rest (the
# conductor's periodic tasks, heartbeats and RPC servers running; no clusters), and then the
# resident memory of every process of each program is read (`/proc/<pid>/status` VmRSS and
# VmHWM, `smaps_rollup` Pss; bench/benchlib.py mem). Magnum's programs run with one worker
# each (`[api] workers = 1`, `[conductor] workers = 1`), their smallest configuration; a
# deployment runs more (kolla: one per core, up to 5). Results:
# bench/results/<UTC time>/memory_at_rest.jsonl (printed), and where each process's resident
# memory is (smaps-<impl>.json: the executable's pages, libraries, heap, anonymous mappings,
# stacks, threads; bench/benchlib.py smaps).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
SETTLE=${BENCH_SETTLE:-60}
eval "$(tests/services/env.sh 2>/dev/null)"
: "${OPENKEEL_TEST_MYSQL_URL:?MariaDB is not running (tests/services/start.sh)}"
: "${OPENKEEL_TEST_RABBIT_URL:?RabbitMQ is not running (tests/services/start.sh)}"
PY="$OPENKEEL_TEST_VENV/bin/python"
if [ "${BENCH_BUILD:-1}" = 1 ]; then
    cargo build --release -q -p openkeel --bin openkeel-api --bin openkeel-conductor >&2
fi
BIN="${CARGO_TARGET_DIR:-target}/release"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true
RUN=$(mktemp -d)
DB=okbench_rest_$$
TAG=okbench-rest-$$
PORT=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
PIDS=()

. "$HERE/lib.sh" # mdb, magnum_noauth_paste
stop_all() {
    for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null || true; done
    sleep 2
    for p in "${PIDS[@]}"; do kill -KILL -- "-$p" 2>/dev/null || kill -KILL "$p" 2>/dev/null || true; done
    PIDS=()
}
cleanup() {
    stop_all
    mdb "DROP DATABASE IF EXISTS \`$DB\`" || true
    rm -rf "$RUN"
}
trap cleanup EXIT

mdb "CREATE DATABASE \`$DB\` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
URL="${OPENKEEL_TEST_MYSQL_URL%/}/$DB"
mkdir -p "$RUN/state" "$RUN/lock"
cat >"$RUN/magnum.conf" <<EOF
[DEFAULT]
host = $TAG
transport_url = ${OPENKEEL_TEST_RABBIT_URL/amqp:\/\//rabbit://}
control_exchange = $TAG
state_path = $RUN/state
debug = False
[api]
host = 127.0.0.1
port = $PORT
api_paste_config = $RUN/api-paste.ini
workers = 1
[conductor]
topic = $TAG-conductor
workers = 1
[database]
connection = ${URL/mysql:/mysql+pymysql:}?charset=utf8
[certificates]
cert_manager_type = x509keypair
[oslo_concurrency]
lock_path = $RUN/lock
[oslo_policy]
enforce_scope = false
enforce_new_defaults = false
[openkeel]
auth_strategy = noauth
rpc_transport = rabbit
enable_simulator_driver = true
simulated_cloud = true
EOF
# magnum-api without Keystone (tests/support/magnum.rs does the same)
magnum_noauth_paste "$RUN/api-paste.ini" okt-admin okt-project
"$OPENKEEL_TEST_VENV/bin/magnum-db-manage" --config-file "$RUN/magnum.conf" upgrade \
    >"$RUN/db-manage.log" 2>&1 || { cat "$RUN/db-manage.log" >&2; exit 1; }

start() { # start NAME CMD...: in a session of its own, its output in $RUN/NAME.log
    local name=$1
    shift
    setsid "$@" >"$RUN/$name.log" 2>&1 &
    PIDS+=("$!")
}
wait_api() {
    for _ in $(seq 1 300); do
        if curl -sf -o /dev/null "http://127.0.0.1:$PORT/"; then return 0; fi
        sleep 0.2
    done
    echo "the API did not answer on port $PORT" >&2
    tail -n 30 "$RUN"/*.log >&2
    return 1
}
measure() { # measure IMPL API_PID CONDUCTOR_PID
    local impl=$1 api=$2 cond=$3
    echo "[bench] $impl: at rest for $SETTLE s" >&2
    sleep "$SETTLE"
    "$PY" bench/benchlib.py mem --pids "$api" >"$RUN/api.json"
    "$PY" bench/benchlib.py mem --pids "$cond" >"$RUN/cond.json"
    "$PY" bench/benchlib.py smaps --pids "$api,$cond" >"$OUT/smaps-$impl.json"
    "$PY" - "$impl" "$RUN/api.json" "$RUN/cond.json" "$SETTLE" <<'EOPY' | tee -a "$OUT/memory_at_rest.jsonl"
import json, sys
impl, api, cond, settle = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), int(sys.argv[4])
mib = lambda k: round(k / 1024, 1)
print(json.dumps({
    "impl": impl, "settle_s": settle,
    "api": {"processes": len(api["procs"]), "rss_mib": mib(api["rss_kib"]), "pss_mib": mib(api["pss_kib"]), "hwm_mib": mib(api["hwm_kib"])},
    "conductor": {"processes": len(cond["procs"]), "rss_mib": mib(cond["rss_kib"]), "pss_mib": mib(cond["pss_kib"]), "hwm_mib": mib(cond["hwm_kib"])},
    "together_rss_mib": mib(api["rss_kib"] + cond["rss_kib"]),
    "together_pss_mib": mib(api["pss_kib"] + cond["pss_kib"]),
}))
EOPY
}

IMPLS=${BENCH_IMPLS:-openkeel magnum}
if [[ " $IMPLS " == *" openkeel "* ]]; then
start openkeel-api "$BIN/openkeel-api" --config-file "$RUN/magnum.conf"
api=${PIDS[-1]}
start openkeel-conductor "$BIN/openkeel-conductor" --config-file "$RUN/magnum.conf"
cond=${PIDS[-1]}
wait_api
measure openkeel "$api" "$cond"
stop_all
fi

if [[ " $IMPLS " == *" magnum "* ]]; then

start magnum-api env PYTHONPATH="$ROOT/tests/python/interop" PYTHONWARNINGS=ignore HOME="$RUN" \
    "$PY" -m openkeel_interop.run api --config-file "$RUN/magnum.conf"
api=${PIDS[-1]}
start magnum-conductor env PYTHONPATH="$ROOT/tests/python/interop" PYTHONWARNINGS=ignore HOME="$RUN" \
    "$PY" -m openkeel_interop.run conductor --config-file "$RUN/magnum.conf"
cond=${PIDS[-1]}
wait_api
measure magnum "$api" "$cond"
stop_all
fi
echo "[bench] results: $OUT/memory_at_rest.jsonl" >&2
