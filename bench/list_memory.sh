#!/usr/bin/env bash
# Resident memory of the all-in-one server while it answers concurrent 1,000-cluster lists
# (docs/performance.md, memory). No reference rig needed.
#   BENCH_CLUSTERS=1000 BENCH_CONNECTIONS=16 BENCH_SECONDS=15 BENCH_BUILD=1 bench/list_memory.sh
#   BENCH_DB=mariadb bench/list_memory.sh    # the test MariaDB (tests/services/start.sh first)
#   BENCH_REQUEST=show bench/list_memory.sh  # GET /v1/clusters/<uuid> instead of the list
#   BENCH_PERF=/tmp/perf.data ...            # perf record -g of the server during the load
#   BENCH_PERF_DB=/tmp/db.data ...           # and of mariadbd (BENCH_DB=mariadb)
#   BENCH_LIST_CONCURRENCY=1 ...          # [openkeel] list_concurrency (0: the cores)
#   BENCH_WRK_OUT=/tmp/wrk.txt ...        # keep wrk's output (its latency distribution)
#   BENCH_CONF='[database]\nmax_pool_size = 2\nmax_overflow = 0' ...  # more magnum.conf lines
# The server runs in the shell's session, beside wrk; BENCH_ENV=setsid gives it a session (the
# kernel's scheduling group) of its own, as bench/clusters_detail.sh does: the figures differ
# (docs/performance.md, "Show on MariaDB, 2026-12-08").
# Prints VmRSS at idle, VmHWM after the load, and wrk's req/s and p99. Extra server environment can be
# given in BENCH_ENV.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
N=${BENCH_CLUSTERS:-1000}
C=${BENCH_CONNECTIONS:-16}
SECS=${BENCH_SECONDS:-15}
PORT=${BENCH_PORT:-9821}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)" >&2; exit 1; }
if [ "${BENCH_BUILD:-1}" = 1 ]; then
    (cd "$ROOT" && cargo build --release -p openkeel >&2)
fi
BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release
RUN=$(mktemp -d)
SERVER=
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null; rm -rf "$RUN"; }
trap cleanup EXIT
printf '[DEFAULT]\nperiodic_enable = false\n' >"$RUN/ok.conf"
mkdir -p "$RUN/data"
SEED=(-n "$N" --project bench-project --seed 1 --timestamp '2026-12-01 00:00:00')
case ${BENCH_DB:-sqlite} in
sqlite)
    "$BIN/openkeel-db-manage" --database-url "sqlite:///$RUN/data/openkeel.sqlite" upgrade >/dev/null 2>&1
    python3 "$HERE/seed.py" --sqlite "$RUN/data/openkeel.sqlite" "${SEED[@]}" >/dev/null ;;
mariadb)
    eval "$("$ROOT/tests/services/env.sh")"
    DB=okbench_mem_$$
    mdb() {  # mdb SQL: run one statement as the test MariaDB's user
        "$OPENKEEL_TEST_VENV/bin/python" -c '
import sys, urllib.parse, pymysql
u = urllib.parse.urlparse(sys.argv[1])
pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username,
                password=urllib.parse.unquote(u.password or "")).cursor().execute(sys.argv[2])
' "$OPENKEEL_TEST_MYSQL_URL" "$1"
    }
    mdb "CREATE DATABASE \`$DB\`"
    trap 'cleanup; mdb "DROP DATABASE IF EXISTS \`$DB\`"' EXIT
    URL="${OPENKEEL_TEST_MYSQL_URL%/}/$DB"
    "$BIN/openkeel-db-manage" --database-url "$URL" upgrade >/dev/null 2>&1
    "$OPENKEEL_TEST_VENV/bin/python" "$HERE/seed.py" --mysql "${URL/mysql:/mysql+pymysql:}" "${SEED[@]}" >/dev/null
    printf '[database]\nconnection = %s\n' "$URL" >>"$RUN/ok.conf" ;;
*) echo "BENCH_DB is sqlite or mariadb" >&2; exit 1 ;;
esac
printf '[openkeel]\nlist_concurrency = %s\n' "${BENCH_LIST_CONCURRENCY:-0}" >>"$RUN/ok.conf"
[ -z "${BENCH_CONF:-}" ] || printf '%b\n' "$BENCH_CONF" >>"$RUN/ok.conf"
env ${BENCH_ENV:-} "$BIN/openkeel" --data-dir "$RUN/data" --bind "127.0.0.1:$PORT" \
    --config-file "$RUN/ok.conf" >"$RUN/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.1; done
H=(-H "X-User-Id: bench-user" -H "X-Project-Id: bench-project" -H "X-Roles: member,reader"
   -H "OpenStack-API-Version: container-infra latest")
got=$(curl -sf "${H[@]}" "http://127.0.0.1:$PORT/v1/clusters/detail" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["clusters"]))')
[ "$got" = "$N" ] || { echo "the list returned $got clusters, not $N" >&2; exit 1; }
TARGET="http://127.0.0.1:$PORT/v1/clusters/detail"
if [ "${BENCH_REQUEST:-list}" = show ]; then
    uuid=$(curl -sf "${H[@]}" "http://127.0.0.1:$PORT/v1/clusters?limit=1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clusters"][0]["uuid"])')
    TARGET="http://127.0.0.1:$PORT/v1/clusters/$uuid"
fi
kb() { awk -v k="$1:" '$1==k {print $2}' "/proc/$SERVER/status"; }
idle=$(kb VmRSS)
if [ -n "${BENCH_PERF:-}" ]; then  # BENCH_PERF=out.data: perf record -g of the server under load
    perf record -g -o "$BENCH_PERF" -p "$SERVER" -- sleep "$SECS" >/dev/null 2>&1 &
    PERF=$!
fi
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # user + system, in ticks
# MariaDB: the server's CPU as well (the test MariaDB of tests/services)
DBPID=
[ "${BENCH_DB:-sqlite}" = mariadb ] && DBPID=$(pgrep -f "mariadbd --defaults-file=${OPENKEEL_TEST_HOME:-/var/tmp/openkeel-test}/mariadb/" | head -1)
if [ -n "${BENCH_PERF_DB:-}" ] && [ -n "$DBPID" ]; then
    perf record -g -o "$BENCH_PERF_DB" -p "$DBPID" -- sleep "$SECS" >/dev/null 2>&1 &
    PERFDB=$!
fi
cpu0=$(cpu "$SERVER"); db0=${DBPID:+$(cpu "$DBPID")}
wrk --latency -t2 -c"$C" -d"${SECS}s" "${H[@]}" "$TARGET" >"$RUN/wrk.txt"
cpu1=$(cpu "$SERVER"); db1=${DBPID:+$(cpu "$DBPID")}
[ -n "${BENCH_PERF:-}" ] && wait "$PERF"
[ -n "${PERFDB:-}" ] && wait "$PERFDB"
hwm=$(kb VmHWM); after=$(kb VmRSS)
[ -z "${BENCH_WRK_OUT:-}" ] || cp "$RUN/wrk.txt" "$BENCH_WRK_OUT"
rps=$(awk '/Requests\/sec/ {print $2}' "$RUN/wrk.txt")
p99=$(awk '$1 == "99%" {print $2; exit}' "$RUN/wrk.txt")
requests=$(awk '/requests in/ {print $1}' "$RUN/wrk.txt")
cpu_ms=$(echo "($cpu1 - $cpu0) * 1000 / $(getconf CLK_TCK) / $requests" | bc -l)
db_ms=0
[ -n "$DBPID" ] && db_ms=$(echo "($db1 - $db0) * 1000 / $(getconf CLK_TCK) / $requests" | bc -l)
printf 'request=%s db=%s clusters=%s connections=%s req/s=%s p99=%s server_cpu_ms/req=%.3f mariadbd_cpu_ms/req=%.3f idle_rss=%.1fMiB hwm=%.1fMiB rss_after=%.1fMiB %s\n' \
    "${BENCH_REQUEST:-list}" "${BENCH_DB:-sqlite}" "$N" "$C" "$rps" "$p99" "$cpu_ms" "$db_ms" "$(echo "$idle/1024" | bc -l)" "$(echo "$hwm/1024" | bc -l)" \
    "$(echo "$after/1024" | bc -l)" "${BENCH_ENV:-}${BENCH_CONF:+ conf: $BENCH_CONF}"
