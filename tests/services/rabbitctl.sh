#!/usr/bin/env bash
# Run rabbitmqctl against the test RabbitMQ node (as user rabbitmq, with the node's private
# cookie), e.g. `tests/services/rabbitctl.sh stop_app`. Used by the broker-restart test.
set -euo pipefail
OK_PROG=rabbitctl
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ok_rabbit rabbitmqctl "$@"
