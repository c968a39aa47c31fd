#!/usr/bin/env bash
# What Keystone authentication costs per request with a warm token cache, against noauth
# (docs/performance.md). Needs the test Keystone: tests/services/start.sh first.
#   BENCH_CONNECTIONS=8 BENCH_SECONDS=5 BENCH_ROUNDS=3 bench/auth_overhead.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(tests/services/env.sh)"
exec cargo test --release -p openkeel --test auth_overhead -- --ignored --nocapture
