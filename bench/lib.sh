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
