#!/usr/bin/env bash
# Instructions the all-in-one spends per cluster show (or list) on the test MariaDB, counted by
# valgrind's callgrind: repeatable to a fraction of a percent on this noisy machine, where
# CPU time per request moves by a fifth between runs. Start-up, the seeding and 20 warm-up
# shows are not counted (instrumentation is switched on for the measured shows only).
#
#   tests/services/start.sh                         # the test MariaDB
#   BIN_DIR=target/release bench/show_instructions.sh [LABEL]
#   BENCH_SHOWS=400                                  # requests measured
#   BENCH_REQUEST=list BENCH_SHOWS=10                # GET /v1/clusters/detail of 1,000 clusters
#   BENCH_CALLGRIND_OUT=/tmp/cg.out                  # keep the profile (callgrind_annotate)
#
# Prints "<label> instructions/<request>=<n>". Needs valgrind and the tests' venv (pymysql).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN_DIR:-$ROOT/target/release}
LABEL=${1:-openkeel}
N=${BENCH_SHOWS:-400}
REQUEST=${BENCH_REQUEST:-show}
case $REQUEST in show) CLUSTERS=20 ;; list) CLUSTERS=1000 ;; *) echo "BENCH_REQUEST is show or list" >&2; exit 1 ;; esac
PORT=${BENCH_PORT:-9841}
eval "$("$ROOT/tests/services/env.sh")"
RUN=$(mktemp -d)
DB=okinstr_$$
mdb() {  # mdb SQL: one statement as the test MariaDB's user
    "$OPENKEEL_TEST_VENV/bin/python" -c '
import sys, urllib.parse, pymysql
u = urllib.parse.urlparse(sys.argv[1])
pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username,
                password=urllib.parse.unquote(u.password or "")).cursor().execute(sys.argv[2])
' "$OPENKEEL_TEST_MYSQL_URL" "$1"
}
SERVER=
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null
    wait 2>/dev/null || true
    mdb "DROP DATABASE IF EXISTS \`$DB\`"
    rm -rf "$RUN"
}
mdb "CREATE DATABASE \`$DB\`"
trap cleanup EXIT
URL="${OPENKEEL_TEST_MYSQL_URL%/}/$DB"
"$BIN/openkeel-db-manage" --database-url "$URL" upgrade >/dev/null 2>&1
"$OPENKEEL_TEST_VENV/bin/python" "$ROOT/bench/seed.py" --mysql "${URL/mysql:/mysql+pymysql:}" \
    -n "$CLUSTERS" --project bench-project --seed 1 --timestamp '2026-12-01 00:00:00' >/dev/null
printf '[DEFAULT]\nperiodic_enable = false\n[database]\nconnection = %s\n' "$URL" >"$RUN/ok.conf"
mkdir "$RUN/data"
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$RUN/cg.out" \
    "$BIN/openkeel" --data-dir "$RUN/data" --bind "127.0.0.1:$PORT" --config-file "$RUN/ok.conf" \
    >"$RUN/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/" >/dev/null && break; sleep 0.2; done
python3 - "$N" "$PORT" "$SERVER" "$REQUEST" <<'PY'
import http.client, json, subprocess, sys
n, port, pid, request = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
h = {"X-User-Id": "bench-user", "X-Project-Id": "bench-project", "X-Roles": "member,reader",
     "OpenStack-API-Version": "container-infra latest"}
c = http.client.HTTPConnection("127.0.0.1", port)
def get(path):
    c.request("GET", path, headers=h)
    r = c.getresponse()
    body = r.read()
    assert r.status == 200, (r.status, body)
    return body
uuid = json.loads(get("/v1/clusters?limit=1"))["clusters"][0]["uuid"]
path = "/v1/clusters/" + uuid if request == "show" else "/v1/clusters/detail"
for _ in range(20 if request == "show" else 2):
    get(path)
subprocess.run(["callgrind_control", "-i", "on", pid], check=True, capture_output=True)
for _ in range(n):
    get(path)
subprocess.run(["callgrind_control", "-i", "off", pid], check=True, capture_output=True)
PY
callgrind_control -d "$SERVER" >/dev/null
sleep 1
out=$(ls -S "$RUN"/cg.out* | head -1)
ir=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !n++ {gsub(",", "", $1); print $1}')
if [ -n "${BENCH_CALLGRIND_OUT:-}" ]; then cp "$out" "$BENCH_CALLGRIND_OUT"; fi
echo "$LABEL instructions/$REQUEST=$((ir / N)) (requests=$N total=$ir)"
