#!/usr/bin/env bash
# OpenKeel's test command (the README's, and CI's through .ci/run):
#
#   tests/run.sh [CARGO TEST ARGS...]      e.g. tests/run.sh -p openkeel-db -- --nocapture
#
#  1. installs what is missing: Debian mariadb-server mariadb-client rabbitmq-server buildah
#     debootstrap
#     (noninteractive, no service auto-start) and the Python venv
#     $OPENKEEL_TEST_HOME/venv with tests/python/requirements.txt (rebuilt only when the
#     requirements change);
#  2. starts MariaDB (127.0.0.1:23306), RabbitMQ (127.0.0.1:25682) and Keystone 30.0.0
#     (127.0.0.1:25000, tests/services/keystone.sh, its own venv) with private data
#     under $OPENKEEL_TEST_HOME (default /var/tmp/openkeel-test), or reuses the ones of
#     that home that already run, and creates the users openkeel/openkeel;
#     starts the real Barbican 23.0.0 (tests/services/barbican.sh: own venv, 127.0.0.1:29311);
#     builds (cached in ~/.cache/openkeel-kapi, a cold build takes ~25 min on 2 cores) and starts
#     a real kube-apiserver + etcd with the Cluster API core manager and the CAPI/CAPO CRDs
#     (tests/services/kapi.sh, 127.0.0.1:26443), before cargo builds anything;
#  3. exports OPENKEEL_TEST_MYSQL_URL, OPENKEEL_TEST_RABBIT_URL, OPENKEEL_TEST_VENV,
#     OPENKEEL_TEST_BARBICAN_URL, OPENKEEL_TEST_KUBECONFIG and runs
#     cargo fmt --check, cargo clippy -D warnings and cargo test --workspace (extra
#     arguments go to cargo test; with -p/--package they replace --workspace);
#  4. on a whole-workspace run, builds the container images (deploy/images, buildah, a Debian
#     base from debootstrap) with the programs the tests built and runs kolla's start path in
#     them (tests/image/ci.sh);
#  5. stops on exit what it started (nothing else), unless OPENKEEL_TEST_KEEP_SERVICES=1.
#
# With CI=true (.ci/run) every service is mandatory: one that cannot be installed or
# started fails the run at once. Elsewhere it is a loud warning and the tests that need it
# skip. Other knobs: OPENKEEL_TEST_SKIP_SERVICES=1, OPENKEEL_TEST_SKIP_LINT=1,
# OPENKEEL_TEST_SKIP_KAPI=1 (no Kubernetes API: saves the cold Go build; none of them in CI),
# the ports in tests/services/lib.sh, CARGO_TERM_COLOR. See docs/testing.md.
set -euo pipefail
OK_PROG=run.sh
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. tests/services/lib.sh

export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-auto}"
export RUST_BACKTRACE="${RUST_BACKTRACE:-1}"
KEEP="${OPENKEEL_TEST_KEEP_SERVICES:-0}"
T0=$SECONDS

# ------------------------------------------------------------------ phases + summary
PHASE_NAMES=() PHASE_SECS=() PHASE_RESULTS=()
FAILED=()
record() { PHASE_NAMES+=("$1"); PHASE_SECS+=("$2"); PHASE_RESULTS+=("$3"); }

# phase NAME CMD... -> run CMD with a banner, record its time and result; returns its status
phase() {
    local name=$1 start=$SECONDS rc=0
    shift
    printf '\n==> %s: %s\n' "$name" "$*" >&2
    "$@" || rc=$?
    if [ "$rc" = 0 ]; then
        record "$name" $((SECONDS - start)) ok
    else
        record "$name" $((SECONDS - start)) "FAILED (exit $rc)"
        FAILED+=("$name")
    fi
    return "$rc"
}

summary() {
    local i
    printf '\n' >&2
    ok_log "---------------------------- summary ----------------------------"
    for i in "${!PHASE_NAMES[@]}"; do
        ok_log "$(printf '  %-10s %6ss  %s' "${PHASE_NAMES[$i]}" "${PHASE_SECS[$i]}" "${PHASE_RESULTS[$i]}")"
    done
    local result=ok
    if [ ${#FAILED[@]} -gt 0 ]; then
        result="FAILED: ${FAILED[*]}"
    elif [ "${1:-0}" != 0 ]; then
        result="FAILED (exit $1)"
    fi
    ok_log "$(printf '  %-10s %6ss  %s' total $((SECONDS - T0)) "$result")"
}

# a service that cannot be had: fatal in CI, a loud warning (and skipping tests) elsewhere
service_missing() {
    if ok_in_ci; then
        ok_die "CI=true: $1 is required and could not be set up; failing the run (see above)"
    fi
    ok_warn "$1 could not be set up: the tests that need it will SKIP (in CI this fails the run)"
}

# ------------------------------------------------------------------ cleanup on exit
REGISTERED=0
REUSED=""
BARBICAN_BY_RUN=0
KAPI_BY_RUN=0
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ "$REGISTERED" = 1 ]; then
        ok_lock
        ok_user_unregister
        local others
        others=$(ok_other_users | tr '\n' ' ' | sed 's/ *$//')
        local ours=()
        if [ -e "$OK_RPID.by-run" ] || [ -e "$OK_EPID.by-run" ]; then ours+=(rabbitmq); fi
        [ -e "$OK_MPID.by-run" ] && ours+=(mariadb)
        [ -e "$OK_KS_PID.by-run" ] && ours+=(keystone)
        if [ ${#ours[@]} = 0 ]; then
            [ "$REUSED" = "" ] || ok_log "${REUSED# } were already running before this run: left running (tests/services/stop.sh stops them)"
        else
            if [ "$KEEP" = 1 ]; then
                rm -f "$OK_MPID.by-run" "$OK_RPID.by-run" "$OK_EPID.by-run" "$OK_KS_PID.by-run"
                ok_log "OPENKEEL_TEST_KEEP_SERVICES=1: leaving ${ours[*]} running (tests/services/stop.sh stops them)"
            elif [ -n "$others" ]; then
                ok_log "leaving ${ours[*]} running for tests/run.sh pid $others (the last one stops them)"
            else
                local start=$SECONDS
                local res=ok
                if [ -e "$OK_RPID.by-run" ] || [ -e "$OK_EPID.by-run" ]; then
                    ok_sub ok_rabbit_stop
                    [ "$OK_SUB_RC" = 0 ] || res=FAILED
                fi
                if [ -e "$OK_KS_PID.by-run" ]; then
                    ok_sub ok_keystone_stop
                    [ "$OK_SUB_RC" = 0 ] || res=FAILED
                fi
                if [ -e "$OK_MPID.by-run" ]; then
                    ok_sub ok_mysql_stop
                    [ "$OK_SUB_RC" = 0 ] || res=FAILED
                fi
                record stop $((SECONDS - start)) "$res (${ours[*]})"
            fi
        fi
        ok_unlock
    fi
    if [ "$BARBICAN_BY_RUN" = 1 ] && [ "$KEEP" != 1 ] && [ -z "$(ok_other_users)" ]; then
        tests/services/barbican.sh stop || true
    fi
    if [ "$KAPI_BY_RUN" = 1 ] && [ "$KEEP" != 1 ] && [ -z "$(ok_other_users)" ]; then
        local kstart=$SECONDS
        if tests/services/kapi.sh stop; then
            record kapi-stop $((SECONDS - kstart)) ok
        else
            record kapi-stop $((SECONDS - kstart)) FAILED
        fi
    elif [ "$KAPI_BY_RUN" = 1 ]; then
        ok_log "leaving the Kubernetes API (kapi) running (tests/services/kapi.sh stop stops it)"
    fi
    [ "$rc" = 0 ] && [ ${#FAILED[@]} -gt 0 ] && rc=1
    summary "$rc"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ------------------------------------------------------------------ services
setup_services() {
    ok_lock
    ok_sub ok_prepare_home
    [ "$OK_SUB_RC" = 0 ] || ok_die "cannot use $OK_HOME as OPENKEEL_TEST_HOME"
    ok_user_register
    REGISTERED=1
    local start rc
    ok_log "test home $OK_HOME: MariaDB 127.0.0.1:$OK_MYSQL_PORT, RabbitMQ 127.0.0.1:$OK_RABBIT_PORT ($OK_RABBIT_NODE, dist $OK_RABBIT_DIST_PORT, epmd $OK_EPMD_PORT)"

    start=$SECONDS
    ok_sub ok_apt_install "${OK_APT_PACKAGES[@]}"
    if [ "$OK_SUB_RC" = 0 ]; then
        record packages $((SECONDS - start)) ok
    else
        record packages $((SECONDS - start)) FAILED
        service_missing "the Debian packages ${OK_APT_PACKAGES[*]}"
    fi

    start=$SECONDS
    ok_sub ok_venv
    if [ "$OK_SUB_RC" = 0 ]; then
        record venv $((SECONDS - start)) ok
        export OPENKEEL_TEST_VENV="$OK_VENV"
    else
        record venv $((SECONDS - start)) FAILED
        service_missing "the Python test venv"
    fi

    start=$SECONDS
    ok_sub ok_mysql_start
    rc=$OK_SUB_RC
    # whatever this run started (even if it then failed to come up) is this run's to stop
    [ "$rc" != 10 ] && [ -e "$OK_MPID" ] && touch "$OK_MPID.by-run"
    if [ "$rc" = 0 ] || [ "$rc" = 10 ]; then
        record mariadb $((SECONDS - start)) "$([ "$rc" = 0 ] && echo started || echo reused)"
        [ "$rc" = 10 ] && [ ! -e "$OK_MPID.by-run" ] && REUSED="$REUSED mariadb"
        export OPENKEEL_TEST_MYSQL_URL="$OK_MYSQL_URL"
    else
        record mariadb $((SECONDS - start)) FAILED
        service_missing "MariaDB"
    fi

    start=$SECONDS
    local epmd_before=0
    [ -e "$OK_EPID" ] && epmd_before=1
    ok_sub ok_rabbit_start
    rc=$OK_SUB_RC
    [ "$rc" != 10 ] && [ -e "$OK_RPID" ] && touch "$OK_RPID.by-run"
    [ "$epmd_before" = 0 ] && [ -e "$OK_EPID" ] && touch "$OK_EPID.by-run"
    if [ "$rc" = 0 ] || [ "$rc" = 10 ]; then
        record rabbitmq $((SECONDS - start)) "$([ "$rc" = 0 ] && echo started || echo reused)"
        [ "$rc" = 10 ] && [ ! -e "$OK_RPID.by-run" ] && REUSED="$REUSED rabbitmq"
        export OPENKEEL_TEST_RABBIT_URL="$OK_RABBIT_URL"
        export OPENKEEL_TEST_RABBIT_TLS_URL="$OK_RABBIT_TLS_URL" OPENKEEL_TEST_RABBIT_TLS_DIR="$OK_RABBIT_TLS_DIR"
    else
        record rabbitmq $((SECONDS - start)) FAILED
        service_missing "RabbitMQ"
    fi

    start=$SECONDS
    ok_sub ok_keystone_start
    rc=$OK_SUB_RC
    [ "$rc" != 10 ] && [ -e "$OK_KS_PID" ] && touch "$OK_KS_PID.by-run"
    if [ "$rc" = 0 ] || [ "$rc" = 10 ]; then
        record keystone $((SECONDS - start)) "$([ "$rc" = 0 ] && echo started || echo reused)"
        [ "$rc" = 10 ] && [ ! -e "$OK_KS_PID.by-run" ] && REUSED="$REUSED keystone"
        export OPENKEEL_TEST_KEYSTONE_URL="$OK_KS_URL"
        export OPENKEEL_TEST_KEYSTONE_ACCOUNTS="$OK_KS_ACCOUNTS"
        export OPENKEEL_TEST_KEYSTONE_CLOUDS="$OK_KS_CLOUDS"
    else
        record keystone $((SECONDS - start)) FAILED
        service_missing "Keystone"
    fi

    start=$SECONDS
    local go
    if go=$(ok_go); then
        record go $((SECONDS - start)) "ok ($go)"
        export OPENKEEL_TEST_GO="$go"
    else
        record go $((SECONDS - start)) FAILED
        service_missing "Go >= 1.21 (the gophercloud acceptance tests)"
    fi
    ok_unlock

    # the real Barbican (cert_manager_type = barbican tests); its own venv and lock-free
    start=$SECONDS
    local bout
    set +e
    bout=$(tests/services/barbican.sh start)
    rc=$?
    set -e
    if [ "$rc" = 0 ] || [ "$rc" = 10 ]; then
        record barbican $((SECONDS - start)) "$([ "$rc" = 0 ] && echo started || echo reused)"
        [ "$rc" = 0 ] && BARBICAN_BY_RUN=1
        eval "$bout"
    else
        record barbican $((SECONDS - start)) FAILED
        unset OPENKEEL_TEST_BARBICAN_URL
        service_missing "Barbican"
    fi

    # the real Kubernetes API with Cluster API (the Cluster API driver's tests). Its Go build
    # (cached; cold about 25 min on 2 cores) runs here, before cargo builds anything, so the two
    # tool chains never compete for the cores
    if [ "${OPENKEEL_TEST_SKIP_KAPI:-0}" = 1 ]; then
        ok_in_ci && ok_die "OPENKEEL_TEST_SKIP_KAPI=1 is not allowed in CI"
        ok_warn "OPENKEEL_TEST_SKIP_KAPI=1: no Kubernetes API; the Cluster API driver's tests will SKIP"
        unset OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM
    else
        start=$SECONDS
        if tests/services/kapi.sh build >/dev/null; then
            record kapi-build $((SECONDS - start)) ok
            start=$SECONDS
            local kout
            set +e
            kout=$(tests/services/kapi.sh start)
            rc=$?
            set -e
            if [ "$rc" = 0 ] || [ "$rc" = 10 ]; then
                record kapi $((SECONDS - start)) "$([ "$rc" = 0 ] && echo started || echo reused)"
                [ "$rc" = 0 ] && KAPI_BY_RUN=1
                eval "$kout"
            else
                # whatever it started before failing is this run's to stop
                KAPI_BY_RUN=1
                record kapi $((SECONDS - start)) FAILED
                unset OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM
                service_missing "the Kubernetes API with Cluster API (tests/services/kapi.sh)"
            fi
        else
            record kapi-build $((SECONDS - start)) FAILED
            unset OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM
            service_missing "the Kubernetes API binaries (tests/services/kapi.sh build)"
        fi
    fi

    start=$SECONDS
    if tests/services/check.sh; then
        record check $((SECONDS - start)) ok
    else
        record check $((SECONDS - start)) FAILED
        service_missing "a working test environment (tests/services/check.sh)"
    fi
}

if [ "${OPENKEEL_TEST_SKIP_SERVICES:-0}" = 1 ]; then
    ok_in_ci && ok_die "OPENKEEL_TEST_SKIP_SERVICES=1 is not allowed in CI"
    ok_warn "OPENKEEL_TEST_SKIP_SERVICES=1: no services; the tests that need them will SKIP"
    unset OPENKEEL_TEST_MYSQL_URL OPENKEEL_TEST_RABBIT_URL OPENKEEL_TEST_VENV OPENKEEL_TEST_BARBICAN_URL \
        OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM OPENKEEL_TEST_KEYSTONE_URL OPENKEEL_TEST_KEYSTONE_ACCOUNTS OPENKEEL_TEST_KEYSTONE_CLOUDS
else
    setup_services
fi

# ------------------------------------------------------------------ cargo
printf '\n' >&2
ok_log "environment for the tests:"
for v in OPENKEEL_TEST_MYSQL_URL OPENKEEL_TEST_RABBIT_URL OPENKEEL_TEST_VENV OPENKEEL_TEST_KEYSTONE_URL OPENKEEL_TEST_GO OPENKEEL_TEST_BARBICAN_URL OPENKEEL_TEST_KUBECONFIG OPENKEEL_TEST_HELM CI; do
    ok_log "  $v=${!v:-(unset)}"
done

# extra arguments go to cargo test; a package selection replaces --workspace
test_args=()
select_pkgs=0
for a in "$@"; do
    [ "$a" = -- ] && break
    case $a in -p | -p* | --package | --package=* | --manifest-path | --manifest-path=*) select_pkgs=1 ;; esac
done
[ "$select_pkgs" = 1 ] || test_args+=(--workspace)
# every failing test binary is reported in one run, not only the first
test_args+=(--no-fail-fast)
test_args+=("$@")

for tool in fmt clippy; do
    if ! cargo "$tool" --version >/dev/null 2>&1; then
        ok_log "cargo $tool is missing: trying rustup component add"
        rustup component add "$([ $tool = fmt ] && echo rustfmt || echo clippy)" >&2 ||
            ok_warn "could not install cargo $tool"
    fi
done

if [ "${OPENKEEL_TEST_SKIP_LINT:-0}" = 1 ]; then
    ok_in_ci && ok_die "OPENKEEL_TEST_SKIP_LINT=1 is not allowed in CI"
    ok_warn "OPENKEEL_TEST_SKIP_LINT=1: skipping cargo fmt and cargo clippy"
else
    # rustfmt colours its diff even into a file: follow CARGO_TERM_COLOR / the terminal
    fmt_color=$CARGO_TERM_COLOR
    [ "$fmt_color" = auto ] && { [ -t 2 ] && [ -t 1 ] || fmt_color=never; }
    phase fmt cargo fmt --all -- --check --color "$fmt_color" || true
    phase clippy cargo clippy --workspace --all-targets -- -D warnings || true
fi
phase test cargo test "${test_args[@]}" || true
# the container images, built with the programs the tests just built, and kolla's start path
# inside them (tests/image/ci.sh); only on a whole-workspace run with the services
if [ "$select_pkgs" = 0 ] && [ "$#" = 0 ] && [ "${OPENKEEL_TEST_SKIP_SERVICES:-0}" != 1 ]; then
    phase image tests/image/ci.sh || true
fi
# cleanup (EXIT) stops what we started, prints the summary and sets the exit status
