#!/usr/bin/env bash
# Private MariaDB and RabbitMQ for the reliability drills (tests/drills/*), which stop, kill
# and restart them: never the shared test services of /var/tmp/openkeel-test. The same
# functions as tests/services/lib.sh, with another home and other ports (each still
# overridable from the environment):
#
#   tests/drills/services.sh start        # MariaDB 23406, RabbitMQ 25782 (dist 25792, epmd 24469)
#   eval "$(tests/drills/services.sh env)" # OPENKEEL_TEST_HOME, _MYSQL_URL, _RABBIT_URL, ...
#   tests/drills/services.sh stop
#
# The ports are below Linux's ephemeral range (32768-60999): while a service is stopped, a
# client reconnecting to a port in that range on loopback can be given that very port as its
# own and connect to itself (TCP simultaneous open), and the service cannot listen again when
# it starts (seen with RabbitMQ on 35682: start_app failed with eaddrinuse).
#
# Only MariaDB and RabbitMQ: no Keystone, Barbican or Kubernetes API is started.
set -euo pipefail
export OPENKEEL_TEST_HOME=${OPENKEEL_TEST_HOME:-/var/tmp/openkeel-drills}
export OPENKEEL_TEST_MYSQL_PORT=${OPENKEEL_TEST_MYSQL_PORT:-23406}
export OPENKEEL_TEST_RABBIT_PORT=${OPENKEEL_TEST_RABBIT_PORT:-25782}
export OPENKEEL_TEST_RABBIT_TLS_PORT=${OPENKEEL_TEST_RABBIT_TLS_PORT:-25783}
export OPENKEEL_TEST_RABBIT_DIST_PORT=${OPENKEEL_TEST_RABBIT_DIST_PORT:-25792}
export OPENKEEL_TEST_EPMD_PORT=${OPENKEEL_TEST_EPMD_PORT:-24469}
export OPENKEEL_TEST_RABBIT_NODENAME=${OPENKEEL_TEST_RABBIT_NODENAME:-openkeel-drills@localhost}
export OPENKEEL_TEST_KEYSTONE_PORT=${OPENKEEL_TEST_KEYSTONE_PORT:-25100}
if [ "$OPENKEEL_TEST_HOME" = /var/tmp/openkeel-test ]; then
    echo "tests/drills/services.sh: refusing to use the shared test home $OPENKEEL_TEST_HOME" >&2
    exit 2
fi
OK_PROG="drills-services"
. "$(dirname "${BASH_SOURCE[0]}")/../services/lib.sh"

case "${1:-}" in
start)
    ok_lock
    ok_prepare_home
    ok_sub ok_mysql_start
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || ok_die "mariadb did not start"
    ok_sub ok_rabbit_start
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || ok_die "rabbitmq did not start"
    ok_unlock
    ;;
stop)
    ok_lock
    ok_rabbit_stop
    ok_mysql_stop
    ok_unlock
    ;;
env)
    printf 'export OPENKEEL_TEST_HOME=%q\n' "$OK_HOME"
    printf 'export OPENKEEL_TEST_MYSQL_URL=%q\n' "$OK_MYSQL_URL"
    printf 'export OPENKEEL_TEST_RABBIT_URL=%q\n' "$OK_RABBIT_URL"
    printf 'export OPENKEEL_TEST_RABBIT_NODENAME=%q\n' "$OK_RABBIT_NODE"
    for v in MYSQL_PORT RABBIT_PORT RABBIT_TLS_PORT RABBIT_DIST_PORT EPMD_PORT; do
        eval "printf 'export OPENKEEL_TEST_%s=%q\n' $v \"\$OPENKEEL_TEST_$v\""
    done
    # the test venv (Python with PyMySQL) is the shared one: it is only read
    printf 'export OPENKEEL_TEST_VENV=%q\n' "${OPENKEEL_TEST_VENV:-/var/tmp/openkeel-test/venv}"
    ;;
# The faults the drills inject (each only on the services of this home):
rabbit-stop-app) ok_rabbit rabbitmqctl -q stop_app ;;
rabbit-start-app) ok_rabbit rabbitmqctl -q start_app ;;
rabbit-consumers) ok_rabbit rabbitmqctl -q list_queues name consumers ;;
# the queues of a finished drill (durable and quorum ones outlive it): those named PREFIX...
rabbit-delete-queues)
    prefix=${2:?usage: $0 rabbit-delete-queues PREFIX}
    for q in $(ok_rabbit rabbitmqctl -q list_queues name </dev/null); do
        case "$q" in "$prefix"*) ok_rabbit rabbitmqctl -q delete_queue "$q" </dev/null >/dev/null ;; esac
    done
    ;;
mysql-stop) ok_mysql_stop ;;
mysql-start)
    ok_sub ok_mysql_start
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || ok_die "mariadb did not start"
    ;;
*)
    echo "usage: $0 start|stop|env|rabbit-stop-app|rabbit-start-app|rabbit-consumers|rabbit-delete-queues PREFIX|mysql-stop|mysql-start" >&2
    exit 2
    ;;
esac
