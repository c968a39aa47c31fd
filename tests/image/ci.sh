#!/usr/bin/env bash
# The container image phase of tests/run.sh (issue 15): OpenKeel's kolla-style images built
# without a Docker daemon or a registry, and kolla's real start path run inside them.
#
#   tests/image/ci.sh        (after `cargo test` has built the programs; services running)
#
# 1. deploy/images/debian-base.sh: a Debian bookworm base from Debian's own packages
#    (debootstrap, cached in ~/.cache/openkeel-image);
# 2. deploy/images/build.sh with this run's debug programs (BIN_DIR=<target>/debug) and
#    buildah, into a containers storage of the test home ($OPENKEEL_TEST_HOME/containers,
#    overlay: 5–10× faster than vfs; its layers are reused by the next run);
# 3. tests/image/check.sh: bootstrap, magnum-conductor, magnum-api over HTTP and HTTPS, kolla's
#    healthchecks, users, logs, stop (see its header).
#
# Outside CI a missing buildah or debootstrap is a loud skip (exit 0); with CI=true it fails.
set -euo pipefail
OK_PROG=image
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
. tests/services/lib.sh

for tool in buildah debootstrap; do
    if ! command -v "$tool" >/dev/null; then
        ok_in_ci && ok_die "CI=true: $tool is required for the image phase (Debian package $tool)"
        ok_warn "$tool is not installed: the image phase SKIPS (apt-get install buildah debootstrap)"
        exit 0
    fi
done
: "${OPENKEEL_TEST_MYSQL_URL:?the test services are not running}"

home=${OPENKEEL_TEST_HOME:-/var/tmp/openkeel-test}
store=$home/containers
mkdir -p "$store/graph" "$store/run"
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' \
    "$store/graph" "$store/run" >"$store/storage.conf"
export CONTAINERS_STORAGE_CONF=$store/storage.conf STORAGE_DRIVER=overlay
bin=$(cd "${CARGO_TARGET_DIR:-target}/debug" && pwd)
for b in magnum-api magnum-conductor magnum-db-manage uwsgi; do
    [ -x "$bin/$b" ] || ok_die "$bin/$b is missing: run cargo test (or cargo build -p openkeel) first"
done

t0=$SECONDS
deploy/images/debian-base.sh
ok_log "base image ready ($((SECONDS - t0)) s)"
t0=$SECONDS
BIN_DIR=$bin deploy/images/build.sh openkeel-test ci
ok_log "images built ($((SECONDS - t0)) s)"
t0=$SECONDS
tests/image/check.sh openkeel-test ci
ok_log "kolla's start path passed in the images ($((SECONDS - t0)) s)"
# Keep the layers for the next run, not the dangling ones this build replaced.
buildah --storage-driver overlay rmi --prune >/dev/null 2>&1 || true
