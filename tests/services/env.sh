#!/usr/bin/env bash
# Print the export lines that point the tests at the running test services of
# $OPENKEEL_TEST_HOME (default /var/tmp/openkeel-test):
#
#   eval "$(tests/services/env.sh)"
#   cargo test -p openkeel-db
#
# A service that is not running gets no line (a warning on stderr instead), so the tests
# skip it outside CI rather than fail to connect. Start them with tests/services/start.sh.
set -euo pipefail
OK_PROG="env.sh"
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ok_env_lines
"$OK_SERVICES_DIR/barbican.sh" env
"$OK_SERVICES_DIR/kapi.sh" env
