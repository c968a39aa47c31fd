#!/usr/bin/env bash
# Cluster create (issue 17): openkeel-conductor (release build) against the real
# magnum-conductor 23.0.0 (on the distribution's Python: bench/lib.sh magnum_venv), one after the other in one run, on the same
# machine, test MariaDB database and RabbitMQ. A benchmark, not a test.
#
#   bench/create.sh
#
# Environment (defaults in brackets):
#   BENCH_SINGLE       creates measured one at a time                                    [10]
#   BENCH_CONCURRENCY  creates cast at once in the concurrent case                       [20]
#   BENCH_BATCHES      concurrent batches                                                 [2]
#   BENCH_KEYS         RSA keys timed per implementation (key generation alone)          [40]
#   BENCH_SETS         cluster certificate sets timed per implementation                 [10]
#   BENCH_ROUNDS       rounds of both conductors, the order alternating (magnum first in
#                      odd rounds), each conductor freshly started                        [2]
#   BENCH_BUILD        1: cargo build --release the conductor and the keygen example      [1]
#
# What it measures (docs/performance.md, "Cluster create"):
# * key generation alone (as bench/keygen.sh, which needs no services, one round): one
#   RSA-2048 key, one cluster's certificate set (3 CAs and the client certificate, keys
#   encrypted as stored) and the conductor's generate_certificates_to_cluster, OpenKeel's
#   openkeel-certs (release build, crates/certs/examples/keygen_bench.rs) against Magnum's
#   magnum.common.x509.operations (Python cryptography / OpenSSL) — wall time and CPU time;
# * the conductor: both read one magnum.conf (a fresh database migrated by the real
#   magnum-db-manage, x509keypair certificates in the database, notifications to RabbitMQ,
#   periodic tasks off, the record-only `simulator` driver of tests/python/interop for Magnum
#   and OpenKeel's simulator driver); bench/create_bench.py casts `cluster_create` as
#   magnum-api does and times each create from the cast to the `magnum.cluster.create`
#   pending notification (what the conductor does before it: the cluster and nodegroup rows,
#   the four certificates), for 1 create at a time and for 20 at once, and the conductor's
#   CPU (process tree) per create until it is idle again (the driver's create_cluster and the
#   row updates after the notification included).
# Results: bench/results/<UTC time>/create.jsonl and create.md (printed).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
SINGLE=${BENCH_SINGLE:-10}
CONC=${BENCH_CONCURRENCY:-20}
BATCHES=${BENCH_BATCHES:-2}
KEYS=${BENCH_KEYS:-40}
SETS=${BENCH_SETS:-10}
ROUNDS=${BENCH_ROUNDS:-2}

. "$HERE/lib.sh" # test_services, mdb, magnum_venv
test_services
PY="$OPENKEEL_TEST_VENV/bin/python"
# Magnum's side (its conductor, its key generation) runs on the distribution's Python
# (bench/lib.sh magnum_venv); the bench's own caster and listener on the test venv's.
mkdir -p "${BENCH_WORK:-/var/tmp/okbench}"
magnum_venv "${BENCH_WORK:-/var/tmp/okbench}" "${BENCH_WORK:-/var/tmp/okbench}/magnum-venv-pip.log"
MPY="$MAGNUM_VENV/bin/python"
if [ "${BENCH_BUILD:-1}" = 1 ]; then
    cargo build --release -q -p openkeel -p openkeel-certs --bin openkeel-conductor \
        --example keygen_bench >&2
fi
BIN="${CARGO_TARGET_DIR:-target}/release"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true
RUN=$(mktemp -d)
DB=okbench_create_$$
TAG=okbench-create-$$

cleanup() {
    mdb "DROP DATABASE IF EXISTS \`$DB\`" || true
    rm -rf "$RUN"
}
trap cleanup EXIT

echo "[bench] key generation alone" >&2
"$BIN/examples/keygen_bench" "$KEYS" "$SETS" 2048 | tee -a "$OUT/create.jsonl"
"$MPY" -W ignore bench/create_bench.py keygen --keys "$KEYS" --sets "$SETS" 2>/dev/null |
    tee -a "$OUT/create.jsonl"

mdb "CREATE DATABASE \`$DB\` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
URL="${OPENKEEL_TEST_MYSQL_URL%/}/$DB"
mkdir -p "$RUN/state" "$RUN/lock"
cat >"$RUN/magnum.conf" <<EOF
[DEFAULT]
host = $TAG
transport_url = ${OPENKEEL_TEST_RABBIT_URL/amqp:\/\//rabbit://}
control_exchange = $TAG
rpc_response_timeout = 30
state_path = $RUN/state
debug = False
periodic_enable = false
graceful_shutdown_timeout = 2
[conductor]
topic = $TAG-conductor
workers = 1
[database]
connection = ${URL/mysql:/mysql+pymysql:}?charset=utf8
[certificates]
cert_manager_type = x509keypair
[oslo_concurrency]
lock_path = $RUN/lock
[oslo_messaging_notifications]
driver = messagingv2
topics = $TAG-notifications
[keystone_auth]
auth_type = password
auth_url = ${OPENKEEL_TEST_KEYSTONE_URL:-http://127.0.0.1:5000/v3}
username = magnum
password = magnum-service
project_name = service
user_domain_id = default
project_domain_id = default
[openkeel]
auth_strategy = noauth
rpc_transport = rabbit
enable_simulator_driver = true
simulated_cloud = true
EOF
"$MAGNUM_VENV/bin/magnum-db-manage" --config-file "$RUN/magnum.conf" upgrade \
    >"$RUN/db-manage.log" 2>&1 || { cat "$RUN/db-manage.log" >&2; exit 1; }

run_creates() { # run_creates NAME ROUND CMD...
    local name=$1 round=$2
    shift 2
    echo "[bench] $name conductor: $SINGLE single creates, $BATCHES x $CONC concurrent" >&2
    env PYTHONPATH="$ROOT/tests/python/interop" PYTHONWARNINGS=ignore HOME="$RUN" \
        "$PY" bench/create_bench.py creates --config-file "$RUN/magnum.conf" --impl "$name" \
        --log-dir "$RUN" --single "$SINGLE" --concurrency "$CONC" --batches "$BATCHES" \
        --round "$round" \
        -- "$@" 2>"$RUN/bench-$name.err" | tee -a "$OUT/create.jsonl" ||
        { tail -n 50 "$RUN/bench-$name.err" "$RUN/conductor-$name.log" >&2; return 1; }
}
magnum() { run_creates magnum "$1" "$MPY" -m openkeel_interop.run conductor --config-file "$RUN/magnum.conf"; }
openkeel() { run_creates openkeel "$1" "$BIN/openkeel-conductor" --config-file "$RUN/magnum.conf"; }
for round in $(seq 1 "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then magnum "$round"; openkeel "$round"; else openkeel "$round"; magnum "$round"; fi
done
cp "$RUN"/conductor-*.log "$OUT/" 2>/dev/null || true

python3 bench/create_report.py "$OUT/create.jsonl" >"$OUT/create.md"
cat "$OUT/create.md"
