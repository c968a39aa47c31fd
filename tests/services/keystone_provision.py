"""Provision the test Keystone (tests/services/keystone.sh): projects, users, role
assignments and the catalogue OpenKeel's tests expect. Idempotent (get or create).

Run with the Keystone venv's python after `keystone-manage bootstrap`, with Keystone
serving. Arguments: AUTH_URL ACCOUNTS_JSON. The accounts file (written by keystone.sh)
names every user with its password, project and expected role; the ids Keystone gave them
are written back into it.
"""

import json
import sys

from keystoneauth1 import exceptions as ksa_exc
from keystoneauth1 import session as ksa_session
from keystoneauth1.identity import v3


def main():
    auth_url, accounts_path = sys.argv[1], sys.argv[2]
    with open(accounts_path) as f:
        accounts = json.load(f)
    admin = accounts["users"]["admin"]
    sess = ksa_session.Session(auth=v3.Password(
        auth_url=auth_url, username="admin", password=admin["password"],
        user_domain_name="Default", project_name="admin",
        project_domain_name="Default"))
    ep = {"endpoint_override": auth_url}

    def one(collection, **params):
        items = sess.get("/" + collection, params=params, **ep).json()[collection]
        return items[0] if items else None

    def get_or_create(collection, key, body, **params):
        found = one(collection, **params)
        if found:
            return found
        return sess.post("/" + collection, json={key: body}, **ep).json()[key]

    default = one("domains", name="Default")
    roles = {}
    for name in ("admin", "member", "reader", "service", "manager"):
        roles[name] = get_or_create("roles", "role", {"name": name}, name=name)

    projects = {}
    for name in accounts["projects"]:
        projects[name] = get_or_create(
            "projects", "project",
            {"name": name, "domain_id": default["id"], "enabled": True},
            name=name, domain_id=default["id"])

    for name, user in accounts["users"].items():
        u = one("users", name=name, domain_id=default["id"])
        if u is None:
            u = sess.post("/users", json={"user": {
                "name": name, "domain_id": default["id"],
                "password": user["password"], "enabled": True}}, **ep).json()["user"]
        else:
            # keep outstanding tokens: reset the password only when it does not work
            try:
                ksa_session.Session().post(auth_url + "/auth/tokens?nocatalog", json={
                    "auth": {"identity": {"methods": ["password"], "password": {
                        "user": {"id": u["id"], "password": user["password"]}}}}})
            except ksa_exc.Unauthorized:
                sess.patch("/users/%s" % u["id"], json={"user": {
                    "password": user["password"], "enabled": True}}, **ep)
        user["id"] = u["id"]
        project = projects[user["project"]]
        user["project_id"] = project["id"]
        for role in user["roles"]:
            path = "/projects/%s/users/%s/roles/%s" % (
                project["id"], u["id"], roles[role]["id"])
            try:
                sess.head(path, **ep)
            except ksa_exc.NotFound:
                sess.put(path, **ep)

    # The catalogue: identity (bootstrap made it) and container-infra. The container-infra
    # endpoint is a placeholder: each test that needs it points its client at its own
    # OpenKeel with an endpoint override.
    svc = one("services", type="container-infra")
    if svc is None:
        svc = sess.post("/services", json={"service": {
            "name": "magnum", "type": "container-infra", "enabled": True}},
            **ep).json()["service"]
    for iface in ("public", "internal", "admin"):
        eps = sess.get("/endpoints", params={
            "service_id": svc["id"], "interface": iface}, **ep).json()["endpoints"]
        if not eps:
            sess.post("/endpoints", json={"endpoint": {
                "service_id": svc["id"], "interface": iface,
                "url": accounts["container_infra_url"],
                "region_id": accounts["region"], "enabled": True}}, **ep)

    # Regions left by tests that stopped half-way (tests register OpenKeel in a region of
    # their own, "test-<uuid>"): provisioning runs only when Keystone (re)starts, when no
    # test is using it.
    for region in sess.get("/regions", **ep).json()["regions"]:
        if region["id"].startswith("test-"):
            for e in sess.get("/endpoints", params={"region_id": region["id"]},
                              **ep).json()["endpoints"]:
                sess.delete("/endpoints/%s" % e["id"], **ep)
            sess.delete("/regions/%s" % region["id"], **ep)

    accounts["project_ids"] = {n: p["id"] for n, p in projects.items()}
    accounts["domain_id"] = default["id"]
    with open(accounts_path + ".tmp", "w") as f:
        json.dump(accounts, f, indent=2, sort_keys=True)
    import os
    os.replace(accounts_path + ".tmp", accounts_path)
    print("provisioned projects %s, users %s" % (
        ",".join(sorted(projects)), ",".join(sorted(accounts["users"]))))


if __name__ == "__main__":
    main()
