#!/usr/bin/env python3
"""Seed (or remove) benchmark clusters in a Magnum-schema database.

Inserts one cluster template and N clusters, each with the two default nodegroups
(``default-master`` + ``default-worker``), with the column values Magnum 23.0.0 leaves in
the database for a cluster that went through ``cluster_create`` and the conductor's status
sync to CREATE_COMPLETE (``magnum/db/sqlalchemy/models.py``,
``magnum/conductor/handlers/cluster_conductor.py``):

* cluster: ORM defaults filled (floating_ip_enabled 1, master_lb_enabled 0), JSON columns
  ``{}`` (never NULL), status CREATE_COMPLETE, status_reason NULL, a stack_id, the API
  address the reference rig's fake driver reports, and four certificate references.
  The x509keypair rows those references would point to are *not* created: neither the
  list nor the show route reads them.
* nodegroups: role master / worker, is_default 1, node_count 1 / --workers, the template's
  image, flavors from the cluster, labels copied from the cluster, node_addresses ``[]``,
  node_labels ``{}``, node_taints ``[]``, min/max_node_count NULL, the cluster's stack_id
  and status, version NULL.

Every row is tagged: the template and every cluster are named ``bench-...`` and belong to
--project; ``--cleanup`` deletes exactly the rows with that name prefix in that project
(and the nodegroups whose cluster_id is one of those clusters). Seeding cleans first, so
it is re-runnable.

Targets (standard library only, plus PyMySQL for MariaDB, e.g. the reference rig's venv):

  seed.py --sqlite PATH ...
  seed.py --mysql mysql+pymysql://user:pass@host:port/db ...

Prints the uuid of the first seeded cluster on stdout (for show benchmarks).
"""

import argparse
import datetime
import json
import sys
import urllib.parse
import random
import uuid as uuidlib

PREFIX = "bench-"
TEMPLATE_NAME = PREFIX + "template"

CLUSTER_COLS = [
    "created_at", "updated_at", "uuid", "name", "cluster_template_id", "api_address",
    "stack_id", "project_id", "user_id", "status", "discovery_url", "status_reason",
    "ca_cert_ref", "magnum_cert_ref", "create_timeout", "coe_version",
    "container_version", "keypair", "docker_volume_size", "labels", "master_flavor_id",
    "flavor_id", "health_status", "health_status_reason", "fixed_network", "fixed_subnet",
    "floating_ip_enabled", "master_lb_enabled", "etcd_ca_cert_ref",
    "front_proxy_ca_cert_ref",
]

NODEGROUP_COLS = [
    "created_at", "updated_at", "uuid", "name", "cluster_id", "project_id",
    "docker_volume_size", "labels", "flavor_id", "image_id", "node_addresses", "node_count",
    "max_node_count", "min_node_count", "role", "is_default", "stack_id", "status",
    "status_reason", "version", "node_labels", "node_taints",
]

TEMPLATE_COLS = [
    "created_at", "updated_at", "uuid", "name", "flavor_id", "keypair_id", "image_id",
    "external_network_id", "dns_nameserver", "apiserver_port", "project_id", "user_id",
    "docker_volume_size", "fixed_network", "master_flavor_id", "cluster_distro", "coe",
    "http_proxy", "https_proxy", "no_proxy", "registry_enabled", "network_driver", "labels",
    "tls_disabled", "public", "server_type", "volume_driver", "insecure_registry",
    "docker_storage_driver", "master_lb_enabled", "fixed_subnet", "floating_ip_enabled",
    "hidden", "tags", "driver",
]


def dumps(v):
    # Magnum's JSON columns: Python json.dumps defaults (", " / ": " separators).
    return json.dumps(v)


def now():
    # naive UTC, whole seconds (MariaDB datetime truncates the fraction anyway)
    return datetime.datetime.now(datetime.timezone.utc).replace(
        tzinfo=None, microsecond=0)


def rows(args):
    rng = random.Random(args.seed) if args.seed is not None else random.SystemRandom()

    def new_uuid():
        return str(uuidlib.UUID(int=rng.getrandbits(128), version=4))

    ts = (datetime.datetime.strptime(args.timestamp, "%Y-%m-%d %H:%M:%S")
          if args.timestamp else now())
    if args.backend == "sqlite":
        # sqlx/SQLite text form used by OpenKeel and SQLAlchemy: "YYYY-MM-DD HH:MM:SS"
        ts = ts.strftime("%Y-%m-%d %H:%M:%S")
    tmpl_uuid = new_uuid()
    labels = args.labels
    template = {
        "created_at": ts, "updated_at": None, "uuid": tmpl_uuid, "name": TEMPLATE_NAME,
        "flavor_id": "m1.small", "keypair_id": "mykey", "image_id": "ubuntu-jammy",
        "external_network_id": "public", "dns_nameserver": None, "apiserver_port": None,
        "project_id": args.project, "user_id": args.user, "docker_volume_size": None,
        "fixed_network": None, "master_flavor_id": "m1.medium", "cluster_distro": "ubuntu",
        "coe": "kubernetes", "http_proxy": None, "https_proxy": None, "no_proxy": None,
        "registry_enabled": 0, "network_driver": "flannel", "labels": dumps(labels),
        "tls_disabled": 0, "public": 0, "server_type": "vm", "volume_driver": None,
        "insecure_registry": None, "docker_storage_driver": None, "master_lb_enabled": 0,
        "fixed_subnet": None, "floating_ip_enabled": 1, "hidden": 0, "tags": None,
        "driver": None,
    }
    clusters, nodegroups = [], []
    for i in range(args.count):
        cuuid = new_uuid()
        stack = new_uuid()
        clusters.append({
            "created_at": ts, "updated_at": ts, "uuid": cuuid,
            "name": "%s%04d" % (PREFIX, i), "cluster_template_id": tmpl_uuid,
            "api_address": "https://192.0.2.10:6443", "stack_id": stack,
            "project_id": args.project, "user_id": args.user, "status": "CREATE_COMPLETE",
            "discovery_url": None, "status_reason": None,
            "ca_cert_ref": new_uuid(), "magnum_cert_ref": new_uuid(),
            "create_timeout": 60, "coe_version": None, "container_version": None,
            "keypair": "mykey", "docker_volume_size": None, "labels": dumps(labels),
            "master_flavor_id": "m1.medium", "flavor_id": "m1.small",
            "health_status": None, "health_status_reason": dumps({}),
            "fixed_network": None, "fixed_subnet": None, "floating_ip_enabled": 1,
            "master_lb_enabled": 0, "etcd_ca_cert_ref": new_uuid(),
            "front_proxy_ca_cert_ref": new_uuid(),
        })
        for role, name, count, flavor in (
            ("master", "default-master", 1, "m1.medium"),
            ("worker", "default-worker", args.workers, "m1.small"),
        ):
            min_count = None
            if role == "worker" and "min_node_count" in labels:
                min_count = int(labels["min_node_count"])
            nodegroups.append({
                "created_at": ts, "updated_at": ts, "uuid": new_uuid(),
                "name": name, "cluster_id": cuuid, "project_id": args.project,
                "docker_volume_size": None, "labels": dumps(labels), "flavor_id": flavor,
                "image_id": "ubuntu-jammy", "node_addresses": dumps([]),
                "node_count": count, "max_node_count": None, "min_node_count": min_count,
                "role": role, "is_default": 1, "stack_id": stack,
                "status": "CREATE_COMPLETE", "status_reason": None, "version": None,
                "node_labels": dumps({}), "node_taints": dumps([]),
            })
    return template, clusters, nodegroups


class Target:
    def __init__(self, args):
        self.backend = args.backend
        if args.backend == "sqlite":
            import sqlite3
            self.conn = sqlite3.connect(args.sqlite)
            self.ph = "?"
        else:
            import pymysql
            u = urllib.parse.urlsplit(args.mysql)
            self.conn = pymysql.connect(
                host=u.hostname or "127.0.0.1", port=u.port or 3306,
                user=urllib.parse.unquote(u.username or ""),
                password=urllib.parse.unquote(u.password or ""),
                database=u.path.lstrip("/"), charset="utf8", autocommit=False)
            self.ph = "%s"

    def q(self, name):
        return "`%s`" % name

    def execute(self, sql, params=()):
        cur = self.conn.cursor()
        cur.execute(sql.replace("?", self.ph), params)
        return cur

    def insert(self, table, cols, rowlist):
        if not rowlist:
            return
        sql = "INSERT INTO %s (%s) VALUES (%s)" % (
            self.q(table), ", ".join(self.q(c) for c in cols),
            ", ".join([self.ph] * len(cols)))
        cur = self.conn.cursor()
        for start in range(0, len(rowlist), 500):
            cur.executemany(sql, [tuple(r[c] for c in cols)
                                  for r in rowlist[start:start + 500]])

    def cleanup(self, project, keep_template=False):
        like = PREFIX + "%"
        n_ng = self.execute(
            "DELETE FROM `nodegroup` WHERE `project_id` = ? AND `cluster_id` IN "
            "(SELECT `uuid` FROM `cluster` WHERE `project_id` = ? AND `name` LIKE ?)",
            (project, project, like)).rowcount
        n_c = self.execute(
            "DELETE FROM `cluster` WHERE `project_id` = ? AND `name` LIKE ?",
            (project, like)).rowcount
        n_t = 0
        if not keep_template:
            n_t = self.execute(
                "DELETE FROM `cluster_template` WHERE `project_id` = ? AND `name` = ?",
                (project, TEMPLATE_NAME)).rowcount
        return n_t, n_c, n_ng


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    tgt = p.add_mutually_exclusive_group(required=True)
    tgt.add_argument("--sqlite", metavar="PATH", help="SQLite database file (schema present)")
    tgt.add_argument("--mysql", metavar="URL",
                     help="mysql+pymysql://user:pass@host:port/db (schema present)")
    p.add_argument("-n", "--count", type=int, default=1000, help="clusters (default 1000)")
    p.add_argument("--workers", type=int, default=2,
                   help="node_count of each default-worker nodegroup (default 2)")
    p.add_argument("--project", default="bench-project", help="project_id of every row")
    p.add_argument("--user", default="bench-user", help="user_id of every row")
    p.add_argument("--labels", type=json.loads, default={},
                   help="cluster and template labels as JSON (default {})")
    p.add_argument("--seed", type=int,
                   help="deterministic uuids (same rows in every database seeded alike)")
    p.add_argument("--timestamp", metavar="'YYYY-MM-DD HH:MM:SS'",
                   help="created_at/updated_at of every row (default: now, UTC)")
    p.add_argument("--cleanup", action="store_true",
                   help="only delete the bench rows of --project")
    p.add_argument("--keep-template", action="store_true",
                   help="with --cleanup: leave the template (a running magnum-conductor's "
                        "health sync may still hold the clusters and look their template up)")
    args = p.parse_args()
    args.backend = "sqlite" if args.sqlite else "mysql"

    t = Target(args)
    try:
        removed = t.cleanup(args.project, keep_template=args.cleanup and args.keep_template)
        if args.cleanup:
            t.conn.commit()
            print("removed %d template(s), %d cluster(s), %d nodegroup(s)" % removed,
                  file=sys.stderr)
            return 0
        template, clusters, nodegroups = rows(args)
        t.insert("cluster_template", TEMPLATE_COLS, [template])
        t.insert("cluster", CLUSTER_COLS, clusters)
        t.insert("nodegroup", NODEGROUP_COLS, nodegroups)
        t.conn.commit()
    except BaseException:
        t.conn.rollback()
        raise
    finally:
        t.conn.close()
    print("seeded 1 template, %d clusters, %d nodegroups in project %s" % (
        len(clusters), len(nodegroups), args.project), file=sys.stderr)
    print(clusters[0]["uuid"] if clusters else "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
