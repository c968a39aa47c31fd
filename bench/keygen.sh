#!/usr/bin/env bash
# Cluster create, key generation alone (issue 17): OpenKeel's openkeel-certs (release build)
# against Magnum 23.0.0's magnum.common.x509.operations (Python cryptography / OpenSSL, the
# test venv's), on this machine. A benchmark, not a test. Needs only the test venv, none of the
# test services (bench/create.sh also runs the conductors, against MariaDB and RabbitMQ).
#
#   bench/keygen.sh
#
# Environment (defaults in brackets):
#   BENCH_KEYS    RSA keys timed per implementation and round                         [40]
#   BENCH_SETS    cluster certificate sets timed per implementation, measure and round [10]
#   BENCH_ROUNDS  rounds, the order alternating (OpenKeel first in odd rounds)          [3]
#   BENCH_BUILD   1: cargo build --release the keygen example                           [1]
#   OPENKEEL_TEST_VENV  the venv with Magnum  [$OPENKEEL_TEST_HOME/venv, default home
#                       /var/tmp/openkeel-test]
#
# What it measures (docs/performance.md, "Cluster create: key generation"), RSA-2048 as
# `[x509] rsa_key_size` defaults, wall time (median and range) and CPU time:
# * one RSA key: crates/certs/examples/keygen_bench.rs (aws-lc-rs) against
#   `rsa.generate_private_key(65537, 2048)` (bench/create_bench.py keygen);
# * one cluster's certificate set made one certificate after the other (3 CAs and the client
#   certificate signed by the first, keys encrypted as stored): openkeel_certs'
#   generate_ca_certificate / generate_client_certificate against Magnum's x509 operations;
# * the conductor's own generate_certificates_to_cluster: OpenKeel's (the four keys at once,
#   up to one per core, certificates stored by the `local` cert manager in a temporary
#   directory) against Magnum's magnum.conductor.handlers.common.cert_manager one (one key
#   after the other, certificates kept in memory).
# Results: bench/results/<UTC time>/keygen.jsonl and keygen.md (printed), with the machine's
# load average before and after in loadavg.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT"
KEYS=${BENCH_KEYS:-40}
SETS=${BENCH_SETS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
VENV=${OPENKEEL_TEST_VENV:-${OPENKEEL_TEST_HOME:-/var/tmp/openkeel-test}/venv}
PY="$VENV/bin/python"
if ! "$PY" -c 'import magnum, cryptography' 2>/dev/null; then
    echo "bench/keygen.sh: no Magnum in $VENV (tests/services/start.sh makes the test venv)" >&2
    exit 1
fi
if [ "${BENCH_BUILD:-1}" = 1 ]; then
    cargo build --release -q -p openkeel-certs --example keygen_bench >&2
fi
BIN="${CARGO_TARGET_DIR:-target}/release"
OUT="bench/results/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$OUT"
git rev-parse HEAD >"$OUT/commit" 2>/dev/null || true
echo "before $(cat /proc/loadavg)" >"$OUT/loadavg"

openkeel() { "$BIN/examples/keygen_bench" "$KEYS" "$SETS" 2048; }
magnum() { "$PY" -W ignore bench/create_bench.py keygen --keys "$KEYS" --sets "$SETS" 2>/dev/null; }
for round in $(seq 1 "$ROUNDS"); do
    echo "[bench] key generation, round $round of $ROUNDS" >&2
    if [ $((round % 2)) = 1 ]; then openkeel; magnum; else magnum; openkeel; fi |
        tee -a "$OUT/keygen.jsonl"
done
echo "after $(cat /proc/loadavg)" >>"$OUT/loadavg"

python3 bench/create_report.py "$OUT/keygen.jsonl" >"$OUT/keygen.md"
cat "$OUT/loadavg" "$OUT/keygen.md"
