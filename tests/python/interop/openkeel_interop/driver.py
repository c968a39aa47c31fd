"""A record-only Magnum cluster driver for OpenKeel's interoperability tests.

It provisions nothing and calls no cloud.  Every driver call is appended as one JSON line to
the file named by the environment variable ``OPENKEEL_INTEROP_RECORD`` (when set), and the
conductor's periodic status sync (``update_cluster_status``, every 10 s in magnum-conductor)
finishes whatever is in progress, the way OpenKeel's simulator driver does:

* ``CREATE/UPDATE/DELETE/ROLLBACK_IN_PROGRESS`` become ``*_COMPLETE`` (nodegroups too; a
  nodegroup in ``DELETE_IN_PROGRESS`` is destroyed); for ``DELETE_COMPLETE`` Magnum's own
  periodic job then removes the certificates, the nodegroups and the cluster;
* on completion ``api_address`` is filled in (an address from TEST-NET-3, never contacted) and
  ``coe_version`` is the ``kube_tag`` label of the cluster, else of its template;
* ``create_cluster`` sets ``stack_id``; ``upgrade_cluster`` moves the cluster (default
  nodegroup) onto the new template and takes its ``kube_tag``.

Its entry point is named ``simulator`` (see entry_points.txt), the name OpenKeel's simulator
driver has: a template created through either implementation's API then names a driver both
conductors know.  It provides (vm, ubuntu, kubernetes) only.
"""
import json
import os
import threading
import uuid

from magnum.drivers.common import driver
from magnum import objects
from magnum.objects import fields

_S = fields.ClusterStatus
_FINISH = {
    _S.CREATE_IN_PROGRESS: _S.CREATE_COMPLETE,
    _S.UPDATE_IN_PROGRESS: _S.UPDATE_COMPLETE,
    _S.DELETE_IN_PROGRESS: _S.DELETE_COMPLETE,
    _S.ROLLBACK_IN_PROGRESS: _S.ROLLBACK_COMPLETE,
}
_API_ADDRESS = "https://203.0.113.10:6443"
_write_lock = threading.Lock()


def _summary(obj):
    if obj is None:
        return None
    out = {}
    for key in ("uuid", "name", "status", "node_count", "role", "is_default",
                "cluster_template_id", "stack_id"):
        if key in obj.fields and obj.obj_attr_is_set(key):
            out[key] = getattr(obj, key)
    return out


def record(method, cluster=None, **details):
    """Append one call to the record file."""
    path = os.environ.get("OPENKEEL_INTEROP_RECORD")
    if not path:
        return
    line = {"method": method, "cluster": _summary(cluster)}
    for key, value in details.items():
        line[key] = _summary(value) if hasattr(value, "obj_attr_is_set") else value
    with _write_lock, open(path, "a") as f:
        f.write(json.dumps(line, sort_keys=True, default=str) + "\n")


def _kube_tag(labels):
    return (labels or {}).get("kube_tag")


class RecordDriver(driver.Driver):

    @property
    def provides(self):
        return [{"server_type": "vm", "os": "ubuntu", "coe": "kubernetes"}]

    def update_cluster_status(self, context, cluster, use_admin_ctx=False):
        target = _FINISH.get(cluster.status)
        if target is None:
            return
        if cluster.status == _S.CREATE_IN_PROGRESS and not cluster.stack_id:
            # create_cluster() has not returned yet
            return
        record("update_cluster_status", cluster, target=target)
        if target != _S.DELETE_COMPLETE:
            for ng in cluster.nodegroups:
                if ng.status == _S.DELETE_IN_PROGRESS:
                    ng.destroy()
                elif ng.status in _FINISH:
                    ng.status = _FINISH[ng.status]
                    ng.status_reason = None
                    ng.save()
        cluster.status = target
        cluster.status_reason = None
        if target == _S.DELETE_COMPLETE:
            return
        if not cluster.api_address:
            cluster.api_address = _API_ADDRESS
        tag = _kube_tag(cluster.labels)
        if tag is None:
            template = objects.ClusterTemplate.get_by_uuid(
                context, cluster.cluster_template_id)
            tag = _kube_tag(template.labels)
        cluster.coe_version = tag
        cluster.save()

    def create_cluster(self, context, cluster, cluster_create_timeout):
        record("create_cluster", cluster, timeout=cluster_create_timeout)
        cluster.stack_id = str(uuid.uuid4())

    def update_cluster(self, context, cluster, scale_manager=None,
                       rollback=False):
        record("update_cluster", cluster, rollback=rollback)

    def delete_cluster(self, context, cluster):
        record("delete_cluster", cluster)

    def resize_cluster(self, context, cluster, resize_manager, node_count,
                       nodes_to_remove, nodegroup=None):
        record("resize_cluster", cluster, node_count=node_count,
               nodes_to_remove=nodes_to_remove, nodegroup=nodegroup)

    def upgrade_cluster(self, context, cluster, cluster_template,
                        max_batch_size, nodegroup, scale_manager=None,
                        rollback=False):
        record("upgrade_cluster", cluster, template=cluster_template,
               nodegroup=nodegroup, max_batch_size=max_batch_size)
        if nodegroup.is_default:
            cluster.cluster_template_id = cluster_template.uuid
            tag = _kube_tag(cluster_template.labels)
            if tag is not None:
                labels = dict(cluster.labels or {})
                labels["kube_tag"] = tag
                cluster.labels = labels
        nodegroup.image_id = cluster_template.image_id

    def create_nodegroup(self, context, cluster, nodegroup):
        record("create_nodegroup", cluster, nodegroup=nodegroup)

    def update_nodegroup(self, context, cluster, nodegroup):
        record("update_nodegroup", cluster, nodegroup=nodegroup)

    def delete_nodegroup(self, context, cluster, nodegroup):
        record("delete_nodegroup", cluster, nodegroup=nodegroup)
        # Magnum sets DELETE_IN_PROGRESS on the object; a driver persists it and removes
        # the row once the nodes are gone (on the next status sync above).
        nodegroup.save()

    def rotate_ca_certificate(self, context, cluster):
        record("rotate_ca_certificate", cluster)

    def create_federation(self, context, federation):
        raise NotImplementedError("federations are not supported")

    def update_federation(self, context, federation):
        raise NotImplementedError("federations are not supported")

    def delete_federation(self, context, federation):
        raise NotImplementedError("federations are not supported")
