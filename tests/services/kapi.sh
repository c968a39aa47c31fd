#!/usr/bin/env bash
# A real Kubernetes management-cluster API for the Cluster API driver's tests: etcd v3.7.0,
# kube-apiserver v1.37.2 and the Cluster API core manager v1.13.6 (topology controller,
# webhooks), built from the Go module proxy, on 127.0.0.1 only, state under
# $OPENKEEL_TEST_HOME/kapi (default /var/tmp/openkeel-test/kapi):
#
#   tests/services/kapi.sh build   build (or find in the cache) the binaries and helm; prints their dir
#   tests/services/kapi.sh build-helm   only helm (tests/services/helm); prints its path
#   tests/services/kapi.sh start   build if needed, start etcd + kube-apiserver, install the CRDs,
#                                  start the CAPI manager; prints the export line
#   tests/services/kapi.sh stop    unregister the webhooks, stop what start started (by pid file)
#   tests/services/kapi.sh env     print the export line if ours is running
#   tests/services/kapi.sh status  what runs, where the logs are
#
# Exit codes of start: 0 started, 10 already running, else failed (as barbican.sh).
#
# What is built (tests/services/kapi/, all pinned by its go.sum files):
#   apiserver/   kube-apiserver (k8s.io/kubernetes v1.37.2, the staging-module replace trick
#                described in its go.mod) and etcd (go.etcd.io/etcd/server/v3 v3.7.0)
#   capi/        the CAPI core manager (sigs.k8s.io/cluster-api v1.13.6) and kubeadm-convert
#                (capi/kubeadm-convert/main.go: the v1beta1<->v1beta2 conversion webhook of the
#                kubeadm bootstrap and control-plane groups, CAPI's own conversion code)
# The binaries are cached in ${XDG_CACHE_HOME:-$HOME/.cache}/openkeel-kapi/<stamp>/
# (OPENKEEL_TEST_KAPI_CACHE), <stamp> being a hash of tests/services/kapi/** and the Go
# version: a warm run never rebuilds, and Go's own caches (GOMODCACHE, GOCACHE) are left
# where they are. A cold build needs Go >= 1.26 (or any Go >= 1.21, which then fetches
# go1.26.8 from the module proxy), about 1 GiB of modules and 4 GiB of GOCACHE; see
# docs/testing.md for its time.
#
# What runs (ports overridable):
#   etcd             127.0.0.1:$OPENKEEL_TEST_KAPI_ETCD_PORT (22379), peer 22380, --unsafe-no-fsync
#   kube-apiserver   https://127.0.0.1:$OPENKEEL_TEST_KAPI_PORT (26443); RBAC; a static admin token
#                    and an admin client certificate (system:masters); PKI made by openssl
#   capi-manager     all namespaces, ClusterTopology=true; webhooks on 127.0.0.1:29443 registered
#                    by URL; health 29440, diagnostics 29441
#   kubeadm-convert  https://127.0.0.1:29444/convert
# CRDs (from the module zips, server-side applied, with the contract labels that the providers'
# kustomizations add): CAPI core, addons (ClusterResourceSet), ipam, runtime, kubeadm bootstrap,
# kubeadm control plane, and CAPO v0.13.0 (sigs.k8s.io/cluster-api-provider-openstack).
# The CAPI CRDs serve v1beta1 and v1beta2 (storage); their spec.conversion is set to the
# webhook (capi-manager's /convert for the core, addons and ipam groups, kubeadm-convert's for
# the kubeadm groups), so v1beta1 objects, as magnum-cluster-api writes them, are converted by
# Cluster API's own code. CAPO's CRDs store v1beta1 (its older versions are not converted).
#
# Tests get OPENKEEL_TEST_HELM (kapi/helm, a link to the cached helm program, see "helm" below)
# and OPENKEEL_TEST_KUBECONFIG (kapi/kubeconfig: context `openkeel-kapi` with the token,
# `openkeel-kapi-cert` with the client certificate). No kube-controller-manager runs: a deleted
# namespace stays Terminating, nothing is garbage-collected; use a fresh namespace per test.
set -euo pipefail
OK_PROG=kapi
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OK_KAPI_SRC="$OK_SERVICES_DIR/kapi"
OK_KAPI_DIR="$OK_HOME/kapi"
OK_KAPI_PKI="$OK_KAPI_DIR/pki"
OK_KAPI_PORT="${OPENKEEL_TEST_KAPI_PORT:-26443}"
OK_KAPI_ETCD_PORT="${OPENKEEL_TEST_KAPI_ETCD_PORT:-22379}"
OK_KAPI_PEER_PORT="${OPENKEEL_TEST_KAPI_PEER_PORT:-22380}"
OK_KAPI_WH_PORT="${OPENKEEL_TEST_KAPI_WEBHOOK_PORT:-29443}"
OK_KAPI_HEALTH_PORT="${OPENKEEL_TEST_KAPI_HEALTH_PORT:-29440}"
OK_KAPI_DIAG_PORT="${OPENKEEL_TEST_KAPI_DIAGNOSTICS_PORT:-29441}"
OK_KAPI_CONV_PORT="${OPENKEEL_TEST_KAPI_CONVERT_PORT:-29444}"
OK_KAPI_URL="https://127.0.0.1:$OK_KAPI_PORT"
OK_KAPI_KUBECONFIG="$OK_KAPI_DIR/kubeconfig"
OK_KAPI_CACHE="${OPENKEEL_TEST_KAPI_CACHE-${XDG_CACHE_HOME:-$HOME/.cache}/openkeel-kapi}"

K8S_VERSION=v1.37.2
CAPI_MODULE=sigs.k8s.io/cluster-api@v1.13.6
CAPO_MODULE=sigs.k8s.io/cluster-api-provider-openstack@v0.13.0
# CAPO is not in any go.sum (no program of it is built): its zip's hash, from the checksum
# database, is pinned here instead and checked after the download.
CAPO_SUM="h1:iZN/qJhDZas74Mo/zM1tz038niv68e1g5wYCQJ5yczo="
GO_WANT=go1.26.8
OK_KAPI_PROGS=(etcd kube-apiserver capi-manager kubeadm-convert)
OK_KAPI_MANAGER=openkeel-kapi
OK_KAPI_WEBHOOKS=(mutatingwebhookconfigurations/openkeel-capi-mutating
    validatingwebhookconfigurations/openkeel-capi-validating)

# ------------------------------------------------------------------------ Go
# ok_kapi_go -> sets KAPI_GO (a go command) and exports GOTOOLCHAIN: local when it is >= 1.26,
# else go1.26.8 (which go >= 1.21 downloads from the module proxy as golang.org/toolchain)
ok_kapi_go() {
    local g v
    for g in "${OPENKEEL_TEST_GO:-}" "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go-1.2*/bin/go; do
        [ -n "$g" ] && [ -x "$g" ] || continue
        v=$(GOTOOLCHAIN=local "$g" env GOVERSION 2>/dev/null) || continue
        v=${v#go}
        local major=${v%%.*} rest=${v#*.}
        local minor=${rest%%[!0-9]*}
        [ "${major:-0}" = 1 ] || continue
        if [ "${minor:-0}" -ge 26 ]; then
            KAPI_GO=$g
            export GOTOOLCHAIN=local
            return 0
        elif [ "${minor:-0}" -ge 21 ]; then
            KAPI_GO=$g
            export GOTOOLCHAIN=$GO_WANT
            return 0
        fi
    done
    ok_log "no Go >= 1.21 found (OPENKEEL_TEST_GO, go on the PATH, /usr/local/go, /usr/lib/go-1.2x)"
    return 1
}

# ok_kapi_stamp -> hash of the build inputs (every file of tests/services/kapi, the Go version)
ok_kapi_stamp() {
    {
        (cd "$OK_KAPI_SRC" && find . -type f ! -name '*~' | LC_ALL=C sort | xargs sha256sum)
        "$KAPI_GO" version
        echo "${OK_KAPI_PROGS[*]}"
    } | sha256sum | cut -c1-16
}

ok_kapi_bin_ok() { # ok_kapi_bin_ok DIR -> every program is there and DIR/.stamp matches
    local d=$1 p
    [ -s "$d/.stamp" ] && [ "$(cat "$d/.stamp")" = "$KAPI_STAMP" ] || return 1
    for p in "${OK_KAPI_PROGS[@]}"; do [ -x "$d/$p" ] || return 1; done
}

# ok_kapi_build -> sets OK_KAPI_BIN to a directory holding the four binaries, building them
# when the cache has none for this stamp
ok_kapi_build() {
    ok_kapi_go || return 1
    export GOFLAGS="-mod=readonly -trimpath" GOWORK=off CGO_ENABLED=0
    KAPI_STAMP=$(ok_kapi_stamp)
    local root=$OK_KAPI_CACHE
    [ -n "$root" ] || root="$OK_KAPI_DIR/bin"
    OK_KAPI_BIN="$root/$KAPI_STAMP"
    if ok_kapi_bin_ok "$OK_KAPI_BIN"; then
        touch "$OK_KAPI_BIN/.stamp" 2>/dev/null || true
        return 0
    fi
    mkdir -p "$root" "$OK_LOGS"
    local lockfd
    exec {lockfd}>"$root/build.lock"
    if ! flock -n "$lockfd"; then
        ok_log "build: waiting for another build in $root (up to 60 min)"
        flock -w 3600 "$lockfd" || { ok_log "build: could not lock $root/build.lock"; return 1; }
    fi
    if ok_kapi_bin_ok "$OK_KAPI_BIN"; then
        exec {lockfd}>&-
        return 0
    fi
    local tmp="$root/$KAPI_STAMP.tmp.$$" log="$OK_LOGS/kapi-build.log" t0=$SECONDS s p rc=0
    rm -rf "$tmp"
    mkdir -p "$tmp"
    ok_log "build: no cached binaries for this stamp, building ${OK_KAPI_PROGS[*]} with $("$KAPI_GO" version) into $OK_KAPI_BIN (log: $log; GOCACHE $("$KAPI_GO" env GOCACHE))"
    local nice=()
    [ -z "${OPENKEEL_TEST_KAPI_NICE:-}" ] || nice=(nice -n "$OPENKEEL_TEST_KAPI_NICE")
    local V=k8s.io/component-base/version C=k8s.io/client-go/pkg/version
    local ldk="-s -w -X $V.gitVersion=$K8S_VERSION -X $V.gitMajor=1 -X $V.gitMinor=37 -X $V.gitTreeState=clean"
    ldk="$ldk -X $V.buildDate=1970-01-01T00:00:00Z -X $C.gitVersion=$K8S_VERSION -X $C.gitMajor=1 -X $C.gitMinor=37"
    {
        echo "== $(date -u +%FT%TZ) build $KAPI_STAMP with $("$KAPI_GO" version), GOCACHE=$("$KAPI_GO" env GOCACHE)"
        s=$SECONDS
        (cd "$OK_KAPI_SRC/apiserver" && "$KAPI_GO" mod download) &&
            (cd "$OK_KAPI_SRC/capi" && "$KAPI_GO" mod download) || rc=$?
        echo "== modules: $((SECONDS - s)) s (rc $rc)"
    } >>"$log" 2>&1
    for p in "${OK_KAPI_PROGS[@]}"; do
        [ "$rc" = 0 ] || break
        s=$SECONDS
        {
            case $p in
                etcd) (cd "$OK_KAPI_SRC/apiserver" && "${nice[@]}" "$KAPI_GO" build -ldflags "-s -w" -o "$tmp/etcd" go.etcd.io/etcd/server/v3) ;;
                kube-apiserver) (cd "$OK_KAPI_SRC/apiserver" && "${nice[@]}" "$KAPI_GO" build -ldflags "$ldk" -o "$tmp/$p" k8s.io/kubernetes/cmd/kube-apiserver) ;;
                capi-manager) (cd "$OK_KAPI_SRC/capi" && "${nice[@]}" "$KAPI_GO" build -ldflags "-s -w" -o "$tmp/$p" sigs.k8s.io/cluster-api) ;;
                kubeadm-convert) (cd "$OK_KAPI_SRC/capi" && "${nice[@]}" "$KAPI_GO" build -ldflags "-s -w" -o "$tmp/$p" ./kubeadm-convert) ;;
            esac
        } >>"$log" 2>&1 || rc=$?
        echo "== $p: $((SECONDS - s)) s (rc $rc)" >>"$log"
        [ "$rc" = 0 ] && ok_log "build: $p built in $((SECONDS - s)) s"
    done
    if [ "$rc" != 0 ]; then
        ok_tail "$log"
        rm -rf "$tmp"
        exec {lockfd}>&-
        ok_log "build: FAILED (exit $rc) after $((SECONDS - t0)) s"
        return 1
    fi
    echo "$KAPI_STAMP" >"$tmp/.stamp"
    rm -rf "$OK_KAPI_BIN"
    mv "$tmp" "$OK_KAPI_BIN"
    # binaries of other build inputs not used for 14 days go (240 MB each)
    find "$root" -mindepth 2 -maxdepth 2 -name .stamp -mtime +14 -printf '%h\n' 2>/dev/null |
        while read -r old; do [ "$old" = "$OK_KAPI_BIN" ] || rm -rf "$old"; done
    exec {lockfd}>&-
    ok_log "build: done in $((SECONDS - t0)) s: $OK_KAPI_BIN"
}

# ------------------------------------------------------------------------ helm
# The helm program the Cluster API driver runs to render its addon charts, built from
# tests/services/helm (helm.sh/helm/v4 v4.3.2, pinned by its go.sum; about 3 min cold) into
# $OK_KAPI_CACHE/helm/<stamp>/helm, <stamp> a hash of tests/services/helm/** and the Go version
# (separate from the Kubernetes binaries' stamp, so neither rebuilds the other).
HELM_VERSION=v4.3.2
OK_HELM_SRC="$OK_SERVICES_DIR/helm"
OK_KAPI_HELM="$OK_KAPI_DIR/helm" # a link to the cached program, what tests get

# ok_helm_build -> sets OK_HELM_BIN to the cached helm program, building it when needed
ok_helm_build() {
    ok_kapi_go || return 1
    export GOFLAGS="-mod=readonly -trimpath" GOWORK=off CGO_ENABLED=0
    local stamp root=$OK_KAPI_CACHE
    [ -n "$root" ] || root="$OK_KAPI_DIR/bin"
    stamp=$({
        (cd "$OK_HELM_SRC" && find . -type f ! -name '*~' | LC_ALL=C sort | xargs sha256sum)
        "$KAPI_GO" version
    } | sha256sum | cut -c1-16)
    local dir="$root/helm/$stamp"
    OK_HELM_BIN="$dir/helm"
    if [ -x "$OK_HELM_BIN" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
        touch "$dir/.stamp" 2>/dev/null || true
        return 0
    fi
    mkdir -p "$root/helm" "$OK_LOGS"
    local lockfd tmp="$dir.tmp.$$" log="$OK_LOGS/helm-build.log" t0=$SECONDS
    exec {lockfd}>"$root/helm/build.lock"
    flock -w 3600 "$lockfd" || { ok_log "helm: could not lock $root/helm/build.lock"; return 1; }
    if [ -x "$OK_HELM_BIN" ] && [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ]; then
        exec {lockfd}>&-
        return 0
    fi
    ok_log "build: no cached helm for this stamp, building helm $HELM_VERSION into $dir (log: $log)"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    if ! (cd "$OK_HELM_SRC" && "$KAPI_GO" build \
        -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION" \
        -o "$tmp/helm" helm.sh/helm/v4/cmd/helm) >>"$log" 2>&1; then
        ok_tail "$log"
        rm -rf "$tmp"
        exec {lockfd}>&-
        ok_log "build: helm FAILED after $((SECONDS - t0)) s"
        return 1
    fi
    echo "$stamp" >"$tmp/.stamp"
    rm -rf "$dir"
    mv "$tmp" "$dir"
    find "$root/helm" -mindepth 2 -maxdepth 2 -name .stamp -mtime +14 -printf '%h\n' 2>/dev/null |
        while read -r old; do [ "$old" = "$dir" ] || rm -rf "$old"; done
    exec {lockfd}>&-
    ok_log "build: helm built in $((SECONDS - t0)) s: $OK_HELM_BIN"
}

# ------------------------------------------------------------------------ processes
ok_kapi_pidfile() { echo "$OK_PIDS/kapi-$1.pid"; }
ok_kapi_running() { # ok_kapi_running PROG -> our PROG (its argv names $OK_KAPI_DIR) runs
    ok_pid_is "$(ok_kapi_pidfile "$1")" "$1" "$OK_KAPI_DIR"
}

# ok_kapi_spawn PROG LOG ARGS... -> start $OK_KAPI_BIN/PROG in the background, its own
# session, stdout+stderr to LOG, pid in its pid file
ok_kapi_spawn() {
    local p=$1 log=$2 pidfile
    shift 2
    pidfile=$(ok_kapi_pidfile "$p")
    : >"$log"
    start-stop-daemon --start --quiet --background --make-pidfile --pidfile "$pidfile" \
        --chdir "$OK_KAPI_DIR" --output "$log" --startas "$OK_KAPI_BIN/$p" -- "$@" ||
        { ok_log "$p: start-stop-daemon failed"; return 1; }
    ok_wait 10 test -s "$pidfile" || { ok_log "$p: no pid file"; return 1; }
}

# ok_kapi_wait_for SECONDS PROG LOG CHECK... -> CHECK succeeds, or fail with the log's tail
# when PROG exits or SECONDS pass
ok_kapi_wait_for() {
    local secs=$1 p=$2 log=$3 end
    shift 3
    end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        if ! ok_pid_alive "$(ok_kapi_pidfile "$p")"; then
            ok_tail "$log"
            ok_log "$p: exited during start-up"
            return 1
        fi
        if [ "$SECONDS" -ge "$end" ]; then
            ok_tail "$log"
            ok_log "$p: not ready after ${secs}s"
            return 1
        fi
        sleep 0.2
    done
}

# ------------------------------------------------------------------------ API access
ok_kapi_token() { cut -d, -f1 "$OK_KAPI_PKI/tokens.csv"; }
# ok_kapi_api METHOD PATH [curl args...] -> body on stdout; fails on HTTP >= 400
ok_kapi_api() {
    local m=$1 p=$2
    shift 2
    curl -sS --max-time 60 --fail-with-body --cacert "$OK_KAPI_PKI/ca.crt" \
        -H "Authorization: Bearer $(ok_kapi_token)" -X "$m" "$OK_KAPI_URL$p" "$@"
}
# ok_kapi_code METHOD PATH [curl args...] -> only the HTTP status code
ok_kapi_code() {
    local m=$1 p=$2
    shift 2
    curl -sS --max-time 60 -o /dev/null -w '%{http_code}' --cacert "$OK_KAPI_PKI/ca.crt" \
        -H "Authorization: Bearer $(ok_kapi_token)" -X "$m" "$OK_KAPI_URL$p" "$@" 2>/dev/null || true
}
ok_kapi_readyz() { [ "$(ok_kapi_api GET /readyz 2>/dev/null)" = ok ]; }
ok_etcd_healthy() {
    curl -fsS --max-time 5 "http://127.0.0.1:$OK_KAPI_ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'
}

# ------------------------------------------------------------------------ PKI
# made once per test home with openssl: CA, apiserver serving cert (127.0.0.1), admin client
# cert (O=system:masters), service-account key pair, a static admin token, and the serving
# cert of the webhooks (127.0.0.1)
ok_kapi_pki() {
    [ -s "$OK_KAPI_PKI/tokens.csv" ] && [ -s "$OK_KAPI_PKI/webhook.crt" ] && return 0
    rm -rf "$OK_KAPI_PKI"
    mkdir -p "$OK_KAPI_PKI"
    (
        cd "$OK_KAPI_PKI"
        umask 077
        openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days 3650 -keyout ca.key -out ca.crt \
            -subj "/CN=openkeel-kapi-ca" -addext "basicConstraints=critical,CA:TRUE" \
            -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature"
        cert() { # cert NAME SUBJECT EKU [SAN]
            openssl req -newkey rsa:2048 -nodes -sha256 -keyout "$1.key" -out "$1.csr" -subj "$2"
            {
                echo "basicConstraints=CA:FALSE"
                echo "keyUsage=critical,digitalSignature,keyEncipherment"
                echo "extendedKeyUsage=$3"
                [ -z "${4:-}" ] || echo "subjectAltName=$4"
            } >"$1.ext"
            openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
                -sha256 -extfile "$1.ext" -out "$1.crt"
            rm -f "$1.csr" "$1.ext"
        }
        cert apiserver /CN=kube-apiserver serverAuth \
            "IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc"
        cert admin "/O=system:masters/CN=openkeel-kapi-admin" clientAuth
        cert webhook /CN=openkeel-kapi-webhooks serverAuth "IP:127.0.0.1,DNS:localhost"
        openssl genrsa -out sa.key 2048
        openssl rsa -in sa.key -pubout -out sa.pub
        printf '%s,openkeel-kapi-admin,openkeel-kapi-admin,"system:masters"\n' "$(openssl rand -hex 24)" >tokens.csv
        # the layout controller-runtime's webhook server expects (--webhook-cert-dir)
        mkdir -p webhook-certs
        cp webhook.crt webhook-certs/tls.crt
        cp webhook.key webhook-certs/tls.key
    ) >>"$OK_KAPI_DIR/pki.log" 2>&1 || { ok_tail "$OK_KAPI_DIR/pki.log"; ok_log "openssl failed"; return 1; }
}

ok_kapi_write_kubeconfig() {
    local tmp="$OK_KAPI_KUBECONFIG.tmp"
    (
        umask 077
        cat >"$tmp" <<KC
apiVersion: v1
kind: Config
clusters:
- name: openkeel-kapi
  cluster:
    server: $OK_KAPI_URL
    certificate-authority-data: $(base64 -w0 "$OK_KAPI_PKI/ca.crt")
users:
- name: openkeel-kapi-admin
  user:
    token: $(ok_kapi_token)
- name: openkeel-kapi-admin-cert
  user:
    client-certificate-data: $(base64 -w0 "$OK_KAPI_PKI/admin.crt")
    client-key-data: $(base64 -w0 "$OK_KAPI_PKI/admin.key")
contexts:
- name: openkeel-kapi
  context: {cluster: openkeel-kapi, user: openkeel-kapi-admin}
- name: openkeel-kapi-cert
  context: {cluster: openkeel-kapi, user: openkeel-kapi-admin-cert}
current-context: openkeel-kapi
KC
    )
    mv -f "$tmp" "$OK_KAPI_KUBECONFIG"
}

# ------------------------------------------------------------------------ modules
# ok_kapi_moddir MODULE@VERSION [SUM] -> its directory in the module cache (downloaded if
# needed); with SUM, the zip's hash must be SUM
ok_kapi_moddir() {
    local tmp out
    tmp=$(mktemp -d)
    out=$(cd "$tmp" && GOFLAGS=-mod=mod "$KAPI_GO" mod download -json "$1") || { rm -rf "$tmp"; return 1; }
    rm -rf "$tmp"
    python3 -c '
import json, sys
d = json.loads(sys.argv[1])
if d.get("Error"): sys.exit("go mod download %s: %s" % (sys.argv[2], d["Error"]))
if sys.argv[3] and d.get("Sum") != sys.argv[3]:
    sys.exit("%s: hash %s, expected %s" % (sys.argv[2], d.get("Sum"), sys.argv[3]))
print(d["Dir"])' "$out" "$1" "${2:-}"
}

# ------------------------------------------------------------------------ CRDs
# ok_kapi_crds -> server-side apply every CRD with its contract labels and (CAPI) the
# conversion webhook, wait until each is Established and every served version is listable
ok_kapi_crds() {
    local capi capo ca t0=$SECONDS
    capi=$(ok_kapi_moddir "$CAPI_MODULE") || return 1
    capo=$(ok_kapi_moddir "$CAPO_MODULE" "$CAPO_SUM") || return 1
    ca=$(base64 -w0 "$OK_KAPI_PKI/ca.crt")
    # set: <crd dir> <kustomization with the labels> <conversion webhook URL, or ->
    local sets=(
        "$capi/config/crd" "https://127.0.0.1:$OK_KAPI_WH_PORT/convert"
        "$capi/bootstrap/kubeadm/config/crd" "https://127.0.0.1:$OK_KAPI_CONV_PORT/convert"
        "$capi/controlplane/kubeadm/config/crd" "https://127.0.0.1:$OK_KAPI_CONV_PORT/convert"
        "$capo/config/crd" -
    )
    local i dir url f name body names=()
    for ((i = 0; i < ${#sets[@]}; i += 2)); do
        dir=${sets[i]} url=${sets[i + 1]}
        for f in "$dir"/bases/*.yaml; do
            name=$(basename "$f" .yaml)
            name="${name#*_}.${name%%_*}" # group_plural.yaml -> plural.group
            ok_kapi_api PATCH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$name?fieldManager=$OK_KAPI_MANAGER&force=true" \
                -H "Content-Type: application/apply-patch+yaml" --data-binary "@$f" >/dev/null ||
                { ok_log "crds: applying $f failed"; return 1; }
            # labels (cluster.x-k8s.io/<contract>: <version>) from the kustomization, and the
            # conversion webhook its patches/webhook_in_*.yaml would add, by URL
            body=$(python3 - "$dir/kustomization.yaml" "$url" "$ca" <<'PY'
import json, re, sys
labels = {}
for line in open(sys.argv[1]):
    m = re.match(r'^\s+(cluster\.x-k8s\.io/v[0-9a-z]+):\s*([A-Za-z0-9_]+)\s*$', line)
    if m:
        labels[m.group(1)] = m.group(2)
patch = {"metadata": {"labels": labels}}
if sys.argv[2] != "-":
    patch["spec"] = {"conversion": {"strategy": "Webhook", "webhook": {
        "conversionReviewVersions": ["v1"],
        "clientConfig": {"url": sys.argv[2], "caBundle": sys.argv[3]}}}}
print(json.dumps(patch))
PY
            ) || return 1
            ok_kapi_api PATCH "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$name?fieldManager=$OK_KAPI_MANAGER-rig" \
                -H "Content-Type: application/merge-patch+json" --data "$body" >/dev/null ||
                { ok_log "crds: labelling $name failed"; return 1; }
            names+=("$name")
        done
    done
    local t1=$SECONDS pending left n paths=() p end=$((SECONDS + 120))
    pending=("${names[@]}")
    while [ ${#pending[@]} -gt 0 ]; do
        left=()
        for n in "${pending[@]}"; do
            # the LIST path of every served version, once the CRD is Established
            if p=$(ok_kapi_api GET "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/$n" | python3 -c '
import json, sys
d = json.load(sys.stdin); s = d["spec"]
if not any(c["type"] == "Established" and c["status"] == "True" for c in d.get("status", {}).get("conditions", [])):
    sys.exit(1)
for v in s["versions"]:
    if v.get("served"):
        print("/apis/%s/%s/%s" % (s["group"], v["name"], s["names"]["plural"]))'); then
                mapfile -t -O "${#paths[@]}" paths <<<"$p"
            else
                left+=("$n")
            fi
        done
        pending=("${left[@]}")
        [ ${#pending[@]} = 0 ] && break
        [ "$SECONDS" -lt "$end" ] || { ok_log "crds: not Established: ${pending[*]}"; return 1; }
        sleep 0.3
    done
    OK_KAPI_LIST_PATHS=("${paths[@]}")
    ok_log "crds: ${#names[@]} CRDs (${#paths[@]} served versions) applied in $((t1 - t0)) s, Established after $((SECONDS - t1)) s"
}

# ok_kapi_warm -> LIST every served version until 200: the first request to a new CR resource
# gets 429 "storage is (re)initializing" while its watch cache starts (kube-rs does not retry it)
ok_kapi_warm() {
    local p c end=$((SECONDS + 90))
    for p in "${OK_KAPI_LIST_PATHS[@]}"; do
        until [ "$(ok_kapi_code GET "$p?limit=1")" = 200 ]; do
            [ "$SECONDS" -lt "$end" ] || { ok_log "crds: $p not listable: $(ok_kapi_code GET "$p?limit=1")"; return 1; }
            sleep 0.2
        done
    done
}

# ------------------------------------------------------------------------ CAPI webhooks
# ok_kapi_webhooks -> register CAPI's own admission webhooks (config/webhook/manifests.yaml of
# the module) by URL on 127.0.0.1 with our CA: every namespace, failurePolicy Fail as shipped
ok_kapi_webhooks() {
    local capi
    capi=$(ok_kapi_moddir "$CAPI_MODULE") || return 1
    python3 - "$capi/config/webhook/manifests.yaml" "https://127.0.0.1:$OK_KAPI_WH_PORT" \
        "$(base64 -w0 "$OK_KAPI_PKI/ca.crt")" "$OK_KAPI_DIR/webhooks" <<'PY' || return 1
# line-based rewrite (the file's layout is fixed, no YAML library needed): service refs
# become url + caBundle; the two configurations get our own names
import sys
src, base, ca, out = sys.argv[1:]
docs, cur = [], []
for line in open(src):
    if line.rstrip() == "---":
        if any(l.strip() for l in cur):
            docs.append(cur)
        cur = []
        continue
    cur.append(line.rstrip("\n"))
if any(l.strip() for l in cur):
    docs.append(cur)
for i, doc in enumerate(docs):
    res, skip = [], False
    for l in doc:
        if l == "  name: mutating-webhook-configuration":
            l = "  name: openkeel-capi-mutating"
        elif l == "  name: validating-webhook-configuration":
            l = "  name: openkeel-capi-validating"
        if l == "    service:":
            continue
        if l.startswith("      name: ") or l.startswith("      namespace: "):
            continue
        if l.startswith("      path: "):
            res.append("    url: " + base + l.split(": ", 1)[1])
            res.append("    caBundle: " + ca)
            continue
        res.append(l)
    open("%s-%d.yaml" % (out, i), "w").write("\n".join(res) + "\n")
PY
    local f kind name
    for f in "$OK_KAPI_DIR"/webhooks-*.yaml; do
        kind=$(awk '/^kind:/ { print tolower($2) "s"; exit }' "$f")
        name=$(awk '/^  name: openkeel-capi-/ { print $2; exit }' "$f")
        ok_kapi_api PATCH "/apis/admissionregistration.k8s.io/v1/$kind/$name?fieldManager=$OK_KAPI_MANAGER&force=true" \
            -H 'Content-Type: application/apply-patch+yaml' --data-binary "@$f" >/dev/null ||
            { ok_log "webhooks: registering $f failed"; return 1; }
    done
}
ok_kapi_unregister_webhooks() {
    local w
    for w in "${OK_KAPI_WEBHOOKS[@]}"; do
        ok_kapi_api DELETE "/apis/admissionregistration.k8s.io/v1/$w" >/dev/null 2>&1 || true
    done
}

# the webhooks answer: CAPI's validation rejects a Cluster with an invalid version (422), and a
# v1beta1 KubeadmConfigTemplate and ClusterResourceSet are converted (dry-run creates, 201)
ok_kapi_admission_ok() {
    [ "$(ok_kapi_code POST "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters?dryRun=All" \
        -H 'Content-Type: application/json' \
        -d '{"apiVersion":"cluster.x-k8s.io/v1beta2","kind":"Cluster","metadata":{"name":"probe"},"spec":{"topology":{"classRef":{"name":"x"},"version":"banana"}}}')" = 422 ]
}
ok_kapi_conversion_ok() {
    [ "$(ok_kapi_code POST "/apis/bootstrap.cluster.x-k8s.io/v1beta1/namespaces/default/kubeadmconfigtemplates?dryRun=All" \
        -H 'Content-Type: application/json' \
        -d '{"apiVersion":"bootstrap.cluster.x-k8s.io/v1beta1","kind":"KubeadmConfigTemplate","metadata":{"name":"probe"},"spec":{"template":{"spec":{"joinConfiguration":{"nodeRegistration":{"kubeletExtraArgs":{"v":"2"}}}}}}}')" = 201 ] &&
        [ "$(ok_kapi_code POST "/apis/addons.cluster.x-k8s.io/v1beta1/namespaces/default/clusterresourcesets?dryRun=All" \
            -H 'Content-Type: application/json' \
            -d '{"apiVersion":"addons.cluster.x-k8s.io/v1beta1","kind":"ClusterResourceSet","metadata":{"name":"probe"},"spec":{"clusterSelector":{"matchLabels":{"a":"b"}},"resources":[{"name":"s","kind":"Secret"}]}}')" = 201 ]
}

# ------------------------------------------------------------------------ start / stop
ok_kapi_all_running() {
    local p
    for p in etcd kube-apiserver kubeadm-convert capi-manager; do ok_kapi_running "$p" || return 1; done
}

ok_kapi_start() {
    local p
    mkdir -p "$OK_KAPI_DIR"
    ok_helm_build || return 1
    ln -sfn "$OK_HELM_BIN" "$OK_KAPI_HELM"
    for p in etcd kube-apiserver kubeadm-convert capi-manager; do
        ok_clear_stale "$p" "$(ok_kapi_pidfile "$p")" "$p" "$OK_KAPI_DIR"
    done
    if ok_kapi_all_running; then
        ok_kapi_readyz || ok_die "kube-apiserver (pid $(ok_pid_of "$(ok_kapi_pidfile kube-apiserver)")) runs but is not ready; tests/services/kapi.sh stop stops it"
        [ -s "$OK_KAPI_KUBECONFIG" ] || ok_kapi_write_kubeconfig
        ok_log "already running ($OK_KAPI_URL, kubeconfig $OK_KAPI_KUBECONFIG)"
        return 10
    fi
    # half-started leftovers (ours only)
    ok_kapi_stop_all
    local port
    for port in "$OK_KAPI_PORT:OPENKEEL_TEST_KAPI_PORT" "$OK_KAPI_ETCD_PORT:OPENKEEL_TEST_KAPI_ETCD_PORT" \
        "$OK_KAPI_PEER_PORT:OPENKEEL_TEST_KAPI_PEER_PORT" "$OK_KAPI_WH_PORT:OPENKEEL_TEST_KAPI_WEBHOOK_PORT" \
        "$OK_KAPI_HEALTH_PORT:OPENKEEL_TEST_KAPI_HEALTH_PORT" "$OK_KAPI_DIAG_PORT:OPENKEEL_TEST_KAPI_DIAGNOSTICS_PORT" \
        "$OK_KAPI_CONV_PORT:OPENKEEL_TEST_KAPI_CONVERT_PORT"; do
        ok_require_free_port "${port%%:*}" "kapi" "${port#*:}"
    done
    ok_kapi_build || return 1
    mkdir -p "$OK_KAPI_DIR"
    chmod 700 "$OK_KAPI_DIR"
    ok_kapi_pki || return 1
    local t0=$SECONDS
    # a fresh, empty cluster every start
    rm -rf "$OK_KAPI_DIR/etcd"
    ok_kapi_spawn etcd "$OK_KAPI_DIR/etcd.log" --name openkeel-kapi --data-dir "$OK_KAPI_DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$OK_KAPI_ETCD_PORT" \
        --advertise-client-urls "http://127.0.0.1:$OK_KAPI_ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$OK_KAPI_PEER_PORT" \
        --initial-advertise-peer-urls "http://127.0.0.1:$OK_KAPI_PEER_PORT" \
        --initial-cluster "openkeel-kapi=http://127.0.0.1:$OK_KAPI_PEER_PORT" \
        --unsafe-no-fsync --snapshot-count 10000 --log-level warn || return 1
    ok_kapi_wait_for 60 etcd "$OK_KAPI_DIR/etcd.log" ok_etcd_healthy || return 1
    ok_kapi_spawn kube-apiserver "$OK_KAPI_DIR/kube-apiserver.log" \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$OK_KAPI_PORT" \
        --endpoint-reconciler-type=none \
        --etcd-servers="http://127.0.0.1:$OK_KAPI_ETCD_PORT" \
        --tls-cert-file="$OK_KAPI_PKI/apiserver.crt" --tls-private-key-file="$OK_KAPI_PKI/apiserver.key" \
        --client-ca-file="$OK_KAPI_PKI/ca.crt" --token-auth-file="$OK_KAPI_PKI/tokens.csv" \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-account-key-file="$OK_KAPI_PKI/sa.pub" \
        --service-account-signing-key-file="$OK_KAPI_PKI/sa.key" \
        --service-cluster-ip-range=10.0.0.0/24 \
        --authorization-mode=RBAC --profiling=false || return 1
    ok_kapi_wait_for 120 kube-apiserver "$OK_KAPI_DIR/kube-apiserver.log" ok_kapi_readyz || return 1
    ok_log "etcd and kube-apiserver ready in $((SECONDS - t0)) s ($OK_KAPI_URL)"
    ok_kapi_write_kubeconfig
    ok_kapi_crds || return 1

    # the conversion webhook of the kubeadm groups, then the CAPI manager (its controllers
    # need the CRDs), then CAPI's admission webhooks
    ok_kapi_spawn kubeadm-convert "$OK_KAPI_DIR/kubeadm-convert.log" \
        --listen "127.0.0.1:$OK_KAPI_CONV_PORT" --kubeconfig "$OK_KAPI_KUBECONFIG" \
        --tls-cert "$OK_KAPI_PKI/webhook.crt" --tls-key "$OK_KAPI_PKI/webhook.key" || return 1
    ok_kapi_spawn capi-manager "$OK_KAPI_DIR/capi-manager.log" \
        --kubeconfig="$OK_KAPI_KUBECONFIG" \
        --feature-gates=ClusterTopology=true,MachinePool=false --leader-elect=false \
        --diagnostics-address="127.0.0.1:$OK_KAPI_DIAG_PORT" --insecure-diagnostics \
        --health-addr="127.0.0.1:$OK_KAPI_HEALTH_PORT" \
        --webhook-port="$OK_KAPI_WH_PORT" --webhook-cert-dir="$OK_KAPI_PKI/webhook-certs" || return 1
    ok_kapi_wait_for 60 kubeadm-convert "$OK_KAPI_DIR/kubeadm-convert.log" \
        curl -fsS --max-time 5 --cacert "$OK_KAPI_PKI/ca.crt" "https://127.0.0.1:$OK_KAPI_CONV_PORT/healthz" || return 1
    ok_kapi_wait_for 120 capi-manager "$OK_KAPI_DIR/capi-manager.log" \
        curl -fsS --max-time 5 "http://127.0.0.1:$OK_KAPI_HEALTH_PORT/readyz" || return 1
    ok_kapi_webhooks || return 1
    ok_kapi_wait_for 60 capi-manager "$OK_KAPI_DIR/capi-manager.log" ok_kapi_admission_ok || return 1
    ok_kapi_wait_for 60 capi-manager "$OK_KAPI_DIR/capi-manager.log" ok_kapi_conversion_ok || return 1
    ok_kapi_warm || return 1
    ok_log "ready in $((SECONDS - t0)) s: $OK_KAPI_URL, CAPI manager (all namespaces, webhooks and conversion on 127.0.0.1); kubeconfig $OK_KAPI_KUBECONFIG"
}

ok_kapi_stop_all() {
    if ok_kapi_running kube-apiserver && [ -s "$OK_KAPI_PKI/tokens.csv" ]; then
        # with failurePolicy Fail and no manager, every CAPI write would fail
        ok_kapi_unregister_webhooks
    fi
    local p
    for p in capi-manager kubeadm-convert kube-apiserver etcd; do
        ok_clear_stale "$p" "$(ok_kapi_pidfile "$p")" "$p" "$OK_KAPI_DIR"
        if ok_kapi_running "$p"; then
            ok_stop_pid "$p" "$(ok_kapi_pidfile "$p")" 20
        fi
        rm -f "$(ok_kapi_pidfile "$p")" "$(ok_kapi_pidfile "$p").by-run"
    done
}

ok_kapi_env_line() {
    printf 'export OPENKEEL_TEST_KUBECONFIG=%q OPENKEEL_TEST_HELM=%q\n' "$OK_KAPI_KUBECONFIG" "$OK_KAPI_HELM"
}

case "${1:-}" in
    build)
        ok_kapi_build || ok_die "build failed (log: $OK_LOGS/kapi-build.log)"
        ok_helm_build || ok_die "helm build failed (log: $OK_LOGS/helm-build.log)"
        echo "$OK_KAPI_BIN"
        ;;
    build-helm)
        ok_helm_build || ok_die "helm build failed (log: $OK_LOGS/helm-build.log)"
        echo "$OK_HELM_BIN"
        ;;
    start)
        mkdir -p "$OK_HOME" "$OK_PIDS" "$OK_LOGS" "$OK_KAPI_DIR"
        # its own lock (not $OK_HOME/lock, which a tests/run.sh holds while it sets up)
        exec {klock}>"$OK_KAPI_DIR/lock"
        flock -w 3600 "$klock" || ok_die "could not lock $OK_KAPI_DIR/lock"
        ok_sub ok_kapi_start
        flock -u "$klock"
        case $OK_SUB_RC in 0 | 10) ;; *) exit "$OK_SUB_RC" ;; esac
        ok_kapi_env_line
        exit "$OK_SUB_RC"
        ;;
    stop)
        [ -d "$OK_KAPI_DIR" ] || exit 0
        exec {klock}>"$OK_KAPI_DIR/lock"
        flock -w 600 "$klock" || ok_die "could not lock $OK_KAPI_DIR/lock"
        ok_kapi_stop_all
        ;;
    env)
        if ok_kapi_running kube-apiserver && ok_kapi_running capi-manager && [ -s "$OK_KAPI_KUBECONFIG" ] && [ -x "$OK_KAPI_HELM" ]; then
            ok_kapi_env_line
        else
            ok_warn "the Kubernetes API (kapi) of $OK_HOME is not running (tests/services/kapi.sh start starts it)"
        fi
        ;;
    status)
        for p in etcd kube-apiserver kubeadm-convert capi-manager; do
            if ok_kapi_running "$p"; then
                ok_log "$p: running, pid $(ok_pid_of "$(ok_kapi_pidfile "$p")"), log $OK_KAPI_DIR/$p.log"
            else
                ok_log "$p: not running"
            fi
        done
        ;;
    *) ok_die "usage: kapi.sh build|build-helm|start|stop|env|status" ;;
esac
