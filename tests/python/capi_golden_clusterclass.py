"""Print the ClusterClass objects magnum-cluster-api 0.38.2 applies, as JSON, from its OWN code.

magnum-cluster-api builds the ClusterClass `magnum-<version>` and its four templates in its
Rust extension (`magnum_cluster_api.magnum_cluster_api.Driver.apply_cluster_class`, the step
`create_cluster` and `upgrade_cluster` both start with). That code talks to the Kubernetes API
with kube-rs, reading the ambient kubeconfig. This script points it at a recording stand-in of
the Kubernetes API served on loopback by this very process (no real server is involved): every
GET answers 404, so kube-rs takes its create path and POSTs each object; the stand-in records the
request bodies and echoes them back.

Output (stdout), one JSON document:
  {"package_version": "0.38.2",
   "cluster_class_name": <the extension's CLUSTER_CLASS_NAME>,
   "requests": [{"method", "path"}, ...],      every request, in order
   "objects": [<POST body>, ...]}              the applied objects, in order

Used by crates/driver-capi/tests/golden_clusterclass.rs to compare OpenKeel's objects with
these, object by object.
"""
import http.server
import json
import os
import sys
import tempfile
import threading
from importlib import metadata

# magnum-cluster-api is installed beside the venv, not in it (tests/python/requirements-capi.txt)
sys.path.insert(0, os.path.join(sys.prefix, "capi-site"))

WANTED_VERSION = "0.38.2"


class Recorder(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = []
    objects = []
    lock = threading.Lock()

    def log_message(self, *args):  # keep stderr quiet
        pass

    def _reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _record(self):
        with self.lock:
            self.requests.append({"method": self.command, "path": self.path})

    def do_GET(self):
        self._record()
        name = self.path.split("?")[0].rstrip("/").rsplit("/", 1)[-1]
        self._reply(404, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'"{name}" not found', "reason": "NotFound",
            "details": {"name": name}, "code": 404,
        })

    def do_POST(self):
        self._record()
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        with self.lock:
            self.objects.append(body)
        echo = json.loads(json.dumps(body))
        echo.setdefault("metadata", {})["resourceVersion"] = "1"
        echo["metadata"]["uid"] = "00000000-0000-0000-0000-000000000001"
        self._reply(201, echo)

    def _refuse(self):
        self._record()
        self._reply(405, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                          "message": "the recording stand-in only serves GET and POST",
                          "reason": "MethodNotAllowed", "code": 405})

    do_PUT = do_PATCH = do_DELETE = _refuse


def main():
    version = metadata.version("magnum-cluster-api")
    if version != WANTED_VERSION:
        sys.exit(f"magnum-cluster-api {version} is installed; this oracle wants {WANTED_VERSION}")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]

    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = os.path.join(tmp, "kubeconfig")
        with open(kubeconfig, "w") as f:
            json.dump({
                "apiVersion": "v1", "kind": "Config",
                "clusters": [{"name": "recorder",
                              "cluster": {"server": f"http://127.0.0.1:{port}"}}],
                "users": [{"name": "recorder", "user": {"token": "recorder"}}],
                "contexts": [{"name": "recorder",
                              "context": {"cluster": "recorder", "user": "recorder"}}],
                "current-context": "recorder",
            }, f)
        # kube-rs reads the kubeconfig when the extension builds its shared client
        os.environ["KUBECONFIG"] = kubeconfig
        for var in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT",
                    "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY",
                    "all_proxy"):
            os.environ.pop(var, None)
        os.environ["NO_PROXY"] = "127.0.0.1"

        # the Rust extension alone: the Python driver around it needs Magnum's configuration
        from magnum_cluster_api import magnum_cluster_api as ext

        # the namespace magnum_cluster_api/driver.py gives it (BaseDriver.__init__)
        driver = ext.Driver("magnum-system")
        driver.apply_cluster_class()

    server.shutdown()
    json.dump({
        "package_version": version,
        "cluster_class_name": ext.CLUSTER_CLASS_NAME,
        "requests": Recorder.requests,
        "objects": Recorder.objects,
    }, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
