# Shell helpers shared by the benchmark scripts (sourced; needs $PY, the test venv's python,
# and $OPENKEEL_TEST_MYSQL_URL from tests/services/env.sh).

# mdb SQL: one statement as the test MariaDB's user.
mdb() {
    "$PY" -c '
import sys, urllib.parse, pymysql
u = urllib.parse.urlparse(sys.argv[1])
pymysql.connect(host=u.hostname, port=u.port or 3306, user=u.username,
                password=urllib.parse.unquote(u.password or "")).cursor().execute(sys.argv[2])
' "$OPENKEEL_TEST_MYSQL_URL" "$1"
}

# test_services: the test services' environment (tests/services/env.sh; run from the
# repository's root), starting them first when MariaDB, RabbitMQ or the venv is missing;
# exported for the programs a benchmark runs.
test_services() {
    eval "$(tests/services/env.sh 2>/dev/null)"
    if [ -z "${OPENKEEL_TEST_MYSQL_URL:-}" ] || [ -z "${OPENKEEL_TEST_RABBIT_URL:-}" ] ||
        [ -z "${OPENKEEL_TEST_VENV:-}" ]; then
        tests/services/start.sh >&2
        eval "$(tests/services/env.sh)"
    fi
    export OPENKEEL_TEST_MYSQL_URL OPENKEEL_TEST_RABBIT_URL OPENKEEL_TEST_VENV
}
