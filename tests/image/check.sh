#!/usr/bin/env bash
# kolla's real start path inside the built images (deploy/images/build.sh with buildah):
#
#   tests/image/check.sh [REGISTRY/PREFIX] [TAG]        (default: openkeel, the crate version)
#
# What crates/cli/tests/kolla.rs does on a scratch root, here in the images themselves:
# kolla-ansible's own magnum templates are rendered for a one-host inventory
# (tests/python/kolla_render.py, kolla-ansible from $OPENKEEL_TEST_VENV/kolla-site), and each
# kolla container is a buildah working container of the image, run as the image runs under
# docker: its ENTRYPOINT + CMD (dumb-init --single-child -- kolla_start), as its USER (magnum,
# so kolla_start's `sudo -E kolla_set_configs` goes through the image's sudoers), with
# KOLLA_CONFIG_STRATEGY=COPY_ALWAYS, the rendered service directory mounted read-only at
# /var/lib/kolla/config_files and a kolla_logs directory at /var/log/kolla, as kolla-ansible
# mounts them. buildah's chroot isolation shares the host's network (the API's port is on the
# host's loopback) and PID namespace; a second `buildah run` of the same working container is
# kolla's `docker exec` of a healthcheck.
#
# Checked: the bootstrap container (KOLLA_BOOTSTRAP) runs `magnum-db-manage upgrade` on a fresh
# MariaDB database; magnum-conductor starts and `healthcheck_port magnum-conductor <rabbit
# port>` passes in its container; magnum-api starts under `uwsgi
# /etc/magnum/magnum-api-uwsgi.ini`, `healthcheck_curl http://127.0.0.1:<port>/healthcheck`
# passes in its container, `GET /` answers from inside and from the host, `/v1/clusters`
# without a token is 401, the processes run as magnum (42428), logs are where kolla's files say;
# with magnum_enable_tls_backend, the API answers HTTPS with kolla's certificate paths.
#
# Needs root, buildah, curl, openssl, the mysql client, the images, and the test services
# (tests/services/env.sh: OPENKEEL_TEST_MYSQL_URL, OPENKEEL_TEST_RABBIT_URL, OPENKEEL_TEST_VENV;
# Keystone's URL if set).
# Loopback only; the whole run is bounded by CHECK_TIMEOUT seconds (default 300); its
# containers, processes, database and files are removed at the end, pass or fail.
# STORAGE_DRIVER: buildah's storage driver (default vfs, as build.sh).
set -eu
set -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
prefix=${1:-openkeel}
tag=${2:-$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)}
limit=${CHECK_TIMEOUT:-300}

say() { printf '%s\n' "$*"; }
fail() {
    local f
    printf 'FAILED: %s\n' "$*" >&2
    # The containers' output so far (kolla_start's trace, stderr) and the services' log files.
    for f in "${work:-/nonexistent}"/*.log "${work:-/nonexistent}"/logs-*/magnum/*.log; do
        [ -f "$f" ] || continue
        printf -- '--- %s (last 20 lines)\n' "${f#"$work"/}" >&2
        tail -n 20 "$f" >&2
    done
    exit 1
}
ok() { say "ok: $*"; passed=$((passed + 1)); }
passed=0
# Seconds since $1 (milliseconds since the epoch, `date +%s%3N`).
since() {
    local d=$(($(date +%s%3N) - $1))
    printf '%d.%03d' $((d / 1000)) $((d % 1000))
}

[ "$(id -u)" = 0 ] || fail "needs root (buildah without a user namespace)"
command -v buildah >/dev/null || fail "needs buildah (apt-get install buildah)"
command -v mysql >/dev/null || fail "needs the mysql client (apt-get install mariadb-client)"
command -v curl >/dev/null || fail "needs curl"
command -v openssl >/dev/null || fail "needs openssl"
if [ -z "${OPENKEEL_TEST_MYSQL_URL:-}" ] || [ -z "${OPENKEEL_TEST_RABBIT_URL:-}" ] ||
    [ -z "${OPENKEEL_TEST_VENV:-}" ]; then
    eval "$("$repo/tests/services/env.sh" 2>/dev/null)" || true
fi
: "${OPENKEEL_TEST_MYSQL_URL:?MariaDB not running (tests/services/start.sh)}"
: "${OPENKEEL_TEST_RABBIT_URL:?RabbitMQ not running (tests/services/start.sh)}"
: "${OPENKEEL_TEST_VENV:?no test venv (tests/services/start.sh)}"
py=$OPENKEEL_TEST_VENV/bin/python
kolla=$OPENKEEL_TEST_VENV/kolla-site
roles=$kolla/share/kolla-ansible/ansible/roles
[ -f "$roles/magnum/templates/magnum.conf.j2" ] ||
    fail "$kolla lacks kolla-ansible (tests/python/requirements-kolla.txt)"

B() { buildah --storage-driver "${STORAGE_DRIVER:-vfs}" "$@"; }
for t in magnum-api magnum-conductor; do
    B inspect --type image "$prefix/$t:$tag" >/dev/null 2>&1 ||
        fail "no image $prefix/$t:$tag (deploy/images/build.sh $prefix $tag)"
done

id=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
work=$(mktemp -d "${TMPDIR:-/var/tmp}/okimg-check.XXXXXX")
db=img_$id
containers=()
runs=()
db_made=

# Every process of a `buildah run` (its chroot runtime, dumb-init, the service) is a
# descendant of the buildah process.
descendants() {
    local p c
    for p in "$@"; do
        for c in $(pgrep -P "$p"); do
            echo "$c"
            descendants "$c"
        done
    done
}
# The PIDs among a `buildah run`'s processes whose program (argv[0]'s base name) is $2.
procs_named() {
    local p a
    for p in $(descendants "$1"); do
        a=$(tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -1)
        [ "${a##*/}" = "$2" ] && echo "$p"
    done
    true
}

# docker stop for a `buildah run` in the background: SIGTERM to the container's first process
# (dumb-init, which passes it to the service), and after 10 s SIGTERM to buildah (which ends its
# processes and unmounts) and SIGKILL to whatever is left. 0 when it all ended within the 10 s.
stop_run() {
    local r=$1 all p i alive=1
    all=$(descendants "$r")
    # shellcheck disable=SC2046
    kill -TERM $(procs_named "$r" dumb-init) 2>/dev/null
    for ((i = 0; i < 20; i++)); do
        alive=
        for p in $all; do
            kill -0 "$p" 2>/dev/null && alive=1
        done
        [ -z "$alive" ] && break
        sleep 0.5
    done
    if [ -n "$alive" ]; then
        # shellcheck disable=SC2046
        kill -TERM $(procs_named "$r" buildah) 2>/dev/null
        sleep 2
        # shellcheck disable=SC2086
        kill -KILL $all 2>/dev/null
    fi
    wait "$r" 2>/dev/null
    [ -z "$alive" ]
}

cleanup() {
    set +e
    # shellcheck disable=SC2046
    [ -n "${watchdog:-}" ] && kill $(pgrep -P "$watchdog") "$watchdog" 2>/dev/null
    for r in "${runs[@]}"; do
        stop_run "$r"
    done
    for c in "${containers[@]}"; do
        B rm "$c" >/dev/null 2>&1
    done
    if [ -n "$db_made" ]; then
        sql "DROP DATABASE IF EXISTS \`$db\`"
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# The bound on the whole run: past it the script is ended (and cleans up).
(
    sleep "$limit"
    echo "FAILED: over CHECK_TIMEOUT=$limit s" >&2
    kill -TERM $$
) &
watchdog=$!

# The services' URLs, decoded; the inventory's variables as kolla.rs sets them.
"$py" - "$work/vars.json" "$db" "$id" >"$work/env" <<'EOF'
import json, os, socket, sys
from urllib.parse import urlsplit, unquote

out, db, ident = sys.argv[1:4]
m = urlsplit(os.environ["OPENKEEL_TEST_MYSQL_URL"])
q = urlsplit(os.environ["OPENKEEL_TEST_RABBIT_URL"])
keystone = os.environ.get("OPENKEEL_TEST_KEYSTONE_URL", "http://127.0.0.1:5000/v3")
keystone = keystone.rstrip("/").removesuffix("/v3")
def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


port, tls_port = free_port(), free_port()
transport = "rabbit://%s:%s@%s:%d//" % (q.username, q.password, q.hostname, q.port or 5672)
v = {
    "api_interface_address": "127.0.0.1",
    "magnum_api_listen_port": port, "magnum_api_port": port,
    "magnum_api_workers": 2, "magnum_conductor_workers": 2,
    "magnum_logging_debug": "False",
    "rpc_transport_url": transport, "notify_transport_url": transport,
    "magnum_database_user": unquote(m.username), "magnum_database_password": unquote(m.password or ""),
    "magnum_database_address": "%s:%d" % (m.hostname, m.port or 3306), "magnum_database_name": db,
    "magnum_database_enable_tls_internal": "no",
    "database_connection_recycle_time": 10, "database_max_pool_size": 1,
    "enable_cinder": "no", "enable_barbican": "no", "enable_osprofiler": "no",
    "openstack_region_name": "RegionOne", "openstack_cacert": "",
    "keystone_internal_url": keystone, "keystone_public_url": keystone,
    "default_user_domain_name": "Default", "default_project_domain_name": "Default",
    "magnum_keystone_user": "magnum", "magnum_keystone_password": "magnum-secret",
    "memcache_security_strategy": "ENCRYPT", "memcache_secret_key": "not-used-by-the-check",
    "groups": {"memcached": ["localhost"]}, "memcached_port": 11211,
    "magnum_trustee_domain_admin": "magnum_trustee_domain_admin", "magnum_trustee_domain": "magnum",
    "enable_cluster_user_trust": False,
    "magnum_enabled_notification_topics": [],
    "om_enable_rabbitmq_tls": "no", "om_enable_rabbitmq_stream_fanout": "no",
    "om_rabbitmq_qos_prefetch_count": 1,
    "container_config_directory": "/var/lib/kolla/config_files",
    "magnum_enable_tls_backend": "no",
    "kolla_copy_ca_into_containers": "no",
    "kolla_base_distro": "debian",
    # /etc/kolla/config/magnum.conf: a private exchange and topic (the broker is shared).
    "custom_magnum_conf": "[DEFAULT]\ncontrol_exchange = okimg_%s\n\n[conductor]\ntopic = okimg-%s\n"
    % (ident, ident),
}
json.dump(v, open(out, "w"))
# magnum_enable_tls_backend: the API's uWSGI listens with HTTPS (its own port here).
v.update(magnum_enable_tls_backend="yes", magnum_api_listen_port=tls_port, magnum_api_port=tls_port)
json.dump(v, open(out.replace(".json", "-tls.json"), "w"))
print("db_host=%s db_port=%d db_user=%s mq_port=%d api_port=%d tls_port=%d"
      % (m.hostname, m.port or 3306, unquote(m.username), q.port or 5672, port, tls_port))
print("export MYSQL_PWD=%s" % __import__("shlex").quote(unquote(m.password or "")))
EOF
db_host='' db_port='' db_user='' mq_port='' api_port='' tls_port=''
# shellcheck disable=SC1091
. "$work/env"
sql() { mysql -h "$db_host" -P "$db_port" -u "$db_user" -N -B -e "$1"; }

say "images $prefix/magnum-api:$tag, $prefix/magnum-conductor:$tag; database $db; API port $api_port"

# The image's configuration: what docker runs.
image_config() {
    B inspect --type image "$1" | "$py" -c '
import json, sys
c = json.load(sys.stdin)["Docker"]["config"]
print(json.dumps(c.get("Entrypoint")), json.dumps(c.get("Cmd")), c.get("User"))'
}
for t in magnum-api magnum-conductor; do
    conf=$(image_config "$prefix/$t:$tag")
    [ "$conf" = '["dumb-init", "--single-child", "--"] ["kolla_start"] magnum' ] ||
        fail "$t's entrypoint, command, user: $conf"
done
ok "both images: ENTRYPOINT dumb-init --single-child --, CMD kolla_start, USER magnum"
start_cmd=(dumb-init --single-child -- kolla_start)

# kolla-ansible's templates, rendered as kolla-ansible's magnum role writes /etc/kolla/<service>.
"$py" "$repo/tests/python/kolla_render.py" "$roles" "$work/vars.json" "$work/etc-kolla"
grep -q "^http = 127.0.0.1:$api_port$" "$work/etc-kolla/magnum-api/magnum-api-uwsgi.ini" ||
    fail "rendered uwsgi ini: $(cat "$work/etc-kolla/magnum-api/magnum-api-uwsgi.ini")"
# ... and with magnum_enable_tls_backend, plus the certificate and key kolla-ansible's
# copy-certs puts beside them (self-signed here).
"$py" "$repo/tests/python/kolla_render.py" "$roles" "$work/vars-tls.json" "$work/etc-kolla-tls"
grep -q "^https = 127.0.0.1:$tls_port,/etc/magnum/certs/magnum-cert.pem,/etc/magnum/certs/magnum-key.pem$" \
    "$work/etc-kolla-tls/magnum-api/magnum-api-uwsgi.ini" ||
    fail "rendered uwsgi ini (TLS): $(cat "$work/etc-kolla-tls/magnum-api/magnum-api-uwsgi.ini")"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
    -keyout "$work/etc-kolla-tls/magnum-api/magnum-key.pem" \
    -out "$work/etc-kolla-tls/magnum-api/magnum-cert.pem" 2>/dev/null
ok "kolla-ansible's magnum templates rendered (config.json, magnum.conf, magnum-api-uwsgi.ini; also with magnum_enable_tls_backend)"

sql "CREATE DATABASE \`$db\` CHARACTER SET utf8mb4"
db_made=1

# A kolla container: NAME IMAGE SERVICE-DIR [buildah run options...] -- the command to run.
new_container() {
    local name=okimg-$id-$1
    B from --quiet --name "$name" --add-host "$name:127.0.0.1" "$2" >/dev/null
    containers+=("$name")
    # kolla_logs: a volume, owned as the image's /var/log/kolla is (root:kolla, 2775)
    mkdir -p "$work/logs-$1"
    chown 0:42400 "$work/logs-$1"
    chmod 2775 "$work/logs-$1"
}
# kolla-ansible's default volumes also bring the host's /etc/localtime.
localtime=()
[ -e /etc/localtime ] && localtime=(-v /etc/localtime:/etc/localtime:ro)
# run_in SECONDS NAME CONFIG [options] CONTAINER -- CMD: CONFIG the rendered service directory
# under $work (etc-kolla/magnum-api, ...); SECONDS 0 for no time limit.
run_in() {
    local secs=$1 name=$2 config=$3
    shift 3
    timeout "$secs" buildah --storage-driver "${STORAGE_DRIVER:-vfs}" run --isolation chroot --hostname "okimg-$id-$name" \
        -v "$work/$config:/var/lib/kolla/config_files:ro" \
        -v "$work/logs-$name:/var/log/kolla" "${localtime[@]}" \
        -e KOLLA_CONFIG_STRATEGY=COPY_ALWAYS "$@"
}
# kolla's `docker exec <container> <healthcheck>`: another run of the same working container.
exec_in() {
    local name=$1
    shift
    B run --isolation chroot --hostname "okimg-$id-$name" "okimg-$id-$name" -- "$@"
}
# wait_for SECONDS WHAT CMD...: CMD passes within SECONDS.
wait_for() {
    local secs=$1 what=$2 i
    shift 2
    for ((i = 0; i < secs; i++)); do
        if "$@" >/dev/null 2>&1; then
            return 0
        fi
        sleep 1
    done
    fail "$what did not pass in $secs s"
}
# The real, effective, saved and file-system UIDs of a process.
uid_of() { awk '/^Uid:/ {print $2 "," $3 "," $4 "," $5}' /proc/"$1"/status; }

# 1. bootstrap_magnum: magnum-api's image with KOLLA_BOOTSTRAP (extend_start runs
#    `magnum-db-manage upgrade` and exits).
new_container bootstrap "$prefix/magnum-api:$tag"
t0=$(date +%s%3N)
if ! run_in 120 bootstrap etc-kolla/magnum-api -e KOLLA_BOOTSTRAP= "okimg-$id-bootstrap" -- \
    "${start_cmd[@]}" >"$work/bootstrap.log" 2>&1; then
    fail "the bootstrap container failed"
fi
grep -q b3e1cf4a2d5e "$work/bootstrap.log" || fail "bootstrap: no b3e1cf4a2d5e in its output"
rev=$(sql "SELECT version_num FROM \`$db\`.alembic_version")
[ "$rev" = b3e1cf4a2d5e ] || fail "alembic_version is '$rev'"
tables=$(sql "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = '$db'")
ok "bootstrap (KOLLA_BOOTSTRAP): kolla_start -> magnum-db-manage upgrade in $(since "$t0") s; alembic_version b3e1cf4a2d5e, $tables tables in $db"

# 2. magnum_conductor.
new_container conductor "$prefix/magnum-conductor:$tag"
run_in 0 conductor etc-kolla/magnum-conductor "okimg-$id-conductor" -- "${start_cmd[@]}" \
    >"$work/conductor.log" 2>&1 &
runs+=($!)
crun=$!
t0=$(date +%s%3N)
wait_for 60 "healthcheck_port magnum-conductor $mq_port (in the conductor's container)" \
    exec_in conductor healthcheck_port magnum-conductor "$mq_port"
ok "magnum-conductor: healthcheck_port magnum-conductor $mq_port passes in its container ($(since "$t0") s after start)"
if exec_in conductor healthcheck_port magnum-conductor 1 >/dev/null 2>&1; then
    fail "healthcheck_port passed for port 1"
fi
# The container shares the host's PID namespace: make sure the connection found is this
# container's conductor, not some other magnum-conductor on the host.
cpids=$(procs_named "$crun" magnum-conductor)
[ -n "$cpids" ] || fail "no magnum-conductor process under the conductor's container"
cpid=$(echo "$cpids" | head -1)
[ "$(uid_of "$cpid")" = 42428,42428,42428,42428 ] || fail "magnum-conductor's uids: $(uid_of "$cpid")"
ss -ntp state established "( dport = :$mq_port )" | grep -q "pid=$cpid," ||
    fail "magnum-conductor ($cpid) has no connection to port $mq_port"
grep -q "Running command: 'magnum-conductor --config-file /etc/magnum/magnum.conf'" "$work/conductor.log" ||
    fail "conductor: no Running command line"
ok "  ... and it is this container's: pid $cpid, uid 42428 (magnum), connected to RabbitMQ :$mq_port; healthcheck_port ... 1 fails"

# 3. magnum_api.
new_container api "$prefix/magnum-api:$tag"
run_in 0 api etc-kolla/magnum-api "okimg-$id-api" -- "${start_cmd[@]}" >"$work/api.log" 2>&1 &
runs+=($!)
arun=$!
t0=$(date +%s%3N)
url=http://127.0.0.1:$api_port
wait_for 60 "healthcheck_curl $url/healthcheck (in the API's container)" \
    exec_in api healthcheck_curl "$url/healthcheck"
ok "magnum-api: healthcheck_curl $url/healthcheck passes in its container ($(since "$t0") s after start)"
if exec_in api healthcheck_curl "http://127.0.0.1:1/healthcheck" >/dev/null 2>&1; then
    fail "healthcheck_curl passed against a closed port"
fi
grep -q "Running command: 'uwsgi /etc/magnum/magnum-api-uwsgi.ini'" "$work/api.log" ||
    fail "api: no Running command line"
body=$(exec_in api curl -sS --fail "$url/")
case "$body" in *'"versions"'*"\"$url/v1/\""*) ;; *) fail "GET / in the container: $body" ;; esac
hbody=$(curl -sS --fail --max-time 10 "$url/")
case "$hbody" in *'"versions"'*) ;; *) fail "GET / from the host: $hbody" ;; esac
code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 10 "$url/v1/clusters")
[ "$code" = 401 ] || fail "GET /v1/clusters without a token: $code"
ok "magnum-api: GET / answers the version document in its container and from the host; GET /v1/clusters without a token is 401"
apids=$(procs_named "$arun" uwsgi)
[ -n "$apids" ] || fail "no uwsgi process under the API's container"
apid=$(echo "$apids" | head -1)
[ "$(uid_of "$apid")" = 42428,42428,42428,42428 ] || fail "uwsgi's uids: $(uid_of "$apid")"
ss -ntlp "( sport = :$api_port )" | grep -q "pid=$apid," || fail "uwsgi ($apid) does not listen on $api_port"
ok "  ... served by this container's uwsgi: pid $apid, uid 42428 (magnum), listening on 127.0.0.1:$api_port"

# 4. magnum_api with magnum_enable_tls_backend: uWSGI's `https = ...` with kolla's certificate.
new_container api-tls "$prefix/magnum-api:$tag"
run_in 0 api-tls etc-kolla-tls/magnum-api "okimg-$id-api-tls" -- "${start_cmd[@]}" \
    >"$work/api-tls.log" 2>&1 &
runs+=($!)
trun=$!
t0=$(date +%s%3N)
turl=https://127.0.0.1:$tls_port
wait_for 60 "healthcheck_curl $turl/healthcheck (in the TLS API's container)" \
    exec_in api-tls healthcheck_curl "$turl/healthcheck"
body=$(exec_in api-tls curl -sSk --fail "$turl/")
case "$body" in *'"versions"'*"\"$turl/v1/\""*) ;; *) fail "GET / over HTTPS in the container: $body" ;; esac
curl -sS --fail --max-time 10 -o /dev/null "http://127.0.0.1:$tls_port/" 2>/dev/null &&
    fail "the TLS listener answered plain HTTP"
tpid=$(procs_named "$trun" uwsgi | head -1)
[ -n "$tpid" ] || fail "no uwsgi process under the TLS API's container"
ss -ntlp "( sport = :$tls_port )" | grep -q "pid=$tpid," ||
    fail "the TLS API's uwsgi ($tpid) does not listen on $tls_port"
ok "magnum-api with magnum_enable_tls_backend: healthcheck_curl $turl/healthcheck passes in its container ($(since "$t0") s after start), GET / links are https, no plain HTTP"

# Logs where kolla's files put them (the kolla_logs volume).
grep -q INFO "$work/logs-api/magnum/magnum-api.log" || fail "no magnum-api.log"
grep -q "GET /healthcheck => generated" "$work/logs-api/magnum/magnum-api-uwsgi.log" ||
    fail "no request line in magnum-api-uwsgi.log"
grep -q INFO "$work/logs-conductor/magnum/magnum-conductor.log" || fail "no magnum-conductor.log"
if grep -q magnum-secret "$work"/logs-*/magnum/*.log; then fail "a password in a log"; fi
ok "logs: /var/log/kolla/magnum/magnum-api.log, magnum-api-uwsgi.log (request lines), magnum-conductor.log"

# docker stop (kolla-ansible's stop and restart): SIGTERM ends both within docker's 10 s.
t0=$(date +%s%3N)
stop_run "$arun" || fail "magnum-api's container did not end on SIGTERM within 10 s"
stop_run "$trun" || fail "the TLS magnum-api's container did not end on SIGTERM within 10 s"
stop_run "$crun" || fail "magnum-conductor's container did not end on SIGTERM within 10 s"
runs=()
ok "docker stop's SIGTERM (to dumb-init) ends the magnum-api and magnum-conductor containers ($(since "$t0") s for the three)"

say "$passed passed, 0 failed"
