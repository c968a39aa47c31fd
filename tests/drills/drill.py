#!/usr/bin/env python3
"""Reliability drills of issue 16: faults under a steady mixed load through openkeel-api.

    tests/drills/drill.py broker    [--rate 50] [--cycles 5] [--down 10] [--extra-conf FILE]
    tests/drills/drill.py broker-cluster [--rate 50] [--cycles 3] [--down 10]
    tests/drills/drill.py mariadb   [--rate 50] [--cycles 3] [--down 10]
    tests/drills/drill.py conductor [--rate 20] [--cycles 4]
    tests/drills/drill.py slow      (tests/drills/slow.py)

Each drill starts `openkeel-conductor` and `openkeel-api` as separate processes (simulator
driver, noauth, x509keypair certificates, DEBUG logging) on a fresh database of the MariaDB of
OPENKEEL_TEST_MYSQL_URL and on the RabbitMQ of OPENKEEL_TEST_RABBIT_URL, seeds clusters, runs
an open-loop load of DRILL_RATE operations a second (creates, PATCH updates, resizes,
upgrades, nodegroup creates and deletes, cluster deletes, reads, CA fetches and CSR
signings: the last two are RPC calls) while it injects its fault, waits for every accepted
operation to reach its final state, checks the tables, audits the logs for secrets and
prints its figures as JSON (and a summary on stderr). Exit status 1 when a must-hold fails.

The faults act on the services of OPENKEEL_TEST_HOME through tests/drills/services.sh, which
refuses the shared home: run `tests/drills/services.sh start` and
`eval "$(tests/drills/services.sh env)"` first. Python: the test venv (PyMySQL).
`broker-cluster` runs on the three-node RabbitMQ cluster of OPENKEEL_TEST_RABBIT_CLUSTER_URL
(`tests/drills/services.sh rabbit-cluster-start`) with quorum queues, and kills one node with
SIGKILL per cycle, a different one each time.
Bounded: the load runs for the fault cycles only, every request has a 120 s client timeout,
the settling wait is bounded by --settle, everything listens on 127.0.0.1.
"""

import argparse
import collections
import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SERVICES = os.path.join(HERE, "services.sh")
API_VERSION = "container-infra latest"
FINAL_OK = {"CREATE_COMPLETE", "UPDATE_COMPLETE"}
CLIENT_TIMEOUT = 120.0


def log(msg):
    sys.stderr.write("[drill %s] %s\n" % (time.strftime("%H:%M:%S"), msg))
    sys.stderr.flush()


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def services(*args, check=True):
    r = subprocess.run([SERVICES] + list(args), capture_output=True, text=True, timeout=180)
    if check and r.returncode != 0:
        raise RuntimeError("services.sh %s failed: %s" % (" ".join(args), r.stderr[-2000:]))
    return r.stdout


# ----------------------------------------------------------------- the deployment

class Deployment:
    """A database, a magnum.conf, and openkeel-conductor + openkeel-api as processes."""

    def __init__(self, out, bin_dir, extra_conf="", conductors=1, auth="noauth"):
        self.out = out
        self.bin = bin_dir
        self.mysql_url = os.environ["OPENKEEL_TEST_MYSQL_URL"]
        self.rabbit_url = os.environ["OPENKEEL_TEST_RABBIT_URL"]
        u = urllib.parse.urlparse(self.mysql_url)
        self.db_args = dict(host=u.hostname, port=u.port or 3306, user=u.username,
                            password=urllib.parse.unquote(u.password or ""))
        self.db = "okdrill_%d" % os.getpid()
        self.exchange = "okdrill-%d" % os.getpid()
        self.port = free_port()
        self.procs = {}
        self.log_files = []
        self.conductor_names = ["conductor"] if conductors == 1 else [
            "conductor%d" % i for i in range(conductors)]
        self.extra_conf = extra_conf
        self.auth = auth

    def sql(self, query, args=None, timeout=10):
        conn = pymysql.connect(database=self.db, connect_timeout=timeout, read_timeout=timeout,
                               write_timeout=timeout, **self.db_args)
        try:
            with conn.cursor() as c:
                c.execute(query, args)
                return c.fetchall()
        finally:
            conn.close()

    def conf_text(self, host, transport=None, extra=""):
        rabbit = (transport or self.rabbit_url).replace("amqp://", "rabbit://", 1)
        return (
            "[DEFAULT]\n"
            "transport_url = %s\n"
            "control_exchange = %s\n"
            "rpc_response_timeout = 30\n"
            "host = %s\n"
            "debug = true\n"
            "[api]\nhost = 127.0.0.1\nport = %d\n"
            "[conductor]\ntopic = %s-conductor\n"
            "[database]\nconnection = %s/%s\n"
            "[certificates]\ncert_manager_type = x509keypair\n"
            "[quotas]\nmax_clusters_per_project = 100000\n"
            "[openkeel]\nauth_strategy = %s\nrpc_transport = rabbit\n"
            "enable_simulator_driver = true\nsimulated_cloud = true\n"
            "status_sync_interval = 1\n%s%s"
        ) % (rabbit, self.exchange, host, self.port, self.exchange, self.mysql_url, self.db,
             self.auth, self.extra_conf, extra)

    def write_conf(self, name, host, transport=None, extra=""):
        path = os.path.join(self.out, "%s.conf" % name)
        with open(path, "w") as f:
            f.write(self.conf_text(host, transport, extra))
        return path

    def setup(self, api_transport=None, api_extra="", conductor_extra=""):
        self.conductor_extra = conductor_extra
        conn = pymysql.connect(connect_timeout=10, **self.db_args)
        with conn.cursor() as c:
            c.execute("CREATE DATABASE `%s` DEFAULT CHARACTER SET utf8mb4 "
                      "COLLATE utf8mb4_general_ci" % self.db)
        conn.close()
        conf = self.write_conf("conductor", "okdrill-conductor", extra=conductor_extra)
        r = subprocess.run([os.path.join(self.bin, "openkeel-db-manage"), "--config-file", conf,
                            "upgrade"], capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError("db-manage upgrade failed: %s" % r.stderr[-2000:])
        self.api_conf = self.write_conf("api", "okdrill-api", api_transport, api_extra)
        for name in self.conductor_names:
            self.start_conductor(name)
        self.start_api()

    def _spawn(self, name, program, conf):
        path = os.path.join(self.out, "%s.log" % name)
        if path not in self.log_files:
            self.log_files.append(path)
        f = open(path, "ab")
        p = subprocess.Popen([os.path.join(self.bin, program), "--config-file", conf],
                             stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        f.close()
        self.procs[name] = p
        return p

    def start_conductor(self, name):
        conf = self.write_conf(name, "okdrill-" + name, extra=getattr(self, "conductor_extra", ""))
        return self._spawn(name, "openkeel-conductor", conf)

    def start_api(self):
        p = self._spawn("api", "openkeel-api", self.api_conf)
        end = time.time() + 120
        while time.time() < end:
            if p.poll() is not None:
                raise RuntimeError("openkeel-api exited: see %s/api.log" % self.out)
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("openkeel-api never listened on %d" % self.port)

    def kill(self, name, sig=signal.SIGKILL):
        p = self.procs[name]
        p.send_signal(sig)
        p.wait(timeout=60)

    def alive(self):
        return {n: p.poll() is None for n, p in self.procs.items()}

    def stop(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.terminate()
        for p in self.procs.values():
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=30)

    def drop(self):
        try:
            conn = pymysql.connect(connect_timeout=10, **self.db_args)
            with conn.cursor() as c:
                c.execute("DROP DATABASE IF EXISTS `%s`" % self.db)
            conn.close()
        except pymysql.MySQLError as e:
            log("could not drop %s: %s" % (self.db, e))


# ----------------------------------------------------------------- HTTP

def request(port, method, path, body=None, timeout=CLIENT_TIMEOUT, token=None):
    """(status, body text, seconds); status None when there was no answer (text = why)."""
    t0 = time.time()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"OpenStack-API-Version": API_VERSION, "Accept": "application/json"}
    if token:
        headers["X-Auth-Token"] = token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=data, headers=headers)
        r = conn.getresponse()
        text = r.read().decode("utf-8", "replace")
        return r.status, text, time.time() - t0
    except (OSError, http.client.HTTPException) as e:
        return None, "%s: %s" % (type(e).__name__, e), time.time() - t0
    finally:
        conn.close()


def magnum_error_body(text):
    """True when text is Magnum's error envelope {"errors": [{"status": ..., ...}]}."""
    try:
        doc = json.loads(text)
    except ValueError:
        return False
    errs = doc.get("errors") if isinstance(doc, dict) else None
    return isinstance(errs, list) and len(errs) > 0 and all(
        isinstance(e, dict) and "status" in e and "detail" in e for e in errs)


# ----------------------------------------------------------------- the load

class Op:
    __slots__ = ("kind", "cluster", "target", "sent", "status", "answered", "reached",
                 "outcome", "body", "candidate")

    def __init__(self, kind, cluster=None, target=None):
        self.kind = kind
        self.cluster = cluster
        self.target = target
        self.sent = time.time()
        self.status = None
        self.answered = None
        self.reached = None
        self.outcome = None  # None while pending; "reached" | "failed"
        self.body = None
        self.candidate = None  # when the tables first looked final for it


# An operation's end is taken once the tables have looked final for this long: the conductor
# writes a new node count before it sets *_IN_PROGRESS, so one look can come too early.
SETTLED_FOR = 2.5


class Load:
    """Open-loop mixed load: `rate` operations a second, each on its own thread."""

    # Weights. A create costs the conductor four RSA keys (the cluster's CAs): at 2 a second
    # a debug conductor on 2 shared cores falls behind and the calls wait behind the casts
    # in its queue until they time out, so creates and deletes are a small share.
    WRITES = [("create", 1), ("update", 14), ("resize", 14), ("upgrade", 4),
              ("ng_create", 9), ("ng_delete", 7), ("delete", 1)]
    READS = [("list", 22), ("show", 22), ("ca", 4), ("sign", 2)]

    def __init__(self, dep, rate, template, upgrade_template, csr, seed=1):
        self.dep = dep
        self.rate = rate
        self.template = template
        self.templates = [template, upgrade_template]
        self.csr = csr
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.idle = []          # cluster uuids in a final state, nobody working on them
        self.busy = {}          # uuid -> Op (accepted, waiting for its final state)
        self.reserved = set()   # uuid with a request in flight
        self.nodegroups = collections.defaultdict(list)  # uuid -> extra nodegroup names
        self.ops = []           # every accepted write
        self.answers = collections.Counter()  # (kind, status)
        self.bad = []           # 5xx answers, no answers, 503 without Magnum's body
        self.timeline = []      # (t, kind, status, seconds)
        self.threads = []
        self.sent = 0
        self.stop_flag = threading.Event()
        self.seq = 0
        self.template_of = {}   # uuid -> template uuid
        self.workers = {}       # uuid -> the default worker nodegroup's node_count

    # -- bookkeeping
    def _pick_idle(self):
        with self.lock:
            if not self.idle:
                return None
            i = self.rng.randrange(len(self.idle))
            uuid = self.idle.pop(i)
            self.reserved.add(uuid)
            return uuid

    def _release(self, uuid):
        with self.lock:
            self.reserved.discard(uuid)
            if uuid not in self.busy:
                self.idle.append(uuid)

    def _accept(self, op):
        with self.lock:
            self.ops.append(op)
            if op.cluster:
                self.reserved.discard(op.cluster)
                self.busy[op.cluster] = op

    def _record(self, kind, status, text, secs):
        with self.lock:
            self.answers[(kind, status)] += 1
            self.timeline.append((time.time(), kind, status, round(secs, 3)))
            bad = status is None or status >= 500 and not (
                status == 503 and magnum_error_body(text))
            if bad or (status is not None and status >= 500):
                self.bad.append({"t": time.time(), "kind": kind, "status": status,
                                 "seconds": round(secs, 2), "body": text[:600],
                                 "magnum_body": magnum_error_body(text)})

    # -- one operation
    def run_one(self, kind):
        port = self.dep.port
        if kind in ("list", "show", "ca", "sign"):
            uuid = None
            with self.lock:
                pool = self.idle + list(self.busy)
                uuid = self.rng.choice(pool) if pool else None
            if kind == "list" or uuid is None:
                st, text, secs = request(port, "GET", "/v1/clusters?limit=50")
                kind = "list"
            elif kind == "show":
                st, text, secs = request(port, "GET", "/v1/clusters/%s" % uuid)
            elif kind == "ca":
                st, text, secs = request(port, "GET", "/v1/certificates/%s" % uuid)
            else:
                st, text, secs = request(port, "POST", "/v1/certificates",
                                         {"cluster_uuid": uuid, "csr": self.csr})
            self._record(kind, st, text, secs)
            return
        if kind == "create":
            with self.lock:
                self.seq += 1
                name = "d%d" % self.seq
            op = Op("create", target=name)
            st, text, secs = request(port, "POST", "/v1/clusters", {
                "name": name, "cluster_template_id": self.template, "node_count": 1,
                "master_count": 1})
            self._record(kind, st, text, secs)
            if st == 202:
                try:
                    op.cluster = json.loads(text)["uuid"]
                except (ValueError, KeyError):
                    op.cluster = None
                op.status, op.answered = st, time.time()
                with self.lock:
                    self.template_of[op.cluster] = self.template
                self._accept(op)
            return
        uuid = self._pick_idle()
        if uuid is None:
            return self.run_one("list")
        with self.lock:
            # a target that differs from what the cluster has, so that the operation's end
            # is visible (an update to the same count would look done before it started)
            cur = self.workers.get(uuid, 1)
            n = self.rng.choice([c for c in range(1, 6) if c != cur])
        if kind == "update":
            op = Op(kind, uuid, n)
            st, text, secs = request(port, "PATCH", "/v1/clusters/%s" % uuid, [
                {"op": "replace", "path": "/node_count", "value": n}])
        elif kind == "resize":
            op = Op(kind, uuid, n)
            st, text, secs = request(port, "POST", "/v1/clusters/%s/actions/resize" % uuid,
                                     {"node_count": n})
        elif kind == "upgrade":
            with self.lock:
                cur = self.template_of.get(uuid, self.template)
            new = self.templates[1] if cur == self.templates[0] else self.templates[0]
            op = Op(kind, uuid, new)
            st, text, secs = request(port, "POST", "/v1/clusters/%s/actions/upgrade" % uuid,
                                     {"cluster_template": new})
        elif kind == "ng_create":
            with self.lock:
                self.seq += 1
                name = "ng%d" % self.seq
            op = Op(kind, uuid, name)
            st, text, secs = request(port, "POST", "/v1/clusters/%s/nodegroups" % uuid,
                                     {"name": name, "node_count": 1})
        elif kind == "ng_delete":
            with self.lock:
                names = self.nodegroups.get(uuid) or []
                name = names[0] if names else None
            if name is None:
                self._release(uuid)
                return self.run_one("show")
            op = Op(kind, uuid, name)
            st, text, secs = request(port, "DELETE",
                                     "/v1/clusters/%s/nodegroups/%s" % (uuid, name))
        elif kind == "delete":
            op = Op(kind, uuid)
            st, text, secs = request(port, "DELETE", "/v1/clusters/%s" % uuid)
        else:
            raise ValueError(kind)
        self._record(kind, st, text, secs)
        if st in (202, 204):
            op.status, op.answered = st, time.time()
            if kind == "ng_delete":
                with self.lock:
                    if name in self.nodegroups[uuid]:
                        self.nodegroups[uuid].remove(name)
            self._accept(op)
        else:
            self._release(uuid)

    # -- the dispatcher
    def pick_kind(self):
        table = self.WRITES + self.READS
        total = sum(w for _, w in table)
        x = self.rng.uniform(0, total)
        for k, w in table:
            x -= w
            if x <= 0:
                return k
        return "list"

    def run(self, seconds):
        start = time.time()
        interval = 1.0 / self.rate
        n = 0
        while not self.stop_flag.is_set():
            now = time.time()
            if now - start >= seconds:
                break
            due = start + n * interval
            if due > now:
                time.sleep(due - now)
                continue
            kind = self.pick_kind()
            t = threading.Thread(target=self.run_one, args=(kind,), daemon=True)
            t.start()
            self.threads.append(t)
            n += 1
            self.sent += 1
        return time.time() - start

    def join(self, timeout):
        end = time.time() + timeout
        for t in self.threads:
            t.join(max(0.0, end - time.time()))
        return sum(1 for t in self.threads if t.is_alive())


class Watcher(threading.Thread):
    """Reads the tables every second and marks accepted operations that reached their final
    state (or failed); frees their clusters for the next operation."""

    def __init__(self, dep, load):
        super().__init__(daemon=True)
        self.dep = dep
        self.load = load
        self.stop_flag = threading.Event()
        self.db_errors = 0

    def snapshot(self):
        clusters = {u: (s, t) for u, s, t in self.dep.sql(
            "SELECT uuid, status, cluster_template_id FROM cluster")}
        ngs = collections.defaultdict(dict)
        for cu, name, st, n, role, default in self.dep.sql(
                "SELECT c.uuid, n.name, n.status, n.node_count, n.role, n.is_default "
                "FROM nodegroup n JOIN cluster c ON c.uuid = n.cluster_id"):
            ngs[cu][name] = (st, n, role, default)
        return clusters, ngs

    def check(self, clusters, ngs):
        now = time.time()
        load = self.load
        with load.lock:
            for uuid, op in list(load.busy.items()):
                c = clusters.get(uuid)
                done = failed = False
                if op.kind == "delete":
                    done = c is None
                    failed = c is not None and c[0].endswith("_FAILED")
                elif c is None:
                    # a create's row is inserted by the conductor after the 202: not there
                    # yet; any other cluster gone without a delete failed
                    failed = op.kind != "create"
                elif c[0].endswith("_FAILED"):
                    failed = True
                elif c[0] in FINAL_OK:
                    mine = ngs.get(uuid, {})
                    workers = [v for v in mine.values() if v[2] == "worker" and v[3]]
                    if op.kind == "create":
                        done = c[0] == "CREATE_COMPLETE"
                    elif op.kind in ("update", "resize"):
                        done = bool(workers) and workers[0][1] == op.target and \
                            all(v[0] in FINAL_OK for v in mine.values())
                    elif op.kind == "upgrade":
                        done = c[1] == op.target and all(v[0] in FINAL_OK for v in mine.values())
                    elif op.kind == "ng_create":
                        done = mine.get(op.target, ("",))[0] == "CREATE_COMPLETE"
                    elif op.kind == "ng_delete":
                        done = op.target not in mine
                if done and not failed:
                    if op.candidate is None:
                        op.candidate = now
                    if now - op.candidate < SETTLED_FOR:
                        continue
                elif not failed:
                    op.candidate = None
                if done and op.kind in ("update", "resize"):
                    load.workers[uuid] = op.target
                if done or failed:
                    op.outcome = "reached" if done else "failed"
                    op.reached = now
                    del load.busy[uuid]
                    if op.kind == "create":
                        pass
                    if op.kind == "ng_create" and done:
                        load.nodegroups[uuid].append(op.target)
                    if op.kind == "upgrade" and done:
                        load.template_of[uuid] = op.target
                    if op.kind != "delete" and not failed:
                        load.idle.append(uuid)

    def run(self):
        while not self.stop_flag.is_set():
            try:
                self.check(*self.snapshot())
            except pymysql.MySQLError:
                self.db_errors += 1
            self.stop_flag.wait(1.0)


# ----------------------------------------------------------------- checks after a drill

def table_check(dep):
    """Half-written rows: every violation as a line (bench/http_fuzz_consistency.sql plus the
    certificate references)."""
    out = []
    queries = open(os.path.join(ROOT, "bench", "http_fuzz_consistency.sql")).read()
    stmts = [s.strip() for s in re.sub(r"(?m)^--.*$", "", queries).split(";") if s.strip()]
    stmts.append(
        "SELECT CONCAT('cluster without its CA reference: ', uuid) FROM cluster "
        "WHERE status LIKE 'CREATE_COMPLETE' AND (ca_cert_ref IS NULL OR magnum_cert_ref IS NULL)")
    stmts.append(
        "SELECT CONCAT('certificate reference without its x509keypair row: ', c.uuid) "
        "FROM cluster c WHERE c.ca_cert_ref IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM x509keypair x WHERE x.uuid = c.ca_cert_ref)")
    for s in stmts:
        for row in dep.sql(s):
            out.append(" ".join(str(v) for v in row))
    return out


def secret_values(dep):
    """Strings that must never be in a log: the stored private keys (line by line) and
    passphrases, the database and broker passwords in their URLs."""
    out = []
    for key, phrase in dep.sql("SELECT private_key, private_key_passphrase FROM x509keypair"):
        if phrase:
            out.append(phrase)
        if key:
            out.extend(l for l in key.splitlines() if not l.startswith("-----") and len(l) >= 40)
    for url in (dep.mysql_url, dep.rabbit_url):
        u = urllib.parse.urlparse(url)
        if u.password:
            out.append("%s:%s@" % (u.username, u.password))
    return out


AUDIT_PATTERNS = [
    re.compile(r"-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE REQUEST)-----"),
    re.compile(r"MII[A-Za-z0-9+/]{40,}"),  # a DER body in base64 (keys, CSRs)
    re.compile(r"(?i)x-auth-token\s*[:=]\s*\S{8,}"),
    re.compile(r"(?i)\bpassword\b\s*[:=]\s*[\"']?(?!\*\*\*)[^\s\"',}]{3,}"),
    re.compile(r"(?i)passphrase\b\s*[:=]\s*[\"']?(?!\*\*\*)[^\s\"',}]{3,}"),
]


SECRET_RUN = re.compile(r"[A-Za-z0-9+/=_-]{16,}")


def audit_logs(paths, secrets, csr):
    """Lines of the given logs that carry a secret: (file, line number, what). The secrets
    (thousands of key lines) are indexed by their first 16 characters and looked up at every
    position of every long enough run of base64-ish characters."""
    found = []
    csr_lines = [l for l in csr.splitlines() if not l.startswith("-----") and len(l) >= 40]
    index = collections.defaultdict(list)
    for s, what in [(s, "stored secret") for s in secrets] + [(l, "CSR body") for l in csr_lines]:
        if len(s) >= 16 and SECRET_RUN.fullmatch(s):
            index[s[:16]].append((s, what))
    short = [s for s in secrets if len(s) < 16 or not SECRET_RUN.fullmatch(s)]
    lines_read = 0
    for path in paths:
        try:
            f = open(path, encoding="utf-8", errors="replace")
        except OSError:
            continue
        with f:
            for no, line in enumerate(f, 1):
                lines_read += 1
                for m in SECRET_RUN.finditer(line):
                    run = m.group(0)
                    for k in range(len(run) - 15):
                        for s, what in index.get(run[k:k + 16], ()):
                            if line.find(s, m.start() + k) == m.start() + k:
                                found.append((os.path.basename(path), no, what))
                for s in short:
                    if s in line:
                        found.append((os.path.basename(path), no, "stored secret"))
                for p in AUDIT_PATTERNS:
                    if p.search(line):
                        found.append((os.path.basename(path), no, "pattern " + p.pattern))
    return found, lines_read


LOG_TS = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\.(\d{3})")


def log_lines(path, needle):
    """(Unix time, line) of the log lines containing needle (oslo.log's default line format)."""
    out = []
    try:
        f = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return out
    with f:
        for line in f:
            if needle in line:
                m = LOG_TS.match(line)
                if m:
                    t = time.mktime(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S"))
                    out.append((t + int(m.group(2)) / 1000.0, line))
    return out


def log_times(path, needle):
    """Unix times of the log lines containing needle."""
    return [t for t, _ in log_lines(path, needle)]


def make_csr(out):
    key = os.path.join(out, "client.key")
    csr = os.path.join(out, "client.csr")
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                    "-out", csr, "-subj", "/CN=admin/O=system:masters"], check=True,
                   capture_output=True, timeout=60)
    with open(csr) as f:
        return f.read()


def percentile(xs, p):
    if not xs:
        return None
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p / 100.0 * len(xs)))], 2)


# ----------------------------------------------------------------- the drills

def seed(dep, n):
    def template(name, kube_tag):
        st, text, _ = request(dep.port, "POST", "/v1/clustertemplates", {
            "name": name, "image_id": "ubuntu-jammy", "external_network_id": "public",
            "coe": "kubernetes", "flavor_id": "m1.small", "master_flavor_id": "m1.small",
            "labels": {"kube_tag": kube_tag}})
        if st != 201:
            raise RuntimeError("template create: %s %s" % (st, text))
        return json.loads(text)["uuid"]

    t1 = template("drill-a", "v1.30.4")
    t2 = template("drill-b", "v1.31.1")
    uuids = []
    for i in range(n):
        st, text, _ = request(dep.port, "POST", "/v1/clusters", {
            "name": "seed%d" % i, "cluster_template_id": t1, "node_count": 1,
            "master_count": 1})
        if st != 202:
            raise RuntimeError("seed create: %s %s" % (st, text))
        uuids.append(json.loads(text)["uuid"])
    end = time.time() + 300
    while time.time() < end:
        rows = dep.sql("SELECT status, COUNT(*) FROM cluster GROUP BY status")
        done = dict(rows).get("CREATE_COMPLETE", 0)
        if done == n:
            break
        time.sleep(1)
    else:
        raise RuntimeError("seeded clusters not CREATE_COMPLETE after 300 s: %s" % (rows,))
    return t1, t2, uuids


def settle(load, watcher, seconds):
    end = time.time() + seconds
    while time.time() < end:
        with load.lock:
            if not load.busy:
                return True
        time.sleep(1)
    return False


def summarize(args, dep, load, watcher, t_load, faults, extra):
    ops = load.ops
    by_kind = collections.defaultdict(collections.Counter)
    for op in ops:
        by_kind[op.kind][op.outcome or "pending"] += 1
    lat = collections.defaultdict(list)
    for (t, kind, st, secs) in load.timeline:
        lat[kind].append(secs)
    answers = collections.Counter()
    for (kind, st), n in load.answers.items():
        answers[str(st)] += n
    lost = [op for op in ops if op.outcome is None]
    failed = [op for op in ops if op.outcome == "failed"]
    settle_times = [op.reached - op.answered for op in ops if op.reached]
    five = [b for b in load.bad if b["status"] is not None and b["status"] >= 500]
    fives = collections.Counter((b["status"], b["magnum_body"]) for b in five)
    result = {
        "drill": args.drill,
        "build": os.path.basename(os.path.normpath(args.bin)),
        "rate_asked": args.rate,
        "operations_sent": load.sent,
        "load_seconds": round(t_load, 1),
        "operations_per_second": round(load.sent / t_load, 1) if t_load else None,
        "answers": dict(sorted(answers.items())),
        "writes_accepted": len(ops),
        "writes_reached_final_state": sum(1 for op in ops if op.outcome == "reached"),
        "writes_failed": len(failed),
        "writes_lost": len(lost),
        "writes_by_kind": {k: dict(v) for k, v in sorted(by_kind.items())},
        "accepted_to_final_p50_p99_max_s": [percentile(settle_times, 50),
                                            percentile(settle_times, 99),
                                            percentile(settle_times, 100)],
        "answer_seconds_p50_p99_max": {k: [percentile(v, 50), percentile(v, 99),
                                           percentile(v, 100)] for k, v in sorted(lat.items())},
        "5xx": {"%s%s" % (s, "" if m else " (not Magnum's body)"): n
                for (s, m), n in fives.items()},
        "5xx_bodies": sorted({b["body"][:300] for b in five})[:10],
        "no_answer": [b for b in load.bad if b["status"] is None][:10],
        "faults": faults,
        "lost_detail": [{"kind": op.kind, "cluster": op.cluster, "target": str(op.target),
                         "answered": time.strftime("%H:%M:%S", time.gmtime(op.answered))}
                        for op in lost[:20]],
        "failed_detail": [{"kind": op.kind, "cluster": op.cluster} for op in failed[:20]],
        "processes_alive": dep.alive(),
        "watcher_db_errors": watcher.db_errors,
    }
    result.update(extra)
    return result


def run_drill(args):
    out = args.out or tempfile.mkdtemp(prefix="okdrill-")
    os.makedirs(out, exist_ok=True)
    log("output in %s" % out)
    extra_conf = ""
    if args.extra_conf:
        with open(args.extra_conf) as f:
            extra_conf = "\n" + f.read()
    if args.drill == "broker-cluster":
        # the three nodes as one transport URL, with quorum queues (OpenStack-Helm's setting
        # for RabbitMQ 4) unless --extra-conf says otherwise
        os.environ["OPENKEEL_TEST_RABBIT_URL"] = os.environ["OPENKEEL_TEST_RABBIT_CLUSTER_URL"]
        if "rabbit_quorum_queue" not in extra_conf:
            extra_conf += "\n[oslo_messaging_rabbit]\nrabbit_quorum_queue = true\n"
    dep = Deployment(out, args.bin, extra_conf=extra_conf, conductors=args.conductors)
    watcher = None
    ok = True
    try:
        dep.setup()
        csr = make_csr(out)
        t1, t2, uuids = seed(dep, args.seed_clusters)
        log("seeded %d clusters" % len(uuids))
        load = Load(dep, args.rate, t1, t2, csr, seed=args.seed)
        load.idle.extend(uuids)
        load.template_of.update({u: t1 for u in uuids})
        watcher = Watcher(dep, load)
        watcher.start()
        faults = []
        fault = FAULTS[args.drill]
        injector = threading.Thread(target=fault, args=(args, dep, load, faults), daemon=True)
        t0 = time.time()
        injector.start()
        t_load = load.run(args.duration)
        injector.join(600)
        load.stop_flag.set()
        left = load.join(CLIENT_TIMEOUT + 30)
        log("load done: %d sent in %.0f s; %d requests without an answer after %ds"
            % (load.sent, t_load, left, CLIENT_TIMEOUT + 30))
        settled = settle(load, watcher, args.settle)
        watcher.stop_flag.set()
        watcher.join(30)
        watcher.check(*watcher.snapshot())  # the last look
        extra = {"settled_within_s": args.settle if not settled else round(
            time.time() - t0 - t_load, 1)}
        bad_rows = table_check(dep)
        extra["table_check"] = bad_rows
        stuck = dep.sql("SELECT COUNT(*) FROM cluster WHERE status LIKE '%IN_PROGRESS'")[0][0]
        extra["clusters_in_progress_after"] = stuck
        alive = dep.alive()
        if args.drill == "broker-cluster":
            # what the drill's queues were: the conductor's topic, server and ordered queues
            # are quorum queues on the three nodes (its fanout queue is a transient classic
            # one, as oslo.messaging makes it)
            kinds = collections.Counter()
            for line in services("rabbit-cluster-queues", check=False).splitlines():
                f = line.split("\t") + ["", ""]
                if f[0].startswith(dep.exchange + "-"):
                    kinds["%s on %d nodes" % (f[1], f[2].count("@"))] += 1
            extra["queues"] = dict(kinds)
        dep.stop()
        secrets = secret_values(dep)
        found, n_lines = audit_logs(dep.log_files, secrets, csr)
        extra["log_audit"] = {"files": [os.path.basename(p) for p in dep.log_files],
                              "lines": n_lines, "secrets_checked": len(secrets),
                              "findings": found[:20]}
        panics = []
        for p in dep.log_files:
            with open(p, encoding="utf-8", errors="replace") as f:
                panics += [l.strip()[:300] for l in f if "panicked" in l]
        extra["panics"] = panics[:5]
        res = summarize(args, dep, load, watcher, t_load, faults, extra)
        res["processes_alive"] = alive
        res["output"] = out
        must = {
            "no write lost": res["writes_lost"] == 0,
            "no 500 (5xx only 503 with Magnum's body)": all(
                k == "503" for k in res["5xx"]),
            "every request answered": not res["no_answer"],
            "tables consistent": not bad_rows and stuck == 0,
            "log audit clean": not found,
            "no panic": not panics,
            "processes alive": all(res["processes_alive"].values()),
        }
        if args.drill == "mariadb":
            # a 500 while the database is away is what Magnum answers too (DBConnectionError);
            # after it is back (the API answered 200 again) none may remain
            windows = [f["window"] for f in faults]
            # a request is "during" when it was sent or answered inside an outage window
            after = [b for b in load.bad if b["status"] is not None and b["status"] >= 500
                     and not any(b["t"] >= w[0] - 1 and b["t"] - b["seconds"] <= w[1] + 1
                                 for w in windows)]
            res["5xx_after_recovery"] = len(after)
            res["5xx_after_recovery_bodies"] = sorted({b["body"][:300] for b in after})[:10]
            must["no 500 after recovery"] = not after
            must.pop("no 500 (5xx only 503 with Magnum's body)")
        for f in faults:
            f.pop("window", None)
        res["must"] = must
        print(json.dumps(res, indent=1, sort_keys=False))
        for k, v in must.items():
            log("%s %s" % ("ok  " if v else "FAIL", k))
        ok = all(must.values())
    finally:
        if watcher:
            watcher.stop_flag.set()
        dep.stop()
        if not args.keep_db:
            dep.drop()
        # its queues (the durable and quorum ones would be recovered at every later restart)
        services("rabbit-cluster-delete-queues" if args.drill == "broker-cluster"
                 else "rabbit-delete-queues", dep.exchange + "-", check=False)
    return 0 if ok else 1


# ----------------------------------------------------------------- faults

def wait_reconnected(dep, since, procs, needle, limit=60):
    """Seconds from `since` until each process logged `needle` after it (None: never)."""
    out = {}
    end = time.time() + limit
    while time.time() < end and len(out) < len(procs):
        for name in procs:
            if name in out:
                continue
            ts = [t for t in log_times(os.path.join(dep.out, "%s.log" % name), needle)
                  if t >= since - 0.001]
            if ts:
                out[name] = round(ts[0] - since, 2)
        time.sleep(0.2)
    return {n: out.get(n) for n in procs}


def broker_fault(args, dep, load, faults):
    time.sleep(args.warmup)
    for i in range(args.cycles):
        t_stop = time.time()
        services("rabbit-stop-app")
        stopped = time.time()
        time.sleep(max(0.0, args.down - (time.time() - stopped)))
        asked = time.time()
        services("rabbit-start-app")
        back = time.time()
        procs = ["api"] + dep.conductor_names
        # measured from the start_app call: the broker listens before start_app returns, and
        # a process can be connected again by then
        rec = wait_reconnected(dep, asked, procs, "connected to the AMQP broker")
        # the conductor is back when its RPC server consumes again
        listen = wait_reconnected(dep, asked, dep.conductor_names, "RPC server listening")
        faults.append({"cycle": i + 1, "stopped_at": time.strftime("%H:%M:%S", time.gmtime(t_stop)),
                       "stop_took_s": round(stopped - t_stop, 1),
                       "down_s": round(back - stopped, 1),
                       "start_app_took_s": round(back - stopped - args.down, 1),
                       "reconnected_after_s": rec, "conductor_listening_after_s": listen})
        log("broker cycle %d: back, reconnected after %s, listening after %s (from the start_app call)"
            % (i + 1, rec, listen))
        if i + 1 < args.cycles:
            time.sleep(args.up)
    time.sleep(args.tail)
    load.stop_flag.set()


def log_connects(path, since):
    """(time, broker) of the "connected to the AMQP broker" lines at or after `since`."""
    out = []
    for t, line in log_lines(path, "connected to the AMQP broker"):
        b = re.search(r"broker=(\S+)", line)
        if b and t >= since - 0.001:
            out.append((t, b.group(1)))
    return out


def cluster_fault(args, dep, load, faults):
    """SIGKILL one node of the three-node RabbitMQ cluster (quorum queues) per cycle, a
    different one each time, and start it again after --down seconds."""
    time.sleep(args.warmup)
    procs = ["api"] + dep.conductor_names
    for i in range(args.cycles):
        node = i % 3 + 1
        port = 25800 + node
        t_kill = time.time()
        services("rabbit-node-kill", str(node))
        # the processes' connections that went with the node come back on another node
        time.sleep(args.down)
        moved = {}
        for name in procs:
            after = log_connects(os.path.join(dep.out, "%s.log" % name), t_kill)
            moved[name] = [[round(t - t_kill, 2), b] for t, b in after]
        running = services("rabbit-cluster-running", str(node % 3 + 1), check=False).split()
        asked = time.time()
        services("rabbit-node-start", str(node))
        back = time.time()
        rejoined = services("rabbit-cluster-running", str(node), check=False).split()
        faults.append({"cycle": i + 1, "killed_node": node, "killed_port": port,
                       "killed_at": time.strftime("%H:%M:%S", time.gmtime(t_kill)),
                       "nodes_running_while_down": len(running),
                       "down_s": round(asked - t_kill, 1),
                       "node_start_took_s": round(back - asked, 1),
                       "nodes_running_after": len(rejoined),
                       "reconnects_while_down_s_broker": moved})
        log("cluster cycle %d: node %d killed, %d nodes running while it was down; "
            "reconnects (s after the kill, broker): %s; back after %.1f s, %d nodes running"
            % (i + 1, node, len(running), moved, back - asked, len(rejoined)))
        if i + 1 < args.cycles:
            time.sleep(args.up)
    time.sleep(args.tail)
    load.stop_flag.set()


def mariadb_fault(args, dep, load, faults):
    time.sleep(args.warmup)
    for i in range(args.cycles):
        t_stop = time.time()
        services("mysql-stop")
        stopped = time.time()
        time.sleep(max(0.0, args.down - (time.time() - stopped)))
        services("mysql-start")
        back = time.time()
        # the first 2xx through the API after the database is back (a read that needs it)
        first = None
        while time.time() - back < 60:
            st, _, _ = request(dep.port, "GET", "/v1/clusters?limit=1", timeout=30)
            if st == 200:
                first = round(time.time() - back, 2)
                break
            time.sleep(0.2)
        faults.append({"cycle": i + 1, "stopped_at": time.strftime("%H:%M:%S", time.gmtime(t_stop)),
                       "stop_took_s": round(stopped - t_stop, 1),
                       "down_s": round(back - stopped, 1), "api_answers_200_after_s": first,
                       "window": [t_stop, back + (first if first is not None else 60)]})
        log("mariadb cycle %d: back, API 200 after %s s" % (i + 1, first))
        if i + 1 < args.cycles:
            time.sleep(args.up)
    time.sleep(args.tail)
    load.stop_flag.set()


def conductor_fault(args, dep, load, faults):
    """SIGKILL the conductor while operations of each kind are in progress, restart it."""
    time.sleep(args.warmup)
    kinds = ["create", "resize", "upgrade", "delete", "update", "ng_create"]
    for i in range(args.cycles):
        with load.lock:
            in_flight = collections.Counter(op.kind for op in load.busy.values())
        name = dep.conductor_names[i % len(dep.conductor_names)]
        t = time.time()
        dep.kill(name)
        time.sleep(args.down)
        dep.start_conductor(name)
        rec = wait_reconnected(dep, t, [name], "RPC server listening")
        faults.append({"cycle": i + 1, "killed": name,
                       "accepted_ops_in_flight": {k: in_flight.get(k, 0) for k in kinds},
                       "listening_again_after_kill_s": rec[name]})
        log("conductor cycle %d: killed %s with %s in flight; listening again after %s s"
            % (i + 1, name, dict(in_flight), rec[name]))
        if i + 1 < args.cycles:
            time.sleep(args.up)
    time.sleep(args.tail)
    load.stop_flag.set()


FAULTS = {"broker": broker_fault, "broker-cluster": cluster_fault, "mariadb": mariadb_fault,
          "conductor": conductor_fault}

DEFAULTS = {
    # rate, cycles, down, up, warmup, tail, conductors
    "broker": (50, 5, 10, 20, 15, 15, 1),
    "broker-cluster": (50, 3, 10, 20, 15, 15, 1),
    "mariadb": (50, 3, 10, 20, 15, 15, 1),
    "conductor": (30, 4, 3, 15, 15, 15, 1),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("drill", choices=sorted(FAULTS))
    ap.add_argument("--rate", type=float)
    ap.add_argument("--cycles", type=int)
    ap.add_argument("--down", type=float, help="seconds the dependency is away per cycle")
    ap.add_argument("--up", type=float, help="seconds between cycles")
    ap.add_argument("--warmup", type=float)
    ap.add_argument("--tail", type=float)
    ap.add_argument("--conductors", type=int)
    ap.add_argument("--seed-clusters", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=180,
                    help="seconds to wait for accepted operations after the load")
    ap.add_argument("--bin", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug"))
    ap.add_argument("--out")
    ap.add_argument("--keep-db", action="store_true")
    ap.add_argument("--extra-conf", metavar="FILE",
                    help="appended to both processes' magnum.conf (e.g. an "
                         "[oslo_messaging_rabbit] section with rabbit_quorum_queue = true)")
    args = ap.parse_args()
    d = DEFAULTS[args.drill]
    for name, v in zip(("rate", "cycles", "down", "up", "warmup", "tail", "conductors"), d):
        if getattr(args, name) is None:
            setattr(args, name, v)
    # the load runs until the injector is done (bounded by its cycles), at most this long
    args.duration = args.warmup + args.cycles * (args.down + args.up + 60) + args.tail
    for v in ("OPENKEEL_TEST_MYSQL_URL", "OPENKEEL_TEST_RABBIT_URL"):
        if not os.environ.get(v):
            sys.exit("%s is not set: eval \"$(tests/drills/services.sh env)\"" % v)
    if args.drill == "broker-cluster":
        if not os.environ.get("OPENKEEL_TEST_RABBIT_CLUSTER_URL"):
            sys.exit("OPENKEEL_TEST_RABBIT_CLUSTER_URL is not set: "
                     "eval \"$(tests/drills/services.sh env)\"")
        running = services("rabbit-cluster-running", check=False).split()
        if len(running) != 3:
            sys.exit("the three-node RabbitMQ cluster is not running (%s): "
                     "tests/drills/services.sh rabbit-cluster-start" % (running or "no node"))
    if os.environ.get("OPENKEEL_TEST_HOME", "/var/tmp/openkeel-test").rstrip("/") == \
            "/var/tmp/openkeel-test":
        sys.exit("the drills stop and kill their services: not on the shared test home "
                 "(tests/drills/services.sh start; eval \"$(tests/drills/services.sh env)\")")
    sys.exit(run_drill(args))


if __name__ == "__main__":
    main()
