#!/usr/bin/env bash
# GET /v1/clusters/detail (and GET /v1/clusters/<uuid>) with N clusters:
# OpenKeel (SQLite, MariaDB) vs the real magnum-api 23.0.0 (MariaDB), on this machine.
#
#   bench/clusters_detail.sh                 # build HEAD, seed, measure, print Markdown tables
#
# Environment (defaults in brackets):
#   BENCH_WORK        scratch + results directory                                [/var/tmp/okbench]
#   BENCH_BUILD       head: build `git archive HEAD` in $BENCH_WORK/src (others' uncommitted
#                     edits are not measured); worktree: `cargo build --release` in the repo;
#                     none: use $OPENKEEL_BIN_DIR as it is                                 [head]
#   BENCH_CLUSTERS    clusters to seed                                                     [1000]
#   BENCH_RUNS        repetitions of every case (servers restarted each time)              [2]
#   BENCH_DURATION    wrk duration of each case                                            [20s]
#   BENCH_RIG_LIST_DURATION  wrk duration of the rig's magnum-api list, which is run with
#                     one connection (that server answers one request at a time)           [60s]
#   BENCH_RIG         1: also measure the rig's own magnum-api (needs the bench rows in the
#                     rig's database for a few minutes); 0: skip it                        [1]
#   MAGNUM_REF_HOME   the reference rig (shared tools/magnum-ref)               [/var/tmp/magnum-ref]
#   MAGNUM_REF_URL    the rig's running magnum-api                           [http://127.0.0.1:9611]
#   BENCH_PORTS       OpenKeel-SQLite, OpenKeel-MariaDB, gunicorn ports              ["9811 9812 9813"]
#
# What runs (docs/performance.md has the method and the figures):
#   Phase A, the rig's own database untouched:
#   * OpenKeel all-in-one (`openkeel`, [DEFAULT] periodic_enable = false) on SQLite in a data
#     directory, and on a fresh database `openkeel_bench` in the rig's MariaDB server;
#   * Magnum's WSGI app `magnum.wsgi.api:application` under gunicorn, 2 sync workers (as a
#     uWSGI deployment with 2 processes: it reads the database itself), with the rig's
#     magnum.conf plus a [database] override pointing at a fresh `magnum_bench` database in
#     the same server, migrated by the real `magnum-db-manage upgrade`. gunicorn is
#     pip-installed into $BENCH_WORK/pylib, not into the rig's venv.
#   Both bench databases and their user `okbench` are created as root over the rig's MariaDB
#   socket and dropped on exit.
#   Phase B (BENCH_RIG=1): the same rows are seeded into the rig's `magnum` database and the
#   rig's own magnum-api (console script: werkzeug, 1 process, every object read is an RPC
#   call to magnum-conductor; never restarted) is measured; then the rows are removed again
#   (the template last, after the conductor's 60 s health sync has let go of the clusters).
#   All databases get identical rows (bench/seed.py, same --seed/--timestamp, project
#   bench-project). Every request carries the identity headers of a member of bench-project
#   (the rig's noauth filter and OpenKeel's noauth both trust them) and
#   `OpenStack-API-Version: container-infra latest`.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
WORK=${BENCH_WORK:-/var/tmp/okbench}
BUILD=${BENCH_BUILD:-head}
N=${BENCH_CLUSTERS:-1000}
RUNS=${BENCH_RUNS:-2}
DURATION=${BENCH_DURATION:-20s}
RIG_LIST_DURATION=${BENCH_RIG_LIST_DURATION:-60s}
RIG=${BENCH_RIG:-1}
REF_HOME=${MAGNUM_REF_HOME:-/var/tmp/magnum-ref}
REF_URL=${MAGNUM_REF_URL:-http://127.0.0.1:9611}
REF_VENV=${MAGNUM_REF_VENV:-$REF_HOME/venv}
REF_CONF=$REF_HOME/etc/magnum.conf
DB_SOCK=$REF_HOME/mysqld/mysqld.sock
read -r P_SQLITE P_MARIADB P_GUNICORN <<<"${BENCH_PORTS:-9811 9812 9813}"

PROJECT=bench-project
SEED=20260101
STAMP='2026-01-01 00:00:00'
DB_USER=okbench
DB_PASS=okbench-pw
OK_DB=openkeel_bench
MB_DB=magnum_bench
OK_DB_URL="mysql+pymysql://$DB_USER:$DB_PASS@127.0.0.1:3306/$OK_DB?charset=utf8"
MB_DB_URL="mysql+pymysql://$DB_USER:$DB_PASS@127.0.0.1:3306/$MB_DB?charset=utf8"
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
PY=python3               # standard library only
REFPY=$REF_VENV/bin/python
LIB=(python3 "$HERE/benchlib.py")
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

mysql_root() { mariadb --socket="$DB_SOCK" -uroot -N -B "$@"; }

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
        log "dropping databases $OK_DB, $MB_DB and user $DB_USER"
        mysql_root -e "DROP DATABASE IF EXISTS \`$OK_DB\`; DROP DATABASE IF EXISTS \`$MB_DB\`;
          DROP USER IF EXISTS '$DB_USER'@'127.0.0.1';"
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
    echo env MAGNUM_BENCH_CONF="$REF_CONF:$RUN/magnum-bench.conf" PYTHONPATH="$WORK/pylib:$HERE" \
        PYTHONWARNINGS=ignore "$REFPY" -m gunicorn --no-control-socket --workers 2 \
        --worker-class sync --timeout 300 --bind "127.0.0.1:$P_GUNICORN" magnum_wsgi:application
}

start_server() {  # start_server NAME -> sets SERVER_PIDS (comma list)
    local s=$1
    case $s in
        # shellcheck disable=SC2046
        openkeel-sqlite) start_bg "$s" $(ok_cmd sqlite "$RUN/ok-sqlite" "$P_SQLITE") ;;
        # shellcheck disable=SC2046
        openkeel-mariadb) start_bg "$s" $(ok_cmd mariadb "$RUN/ok-mariadb" "$P_MARIADB") ;;
        # shellcheck disable=SC2046
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
    local s=$1 tries=5 l w
    [ "$s" = magnum-rig ] && tries=3
    l=$("$REFPY" "$HERE/benchlib.py" sqlcount --socket "$DB_SOCK" --tries "$tries" "${LIB_H[@]}" \
        --url "$(url_of "$s")$LIST_PATH")
    w=$("$REFPY" "$HERE/benchlib.py" sqlcount --socket "$DB_SOCK" --tries 5 "${LIB_H[@]}" \
        --url "$(url_of "$s")$SHOW_PATH")
    printf '{"list": %s, "show": %s}\n' "$l" "$w" >"$OUT/sql-$s.json"
    log "SQL $s list: $l"
    log "SQL $s show: $w"
}

measure() {  # measure SERVER RUN : list + show under wrk
    local s=$1 run=$2 base groups cp dp rp case d p wrk
    start_server "$s"
    base=$(url_of "$s")
    curl -s -o /dev/null "${CURL_H[@]}" "$base$LIST_PATH"   # warm-up
    curl -s -o /dev/null "${CURL_H[@]}" "$base$SHOW_PATH"
    # CPU (and memory) is accounted for the server, the rig's conductor, mariadbd, RabbitMQ
    groups=(--label-pids "server=$SERVER_PIDS")
    cp=$(cat "$REF_HOME/magnum-conductor.pid" 2>/dev/null || true)
    [ -n "$cp" ] && groups+=(--label-pids "conductor=$cp")
    dp=$(cat "$REF_HOME/mysqld/mariadbd.pid" 2>/dev/null || true)
    [ -n "$dp" ] && groups+=(--label-pids "mariadbd=$dp")
    rp=$(cat "$REF_HOME/rabbitmq/rabbitmq.pid" 2>/dev/null || true)
    [ -n "$rp" ] && groups+=(--label-pids "rabbitmq=$rp")
    for case in list show; do
        d=$DURATION wrk=("${WRK_BASE[@]}")
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
command -v mariadb >/dev/null || die "mariadb client missing"
[ -x "$REFPY" ] || die "reference venv $REF_VENV missing (shared tools/magnum-ref setup.sh)"
[ -S "$DB_SOCK" ] || die "rig MariaDB socket $DB_SOCK missing (tools/magnum-ref start.sh)"
curl -sf -o /dev/null "$REF_URL/" || die "the rig's magnum-api does not answer at $REF_URL"
mysql_root -e "SELECT 1" >/dev/null || die "cannot reach the rig's MariaDB as root over $DB_SOCK"
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

if ! PYTHONPATH="$WORK/pylib" "$REFPY" -c 'import gunicorn' 2>/dev/null; then
    log "installing gunicorn into $WORK/pylib (scratch, not the rig's venv)"
    "$REF_VENV/bin/pip" install -q --target "$WORK/pylib" gunicorn >"$OUT/pip.log" 2>&1 \
        || die "pip install gunicorn failed: $OUT/pip.log"
fi

# ------------------------------------------------------------------ 2. databases + seed

log "creating databases $OK_DB and $MB_DB in the rig's MariaDB server"
DBS_CREATED=1
mysql_root -e "DROP DATABASE IF EXISTS \`$OK_DB\`; CREATE DATABASE \`$OK_DB\`;
  DROP DATABASE IF EXISTS \`$MB_DB\`; CREATE DATABASE \`$MB_DB\`;
  CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$DB_PASS';
  GRANT ALL PRIVILEGES ON \`$OK_DB\`.* TO '$DB_USER'@'127.0.0.1';
  GRANT ALL PRIVILEGES ON \`$MB_DB\`.* TO '$DB_USER'@'127.0.0.1';"

printf '[DEFAULT]\nperiodic_enable = false\n' >"$RUN/openkeel-sqlite.conf"
printf '[DEFAULT]\nperiodic_enable = false\n\n[database]\nconnection = %s\n' "$OK_DB_URL" \
    >"$RUN/openkeel-mariadb.conf"
printf '[database]\nconnection = %s\n' "$MB_DB_URL" >"$RUN/magnum-bench.conf"
mkdir -p "$RUN/ok-sqlite" "$RUN/ok-mariadb"
"$BIN/openkeel-db-manage" --database-url "$OK_DB_URL" upgrade >"$OUT/db-manage.log" 2>&1 \
    || die "openkeel-db-manage upgrade failed: $OUT/db-manage.log"
"$BIN/openkeel-db-manage" --database-url "sqlite:///$RUN/ok-sqlite/openkeel.sqlite" upgrade \
    >>"$OUT/db-manage.log" 2>&1 || die "SQLite schema: $OUT/db-manage.log"
"$REF_VENV/bin/magnum-db-manage" --config-file "$REF_CONF" --config-file "$RUN/magnum-bench.conf" \
    upgrade >>"$OUT/db-manage.log" 2>&1 || die "magnum-db-manage upgrade failed: $OUT/db-manage.log"

SEED_ARGS=(-n "$N" --project "$PROJECT" --seed "$SEED" --timestamp "$STAMP")
log "seeding $N clusters (+2 nodegroups each) into SQLite, $OK_DB and $MB_DB"
SHOW_UUID=$($PY "$HERE/seed.py" --sqlite "$RUN/ok-sqlite/openkeel.sqlite" "${SEED_ARGS[@]}")
"$REFPY" "$HERE/seed.py" --mysql "$OK_DB_URL" "${SEED_ARGS[@]}" >/dev/null
"$REFPY" "$HERE/seed.py" --mysql "$MB_DB_URL" "${SEED_ARGS[@]}" >/dev/null
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
BENCH_META_WRK="${WRK_BASE[*]} -d <duration>" BENCH_META_WRK_RIG="${WRK_RIG_LIST[*]} -d <duration>" \
BENCH_META_SOCK=$DB_SOCK BENCH_META_REFPY=$REFPY BENCH_META_PYLIB=$WORK/pylib \
BENCH_META_SHOW=$SHOW_PATH \
    $PY - "$OUT" "${HDRS[@]}" <<'EOF'
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
refpy, sock = E["BENCH_META_REFPY"], E["BENCH_META_SOCK"]
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
    "wrk": E["BENCH_META_WRK"], "wrk_rig_list": E["BENCH_META_WRK_RIG"], "headers": headers,
    "show_path": E["BENCH_META_SHOW"],
    "machine": {
        "cpu": sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"),
        "cpus": os.cpu_count(),
        "mem": sh("free -m | awk '/Mem:/{print $2\" MiB\"}'"),
        "kernel": platform.release(),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
    },
    "versions": {
        "wrk": sh("wrk -v 2>&1 | head -1"),
        "mariadb": sh("mariadb --socket=%s -uroot -N -B -e 'SELECT VERSION()'" % sock),
        "python (magnum venv)": sh("%s -c 'import sys; print(sys.version.split()[0])'" % refpy),
        "magnum": sh("%s -c 'import magnum; print(magnum.__version__)' 2>/dev/null" % refpy),
        "gunicorn": sh("PYTHONPATH=%s %s -m gunicorn --version" % (E["BENCH_META_PYLIB"], refpy)),
        "rustc": sh("rustc --version"),
    },
    "startup": startup,
    "checks": checks,
    "sql_per_request": {name(p, "sql-", ".json"): load(p) for p in glob.glob(out + "/sql-*.json")},
}
with open(os.path.join(out, "meta.json"), "w") as f:
    json.dump(meta, f, indent=1)
EOF
"${LIB[@]}" report "$RESULTS" --meta "$OUT/meta.json" >"$OUT/table.md"
cp "$RUN"/*.log "$OUT/" 2>/dev/null || true
log "results: $OUT (table.md, results.jsonl, results.jsonl.wrk.txt, meta.json)"
cat "$OUT/table.md"
