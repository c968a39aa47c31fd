#!/usr/bin/env python3
"""HTTP fuzzer for OpenKeel's API (issue 16, "hostile input"): driven by bench/http_fuzz.sh.

Sends --requests requests (raw HTTP/1.1 over keep-alive sockets, so paths, headers and bodies
can be anything) across all 38 routes of docs/openapi.json and microversions 1.1-1.14 (and
invalid version headers), from a deterministic seed: valid and mutated bodies, odd paths and
percent-encoding, huge / unicode / NUL values, wrong content types, `_method`, duplicate query
parameters, bad JSON Patch documents, odd methods. It first seeds real ids (a template, clusters
and their nodegroups) so member routes are reached, not only 404s.

Checks each answer: no status >= 500, every 4xx body is Magnum's error envelope
(`{"errors": [{...}, ...]}`), no request hangs (client timeout), the connection is never
refused (the process is alive). Prints a JSON summary (sent, by status, requests/s, findings)
on stdout; exit 1 when there are findings.

    python3 bench/http_fuzz.py --base 127.0.0.1:9511 --requests 100000 --seed 1
"""
import argparse
import collections
import json
import random
import socket
import sys
import threading
import time
import urllib.parse

VERSIONS_VALID = [f"1.{i}" for i in range(1, 15)] + ["latest"]
VERSIONS_BAD = [
    "1.99", "2.0", "0.9", "abc", "1.1.1", "-1.0", "1.", ".1", "1.01", "01.1", "1.9999999999999999999",
    "99999999999999999999.1", "latest latest", "", " ", "1.\x001", "1.\u00e9", "LATEST", "1,1",
]
SERVICES = ["container-infra", "container-infrastructure-management", "magnum", "compute", ""]

CONTENT_TYPES = [
    "application/json", "application/json", "application/json", "application/json-patch+json",
    "text/plain", "", None, "application/json; charset=latin1", "application/json; charset=utf-16",
    "multipart/form-data; boundary=x", "application/x-www-form-urlencoded", "application/xml",
    "*/*", "application/json;;;", "\u00e9/\u00e9",
]
ACCEPTS = ["application/json", "text/html", "application/xml", "*/*", "text/plain;q=0",
           "application/json;q=0, text/html", "garbage,,;q=x"]
ODD_METHODS = ["PUT", "HEAD", "OPTIONS", "TRACE", "CONNECT", "FOO", "get", "PATCH", "DELETE", "POST"]

TEMPLATE = {"image_id": "ubuntu-jammy", "external_network_id": "public", "coe": "kubernetes",
            "flavor_id": "m1.small", "master_flavor_id": "m1.small"}

STRINGS = [
    "", " ", "a", "x" * 256, "x" * 70000, "\u0000", "a\u0000b", "\u00e9\u4e2d\U0001f600", "\ud800",
    "../../etc/passwd", "%00", "%2e%2e%2f", "' OR 1=1 --", "\"", "\\", "\n", "\r\n", "<script>",
    "null", "true", "0", "-1", "1e309", "00000000-0000-0000-0000-000000000000", "{'a': 'b'}",
    "{\"a\": 1}", "a=b,c=d", "k8s.gcr.io/x:tag", "\t", "\u202e", "\ufeff",
]
NUMBERS = [0, 1, -1, 2, 3, 5, 100, 2**31 - 1, 2**31, 2**32, 2**53, 2**63 - 1, 2**63, 2**64, -2**63 - 1,
           10**30, 1.5, -0.0, 1e308, 1e-308]
VALUES = STRINGS + NUMBERS + [None, True, False, [], {}, [1, "a"], {"a": {"b": [None]}}]

CLUSTER_ATTRS = ["name", "cluster_template_id", "node_count", "master_count", "keypair", "docker_volume_size",
                 "labels", "create_timeout", "discovery_url", "flavor_id", "master_flavor_id", "fixed_network",
                 "fixed_subnet", "floating_ip_enabled", "master_lb_enabled", "merge_labels", "uuid",
                 "project_id", "user_id", "status", "stack_id", "api_address"]
TEMPLATE_ATTRS = ["name", "image_id", "coe", "external_network_id", "flavor_id", "master_flavor_id",
                  "keypair_id", "docker_volume_size", "docker_storage_driver", "network_driver", "volume_driver",
                  "labels", "tls_disabled", "public", "registry_enabled", "server_type", "dns_nameserver",
                  "fixed_network", "fixed_subnet", "http_proxy", "https_proxy", "no_proxy", "hidden",
                  "master_lb_enabled", "floating_ip_enabled", "tags", "cluster_distro", "apiserver_port",
                  "insecure_registry", "uuid", "project_id"]
NG_ATTRS = ["name", "node_count", "min_node_count", "max_node_count", "role", "flavor_id", "image_id",
            "labels", "merge_labels", "docker_volume_size", "node_addresses", "is_default", "status", "uuid"]
QUOTA_ATTRS = ["project_id", "resource", "hard_limit", "id", "created_at"]
FED_ATTRS = ["name", "hostcluster_id", "member_ids", "properties", "status", "uuid"]
ALL_ATTRS = sorted(set(CLUSTER_ATTRS + TEMPLATE_ATTRS + NG_ATTRS + QUOTA_ATTRS + FED_ATTRS))
QUERY_KEYS = ["limit", "marker", "sort_key", "sort_dir", "detail", "all_tenants", "project_id", "ca_cert_type",
              "rollback", "name", "cluster_id", "role", "id", "_method", "fields", "x", "%zz", ""]
QUERY_VALUES = ["", "1", "0", "-1", "abc", "99999999999999999999", "uuid", "name", "id", "asc", "desc",
                "up", "true", "false", "True", "yes", "x" * 5000, "%00", "%ff", "%", "\u00e9", "PUT",
                "DELETE", "PATCH", "master", "worker", "kubernetes", "created_at", "node_count", "project_id"]


class Client:
    """One keep-alive connection; reconnects after a close or an error."""

    def __init__(self, host, port, timeout):
        self.addr = (host, port)
        self.timeout = timeout
        self.sock = None
        self.buf = b""

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.buf = b""

    def request(self, method, target, headers, body):
        """(status, headers dict lower-cased, body bytes); raises TimeoutError / OSError."""
        raw = f"{method} {target} HTTP/1.1\r\n".encode("utf-8", "surrogatepass")
        hs = [("Host", f"{self.addr[0]}:{self.addr[1]}")] + list(headers)
        if body is not None:
            hs.append(("Content-Length", str(len(body))))
        for k, v in hs:
            raw += f"{k}: {v}\r\n".encode("utf-8", "surrogatepass")
        raw += b"\r\n" + (body or b"")
        for attempt in range(2):
            if self.sock is None:
                self.sock = socket.create_connection(self.addr, timeout=self.timeout)
                self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            try:
                self.sock.sendall(raw)
                return self._response(method)
            except (ConnectionResetError, BrokenPipeError, EOFError):
                # a keep-alive connection the server closed between requests: once more
                self.close()
                if attempt == 1:
                    raise
        raise OSError("unreachable")

    def _recv(self):
        chunk = self.sock.recv(65536)
        if not chunk:
            raise EOFError("connection closed")
        self.buf += chunk

    def _response(self, method):
        while b"\r\n\r\n" not in self.buf:
            self._recv()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ")[1])
        headers = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            headers[k.strip().lower()] = v.strip()
        body = b""
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            pass
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            while True:
                while b"\r\n" not in self.buf:
                    self._recv()
                size_line, self.buf = self.buf.split(b"\r\n", 1)
                size = int(size_line.split(b";")[0], 16)
                while len(self.buf) < size + 2:
                    self._recv()
                body += self.buf[:size]
                self.buf = self.buf[size + 2:]
                if size == 0:
                    break
        elif "content-length" in headers:
            n = int(headers["content-length"])
            while len(self.buf) < n:
                self._recv()
            body, self.buf = self.buf[:n], self.buf[n:]
        else:
            try:
                while True:
                    self._recv()
            except EOFError:
                pass
            body, self.buf = self.buf, b""
            self.close()
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, headers, body


def call(client, method, path, body=None, version="latest"):
    data = None if body is None else json.dumps(body).encode()
    hs = [("OpenStack-API-Version", f"container-infra {version}"), ("Accept", "application/json")]
    if data is not None:
        hs.append(("Content-Type", "application/json"))
    s, _, b = client.request(method, path, hs, data)
    try:
        return s, json.loads(b or b"null")
    except ValueError:
        return s, b.decode("utf-8", "replace")


class Seeds:
    """Real ids for member routes: filled by seed() and by successful creates while fuzzing."""

    def __init__(self):
        self.lock = threading.Lock()
        self.templates = []  # (name, uuid)
        self.clusters = []  # (name, uuid), seeded: never deleted by the fuzzer
        self.nodegroups = {}  # cluster uuid -> [(name, uuid)]
        self.created_clusters = []  # ids of clusters the fuzzer created (deletable)
        self.created_templates = []
        self.projects = ["noauth-project", "p1", "fuzz-project"]

    def cluster_ids(self):
        with self.lock:
            return [x for c in self.clusters for x in c] + list(self.created_clusters)

    def template_ids(self):
        with self.lock:
            return [x for t in self.templates for x in t] + list(self.created_templates)


def wait_complete(client, ident, deadline):
    while time.time() < deadline:
        s, c = call(client, "GET", f"/v1/clusters/{ident}")
        if s == 200 and isinstance(c, dict) and c.get("status", "").endswith("_COMPLETE"):
            return c
        if s == 200 and isinstance(c, dict) and c.get("status", "").endswith("_FAILED"):
            raise SystemExit(f"seed cluster {ident} failed: {c}")
        time.sleep(0.3)
    raise SystemExit(f"seed cluster {ident} never completed")


def seed(host, port, tag, seeds):
    c = Client(host, port, 60)
    for i in range(2):
        name = f"{tag}-t{i}"
        s, t = call(c, "POST", "/v1/clustertemplates", dict(TEMPLATE, name=name, labels={"a": "b"}))
        if s != 201:
            raise SystemExit(f"seed template: {s} {t}")
        seeds.templates.append((name, t["uuid"]))
    for i in range(3):
        name = f"{tag}-c{i}"
        s, r = call(c, "POST", "/v1/clusters", {"name": name, "cluster_template_id": seeds.templates[0][1],
                                               "node_count": 1})
        if s != 202:
            raise SystemExit(f"seed cluster: {s} {r}")
        seeds.clusters.append((name, r["uuid"]))
    deadline = time.time() + 120
    for name, uuid in seeds.clusters:
        wait_complete(c, uuid, deadline)
        s, r = call(c, "POST", f"/v1/clusters/{uuid}/nodegroups",
                    {"name": "extra", "node_count": 1, "min_node_count": 1, "max_node_count": 3})
        if s != 202:
            raise SystemExit(f"seed nodegroup: {s} {r}")
        wait_complete(c, uuid, deadline)
        s, ngs = call(c, "GET", f"/v1/clusters/{uuid}/nodegroups")
        seeds.nodegroups[uuid] = [(n["name"], n["uuid"]) for n in ngs["nodegroups"]]
    c.close()


class Gen:
    def __init__(self, rnd, seeds, tag):
        self.r = rnd
        self.s = seeds
        self.tag = tag

    def pick(self, xs):
        return xs[self.r.randrange(len(xs))]

    def value(self):
        return self.pick(VALUES)

    def ident(self, real):
        r = self.r.random()
        if real and r < 0.7:
            return urllib.parse.quote(str(self.pick(real)), safe="")
        if r < 0.8:
            return self.pick(["zzz", "00000000-0000-0000-0000-000000000000", "detail", "1", "%20",
                              "a%2Fb", "%00", "%ff%fe", "%C3%A9", "x" * 300, "..", ".", "%2e%2e", "a;b",
                              "a%3Fb", "UPPER", "-", "_", "%F0%9F%98%80", "%C3%A9"])
        return self.odd_segment()

    def odd_segment(self):
        s = str(self.pick(STRINGS))[:400]
        return urllib.parse.quote(s.encode("utf-8", "surrogatepass"), safe=self.pick(["", "/", "%"]))

    def ng_ident(self, cluster_real):
        if cluster_real and self.r.random() < 0.75:
            with self.s.lock:
                for uuid, ngs in self.s.nodegroups.items():
                    names = [c for c in self.s.clusters if c[1] == uuid][0]
                    if cluster_real in names or cluster_real == urllib.parse.quote(uuid):
                        return urllib.parse.quote(self.pick(self.pick(ngs)), safe="")
        return self.ident([])

    def patch(self, attrs):
        ops = []
        for _ in range(self.r.choice([0, 1, 1, 1, 2, 3, 6])):
            op = {"op": self.pick(["replace", "replace", "add", "remove", "test", "move", "copy", "bad", None]),
                  "path": self.pick(["/" + self.pick(attrs), "/" + self.pick(ALL_ATTRS), "/", "",
                                     "/labels/x", "/labels/", "/labels/~1", "/a/b/c", "name", "/node_count/0",
                                     "/" + self.pick(attrs) + "/-", "/~2", None])}
            if self.r.random() < 0.8:
                op["value"] = self.value() if self.r.random() < 0.7 else self.good_value(op["path"])
            if self.r.random() < 0.1:
                op["from"] = self.pick(["/name", "/x", 5])
            if self.r.random() < 0.1:
                del op[self.pick(list(op.keys()))]
            ops.append(op)
        r = self.r.random()
        if r < 0.05:
            return {"op": "replace", "path": "/name", "value": "x"}
        if r < 0.08:
            return [ops, ops]
        if r < 0.1:
            return ["replace", "/name"]
        return ops

    def good_value(self, path):
        p = str(path)
        if "count" in p:
            return self.r.randrange(0, 5)
        if "labels" in p:
            return {"k": "v"} if p == "/labels" else "v"
        if p == "/name":
            return f"{self.tag}-{self.r.randrange(1 << 30)}"
        return "x"

    def body_for(self, kind):
        r = self.r.random()
        base = {
            "template": dict(TEMPLATE, name=f"{self.tag}-ft{self.r.randrange(1 << 30)}"),
            "cluster": {"name": f"{self.tag}-fc{self.r.randrange(1 << 30)}", "node_count": 1,
                        "cluster_template_id": self.pick(self.s.template_ids() or ["x"])},
            "nodegroup": {"name": f"ng{self.r.randrange(1 << 20)}", "node_count": 1},
            "resize": {"node_count": self.r.randrange(0, 4)},
            "upgrade": {"cluster_template": self.pick(self.s.template_ids() or ["x"])},
            "cert": {"cluster_uuid": self.pick(self.s.cluster_ids() or ["x"]),
                     "csr": "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n"},
            "quota": {"project_id": self.pick(self.s.projects), "resource": "Cluster",
                      "hard_limit": self.r.randrange(0, 50)},
            "federation": {"name": "f1", "hostcluster_id": self.pick(self.s.cluster_ids() or ["x"]),
                           "properties": {"dns-zone": "example.com."}},
            "credentials": {},
            "other": {},
        }[kind]
        if kind == "resize" and self.r.random() < 0.3:
            base["nodegroup"] = self.pick(["default-worker", "default-master", "extra", "zzz", 5])
            if self.r.random() < 0.5:
                base["nodes_to_remove"] = self.pick([[], ["x"], "x", [1, None]])
        if r < 0.3:
            return base
        body = dict(base)
        for _ in range(self.r.choice([1, 1, 2, 3, 5])):
            m = self.r.random()
            if m < 0.4 and body:
                body[self.pick(list(body.keys()))] = self.value()
            elif m < 0.6 and body:
                del body[self.pick(list(body.keys()))]
            else:
                body[self.pick(ALL_ATTRS + ["x", "", "\u0000"])] = self.value()
        if self.r.random() < 0.1:
            return self.pick([[body], None, "s", 1, [], body.get("name")])
        return body

    def raw_body(self, kind, method):
        r = self.r.random()
        if method == "PATCH":
            doc = self.patch(ALL_ATTRS)
        else:
            doc = self.body_for(kind)
        if r < 0.85:
            text = json.dumps(doc, ensure_ascii=self.r.random() < 0.5)
            return text.encode("utf-8", "surrogatepass")
        return self.pick([b"", b"{", b"[", b"{\"a\":", b"\xff\xfe{}", b"\xef\xbb\xbf{}", b"nan", b"NaN",
                          b"Infinity", b"1e999", b"{\"a\":1,\"a\":2}", b"[" * 5000 + b"]" * 5000,
                          b"{\"name\":\"\\ud800\"}", b"{\"name\":\"\\u0000\"}", b"\x00" * 10,
                          b"{\"labels\": {\"" + b"k" * 10 + b"\": \"" + b"v" * 100000 + b"\"}}",
                          b"name=x&node_count=1", b"<xml/>", b"{}" * 3, b" " * 100])

    def request(self):
        """(method, target, headers, body bytes or None, route label)."""
        cl = self.s.cluster_ids()
        tl = self.s.template_ids()
        c = self.ident(cl)
        routes = [
            ("GET", "/", None), ("GET", "/v1", None),
            ("GET", "/v1/clustertemplates", None), ("POST", "/v1/clustertemplates", "template"),
            ("GET", "/v1/clustertemplates/detail", None),
            ("GET", "/v1/clustertemplates/{t}", None), ("PATCH", "/v1/clustertemplates/{t}", None),
            ("DELETE", "/v1/clustertemplates/{td}", None),
            ("GET", "/v1/clusters", None), ("POST", "/v1/clusters", "cluster"), ("GET", "/v1/clusters/detail", None),
            ("GET", "/v1/clusters/{c}", None), ("PATCH", "/v1/clusters/{c}", None),
            ("DELETE", "/v1/clusters/{cd}", None),
            ("POST", "/v1/clusters/{c}/actions/resize", "resize"),
            ("POST", "/v1/clusters/{c}/actions/upgrade", "upgrade"),
            ("GET", "/v1/clusters/{c}/nodegroups", None), ("POST", "/v1/clusters/{c}/nodegroups", "nodegroup"),
            ("GET", "/v1/clusters/{c}/nodegroups/{n}", None), ("PATCH", "/v1/clusters/{c}/nodegroups/{n}", None),
            ("DELETE", "/v1/clusters/{c}/nodegroups/{nd}", None),
            ("GET", "/v1/certificates/{c}", None), ("PATCH", "/v1/certificates/{c}", "other"),
            ("POST", "/v1/certificates", "cert"),
            ("PATCH", "/v1/credentials/{c}", "credentials"),
            ("GET", "/v1/quotas", None), ("POST", "/v1/quotas", "quota"),
            ("GET", "/v1/quotas/{p}/{res}", None), ("PATCH", "/v1/quotas/{p}/{res}", "quota"),
            ("DELETE", "/v1/quotas/{p}/{res}", None),
            ("GET", "/v1/stats", None), ("GET", "/v1/mservices", None),
            ("GET", "/v1/federations", None), ("POST", "/v1/federations", "federation"),
            ("GET", "/v1/federations/detail", None),
            ("GET", "/v1/federations/{f}", None), ("PATCH", "/v1/federations/{f}", None),
            ("DELETE", "/v1/federations/{f}", None),
        ]
        method, tmpl, kind = self.pick(routes)
        label = f"{method} {tmpl}"
        with self.s.lock:
            deletable_c = list(self.s.created_clusters)
            deletable_t = list(self.s.created_templates)
        path = (tmpl.replace("{c}", c)
                .replace("{cd}", self.ident(deletable_c) if self.r.random() < 0.5 else self.ident([]))
                .replace("{td}", self.ident(deletable_t + [t[0] for t in self.s.templates]))
                .replace("{t}", self.ident(tl))
                .replace("{nd}", self.ident([]) if self.r.random() < 0.7 else "extra")
                .replace("{n}", self.ng_ident(c))
                .replace("{p}", self.ident(self.s.projects))
                .replace("{res}", self.pick(["Cluster", "cluster", "Nodes", "zzz", "%00"]))
                .replace("{f}", self.ident([])))
        r = self.r.random()
        if r < 0.05:
            path = path + self.pick(["/", "//", "/x", "/%2F", "/.", "/..", "?", "#frag", ";x=1", "/detail"])
        elif r < 0.08:
            path = "/" + "/".join(self.odd_segment() for _ in range(self.r.randrange(1, 4)))
        elif r < 0.09:
            path = self.pick(["/v1//clusters", "//v1/clusters", "/V1/clusters", "/v1/clusters/../quotas",
                              "/v2", "/v1/" + "a/" * 200, "*", "http://example.com/v1/clusters",
                              "/v1/clusters/%"])
        q = []
        if self.r.random() < 0.4:
            for _ in range(self.r.choice([1, 1, 2, 3, 6])):
                k = self.pick(QUERY_KEYS)
                v = self.pick(QUERY_VALUES)
                if self.r.random() < 0.3 and q:
                    k = q[-1][0]  # a duplicate parameter
                q.append((k, v))
        if self.r.random() < 0.02:
            q.append(("_method", self.pick(["PUT", "DELETE", "PATCH", "GET", "x"])))
        target = path
        if q:
            enc = self.r.random() < 0.8
            target += "?" + "&".join(
                (urllib.parse.quote(k.encode("utf-8", "surrogatepass"), safe="%=") + "=" +
                 urllib.parse.quote(v.encode("utf-8", "surrogatepass"), safe="%"))
                if enc else f"{k}={v}".replace(" ", "%20").replace("\n", "%0A").replace("\r", "%0D")
                for k, v in q)
        if self.r.random() < 0.03:
            method = self.pick(ODD_METHODS)
        headers = []
        rv = self.r.random()
        if rv < 0.75:
            headers.append(("OpenStack-API-Version", f"container-infra {self.pick(VERSIONS_VALID)}"))
        elif rv < 0.9:
            headers.append(("OpenStack-API-Version", f"{self.pick(SERVICES)} {self.pick(VERSIONS_BAD)}".strip()))
        elif rv < 0.95:
            headers.append(("OpenStack-API-Version", f"container-infra {self.pick(VERSIONS_VALID)}"))
            headers.append(("OpenStack-API-Version", f"container-infra {self.pick(VERSIONS_VALID)}"))
        if self.r.random() < 0.05:
            headers.append(("X-OpenStack-Magnum-API-Version", self.pick(VERSIONS_VALID + VERSIONS_BAD)))
        # a non-JSON Accept is a 406 before anything else (pecan's): one request in ten
        a = self.pick(ACCEPTS) if self.r.random() < 0.1 else self.pick([None, "application/json"])
        if a is not None:
            headers.append(("Accept", a))
        if self.r.random() < 0.02:
            headers.append(("X-HTTP-Method-Override", self.pick(["DELETE", "PUT", "x"])))
        body = None
        if method in ("POST", "PATCH", "PUT") or self.r.random() < 0.03:
            body = self.raw_body(kind or "other", method)
            ct = self.pick(CONTENT_TYPES)
            if ct is not None:
                headers.append(("Content-Type", ct))
        headers = [(k, v.replace("\r", "").replace("\n", "").replace("\x00", "")) for k, v in headers]
        # a request line (spaces, controls and non-ASCII percent-encoded); one in a hundred keeps
        # ASCII a URI may not hold (`<`, `>`, a backtick, no leading `/`)
        target = "".join(c if 0x20 < ord(c) < 0x7f else urllib.parse.quote(c.encode("utf-8", "surrogatepass"))
                         for c in target)
        if self.r.random() < 0.01:
            target = self.pick(["<x>", "`", "{x}", "|", "^"]).join(target.split("/", 2)[:2] + [""])
            target = target if self.r.random() < 0.8 else target.lstrip("/")
        return method, target, headers, body, label


def is_envelope(body):
    try:
        v = json.loads(body)
    except ValueError:
        return False
    return (isinstance(v, dict) and isinstance(v.get("errors"), list) and len(v["errors"]) > 0
            and all(isinstance(e, dict) for e in v["errors"]))


def worker(idx, args, seeds, counter, stats, findings, stop_at):
    rnd = random.Random(args.seed * 1000003 + idx)
    gen = Gen(rnd, seeds, args.tag)
    host, port = args.base.rsplit(":", 1)
    client = Client(host, int(port), args.timeout)
    while True:
        with stats["lock"]:
            if counter[0] >= args.requests or time.time() > stop_at:
                break
            counter[0] += 1
        method, target, headers, body, label = gen.request()
        try:
            status, rh, rb = client.request(method, target, headers, body)
        except socket.timeout:
            client.close()
            findings.append({"kind": "hang", "method": method, "target": target[:300], "headers": headers})
            continue
        except (OSError, EOFError, ValueError, IndexError) as e:
            client.close()
            # the server may close a connection after a protocol error (400 on a bad request
            # line); a refused connection means the process is gone
            try:
                socket.create_connection(client.addr, timeout=5).close()
            except OSError:
                findings.append({"kind": "crash", "method": method, "target": target[:300], "error": str(e)})
                stats["dead"] = True
                break
            with stats["lock"]:
                stats["by_status"]["conn-closed"] += 1
            continue
        with stats["lock"]:
            stats["by_status"][str(status)] += 1
            stats["by_route"][label] += 1
        bad = None
        if status >= 500:
            bad = "5xx"
        elif status >= 400 and method != "HEAD" and not is_envelope(rb):
            bad = "envelope"
        if bad == "envelope" and status == 400 and not rb and "x-openstack-request-id" not in rh:
            # hyper's own answer to a request line it cannot parse (a target that is not a URI):
            # the request never reached the application (docs/differences.md, "Requests hyper
            # cannot parse"); counted, not a finding
            with stats["lock"]:
                stats["by_status"]["400-http-parser"] += 1
                stats["by_status"]["400"] -= 1
            bad = None
        if bad:
            findings.append({"kind": bad, "status": status, "method": method, "target": target[:300],
                             "headers": headers, "body": (body or b"")[:300].decode("utf-8", "replace"),
                             "answer": rb[:300].decode("utf-8", "replace")})
        if status in (201, 202) and method == "POST" and label.endswith(("/v1/clusters", "/v1/clustertemplates")):
            try:
                u = json.loads(rb)["uuid"]
            except (ValueError, KeyError, TypeError):
                u = None
            if u:
                with seeds.lock:
                    (seeds.created_clusters if label.endswith("clusters") else seeds.created_templates).append(u)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", required=True, help="host:port of the API")
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--max-seconds", type=float, default=3600.0)
    ap.add_argument("--tag", default="fz")
    ap.add_argument("--findings", help="write every finding (JSON lines) here")
    args = ap.parse_args()
    host, port = args.base.rsplit(":", 1)
    seeds = Seeds()
    seed(host, int(port), args.tag, seeds)
    counter = [0]
    stats = {"lock": threading.Lock(), "by_status": collections.Counter(), "by_route": collections.Counter(),
             "dead": False}
    findings = []
    t0 = time.time()
    threads = [threading.Thread(target=worker, args=(i, args, seeds, counter, stats, findings,
                                                     t0 + args.max_seconds)) for i in range(args.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    dt = time.time() - t0
    if args.findings:
        with open(args.findings, "w") as f:
            for x in findings:
                f.write(json.dumps(x) + "\n")
    kinds = collections.Counter(x["kind"] for x in findings)
    summary = {"sent": counter[0], "seconds": round(dt, 1), "rps": round(counter[0] / dt, 1),
               "by_status": dict(sorted(stats["by_status"].items())), "routes": len(stats["by_route"]),
               "findings": dict(kinds), "seeded_clusters": [c[1] for c in seeds.clusters]}
    print(json.dumps(summary))
    for x in findings[:20]:
        print(json.dumps(x), file=sys.stderr)
    sys.exit(1 if findings else 0)


if __name__ == "__main__":
    main()
