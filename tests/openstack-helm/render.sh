#!/bin/sh
# Re-render OpenStack-Helm's magnum chart for crates/cli/tests/openstack_helm.rs.
#
#   tests/openstack-helm/render.sh OPENSTACK_HELM_CHECKOUT [HELM]
#
# OPENSTACK_HELM_CHECKOUT is a checkout of https://opendev.org/openstack/openstack-helm
# (the files in rendered/ come from commit 0ee5adeffcaefb6f7a78bb23bf845414672e6827,
# 2026-08-20); HELM defaults to $OPENKEEL_TEST_HELM (tests/services/kapi.sh installs helm).
# It runs `helm template` with values-test.yaml and writes, from the magnum-etc Secret and the
# magnum-bin ConfigMap, the files the pods mount: magnum.conf, magnum-api-uwsgi.ini,
# logging.conf, policy.yaml, magnum-conductor-init.sh and db-sync.sh. The chart's random
# memcache_secret_key is replaced by a placeholder so that re-rendering is reproducible.
set -eu
src=$1
helm=${2:-${OPENKEEL_TEST_HELM:-helm}}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$src/magnum" "$src/helm-toolkit" "$work/"
"$helm" dependency build "$work/magnum" >/dev/null
"$helm" template magnum "$work/magnum" --namespace openstack -f "$here/values-test.yaml" >"$work/out.yaml"
"${OPENKEEL_TEST_VENV:-/var/tmp/openkeel-test/venv}/bin/python" - "$work/out.yaml" "$here/rendered" <<'PY'
import base64, sys, yaml
out, dest = sys.argv[1:3]
for d in yaml.safe_load_all(open(out)):
    if not d:
        continue
    name = d["metadata"]["name"]
    if d["kind"] == "Secret" and name == "magnum-etc":
        for f in ("magnum.conf", "magnum-api-uwsgi.ini", "logging.conf", "policy.yaml"):
            text = base64.b64decode(d["data"][f]).decode()
            if f == "magnum.conf":
                text = "\n".join(
                    "memcache_secret_key = @MEMCACHE_SECRET_KEY@" if l.startswith("memcache_secret_key") else l
                    for l in text.split("\n"))
            open(f"{dest}/{f}", "w").write(text)
    if d["kind"] == "ConfigMap" and name == "magnum-bin":
        for f in ("magnum-conductor-init.sh", "db-sync.sh"):
            open(f"{dest}/{f}", "w").write(d["data"][f])
PY
