# shellcheck shell=bash
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

# magnum_venv DIR LOG: MAGNUM_VENV=DIR/magnum-venv, a venv with magnum 23.0.0 (the tests' pins,
# tests/python/requirements-magnum.txt) and gunicorn, made with the distribution's Python
# (BENCH_MAGNUM_PYTHON, default /usr/bin/python3) as packaged deployments (kolla's images, a
# distribution's packages) run Magnum; made again when that Python or the pins change. The
# test venv's Python may be a local build without profile-guided optimisation (pyenv's
# default), which ran Python code about a quarter slower on the 2-core machines here.
magnum_venv() {
    local py=${BENCH_MAGNUM_PYTHON:-/usr/bin/python3} log=$2 root stamp
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    MAGNUM_VENV=$1/magnum-venv
    stamp=$({ "$py" -VV; cat "$root/tests/python/requirements-magnum.txt" \
        "$root/tests/python/requirements-constraints.txt"; } | sha256sum | cut -c1-16)
    if [ "$(cat "$MAGNUM_VENV/.bench-stamp" 2>/dev/null)" != "$stamp" ]; then
        echo "building $MAGNUM_VENV with $py ($("$py" -V 2>&1)): magnum 23.0.0, gunicorn" >&2
        rm -rf "$MAGNUM_VENV"
        if ! { "$py" -m venv "$MAGNUM_VENV" &&
            (cd "$root/tests/python" && "$MAGNUM_VENV/bin/python" -m pip install -q \
                --disable-pip-version-check -r requirements-magnum.txt \
                -c requirements-constraints.txt gunicorn); } >"$log" 2>&1; then
            echo "could not make $MAGNUM_VENV with $py (Debian: apt-get install python3-venv): $log" >&2
            return 1
        fi
        echo "$stamp" >"$MAGNUM_VENV/.bench-stamp"
    fi
    "$MAGNUM_VENV/bin/python" -c 'import magnum, pymysql, gunicorn' 2>/dev/null || {
        echo "$MAGNUM_VENV lacks magnum, PyMySQL or gunicorn" >&2
        return 1
    }
}

# magnum_noauth_paste FILE USER PROJECT: Magnum 23.0.0's api-paste.ini (etc/magnum/api-paste.ini)
# with the interop tests' noauth filter (tests/python/interop) where keystonemiddleware's
# authtoken stands, so that magnum-api runs without Keystone; requests carrying identity
# headers pass through it untouched, the others get USER in PROJECT with admin, member, reader.
magnum_noauth_paste() {
    cat >"$1" <<PASTE
[composite:main]
paste.composite_factory = magnum.api:root_app_factory
/: api

[pipeline:api]
pipeline = cors http_proxy_to_wsgi request_id osprofiler noauth api_v1

[app:api_v1]
paste.app_factory = magnum.api.app:app_factory

[filter:osprofiler]
paste.filter_factory = magnum.common.profiler:WsgiMiddleware.factory

[filter:request_id]
paste.filter_factory = oslo_middleware:RequestId.factory

[filter:cors]
paste.filter_factory = oslo_middleware.cors:filter_factory
oslo_config_project = magnum

[filter:http_proxy_to_wsgi]
paste.filter_factory = oslo_middleware.http_proxy_to_wsgi:HTTPProxyToWSGI.factory
oslo_config_project = magnum

[filter:noauth]
paste.filter_factory = openkeel_interop.noauth:filter_factory
user_id = $2
project_id = $3
roles = admin,member,reader
PASTE
}
