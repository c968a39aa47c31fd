#!/bin/sh
# Build OpenKeel's kolla-style images:
#
#   deploy/images/build.sh [REGISTRY/PREFIX] [TAG]      (default: openkeel, the crate version)
#
# 1. cargo build --release -p openkeel (the programs under OpenKeel's and Magnum's names, uwsgi);
#    with BIN_DIR=<dir> set, no cargo build: the programs are taken from that directory;
# 2. kolla 23.0.0's image scripts from its wheel (pip download --no-deps: start.sh,
#    set_configs.py, sudoers, the healthchecks, the magnum images' extend_start.sh);
# 3. the targets magnum-api and magnum-conductor of deploy/images/Dockerfile, built by
#    BUILDER=docker (`docker build`) or BUILDER=buildah (`buildah bud`, no daemon needed;
#    --storage-driver $STORAGE_DRIVER, default vfs, and --isolation $BUILDAH_ISOLATION, default
#    chroot, which work inside another container; --layers, so the second target reuses the
#    first's base stages). Without BUILDER: docker when its daemon answers, else buildah.
#
# BASE=<image> chooses the base. Default: debian:bookworm-slim with docker; with buildah,
# localhost/debian-bookworm-local when that image exists, else
# docker.io/library/debian:bookworm-slim. Without a registry, deploy/images/debian-base.sh makes
# localhost/debian-bookworm-local from Debian's own packages (debootstrap), for either builder:
#   deploy/images/debian-base.sh
#   BASE=localhost/debian-bookworm-local deploy/images/build.sh
# The RUN steps need Debian's mirror (apt-get install).
set -eu
prefix=${1:-openkeel}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tag=${2:-$(sed -n 's/^version = "\(.*\)"/\1/p' "$repo/Cargo.toml" | head -1)}

if [ -z "${BUILDER:-}" ]; then
    if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
        BUILDER=docker
    elif command -v buildah >/dev/null 2>&1; then
        BUILDER=buildah
    else
        echo "neither a running docker daemon nor buildah (apt-get install buildah)" >&2
        exit 1
    fi
fi
b() { buildah --storage-driver "${STORAGE_DRIVER:-vfs}" "$@"; }
case "$BUILDER" in
docker) base=${BASE:-debian:bookworm-slim} ;;
buildah)
    if [ -n "${BASE:-}" ]; then
        base=$BASE
    elif b inspect --type image localhost/debian-bookworm-local >/dev/null 2>&1; then
        base=localhost/debian-bookworm-local
    else
        base=docker.io/library/debian:bookworm-slim
    fi
    ;;
*)
    echo "BUILDER must be docker or buildah, not $BUILDER" >&2
    exit 1
    ;;
esac

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT

if [ -z "${BIN_DIR:-}" ]; then
    (cd "$repo" && cargo build --release -p openkeel)
    BIN_DIR=${CARGO_TARGET_DIR:-$repo/target}/release
fi
mkdir -p "$ctx/bin"
for p in magnum-api magnum-conductor magnum-db-manage magnum-status magnum-driver-manage uwsgi \
    openkeel openkeel-api openkeel-conductor openkeel-db-manage openkeel-status \
    openkeel-driver-manage openkeel-config-generator openkeel-policy-generator; do
    # mode 755 here: COPY keeps it, so no later chmod copies the programs into another layer.
    install -m 755 "$BIN_DIR/$p" "$ctx/bin/"
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
rm -rf "$ctx/wheel"
cp "$here/Dockerfile" "$ctx/"

for target in magnum-api magnum-conductor; do
    start=$(date +%s)
    case "$BUILDER" in
    docker)
        docker build --build-arg "BASE=$base" --target "$target" -t "$prefix/$target:$tag" "$ctx"
        ;;
    buildah)
        b bud --isolation "${BUILDAH_ISOLATION:-chroot}" --layers --format docker \
            --build-arg "BASE=$base" --target "$target" -t "$prefix/$target:$tag" \
            -f "$ctx/Dockerfile" "$ctx"
        ;;
    esac
    echo "built $prefix/$target:$tag from $base with $BUILDER in $(($(date +%s) - start)) s"
done
