"""The RPC benchmark's Python side: the real oslo.messaging (as Magnum 23.0.0 uses it, from the
test venv) with the same protocol as crates/rpc/examples/rpc_bench.rs:

    python oslo_rpc_bench.py server <transport_url> <topic>
    python oslo_rpc_bench.py client <transport_url> <topic> <calls> <casts>

Control exchange `magnum`, as Magnum sets it. Prints one JSON line (client).
"""
import json
import sys
import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging


class Bench:
    def __init__(self):
        self.ticks = 0
        self.lock = threading.Lock()

    def echo(self, ctxt, **kwargs):
        return kwargs

    def tick(self, ctxt):
        with self.lock:
            self.ticks += 1

    def count(self, ctxt):
        return self.ticks


def transport(url):
    # The global CONF, as Magnum's services use it (oslo.messaging registers some of its
    # options there at import time).
    conf = cfg.CONF
    conf([], project="bench")
    messaging.set_transport_defaults(control_exchange="magnum")
    return messaging.get_rpc_transport(conf, url=url)


def pct(sorted_vals, p):
    if not sorted_vals:
        return 0.0
    i = round((len(sorted_vals) - 1) * p)
    return sorted_vals[min(i, len(sorted_vals) - 1)]


def main():
    mode, url, topic = sys.argv[1], sys.argv[2], sys.argv[3]
    t = transport(url)
    if mode == "server":
        target = messaging.Target(topic=topic, server="bench-py")
        server = messaging.get_rpc_server(t, target, [Bench()], executor="threading")
        server.start()
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            server.stop()
            server.wait()
        return
    calls, casts = int(sys.argv[4]), int(sys.argv[5])
    client = messaging.get_rpc_client(t, messaging.Target(topic=topic))
    ctxt = {"user_id": "bench", "project_id": "bench", "roles": ["admin"]}
    for _ in range(20):
        client.call(ctxt, "echo")
    base = client.call(ctxt, "count")
    lat = []
    t0 = time.perf_counter()
    for i in range(calls):
        s = time.perf_counter()
        client.call(ctxt, "echo", i=i)
        lat.append((time.perf_counter() - s) * 1000.0)
    calls_elapsed = time.perf_counter() - t0
    lat.sort()
    t1 = time.perf_counter()
    for _ in range(casts):
        client.cast(ctxt, "tick")
    published = time.perf_counter() - t1
    while client.call(ctxt, "count") < base + casts:
        time.sleep(0.005)
    consumed = time.perf_counter() - t1
    print(json.dumps({
        "client": "oslo.messaging",
        "calls": calls,
        "call_p50_ms": pct(lat, 0.5),
        "call_p99_ms": pct(lat, 0.99),
        "calls_per_s": calls / calls_elapsed,
        "casts": casts,
        "casts_published_per_s": casts / published,
        "casts_consumed_per_s": casts / consumed,
    }))


if __name__ == "__main__":
    main()
