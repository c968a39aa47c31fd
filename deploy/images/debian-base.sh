#!/bin/sh
# A Debian bookworm base image made from Debian's own packages, for hosts that reach Debian's
# mirror but no container registry:
#
#   deploy/images/debian-base.sh [NAME]          (default: localhost/debian-bookworm-local)
#
# 1. `debootstrap --variant=minbase bookworm` into a scratch directory, trimmed as the
#    registry's debian:bookworm-slim is (no downloaded .debs, no apt lists, no host
#    hostname / resolv.conf, empty /dev), packed as a tarball cached under
#    $OPENKEEL_IMAGE_CACHE (default ~/.cache/openkeel-image/debian-bookworm-minbase.tar);
#    a cached tarball is reused (delete it to refresh the base), and an existing image of that
#    name is then kept;
# 2. imported as an image: with buildah (no daemon needed) `buildah from scratch` +
#    `buildah add` of the tarball + `buildah commit`; with docker, `docker import`.
#
# BUILDER=buildah|docker chooses the tool (default: docker when its daemon answers, else
# buildah). STORAGE_DRIVER (buildah's --storage-driver, default vfs: works without overlay
# support, e.g. inside another container). MIRROR (default http://deb.debian.org/debian).
# Needs root (debootstrap, and buildah without a user namespace).
set -eu
name=${1:-localhost/debian-bookworm-local}
cache=${OPENKEEL_IMAGE_CACHE:-${HOME:-/root}/.cache/openkeel-image}
mirror=${MIRROR:-http://deb.debian.org/debian}
tarball="$cache/debian-bookworm-minbase.tar"

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

fresh=
if [ ! -s "$tarball" ]; then
    fresh=1
    command -v debootstrap >/dev/null 2>&1 || {
        echo "debootstrap is needed (apt-get install debootstrap)" >&2
        exit 1
    }
    mkdir -p "$cache"
    work=$(mktemp -d "${TMPDIR:-/var/tmp}/debian-base.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror"
    r="$work/rootfs"
    # The registry's image's sources: the release, its updates and the security archive.
    security=$(printf '%s' "$mirror" | sed 's,/debian/*$,/debian-security,')
    cat >"$r/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
    rm -rf "${r:?}"/var/cache/apt/archives/*.deb "$r"/var/cache/apt/*.bin "$r"/var/lib/apt/lists/* \
        "${r:?}"/dev/* "$r"/var/log/bootstrap.log "$r"/run/* "$r"/tmp/*
    : >"$r/etc/resolv.conf"
    : >"$r/etc/hostname"
    tar --numeric-owner --xattrs -C "$r" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$work"
    trap - EXIT
fi

b() { buildah --storage-driver "${STORAGE_DRIVER:-vfs}" "$@"; }
# An image imported from the same cached tarball is left as it is (a new import would only
# change its id, and so every build cache on top of it).
if [ -z "$fresh" ]; then
    case "$BUILDER" in
    buildah) b inspect --type image "$name" >/dev/null 2>&1 && have=1 || have= ;;
    *) docker image inspect "$name" >/dev/null 2>&1 && have=1 || have= ;;
    esac
    if [ -n "$have" ]; then
        echo "$name is already there (from $tarball; delete both to make it anew)"
        exit 0
    fi
fi

case "$BUILDER" in
buildah)
    ctr=$(b from scratch)
    trap 'b rm "$ctr" >/dev/null 2>&1 || true' EXIT
    b add --quiet "$ctr" "$tarball" /
    b config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        --cmd /bin/bash "$ctr"
    b commit --quiet --rm "$ctr" "$name" >/dev/null
    trap - EXIT
    ;;
docker)
    docker import --change 'CMD ["/bin/bash"]' "$tarball" "$name" >/dev/null
    ;;
*)
    echo "BUILDER must be buildah or docker, not $BUILDER" >&2
    exit 1
    ;;
esac
echo "imported $tarball as $name ($BUILDER)"
