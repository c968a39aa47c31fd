"""A real Magnum 23.0.0 RPC peer for OpenKeel's wire tests (crates/rpc/tests/magnum_peer.rs and
crates/conductor/tests/magnum_peer.rs), using Magnum's own code paths from the test venv:
magnum.common.rpc (transport, allowed remote exception modules), magnum.conductor.api.API
(the client magnum-api uses), Magnum's versioned objects and MagnumObjectSerializer.

    python magnum_rpc_peer.py server <transport_url> <exchange> <topic> <record.jsonl>
        An RPC server exactly as magnum-conductor builds it (rpc_service.Service's target and
        serializer) whose endpoint records what it receives, deserialized by Magnum: the
        context as magnum.common.context.RequestContext.to_dict(), each object argument as
        Magnum's object (its obj_to_primitive(), fields and changes). cluster_upgrade raises
        Magnum's NotSupported; get_ca_certificate returns a Certificate object.

    python magnum_rpc_peer.py client <transport_url> <exchange> <topic> <script>
        magnum-api's client side: <script> names the scenario; prints one JSON line per step.
"""
import json
import os
import sys
import time


def setup(url, exchange, topic):
    import magnum.conf
    from magnum.common import rpc
    from magnum import objects

    import tempfile

    # A magnum.conf as an operator writes it (transport options are only registered by
    # oslo.messaging when the transport is built, so they come from a file).
    f = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    f.write(f"[DEFAULT]\ntransport_url = {url}\ncontrol_exchange = {exchange}\n"
            f"[conductor]\ntopic = {topic}\n")
    f.close()
    conf = magnum.conf.CONF
    conf(["--config-file", f.name], project="magnum")
    rpc.init(conf)
    # importing magnum.objects registers every object class
    return conf


class Recorder:
    def __init__(self, path):
        self.path = path

    def _record(self, method, context, **kwargs):
        from oslo_versionedobjects import base as ovo

        args = {}
        for k, v in kwargs.items():
            if isinstance(v, ovo.VersionedObject):
                args[k] = {
                    "obj_name": v.obj_name(),
                    "version": v.VERSION,
                    "changes": sorted(v.obj_what_changed()),
                    "primitive": v.obj_to_primitive(),
                }
            else:
                args[k] = v
        with open(self.path, "a") as f:
            f.write(json.dumps({"method": method, "context": context.to_dict(),
                                "context_class": type(context).__module__ + "." + type(context).__name__,
                                "args": args}, default=str) + "\n")

    def cluster_create(self, context, cluster, master_count, node_count, create_timeout):
        self._record("cluster_create", context, cluster=cluster, master_count=master_count,
                     node_count=node_count, create_timeout=create_timeout)

    def cluster_delete(self, context, uuid):
        self._record("cluster_delete", context, uuid=uuid)

    def cluster_update(self, context, cluster, node_count, health_status,
                       health_status_reason, rollback=False):
        self._record("cluster_update", context, cluster=cluster, node_count=node_count,
                     health_status=health_status, health_status_reason=health_status_reason,
                     rollback=rollback)

    def cluster_resize(self, context, cluster, node_count, nodes_to_remove, nodegroup):
        self._record("cluster_resize", context, cluster=cluster, node_count=node_count,
                     nodes_to_remove=nodes_to_remove, nodegroup=nodegroup)

    def cluster_upgrade(self, context, cluster, cluster_template, max_batch_size, nodegroup,
                        rollback=False):
        from magnum.common import exception
        self._record("cluster_upgrade", context, cluster=cluster,
                     cluster_template=cluster_template, max_batch_size=max_batch_size,
                     nodegroup=nodegroup, rollback=rollback)
        raise exception.NotSupported(
            operation='Upgrading a cluster when status is "UPDATE_IN_PROGRESS"')

    def get_ca_certificate(self, context, cluster, ca_cert_type=None):
        from magnum import objects
        self._record("get_ca_certificate", context, cluster=cluster, ca_cert_type=ca_cert_type)
        cert = objects.Certificate.from_object_cluster(cluster)
        cert.pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
        cert.ca_cert_type = ca_cert_type
        return cert


def server(url, exchange, topic, record):
    import oslo_messaging as messaging
    from magnum.common import rpc
    from magnum.objects import base as objects_base

    setup(url, exchange, topic)
    target = messaging.Target(topic=topic, server="pyconductor")
    srv = rpc.get_server(target, [Recorder(record)],
                         serializer=objects_base.MagnumObjectSerializer())
    srv.start()
    print("READY", flush=True)
    # The test starts this server in a process group of its own (openkeel_tests::helper), so
    # a Ctrl-C of `cargo test` does not reach it: end when the test process is gone.
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


def client(url, exchange, topic, script):
    # The configuration first: magnum.conductor.api reads [conductor] topic at import time.
    setup(url, exchange, topic)
    from magnum.common import context as mctx
    from magnum.conductor import api as conductor_api
    from magnum import objects
    from magnum.objects import base as objects_base

    # magnum-api's own set-up: every remotable object method goes to the conductor.
    objects_base.MagnumObject.indirection_api = objects_base.MagnumObjectIndirectionAPI()
    ctx = mctx.RequestContext(user_id="u-py", project_id="p-py", roles=["admin"],
                              is_admin=True, auth_token="notused")

    def step(name, fn):
        try:
            out = {"step": name, "ok": True, "result": fn()}
        except Exception as e:  # the class and attributes are what the test checks
            out = {"step": name, "ok": False, "class": type(e).__name__,
                   "module": type(e).__module__,
                   "code": getattr(e, "code", None), "message": str(e).split("\n")[0]}
        print(json.dumps(out, default=str), flush=True)

    if script == "indirection":
        step("magnumservice_list",
             lambda: [s.obj_to_primitive() for s in objects.MagnumService.list(ctx)])
        step("cluster_get_missing",
             lambda: objects.Cluster.get_by_uuid(ctx, "11111111-2222-3333-4444-555555555555"))
        step("clustertemplate_list",
             lambda: [t.obj_to_primitive() for t in objects.ClusterTemplate.list(ctx)])
        api = conductor_api.API(context=ctx, topic=topic)
        step("cluster_delete_cast", lambda: api.cluster_delete_async("nope"))
        step("unknown_method", lambda: api._call("no_such_method_here"))
    elif script == "objects":
        # magnum-api's object writes (cluster template and quota routes) through object_action.
        ct = objects.ClusterTemplate(ctx, name="k8s", image_id="ubuntu-jammy", coe="kubernetes",
                                     project_id="p-py", user_id="u-py", flavor_id="m1.small",
                                     external_network_id="public", labels={"kube_tag": "v1"},
                                     server_type="vm", cluster_distro="ubuntu")
        step("ct_create", lambda: (ct.create(), ct.obj_to_primitive())[1])
        step("ct_changes_after_create", lambda: sorted(ct.obj_what_changed()))
        def rename():
            ct.name = "k8s-renamed"
            ct.save()
            return sorted(ct.obj_what_changed())
        step("ct_save", rename)
        step("ct_get_renamed",
             lambda: objects.ClusterTemplate.get_by_uuid(ctx, ct.uuid).name)
        step("ct_get_by_id", lambda: objects.ClusterTemplate.get_by_id(ctx, ct.id).uuid)
        def refresh():
            stale = objects.ClusterTemplate.get_by_uuid(ctx, ct.uuid)
            ct.name = "k8s-again"
            ct.save()
            stale.refresh()
            return {"name": stale.name, "changed": sorted(stale.obj_what_changed())}
        step("ct_refresh", refresh)
        q = objects.Quota(ctx, project_id="p-py", resource="Cluster", hard_limit=3)
        step("quota_create", lambda: (q.create(), q.obj_to_primitive())[1])
        step("quota_get", lambda: objects.Quota.get_quota_by_project_id_resource(
            ctx, "p-py", "Cluster").hard_limit)
        step("quota_missing", lambda: objects.Quota.get_quota_by_project_id_resource(
            ctx, "nobody", "Cluster"))
        step("quota_update", lambda: objects.Quota.update_quota(
            ctx, "p-py", {"resource": "Cluster", "hard_limit": 5}).hard_limit)
        step("quota_list", lambda: [x.hard_limit for x in objects.Quota.list(ctx)])
        step("quota_delete", lambda: q.delete())
        step("cluster_count", lambda: objects.Cluster.get_count_all(ctx))
        step("ct_destroy", lambda: ct.destroy())
        step("ct_gone", lambda: objects.ClusterTemplate.get_by_uuid(ctx, ct.uuid))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "server":
        server(*sys.argv[2:6])
    else:
        client(*sys.argv[2:6])
