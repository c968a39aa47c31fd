#!/usr/bin/env python3
"""Slow dependencies drill (issue 16): Keystone and the broker answering after 30 s, or never.

    tests/drills/slow.py [--delay 30] [--requests 4]

openkeel-api runs with `auth_strategy = keystone`, its `[keystone_authtoken]` pointing at a
stalling TCP proxy in front of the test Keystone (OPENKEEL_TEST_KEYSTONE_URL, only read: the
proxy stalls, Keystone itself is untouched; the proxy also puts itself in place of Keystone's
address in the answers, so the catalogue's identity endpoint, where tokens are validated, is
the proxy too) and its `transport_url` at a second proxy in front
of the RabbitMQ of OPENKEEL_TEST_RABBIT_URL (the drills' private one); openkeel-conductor
talks to both directly. Each proxy can pass bytes, hold every byte for DELAY seconds (an
answer after 30 s) or hold them for ever (no answer) — new and already open connections
alike. For each dependency and mode the drill sends a few requests that need it (fresh tokens
the API has not cached; RPC calls and casts) and records each answer's status and time, then
switches the proxy back to pass and measures how long until the API answers 2xx again.

Must hold: every request answered (client timeout 150 s): 2xx, 503 or another Magnum error
body, never a 500 with a foreign body and never a hung connection; after recovery 2xx
again within 10 s. Prints JSON figures; exit status 1 when a must-hold fails.
"""

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import drill  # noqa: E402


class StallingProxy:
    """A TCP proxy on 127.0.0.1 whose mode is "pass", ("delay", seconds) or "stall".

    With `rewrite_upstream` it also stands in for the upstream's address in what the upstream
    sends back: every `127.0.0.1:<upstream port>` becomes `127.0.0.1:<proxy port>` (the same
    length, so no HTTP length changes). For Keystone this puts the proxy in the service
    catalogue too, where the API finds the identity endpoint it validates tokens at, as a
    load balancer in front of Keystone would be."""

    def __init__(self, upstream_host, upstream_port, rewrite_upstream=False):
        self.up = (upstream_host, upstream_port)
        self.rewrite = None
        self.mode = "pass"
        self.cond = threading.Condition()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        if rewrite_upstream:
            self.rewrite = (("127.0.0.1:%d" % upstream_port).encode(),
                            ("127.0.0.1:%d" % self.port).encode())
            if len(self.rewrite[0]) != len(self.rewrite[1]):
                self.sock.close()
                raise RuntimeError("the proxy's port %d is not as long as the upstream's %d"
                                   % (self.port, upstream_port))
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def set(self, mode):
        with self.cond:
            self.mode = mode
            self.cond.notify_all()

    def _hold(self, received):
        """Wait until a chunk received at `received` may go on."""
        with self.cond:
            while not self.closed:
                m = self.mode
                if m == "pass":
                    return
                if m == "stall":
                    self.cond.wait(0.5)
                    continue
                left = received + m[1] - time.time()
                if left <= 0:
                    return
                self.cond.wait(min(left, 0.5))

    def _accept(self):
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(c,), daemon=True).start()

    def _serve(self, client):
        t = time.time()
        self._hold(t)
        try:
            upstream = socket.create_connection(self.up, 10)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        for a, b, rw in ((client, upstream, None), (upstream, client, self.rewrite)):
            threading.Thread(target=self._pipe, args=(a, b, rw), daemon=True).start()

    def _pipe(self, src, dst, rewrite=None):
        held = b""  # a tail that may be the start of rewrite[0], cut by a recv
        try:
            while True:
                if held and not select.select([src], [], [], 0.05)[0]:
                    dst.sendall(held)
                    held = b""
                data = src.recv(65536)
                if not data:
                    if held:
                        dst.sendall(held)
                    break
                self._hold(time.time())
                if rewrite:
                    old, new = rewrite
                    data = (held + data).replace(old, new)
                    keep = next((k for k in range(min(len(old) - 1, len(data)), 0, -1)
                                 if data.endswith(old[:k])), 0)
                    held = data[len(data) - keep:] if keep else b""
                    data = data[:len(data) - keep]
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def close(self):
        self.closed = True
        self.set("pass")
        self.sock.close()


def keystone_token(auth_url, user):
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user["name"], "domain": {"id": "default"}, "password": user["password"]}}},
        "scope": {"project": {"id": user["project_id"]}}}}
    req = urllib.request.Request(auth_url + "/auth/tokens", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.headers["X-Subject-Token"]


def burst(n, fn):
    """Run fn(i) on n threads at once; their results in order."""
    out = [None] * n

    def one(i):
        out[i] = fn(i)
    ts = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def acceptable(status, text):
    """Answered, and not a 5xx other than 503 (keystonemiddleware's and Magnum's answer for
    a dependency that is away)."""
    return status is not None and (status < 500 or status == 503)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delay", type=float, default=30)
    ap.add_argument("--stall", type=float, default=45,
                    help="seconds the 'never' mode lasts before the proxy passes again")
    ap.add_argument("--requests", type=int, default=4)
    ap.add_argument("--bin", default=os.path.join(os.environ.get(
        "CARGO_TARGET_DIR", os.path.join(drill.ROOT, "target")), "debug"))
    ap.add_argument("--out")
    args = ap.parse_args()
    for v in ("OPENKEEL_TEST_MYSQL_URL", "OPENKEEL_TEST_RABBIT_URL",
              "OPENKEEL_TEST_KEYSTONE_URL", "OPENKEEL_TEST_KEYSTONE_ACCOUNTS"):
        if not os.environ.get(v):
            sys.exit("%s is not set (the drills' services and the test Keystone)" % v)
    accounts = json.load(open(os.environ["OPENKEEL_TEST_KEYSTONE_ACCOUNTS"]))
    ks_url = os.environ["OPENKEEL_TEST_KEYSTONE_URL"].rstrip("/")
    ks = urllib.parse.urlparse(ks_url)
    rb = urllib.parse.urlparse(os.environ["OPENKEEL_TEST_RABBIT_URL"])
    ks_proxy = None
    while ks_proxy is None:  # a port as long as Keystone's, for the catalogue's rewrite
        try:
            ks_proxy = StallingProxy(ks.hostname, ks.port, rewrite_upstream=True)
        except RuntimeError:
            pass
    mq_proxy = StallingProxy(rb.hostname, rb.port)
    ks_via = "http://127.0.0.1:%d%s" % (ks_proxy.port, ks.path)
    mq_via = "amqp://%s@127.0.0.1:%d%s" % (rb.netloc.rsplit("@", 1)[0], mq_proxy.port, rb.path)
    magnum = accounts["users"]["magnum"]
    demo = dict(accounts["users"]["demo"], name="demo")

    def authtoken(url):
        return ("[keystone_authtoken]\nwww_authenticate_uri = %s\nauth_url = %s\n"
                "auth_type = password\nusername = magnum\npassword = %s\n"
                "project_name = service\nuser_domain_name = Default\n"
                "project_domain_name = Default\n") % (url, url, magnum["password"])

    out = args.out or tempfile.mkdtemp(prefix="okdrill-slow-")
    os.makedirs(out, exist_ok=True)
    drill.log("output in %s" % out)
    dep = drill.Deployment(out, args.bin, auth="keystone")
    results = {"drill": "slow", "build": os.path.basename(os.path.normpath(args.bin)),
               "delay_s": args.delay, "phases": []}
    must = {}
    try:
        dep.setup(api_transport=mq_via, api_extra=authtoken(ks_via),
                  conductor_extra=authtoken(ks_url))
        tokens = [keystone_token(ks_url, demo) for _ in range(8 * args.requests + 10)]
        drill.log("%d demo tokens" % len(tokens))
        nxt = iter(tokens)
        t0 = tokens[0]
        st, text, _ = drill.request(dep.port, "POST", "/v1/clustertemplates", {
            "name": "slow", "image_id": "ubuntu-jammy", "external_network_id": "public",
            "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small",
            "public": False}, token=t0)
        if st != 201:
            raise RuntimeError("template: %s %s" % (st, text))
        tmpl = json.loads(text)["uuid"]
        st, text, _ = drill.request(dep.port, "POST", "/v1/clusters", {
            "name": "slow0", "cluster_template_id": tmpl, "node_count": 1}, token=t0)
        if st != 202:
            raise RuntimeError("cluster: %s %s" % (st, text))
        cluster = json.loads(text)["uuid"]
        for _ in range(120):
            if dep.sql("SELECT status FROM cluster WHERE uuid=%s", (cluster,))[0][0] == \
                    "CREATE_COMPLETE":
                break
            time.sleep(1)
        next(nxt)

        def keystone_req(i):
            return drill.request(dep.port, "GET", "/v1/clusters", timeout=150, token=next(nxt))

        def call_req(i):  # an RPC call (get_ca_certificate), cached token
            return drill.request(dep.port, "GET", "/v1/certificates/%s" % cluster,
                                 timeout=150, token=t0)

        def cast_req(i):  # an RPC cast (cluster_create)
            return drill.request(dep.port, "POST", "/v1/clusters", {
                "name": "slowc%d-%d" % (i, int(time.time())), "cluster_template_id": tmpl,
                "node_count": 1}, timeout=150, token=t0)

        def recover(fn):
            t = time.time()
            while time.time() - t < 60:
                st, text, _ = fn(0)
                if st is not None and st < 300:
                    return round(time.time() - t, 2)
                time.sleep(0.5)
            return None

        for dep_name, proxy, kinds in (("keystone", ks_proxy, [("GET /v1/clusters, new token",
                                                                  keystone_req)]),
                                       ("broker", mq_proxy, [("GET certificates (call)",
                                                              call_req),
                                                             ("POST /v1/clusters (cast)",
                                                              cast_req)])):
            for mode in (("delay", args.delay), "stall"):
                proxy.set(mode)
                phase_start = time.time()
                for label, fn in kinds:
                    answers = burst(args.requests, fn)
                    figs = [{"status": st, "seconds": round(s, 1),
                             "body": (text or "")[:200]} for st, text, s in answers]
                    ok = all(acceptable(st, text) for st, text, _ in answers)
                    results["phases"].append({"dependency": dep_name, "mode": str(mode),
                                              "request": label, "answers": figs, "ok": ok})
                    must["%s %s: %s answered, no 500" % (dep_name, mode, label)] = ok
                    drill.log("%s %s %s: %s" % (dep_name, mode, label,
                                                [(f["status"], f["seconds"]) for f in figs]))
                if mode == "stall":
                    # stay stalled for --stall seconds in all
                    time.sleep(max(0.0, args.stall - (time.time() - phase_start)))
                proxy.set("pass")
                for label, fn in kinds:
                    r = recover(fn)
                    results["phases"].append({"dependency": dep_name, "mode": str(mode),
                                              "request": label, "recovered_after_s": r})
                    must["%s after %s: %s 2xx within 10 s" % (dep_name, mode, label)] = \
                        r is not None and r <= 10
                    drill.log("%s back after %s: %s 2xx after %s s" % (dep_name, mode, label, r))
        results["processes_alive"] = dep.alive()
        must["processes alive"] = all(dep.alive().values())
    finally:
        dep.stop()
        ks_proxy.close()
        mq_proxy.close()
        dep.drop()
    found, n = drill.audit_logs(dep.log_files, [magnum["password"], demo["password"]] +
                                tokens, "")
    results["log_audit"] = {"lines": n, "findings": found[:20]}
    must["log audit clean"] = not found
    results["must"] = must
    results["output"] = out
    print(json.dumps(results, indent=1))
    for k, v in must.items():
        drill.log("%s %s" % ("ok  " if v else "FAIL", k))
    sys.exit(0 if all(must.values()) else 1)


if __name__ == "__main__":
    main()
