"""Cluster-create benchmark driver for bench/create.sh (run with the test venv's Python, which has
Magnum 23.0.0). A benchmark, not a test: the figures depend on the machine and its load.

    python bench/create_bench.py keygen [--keys 40] [--sets 10]
        Python cryptography (Magnum's) RSA-2048 key generation per key, and one cluster's
        certificate set per cluster through magnum.common.x509.operations (three CAs and the
        client certificate signed by the first, keys encrypted as Magnum stores them), and
        Magnum's conductor-side magnum.conductor.handlers.common.cert_manager.
        generate_certificates_to_cluster (the certificates kept in memory). Prints one
        JSON line.

    python bench/create_bench.py creates --config-file magnum.conf --impl NAME -- CMD...
        Starts the conductor CMD (its own process group; it reads the same magnum.conf), waits
        until it consumes [conductor] topic, creates a cluster template, then casts
        `cluster_create` exactly as magnum-api does (Magnum's own conductor API and objects)
        and listens for the conductor's `magnum.cluster.create` notification with outcome
        `pending` ([oslo_messaging_notifications] topics). Cases: 1 create at a time
        (--single times) and --concurrency creates cast at once (--batches times). For each
        create: cast -> pending notification (as the caster sees it). For each case: the
        conductor's CPU (its process tree, user + system, from /proc) from the first cast until
        it is idle again after the last notification, per create. Prints one JSON line per
        case.
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid

TICK = os.sysconf("SC_CLK_TCK")


def stats_ms(values):
    v = sorted(values)
    n = len(v)
    return {
        "n": n,
        "median_ms": v[n // 2],
        "p90_ms": v[min(n * 9 // 10, n - 1)],
        "min_ms": v[0],
        "max_ms": v[-1],
        "mean_ms": statistics.fmean(v),
    }


# ----------------------------------------------------------------------------------- keygen

def cmd_keygen(a):
    from cryptography.hazmat.primitives.asymmetric import rsa
    from magnum.common.x509 import operations

    import magnum.conf
    magnum.conf.CONF([], project="magnum")  # [x509] defaults (rsa_key_size 2048)
    bits = magnum.conf.CONF.x509.rsa_key_size
    cpu0 = time.thread_time()
    key_ms = []
    for _ in range(a.keys):
        t = time.perf_counter()
        rsa.generate_private_key(public_exponent=65537, key_size=bits)
        key_ms.append((time.perf_counter() - t) * 1000)
    key_cpu = (time.thread_time() - cpu0) * 1000 / a.keys
    cpu0 = time.thread_time()
    set_ms = []
    for _ in range(a.sets):
        t = time.perf_counter()
        issuer = "bench-cluster"
        ca = operations.generate_ca_certificate(issuer, encryption_password="abcdefghijkl")
        operations.generate_ca_certificate(issuer, encryption_password="abcdefghijkm")
        operations.generate_ca_certificate(issuer, encryption_password="abcdefghijkn")
        operations.generate_client_certificate(
            issuer, "admin", "system:masters", ca["private_key"],
            encryption_password="abcdefghijko", ca_key_password="abcdefghijkl")
        set_ms.append((time.perf_counter() - t) * 1000)
    set_cpu = (time.thread_time() - cpu0) * 1000 / a.sets
    # The conductor's own function. Its certificates are kept in a dict: Magnum's `local` cert
    # manager cannot store them under Python 3 (it writes the PEM bytes to a text-mode file:
    # TypeError), and `x509keypair` needs the database (OpenKeel's side stores them as files).
    import types
    from magnum.common import cert_manager as backends
    from magnum.conductor.handlers.common import cert_manager
    stored = {}

    def store_cert(certificate, private_key, intermediates=None,
                   private_key_passphrase=None, **kwargs):
        ref = str(uuid.uuid4())
        stored[ref] = (certificate, private_key, intermediates, private_key_passphrase)
        return ref

    memory = types.SimpleNamespace(CertManager=types.SimpleNamespace(store_cert=store_cert))
    backends.get_backend = lambda: memory
    cluster = types.SimpleNamespace(name="bench-cluster", uuid=str(uuid.uuid4()))
    cpu0 = time.process_time()
    conductor_ms = []
    for _ in range(a.sets):
        t = time.perf_counter()
        cert_manager.generate_certificates_to_cluster(cluster)
        conductor_ms.append((time.perf_counter() - t) * 1000)
    conductor_cpu = (time.process_time() - cpu0) * 1000 / a.sets
    from cryptography.hazmat.backends.openssl import backend
    print(json.dumps({
        "implementation": "magnum",
        "library": "cryptography + " + backend.openssl_version_text(),
        "bits": bits,
        "key": stats_ms(key_ms),
        "key_cpu_ms_mean": key_cpu,
        "cluster_set": stats_ms(set_ms),
        "cluster_set_cpu_ms_mean": set_cpu,
        "conductor_certs": stats_ms(conductor_ms),
        "conductor_certs_cpu_ms_mean": conductor_cpu,
    }))


# ---------------------------------------------------------------------------------- creates

def tree_pids(root):
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(rest[1]), []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def cpu_seconds(root):
    total = 0
    for p in tree_pids(root):
        try:
            with open(f"/proc/{p}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            total += int(rest[11]) + int(rest[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return total / TICK


def machine_busy():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v) - idle, sum(v)


def rss_kib(root):
    total = 0
    for p in tree_pids(root):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total


class Pending:
    """The `magnum.cluster.create` notifications seen, by cluster uuid and outcome."""

    def __init__(self):
        self.cond = threading.Condition()
        self.seen = {}  # (uuid, outcome) -> monotonic time

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        self._record(event_type, payload)

    def error(self, ctxt, publisher_id, event_type, payload, metadata):
        self._record(event_type, payload)

    def _record(self, event_type, payload):
        now = time.monotonic()
        if event_type != "magnum.cluster.create" or not isinstance(payload, dict):
            return
        target = payload.get("target") or {}
        key = (str(target.get("id")), str(payload.get("outcome")))
        with self.cond:
            self.seen.setdefault(key, now)
            self.cond.notify_all()

    def wait(self, uuids, outcome, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                missing = [u for u in uuids if (u, outcome) not in self.seen]
                failed = [u for u in uuids if (u, "failure") in self.seen]
                if failed:
                    raise SystemExit(f"create failed (failure notification) for {failed}")
                if not missing:
                    return {u: self.seen[(u, outcome)] for u in uuids}
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SystemExit(f"no {outcome} notification within {timeout} s for "
                                     f"{len(missing)} clusters")
                self.cond.wait(left)


def wait_idle(root, quiet=0.5, limit=30.0):
    """Until the process tree has used no CPU for `quiet` seconds (bounded)."""
    deadline = time.monotonic() + limit
    last = cpu_seconds(root)
    while time.monotonic() < deadline:
        time.sleep(quiet)
        now = cpu_seconds(root)
        if now == last:
            return now
        last = now
    return last


def consumers(url, queue):
    import kombu
    with kombu.Connection(url, connect_timeout=10) as c:
        try:
            _, _, n = c.default_channel.queue_declare(queue=queue, passive=True)
            return n
        except Exception:  # the queue does not exist yet
            return 0


def cmd_creates(a):
    import magnum.conf
    from oslo_log import log as logging
    conf = magnum.conf.CONF
    logging.register_options(conf)
    conf(["--config-file", a.config_file], project="magnum")
    import oslo_messaging as messaging
    from magnum.common import context as mcontext
    from magnum.common import rpc
    from magnum.conductor import api as conductor_api
    from magnum import objects
    rpc.init(conf)

    topic = conf.conductor.topic
    ctx = mcontext.RequestContext(user_id="bench-user", project_id="bench-project",
                                  roles=["admin", "member", "reader"], is_admin=True,
                                  auth_token="bench-token")
    tmpl = objects.ClusterTemplate(
        ctx, uuid=str(uuid.uuid4()), name=f"bench-{a.impl}-{os.getpid()}",
        project_id="bench-project", user_id="bench-user", coe="kubernetes",
        server_type="vm", cluster_distro="ubuntu", image_id="bench-image",
        keypair_id="bench-key", external_network_id="public", network_driver="flannel",
        volume_driver=None, docker_storage_driver="overlay2", master_flavor_id="m1.small",
        flavor_id="m1.small", labels={}, public=False, hidden=False, tls_disabled=False,
        registry_enabled=False, master_lb_enabled=False, floating_ip_enabled=True)
    tmpl.create()

    pending = Pending()
    listener = messaging.get_notification_listener(
        messaging.get_notification_transport(conf),
        [messaging.Target(topic=t) for t in conf.oslo_messaging_notifications.topics],
        [pending], executor="threading")
    listener.start()

    log = open(os.path.join(a.log_dir, f"conductor-{a.impl}.log"), "ab")
    proc = subprocess.Popen(a.cmd, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        url = conf.transport_url.replace("rabbit://", "amqp://", 1)
        deadline = time.monotonic() + 120
        while consumers(url, topic) == 0:
            if proc.poll() is not None:
                raise SystemExit(f"{a.impl} conductor exited ({proc.returncode}); see its log")
            if time.monotonic() > deadline:
                raise SystemExit(f"{a.impl} conductor does not consume {topic}")
            time.sleep(0.2)
        rpcapi = conductor_api.API(context=ctx, topic=topic)
        seq = [0]

        def new_cluster():
            seq[0] += 1
            c = objects.Cluster(
                ctx, name=f"bench-{a.impl}-{seq[0]}", project_id="bench-project",
                user_id="bench-user", cluster_template_id=tmpl.uuid, keypair="bench-key",
                labels={}, create_timeout=60, discovery_url=None, docker_volume_size=None,
                master_flavor_id="m1.small", flavor_id="m1.small", fixed_network=None,
                fixed_subnet=None, floating_ip_enabled=True, master_lb_enabled=False,
                coe_version=None, container_version=None)
            c.uuid = str(uuid.uuid4())
            return c

        def case(n):
            wait_idle(proc.pid)
            cpu0 = cpu_seconds(proc.pid)
            busy0, total0 = machine_busy()
            clusters = [new_cluster() for _ in range(n)]
            cast_at = {}
            t0 = time.monotonic()
            for c in clusters:
                cast_at[c.uuid] = time.monotonic()
                rpcapi.cluster_create_async(c, 1, 1, 60)
            seen = pending.wait(list(cast_at), "pending", a.timeout)
            last = max(seen.values())
            busy1, total1 = machine_busy()
            cpu1 = wait_idle(proc.pid)
            # the machine's CPU use (all cores) from the first cast to the last notification
            busy.append((busy1 - busy0) / max(total1 - total0, 1))
            return ([(seen[u] - cast_at[u]) * 1000 for u in cast_at],
                    (last - t0) * 1000, cpu1 - cpu0)

        busy = []
        case(1)  # warm-up (connections, caches), not reported
        busy.clear()
        rss_before = rss_kib(proc.pid)
        lat, cpu = [], 0.0
        for _ in range(a.single):
            l, _, c = case(1)
            lat += l
            cpu += c
        print(json.dumps({"implementation": a.impl, "case": "1 create", "creates": a.single,
                          "latency": stats_ms(lat), "cpu_ms_per_create": cpu * 1000 / a.single,
                          "machine_busy": statistics.fmean(busy), "round": a.round,
                          "rss_kib": rss_kib(proc.pid), "rss_kib_at_start": rss_before}),
              flush=True)
        lat, cpu, spans = [], 0.0, []
        busy.clear()
        for _ in range(a.batches):
            l, span, c = case(a.concurrency)
            lat += l
            cpu += c
            spans.append(span)
        print(json.dumps({"implementation": a.impl,
                          "case": f"{a.concurrency} concurrent creates",
                          "creates": a.concurrency * a.batches, "latency": stats_ms(lat),
                          "batch_ms": stats_ms(spans),
                          "cpu_ms_per_create": cpu * 1000 / (a.concurrency * a.batches),
                          "machine_busy": statistics.fmean(busy), "round": a.round,
                          "rss_kib": rss_kib(proc.pid)}), flush=True)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        except ProcessLookupError:
            pass
        listener.stop()
        listener.wait()


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd_name", required=True)
    k = sub.add_parser("keygen")
    k.add_argument("--keys", type=int, default=40)
    k.add_argument("--sets", type=int, default=10)
    c = sub.add_parser("creates")
    c.add_argument("--config-file", required=True)
    c.add_argument("--impl", required=True)
    c.add_argument("--log-dir", required=True)
    c.add_argument("--single", type=int, default=10)
    c.add_argument("--concurrency", type=int, default=20)
    c.add_argument("--batches", type=int, default=2)
    c.add_argument("--timeout", type=float, default=300)
    c.add_argument("--round", type=int, default=1)
    c.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    if a.cmd_name == "keygen":
        cmd_keygen(a)
    else:
        if a.cmd and a.cmd[0] == "--":
            a.cmd = a.cmd[1:]
        cmd_creates(a)


if __name__ == "__main__":
    sys.exit(main())
