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
#
# A three-node RabbitMQ cluster for the quorum-queue drill (drill.py broker-cluster), beside
# the single node (its own epmd; node N: AMQP 2580N, AMQPS 2581N, distribution 2582N):
#
#   tests/drills/services.sh rabbit-cluster-start   # nodes openkeel-drills-rN@localhost, joined
#   tests/drills/services.sh rabbit-node-kill N     # SIGKILL node N's Erlang VM
#   tests/drills/services.sh rabbit-node-start N    # start it again (it rejoins the cluster)
#   tests/drills/services.sh rabbit-cluster-stop
#
# `env` prints OPENKEEL_TEST_RABBIT_CLUSTER_URL, the three nodes as one transport URL.
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
SELF="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")"
# the three-node cluster: node N's home, ports and name (the env of a re-run of this script)
if [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ]; then
    CLUSTER_HOME="$(dirname "$OPENKEEL_TEST_HOME")"
else
    CLUSTER_HOME="$OPENKEEL_TEST_HOME/rabbit-cluster"
fi
CLUSTER_EPMD_PORT=${OPENKEEL_TEST_CLUSTER_EPMD_PORT:-24479}
cluster_node_env() {
    local n=$1
    echo "OPENKEEL_TEST_HOME=$CLUSTER_HOME/node$n" "OPENKEEL_TEST_RABBIT_PORT=$((25800 + n))" \
        "OPENKEEL_TEST_RABBIT_TLS_PORT=$((25810 + n))" "OPENKEEL_TEST_RABBIT_DIST_PORT=$((25820 + n))" \
        "OPENKEEL_TEST_EPMD_PORT=$CLUSTER_EPMD_PORT" "OPENKEEL_TEST_RABBIT_NODENAME=openkeel-drills-r$n@localhost"
}
# on_node N COMMAND ARGS... -> this script's COMMAND with node N's environment
on_node() {
    local n=$1
    shift
    # shellcheck disable=SC2046
    env $(cluster_node_env "$n") OPENKEEL_DRILLS_NODE_OF_CLUSTER=1 "$SELF" "$@"
}
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
    cluster_url="amqp://"
    for n in 1 2 3; do
        cluster_url+="$OK_MQ_USER:$OK_MQ_PASS@127.0.0.1:$((25800 + n))"
        [ "$n" = 3 ] || cluster_url+=","
    done
    printf 'export OPENKEEL_TEST_RABBIT_CLUSTER_URL=%q\n' "$cluster_url/%2f"
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
# the three-node cluster
rabbit-cluster-start)
    on_node 1 _node-start
    for n in 2 3; do
        # one Erlang cookie for the three nodes (node 1's, made at its first start)
        d="$CLUSTER_HOME/node$n/rabbitmq"
        install -d -o rabbitmq -g rabbitmq -m 750 "$d"
        if ! cmp -s "$CLUSTER_HOME/node1/rabbitmq/.erlang.cookie" "$d/.erlang.cookie"; then
            rm -f "$d/.erlang.cookie"
            install -o rabbitmq -g rabbitmq -m 400 "$CLUSTER_HOME/node1/rabbitmq/.erlang.cookie" "$d/.erlang.cookie"
        fi
        on_node "$n" _node-start
        on_node "$n" _node-join openkeel-drills-r1@localhost
    done
    on_node 1 _rabbit rabbitmqctl -q cluster_status
    ;;
rabbit-cluster-stop)
    for n in 3 2 1; do on_node "$n" _node-stop; done
    ;;
rabbit-node-kill)
    n=${2:?usage: $0 rabbit-node-kill N}
    on_node "$n" _node-kill
    ;;
rabbit-node-start)
    n=${2:?usage: $0 rabbit-node-start N}
    on_node "$n" _node-start
    ;;
# the running nodes the cluster's node N sees
rabbit-cluster-running)
    on_node "${2:-1}" _rabbit rabbitmqctl -q eval \
        'io:format("~s~n", [lists:join(" ", [atom_to_list(N) || N <- rabbit_nodes:all_running()])]).' |
        head -1
    ;;
# name, type and members of each queue of the cluster
rabbit-cluster-queues) on_node 1 _rabbit rabbitmqctl -q list_queues name type members </dev/null ;;
rabbit-cluster-delete-queues)
    prefix=${2:?usage: $0 rabbit-cluster-delete-queues PREFIX}
    for q in $(on_node 1 _rabbit rabbitmqctl -q list_queues name </dev/null); do
        case "$q" in "$prefix"*) on_node 1 _rabbit rabbitmqctl -q delete_queue "$q" </dev/null >/dev/null ;; esac
    done
    ;;
# one node of the cluster (called through on_node, with that node's environment)
_node-start)
    [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ] || ok_die "_node-start: use rabbit-node-start N"
    mkdir -p "$OK_HOME" "$OK_PIDS" "$OK_LOGS"
    chmod 755 "$CLUSTER_HOME" "$OK_HOME"
    ok_sub ok_rabbit_start
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || ok_die "rabbitmq node $OK_RABBIT_NODE did not start"
    ;;
_node-join)
    [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ] || ok_die "_node-join: use rabbit-cluster-start"
    first=$2
    if ok_rabbit rabbitmqctl -q cluster_status --formatter json 2>/dev/null | grep -q "\"$first\""; then
        ok_log "rabbitmq: $OK_RABBIT_NODE is already clustered with $first"
    else
        ok_rabbit rabbitmqctl -q stop_app
        ok_rabbit rabbitmqctl -q reset
        ok_rabbit rabbitmqctl -q join_cluster "$first"
        ok_rabbit rabbitmqctl -q start_app
        ok_log "rabbitmq: $OK_RABBIT_NODE joined $first"
    fi
    ;;
_node-stop)
    [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ] || ok_die "_node-stop: use rabbit-cluster-stop"
    ok_rabbit_stop
    ;;
_node-kill)
    [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ] || ok_die "_node-kill: use rabbit-node-kill N"
    ok_beam_running || ok_die "rabbitmq node $OK_RABBIT_NODE is not running"
    kill -KILL "$(ok_pid_of "$OK_RBEAM_PID")"
    ok_log "rabbitmq: killed $OK_RABBIT_NODE (SIGKILL)"
    ;;
_rabbit)
    [ "${OPENKEEL_DRILLS_NODE_OF_CLUSTER:-}" = 1 ] || ok_die "_rabbit: internal"
    shift
    ok_rabbit "$@"
    ;;
mysql-stop) ok_mysql_stop ;;
mysql-start)
    ok_sub ok_mysql_start
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || ok_die "mariadb did not start"
    ;;
*)
    echo "usage: $0 start|stop|env|rabbit-stop-app|rabbit-start-app|rabbit-consumers|rabbit-delete-queues PREFIX|mysql-stop|mysql-start|rabbit-cluster-start|rabbit-cluster-stop|rabbit-node-kill N|rabbit-node-start N|rabbit-cluster-running [N]|rabbit-cluster-queues|rabbit-cluster-delete-queues PREFIX" >&2
    exit 2
    ;;
esac
