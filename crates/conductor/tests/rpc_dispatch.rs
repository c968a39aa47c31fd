#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The full RPC loop without a broker: `RemoteConductor` encodes the arguments as magnum-api
//! does, the JSON text crosses an in-memory `RpcCaller`, `ConductorDispatcher` decodes them
//! and runs the real `Conductor` (simulator driver) on SQLite / MariaDB.

mod common;

use async_trait::async_trait;
use common::*;
use openkeel_conductor::rpc_server::ConductorDispatcher;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{ClusterStatus, NodeGroup};
use openkeel_rpc::remote::RemoteConductor;
use openkeel_rpc::transport::{Args, Dispatcher, RemoteFailure, RpcCaller};
use openkeel_rpc::{codec, ConductorApi, Obj};
use serde_json::{json, Value};
use std::sync::Arc;

/// Serializes the args to text and back, then dispatches (a cast is awaited here, so the
/// test sees its effect; its failure is dropped as the transport would only log it).
struct Wire(Arc<ConductorDispatcher>);

impl Wire {
    async fn run(&self, ctx: &RequestContext, m: &str, a: Args) -> Result<Value, RemoteFailure> {
        let a: Args = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
        self.0.dispatch(ctx.clone(), m, a).await
    }
}

#[async_trait]
impl RpcCaller for Wire {
    async fn cast(&self, ctx: &RequestContext, m: &str, a: Args) -> Result<(), MagnumError> {
        if let Err(f) = self.run(ctx, m, a).await {
            eprintln!("cast {m} failed: {f:?}");
        }
        Ok(())
    }
    async fn call(&self, ctx: &RequestContext, m: &str, a: Args) -> Result<Value, MagnumError> {
        self.run(ctx, m, a)
            .await
            .map_err(|f| match MagnumError::kind_by_class_name(&f.class) {
                Some(k) => MagnumError::with_message(k, f.message),
                None => MagnumError::internal(f.message),
            })
    }
}

#[tokio::test]
async fn cluster_lifecycle_over_the_codec() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let d = Arc::new(ConductorDispatcher::new(c.clone()));
        let remote = RemoteConductor::new(Wire(d));
        let t1 = template(db, "k8s-131", "v1.31.2", "ubuntu").await;
        let t2 = template(db, "k8s-132", "v1.32.0", "ubuntu").await;

        // create (cast)
        let new = new_cluster(&t1, "alpha", &[]);
        let uuid = new.data.uuid.clone().unwrap();
        remote.cluster_create(&ctx(), new, 1, 2, 60).await.unwrap();
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateInProgress
        );
        assert_eq!(ngs(db, &uuid).await.len(), 2);
        c.sync_cluster_status().await;
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::CreateComplete
        );

        // update node_count (cast)
        remote
            .cluster_update(&ctx(), obj(db, &uuid).await, 3, None, None, false)
            .await
            .unwrap();
        assert_eq!(
            ng_named(db, &uuid, "default-worker").await.node_count,
            Some(3)
        );
        c.sync_cluster_status().await;

        // resize (cast)
        let w = ng_named(db, &uuid, "default-worker").await;
        remote
            .cluster_resize(&ctx(), obj(db, &uuid).await, 4, vec![], Obj::unchanged(w))
            .await
            .unwrap();
        let w = ng_named(db, &uuid, "default-worker").await;
        assert_eq!(
            (w.node_count, w.status),
            (Some(4), Some(ClusterStatus::UpdateInProgress))
        );
        c.sync_cluster_status().await;

        // upgrade (call)
        let w = ng_named(db, &uuid, "default-worker").await;
        remote
            .cluster_upgrade(
                &ctx(),
                obj(db, &uuid).await,
                Obj::unchanged(t2.clone()),
                1,
                Obj::unchanged(w),
                false,
            )
            .await
            .unwrap();
        let row = cluster_row(db, &uuid).await;
        assert_eq!(row.status, Some(ClusterStatus::UpdateInProgress));
        assert_eq!(row.cluster_template_id, t2.uuid);
        c.sync_cluster_status().await;
        assert_eq!(
            cluster_row(db, &uuid).await.coe_version.as_deref(),
            Some("v1.32.0")
        );

        // nodegroup create / update / delete (casts)
        let cl = cluster_row(db, &uuid).await;
        let ng = Obj::new(
            NodeGroup {
                uuid: uuid::Uuid::new_v4().to_string(),
                name: "extra".into(),
                cluster_id: uuid.clone(),
                project_id: PROJECT.into(),
                flavor_id: Some("m1.small".into()),
                image_id: Some("image-k8s-132".into()),
                node_count: Some(2),
                role: Some("worker".into()),
                min_node_count: Some(0),
                max_node_count: None,
                labels: cl.labels.clone(),
                ..NodeGroup::default()
            },
            [
                "uuid",
                "name",
                "cluster_id",
                "project_id",
                "flavor_id",
                "image_id",
                "node_count",
                "role",
                "min_node_count",
                "max_node_count",
                "labels",
            ],
        );
        remote
            .nodegroup_create(&ctx(), Obj::unchanged(cl), ng)
            .await
            .unwrap();
        let extra = ng_named(db, &uuid, "extra").await;
        assert_eq!(
            (extra.node_count, extra.status, extra.is_default),
            (Some(2), Some(ClusterStatus::CreateInProgress), Some(false))
        );
        c.sync_cluster_status().await;
        let mut patch = Obj::unchanged(ng_named(db, &uuid, "extra").await);
        patch.data.max_node_count = Some(7);
        patch.touch("max_node_count");
        remote
            .nodegroup_update(&ctx(), obj(db, &uuid).await, patch)
            .await
            .unwrap();
        let extra = ng_named(db, &uuid, "extra").await;
        assert_eq!(
            (extra.max_node_count, extra.status),
            (Some(7), Some(ClusterStatus::UpdateInProgress))
        );
        c.sync_cluster_status().await;
        remote
            .nodegroup_delete(
                &ctx(),
                obj(db, &uuid).await,
                Obj::unchanged(ng_named(db, &uuid, "extra").await),
            )
            .await
            .unwrap();
        assert_eq!(
            ng_named(db, &uuid, "extra").await.status,
            Some(ClusterStatus::DeleteInProgress)
        );

        // a handler's error on a call comes back with its class
        let w = ng_named(db, &uuid, "default-worker").await;
        let e = remote
            .cluster_upgrade(
                &ctx(),
                obj(db, &uuid).await,
                Obj::unchanged(t2.clone()),
                1,
                Obj::unchanged(w),
                false,
            )
            .await
            .unwrap_err();
        assert_eq!(e.code(), 400, "{e:?}");

        // delete (cast)
        remote.cluster_delete(&ctx(), uuid.clone()).await.unwrap();
        assert_eq!(
            status(&cluster_row(db, &uuid).await),
            ClusterStatus::DeleteInProgress
        );
    });
}

#[tokio::test]
async fn ping_federation_indirection_and_unknown_methods() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let d = ConductorDispatcher::new(c);
        let r = d.dispatch(ctx(), "ping_conductor", Args::new()).await;
        assert_eq!(r, Ok(json!(true)));
        for m in [
            "federation_create",
            "federation_update",
            "federation_delete",
        ] {
            let f = d.dispatch(ctx(), m, Args::new()).await.unwrap_err();
            assert_eq!(f, RemoteFailure::builtin("NotImplementedError", ""));
        }
        let mut a = Args::new();
        a.insert("objname".into(), json!("Cluster"));
        a.insert("objmethod".into(), json!("get_by_name"));
        let f = d
            .dispatch(ctx(), "object_class_action_versions", a)
            .await
            .unwrap_err();
        assert_eq!(f.class, "NotImplementedError");
        assert!(f.message.contains("Cluster.get_by_name"), "{}", f.message);
        let f = d.dispatch(ctx(), "nope", Args::new()).await.unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.module.as_str(), f.message.as_str()),
            (
                "NoSuchMethod",
                "oslo_messaging.rpc.dispatcher",
                "Endpoint does not support RPC method nope"
            )
        );
    });
}

fn class_action(objname: &str, objmethod: &str, versions: Value, args: Value) -> Args {
    let mut a = Args::new();
    a.insert("objname".into(), json!(objname));
    a.insert("objmethod".into(), json!(objmethod));
    a.insert("object_versions".into(), versions);
    a.insert("args".into(), args);
    a.insert("kwargs".into(), json!({}));
    a
}

#[tokio::test]
async fn indirection_read_paths_from_the_database() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let uuid = ready(&c, db, &t, "alpha", &[]).await;
        let d = ConductorDispatcher::new(c).with_database(db.clone());
        let oca = "object_class_action_versions";
        let cv = json!({"Cluster": "1.24", "ClusterTemplate": "1.21"});

        for (m, key) in [
            ("get_by_name", "alpha"),
            ("get_by_uuid", uuid.as_str()),
            ("get", uuid.as_str()),
        ] {
            let r = d
                .dispatch(
                    ctx(),
                    oca,
                    class_action("Cluster", m, cv.clone(), json!([key])),
                )
                .await
                .unwrap();
            let got: Obj<openkeel_core::objects::Cluster> = codec::decode(&r).unwrap();
            assert_eq!(got.data, cluster_row(db, &uuid).await, "{m}");
            assert!(r.get("magnum_object.changes").is_none());
            assert_eq!(
                r["magnum_object.data"]["created_at"]
                    .as_str()
                    .unwrap()
                    .len(),
                20
            );
        }
        // a single object comes back at the caller's version
        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "Cluster",
                    "get_by_name",
                    json!({"Cluster": "1.21"}),
                    json!(["alpha"]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(r["magnum_object.version"], "1.21");
        // not found keeps Magnum's class
        let f = d
            .dispatch(
                ctx(),
                oca,
                class_action("Cluster", "get_by_name", cv.clone(), json!(["nope"])),
            )
            .await
            .unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.kwargs["code"].clone()),
            ("ClusterNotFound", json!(404))
        );

        let tv = json!({"ClusterTemplate": "1.21"});
        for (m, key) in [
            ("get", t.uuid.clone().unwrap()),
            ("get_by_uuid", t.uuid.clone().unwrap()),
            ("get_by_name", "k8s".to_string()),
        ] {
            let r = d
                .dispatch(
                    ctx(),
                    oca,
                    class_action("ClusterTemplate", m, tv.clone(), json!([key])),
                )
                .await
                .unwrap();
            let got: Obj<openkeel_core::objects::ClusterTemplate> = codec::decode(&r).unwrap();
            assert_eq!(got.data, t, "{m}");
        }

        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "NodeGroup",
                    "get",
                    json!({"NodeGroup": "1.2"}),
                    json!([uuid, "default-worker"]),
                ),
            )
            .await
            .unwrap();
        let ng: Obj<NodeGroup> = codec::decode(&r).unwrap();
        let mut row = ng_named(db, &uuid, "default-worker").await;
        // OVO reads a NULL min_node_count (non-nullable, default 0) as 0
        assert_eq!(row.min_node_count, None);
        row.min_node_count = Some(0);
        assert_eq!(ng.data, row);

        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "Stats",
                    "get_cluster_stats",
                    json!({"Stats": "1.0"}),
                    json!([null]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(
            r,
            json!({"magnum_object.name": "Stats", "magnum_object.namespace": "magnum",
                   "magnum_object.version": "1.0",
                   "magnum_object.data": {"clusters": 1, "nodes": 3},
                   "magnum_object.changes": ["clusters", "nodes"]})
        );

        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "MagnumService",
                    "list",
                    json!({"MagnumService": "1.0"}),
                    json!([]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(r, json!([]));

        // the count and a filtered list are served
        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action("Cluster", "get_count_all", cv.clone(), json!([])),
            )
            .await
            .unwrap();
        assert_eq!(r, json!(1));
        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "Cluster",
                    "list",
                    cv.clone(),
                    json!([null, null, null, null, {"status": ["X"]}]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(r, json!([]));
        // an object method that does not exist is Python's AttributeError
        let f = d
            .dispatch(
                ctx(),
                oca,
                class_action("Cluster", "frobnicate", cv.clone(), json!([])),
            )
            .await
            .unwrap_err();
        assert_eq!(f.class, "AttributeError");
        // an unknown object class is OVO's UnsupportedObjectError
        let f = d
            .dispatch(
                ctx(),
                oca,
                class_action("Bay", "get", json!({"Bay": "1.0"}), json!([])),
            )
            .await
            .unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.module.as_str()),
            ("UnsupportedObjectError", "oslo_versionedobjects.exception")
        );
    });
}

#[tokio::test]
async fn indirection_lists() {
    on_every_backend!(|db| {
        let (c, _rec) = conductor(db);
        let t = template(db, "k8s", "v1.31.2", "ubuntu").await;
        let a = ready(&c, db, &t, "alpha", &[]).await;
        let b = ready(&c, db, &t, "beta", &[]).await;
        let d = ConductorDispatcher::new(c).with_database(db.clone());
        let oca = "object_class_action_versions";
        let cv = json!({"Cluster": "1.24", "ClusterTemplate": "1.21"});
        let names = |r: &Value| -> Vec<String> {
            r.as_array()
                .unwrap()
                .iter()
                .map(|o| {
                    o["magnum_object.data"]["name"]
                        .as_str()
                        .unwrap()
                        .to_string()
                })
                .collect()
        };
        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action("Cluster", "list", cv.clone(), json!([])),
            )
            .await
            .unwrap();
        assert_eq!(names(&r), ["alpha", "beta"]);
        // limit 1 after the marker (a Cluster primitive, as magnum-api sends it)
        let marker = codec::encode(&Obj::unchanged(cluster_row(db, &a).await));
        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action("Cluster", "list", cv.clone(), json!([1, marker])),
            )
            .await
            .unwrap();
        assert_eq!(names(&r), ["beta"]);
        let mut args = class_action("Cluster", "list", cv.clone(), json!([]));
        args.insert(
            "kwargs".into(),
            json!({"sort_key": "name", "sort_dir": "desc"}),
        );
        let r = d.dispatch(ctx(), oca, args).await.unwrap();
        assert_eq!(names(&r), ["beta", "alpha"]);

        let r = d
            .dispatch(
                ctx(),
                oca,
                class_action(
                    "ClusterTemplate",
                    "list",
                    json!({"ClusterTemplate": "1.21"}),
                    json!([]),
                ),
            )
            .await
            .unwrap();
        assert_eq!(names(&r), ["k8s"]);

        let mut args = class_action("NodeGroup", "list", json!({"NodeGroup": "1.2"}), json!([b]));
        args.insert("kwargs".into(), json!({"filters": {"is_default": true}}));
        let r = d.dispatch(ctx(), oca, args).await.unwrap();
        assert_eq!(names(&r), ["default-master", "default-worker"]);
        let mut args = class_action("NodeGroup", "list", json!({"NodeGroup": "1.2"}), json!([b]));
        args.insert("kwargs".into(), json!({"filters": {"role": "worker"}}));
        let r = d.dispatch(ctx(), oca, args).await.unwrap();
        let ng: Obj<NodeGroup> = codec::decode(&r[0]).unwrap();
        assert_eq!(ng.data.cluster_id, b);
        assert_eq!(ng.data.role.as_deref(), Some("worker"));
    });
}
