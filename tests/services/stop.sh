#!/usr/bin/env bash
# Stop the test services of $OPENKEEL_TEST_HOME (default /var/tmp/openkeel-test): only the
# processes named in its own pid files (MariaDB, RabbitMQ, Keystone, Barbican, the Kubernetes
# API of tests/services/kapi.sh, and epmd if it was started here), never anything by name.
#
#   stop.sh            refuses while a tests/run.sh is still using them
#   stop.sh --force    stops them anyway
#   stop.sh --purge    also deletes the service data (MariaDB datadir, RabbitMQ mnesia,
#                      logs); the next start initialises them afresh. The venv is kept.
set -euo pipefail
OK_PROG=stop
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

force=0 purge=0
for a in "$@"; do
    case $a in
        --force) force=1 ;;
        --purge) purge=1 ;;
        -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
        *) ok_die "unknown argument $a (usage: stop.sh [--force] [--purge])" ;;
    esac
done
[ -d "$OK_HOME" ] || { ok_log "nothing to stop: $OK_HOME does not exist"; exit 0; }

ok_lock
others=$(ok_other_users | tr '\n' ' ' | sed 's/ *$//')
if [ -n "$others" ] && [ "$force" != 1 ]; then
    ok_die "tests/run.sh (pid $others) is still using the services of $OK_HOME; wait for it or use --force"
fi
ok_keystone_stop
ok_rabbit_stop
ok_mysql_stop
"$OK_SERVICES_DIR/barbican.sh" stop
"$OK_SERVICES_DIR/kapi.sh" stop
if [ "$purge" = 1 ]; then
    ok_log "purging service data under $OK_HOME (the venv is kept)"
    rm -rf "$OK_MDIR" "$OK_RDIR" "$OK_LOGS" "$OK_KS_DIR" "$OK_HOME/barbican/barbican.sqlite" "$OK_HOME/kapi"
fi
ok_unlock
ok_log "services of $OK_HOME stopped"
