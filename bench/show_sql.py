#!/usr/bin/env python3
"""What a cluster show's statement costs MariaDB, and which part of it costs what.

Runs the statement of `openkeel_db::cluster::get_with_relations` (the API's show) and
variants of it, each many times on one connection, and prints mariadbd's CPU per statement
(user + system of the mariadbd process, from /proc) and the wall time per statement:

  full             the show's statement (every cluster column, the nodegroups' viewed
                   columns, the template's id, uuid and labels; two LEFT JOINs)
  no_template      without the template's join
  cluster_id_only  the joins, but only the cluster's id of its columns
  cluster_only     the cluster's columns alone, by uuid (no join)
  select1          SELECT 1: what any statement costs

The statements go through PyMySQL's text protocol (COM_QUERY: MariaDB parses each one),
where OpenKeel executes a prepared statement (COM_STMT_EXECUTE), so the absolute figures
are higher than OpenKeel's; the differences between variants are what this is for.

Usage (the test services running: tests/services/start.sh):
  eval "$(tests/services/env.sh)"
  "$OPENKEEL_TEST_VENV/bin/python" bench/show_sql.py --db-manage target/release/openkeel-db-manage [-n 4000]

It creates a database on the test MariaDB, migrates it with openkeel-db-manage, seeds 1,000
clusters with bench/seed.py (as bench/list_memory.sh does), measures, and drops it.
"""

import argparse
import os
import subprocess
import sys
import time
import urllib.parse

import pymysql

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = "bench-project"
# the columns of a cluster's nodegroups its full view reads (cluster.rs VIEWED_NODEGROUP_COLUMNS)
NODEGROUP = "id name node_addresses node_count role is_default status status_reason".split()
TEMPLATE = "id uuid labels".split()


def mariadbd_pid():
    home = os.environ.get("OPENKEEL_TEST_HOME", "/var/tmp/openkeel-test")
    out = subprocess.check_output(["pgrep", "-f", f"mariadbd --defaults-file={home}/mariadb/"])
    return int(out.split()[0])


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def select(alias, cols):
    return ", ".join(f"{alias}.`{c}` AS `{alias}.{c}`" for c in cols)


def variants(cluster_cols, uuid):
    on_n = f"n.`cluster_id` = c.`uuid` AND n.`project_id` = '{PROJECT}'"
    on_t = (f"t.`uuid` = c.`cluster_template_id` AND ((t.`project_id` = '{PROJECT}') "
            "OR (t.`public` = 1 AND t.`hidden` = 0))")
    where = f"c.`project_id` = '{PROJECT}' AND c.`uuid` = '{uuid}'"
    join_n = f"LEFT JOIN nodegroup AS n ON {on_n}"
    join_t = f"LEFT JOIN cluster_template AS t ON {on_t}"
    c, n, t = select("c", cluster_cols), select("n", NODEGROUP), select("t", TEMPLATE)
    return {
        "full": f"SELECT {c}, {n}, {t} FROM cluster AS c {join_n} {join_t} WHERE {where}",
        "no_template": f"SELECT {c}, {n} FROM cluster AS c {join_n} WHERE {where}",
        "cluster_id_only": f"SELECT c.`id`, {n}, {t} FROM cluster AS c {join_n} {join_t} WHERE {where}",
        "cluster_only": f"SELECT {c} FROM cluster AS c WHERE {where}",
        "select1": "SELECT 1",
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db-manage", required=True, help="path of openkeel-db-manage")
    ap.add_argument("-n", type=int, default=4000, help="statements per variant and round")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    url = os.environ["OPENKEEL_TEST_MYSQL_URL"].rstrip("/")
    u = urllib.parse.urlparse(url)
    login = dict(host=u.hostname, port=u.port or 3306, user=u.username,
                 password=urllib.parse.unquote(u.password or ""))
    db = f"okbench_showsql_{os.getpid()}"
    admin = pymysql.connect(autocommit=True, **login)
    admin.cursor().execute(f"CREATE DATABASE `{db}`")
    conn = None
    try:
        subprocess.run([args.db_manage, "--database-url", f"{url}/{db}", "upgrade"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        subprocess.run([sys.executable, os.path.join(HERE, "seed.py"), "--mysql",
                        f"mysql+pymysql://{url.split('://', 1)[1]}/{db}", "-n", "1000",
                        "--project", PROJECT, "--seed", "1",
                        "--timestamp", "2026-12-01 00:00:00"],
                       check=True, stdout=subprocess.DEVNULL)
        # autocommit: no transaction left open to hold the tables' metadata locks, which
        # the DROP DATABASE below would wait for
        conn = pymysql.connect(database=db, autocommit=True, **login)
        cur = conn.cursor()
        cur.execute("SHOW COLUMNS FROM cluster")
        cluster_cols = [r[0] for r in cur.fetchall()]
        cur.execute(f"SELECT uuid FROM cluster WHERE project_id = '{PROJECT}' LIMIT 1")
        uuid = cur.fetchone()[0]
        pid = mariadbd_pid()
        print(f"result columns of the show's statement: {len(cluster_cols)} of the cluster, "
              f"{len(NODEGROUP)} of each nodegroup, {len(TEMPLATE)} of the template", flush=True)
        for rnd in range(1, args.rounds + 1):
            for name, sql in variants(cluster_cols, uuid).items():
                cur.execute(sql)
                cur.fetchall()
                c0, t0 = cpu_seconds(pid), time.monotonic()
                for _ in range(args.n):
                    cur.execute(sql)
                    cur.fetchall()
                c1, t1 = cpu_seconds(pid), time.monotonic()
                print(f"round {rnd} {name:16s} mariadbd {1000 * (c1 - c0) / args.n:.3f} ms "
                      f"wall {1000 * (t1 - t0) / args.n:.3f} ms per statement", flush=True)
    finally:
        if conn is not None:
            conn.close()
        admin.cursor().execute(f"DROP DATABASE IF EXISTS `{db}`")


if __name__ == "__main__":
    main()
