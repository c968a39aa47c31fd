"""Golden objects from magnum-cluster-api's own code (the oracle of
crates/driver-capi/tests/golden_cluster.rs).

Reads one case (JSON, stdin): the Magnum cluster, its template and nodegroups, and what the
OpenStack look-ups answer; prints (JSON, stdout) the management-cluster objects that
magnum-cluster-api 0.38.2 builds for it:

* ``cluster``: ``resources.Cluster(...).get_resource()`` (the ``Cluster <stack_id>``);
* ``cloud_config``: ``resources.CloudConfigSecret``;
* ``ca_secrets``: the four ``CertificateAuthoritySecret`` objects;
* ``legacy_secret`` / ``cloud_provider_secret``: the two addon Secrets;
* ``rust_writes``: what the Rust extension's ``Driver.create_cluster`` writes (namespace,
  ClusterClass and templates, the two ClusterResourceSets), recorded by a fake Kubernetes API
  on loopback;
* ``helm``: the arguments and values of every ``helm template`` (``rust``: all runs of the
  ``helm`` program, recorded by a wrapper on PATH that runs the real helm named by
  ``OPENKEEL_GOLDEN_HELM``; ``python``: the stubbed Python helm calls when there is no real
  helm, in which case the wrapper prints a stand-in rendering).

Nothing talks to a real server: the OpenStack clients, Neutron/Glance look-ups and the
certificate manager are mocked with the case's answers; the Kubernetes API is a loopback fake
that answers 404 to GETs of single objects, empty lists to LISTs, and echoes writes.

``--parse-yaml`` instead reads a JSON object of strings and prints each parsed with PyYAML
(``safe_load_all``), so the Rust test compares YAML documents, not their layout.
"""

import base64
import http.server
import json
import os
import stat
import sys
import tempfile
import threading
import types
from unittest import mock

# magnum-cluster-api is installed beside the venv, not in it (tests/python/requirements-capi.txt)
sys.path.insert(0, os.path.join(sys.prefix, "capi-site"))


def parse_yaml():
    import yaml

    docs = json.load(sys.stdin)
    json.dump(
        {k: [d for d in yaml.safe_load_all(v) if d is not None] for k, v in docs.items()},
        sys.stdout,
    )


class FakeKube(http.server.BaseHTTPRequestHandler):
    writes = []
    reads = []

    def log_message(self, *args):
        pass

    def _send(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path.split("?")[0].rstrip("/")
        parts = path.strip("/").split("/")
        # /api/v1/namespaces/<ns>/<plural> or /apis/<group>/<version>/namespaces/<ns>/<plural>
        base = 2 if parts[0] == "api" else 3
        FakeKube.reads.append(path)
        if len(parts) == base + 3 and parts[base] == "namespaces":
            self._send(200, {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": []})
            return
        self._send(404, {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                         "reason": "NotFound", "code": 404, "message": "not found"})

    def _write(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length) or b"{}")
        FakeKube.writes.append({"verb": self.command, "path": self.path.split("?")[0], "body": body})
        body.setdefault("metadata", {})["resourceVersion"] = "1"
        self._send(201, body)

    do_POST = _write
    do_PUT = _write
    do_PATCH = _write


def start_fake_kube(tmp):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FakeKube)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    kubeconfig = os.path.join(tmp, "kubeconfig")
    with open(kubeconfig, "w") as f:
        json.dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "fake",
            "clusters": [{"name": "fake", "cluster": {"server": "http://127.0.0.1:%d" % server.server_port}}],
            "users": [{"name": "fake", "user": {"token": "fake"}}],
            "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": "magnum-system"}}],
        }, f)
    os.environ["KUBECONFIG"] = kubeconfig
    return server


def recording_helm(tmp):
    """A `helm` on PATH that records its arguments and the values it is given, then runs the
    real helm named by OPENKEEL_GOLDEN_HELM with them (or, without one, prints a stand-in
    rendering)."""
    log = os.path.join(tmp, "helm.log")
    script = os.path.join(tmp, "helm")
    with open(script, "w") as f:
        f.write(
            "#!%s\n"
            "import json, os, subprocess, sys\n"
            "args = sys.argv[1:]\n"
            "stdin = sys.stdin.read()\n"
            "values = []\n"
            "for i, a in enumerate(args):\n"
            "    if a in ('-f', '--values') and i + 1 < len(args):\n"
            "        p = args[i + 1]\n"
            "        values.append(stdin if p == '-' else open(p).read())\n"
            "with open(%r, 'a') as log:\n"
            "    log.write(json.dumps({'args': args, 'values': values}) + '\\n')\n"
            "real = os.environ.get('OPENKEEL_GOLDEN_HELM')\n"
            "if not real:\n"
            "    print('---\\n# rendered by the stand-in helm\\n')\n"
            "    sys.exit(0)\n"
            "r = subprocess.run([real] + args, input=stdin.encode(), capture_output=True)\n"
            "sys.stdout.write(r.stdout.decode())\n"
            "sys.stderr.write(r.stderr.decode())\n"
            "sys.exit(r.returncode)\n" % (sys.executable, log)
        )
    os.chmod(script, os.stat(script).st_mode | stat.S_IEXEC)
    os.environ["PATH"] = tmp + os.pathsep + os.environ.get("PATH", "")
    return log


def main():
    case = json.load(sys.stdin)
    tmp = tempfile.mkdtemp(prefix="capi-golden-")
    start_fake_kube(tmp)
    helm_log = recording_helm(tmp)

    from oslo_config import cfg

    import magnum.conf  # noqa: F401  (registers Magnum's options)
    from magnum_cluster_api import conf as mcapi_conf  # noqa: F401

    CONF = cfg.CONF
    CONF([], project="magnum")
    opts = case.get("conf", {})
    for group, values in opts.items():
        for name, value in values.items():
            CONF.set_override(name, value, group=group)

    from magnum_cluster_api import clients, helm, resources, utils
    from magnum_cluster_api import magnum_cluster_api as rust
    from magnum.common import neutron
    from magnum.common import utils as magnum_utils
    from magnum.conductor.handlers.common import cert_manager as cert_handlers

    cloud = case["cloud"]
    flavors = [types.SimpleNamespace(**f) for f in cloud["flavors"]]
    volume_types = [types.SimpleNamespace(name=n) for n in cloud["volume_types"]]
    default_vt = types.SimpleNamespace(name=cloud["default_volume_type"])

    class FakeOsc:
        def __init__(self, *a, **k):
            pass

        def list_flavors(self):
            return flavors

        def get_default_volume_type(self):
            return default_vt

        def list_volume_types(self):
            return volume_types

        def url_for(self, service_type, interface):
            return cloud["auth_url"][interface]

        def is_service_enabled(self, service_type):
            return service_type in cloud["services"]

    def ensure_server_group(name, ctx, policies=None, project_id=None):
        return cloud["server_groups"][name]

    t = case["template"]
    template = types.SimpleNamespace(**t)
    c = case["cluster"]
    nodegroups = []
    for ng in case["nodegroups"]:
        nodegroups.append(types.SimpleNamespace(**ng))
    cluster = types.SimpleNamespace(**c, cluster_template=template, nodegroups=nodegroups)
    cluster.default_ng_master = [n for n in nodegroups if n.role == "master"][0]
    cluster.save = lambda: None

    certs = case["certs"]

    def cert(kind):
        return types.SimpleNamespace(
            get_certificate=lambda: certs[kind]["cert"].encode(),
            get_private_key=lambda: certs[kind]["key"].encode(),
            get_private_key_passphrase=lambda: None,
        )

    patches = [
        mock.patch.object(clients, "get_openstack_api", lambda ctx: FakeOsc()),
        mock.patch.object(utils, "lookup_image", lambda osc, ref: cloud["images"][ref]),
        mock.patch.object(utils, "_ensure_server_group", ensure_server_group),
        mock.patch.object(neutron, "get_external_network_id", lambda ctx, ref: cloud["external_network_id"]),
        mock.patch.object(neutron, "get_fixed_subnet_id", lambda ctx, ref: cloud["fixed_subnet_id"] if ref else None),
        mock.patch.object(neutron, "get_network", lambda ctx, ref, **kw: cloud["fixed_network_id"]),
        mock.patch.object(magnum_utils, "get_openstack_ca", lambda: cloud["openstack_ca"]),
        mock.patch.object(cert_handlers, "get_cluster_ca_certificate", lambda cl, ctx, kind: cert(kind)),
        mock.patch.object(cert_handlers, "get_cluster_magnum_cert", lambda cl, ctx: cert("magnum")),
        mock.patch("magnum.common.x509.operations.decrypt_key", lambda key, pw: key),
        mock.patch("magnum.common.context.make_admin_context", lambda: None),
    ]
    helm_calls = []
    if not os.environ.get("OPENKEEL_GOLDEN_HELM"):
        # no real helm: the Python rendering (keystone-auth) would parse the stand-in's output
        def fake_template(self, repository=None):
            helm_calls.append({"release": self.release_name, "namespace": self.namespace,
                               "chart": os.path.basename(self.chart_ref.rstrip("/")),
                               "values": self.values, "repository": repository})
            return "---\n# rendered by the stand-in helm\n"

        patches.append(mock.patch.object(helm.TemplateReleaseCommand, "__call__", fake_template))
    for p in patches:
        p.start()

    ctx = types.SimpleNamespace(is_admin=True)
    out = {"cluster_class_name": rust.CLUSTER_CLASS_NAME}
    driver = rust.Driver("magnum-system")
    driver.create_cluster(cluster)
    out["rust_writes"] = list(FakeKube.writes)

    credential = types.SimpleNamespace(id=cloud["app_cred"]["id"], secret=cloud["app_cred"]["secret"])
    api = None
    cloud_config = resources.CloudConfigSecret(ctx, api, cluster, cloud["region"], credential)
    out["cloud_config"] = cloud_config.get_resource()

    # the addon Secrets read `<stack_id>-cloud-config` back from the management cluster
    clouds_yaml = out["cloud_config"]["stringData"]["clouds.yaml"]
    stored = types.SimpleNamespace(obj={"data": {"clouds.yaml": base64.b64encode(clouds_yaml.encode()).decode()}})
    secrets_query = mock.MagicMock()
    secrets_query.get_by_name.return_value = stored
    with mock.patch("pykube.Secret.objects", lambda *a, **k: secrets_query):
        out["ca_secrets"] = [
            cls(ctx, api, None, cluster).get_resource()
            for cls in (
                resources.ApiCertificateAuthoritySecret,
                resources.EtcdCertificateAuthoritySecret,
                resources.FrontProxyCertificateAuthoritySecret,
                resources.ServiceAccountCertificateAuthoritySecret,
            )
        ]
        out["legacy_secret"] = resources.LegacyClusterResourcesSecret(ctx, api, None, cluster).get_resource()
        out["cloud_provider_secret"] = resources.CloudProviderClusterResourcesSecret(
            ctx, api, None, cluster
        ).get_resource()

    out["cluster"] = resources.Cluster(ctx, api, None, cluster, driver).get_resource()

    rust_helm = []
    if os.path.exists(helm_log):
        with open(helm_log) as f:
            rust_helm = [json.loads(line) for line in f if line.strip()]
    out["helm"] = {"python": helm_calls, "rust": rust_helm}
    json.dump(out, sys.stdout, default=str)


if __name__ == "__main__":
    if sys.argv[1:] == ["--parse-yaml"]:
        parse_yaml()
    else:
        main()
