# shellcheck shell=bash
# Settings and helpers for OpenKeel's test services (MariaDB, RabbitMQ) and the Python
# test venv. Sourced by tests/run.sh and tests/services/*.sh; not run directly.
#
# Everything lives under OPENKEEL_TEST_HOME (default /var/tmp/openkeel-test), which the
# mysql and rabbitmq users must be able to enter (root's home is usually mode 700, so
# keep it out of /root):
#
#   venv/                     Python venv with tests/python/requirements.txt
#   mariadb/                  (mysql) my.cnf, data/, run/ (socket, server pid), mariadbd.log
#   rabbitmq/                 (rabbitmq) .erlang.cookie, rabbitmq.conf, enabled_plugins,
#                             mnesia/, log/, console.log, beam.pid
#   pids/                     pid files of what the scripts started: mariadbd, rabbitmq,
#                             epmd; NAME.by-run = started by a tests/run.sh, which stops it
#   users/                    one file per tests/run.sh currently using the services
#   logs/                     apt, pip, epmd logs
#   lock                      flock(1) lock taken while starting/stopping
#
# Ports (all on 127.0.0.1), each overridable from the environment:
#   OPENKEEL_TEST_MYSQL_PORT        MariaDB                     23306
#   OPENKEEL_TEST_RABBIT_PORT       RabbitMQ AMQP               25682
#   OPENKEEL_TEST_RABBIT_TLS_PORT   RabbitMQ AMQPS              25683
#                                   (client certificate required; PKI in rabbitmq/tls/)
#   OPENKEEL_TEST_RABBIT_DIST_PORT  its Erlang distribution     25692
#   OPENKEEL_TEST_EPMD_PORT         private epmd                24369
#   OPENKEEL_TEST_RABBIT_NODENAME   Erlang node name            openkeel-test@localhost
# (25672, the first choice for AMQP, is the distribution port every default RabbitMQ
# node listens on, the Magnum reference rig's included, so it is avoided.)
#
# Nothing here ever signals a process that is not named in one of our own pid files and
# verified to be the program we started (by its /proc comm and command line/environment).

OK_SERVICES_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OK_REPO="$(cd "$OK_SERVICES_DIR/../.." && pwd)"
OK_HOME="${OPENKEEL_TEST_HOME:-/var/tmp/openkeel-test}"
case $OK_HOME in /*) ;; *) OK_HOME="$PWD/$OK_HOME" ;; esac
OK_HOME="${OK_HOME%/}"

OK_MYSQL_PORT="${OPENKEEL_TEST_MYSQL_PORT:-23306}"
OK_RABBIT_PORT="${OPENKEEL_TEST_RABBIT_PORT:-25682}"
OK_RABBIT_TLS_PORT="${OPENKEEL_TEST_RABBIT_TLS_PORT:-25683}"
OK_RABBIT_DIST_PORT="${OPENKEEL_TEST_RABBIT_DIST_PORT:-25692}"
OK_EPMD_PORT="${OPENKEEL_TEST_EPMD_PORT:-24369}"
OK_RABBIT_NODE="${OPENKEEL_TEST_RABBIT_NODENAME:-openkeel-test@localhost}"

OK_DB_USER=openkeel
OK_DB_PASS=openkeel
OK_MQ_USER=openkeel
OK_MQ_PASS=openkeel

OK_PIDS="$OK_HOME/pids"
OK_LOGS="$OK_HOME/logs"
OK_USERS="$OK_HOME/users"

OK_MDIR="$OK_HOME/mariadb"
OK_MCNF="$OK_MDIR/my.cnf"
OK_MDATA="$OK_MDIR/data"
OK_MRUN="$OK_MDIR/run"
OK_MSOCK="$OK_MRUN/mysqld.sock"
OK_MLOG="$OK_MDIR/mariadbd.log"
OK_MPID="$OK_PIDS/mariadbd.pid"

OK_RDIR="$OK_HOME/rabbitmq"
OK_RLOG_DIR="$OK_RDIR/log"
OK_RPID="$OK_PIDS/rabbitmq.pid"        # the rabbitmq-server script (start-stop-daemon)
OK_RBEAM_PID="$OK_RDIR/beam.pid"       # the Erlang VM (written by RabbitMQ itself)
OK_EPID="$OK_PIDS/epmd.pid"

OK_VENV="$OK_HOME/venv"
OK_PY_REQS="$OK_REPO/tests/python/requirements.txt"
OK_PY_CONSTRAINTS="$OK_REPO/tests/python/requirements-constraints.txt"
# Hook for the later "real Magnum in the venv" work: when this file exists it is
# installed into the same venv (OPENKEEL_TEST_MAGNUM=0 leaves it out).
OK_PY_MAGNUM_REQS="$OK_REPO/tests/python/requirements-magnum.txt"
OK_PY_CAPI_REQS="$OK_REPO/tests/python/requirements-capi.txt"
# kolla and kolla-ansible (their files only) for crates/cli/tests/kolla.rs: beside the venv in
# $OK_VENV/kolla-site, with a stamp of its own (a change rebuilds kolla-site, not the venv)
OK_PY_KOLLA_REQS="$OK_REPO/tests/python/requirements-kolla.txt"

OK_APT_PACKAGES=(mariadb-server mariadb-client rabbitmq-server buildah debootstrap)

OK_MYSQL_URL="mysql://$OK_DB_USER:$OK_DB_PASS@127.0.0.1:$OK_MYSQL_PORT"
OK_RABBIT_URL="amqp://$OK_MQ_USER:$OK_MQ_PASS@127.0.0.1:$OK_RABBIT_PORT/%2f"
# AMQPS: the broker's certificate names localhost, and it requires a client certificate
OK_RABBIT_TLS_URL="amqp://$OK_MQ_USER:$OK_MQ_PASS@localhost:$OK_RABBIT_TLS_PORT/%2f"
OK_RABBIT_TLS_DIR="$OK_RDIR/tls"

# The environment of every RabbitMQ program we run (server and CLI alike): private
# config, data, logs, pid file, cookie (HOME), node name, ports and epmd.
OK_RABBIT_ENV=(
    "HOME=$OK_RDIR"
    "PATH=/usr/lib/rabbitmq/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    "LANG=C.UTF-8" "LC_ALL=C.UTF-8"
    "RABBITMQ_NODENAME=$OK_RABBIT_NODE"
    "RABBITMQ_NODE_IP_ADDRESS=127.0.0.1"
    "RABBITMQ_NODE_PORT=$OK_RABBIT_PORT"
    "RABBITMQ_DIST_PORT=$OK_RABBIT_DIST_PORT"
    "ERL_EPMD_PORT=$OK_EPMD_PORT"
    "ERL_EPMD_ADDRESS=127.0.0.1"
    "RABBITMQ_CONF_ENV_FILE=$OK_RDIR/rabbitmq-env.conf"
    "RABBITMQ_CONFIG_FILE=$OK_RDIR/rabbitmq.conf"
    "RABBITMQ_ADVANCED_CONFIG_FILE=$OK_RDIR/advanced.config"
    "RABBITMQ_ENABLED_PLUGINS_FILE=$OK_RDIR/enabled_plugins"
    "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    "RABBITMQ_LOG_BASE=$OK_RLOG_DIR"
    "RABBITMQ_PID_FILE=$OK_RBEAM_PID"
    "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}"
)

# ------------------------------------------------------------------------ output
ok_log() { printf '[%s %s] %s\n' "${OK_PROG:-services}" "$(date +%H:%M:%S)" "$*" >&2; }
ok_warn() { ok_log "WARNING: $*"; }
ok_die() { ok_log "ERROR: $*"; exit 1; }

ok_in_ci() {
    case "$(printf '%s' "${CI:-}" | tr '[:upper:]' '[:lower:]')" in
        true | 1 | yes) return 0 ;;
        *) return 1 ;;
    esac
}

# ok_tail FILE... -> the last lines of each existing log, indented, on stderr
ok_tail() {
    local f
    for f in "$@"; do
        [ -s "$f" ] || continue
        printf '  ---- last lines of %s ----\n' "$f" >&2
        tail -n "${OK_TAIL_LINES:-25}" "$f" | sed 's/^/  | /' >&2
    done
}

# ok_sub CMD... -> run CMD in a subshell with errexit really on (bash ignores set -e in
# anything run as an if/||/&& condition), without exiting here; its status in OK_SUB_RC
ok_sub() {
    set +e
    (
        set -e
        "$@"
    )
    OK_SUB_RC=$?
    set -e
}

# ------------------------------------------------------------------------ locking
# ok_lock -> exclusive lock on $OK_HOME/lock (waits up to 10 min); ok_unlock releases it
OK_LOCK_FD=
ok_lock() {
    [ -z "$OK_LOCK_FD" ] || return 0
    mkdir -p "$OK_HOME"
    exec {OK_LOCK_FD}>"$OK_HOME/lock"
    if ! flock -n "$OK_LOCK_FD"; then
        ok_log "waiting for another tests/run.sh or tests/services script using $OK_HOME"
        flock -w 600 "$OK_LOCK_FD" || ok_die "could not lock $OK_HOME/lock within 600s"
    fi
}
ok_unlock() {
    if [ -n "$OK_LOCK_FD" ]; then
        flock -u "$OK_LOCK_FD" 2>/dev/null || true
        exec {OK_LOCK_FD}>&-
        OK_LOCK_FD=
    fi
}

# ------------------------------------------------------------------------ processes
# ok_pid_is PIDFILE COMM NEEDLE -> true if PIDFILE names a live process whose comm is COMM
# and whose command line or environment contains NEEDLE (so a recycled pid never counts)
ok_pid_is() {
    local pidfile=$1 comm=$2 needle=$3 pid
    [ -s "$pidfile" ] || return 1
    pid=$(head -n1 "$pidfile" 2>/dev/null | tr -dc '0-9')
    [ -n "$pid" ] && [ -r "/proc/$pid/comm" ] || return 1
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] || return 1
    # (read whole, then match: "… | grep -q" fails under pipefail when grep exits early)
    local text
    text=$({ tr '\0' '\n' <"/proc/$pid/cmdline"; tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null || true)
    [[ $text == *"$needle"* ]]
}
ok_pid_of() { head -n1 "$1" 2>/dev/null | tr -dc '0-9'; }
# ok_pid_alive PIDFILE -> the pid is alive (no identity check: for the moment right after
# start-stop-daemon wrote the pid file, before the program's exec)
ok_pid_alive() {
    local pid
    pid=$(ok_pid_of "$1")
    [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null
}

# ok_clear_stale NAME PIDFILE COMM NEEDLE -> remove PIDFILE if it does not name our process
ok_clear_stale() {
    local name=$1 pidfile=$2
    if [ -e "$pidfile" ] && ! ok_pid_is "$pidfile" "$3" "$4"; then
        ok_log "$name: removing stale pid file $pidfile (pid $(ok_pid_of "$pidfile") is not ours any more)"
        rm -f "$pidfile" "$pidfile.by-run"
    fi
}

ok_mysql_running() { ok_pid_is "$OK_MPID" mariadbd "--defaults-file=$OK_MCNF"; }
ok_rabbit_running() {
    ok_pid_is "$OK_RPID" rabbitmq-server "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
}
ok_beam_running() { ok_pid_is "$OK_RBEAM_PID" beam.smp "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"; }
ok_epmd_ours() { ok_pid_is "$OK_EPID" epmd "$OK_EPMD_PORT"; }

# ok_stop_pid NAME PIDFILE TIMEOUT -> SIGTERM the process in PIDFILE (already verified to
# be ours), wait up to TIMEOUT s, then SIGKILL; remove the pid file
ok_stop_pid() {
    local name=$1 pidfile=$2 timeout=$3 pid i
    pid=$(ok_pid_of "$pidfile")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        ok_log "$name: stopping pid $pid"
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < timeout * 5; i++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 "$pid" 2>/dev/null; then
            ok_warn "$name: pid $pid still running after ${timeout}s, sending SIGKILL"
            kill -KILL "$pid" 2>/dev/null || true
            sleep 0.5
        fi
    fi
    rm -f "$pidfile" "$pidfile.by-run"
}

# ------------------------------------------------------------------------ ports
# ok_port_busy PORT -> true if anything listens on TCP PORT (any address, v4 or v6)
ok_port_busy() {
    local hex
    hex=$(printf '%04X' "$1")
    awk -v p="$hex" 'FNR > 1 { n = split($2, a, ":"); if (a[n] == p && $4 == "0A") f = 1 }
        END { exit !f }' /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

# ok_port_owner_pid PORT -> the pid of the process listening on PORT, best effort
ok_port_owner_pid() {
    local hex inodes ino fd pid
    hex=$(printf '%04X' "$1")
    inodes=$(awk -v p="$hex" 'FNR > 1 { n = split($2, a, ":"); if (a[n] == p && $4 == "0A") print $10 }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null | sort -u)
    [ -n "$inodes" ] || return 0
    for ino in $inodes; do
        for fd in /proc/[0-9]*/fd/*; do
            if [ "$(readlink "$fd" 2>/dev/null)" = "socket:[$ino]" ]; then
                pid=${fd#/proc/}
                echo "${pid%%/*}"
                return 0
            fi
        done
    done
}

# ok_port_owner PORT -> "pid N (command line)" of the listener, best effort
ok_port_owner() {
    local pid
    pid=$(ok_port_owner_pid "$1")
    [ -n "$pid" ] || return 0
    printf 'pid %s (%s)' "$pid" "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-160)"
}

# ok_adopt NAME PORT PIDFILE COMM NEEDLE -> if PORT is held by our own program (its pid
# file lost), write PIDFILE again so it is reused and stopped like one we started
ok_adopt() {
    local name=$1 port=$2 pidfile=$3 pid
    ok_port_busy "$port" || return 0
    pid=$(ok_port_owner_pid "$port")
    [ -n "$pid" ] || return 0
    echo "$pid" >"$pidfile.tmp" && mv -f "$pidfile.tmp" "$pidfile"
    if ok_pid_is "$pidfile" "$4" "$5"; then
        ok_log "$name: found our own server (pid $pid) on port $port without a pid file: adopting it"
    else
        rm -f "$pidfile"
    fi
}

# ok_require_free_port PORT WHAT VAR -> die with a clear message if PORT is taken
ok_require_free_port() {
    local port=$1 what=$2 var=$3 owner
    if ok_port_busy "$port"; then
        owner=$(ok_port_owner "$port")
        ok_die "port $port ($what) is already in use by another process${owner:+: $owner}; stop it or choose another port with $var=<port>"
    fi
}

# ok_wait SECONDS CHECK... -> run CHECK every 0.5 s until it succeeds (0) or SECONDS pass (1)
ok_wait() {
    local secs=$1 end
    shift
    end=$((SECONDS + secs))
    while :; do
        if "$@" >/dev/null 2>&1; then return 0; fi
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.5
    done
}

# ------------------------------------------------------------------------ setup
# ok_prepare_home -> create $OK_HOME and check that mysql/rabbitmq can enter it
ok_prepare_home() {
    mkdir -p "$OK_HOME" "$OK_PIDS" "$OK_LOGS" "$OK_USERS"
    chmod 755 "$OK_HOME"
    local u
    for u in mysql rabbitmq; do
        id "$u" >/dev/null 2>&1 || continue
        if ! runuser -u "$u" -- test -x "$OK_HOME" 2>/dev/null; then
            ok_die "user $u cannot enter $OK_HOME (a parent directory is not world-searchable, e.g. /root); set OPENKEEL_TEST_HOME to a directory such as /var/tmp/openkeel-test"
        fi
    done
}

ok_pkg_installed() {
    local st
    st=$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)
    [[ $st == *"install ok installed"* ]]
}

# ok_apt_install PKG... -> install the missing ones (noninteractive, no service starts)
ok_apt_install() {
    local missing=() p
    for p in "$@"; do ok_pkg_installed "$p" || missing+=("$p"); done
    [ ${#missing[@]} -gt 0 ] || return 0
    command -v apt-get >/dev/null 2>&1 || ok_die "missing ${missing[*]} and there is no apt-get here: install them yourself"
    [ "$(id -u)" = 0 ] || ok_die "missing ${missing[*]}: run as root (apt-get install) or install them yourself"
    ok_log "apt: installing ${missing[*]} (log: $OK_LOGS/apt.log)"
    # Keep the packages' init scripts from starting system-wide daemons (no systemd
    # here): a policy-rc.d that answers 101 while we install, the original put back after.
    local policy=/usr/sbin/policy-rc.d saved="" made=0 rc=0
    if [ -e "$policy" ] && ! grep -qx 'exit 101' "$policy" 2>/dev/null; then
        saved="$policy.openkeel-saved.$$"
        mv "$policy" "$saved"
    fi
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\n# written by openkeel tests/services while installing packages\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        made=1
    fi
    local apt=(apt-get -y -q -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confdef
        -o Dpkg::Options::=--force-confold)
    {
        export DEBIAN_FRONTEND=noninteractive
        # apt-get update only when the lists cannot provide a package we need
        local need_update=0
        for p in "${missing[@]}"; do
            local pol
            pol=$(apt-cache policy "$p" 2>/dev/null || true)
            [[ $pol == *"Candidate: "[!\(]* ]] || need_update=1
        done
        if [ "$need_update" = 1 ]; then
            echo "+ apt-get update"
            "${apt[@]}" update || rc=$?
        fi
        if [ "$rc" = 0 ]; then
            echo "+ apt-get install ${missing[*]}"
            if ! "${apt[@]}" install --no-install-recommends "${missing[@]}"; then
                # stale lists (404s): refresh once and retry
                echo "+ apt-get update (retry)"
                "${apt[@]}" update && "${apt[@]}" install --no-install-recommends "${missing[@]}" || rc=$?
            fi
        fi
    } >>"$OK_LOGS/apt.log" 2>&1 || rc=$?
    [ "$made" = 1 ] && rm -f "$policy"
    [ -n "$saved" ] && mv "$saved" "$policy"
    if [ "$rc" != 0 ]; then
        ok_tail "$OK_LOGS/apt.log"
        ok_die "apt-get could not install ${missing[*]}"
    fi
    for p in "${missing[@]}"; do
        ok_pkg_installed "$p" || { ok_tail "$OK_LOGS/apt.log"; ok_die "package $p is still not installed"; }
    done
    ok_log "apt: installed ${missing[*]}"
}

# ------------------------------------------------------------------------ Python venv
# ok_python_candidates -> pythons to try for the venv, best first
ok_python_candidates() {
    local c seen=" "
    for c in "${OPENKEEL_TEST_PYTHON:-}" python3.11 python3 python3.12 python3.13 /usr/bin/python3; do
        [ -n "$c" ] || continue
        c=$(command -v "$c" 2>/dev/null) || continue
        case $seen in *" $c "*) continue ;; esac
        seen="$seen$c "
        "$c" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && echo "$c"
    done
}

# ok_make_venv DIR -> create a venv with pip in DIR from the first python that can
# (Debian's own python3 needs python3-venv for that: installed when nothing else works)
ok_make_venv() {
    local dir=$1 py
    for py in $(ok_python_candidates); do
        rm -rf "$dir"
        if "$py" -m venv "$dir" >>"$OK_LOGS/pip.log" 2>&1 && "$dir/bin/python" -m pip --version >/dev/null 2>&1; then
            echo "$py"
            return 0
        fi
    done
    ok_log "venv: no python >= 3.11 could create a venv with pip; installing Debian's python3-venv"
    ok_apt_install python3 python3-venv
    rm -rf "$dir"
    if /usr/bin/python3 -m venv "$dir" >>"$OK_LOGS/pip.log" 2>&1; then
        echo /usr/bin/python3
        return 0
    fi
    return 1
}

# ok_venv_stamp PYTHON -> hash of everything the venv's content depends on
ok_venv_stamp() {
    {
        "$1" -c 'import sys; print(sys.version)'
        cat "$OK_PY_REQS" "$OK_PY_CONSTRAINTS"
        if ok_magnum_wanted; then cat "$OK_PY_MAGNUM_REQS" "$OK_PY_CAPI_REQS"; fi
    } | sha256sum | cut -d' ' -f1
}
ok_magnum_wanted() { [ -f "$OK_PY_MAGNUM_REQS" ] && [ "${OPENKEEL_TEST_MAGNUM:-1}" != 0 ]; }

# ok_venv -> (re)build $OK_VENV unless its stamp matches the requirements files
ok_venv() {
    local py
    if [ -x "$OK_VENV/bin/python" ] && [ -s "$OK_VENV/.openkeel-stamp" ]; then
        py="$OK_VENV/bin/python"
        if "$py" -c 'pass' 2>/dev/null && [ "$(ok_venv_stamp "$py")" = "$(cat "$OK_VENV/.openkeel-stamp")" ]; then
            ok_log "venv: $OK_VENV is up to date (requirements unchanged)"
            ok_kolla_site
            return 0
        fi
    fi
    local what="tests/python/requirements.txt"
    ok_magnum_wanted && what="$what + requirements-magnum.txt"
    : >"$OK_LOGS/pip.log"
    rm -f "$OK_VENV/.openkeel-stamp"
    py=$(ok_make_venv "$OK_VENV") || {
        ok_tail "$OK_LOGS/pip.log"
        ok_die "venv: no python >= 3.11 can create a venv (set OPENKEEL_TEST_PYTHON)"
    }
    ok_log "venv: building $OK_VENV with $py ($("$py" -V 2>&1)) from $what (log: $OK_LOGS/pip.log)"
    local pip=("$OK_VENV/bin/python" -m pip --disable-pip-version-check --no-input)
    local req_args=(-r "$OK_PY_REQS")
    ok_magnum_wanted && req_args+=(-r "$OK_PY_MAGNUM_REQS")
    if ! {
        "${pip[@]}" install --progress-bar off "${req_args[@]}" &&
            "${pip[@]}" check &&
            # magnum-cluster-api beside the venv, never in it (requirements-capi.txt says why)
            "${pip[@]}" uninstall -y -q magnum-cluster-api &&
            rm -rf "$OK_VENV/capi-site" &&
            if ok_magnum_wanted; then
                "${pip[@]}" install --progress-bar off --no-deps --target "$OK_VENV/capi-site" \
                    -r "$OK_PY_CAPI_REQS"
            fi
    } >>"$OK_LOGS/pip.log" 2>&1; then
        ok_tail "$OK_LOGS/pip.log"
        rm -f "$OK_VENV/.openkeel-stamp"
        ok_die "venv: pip could not install the test helpers"
    fi
    ok_venv_stamp "$OK_VENV/bin/python" >"$OK_VENV/.openkeel-stamp"
    ok_log "venv: ready ($("$OK_VENV/bin/python" -m pip --disable-pip-version-check list 2>/dev/null | awk 'NR > 2' | wc -l) packages)"
    ok_kolla_site
}

# ok_kolla_site -> (re)install $OK_VENV/kolla-site unless its stamp matches
# requirements-kolla.txt (pip install --no-deps --target: kolla's image scripts and
# kolla-ansible's role templates, used as files by crates/cli/tests/kolla.rs)
ok_kolla_site() {
    [ -f "$OK_PY_KOLLA_REQS" ] || return 0
    local site="$OK_VENV/kolla-site" stamp
    stamp=$(sha256sum <"$OK_PY_KOLLA_REQS" | cut -d' ' -f1)
    if [ -s "$site/.openkeel-stamp" ] && [ "$(cat "$site/.openkeel-stamp")" = "$stamp" ]; then
        return 0
    fi
    rm -rf "$site"
    if ! "$OK_VENV/bin/python" -m pip --disable-pip-version-check --no-input install \
        --progress-bar off --no-deps --target "$site" -r "$OK_PY_KOLLA_REQS" >>"$OK_LOGS/pip.log" 2>&1; then
        ok_tail "$OK_LOGS/pip.log"
        rm -rf "$site"
        ok_die "venv: pip could not install $OK_PY_KOLLA_REQS into $site"
    fi
    echo "$stamp" >"$site/.openkeel-stamp"
    ok_log "venv: kolla-site ready ($site)"
}

# ------------------------------------------------------------------------ MariaDB
ok_mysql_root() { mariadb --no-defaults --socket="$OK_MSOCK" -uroot "$@"; }
ok_mysql_tcp() {
    mariadb --no-defaults --protocol=TCP -h127.0.0.1 -P"$OK_MYSQL_PORT" \
        -u"$OK_DB_USER" -p"$OK_DB_PASS" "$@"
}

ok_mysql_write_cnf() {
    install -d -o mysql -g mysql -m 750 "$OK_MDIR" "$OK_MRUN"
    cat >"$OK_MCNF.tmp" <<EOF
# OpenKeel test MariaDB (generated by tests/services/lib.sh; edits are overwritten).
# Private to $OK_HOME; loopback only. Charset as Debian's default server config
# (utf8mb4 / utf8mb4_general_ci), which is what the Magnum observations were made on.
[mysqld]
user                    = mysql
datadir                 = $OK_MDATA
socket                  = $OK_MSOCK
pid-file                = $OK_MRUN/mariadbd.pid
log-error               = $OK_MLOG
bind-address            = 127.0.0.1
port                    = $OK_MYSQL_PORT
skip-name-resolve
skip-log-bin
character-set-server    = utf8mb4
collation-server        = utf8mb4_general_ci
max_connections         = 1000
performance_schema      = OFF
# throwaway test data: durability traded for speed
innodb_buffer_pool_size = 256M
innodb_flush_log_at_trx_commit = 2
innodb_doublewrite      = 0
sync_binlog             = 0
EOF
    chown root:mysql "$OK_MCNF.tmp"
    chmod 640 "$OK_MCNF.tmp"
    mv -f "$OK_MCNF.tmp" "$OK_MCNF"
}

ok_mysql_init() {
    if [ -d "$OK_MDATA/mysql" ] && [ -e "$OK_MDATA/.openkeel-initialized" ]; then return 0; fi
    ok_log "mariadb: initialising $OK_MDATA"
    rm -rf "$OK_MDATA"
    install -d -o mysql -g mysql -m 750 "$OK_MDATA"
    if ! mariadb-install-db --defaults-file="$OK_MCNF" --user=mysql --datadir="$OK_MDATA" \
        --auth-root-authentication-method=socket --skip-test-db \
        >"$OK_LOGS/mariadb-install.log" 2>&1; then
        ok_tail "$OK_LOGS/mariadb-install.log"
        ok_die "mariadb: mariadb-install-db failed"
    fi
    touch "$OK_MDATA/.openkeel-initialized"
}

ok_mysql_provision() {
    ok_mysql_root <<SQL || ok_die "mariadb: could not create user $OK_DB_USER"
CREATE USER IF NOT EXISTS '$OK_DB_USER'@'127.0.0.1' IDENTIFIED BY '$OK_DB_PASS';
CREATE USER IF NOT EXISTS '$OK_DB_USER'@'localhost' IDENTIFIED BY '$OK_DB_PASS';
ALTER USER '$OK_DB_USER'@'127.0.0.1' IDENTIFIED BY '$OK_DB_PASS';
ALTER USER '$OK_DB_USER'@'localhost' IDENTIFIED BY '$OK_DB_PASS';
GRANT ALL PRIVILEGES ON *.* TO '$OK_DB_USER'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO '$OK_DB_USER'@'localhost' WITH GRANT OPTION;
SQL
}

# ok_mysql_start -> 0 if it started MariaDB, 10 if ours was already running; dies on error
ok_mysql_start() {
    ok_clear_stale mariadb "$OK_MPID" mariadbd "--defaults-file=$OK_MCNF"
    ok_mysql_running || ok_adopt mariadb "$OK_MYSQL_PORT" "$OK_MPID" mariadbd "--defaults-file=$OK_MCNF"
    if ok_mysql_running; then
        if ok_mysql_tcp -e 'SELECT 1' >/dev/null 2>&1; then
            ok_log "mariadb: already running (pid $(ok_pid_of "$OK_MPID"), 127.0.0.1:$OK_MYSQL_PORT)"
            return 10
        fi
        if ok_wait 60 mariadb-admin --no-defaults --socket="$OK_MSOCK" -uroot ping; then
            ok_mysql_provision
            ok_log "mariadb: already running (pid $(ok_pid_of "$OK_MPID")), user $OK_DB_USER re-created"
            return 10
        fi
        ok_tail "$OK_MLOG"
        ok_die "mariadb: pid $(ok_pid_of "$OK_MPID") is running but does not answer on $OK_MSOCK; stop it with tests/services/stop.sh"
    fi
    ok_require_free_port "$OK_MYSQL_PORT" "MariaDB" OPENKEEL_TEST_MYSQL_PORT
    command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ] || ok_die "mariadb: /usr/sbin/mariadbd is not installed"
    ok_mysql_write_cnf
    ok_mysql_init
    rm -f "$OK_MSOCK" "$OK_MRUN/mariadbd.pid"
    : >"$OK_MDIR/mariadbd.out"
    ok_log "mariadb: starting on 127.0.0.1:$OK_MYSQL_PORT (data $OK_MDATA)"
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$OK_MPID" \
        --output "$OK_MDIR/mariadbd.out" --startas /usr/sbin/mariadbd -- \
        --defaults-file="$OK_MCNF" ||
        ok_die "mariadb: start-stop-daemon failed"
    ok_wait 10 test -s "$OK_MPID" || ok_die "mariadb: start-stop-daemon wrote no pid file"
    local end=$((SECONDS + ${OPENKEEL_TEST_MYSQL_TIMEOUT:-90}))
    until mariadb-admin --no-defaults --socket="$OK_MSOCK" -uroot ping >/dev/null 2>&1; do
        if ! ok_pid_alive "$OK_MPID"; then
            ok_tail "$OK_MDIR/mariadbd.out" "$OK_MLOG"
            rm -f "$OK_MPID"
            ok_die "mariadb: the server exited during start-up"
        fi
        if [ "$SECONDS" -ge "$end" ]; then
            ok_tail "$OK_MDIR/mariadbd.out" "$OK_MLOG"
            ok_die "mariadb: not ready after ${OPENKEEL_TEST_MYSQL_TIMEOUT:-90}s (left running as pid $(ok_pid_of "$OK_MPID"); tests/services/stop.sh stops it)"
        fi
        sleep 0.5
    done
    ok_mysql_provision
    ok_mysql_tcp -e 'SELECT 1' >/dev/null 2>&1 || {
        ok_tail "$OK_MLOG"
        ok_die "mariadb: user $OK_DB_USER cannot log in over TCP 127.0.0.1:$OK_MYSQL_PORT"
    }
    ok_log "mariadb: ready (pid $(ok_pid_of "$OK_MPID"), $(ok_mysql_tcp -N -e 'SELECT VERSION()' 2>/dev/null))"
    return 0
}

ok_mysql_stop() {
    ok_clear_stale mariadb "$OK_MPID" mariadbd "--defaults-file=$OK_MCNF"
    if ok_mysql_running; then
        ok_stop_pid mariadb "$OK_MPID" 60
    else
        rm -f "$OK_MPID" "$OK_MPID.by-run"
    fi
}

# ------------------------------------------------------------------------ RabbitMQ
# ok_rabbit TOOL ARGS... -> run a RabbitMQ CLI tool (rabbitmqctl, rabbitmq-diagnostics,
# ...) as user rabbitmq against our node, with our cookie and epmd
ok_rabbit() {
    local tool=$1
    shift
    (cd "$OK_RDIR" && timeout "${OK_RABBIT_CLI_TIMEOUT:-120}" runuser -u rabbitmq -- \
        env -i "${OK_RABBIT_ENV[@]}" "/usr/lib/rabbitmq/bin/$tool" -n "$OK_RABBIT_NODE" "$@")
}

# The test broker's configuration: plain AMQP, and AMQPS that requires a client
# certificate (verify_peer + fail_if_no_peer_cert), so the tests can show a client identity
# is really presented.
ok_rabbit_config_text() {
    cat <<EOF
# OpenKeel test RabbitMQ (generated by tests/services/lib.sh; edits are overwritten)
listeners.tcp.1 = 127.0.0.1:$OK_RABBIT_PORT
listeners.ssl.1 = 127.0.0.1:$OK_RABBIT_TLS_PORT
ssl_options.cacertfile = $OK_RABBIT_TLS_DIR/ca.pem
ssl_options.certfile = $OK_RABBIT_TLS_DIR/server.pem
ssl_options.keyfile = $OK_RABBIT_TLS_DIR/server.key
ssl_options.verify = verify_peer
ssl_options.fail_if_no_peer_cert = true
log.console = false
log.file.level = info
disk_free_limit.absolute = 50MB
EOF
}

# ok_rabbit_tls_pki -> a test CA, the broker's certificate (localhost, 127.0.0.1) and a
# client certificate, all signed by that CA, in $OK_RABBIT_TLS_DIR (made once, kept)
ok_rabbit_tls_pki() {
    local d=$OK_RABBIT_TLS_DIR
    if [ -s "$d/ca.pem" ] && [ -s "$d/server.pem" ] && [ -s "$d/client.pem" ] && [ -s "$d/client.key" ] &&
        openssl x509 -checkend 86400 -noout -in "$d/server.pem" >/dev/null 2>&1 &&
        openssl x509 -checkend 86400 -noout -in "$d/client.pem" >/dev/null 2>&1; then
        return 0
    fi
    command -v openssl >/dev/null || ok_die "rabbitmq: openssl is needed to make the test broker's TLS certificates"
    rm -rf "$d"
    install -d -o rabbitmq -g rabbitmq -m 755 "$d"
    (
        cd "$d" && umask 022 &&
            openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=OpenKeel test RabbitMQ CA" \
                -keyout ca.key -out ca.pem &&
            openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr &&
            printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n' >server.ext &&
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
                -extfile server.ext -out server.pem &&
            openssl req -newkey rsa:2048 -nodes -subj "/CN=openkeel-test-client" -keyout client.key -out client.csr &&
            printf 'extendedKeyUsage=clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' >client.ext &&
            openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 3650 \
                -extfile client.ext -out client.pem &&
            rm -f server.csr client.csr server.ext client.ext
    ) >"$OK_LOGS/rabbitmq-tls.log" 2>&1 || {
        ok_tail "$OK_LOGS/rabbitmq-tls.log"
        ok_die "rabbitmq: could not make the test TLS certificates"
    }
    chown rabbitmq:rabbitmq "$d/server.key" "$d/ca.key"
    chmod 600 "$d/ca.key"
    chmod 640 "$d/server.key"
}

ok_rabbit_write_config() {
    install -d -o rabbitmq -g rabbitmq -m 750 "$OK_RDIR" "$OK_RDIR/mnesia" "$OK_RLOG_DIR"
    if [ ! -s "$OK_RDIR/.erlang.cookie" ]; then
        # a private cookie: only our own CLI calls (same HOME) can talk to this node
        (umask 077 && od -An -N24 -tx1 /dev/urandom | tr -d ' \n' | tr a-f A-F >"$OK_RDIR/.erlang.cookie")
    fi
    chown rabbitmq:rabbitmq "$OK_RDIR/.erlang.cookie"
    chmod 400 "$OK_RDIR/.erlang.cookie"
    ok_rabbit_tls_pki
    ok_rabbit_config_text >"$OK_RDIR/rabbitmq.conf"
    printf '[].\n' >"$OK_RDIR/enabled_plugins"
    : >"$OK_RDIR/rabbitmq-env.conf"
    chown rabbitmq:rabbitmq "$OK_RDIR/rabbitmq.conf" "$OK_RDIR/enabled_plugins" "$OK_RDIR/rabbitmq-env.conf"
}

# ok_epmd_start -> make sure an epmd answers on $OK_EPMD_PORT: ours (started here, with a
# pid file) or one already there, which is used and never stopped
ok_epmd_start() {
    ok_clear_stale epmd "$OK_EPID" epmd "$OK_EPMD_PORT"
    if ok_epmd_ours; then return 0; fi
    if ok_port_busy "$OK_EPMD_PORT"; then
        if epmd -port "$OK_EPMD_PORT" -names >/dev/null 2>&1; then
            ok_log "epmd: reusing the epmd already listening on port $OK_EPMD_PORT (not ours; never stopped)"
            return 0
        fi
        ok_require_free_port "$OK_EPMD_PORT" "epmd" OPENKEEL_TEST_EPMD_PORT
    fi
    ok_log "epmd: starting a private epmd on 127.0.0.1:$OK_EPMD_PORT"
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$OK_EPID" \
        --chuid rabbitmq --output "$OK_LOGS/epmd.log" \
        --startas /usr/bin/epmd -- -port "$OK_EPMD_PORT" -address 127.0.0.1 ||
        ok_die "epmd: start-stop-daemon failed"
    ok_wait 10 test -s "$OK_EPID" || ok_die "epmd: start-stop-daemon wrote no pid file"
    if ! ok_wait 15 epmd -port "$OK_EPMD_PORT" -names; then
        ok_tail "$OK_LOGS/epmd.log"
        ok_die "epmd: not answering on port $OK_EPMD_PORT after 15s"
    fi
}

ok_rabbit_provision() {
    local users
    users=$(ok_rabbit rabbitmqctl -q list_users 2>&1) || {
        printf '%s\n' "$users" >&2
        ok_die "rabbitmq: list_users failed"
    }
    if awk -v u="$OK_MQ_USER" '$1 == u {f = 1} END {exit !f}' <<<"$users"; then
        ok_rabbit rabbitmqctl -q change_password "$OK_MQ_USER" "$OK_MQ_PASS" >/dev/null
    else
        ok_rabbit rabbitmqctl -q add_user "$OK_MQ_USER" "$OK_MQ_PASS" >/dev/null
    fi || ok_die "rabbitmq: could not create user $OK_MQ_USER"
    ok_rabbit rabbitmqctl -q set_user_tags "$OK_MQ_USER" administrator >/dev/null &&
        ok_rabbit rabbitmqctl -q set_permissions -p / "$OK_MQ_USER" '.*' '.*' '.*' >/dev/null ||
        ok_die "rabbitmq: could not grant $OK_MQ_USER permissions on vhost /"
}

# ok_rabbit_policies -> the test node's queue policies: OpenKeel's ordered queues outlive their
# consumers as the topic queue does (docs/architecture.md), and every test uses topics of its
# own, so on this node an ordered queue unused for 10 minutes expires instead of piling up
ok_rabbit_policies() {
    ok_rabbit rabbitmqctl -q set_policy --apply-to queues openkeel-test-ordered-expiry \
        '\.openkeel-ordered\.[0-9]+$' '{"expires": 600000}' >/dev/null ||
        ok_die "rabbitmq: could not set the test queue policy"
}

ok_rabbit_user_ok() {
    ok_rabbit rabbitmqctl -q authenticate_user "$OK_MQ_USER" "$OK_MQ_PASS" >/dev/null 2>&1 &&
        ok_rabbit rabbitmqctl -q list_user_permissions "$OK_MQ_USER" 2>/dev/null |
        awk -F'\t' '$1 == "/" && $2 == ".*" && $3 == ".*" && $4 == ".*" {f = 1} END {exit !f}'
}

# ok_rabbit_config_stale -> true when the running node was not started with the configuration
# this script writes now, or its AMQPS listener is missing
ok_rabbit_config_stale() {
    [ "$(ok_rabbit_config_text)" != "$(cat "$OK_RDIR/rabbitmq.conf" 2>/dev/null)" ] ||
        ! ok_port_busy "$OK_RABBIT_TLS_PORT"
}

# ok_rabbit_start -> 0 if it started RabbitMQ, 10 if ours was already running; dies on error
ok_rabbit_start() {
    ok_clear_stale rabbitmq "$OK_RPID" rabbitmq-server "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    ok_clear_stale "rabbitmq VM" "$OK_RBEAM_PID" beam.smp "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    if ! ok_beam_running; then
        ok_adopt "rabbitmq VM" "$OK_RABBIT_PORT" "$OK_RBEAM_PID" beam.smp "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    fi
    if ok_beam_running && ! ok_rabbit_running; then
        # the VM's parent is the rabbitmq-server script start-stop-daemon started
        local ppid
        ppid=$(awk '{print $4}' "/proc/$(ok_pid_of "$OK_RBEAM_PID")/stat" 2>/dev/null || true)
        if [ -n "$ppid" ]; then
            echo "$ppid" >"$OK_RPID"
            ok_rabbit_running || rm -f "$OK_RPID"
        fi
    fi
    if ok_rabbit_running; then
        if ok_wait 60 ok_rabbit rabbitmqctl -q await_startup --timeout 5 &&
            ! ok_rabbit_config_stale; then
            ok_rabbit_user_ok || ok_rabbit_provision
            ok_rabbit_policies
            ok_log "rabbitmq: already running ($OK_RABBIT_NODE, pid $(ok_pid_of "$OK_RBEAM_PID"), 127.0.0.1:$OK_RABBIT_PORT)"
            return 10
        fi
        if ok_rabbit rabbitmqctl -q await_startup --timeout 5 >/dev/null 2>&1; then
            # ours, but started by an older version of this script (no AMQPS listener,
            # say): restart it with the current configuration, keeping who owns it
            local owned_by_run=0
            if [ -e "$OK_RPID.by-run" ]; then owned_by_run=1; fi
            ok_log "rabbitmq: the running node has an outdated configuration: restarting it"
            ok_rabbit_stop
            ok_rabbit_start # not running any more: it starts the node (0) or dies
            # started by hand before: it stays up after this run, as it would have
            if [ "$owned_by_run" = 0 ]; then return 10; fi
            return 0
        fi
        ok_tail "$OK_RDIR/console.log" "$OK_RLOG_DIR/$OK_RABBIT_NODE.log"
        ok_die "rabbitmq: pid $(ok_pid_of "$OK_RPID") is running but the node does not answer; stop it with tests/services/stop.sh"
    fi
    [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] || ok_die "rabbitmq: rabbitmq-server is not installed"
    ok_require_free_port "$OK_RABBIT_PORT" "RabbitMQ AMQP" OPENKEEL_TEST_RABBIT_PORT
    ok_require_free_port "$OK_RABBIT_TLS_PORT" "RabbitMQ AMQPS" OPENKEEL_TEST_RABBIT_TLS_PORT
    ok_require_free_port "$OK_RABBIT_DIST_PORT" "RabbitMQ Erlang distribution" OPENKEEL_TEST_RABBIT_DIST_PORT
    # a beam of ours without its wrapper script (wrapper killed): stop it first
    if ok_beam_running; then ok_stop_pid "rabbitmq (orphaned VM)" "$OK_RBEAM_PID" 30; fi
    ok_rabbit_write_config
    ok_epmd_start
    rm -f "$OK_RBEAM_PID"
    : >"$OK_RDIR/console.log"
    chown rabbitmq:rabbitmq "$OK_RDIR/console.log"
    ok_log "rabbitmq: starting $OK_RABBIT_NODE on 127.0.0.1:$OK_RABBIT_PORT (dist $OK_RABBIT_DIST_PORT, epmd $OK_EPMD_PORT)"
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$OK_RPID" \
        --chuid rabbitmq --chdir "$OK_RDIR" --output "$OK_RDIR/console.log" \
        --startas /usr/bin/env -- -i "${OK_RABBIT_ENV[@]}" /usr/lib/rabbitmq/bin/rabbitmq-server ||
        ok_die "rabbitmq: start-stop-daemon failed"
    ok_wait 10 test -s "$OK_RPID" || ok_die "rabbitmq: start-stop-daemon wrote no pid file"
    local timeout=${OPENKEEL_TEST_RABBIT_TIMEOUT:-180}
    local end=$((SECONDS + timeout))
    until ok_rabbit rabbitmqctl -q await_startup --timeout 10 >/dev/null 2>&1; do
        if ! ok_pid_alive "$OK_RPID"; then
            ok_tail "$OK_RDIR/console.log" "$OK_RLOG_DIR/$OK_RABBIT_NODE.log"
            rm -f "$OK_RPID"
            ok_die "rabbitmq: the server exited during start-up"
        fi
        if [ "$SECONDS" -ge "$end" ]; then
            ok_tail "$OK_RDIR/console.log" "$OK_RLOG_DIR/$OK_RABBIT_NODE.log"
            ok_die "rabbitmq: not ready after ${timeout}s (left running as pid $(ok_pid_of "$OK_RPID"); tests/services/stop.sh stops it)"
        fi
        sleep 1
    done
    if ! ok_wait 30 ok_port_busy "$OK_RABBIT_PORT"; then
        ok_tail "$OK_RLOG_DIR/$OK_RABBIT_NODE.log"
        ok_die "rabbitmq: node is up but nothing listens on AMQP port $OK_RABBIT_PORT"
    fi
    if ! ok_wait 30 ok_port_busy "$OK_RABBIT_TLS_PORT"; then
        ok_tail "$OK_RLOG_DIR/$OK_RABBIT_NODE.log"
        ok_die "rabbitmq: node is up but nothing listens on AMQPS port $OK_RABBIT_TLS_PORT"
    fi
    ok_rabbit_provision
    ok_rabbit_policies
    ok_log "rabbitmq: ready (pid $(ok_pid_of "$OK_RBEAM_PID"), $(ok_rabbit rabbitmqctl -q version 2>/dev/null || echo '?'))"
    return 0
}

ok_rabbit_stop() {
    ok_clear_stale rabbitmq "$OK_RPID" rabbitmq-server "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    ok_clear_stale "rabbitmq VM" "$OK_RBEAM_PID" beam.smp "RABBITMQ_MNESIA_BASE=$OK_RDIR/mnesia"
    if ok_rabbit_running || ok_beam_running; then
        ok_log "rabbitmq: stopping $OK_RABBIT_NODE"
        if ok_beam_running; then
            OK_RABBIT_CLI_TIMEOUT=90 ok_rabbit rabbitmqctl -q shutdown >/dev/null 2>&1 || true
        fi
        ok_beam_running && ok_stop_pid "rabbitmq VM" "$OK_RBEAM_PID" 30
        ok_rabbit_running && ok_stop_pid rabbitmq "$OK_RPID" 30
    fi
    rm -f "$OK_RPID" "$OK_RPID.by-run" "$OK_RBEAM_PID"
    ok_clear_stale epmd "$OK_EPID" epmd "$OK_EPMD_PORT"
    if ok_epmd_ours; then ok_stop_pid epmd "$OK_EPID" 10; fi
    rm -f "$OK_EPID.by-run"
}

# ------------------------------------------------------------------------ users (run.sh)
# Each tests/run.sh registers itself while it uses the services. Services it had to start
# are marked NAME.by-run; the last run.sh to leave stops those (unless told to keep them).
ok_user_register() { echo "$$" >"$OK_USERS/$$"; }
ok_user_unregister() { rm -f "$OK_USERS/$$"; }
# ok_other_users -> print the pids of other live tests/run.sh using this home
ok_other_users() {
    local f pid
    for f in "$OK_USERS"/*; do
        [ -e "$f" ] || continue
        pid=${f##*/}
        if [ "$pid" != "$$" ] && [ -r "/proc/$pid/cmdline" ] &&
            [[ $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null) == *run.sh* ]]; then
            echo "$pid"
        else
            [ "$pid" = "$$" ] || rm -f "$f"
        fi
    done
}

# ok_env_lines -> the export lines for the services that are up (and the venv, if built)
ok_env_lines() {
    printf 'export OPENKEEL_TEST_HOME=%q\n' "$OK_HOME"
    if ok_mysql_running; then
        printf 'export OPENKEEL_TEST_MYSQL_URL=%q\n' "$OK_MYSQL_URL"
    else
        ok_warn "MariaDB of $OK_HOME is not running (tests/services/start.sh starts it)"
    fi
    if ok_rabbit_running; then
        printf 'export OPENKEEL_TEST_RABBIT_URL=%q\n' "$OK_RABBIT_URL"
        printf 'export OPENKEEL_TEST_RABBIT_TLS_URL=%q\n' "$OK_RABBIT_TLS_URL"
        printf 'export OPENKEEL_TEST_RABBIT_TLS_DIR=%q\n' "$OK_RABBIT_TLS_DIR"
    else
        ok_warn "RabbitMQ of $OK_HOME is not running (tests/services/start.sh starts it)"
    fi
    if [ -s "$OK_VENV/.openkeel-stamp" ]; then
        printf 'export OPENKEEL_TEST_VENV=%q\n' "$OK_VENV"
    else
        ok_warn "no test venv at $OK_VENV (tests/services/start.sh builds it)"
    fi
    ok_keystone_env_lines
}

# The test Keystone (its own venv, gunicorn, SQLite): tests/services/keystone.sh.
. "$OK_SERVICES_DIR/keystone.sh"
# Go for the gophercloud acceptance tests: tests/services/go.sh.
. "$OK_SERVICES_DIR/go.sh"
