#![allow(clippy::unwrap_used, clippy::expect_used)]
//! RemoteConductor → in-memory RpcCaller → `remote::serve` → a recording ConductorApi: every
//! method reaches the handler with the same arguments (`Obj` data and changes) it was given,
//! and the wire arguments are the ones magnum-api sends.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Certificate, Cluster, ClusterTemplate, NodeGroup, StringMap};
use openkeel_rpc::codec;
use openkeel_rpc::remote::{serve, RemoteConductor};
use openkeel_rpc::transport::{Args, RemoteFailure, RpcCaller};
use openkeel_rpc::{ConductorApi, Obj};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};

#[derive(Default)]
struct Recorder {
    calls: Mutex<Vec<String>>,
}

impl Recorder {
    fn push(&self, s: String) {
        self.calls.lock().unwrap().push(s);
    }
}

#[async_trait]
impl ConductorApi for Recorder {
    async fn cluster_create(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        m: i32,
        n: i32,
        t: i32,
    ) -> Result<(), MagnumError> {
        self.push(format!("create {c:?} {m} {n} {t}"));
        Ok(())
    }
    async fn cluster_update(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        n: i32,
        hs: Option<String>,
        hr: Option<StringMap>,
        rb: bool,
    ) -> Result<(), MagnumError> {
        self.push(format!("update {c:?} {n} {hs:?} {hr:?} {rb}"));
        Ok(())
    }
    async fn cluster_delete(&self, _: &RequestContext, uuid: String) -> Result<(), MagnumError> {
        self.push(format!("delete {uuid}"));
        Ok(())
    }
    async fn cluster_resize(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        n: i32,
        r: Vec<String>,
        ng: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(format!("resize {c:?} {n} {r:?} {ng:?}"));
        Ok(())
    }
    async fn cluster_upgrade(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        ct: Obj<ClusterTemplate>,
        b: i32,
        ng: Obj<NodeGroup>,
        _rb: bool,
    ) -> Result<(), MagnumError> {
        self.push(format!("upgrade {c:?} {ct:?} {b} {ng:?}"));
        if b == 99 {
            return Err(MagnumError::with_message(ErrorKind::NotSupported, "nope"));
        }
        Ok(())
    }
    async fn nodegroup_create(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        ng: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(format!("ng_create {c:?} {ng:?}"));
        Ok(())
    }
    async fn nodegroup_update(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        ng: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(format!("ng_update {c:?} {ng:?}"));
        Ok(())
    }
    async fn nodegroup_delete(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        ng: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        self.push(format!("ng_delete {c:?} {ng:?}"));
        Ok(())
    }
    async fn sign_certificate(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        cert: Obj<Certificate>,
    ) -> Result<Certificate, MagnumError> {
        self.push(format!("sign {c:?} {cert:?}"));
        let mut out = cert.data;
        out.pem = Some("PEM".into());
        Ok(out)
    }
    async fn get_ca_certificate(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
        ty: Option<String>,
    ) -> Result<Certificate, MagnumError> {
        self.push(format!("get_ca {c:?} {ty:?}"));
        Ok(Certificate {
            cluster_uuid: c.data.uuid,
            pem: Some("CA".into()),
            ..Default::default()
        })
    }
    async fn rotate_ca_certificate(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        self.push(format!("rotate {c:?}"));
        Ok(())
    }
    async fn credential_rotate(
        &self,
        _: &RequestContext,
        c: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        self.push(format!("cred {c:?}"));
        Ok(())
    }
}

type Sent = Vec<(String, &'static str, Args)>;

/// Hands the encoded args to `serve`, after a JSON text round trip (as on the wire).
struct Loopback {
    api: Arc<Recorder>,
    sent: Mutex<Sent>,
}

impl Loopback {
    async fn run(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
        mode: &'static str,
    ) -> Result<Value, RemoteFailure> {
        let text = serde_json::to_string(&args).unwrap();
        let args: Args = serde_json::from_str(&text).unwrap();
        self.sent
            .lock()
            .unwrap()
            .push((method.to_string(), mode, args.clone()));
        serve(self.api.as_ref(), ctx, method, &args).await.unwrap()
    }
}

fn to_magnum(f: RemoteFailure) -> MagnumError {
    match MagnumError::kind_by_class_name(&f.class) {
        Some(k) => MagnumError::with_message(k, f.message),
        None => MagnumError::internal(f.message),
    }
}

struct Caller(Arc<Loopback>);

#[async_trait]
impl RpcCaller for Caller {
    async fn cast(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
    ) -> Result<(), MagnumError> {
        // a cast's failure is logged by the server, never seen by the caller
        let _ = self.0.run(ctx, method, args, "cast").await;
        Ok(())
    }
    async fn call(
        &self,
        ctx: &RequestContext,
        method: &str,
        args: Args,
    ) -> Result<Value, MagnumError> {
        self.0
            .run(ctx, method, args, "call")
            .await
            .map_err(to_magnum)
    }
}

fn fixture(name: &str) -> Value {
    let text = match name {
        "cluster_create" => include_str!("../src/codec/fixtures/cluster_create.json"),
        "cluster_upgrade" => include_str!("../src/codec/fixtures/cluster_upgrade.json"),
        "sign_certificate" => include_str!("../src/codec/fixtures/sign_certificate.json"),
        _ => unreachable!(),
    };
    serde_json::from_str(text).unwrap()
}

fn setup() -> (Arc<Recorder>, Arc<Loopback>, RemoteConductor<Caller>) {
    let rec = Arc::new(Recorder::default());
    let lb = Arc::new(Loopback {
        api: rec.clone(),
        sent: Mutex::new(Vec::new()),
    });
    (rec, lb.clone(), RemoteConductor::new(Caller(lb)))
}

fn ctx() -> RequestContext {
    RequestContext::default()
}

#[tokio::test]
async fn every_business_method_reaches_the_handler_unchanged() {
    let up = fixture("cluster_upgrade");
    let cluster: Obj<Cluster> = codec::decode(&up["args"]["cluster"]).unwrap();
    let ct: Obj<ClusterTemplate> = codec::decode(&up["args"]["cluster_template"]).unwrap();
    let mut ng: Obj<NodeGroup> = codec::decode(&up["args"]["nodegroup"]).unwrap();
    let new: Obj<Cluster> = codec::decode(&fixture("cluster_create")["args"]["cluster"]).unwrap();
    let mut changed = cluster.clone();
    changed.data.health_status_reason = Some(
        [("n0.Ready".to_string(), "True".to_string())]
            .into_iter()
            .collect(),
    );
    changed.touch("health_status_reason");
    ng.data.max_node_count = Some(5);
    ng.touch("max_node_count");
    let mut new_ng = ng.clone();
    new_ng.data.id = 0;
    new_ng.data.name = "extra".into();
    new_ng.changes = [
        "name",
        "uuid",
        "cluster_id",
        "project_id",
        "node_count",
        "role",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    // what a new object looks like once decoded: only its set fields
    let new_ng_seen = Obj::new(
        NodeGroup {
            id: 0,
            uuid: new_ng.data.uuid.clone(),
            name: "extra".into(),
            cluster_id: new_ng.data.cluster_id.clone(),
            project_id: new_ng.data.project_id.clone(),
            node_count: new_ng.data.node_count,
            role: new_ng.data.role.clone(),
            ..Default::default()
        },
        new_ng.changes.clone(),
    );

    let (rec, lb, remote) = setup();
    let c = ctx();
    remote
        .cluster_create(&c, new.clone(), 1, 2, 60)
        .await
        .unwrap();
    remote
        .cluster_update(&c, changed.clone(), 3, None, Some(StringMap::new()), true)
        .await
        .unwrap();
    remote.cluster_delete(&c, "u-1".into()).await.unwrap();
    remote
        .cluster_resize(&c, cluster.clone(), 4, vec![], ng.clone())
        .await
        .unwrap();
    remote
        .cluster_upgrade(&c, cluster.clone(), ct.clone(), 1, ng.clone(), false)
        .await
        .unwrap();
    remote
        .nodegroup_create(&c, cluster.clone(), new_ng.clone())
        .await
        .unwrap();
    remote
        .nodegroup_update(&c, cluster.clone(), ng.clone())
        .await
        .unwrap();
    remote
        .nodegroup_delete(&c, cluster.clone(), ng.clone())
        .await
        .unwrap();
    remote
        .rotate_ca_certificate(&c, cluster.clone())
        .await
        .unwrap();
    remote.credential_rotate(&c, cluster.clone()).await.unwrap();

    // the same calls made in-process
    let direct = Recorder::default();
    direct.cluster_create(&c, new, 1, 2, 60).await.unwrap();
    direct
        .cluster_update(&c, changed, 3, None, Some(StringMap::new()), true)
        .await
        .unwrap();
    direct.cluster_delete(&c, "u-1".into()).await.unwrap();
    direct
        .cluster_resize(&c, cluster.clone(), 4, vec![], ng.clone())
        .await
        .unwrap();
    direct
        .cluster_upgrade(&c, cluster.clone(), ct, 1, ng.clone(), false)
        .await
        .unwrap();
    direct
        .nodegroup_create(&c, cluster.clone(), new_ng_seen)
        .await
        .unwrap();
    direct
        .nodegroup_update(&c, cluster.clone(), ng.clone())
        .await
        .unwrap();
    direct
        .nodegroup_delete(&c, cluster.clone(), ng)
        .await
        .unwrap();
    direct
        .rotate_ca_certificate(&c, cluster.clone())
        .await
        .unwrap();
    direct.credential_rotate(&c, cluster).await.unwrap();
    let got = rec.calls.lock().unwrap().clone();
    let want = direct.calls.lock().unwrap().clone();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(want.iter()) {
        assert_eq!(g, w);
    }

    let sent = lb.sent.lock().unwrap();
    let modes: Vec<(&str, &str)> = sent.iter().map(|(m, k, _)| (m.as_str(), *k)).collect();
    assert_eq!(
        modes,
        [
            ("cluster_create", "cast"),
            ("cluster_update", "cast"),
            ("cluster_delete", "cast"),
            ("cluster_resize", "cast"),
            ("cluster_upgrade", "call"),
            ("nodegroup_create", "cast"),
            ("nodegroup_update", "cast"),
            ("nodegroup_delete", "cast"),
            ("rotate_ca_certificate", "call"),
            ("credential_rotate", "call"),
        ]
    );
    let keys = |i: usize| sent[i].2.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        keys(0),
        ["cluster", "master_count", "node_count", "create_timeout"]
    );
    assert_eq!(
        keys(1),
        [
            "cluster",
            "node_count",
            "health_status",
            "health_status_reason",
            "rollback"
        ]
    );
    assert_eq!(sent[1].2["rollback"], json!(true));
    assert_eq!(sent[1].2["health_status_reason"], json!({}));
    assert_eq!(
        keys(3),
        ["cluster", "node_count", "nodes_to_remove", "nodegroup"]
    );
    assert_eq!(sent[3].2["nodes_to_remove"], json!([]));
    assert_eq!(
        sent[6].2["nodegroup"]["magnum_object.changes"],
        json!(["max_node_count"])
    );
    // a new nodegroup carries only its set fields
    assert!(sent[5].2["nodegroup"]["magnum_object.data"]
        .get("id")
        .is_none());
}

#[tokio::test]
async fn cluster_upgrade_args_are_the_captured_frame() {
    let up = fixture("cluster_upgrade");
    let (_, lb, remote) = setup();
    remote
        .cluster_upgrade(
            &ctx(),
            codec::decode(&up["args"]["cluster"]).unwrap(),
            codec::decode(&up["args"]["cluster_template"]).unwrap(),
            1,
            codec::decode(&up["args"]["nodegroup"]).unwrap(),
            true,
        )
        .await
        .unwrap();
    let sent = lb.sent.lock().unwrap();
    assert_eq!(
        serde_json::to_string(&sent[0].2).unwrap(),
        serde_json::to_string(&up["args"]).unwrap()
    );
}

#[tokio::test]
async fn certificates_and_failures() {
    let sc = fixture("sign_certificate");
    let (_, _, remote) = setup();
    let cluster: Obj<Cluster> = codec::decode(&sc["args"]["cluster"]).unwrap();
    let cert: Obj<Certificate> = codec::decode(&sc["args"]["certificate"]).unwrap();
    let signed = remote
        .sign_certificate(&ctx(), cluster.clone(), cert.clone())
        .await
        .unwrap();
    assert_eq!(signed.pem.as_deref(), Some("PEM"));
    assert_eq!(signed.csr, cert.data.csr);
    let ca = remote
        .get_ca_certificate(&ctx(), cluster.clone(), Some("etcd".into()))
        .await
        .unwrap();
    assert_eq!(ca.pem.as_deref(), Some("CA"));
    assert_eq!(ca.cluster_uuid, cluster.data.uuid);

    // a handler error on a call keeps its class
    let up = fixture("cluster_upgrade");
    let e = remote
        .cluster_upgrade(
            &ctx(),
            cluster,
            codec::decode(&up["args"]["cluster_template"]).unwrap(),
            99,
            codec::decode(&up["args"]["nodegroup"]).unwrap(),
            false,
        )
        .await
        .unwrap_err();
    assert_eq!(e.class_name(), "NotSupported");
}

#[tokio::test]
async fn ping_federation_unknown_and_bad_args() {
    let rec = Recorder::default();
    let c = ctx();
    let r = serve(&rec, &c, "ping_conductor", &Args::new())
        .await
        .unwrap();
    assert_eq!(r.unwrap(), json!(true));
    for m in [
        "federation_create",
        "federation_update",
        "federation_delete",
    ] {
        let f = serve(&rec, &c, m, &Args::new()).await.unwrap().unwrap_err();
        assert_eq!(
            (f.class.as_str(), f.module.as_str()),
            ("NotImplementedError", "builtins")
        );
    }
    let f = serve(&rec, &c, "bogus", &Args::new())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(f.class, "NoSuchMethod");
    assert_eq!(f.module, "oslo_messaging.rpc.dispatcher");
    assert_eq!(f.message, "Endpoint does not support RPC method bogus");
    // indirection methods are left to the caller
    assert!(serve(&rec, &c, "object_action", &Args::new())
        .await
        .is_none());
    // an object at a newer version than ours
    let mut a = Args::new();
    a.insert(
        "cluster".into(),
        json!({"magnum_object.name": "Cluster", "magnum_object.namespace": "magnum",
               "magnum_object.version": "1.25", "magnum_object.data": {}}),
    );
    let f = serve(&rec, &c, "credential_rotate", &a)
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(f.class, "IncompatibleObjectVersion");
    let f = serve(&rec, &c, "cluster_delete", &Args::new())
        .await
        .unwrap()
        .unwrap_err();
    assert_eq!(f.class, "TypeError");
    assert!(rec.calls.lock().unwrap().is_empty());
}
