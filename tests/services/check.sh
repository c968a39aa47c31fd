#!/usr/bin/env bash
# Check the test environment contract the way the tests see it: the OPENKEEL_TEST_*
# variables (from the environment, or from env.sh when unset) must reach working services.
#
#   MariaDB   OPENKEEL_TEST_MYSQL_URL   log in over TCP, create + drop a database, grants
#   RabbitMQ  OPENKEEL_TEST_RABBIT_URL  AMQP login, vhost, publish/get (amqp_check.py)
#   venv      OPENKEEL_TEST_VENV        openstack CLI with the coe plugin, oslo.policy,
#                                       magnum and magnum-cluster-api (its Rust extension imports)
#                                       when tests/python/requirements-magnum.txt exists
#   Keystone  OPENKEEL_TEST_KEYSTONE_URL a password token for demo, validated by the service user
#   kapi      OPENKEEL_TEST_KUBECONFIG  /version, a v1beta1 CAPI list, CAPI's admission webhook
#   helm      OPENKEEL_TEST_HELM        helm version (with kapi)
#
# Exits non-zero naming what failed. Used by tests/run.sh after starting the services.
set -euo pipefail
OK_PROG=check
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ -z "${OPENKEEL_TEST_MYSQL_URL:-}${OPENKEEL_TEST_RABBIT_URL:-}${OPENKEEL_TEST_VENV:-}${OPENKEEL_TEST_KEYSTONE_URL:-}" ]; then
    eval "$("$OK_SERVICES_DIR/env.sh")"
fi
fail=0

if [ -n "${OPENKEEL_TEST_MYSQL_URL:-}" ]; then
    # mysql://user:pass@host:port[/]
    if [[ $OPENKEEL_TEST_MYSQL_URL =~ ^mysql://([^:@/]+):([^@/]*)@([^:/]+):([0-9]+)/?$ ]]; then
        u=${BASH_REMATCH[1]} p=${BASH_REMATCH[2]} h=${BASH_REMATCH[3]} port=${BASH_REMATCH[4]}
        db="okcheck_$$_$RANDOM"
        my=(mariadb --no-defaults --protocol=TCP -h"$h" -P"$port" -u"$u" -p"$p" -N -B)
        if out=$("${my[@]}" -e "CREATE DATABASE \`$db\`; CREATE TABLE \`$db\`.t (id INT PRIMARY KEY); DROP DATABASE \`$db\`; SELECT VERSION(), @@character_set_server, @@collation_server;" 2>&1) &&
            grants=$("${my[@]}" -e 'SHOW GRANTS' 2>&1) &&
            grep -q 'ALL PRIVILEGES ON \*\.\* .*WITH GRANT OPTION' <<<"$grants"; then
            ok_log "mariadb ok: $u@$h:$port, server $(tr '\t' ' ' <<<"$out")"
        else
            ok_log "FAILED mariadb at $OPENKEEL_TEST_MYSQL_URL: $out ${grants:-}"
            fail=1
        fi
    else
        ok_log "FAILED: OPENKEEL_TEST_MYSQL_URL=$OPENKEEL_TEST_MYSQL_URL is not mysql://user:pass@host:port"
        fail=1
    fi
else
    ok_log "FAILED: OPENKEEL_TEST_MYSQL_URL is not set"
    fail=1
fi

if [ -n "${OPENKEEL_TEST_RABBIT_URL:-}" ]; then
    py=python3
    [ -x "${OPENKEEL_TEST_VENV:-/nonexistent}/bin/python" ] && py="$OPENKEEL_TEST_VENV/bin/python"
    if out=$("$py" "$OK_SERVICES_DIR/amqp_check.py" "$OPENKEEL_TEST_RABBIT_URL" 2>&1); then
        ok_log "rabbitmq ok: $out"
    else
        ok_log "FAILED rabbitmq: $out"
        fail=1
    fi
else
    ok_log "FAILED: OPENKEEL_TEST_RABBIT_URL is not set"
    fail=1
fi

if [ -n "${OPENKEEL_TEST_VENV:-}" ]; then
    v=$OPENKEEL_TEST_VENV
    if out=$("$v/bin/python" -c '
import importlib.metadata as m
pkgs = ["python-openstackclient", "python-magnumclient", "oslo.policy", "magnum", "magnum-cluster-api"]
def v(p):
    try:
        return m.version(p)
    except m.PackageNotFoundError:
        return "-"
print(" ".join(f"{p} {v(p)}" for p in pkgs))
' 2>&1) && PYTHONWARNINGS=ignore "$v/bin/openstack" coe cluster list --help >/dev/null 2>&1 &&
        [ -x "$v/bin/oslopolicy-checker" ] &&
        { ! ok_magnum_wanted || { [ -x "$v/bin/magnum-db-manage" ] &&
            PYTHONPATH="$v/capi-site" "$v/bin/python" -c "import magnum_cluster_api.magnum_cluster_api" 2>/dev/null; }; }; then
        ok_log "venv ok: $out"
    else
        ok_log "FAILED venv $v: ${out:-openstack coe or oslopolicy-checker missing} (or magnum-db-manage / magnum-cluster-api's extension)"
        fail=1
    fi
else
    ok_log "FAILED: OPENKEEL_TEST_VENV is not set"
    fail=1
fi
if [ -n "${OPENKEEL_TEST_KEYSTONE_URL:-}" ]; then
    # a password token for demo, and the service user validating it
    py=python3
    [ -x "${OPENKEEL_TEST_VENV:-/nonexistent}/bin/python" ] && py="$OPENKEEL_TEST_VENV/bin/python"
    if out=$("$py" - "$OPENKEEL_TEST_KEYSTONE_URL" "${OPENKEEL_TEST_KEYSTONE_ACCOUNTS:-}" <<'PY' 2>&1
import json, sys, urllib.request
url, accounts = sys.argv[1], json.load(open(sys.argv[2]))
def token(user):
    u = accounts["users"][user]
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": u["password"]}}},
        "scope": {"project": {"name": u["project"], "domain": {"id": "default"}}}}}
    req = urllib.request.Request(url + "/auth/tokens?nocatalog", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return urllib.request.urlopen(req, timeout=10).headers["X-Subject-Token"]
user, svc = token("demo"), token("magnum")
req = urllib.request.Request(url + "/auth/tokens", headers={"X-Auth-Token": svc, "X-Subject-Token": user})
v = json.load(urllib.request.urlopen(req, timeout=10))
print("demo in project %s with roles %s" % (v["token"]["project"]["name"],
      ",".join(sorted(r["name"] for r in v["token"]["roles"]))))
PY
    ); then
        ok_log "keystone ok: $OPENKEEL_TEST_KEYSTONE_URL, $out"
    else
        ok_log "FAILED keystone at $OPENKEEL_TEST_KEYSTONE_URL: $out"
        fail=1
    fi
else
    ok_log "FAILED: OPENKEEL_TEST_KEYSTONE_URL is not set"
    fail=1
fi
if [ -n "${OPENKEEL_TEST_KUBECONFIG:-}" ]; then
    # through the kubeconfig, as the tests: /version, a v1beta1 list (CAPI's CRDs, conversion)
    # and a v1beta2 dry-run create that CAPI's admission webhook must reject
    if out=$(python3 - "$OPENKEEL_TEST_KUBECONFIG" <<'PY' 2>&1
import base64, json, re, ssl, sys, urllib.error, urllib.request
kc = open(sys.argv[1]).read()
server = re.search(r"server: (\S+)", kc).group(1)
ca = base64.b64decode(re.search(r"certificate-authority-data: (\S+)", kc).group(1)).decode()
token = re.search(r"token: (\S+)", kc).group(1)
ctx = ssl.create_default_context(cadata=ca)
def call(path, method="GET", body=None):
    req = urllib.request.Request(server + path, method=method, data=body,
                                 headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)
_, v = call("/version")
code, _ = call("/apis/cluster.x-k8s.io/v1beta1/clusters?limit=1")
assert code == 200, "v1beta1 clusters: HTTP %s" % code
code, st = call("/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters?dryRun=All", "POST", json.dumps(
    {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "check"},
     "spec": {"topology": {"classRef": {"name": "x"}, "version": "banana"}}}).encode())
assert code == 422, "CAPI admission webhook: HTTP %s %s" % (code, st.get("message"))
print("kube-apiserver %s at %s, CAPI CRDs and webhooks answer" % (v["gitVersion"], server))
PY
    ); then
        ok_log "kapi ok: $out"
    else
        ok_log "FAILED kapi ($OPENKEEL_TEST_KUBECONFIG): $out"
        fail=1
    fi
    if out=$("${OPENKEEL_TEST_HELM:-/nonexistent}" version --short 2>&1); then
        ok_log "helm ok: $OPENKEEL_TEST_HELM $out"
    else
        ok_log "FAILED helm (OPENKEEL_TEST_HELM=${OPENKEEL_TEST_HELM:-}): $out"
        fail=1
    fi
else
    ok_log "kapi: OPENKEEL_TEST_KUBECONFIG is not set (the Cluster API driver's tests skip)"
fi
exit "$fail"
