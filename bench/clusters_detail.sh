#!/usr/bin/env bash
# GET /v1/clusters/detail (and GET /v1/clusters/<uuid>) with N clusters:
# OpenKeel (SQLite, MariaDB) vs the real magnum-api 23.0.0 (MariaDB), on this machine, in one
# command; no reference rig needed.
#
#   bench/clusters_detail.sh                 # build HEAD, seed, measure, print Markdown tables
#
# Needs wrk, curl, and OpenKeel's test services (tests/services/start.sh: MariaDB, RabbitMQ
# and the Python test venv with magnum 23.0.0; started here when they are not running).
#
# Environment (defaults in brackets):
#   BENCH_WORK        scratch + results directory                                [/var/tmp/okbench]
#   BENCH_BUILD       head: build `git archive HEAD` in $BENCH_WORK/src (others' uncommitted
#                     edits are not measured); worktree: `cargo build --release` in the repo;
#                     none: use $OPENKEEL_BIN_DIR as it is                                 [head]
#   OPENKEEL_BIN_DIR  with BENCH_BUILD=none: the directory of `openkeel` and `openkeel-db-manage`
#   BENCH_COMMIT      with BENCH_BUILD=none: what to record as the commit measured      [unknown]
#   BENCH_MAGNUM_PYTHON  the Python of magnum-api's venv ($BENCH_WORK/magnum-venv, made on
#                     first use and when the pins change)                       [/usr/bin/python3]
#   BENCH_CLUSTERS    clusters to seed                                                     [1000]
#   BENCH_RUNS        repetitions of every case (servers restarted each time)              [2]
#   BENCH_DURATION    wrk duration of each case                                            [20s]
#   BENCH_MAGNUM_LIST_DURATION  wrk duration of magnum-api's list (gunicorn): one of its
#                     requests takes seconds, so a short one completes none   [BENCH_DURATION,
#                                                                           at least 20s]
#   BENCH_PORTS       OpenKeel-SQLite, OpenKeel-MariaDB, gunicorn ports              ["9811 9812 9813"]
#   BENCH_OPENKEEL_WORKERS  OpenKeel's `[api] workers` (its runtime's worker threads) [unset:
#                     one per CPU]
#   BENCH_OPENKEEL_DB_POOL  OpenKeel-MariaDB's `[database] max_pool_size` (and max_overflow 0):
#                     the MariaDB connections it uses at once           [unset: 5 + 50, Magnum's]
#   OPENKEEL_TEST_HOME  the test services' directory (tests/services/lib.sh) [/var/tmp/openkeel-test]
#   Opt-in, a Magnum reference rig (the shared tools/magnum-ref, which OpenKeel's users do not
#   have; phase B below):
#   BENCH_RIG         1: also measure the rig's own magnum-api (needs the bench rows in the
#                     rig's database for a few minutes); 0: skip it                        [0]
#   MAGNUM_REF_HOME   the reference rig                                     [/var/tmp/magnum-ref]
#   MAGNUM_REF_URL    the rig's running magnum-api                           [http://127.0.0.1:9611]
#   BENCH_RIG_LIST_DURATION  wrk duration of the rig's magnum-api list, which is run with
#                     one connection (that server answers one request at a time)           [60s]
#
# What runs (docs/performance.md has the method and the figures):
#   Phase A, on the test services only:
#   * OpenKeel all-in-one (`openkeel`, [DEFAULT] periodic_enable = false) on SQLite in a data
#     directory, and on a fresh database `openkeel_bench_<pid>` of the test MariaDB;
#   * Magnum's WSGI app `magnum.wsgi.api:application` (bench/magnum_wsgi.py) from a venv of its
#     own ($BENCH_WORK/magnum-venv: magnum 23.0.0 with the tests' pins, gunicorn) made with the
#     distribution's Python (BENCH_MAGNUM_PYTHON, /usr/bin/python3), as packaged deployments
#     run it, under gunicorn, 2 sync workers (as a uWSGI
#     deployment with 2 processes: it reads the database itself, MagnumObject.indirection_api
#     unset, no magnum-conductor involved in a GET), with a magnum.conf written here:
#     [database] a fresh `magnum_bench_<pid>` in the same MariaDB server, migrated by the real
#     `magnum-db-manage upgrade`; the test RabbitMQ as transport (an exchange of its own;
#     nothing is sent for a GET); Magnum 23.0.0's paste pipeline with the interop tests' noauth
#     filter (tests/python/interop/openkeel_interop/noauth.py) where keystonemiddleware's
#     authtoken stands; oslo.policy defaults.
#   Both bench databases are created as the test MariaDB's user (OPENKEEL_TEST_MYSQL_URL) and
#   dropped on exit. mariadbd's CPU and the SQL statement counts (global status counters) are
#   only exact when nothing else uses the test MariaDB meanwhile (e.g. cargo test).
#   Phase B (BENCH_RIG=1): the same rows are seeded into the rig's `magnum` database and the
#   rig's own magnum-api (console script: werkzeug, 1 process, every object read is an RPC
#   call to magnum-conductor; never restarted) is measured; then the rows are removed again
#   (the template last, after the conductor's 60 s health sync has let go of the clusters).
#   All databases get identical rows (bench/seed.py, same --seed/--timestamp, project
#   bench-project). Every request carries the identity headers of a member of bench-project
#   (Magnum's noauth filters and OpenKeel's noauth all trust them) and
#   `OpenStack-API-Version: container-infra latest`.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${BENCH_WORK:-/var/tmp/okbench}
case $WORK in /*) ;; *) WORK=$PWD/$WORK ;; esac
BUILD=${BENCH_BUILD:-head}
N=${BENCH_CLUSTERS:-1000}
RUNS=${BENCH_RUNS:-2}
DURATION=${BENCH_DURATION:-20s}
RIG_LIST_DURATION=${BENCH_RIG_LIST_DURATION:-60s}
wrk_seconds() {  # wrk_seconds 90|90s|2m|1h -> 90, 90, 120, 3600
    case $1 in
        *h) echo $((${1%h} * 3600)) ;;
        *m) echo $((${1%m} * 60)) ;;
        *s) echo "${1%s}" ;;
        *) echo "$1" ;;
    esac
}
MAGNUM_LIST_DURATION=$DURATION
[ "$(wrk_seconds "$DURATION")" -ge 20 ] || MAGNUM_LIST_DURATION=20s
MAGNUM_LIST_DURATION=${BENCH_MAGNUM_LIST_DURATION:-$MAGNUM_LIST_DURATION}
RIG=${BENCH_RIG:-0}
REF_HOME=${MAGNUM_REF_HOME:-/var/tmp/magnum-ref}
REF_URL=${MAGNUM_REF_URL:-http://127.0.0.1:9611}
REF_VENV=${MAGNUM_REF_VENV:-$REF_HOME/venv}
REF_CONF=$REF_HOME/etc/magnum.conf
REF_SOCK=$REF_HOME/mysqld/mysqld.sock
read -r P_SQLITE P_MARIADB P_GUNICORN <<<"${BENCH_PORTS:-9811 9812 9813}"

# The test services: OPENKEEL_TEST_MYSQL_URL, OPENKEEL_TEST_RABBIT_URL, OPENKEEL_TEST_VENV
# (started if missing); mdb SQL runs one statement as the test MariaDB's user with $PY.
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$HERE/lib.sh"
pushd "$ROOT" >/dev/null
test_services
popd >/dev/null
PY=$OPENKEEL_TEST_VENV/bin/python     # the test venv's: magnum 23.0.0, PyMySQL
TEST_MARIADB_PID_FILE=$OPENKEEL_TEST_HOME/pids/mariadbd.pid

PROJECT=bench-project
SEED=20260101
STAMP='2026-01-01 00:00:00'
OK_DB=openkeel_bench_$$
MB_DB=magnum_bench_$$
TAG=okbench-detail-$$
DB_BASE=${OPENKEEL_TEST_MYSQL_URL%/}     # mysql://user:pass@127.0.0.1:port
OK_DB_URL="${DB_BASE/mysql:/mysql+pymysql:}/$OK_DB?charset=utf8"
MB_DB_URL="${DB_BASE/mysql:/mysql+pymysql:}/$MB_DB?charset=utf8"
WRK_BASE=(wrk -t2 -c16 --latency --timeout 60s)
WRK_RIG_LIST=(wrk -t1 -c1 --latency --timeout 60s)
HDRS=(
    "OpenStack-API-Version: container-infra latest"
    "X-User-Id: bench-user"
    "X-Project-Id: $PROJECT"
    "X-Roles: member,reader"
    "X-Auth-Token: bench-token"
)
WRK_H=() CURL_H=() LIB_H=()
for h in "${HDRS[@]}"; do WRK_H+=(-H "$h"); CURL_H+=(-H "$h"); LIB_H+=(--header "$h"); done

RUN_ID=$(date -u +%Y%m%dT%H%M%SZ)
OUT=$WORK/results/$RUN_ID
RUN=$WORK/run            # data directories, configs, logs of this invocation
REFPY=$REF_VENV/bin/python
LIB=("$PY" "$HERE/benchlib.py")
RESULTS=$OUT/results.jsonl

log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# ------------------------------------------------------------------ cleanup (trap EXIT)

STARTED_PGIDS=()
RIG_SEEDED=0
DBS_CREATED=0

stop_pgid() {
    local pg=$1 i
    kill -0 "$pg" 2>/dev/null || return 0
    kill -TERM -- "-$pg" 2>/dev/null || true
    for i in $(seq 1 100); do
        kill -0 "$pg" 2>/dev/null || return 0
        sleep 0.1
    done
    kill -KILL -- "-$pg" 2>/dev/null || true
}

magnum_db_url() {
    # [database] connection of the rig's magnum.conf, without the query string
    sed -n 's/^connection *= *//p' "$REF_CONF" | head -1 | sed 's/?.*//'
}

unseed_rig() {
    # Clusters and nodegroups first; the template only after the rig conductor's next health
    # sync (every 60 s, over every CREATE_COMPLETE cluster), whose jobs still hold the
    # clusters and look their template up: removing it at once makes them log
    # ClusterTemplateNotFound tracebacks.
    log "removing the bench clusters from the rig's database (template in 75 s)"
    "$REFPY" "$HERE/seed.py" --mysql "$(magnum_db_url)" --project "$PROJECT" --cleanup --keep-template
    sleep 75
    "$REFPY" "$HERE/seed.py" --mysql "$(magnum_db_url)" --project "$PROJECT" --cleanup
    RIG_SEEDED=0
}

cleanup() {
    local rc=$?
    set +e
    trap - INT TERM
    for pg in "${STARTED_PGIDS[@]}"; do stop_pgid "$pg"; done
    [ "$RIG_SEEDED" = 1 ] && unseed_rig
    if [ "$DBS_CREATED" = 1 ]; then
        log "dropping databases $OK_DB and $MB_DB"
        mdb "DROP DATABASE IF EXISTS \`$OK_DB\`"
        mdb "DROP DATABASE IF EXISTS \`$MB_DB\`"
    fi
    rm -rf "$RUN"
    [ $rc = 0 ] || log "failed (exit $rc); partial results in $OUT"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------------ helpers

# start_bg NAME CMD... : own session/process group, output to $RUN/NAME.log, pid in $RUN/NAME.pid
start_bg() {
    local name=$1; shift
    setsid "$@" >>"$RUN/$name.log" 2>&1 </dev/null &
    local pid=$!
    STARTED_PGIDS+=("$pid")
    echo "$pid" >"$RUN/$name.pid"
}

stop_bg() {
    local name=$1 pid
    pid=$(cat "$RUN/$name.pid")
    stop_pgid "$pid"
    local keep=()
    for pg in "${STARTED_PGIDS[@]}"; do [ "$pg" = "$pid" ] || keep+=("$pg"); done
    STARTED_PGIDS=("${keep[@]}")
}

wait_http() {  # wait_http URL [seconds]
    local url=$1 t=${2:-60} i
    for i in $(seq 1 $((t * 10))); do
        curl -sf -o /dev/null "$url" && return 0
        sleep 0.1
    done
    return 1
}

url_of() {
    case $1 in
        openkeel-sqlite) echo "http://127.0.0.1:$P_SQLITE" ;;
        openkeel-mariadb) echo "http://127.0.0.1:$P_MARIADB" ;;
        magnum-gunicorn) echo "http://127.0.0.1:$P_GUNICORN" ;;
        magnum-rig) echo "$REF_URL" ;;
    esac
}

# Commands as words (no spaces in any of the paths used here).
ok_cmd() {  # ok_cmd sqlite|mariadb DATADIR PORT
    echo "$BIN/openkeel" --data-dir "$2" --bind "127.0.0.1:$3" --config-file "$RUN/openkeel-$1.conf"
}

gunicorn_cmd() {
    # HOME: no ~/.magnum/magnum.conf.d of the caller's; openkeel_interop: the noauth filter
    echo env MAGNUM_BENCH_CONF="$RUN/magnum.conf" HOME="$RUN/magnum-home" \
        PYTHONPATH="$HERE:$ROOT/tests/python/interop" \
        PYTHONWARNINGS=ignore "$MAGNUM_VENV/bin/python" -m gunicorn --no-control-socket --workers 2 \
        --worker-class sync --timeout 300 --bind "127.0.0.1:$P_GUNICORN" magnum_wsgi:application
}

start_server() {  # start_server NAME -> sets SERVER_PIDS (comma list)
    local s=$1
    # (the commands are words: unquoted on purpose)
    # shellcheck disable=SC2046
    case $s in
        openkeel-sqlite) start_bg "$s" $(ok_cmd sqlite "$RUN/ok-sqlite" "$P_SQLITE") ;;
        openkeel-mariadb) start_bg "$s" $(ok_cmd mariadb "$RUN/ok-mariadb" "$P_MARIADB") ;;
        magnum-gunicorn) start_bg "$s" $(gunicorn_cmd) ;;
        magnum-rig) SERVER_PIDS=$(cat "$REF_HOME/magnum-api.pid"); return 0 ;;
    esac
    wait_http "$(url_of "$s")/" 120 || die "$s did not answer GET / (log: $RUN/$s.log)"
    SERVER_PIDS=$(cat "$RUN/$s.pid")
}

stop_server() { [ "$1" = magnum-rig ] || stop_bg "$1"; }

check_same() {  # check_same SERVER... : same clusters, same bodies; saves check-*.json
    local tag=$1; shift
    local args=() s
    for s in "$@"; do args+=("$s=$(url_of "$s")$LIST_PATH"); done
    "${LIB[@]}" check --expect "$N" "${LIB_H[@]}" "${args[@]}" >"$OUT/check-list-$tag.json" \
        || die "list answers differ: $(cat "$OUT/check-list-$tag.json")"
    args=()
    for s in "$@"; do args+=("$s=$(url_of "$s")$SHOW_PATH"); done
    "${LIB[@]}" check "${LIB_H[@]}" "${args[@]}" >"$OUT/check-show-$tag.json" \
        || die "show answers differ: $(cat "$OUT/check-show-$tag.json")"
    log "list: $(cat "$OUT/check-list-$tag.json")"
    log "show: $(cat "$OUT/check-show-$tag.json")"
}

sql_count() {  # sql_count SERVER : statements per list / show request -> sql-SERVER.json
    local s=$1 tries=5 l w db=(--mysql "$OPENKEEL_TEST_MYSQL_URL")
    if [ "$s" = magnum-rig ]; then tries=3 db=(--socket "$REF_SOCK"); fi
    l=$("${LIB[@]}" sqlcount "${db[@]}" --tries "$tries" "${LIB_H[@]}" \
        --url "$(url_of "$s")$LIST_PATH")
    w=$("${LIB[@]}" sqlcount "${db[@]}" --tries 5 "${LIB_H[@]}" \
        --url "$(url_of "$s")$SHOW_PATH")
    printf '{"list": %s, "show": %s}\n' "$l" "$w" >"$OUT/sql-$s.json"
    log "SQL $s list: $l"
    log "SQL $s show: $w"
}

measure() {  # measure SERVER RUN : list + show under wrk
    local s=$1 run=$2 base groups cp='' dp='' rp='' case d p wrk
    start_server "$s"
    base=$(url_of "$s")
    curl -s -o /dev/null "${CURL_H[@]}" "$base$LIST_PATH"   # warm-up
    curl -s -o /dev/null "${CURL_H[@]}" "$base$SHOW_PATH"
    # CPU (and memory) is accounted for the server and mariadbd (the test MariaDB; the rig's
    # for the rig), and for the rig's magnum-api also its conductor and RabbitMQ
    groups=(--label-pids "server=$SERVER_PIDS")
    if [ "$s" = magnum-rig ]; then
        cp=$(cat "$REF_HOME/magnum-conductor.pid" 2>/dev/null || true)
        [ -n "$cp" ] && groups+=(--label-pids "conductor=$cp")
        dp=$(cat "$REF_HOME/mysqld/mariadbd.pid" 2>/dev/null || true)
        rp=$(cat "$REF_HOME/rabbitmq/rabbitmq.pid" 2>/dev/null || true)
        [ -n "$rp" ] && groups+=(--label-pids "rabbitmq=$rp")
    else
        dp=$(tr -dc '0-9' 2>/dev/null <"$TEST_MARIADB_PID_FILE" || true)
    fi
    [ -n "$dp" ] && groups+=(--label-pids "mariadbd=$dp")
    for case in list show; do
        d=$DURATION wrk=("${WRK_BASE[@]}")
        [ "$s/$case" = magnum-gunicorn/list ] && d=$MAGNUM_LIST_DURATION
        if [ "$s/$case" = magnum-rig/list ]; then
            # one process answering one request at a time (~9 s each with 1000 clusters): more
            # connections only queue, and werkzeug would go on computing every queued request
            # after wrk has gone
            d=$RIG_LIST_DURATION wrk=("${WRK_RIG_LIST[@]}")
        fi
        p=$LIST_PATH; [ "$case" = show ] && p=$SHOW_PATH
        log "run $run/$RUNS: $s $case ($d)"
        "${LIB[@]}" load --case "$case" --server "$s" --run "$run" "${groups[@]}" \
            --out "$RESULTS" -- "${wrk[@]}" -d "$d" "${WRK_H[@]}" "$base$p" >&2 \
            || log "wrk failed for $s $case"
        # wait until requests still queued in the server are answered
        curl -s -o /dev/null -m 900 "$base/" || true
    done
    stop_server "$s"
}

# ------------------------------------------------------------------ 0. prerequisites

command -v wrk >/dev/null || die "wrk missing: DEBIAN_FRONTEND=noninteractive apt-get install -y wrk"
"$PY" -c 'import pymysql' 2>/dev/null || die "the test venv $OPENKEEL_TEST_VENV lacks PyMySQL"
mdb "SELECT 1" || die "cannot reach the test MariaDB as ${DB_BASE%%@*}@… ($DB_BASE)"
case $RIG in
    0) ;;
    1)
        [ -x "$REFPY" ] || die "reference venv $REF_VENV missing (shared tools/magnum-ref setup.sh)"
        [ -S "$REF_SOCK" ] || die "rig MariaDB socket $REF_SOCK missing (tools/magnum-ref start.sh)"
        curl -sf -o /dev/null "$REF_URL/" || die "the rig's magnum-api does not answer at $REF_URL"
        "$REFPY" -c "import pymysql; pymysql.connect(unix_socket='$REF_SOCK', user='root')" \
            || die "cannot reach the rig's MariaDB as root over $REF_SOCK" ;;
    *) die "BENCH_RIG=$RIG: 0 | 1" ;;
esac
for p in $P_SQLITE $P_MARIADB $P_GUNICORN; do
    if curl -s -o /dev/null "http://127.0.0.1:$p/"; then die "port $p is in use"; fi
done
mkdir -p "$WORK" "$OUT"
rm -rf "$RUN"; mkdir -p "$RUN"

# ------------------------------------------------------------------ 1. build

case $BUILD in
    head)
        COMMIT=$(git -C "$ROOT" rev-parse HEAD)
        log "building OpenKeel at HEAD $COMMIT (git archive into $WORK/src)"
        mkdir -p "$WORK/src"
        find "$WORK/src" -mindepth 1 -maxdepth 1 ! -name target -exec rm -rf {} +
        git -C "$ROOT" archive HEAD | tar -x -C "$WORK/src"
        (cd "$WORK/src" && cargo build --release --bin openkeel --bin openkeel-db-manage) \
            >"$OUT/build.log" 2>&1 || die "cargo build failed: $OUT/build.log"
        BIN=$WORK/src/target/release ;;
    worktree)
        COMMIT="$(git -C "$ROOT" rev-parse HEAD) + working tree"
        (cd "$ROOT" && cargo build --release --bin openkeel --bin openkeel-db-manage) \
            >"$OUT/build.log" 2>&1 || die "cargo build failed: $OUT/build.log"
        BIN=$ROOT/target/release ;;
    none)
        COMMIT=${BENCH_COMMIT:-unknown}
        BIN=${OPENKEEL_BIN_DIR:?set OPENKEEL_BIN_DIR} ;;
    *) die "BENCH_BUILD=$BUILD: head | worktree | none" ;;
esac
[ -x "$BIN/openkeel" ] || die "no $BIN/openkeel"

# magnum-api's venv (bench/lib.sh magnum_venv)
magnum_venv "$WORK" "$OUT/pip.log" || die "no venv for magnum-api"
MAGNUM_DB_MANAGE=$MAGNUM_VENV/bin/magnum-db-manage

# ------------------------------------------------------------------ 2. databases + seed

log "creating databases $OK_DB and $MB_DB in the test MariaDB (${DB_BASE#*@})"
DBS_CREATED=1
for db in "$OK_DB" "$MB_DB"; do
    mdb "CREATE DATABASE \`$db\` DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
done

printf '[DEFAULT]\nperiodic_enable = false\n' >"$RUN/openkeel-sqlite.conf"
printf '[DEFAULT]\nperiodic_enable = false\n\n[database]\nconnection = %s\n' "$OK_DB_URL" \
    >"$RUN/openkeel-mariadb.conf"
if [ -n "${BENCH_OPENKEEL_WORKERS:-}" ]; then
    for f in "$RUN/openkeel-sqlite.conf" "$RUN/openkeel-mariadb.conf"; do
        printf '\n[api]\nworkers = %s\n' "$BENCH_OPENKEEL_WORKERS" >>"$f"
    done
fi
if [ -n "${BENCH_OPENKEEL_DB_POOL:-}" ]; then
    printf '\n[database]\nmax_pool_size = %s\nmax_overflow = 0\n' "$BENCH_OPENKEEL_DB_POOL" >>"$RUN/openkeel-mariadb.conf"
fi
# magnum-api's configuration: its own database, noauth (api-paste.ini below), periodic tasks
# and conductor never involved; a transport on the test RabbitMQ with an exchange and topic of
# its own (magnum-api builds an RPC client per request, but a GET sends nothing)
mkdir -p "$RUN/magnum-state" "$RUN/magnum-lock" "$RUN/magnum-home"
{
    printf '[DEFAULT]\nhost = %s\ndebug = False\nstate_path = %s\nperiodic_enable = false\n' \
        "$TAG" "$RUN/magnum-state"
    if [ -n "${OPENKEEL_TEST_RABBIT_URL:-}" ]; then
        printf 'transport_url = %s\ncontrol_exchange = %s\n' \
            "${OPENKEEL_TEST_RABBIT_URL/amqp:\/\//rabbit://}" "$TAG"
    fi
    printf '\n[api]\nhost = 127.0.0.1\nport = %s\napi_paste_config = %s\n' \
        "$P_GUNICORN" "$RUN/magnum-api-paste.ini"
    printf '\n[conductor]\ntopic = %s-conductor\n' "$TAG"
    printf '\n[database]\nconnection = %s\n' "$MB_DB_URL"
    printf '\n[certificates]\ncert_manager_type = x509keypair\n'
    printf '\n[oslo_concurrency]\nlock_path = %s\n' "$RUN/magnum-lock"
} >"$RUN/magnum.conf"
# magnum-api without Keystone; every request of ours carries identity headers
magnum_noauth_paste "$RUN/magnum-api-paste.ini" noauth-admin noauth-project
mkdir -p "$RUN/ok-sqlite" "$RUN/ok-mariadb"
"$BIN/openkeel-db-manage" --database-url "$OK_DB_URL" upgrade >"$OUT/db-manage.log" 2>&1 \
    || die "openkeel-db-manage upgrade failed: $OUT/db-manage.log"
"$BIN/openkeel-db-manage" --database-url "sqlite:///$RUN/ok-sqlite/openkeel.sqlite" upgrade \
    >>"$OUT/db-manage.log" 2>&1 || die "SQLite schema: $OUT/db-manage.log"
HOME="$RUN/magnum-home" "$MAGNUM_DB_MANAGE" --config-file "$RUN/magnum.conf" upgrade \
    >>"$OUT/db-manage.log" 2>&1 || die "magnum-db-manage upgrade failed: $OUT/db-manage.log"

SEED_ARGS=(-n "$N" --project "$PROJECT" --seed "$SEED" --timestamp "$STAMP")
log "seeding $N clusters (+2 nodegroups each) into SQLite, $OK_DB and $MB_DB"
SHOW_UUID=$("$PY" "$HERE/seed.py" --sqlite "$RUN/ok-sqlite/openkeel.sqlite" "${SEED_ARGS[@]}")
"$PY" "$HERE/seed.py" --mysql "$OK_DB_URL" "${SEED_ARGS[@]}" >/dev/null
"$PY" "$HERE/seed.py" --mysql "$MB_DB_URL" "${SEED_ARGS[@]}" >/dev/null
LIST_PATH=/v1/clusters/detail
SHOW_PATH=/v1/clusters/$SHOW_UUID

# ------------------------------------------------------------------ 3. start-up time

log "start-up time (exec -> first 2xx GET /)"
# shellcheck disable=SC2046
"${LIB[@]}" startup --runs 5 --url "http://127.0.0.1:$P_SQLITE/" --log "$OUT/startup.log" \
    -- $(ok_cmd sqlite "$RUN/ok-sqlite" "$P_SQLITE") >"$OUT/startup-openkeel-sqlite.json"
# shellcheck disable=SC2046
"${LIB[@]}" startup --runs 5 --url "http://127.0.0.1:$P_MARIADB/" --log "$OUT/startup.log" \
    -- $(ok_cmd mariadb "$RUN/ok-mariadb" "$P_MARIADB") >"$OUT/startup-openkeel-mariadb.json"
: >"$OUT/startup-openkeel-sqlite-fresh.jsonl"
for i in 1 2 3; do
    # shellcheck disable=SC2046
    "${LIB[@]}" startup --runs 1 --url "http://127.0.0.1:$P_SQLITE/" --log "$OUT/startup.log" \
        -- $(ok_cmd sqlite "$RUN/fresh-$i" "$P_SQLITE") >>"$OUT/startup-openkeel-sqlite-fresh.jsonl"
    rm -rf "$RUN/fresh-$i"
done
# shellcheck disable=SC2046
"${LIB[@]}" startup --runs 3 --timeout 120 --url "http://127.0.0.1:$P_GUNICORN/" \
    --log "$OUT/startup.log" -- $(gunicorn_cmd) >"$OUT/startup-magnum-gunicorn.json"
for f in "$OUT"/startup-*.json*; do log "$(basename "$f"): $(cat "$f")"; done

# ------------------------------------------------------------------ 4. phase A

PHASE_A=(openkeel-sqlite openkeel-mariadb magnum-gunicorn)
log "phase A: same answers, SQL per request"
for s in "${PHASE_A[@]}"; do start_server "$s"; done
check_same a "${PHASE_A[@]}"
sql_count openkeel-mariadb
sql_count magnum-gunicorn
for s in "${PHASE_A[@]}"; do stop_server "$s"; done

for run in $(seq 1 "$RUNS"); do
    for s in "${PHASE_A[@]}"; do measure "$s" "$run"; done
done

# ------------------------------------------------------------------ 5. phase B: the rig

if [ "$RIG" = 1 ]; then
    log "phase B: seeding the rig's database ($(magnum_db_url | sed 's/:[^:@]*@/:***@/'))"
    RIG_SEEDED=1
    "$REFPY" "$HERE/seed.py" --mysql "$(magnum_db_url)" "${SEED_ARGS[@]}" >/dev/null
    start_server openkeel-sqlite
    check_same b openkeel-sqlite magnum-rig
    stop_server openkeel-sqlite
    sql_count magnum-rig
    for run in $(seq 1 "$RUNS"); do measure magnum-rig "$run"; done
    unseed_rig
fi

# ------------------------------------------------------------------ 6. report

BENCH_META_RUN_ID=$RUN_ID BENCH_META_COMMIT=$COMMIT BENCH_META_N=$N BENCH_META_RUNS=$RUNS \
BENCH_META_DURATION=$DURATION BENCH_META_RIG_DURATION=$RIG_LIST_DURATION \
BENCH_META_MAGNUM_LIST_DURATION=$MAGNUM_LIST_DURATION \
BENCH_META_WRK="${WRK_BASE[*]} -d <duration>" BENCH_META_WRK_RIG="${WRK_RIG_LIST[*]} -d <duration>" \
BENCH_META_MYSQL_URL=$OPENKEEL_TEST_MYSQL_URL BENCH_META_VENV=$MAGNUM_VENV \
BENCH_META_RIG=$RIG BENCH_META_REF_SOCK=$REF_SOCK \
BENCH_META_SHOW=$SHOW_PATH BENCH_META_OK_WORKERS=${BENCH_OPENKEEL_WORKERS:-} \
BENCH_META_OK_DB_POOL=${BENCH_OPENKEEL_DB_POOL:-} \
    "$PY" - "$OUT" "${HDRS[@]}" <<'EOF'
import glob, json, os, platform, subprocess, sys
out, headers = sys.argv[1], sys.argv[2:]
E = os.environ
def sh(c):
    return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
def load(path):
    with open(path) as f:
        return json.load(f)
def name(path, prefix, suffix):
    return os.path.basename(path)[len(prefix):-len(suffix)]
import urllib.parse
import pymysql
py = os.path.join(E["BENCH_META_VENV"], "bin", "python")
def mariadb_version(**kw):
    try:
        cur = pymysql.connect(**kw).cursor()
        cur.execute("SELECT VERSION()")
        return cur.fetchone()[0]
    except Exception as e:
        return "? (%s)" % e
u = urllib.parse.urlparse(E["BENCH_META_MYSQL_URL"])
test_mariadb = mariadb_version(host=u.hostname, port=u.port or 3306, user=u.username,
                               password=urllib.parse.unquote(u.password or ""))
startup = {name(p, "startup-", ".json"): load(p) for p in glob.glob(out + "/startup-*.json")}
startup["openkeel-sqlite-fresh-datadir"] = [
    json.loads(l) for l in open(out + "/startup-openkeel-sqlite-fresh.jsonl") if l.strip()]
checks = {}
for p in glob.glob(out + "/check-*-*.json"):
    kind, phase = name(p, "check-", ".json").split("-")
    checks.setdefault(phase, {})[kind] = load(p)
meta = {
    "run_id": E["BENCH_META_RUN_ID"], "commit": E["BENCH_META_COMMIT"],
    "clusters": int(E["BENCH_META_N"]), "runs": int(E["BENCH_META_RUNS"]),
    "duration": E["BENCH_META_DURATION"], "rig_list_duration": E["BENCH_META_RIG_DURATION"],
    "magnum_list_duration": E["BENCH_META_MAGNUM_LIST_DURATION"],
    "wrk": E["BENCH_META_WRK"], "wrk_rig_list": E["BENCH_META_WRK_RIG"], "headers": headers,
    "show_path": E["BENCH_META_SHOW"],
    "openkeel_api_workers": E["BENCH_META_OK_WORKERS"] or "one per CPU",
    "openkeel_mariadb_pool": E["BENCH_META_OK_DB_POOL"] or "5 + 50 (Magnum's)",
    "machine": {
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        "cpus": os.cpu_count(),
        "mem": sh("free -m | awk '/Mem:/{print $2\" MiB\"}'"),
        "kernel": platform.release(),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
    },
    "versions": {
        "wrk": sh("wrk -v 2>&1 | head -1"),
        "mariadb (test services, %s:%s)" % (u.hostname, u.port): test_mariadb,
        "magnum venv": E["BENCH_META_VENV"],
        "python (magnum venv)": sh("%s -c 'import sys; print(sys.version.split()[0])'" % py),
        "magnum": sh("%s -c 'import magnum; print(magnum.__version__)' 2>/dev/null" % py),
        "gunicorn": sh("%s -m gunicorn --version" % py),
        "rustc": sh("rustc --version"),
    },
    "startup": startup,
    "checks": checks,
    "sql_per_request": {name(p, "sql-", ".json"): load(p) for p in glob.glob(out + "/sql-*.json")},
}
if E["BENCH_META_RIG"] == "1":
    meta["versions"]["mariadb (rig)"] = mariadb_version(unix_socket=E["BENCH_META_REF_SOCK"],
                                                        user="root")
with open(os.path.join(out, "meta.json"), "w") as f:
    json.dump(meta, f, indent=1)
EOF
"${LIB[@]}" report "$RESULTS" --meta "$OUT/meta.json" >"$OUT/table.md"
cp "$RUN"/*.log "$OUT/" 2>/dev/null || true
log "results: $OUT (table.md, results.jsonl, results.jsonl.wrk.txt, meta.json)"
cat "$OUT/table.md"
