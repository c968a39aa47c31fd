# shellcheck shell=bash
# Go for the gophercloud acceptance tests (crates/cli/tests/gophercloud.rs). Sourced by
# tests/services/lib.sh; ok_go prints the path of a usable `go` (>= 1.21, so that
# GOTOOLCHAIN=auto can fetch the Go version gophercloud's go.mod asks for from the Go module
# proxy, as the golang.org/toolchain module).
#
# Looked for: $OPENKEEL_TEST_GO, `go` on the PATH, /usr/local/go/bin/go, Debian's
# /usr/lib/go-1.2*/bin/go. When none is found and we are root on Debian 12 with
# CI=true (or OPENKEEL_TEST_INSTALL_GO=1), golang-1.23-go is installed from
# bookworm-backports (the list file is added for that and removed again).

ok_go_ok() { # ok_go_ok GO -> its version is >= 1.21
    local v
    v=$("$1" env GOVERSION 2>/dev/null) || return 1
    v=${v#go}
    local major=${v%%.*} rest=${v#*.}
    local minor=${rest%%[!0-9]*}
    [ "${major:-0}" -gt 1 ] || { [ "${major:-0}" = 1 ] && [ "${minor:-0}" -ge 21 ]; }
}

ok_go_find() {
    local g
    for g in "${OPENKEEL_TEST_GO:-}" "$(command -v go 2>/dev/null || true)" /usr/local/go/bin/go /usr/lib/go-1.2*/bin/go; do
        [ -n "$g" ] && [ -x "$g" ] && ok_go_ok "$g" && { echo "$g"; return 0; }
    done
    return 1
}

ok_go() {
    local g
    if g=$(ok_go_find); then echo "$g"; return 0; fi
    if ! ok_in_ci && [ "${OPENKEEL_TEST_INSTALL_GO:-0}" != 1 ]; then
        return 1
    fi
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 || return 1
    grep -q 'VERSION_CODENAME=bookworm' /etc/os-release 2>/dev/null || return 1
    local list=/etc/apt/sources.list.d/openkeel-test-backports.list
    echo "deb http://deb.debian.org/debian bookworm-backports main" >"$list"
    ok_log "go: installing golang-1.23-go from bookworm-backports (log: $OK_LOGS/apt.log)"
    {
        apt-get -y -q -o DPkg::Lock::Timeout=600 update &&
            DEBIAN_FRONTEND=noninteractive apt-get -y -q -o DPkg::Lock::Timeout=600 \
                install --no-install-recommends -t bookworm-backports golang-1.23-go
    } >>"$OK_LOGS/apt.log" 2>&1 || true
    rm -f "$list"
    ok_go_find
}
