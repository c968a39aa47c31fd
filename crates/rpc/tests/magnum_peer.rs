//! OpenKeel's API side (`RemoteConductor` over `AmqpCaller`) against a REAL Magnum 23.0.0 RPC
//! server: `tests/python/magnum_rpc_peer.py` builds it exactly as magnum-conductor does
//! (Magnum's transport set-up, target and `MagnumObjectSerializer`) and records what Magnum's
//! code deserialized. So the envelope, the `_context_*` keys, the versioned objects and the
//! failure replies are checked by the real oslo.messaging and oslo.versionedobjects, not by a
//! reimplementation. Needs RabbitMQ and the test venv (magnum==23.0.0).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use openkeel_core::context::RequestContext;
use openkeel_core::error::ErrorKind;
use openkeel_core::objects::{Cluster, ClusterTemplate, NodeGroup};
use openkeel_rpc::oslo::client::AmqpCaller;
use openkeel_rpc::oslo::RabbitSettings;
use openkeel_rpc::remote::RemoteConductor;
use openkeel_rpc::{codec, ConductorApi, Obj};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

fn fixture(name: &str) -> Value {
    let text = match name {
        "cluster_create" => include_str!("../src/codec/fixtures/cluster_create.json"),
        "cluster_upgrade" => include_str!("../src/codec/fixtures/cluster_upgrade.json"),
        _ => unreachable!(),
    };
    serde_json::from_str(text).unwrap()
}

struct Peer {
    child: tokio::process::Child,
    record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Peer {
    async fn start(python: PathBuf, url: &str, exchange: &str, topic: &str) -> Peer {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("record.jsonl");
        let script = openkeel_tests::workspace_root().join("tests/python/magnum_rpc_peer.py");
        let mut child = openkeel_tests::helper(python)
            .arg(script)
            .args(["server", url, exchange, topic])
            .arg(&record)
            .env("PYTHONWARNINGS", "ignore")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("start the Magnum RPC peer");
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        let ready = tokio::time::timeout(Duration::from_secs(60), async {
            while let Ok(Some(l)) = lines.next_line().await {
                if l.trim() == "READY" {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(
            matches!(ready, Ok(true)),
            "the Magnum RPC peer did not start"
        );
        // Give oslo's consumer a moment to be attached after start() returned.
        tokio::time::sleep(Duration::from_millis(500)).await;
        Peer {
            child,
            record,
            _dir: dir,
        }
    }

    /// Wait until `n` records exist and return them.
    async fn records(&self, n: usize) -> Vec<Value> {
        for _ in 0..200 {
            if let Ok(text) = std::fs::read_to_string(&self.record) {
                let v: Vec<Value> = text
                    .lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                if v.len() >= n {
                    return v;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the Magnum peer recorded fewer than {n} calls");
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

fn ctx() -> RequestContext {
    RequestContext {
        user_id: Some("noauth-admin".into()),
        project_id: Some("noauth-project".into()),
        user_name: Some("admin".into()),
        project_name: Some("admin".into()),
        user_domain_id: Some("default".into()),
        roles: vec!["admin".into(), "member".into(), "reader".into()],
        is_admin: true,
        auth_token: Some("notused".into()),
        request_id: RequestContext::new_request_id(),
        ..Default::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn magnums_own_conductor_side_reads_what_openkeel_api_sends() {
    let Some(amqp) = openkeel_tests::rabbit_url() else {
        return;
    };
    let Some(python) = openkeel_tests::venv_bin("python") else {
        return;
    };
    let url = amqp.replacen("amqp://", "rabbit://", 1);
    let id = uuid::Uuid::new_v4().simple().to_string();
    let (exchange, topic) = (format!("okt-{id}"), format!("okt-{id}-conductor"));
    let peer = Peer::start(python, &url, &exchange, &topic).await;

    let mut s = RabbitSettings::for_url(&url, "openkeel-api").unwrap();
    s.exchange = exchange.clone();
    s.rpc_response_timeout = Duration::from_secs(30);
    let remote = RemoteConductor::new(AmqpCaller::new(Arc::new(s), topic.clone()));

    // A cast with a new Cluster (the captured frame's object and change list).
    let new: Obj<Cluster> = codec::decode(&fixture("cluster_create")["args"]["cluster"]).unwrap();
    let c = ctx();
    remote
        .cluster_create(&c, new.clone(), 1, 2, 60)
        .await
        .unwrap();
    let rec = peer.records(1).await;
    let r = &rec[0];
    assert_eq!(r["method"], "cluster_create");
    assert_eq!(r["context_class"], "magnum.common.context.RequestContext");
    for k in [
        "user_id",
        "project_id",
        "request_id",
        "user_name",
        "project_name",
    ] {
        assert_eq!(r["context"][k], c.to_dict()[k], "context key {k}");
    }
    assert_eq!(
        r["context"]["roles"],
        serde_json::json!(["admin", "member", "reader"])
    );
    assert_eq!(r["context"]["is_admin"], true);
    let cl = &r["args"]["cluster"];
    assert_eq!(cl["obj_name"], "Cluster");
    let mut changes: Vec<String> = new.changes.iter().cloned().collect();
    changes.sort();
    assert_eq!(cl["changes"], serde_json::json!(changes));
    // Magnum's object, re-serialized by Magnum, holds exactly what OpenKeel sent.
    let ours = codec::encode(&new);
    assert_eq!(
        cl["primitive"]["magnum_object.data"], ours["magnum_object.data"],
        "Magnum's view of the cluster differs"
    );
    assert_eq!(r["args"]["node_count"], 2);
    assert_eq!(r["args"]["create_timeout"], 60);

    // A call answered with Magnum's NotSupported: 400 with Magnum's message.
    let up = fixture("cluster_upgrade");
    let cluster: Obj<Cluster> = codec::decode(&up["args"]["cluster"]).unwrap();
    let ct: Obj<ClusterTemplate> = codec::decode(&up["args"]["cluster_template"]).unwrap();
    let ng: Obj<NodeGroup> = codec::decode(&up["args"]["nodegroup"]).unwrap();
    let e = remote
        .cluster_upgrade(&ctx(), cluster.clone(), ct.clone(), 1, ng.clone(), false)
        .await
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotSupported);
    assert_eq!(e.code(), 400);
    assert_eq!(
        e.message(),
        "Upgrading a cluster when status is \"UPDATE_IN_PROGRESS\" is not supported."
    );
    let rec = peer.records(2).await;
    assert_eq!(
        rec[1]["args"]["cluster_template"]["obj_name"],
        "ClusterTemplate"
    );
    assert_eq!(rec[1]["args"]["nodegroup"]["obj_name"], "NodeGroup");
    assert_eq!(
        rec[1]["args"]["cluster"]["primitive"]["magnum_object.data"],
        codec::encode(&cluster)["magnum_object.data"]
    );

    // A call whose result is a Magnum object (Certificate), decoded by OpenKeel.
    let cert = remote
        .get_ca_certificate(&ctx(), cluster.clone(), Some("etcd".into()))
        .await
        .unwrap();
    assert_eq!(cert.cluster_uuid, cluster.data.uuid);
    assert_eq!(cert.ca_cert_type.as_deref(), Some("etcd"));
    assert!(cert.pem.unwrap().starts_with("-----BEGIN CERTIFICATE-----"));

    // A plain cast with a string argument.
    remote.cluster_delete(&ctx(), "u-1".into()).await.unwrap();
    let rec = peer.records(4).await;
    assert_eq!(rec[3]["method"], "cluster_delete");
    assert_eq!(rec[3]["args"]["uuid"], "u-1");
}
