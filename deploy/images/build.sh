#!/bin/sh
# Build OpenKeel's kolla-style images:
#
#   deploy/images/build.sh [REGISTRY/PREFIX] [TAG]      (default: openkeel, the crate version)
#
# 1. cargo build --release -p openkeel (the programs under OpenKeel's and Magnum's names, uwsgi);
# 2. kolla 23.0.0's image scripts from its wheel (pip download --no-deps: start.sh,
#    set_configs.py, sudoers, the healthchecks, the magnum images' extend_start.sh);
# 3. docker build --target magnum-api / magnum-conductor.
#
# BASE=<image> chooses the base (default debian:bookworm-slim). Without a registry, a base
# made from Debian's own packages works as well:
#   debootstrap --variant=minbase bookworm rootfs http://deb.debian.org/debian
#   tar -C rootfs -c . | docker import - debian-bookworm-local
#   BASE=debian-bookworm-local deploy/images/build.sh
set -eu
prefix=${1:-openkeel}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tag=${2:-$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)}
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

(cd "$repo" && cargo build --release -p openkeel)
mkdir -p "$ctx/bin"
for b in magnum-api magnum-conductor magnum-db-manage magnum-status magnum-driver-manage uwsgi \
    openkeel openkeel-api openkeel-conductor openkeel-db-manage openkeel-status \
    openkeel-driver-manage openkeel-config-generator openkeel-policy-generator; do
    cp "${CARGO_TARGET_DIR:-$repo/target}/release/$b" "$ctx/bin/"
done

python3 -m pip download --quiet --no-deps --dest "$ctx/wheel" kolla==23.0.0
python3 -m zipfile -e "$ctx"/wheel/kolla-23.0.0-*.whl "$ctx/wheel/x"
d="$ctx/wheel/x/kolla/docker"
mkdir -p "$ctx/kolla/base" "$ctx/kolla/magnum-base" "$ctx/kolla/magnum-api"
for f in set_configs.py start.sh copy_cacerts.sh install_projects.sh sudoers healthcheck_curl \
    healthcheck_filemod healthcheck_listen healthcheck_port healthcheck_socket; do
    cp "$d/base/$f" "$ctx/kolla/base/"
done
cp "$d/magnum/magnum-base/extend_start.sh" "$ctx/kolla/magnum-base/"
cp "$d/magnum/magnum-api/extend_start.sh" "$ctx/kolla/magnum-api/"
cp "$here/Dockerfile" "$ctx/"

for target in magnum-api magnum-conductor; do
    docker build --build-arg "BASE=${BASE:-debian:bookworm-slim}" --target "$target" \
        -t "$prefix/$target:$tag" "$ctx"
done
echo "built $prefix/magnum-api:$tag and $prefix/magnum-conductor:$tag"
