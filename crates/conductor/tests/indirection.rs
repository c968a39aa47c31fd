#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Versioned-object indirection served by `ConductorDispatcher` (`magnum/conductor/handlers/indirection_api.py`): `object_action`
//! replies `[updates, result]` as Magnum's indirection handler computes them, the classmethods
//! of Magnum's objects (`magnum/objects/*.py`), `object_backport_versions`, tenant scoping from the context, and Magnum's
//! exception classes. On SQLite and MariaDB; the captured magnum-api frames are fixtures.

mod common;

use common::*;
use openkeel_conductor::rpc_server::ConductorDispatcher;
use openkeel_core::context::RequestContext;
use openkeel_db::{cluster_template, magnum_service, quota, Database, Scope};
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure};
use openkeel_rpc::{codec, Obj};
use serde_json::{json, Map, Value};

const CT_CREATE: &str = include_str!("../../rpc/src/codec/fixtures/object_action_ct_create.json");
const OCA: &str = "object_class_action_versions";

fn dispatcher(db: &Database) -> ConductorDispatcher {
    let (c, _rec) = conductor(db);
    ConductorDispatcher::new(c).with_database(db.clone())
}

/// The context of the captured frames (`noauth-admin` in `noauth-project`, admin).
fn frame_ctx() -> RequestContext {
    RequestContext {
        project_id: Some("noauth-project".into()),
        user_id: Some("noauth-admin".into()),
        is_admin: true,
        roles: vec!["admin".into(), "member".into(), "reader".into()],
        request_id: RequestContext::new_request_id(),
        ..RequestContext::default()
    }
}

fn other_ctx() -> RequestContext {
    RequestContext {
        project_id: Some("another-project".into()),
        user_id: Some("another-user".into()),
        request_id: RequestContext::new_request_id(),
        ..RequestContext::default()
    }
}

fn admin(all_tenants: bool) -> RequestContext {
    RequestContext {
        project_id: Some("admin-project".into()),
        user_id: Some("admin-user".into()),
        is_admin: true,
        all_tenants,
        request_id: RequestContext::new_request_id(),
        ..RequestContext::default()
    }
}

/// An object primitive as magnum-api serializes it.
fn prim(name: &str, version: &str, data: Value, changes: &[&str]) -> Value {
    let mut p = json!({
        "magnum_object.name": name,
        "magnum_object.namespace": "magnum",
        "magnum_object.version": version,
        "magnum_object.data": data,
    });
    if !changes.is_empty() {
        p["magnum_object.changes"] = json!(changes);
    }
    p
}

/// A new object: every given field set and changed (as `Cls(context, **kw)` makes it).
fn new_obj(name: &str, version: &str, data: Value) -> Value {
    let keys: Vec<String> = data.as_object().unwrap().keys().cloned().collect();
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    prim(name, version, data, &keys)
}

async fn action(
    d: &ConductorDispatcher,
    ctx: &RequestContext,
    objinst: &Value,
    method: &str,
) -> Result<Value, RemoteFailure> {
    let mut a = Args::new();
    a.insert("objinst".into(), objinst.clone());
    a.insert("objmethod".into(), json!(method));
    a.insert("args".into(), json!([]));
    a.insert("kwargs".into(), json!({}));
    // through JSON text, as over the wire
    let a: Args = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    d.dispatch(ctx.clone(), "object_action", a).await
}

async fn class(
    d: &ConductorDispatcher,
    ctx: &RequestContext,
    objname: &str,
    objmethod: &str,
    version: &str,
    args: Value,
    kwargs: Value,
) -> Result<Value, RemoteFailure> {
    let mut a = Args::new();
    a.insert("objname".into(), json!(objname));
    a.insert("objmethod".into(), json!(objmethod));
    a.insert("object_versions".into(), json!({ objname: version }));
    a.insert("args".into(), args);
    a.insert("kwargs".into(), kwargs);
    d.dispatch(ctx.clone(), OCA, a).await
}

fn is_z_datetime(v: &Value) -> bool {
    let s = v.as_str().unwrap_or("");
    s.len() == 20
        && s.ends_with('Z')
        && chrono::NaiveDateTime::parse_from_str(&s[..19], "%Y-%m-%dT%H:%M:%S").is_ok()
}

fn keys(v: &Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

fn data(v: &Value) -> &Map<String, Value> {
    v["magnum_object.data"].as_object().unwrap()
}

fn magnum_failure(f: &RemoteFailure, class: &str, code: i64) {
    assert_eq!(
        (f.class.as_str(), f.module.as_str(), f.kwargs.get("code")),
        (class, "magnum.common.exception", Some(&json!(code))),
        "{f:?}"
    );
}

#[tokio::test]
async fn cluster_template_create_save_refresh_destroy_as_captured() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let frame: Value = serde_json::from_str(CT_CREATE).unwrap();
        let sent = frame["args"]["objinst"].clone();
        let a: Args = frame["args"].as_object().unwrap().clone();
        let r = d.dispatch(frame_ctx(), "object_action", a).await.unwrap();
        // the captured reply (3.11): exactly the fields that were unset before, in OVO order
        assert_eq!(r[1], Value::Null);
        let u = &r[0];
        assert_eq!(
            keys(u),
            [
                "id",
                "uuid",
                "apiserver_port",
                "tags",
                "created_at",
                "updated_at",
                "obj_what_changed"
            ]
        );
        assert!(u["id"].as_i64().unwrap() >= 1);
        assert!(uuid::Uuid::parse_str(u["uuid"].as_str().unwrap()).is_ok());
        assert_eq!(
            (&u["apiserver_port"], &u["tags"], &u["updated_at"]),
            (&Value::Null, &Value::Null, &Value::Null)
        );
        assert!(is_z_datetime(&u["created_at"]), "{}", u["created_at"]);
        assert_eq!(u["obj_what_changed"], json!([]));
        let uuid = u["uuid"].as_str().unwrap().to_string();
        let row = cluster_template::get_by_uuid(db, &Scope::admin_all_tenants(), &uuid)
            .await
            .unwrap();
        assert_eq!(row.name.as_deref(), Some("k8s-ubuntu"));
        assert_eq!(row.driver.as_deref(), Some("k8s_fake_v1"));
        assert_eq!(row.project_id.as_deref(), Some("noauth-project"));

        // the object as magnum-api holds it after applying the updates
        let mut held = sent.clone();
        for (k, v) in u.as_object().unwrap() {
            if k != "obj_what_changed" {
                held["magnum_object.data"][k] = v.clone();
            }
        }
        held.as_object_mut()
            .unwrap()
            .remove("magnum_object.changes");
        let stale = held.clone();

        // save after a rename: [{"obj_what_changed": []}, null]
        let mut renamed = held.clone();
        renamed["magnum_object.data"]["name"] = json!("k8s-renamed");
        renamed["magnum_object.changes"] = json!(["name"]);
        let r = action(&d, &frame_ctx(), &renamed, "save").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));
        let row = cluster_template::get_by_uuid(db, &Scope::admin_all_tenants(), &uuid)
            .await
            .unwrap();
        assert_eq!(row.name.as_deref(), Some("k8s-renamed"));
        assert!(row.updated_at.is_some());

        // refresh of a stale copy: the fields that differ, and they become changed
        let r = action(&d, &frame_ctx(), &stale, "refresh").await.unwrap();
        assert_eq!(r[1], Value::Null);
        assert_eq!(keys(&r[0]), ["name", "updated_at", "obj_what_changed"]);
        assert_eq!(r[0]["name"], json!("k8s-renamed"));
        assert!(is_z_datetime(&r[0]["updated_at"]));
        assert_eq!(r[0]["obj_what_changed"], json!(["name", "updated_at"]));
        // an up-to-date copy: nothing
        let mut fresh = renamed.clone();
        fresh["magnum_object.data"]["updated_at"] = r[0]["updated_at"].clone();
        fresh
            .as_object_mut()
            .unwrap()
            .remove("magnum_object.changes");
        let r = action(&d, &frame_ctx(), &fresh, "refresh").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));

        // another tenant cannot refresh it (scoped get_by_uuid)
        let f = action(&d, &other_ctx(), &fresh, "refresh")
            .await
            .unwrap_err();
        magnum_failure(&f, "ClusterTemplateNotFound", 404);

        // destroy, then again: ClusterTemplateNotFound (ExpectedException keeps the class)
        let r = action(&d, &frame_ctx(), &fresh, "destroy").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));
        assert!(
            cluster_template::get_by_uuid(db, &Scope::admin_all_tenants(), &uuid)
                .await
                .is_err()
        );
        let f = action(&d, &frame_ctx(), &fresh, "destroy")
            .await
            .unwrap_err();
        magnum_failure(&f, "ClusterTemplateNotFound", 404);

        // save without a uuid cannot lazy-load it
        let mut no_uuid = fresh.clone();
        no_uuid["magnum_object.data"]
            .as_object_mut()
            .unwrap()
            .remove("uuid");
        let f = action(&d, &frame_ctx(), &no_uuid, "save")
            .await
            .unwrap_err();
        assert_eq!(f.class, "NotImplementedError");
        // a method that is not an object method
        let f = action(&d, &frame_ctx(), &fresh, "explode")
            .await
            .unwrap_err();
        assert_eq!(f.class, "AttributeError");
    });
}

#[tokio::test]
async fn cluster_template_referenced_and_get_by_id() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let _cl = ready(&c, db, &t, "alpha", &[]).await;
        let r = class(
            &d,
            &ctx(),
            "ClusterTemplate",
            "get_by_id",
            "1.21",
            json!([t.id]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["uuid"], json!(t.uuid));
        // an older caller gets its version (relabelled)
        let r = class(
            &d,
            &ctx(),
            "ClusterTemplate",
            "get_by_id",
            "1.17",
            json!([t.id]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(r["magnum_object.version"], "1.17");
        // a newer one is refused before the call, as OVO's class lookup does
        let f = class(
            &d,
            &ctx(),
            "ClusterTemplate",
            "get_by_id",
            "1.22",
            json!([t.id]),
            json!({}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.module.as_str()),
            (
                "IncompatibleObjectVersion",
                "oslo_versionedobjects.exception"
            )
        );

        // saving a referenced template: only a rename / publishing is allowed
        let mut p = codec::encode(&Obj::new(t.clone(), ["image_id"]));
        p["magnum_object.data"]["image_id"] = json!("other");
        let f = action(&d, &ctx(), &p, "save").await.unwrap_err();
        magnum_failure(&f, "ClusterTemplateReferenced", 400);
        let f = action(&d, &ctx(), &p, "destroy").await.unwrap_err();
        magnum_failure(&f, "ClusterTemplateReferenced", 400);
        let mut p = codec::encode(&Obj::new(t.clone(), ["name"]));
        p["magnum_object.data"]["name"] = json!("k8s-2");
        assert_eq!(
            action(&d, &ctx(), &p, "save").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
    });
}

#[tokio::test]
async fn quota_object_and_class_methods() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let a = admin(false);
        let new = new_obj(
            "Quota",
            "1.0",
            json!({"project_id": PROJECT, "resource": "Cluster", "hard_limit": 5}),
        );
        let r = action(&d, &a, &new, "create").await.unwrap();
        // as captured: [{"id": 1, "created_at": "...Z", "updated_at": null, "obj_what_changed": []}, null]
        assert_eq!(
            keys(&r[0]),
            ["id", "created_at", "updated_at", "obj_what_changed"]
        );
        assert!(is_z_datetime(&r[0]["created_at"]));
        assert_eq!(r[0]["updated_at"], Value::Null);
        assert_eq!(r[0]["obj_what_changed"], json!([]));
        assert_eq!(r[1], Value::Null);
        let id = r[0]["id"].as_i64().unwrap();
        let f = action(&d, &a, &new, "create").await.unwrap_err();
        magnum_failure(&f, "QuotaAlreadyExists", 409);

        let r = class(
            &d,
            &a,
            "Quota",
            "get_quota_by_project_id_resource",
            "1.0",
            json!([PROJECT, "Cluster"]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["hard_limit"], json!(5));
        assert!(r.get("magnum_object.changes").is_none());
        let f = class(
            &d,
            &a,
            "Quota",
            "get_quota_by_project_id_resource",
            "1.0",
            json!(["nobody", "Cluster"]),
            json!({}),
        )
        .await
        .unwrap_err();
        magnum_failure(&f, "QuotaNotFound", 404);
        assert_eq!(
            f.message,
            "Quota could not be found: project_id nobody resource Cluster."
        );
        let r = class(&d, &a, "Quota", "get_by_id", "1.0", json!([id]), json!({}))
            .await
            .unwrap();
        assert_eq!(data(&r)["project_id"], json!(PROJECT));

        let other = new_obj(
            "Quota",
            "1.0",
            json!({"project_id": "p2", "resource": "Cluster", "hard_limit": 1}),
        );
        action(&d, &a, &other, "create").await.unwrap();
        let r = class(
            &d,
            &a,
            "Quota",
            "list",
            "1.0",
            json!([]),
            json!({"limit": null, "marker": null, "sort_key": "id", "sort_dir": "asc",
                   "filters": {"project_id": "p2"}}),
        )
        .await
        .unwrap();
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(data(&r[0])["project_id"], json!("p2"));
        // all, then after the first one as marker (an object primitive)
        let all = class(&d, &a, "Quota", "list", "1.0", json!([]), json!({}))
            .await
            .unwrap();
        assert_eq!(all.as_array().unwrap().len(), 2);
        let r = class(
            &d,
            &a,
            "Quota",
            "list",
            "1.0",
            json!([10, all[0].clone(), "id", "asc"]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(data(&r[0])["project_id"], json!("p2"));

        let r = class(
            &d,
            &a,
            "Quota",
            "update_quota",
            "1.0",
            json!([PROJECT, {"project_id": PROJECT, "resource": "Cluster", "hard_limit": 9}]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["hard_limit"], json!(9));
        assert_eq!(
            quota::get_by_project_id_resource(db, PROJECT, "Cluster")
                .await
                .unwrap()
                .hard_limit,
            9
        );
        let f = class(
            &d,
            &a,
            "Quota",
            "update_quota",
            "1.0",
            json!(["nobody", {"resource": "Cluster", "hard_limit": 9}]),
            json!({}),
        )
        .await
        .unwrap_err();
        magnum_failure(&f, "QuotaNotFound", 404);
        // Magnum's quota_get_all_by_project_id calls a DB method that does not exist
        let f = class(
            &d,
            &a,
            "Quota",
            "quota_get_all_by_project_id",
            "1.0",
            json!([PROJECT]),
            json!({}),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.module.as_str()),
            ("AttributeError", "builtins")
        );

        // delete (the object as the API loaded it)
        let loaded = class(&d, &a, "Quota", "get_by_id", "1.0", json!([id]), json!({}))
            .await
            .unwrap();
        let r = action(&d, &a, &loaded, "delete").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));
        assert!(quota::get_by_id(db, id).await.is_err());
        let f = action(&d, &a, &loaded, "delete").await.unwrap_err();
        magnum_failure(&f, "QuotaNotFound", 404);
    });
}

#[tokio::test]
async fn magnum_service_methods() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let c = ctx();
        let new = new_obj(
            "MagnumService",
            "1.0",
            json!({"host": "node-1", "binary": "magnum-conductor", "report_count": 0}),
        );
        let r = action(&d, &c, &new, "create").await.unwrap();
        let u = &r[0];
        // every field not set before comes back, report_count (unchanged) does not
        assert_eq!(
            keys(u),
            [
                "id",
                "disabled",
                "disabled_reason",
                "last_seen_up",
                "forced_down",
                "created_at",
                "updated_at",
                "obj_what_changed"
            ]
        );
        assert_eq!(
            (&u["disabled"], &u["forced_down"], &u["last_seen_up"]),
            (&json!(false), &json!(false), &Value::Null)
        );
        let id = u["id"].as_i64().unwrap();

        let loaded = class(
            &d,
            &c,
            "MagnumService",
            "get_by_host_and_binary",
            "1.0",
            json!(["node-1", "magnum-conductor"]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(data(&loaded)["id"], json!(id));
        let none = class(
            &d,
            &c,
            "MagnumService",
            "get_by_host_and_binary",
            "1.0",
            json!(["node-2", "magnum-conductor"]),
            json!({}),
        )
        .await
        .unwrap();
        assert_eq!(none, Value::Null);

        // report_state_up: [{"report_count": n+1, "obj_what_changed": []}, null]
        let r = action(&d, &c, &loaded, "report_state_up").await.unwrap();
        assert_eq!(
            r,
            json!([{"report_count": 1, "obj_what_changed": []}, null])
        );
        let row = magnum_service::get_by_host_and_binary(db, "node-1", "magnum-conductor")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.report_count, 1);
        assert!(row.last_seen_up.is_some());

        // save disabled
        let mut p = loaded.clone();
        p["magnum_object.data"]["disabled"] = json!(true);
        p["magnum_object.data"]["disabled_reason"] = json!("maintenance");
        p["magnum_object.changes"] = json!(["disabled", "disabled_reason"]);
        let r = action(&d, &c, &p, "save").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));

        // list with magnum-api's kwargs (`magnum/objects/cluster.py`'s `list`)
        let second = new_obj(
            "MagnumService",
            "1.0",
            json!({"host": "node-2", "binary": "magnum-conductor", "report_count": 0}),
        );
        action(&d, &c, &second, "create").await.unwrap();
        let r = class(
            &d,
            &c,
            "MagnumService",
            "list",
            "1.0",
            json!([]),
            json!({"limit": null, "marker": null, "sort_key": "id", "sort_dir": "desc"}),
        )
        .await
        .unwrap();
        let hosts: Vec<&Value> = r
            .as_array()
            .unwrap()
            .iter()
            .map(|o| &data(o)["host"])
            .collect();
        assert_eq!(hosts, [&json!("node-2"), &json!("node-1")]);
        assert_eq!(data(&r[1])["disabled"], json!(true));

        let r = action(&d, &c, &loaded, "destroy").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));
        let f = action(&d, &c, &loaded, "destroy").await.unwrap_err();
        magnum_failure(&f, "MagnumServiceNotFound", 404);
    });
}

#[tokio::test]
async fn cluster_and_nodegroup_methods_with_tenant_scoping() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let a = ready(&c, db, &t, "alpha", &[]).await;
        let b = ready(&c, db, &t, "beta", &[]).await;
        let v = "1.24";
        let kw = json!({});

        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "get_count_all",
            v,
            json!([]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r, json!(2));
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "get_count_all",
            v,
            json!([]),
            json!({"filters": {"name": "beta", "ignored": 1}}),
        )
        .await
        .unwrap();
        assert_eq!(r, json!(1));
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "get_count_all",
            v,
            json!([{"status": ["CREATE_COMPLETE"], "node_count": 2, "master_count": 1}]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r, json!(2));
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "get_count_all",
            v,
            json!([{"node_count": 1}]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r, json!(0));
        // another tenant sees nothing; an admin only with all_tenants
        for (cx, n) in [(other_ctx(), 0), (admin(false), 0), (admin(true), 2)] {
            let r = class(
                &d,
                &cx,
                "Cluster",
                "get_count_all",
                v,
                json!([]),
                kw.clone(),
            )
            .await
            .unwrap();
            assert_eq!(r, json!(n));
        }
        let row = cluster_row(db, &a).await;
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "get_by_id",
            v,
            json!([row.id]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["uuid"], json!(a));
        let f = class(
            &d,
            &admin(false),
            "Cluster",
            "get_by_id",
            v,
            json!([row.id]),
            kw.clone(),
        )
        .await
        .unwrap_err();
        magnum_failure(&f, "ClusterNotFound", 404);
        let r = class(
            &d,
            &admin(true),
            "Cluster",
            "get_by_uuid",
            v,
            json!([a]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["name"], json!("alpha"));
        // list with filters and a marker object
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "list",
            v,
            json!([null, null, "name", "asc", {"name": "alpha"}]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(data(&r[0])["uuid"], json!(a));
        let marker = codec::encode(&Obj::unchanged(row.clone()));
        let r = class(
            &d,
            &ctx(),
            "Cluster",
            "list",
            v,
            json!([]),
            json!({"limit": 5, "marker": marker, "sort_key": "id", "sort_dir": "asc",
                   "filters": {"status": ["CREATE_COMPLETE"]}}),
        )
        .await
        .unwrap();
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(data(&r[0])["uuid"], json!(b));
        // Magnum fails on its own node_addresses filter (no such column)
        let f = class(
            &d,
            &ctx(),
            "Cluster",
            "list",
            v,
            json!([]),
            json!({"filters": {"node_addresses": []}}),
        )
        .await
        .unwrap_err();
        assert_eq!(f.class, "InvalidRequestError");
        // get_stats: Magnum passes project_id as the DB context, so every project counts
        let r = class(
            &d,
            &other_ctx(),
            "Cluster",
            "get_stats",
            v,
            json!(["x"]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r, json!([2, 6]));

        // Cluster.save / refresh / destroy through object_action
        let mut p = codec::encode(&Obj::new(row.clone(), ["status_reason"]));
        p["magnum_object.data"]["status_reason"] = json!("poked");
        let r = action(&d, &ctx(), &p, "save").await.unwrap();
        assert_eq!(r, json!([{"obj_what_changed": []}, null]));
        assert_eq!(
            cluster_row(db, &a).await.status_reason.as_deref(),
            Some("poked")
        );
        let stale = codec::encode(&Obj::unchanged(row.clone()));
        let r = action(&d, &ctx(), &stale, "refresh").await.unwrap();
        // (updated_at may fall in the same second as the row read above)
        assert_eq!(keys(&r[0])[0], "status_reason");
        assert_eq!(r[0]["status_reason"], json!("poked"));
        assert_eq!(r[0]["obj_what_changed"][0], json!("status_reason"));
        let f = action(&d, &other_ctx(), &stale, "refresh")
            .await
            .unwrap_err();
        magnum_failure(&f, "ClusterNotFound", 404);

        // NodeGroup classmethods: scoped by project unless admin (all_tenants not needed)
        let nv = "1.2";
        let worker = ng_named(db, &a, "default-worker").await;
        for (m, key) in [
            ("get_by_id", json!(worker.id)),
            ("get_by_uuid", json!(worker.uuid)),
            ("get_by_name", json!("default-worker")),
        ] {
            let r = class(&d, &ctx(), "NodeGroup", m, nv, json!([a, key]), kw.clone())
                .await
                .unwrap();
            assert_eq!(data(&r)["uuid"], json!(worker.uuid), "{m}");
            let r = class(
                &d,
                &admin(false),
                "NodeGroup",
                m,
                nv,
                json!([a, key]),
                kw.clone(),
            )
            .await
            .unwrap();
            assert_eq!(data(&r)["uuid"], json!(worker.uuid), "{m} admin");
            let f = class(
                &d,
                &other_ctx(),
                "NodeGroup",
                m,
                nv,
                json!([a, key]),
                kw.clone(),
            )
            .await
            .unwrap_err();
            magnum_failure(&f, "NodeGroupNotFound", 404);
        }
        let r = class(
            &d,
            &ctx(),
            "NodeGroup",
            "get_count_all",
            nv,
            json!([a]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r, json!(2));
        let r = class(
            &d,
            &ctx(),
            "NodeGroup",
            "list",
            nv,
            json!([a, null, null, "name", "desc", {"role": "master"}]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(r.as_array().unwrap().len(), 1);
        assert_eq!(data(&r[0])["name"], json!("default-master"));
        let r = class(
            &d,
            &ctx(),
            "NodeGroup",
            "update_nodegroup",
            nv,
            json!([a, "default-worker", {"max_node_count": 7, "status": "UPDATE_COMPLETE"}]),
            kw.clone(),
        )
        .await
        .unwrap();
        assert_eq!(data(&r)["max_node_count"], json!(7));
        let w = ng_named(db, &a, "default-worker").await;
        assert_eq!(w.max_node_count, Some(7));

        // NodeGroup create / save / refresh / destroy
        let ng_uuid = uuid::Uuid::new_v4().to_string();
        let new = new_obj(
            "NodeGroup",
            nv,
            json!({"uuid": ng_uuid, "name": "extra", "cluster_id": a, "project_id": PROJECT,
                   "flavor_id": "m1.small", "node_count": 2, "role": "worker"}),
        );
        let r = action(&d, &ctx(), &new, "create").await.unwrap();
        assert!(r[0]["id"].as_i64().unwrap() > 0);
        assert_eq!(r[0]["is_default"], json!(false));
        assert!(r[0].get("name").is_none());
        let mut held = new.clone();
        for (k, v) in r[0].as_object().unwrap() {
            if k != "obj_what_changed" {
                held["magnum_object.data"][k] = v.clone();
            }
        }
        held.as_object_mut()
            .unwrap()
            .remove("magnum_object.changes");
        let mut p = held.clone();
        p["magnum_object.data"]["node_count"] = json!(5);
        p["magnum_object.changes"] = json!(["node_count"]);
        assert_eq!(
            action(&d, &ctx(), &p, "save").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        let r = action(&d, &ctx(), &held, "refresh").await.unwrap();
        assert_eq!(r[0]["node_count"], json!(5));
        assert_eq!(
            action(&d, &ctx(), &held, "destroy").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        let f = action(&d, &ctx(), &held, "destroy").await.unwrap_err();
        magnum_failure(&f, "NodeGroupNotFound", 404);

        // Cluster create / destroy
        let cuuid = uuid::Uuid::new_v4().to_string();
        let new = new_obj(
            "Cluster",
            v,
            json!({"uuid": cuuid, "name": "gamma", "project_id": PROJECT, "user_id": USER,
                   "cluster_template_id": t.uuid, "status": "CREATE_IN_PROGRESS"}),
        );
        let r = action(&d, &ctx(), &new, "create").await.unwrap();
        assert!(r[0]["id"].as_i64().unwrap() > 0);
        assert_eq!(r[0]["floating_ip_enabled"], json!(true));
        assert!(r[0].get("uuid").is_none());
        let mut held = new.clone();
        held["magnum_object.data"]["id"] = r[0]["id"].clone();
        held.as_object_mut()
            .unwrap()
            .remove("magnum_object.changes");
        assert_eq!(
            action(&d, &ctx(), &held, "destroy").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        assert!(get(db, &cuuid).await.is_none());
    });
}

#[tokio::test]
async fn x509keypair_and_federation_methods() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let kw = json!({});
        let kuuid = uuid::Uuid::new_v4().to_string();
        let new = new_obj(
            "X509KeyPair",
            "1.2",
            json!({"uuid": kuuid, "certificate": "CERT", "private_key": "KEY",
                   "project_id": PROJECT, "user_id": USER}),
        );
        let r = action(&d, &ctx(), &new, "create").await.unwrap();
        let id = r[0]["id"].as_i64().unwrap();
        assert_eq!(r[0]["intermediates"], Value::Null);
        for (m, key) in [
            ("get", json!(kuuid)),
            ("get", json!(id.to_string())),
            ("get_by_id", json!(id)),
            ("get_by_uuid", json!(kuuid)),
        ] {
            let r = class(
                &d,
                &ctx(),
                "X509KeyPair",
                m,
                "1.2",
                json!([key]),
                kw.clone(),
            )
            .await
            .unwrap();
            assert_eq!(data(&r)["certificate"], json!("CERT"), "{m}");
            let f = class(
                &d,
                &other_ctx(),
                "X509KeyPair",
                m,
                "1.2",
                json!([key]),
                kw.clone(),
            )
            .await
            .unwrap_err();
            magnum_failure(&f, "X509KeyPairNotFound", 404);
        }
        let f = class(
            &d,
            &ctx(),
            "X509KeyPair",
            "get",
            "1.2",
            json!(["not-an-id"]),
            kw.clone(),
        )
        .await
        .unwrap_err();
        magnum_failure(&f, "InvalidIdentity", 400);
        let r = class(
            &d,
            &ctx(),
            "X509KeyPair",
            "list",
            "1.2",
            json!([]),
            json!({"filters": {"user_id": USER}}),
        )
        .await
        .unwrap();
        assert_eq!(r.as_array().unwrap().len(), 1);
        let loaded = r[0].clone();
        let mut p = loaded.clone();
        p["magnum_object.data"]["intermediates"] = json!("INTER");
        p["magnum_object.changes"] = json!(["intermediates"]);
        assert_eq!(
            action(&d, &ctx(), &p, "save").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        let r = action(&d, &ctx(), &loaded, "refresh").await.unwrap();
        assert_eq!(r[0]["intermediates"], json!("INTER"));
        assert_eq!(
            action(&d, &ctx(), &loaded, "destroy").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );

        let fuuid = uuid::Uuid::new_v4().to_string();
        let new = new_obj(
            "Federation",
            "1.0",
            json!({"uuid": fuuid, "name": "fed", "project_id": PROJECT,
                   "hostcluster_id": "h1", "member_ids": ["m1"], "status": "CREATE_IN_PROGRESS",
                   "properties": {"dns-zone": "example.com."}}),
        );
        let r = action(&d, &ctx(), &new, "create").await.unwrap();
        let id = r[0]["id"].as_i64().unwrap();
        for (m, key) in [
            ("get", json!(fuuid)),
            ("get_by_id", json!(id)),
            ("get_by_uuid", json!(fuuid)),
            ("get_by_name", json!("fed")),
        ] {
            let r = class(&d, &ctx(), "Federation", m, "1.0", json!([key]), kw.clone())
                .await
                .unwrap();
            assert_eq!(data(&r)["hostcluster_id"], json!("h1"), "{m}");
            let f = class(
                &d,
                &other_ctx(),
                "Federation",
                m,
                "1.0",
                json!([key]),
                kw.clone(),
            )
            .await
            .unwrap_err();
            magnum_failure(&f, "FederationNotFound", 404);
        }
        let r = class(
            &d,
            &ctx(),
            "Federation",
            "get_count_all",
            "1.0",
            json!([{"status": ["CREATE_IN_PROGRESS"], "member_ids": ["m1"]}]),
            kw.clone(),
        )
        .await
        .unwrap_err();
        // Magnum's Federation.get_count_all calls a DB method that does not exist
        assert_eq!(r.class, "AttributeError");
        let r = class(
            &d,
            &ctx(),
            "Federation",
            "list",
            "1.0",
            json!([]),
            json!({"filters": {"name": "other"}}),
        )
        .await
        .unwrap();
        assert_eq!(r, json!([]));
        let r = class(
            &d,
            &ctx(),
            "Federation",
            "list",
            "1.0",
            json!([]),
            kw.clone(),
        )
        .await
        .unwrap();
        let loaded = r[0].clone();
        let mut p = loaded.clone();
        p["magnum_object.data"]["status"] = json!("CREATE_COMPLETE");
        p["magnum_object.changes"] = json!(["status"]);
        assert_eq!(
            action(&d, &ctx(), &p, "save").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        let r = action(&d, &ctx(), &loaded, "refresh").await.unwrap();
        assert_eq!(r[0]["status"], json!("CREATE_COMPLETE"));
        assert!(r[0]["obj_what_changed"]
            .as_array()
            .unwrap()
            .contains(&json!("status")));
        assert_eq!(
            action(&d, &ctx(), &loaded, "destroy").await.unwrap(),
            json!([{"obj_what_changed": []}, null])
        );
        let f = action(&d, &ctx(), &loaded, "destroy").await.unwrap_err();
        magnum_failure(&f, "FederationNotFound", 404);
    });
}

#[tokio::test]
async fn backport_versions() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let ng = prim(
            "NodeGroup",
            "1.2",
            json!({"id": 3, "uuid": "9b1f1a46-6b38-4d0b-9e27-0d2b8c1f4a10", "name": "w",
                   "node_count": "4", "node_labels": {"a": "b"}, "node_taints": []}),
            &["node_count", "nonexistent"],
        );
        let mut a = Args::new();
        a.insert("objinst".into(), ng.clone());
        a.insert("object_versions".into(), json!({"NodeGroup": "1.0"}));
        let r = d
            .dispatch(ctx(), "object_backport_versions", a.clone())
            .await
            .unwrap();
        // relabelled, set fields kept (no obj_make_compatible), values coerced, changes ∩ fields
        assert_eq!(
            r,
            prim(
                "NodeGroup",
                "1.0",
                json!({"id": 3, "uuid": "9b1f1a46-6b38-4d0b-9e27-0d2b8c1f4a10", "name": "w",
                       "node_count": 4, "node_labels": {"a": "b"}, "node_taints": []}),
                &["node_count"],
            )
        );
        a.insert("object_versions".into(), json!({"NodeGroup": "1.3"}));
        let f = d
            .dispatch(ctx(), "object_backport_versions", a.clone())
            .await
            .unwrap_err();
        assert_eq!(f.class, "InvalidTargetVersion");
        let mut newer = ng.clone();
        newer["magnum_object.version"] = json!("2.0");
        a.insert("objinst".into(), newer);
        let f = d
            .dispatch(ctx(), "object_backport_versions", a)
            .await
            .unwrap_err();
        assert_eq!(f.class, "IncompatibleObjectVersion");
    });
}

#[tokio::test]
async fn a_cluster_with_its_template_reports_it_as_ovo_does() {
    on_every_backend!(|db| {
        let d = dispatcher(db);
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let a = ready(&c, db, &t, "alpha", &[]).await;
        let row = cluster_row(db, &a).await;
        let nested = codec::encode(&Obj::new(t.clone(), ["name"]));
        let mut p = codec::encode(&Obj::new(row.clone(), ["status_reason"]));
        p["magnum_object.data"]["status_reason"] = json!("x");
        p["magnum_object.data"]["cluster_template"] = nested.clone();
        // save: the deep-copied template differs by identity, so it is always in the
        // updates; it keeps its own changes, so the field stays changed
        let r = action(&d, &ctx(), &p, "save").await.unwrap();
        assert_eq!(
            r,
            json!([{"cluster_template": nested, "obj_what_changed": ["cluster_template"]}, null])
        );
        // refresh: the current template is loaded and assigned; `updated_at` is
        // assigned (so changed) exactly when the save moved it, which depends on
        // whether the save fell in the same second as the row's last write
        let saved = cluster_row(db, &a).await;
        let r = action(&d, &ctx(), &p, "refresh").await.unwrap();
        assert_eq!(
            r[0]["cluster_template"],
            codec::encode(&Obj::unchanged(t.clone()))
        );
        let expected = if saved.updated_at == row.updated_at {
            json!(["status_reason", "cluster_template"])
        } else {
            json!(["status_reason", "updated_at", "cluster_template"])
        };
        assert_eq!(r[0]["obj_what_changed"], expected);
        // backport: the nested template goes to the manifest's version
        let mut args = Args::new();
        args.insert("objinst".into(), p.clone());
        args.insert(
            "object_versions".into(),
            json!({"Cluster": "1.23", "ClusterTemplate": "1.20"}),
        );
        let r = d
            .dispatch(ctx(), "object_backport_versions", args)
            .await
            .unwrap();
        assert_eq!(r["magnum_object.version"], "1.23");
        assert_eq!(
            r["magnum_object.data"]["cluster_template"]["magnum_object.version"],
            "1.20"
        );
        assert_eq!(r["magnum_object.changes"], json!(["status_reason"]));
    });
}
