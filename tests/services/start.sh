#!/usr/bin/env bash
# Start OpenKeel's test services and keep them running between test runs:
# installs what is missing (Debian packages, the Python test venv), starts MariaDB,
# RabbitMQ, Keystone, Barbican and the Kubernetes API with Cluster API (tests/services/kapi.sh;
# OPENKEEL_TEST_SKIP_KAPI=1 leaves it out) under $OPENKEEL_TEST_HOME (default
# /var/tmp/openkeel-test), creates the openkeel users and checks them. Idempotent: whatever already runs is reused.
#
# Services started here stay up until tests/services/stop.sh (tests/run.sh reuses them
# and leaves them running). Then:  eval "$(tests/services/env.sh)"; cargo test ...
set -euo pipefail
OK_PROG=start
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ok_lock
ok_prepare_home
ok_apt_install "${OK_APT_PACKAGES[@]}"
ok_venv
for svc in ok_mysql_start ok_rabbit_start ok_keystone_start; do
    ok_sub "$svc"
    [ "$OK_SUB_RC" = 0 ] || [ "$OK_SUB_RC" = 10 ] || exit "$OK_SUB_RC"
done
# started or adopted by hand: no tests/run.sh stops them any more
rm -f "$OK_MPID.by-run" "$OK_RPID.by-run" "$OK_EPID.by-run" "$OK_KS_PID.by-run"
ok_unlock
"$OK_SERVICES_DIR/barbican.sh" start >/dev/null || [ "$?" = 10 ] || exit 1
if [ "${OPENKEEL_TEST_SKIP_KAPI:-0}" = 1 ]; then
    ok_warn "OPENKEEL_TEST_SKIP_KAPI=1: not starting the Kubernetes API (tests/services/kapi.sh)"
else
    "$OK_SERVICES_DIR/kapi.sh" start >/dev/null || [ "$?" = 10 ] || exit 1
fi

eval "$(ok_env_lines 2>/dev/null)"
export OPENKEEL_TEST_MYSQL_URL OPENKEEL_TEST_RABBIT_URL OPENKEEL_TEST_RABBIT_TLS_URL OPENKEEL_TEST_RABBIT_TLS_DIR OPENKEEL_TEST_VENV \
    OPENKEEL_TEST_KEYSTONE_URL OPENKEEL_TEST_KEYSTONE_ACCOUNTS OPENKEEL_TEST_KEYSTONE_CLOUDS
eval "$("$OK_SERVICES_DIR/kapi.sh" env 2>/dev/null)"
export OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM
"$OK_SERVICES_DIR/check.sh"
ok_log "services of $OK_HOME are up and stay up (tests/services/stop.sh stops them); for cargo:"
ok_log '  eval "$(tests/services/env.sh)"'
