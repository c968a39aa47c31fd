//! The driver's requests against an in-memory Kubernetes API (kube's client over a tower
//! service): the order of create's writes, idempotent retries, error classification and
//! timeouts, the requests of one status tick, delete and its clean-up. What the real API
//! server and the real topology controller do with the objects is `driver_lifecycle.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_driver_capi::driver::{entry_points_for, CapiDriver};
use openkeel_driver_capi::mgmt::Mgmt;
use openkeel_drivers::{Driver, DriverContext, ProvidedType, StatusReport};
use serde_json::json;

const NS: &str = "magnum-system";
const SECRETS: &str = "/api/v1/namespaces/magnum-system/secrets";
const CLUSTERS: &str = "/apis/cluster.x-k8s.io/v1beta1/namespaces/magnum-system/clusters";
const CLASSES: &str = "/apis/cluster.x-k8s.io/v1beta1/namespaces/magnum-system/clusterclasses";
const CRSS: &str =
    "/apis/addons.cluster.x-k8s.io/v1beta1/namespaces/magnum-system/clusterresourcesets";

struct Rig {
    api: FakeApi,
    fakes: Fakes,
    driver: Arc<dyn Driver>,
    mgmt: Mgmt,
}

fn rig_with_timeout(timeout: Duration) -> Rig {
    let api = FakeApi::default();
    let fakes = Fakes::new();
    let mut s = settings(NS);
    s.request_timeout = timeout;
    let mgmt = Mgmt::new(api.client(), NS, timeout);
    let inner = Arc::new(CapiDriver::with_mgmt(
        s,
        fakes.deps(),
        stand_in_charts(),
        mgmt.clone(),
    ));
    let driver = entry_points_for(inner).remove(0).1;
    Rig {
        api,
        fakes,
        driver,
        mgmt,
    }
}

fn rig() -> Rig {
    rig_with_timeout(Duration::from_secs(10))
}

async fn create(r: &Rig, c: &mut Cluster, ngs: &[NodeGroup]) -> openkeel_drivers::DriverResult<()> {
    let req = RequestContext::default();
    let t = template();
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: ngs,
    };
    r.driver.create_cluster(&ctx, c, 60).await.map(|_| ())
}

async fn status(
    r: &Rig,
    c: &Cluster,
    ngs: &[NodeGroup],
) -> openkeel_drivers::DriverResult<StatusReport> {
    let req = RequestContext::default();
    let t = template();
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: ngs,
    };
    r.driver.update_cluster_status(&ctx, c).await
}

async fn delete(r: &Rig, c: &mut Cluster) -> openkeel_drivers::DriverResult<()> {
    let req = RequestContext::default();
    let t = template();
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: &[],
    };
    r.driver.delete_cluster(&ctx, c).await.map(|_| ())
}

fn patches(log: &[String]) -> Vec<String> {
    log.iter()
        .filter(|l| l.starts_with("PATCH "))
        .map(|l| {
            let p = l.trim_start_matches("PATCH ");
            let segs: Vec<&str> = p.split('/').collect();
            format!("{}/{}", segs[segs.len() - 2], segs[segs.len() - 1])
        })
        .collect()
}

#[test]
fn five_entry_points_with_magnum_cluster_apis_tuples() {
    let inner = Arc::new(CapiDriver::new(
        settings(NS),
        Fakes::new().deps(),
        stand_in_charts(),
    ));
    let eps = entry_points_for(inner);
    let got: Vec<(String, Vec<ProvidedType>)> =
        eps.iter().map(|(n, d)| (n.clone(), d.provides())).collect();
    let want = [
        ("k8s_cluster_api_ubuntu", "ubuntu"),
        ("k8s_cluster_api_ubuntu_focal", "ubuntu-focal"),
        ("k8s_cluster_api_debian", "debian"),
        ("k8s_cluster_api_flatcar", "flatcar"),
        ("k8s_cluster_api_rockylinux", "rockylinux"),
    ];
    assert_eq!(got.len(), 5);
    for ((name, provides), (wn, wos)) in got.iter().zip(want) {
        assert_eq!(name, wn);
        assert_eq!(provides, &vec![ProvidedType::new("vm", wos, "kubernetes")]);
    }
    for (n, d) in &eps {
        assert_eq!(d.name(), n);
        assert!(!d.beta());
    }
}

#[tokio::test]
async fn create_writes_magnum_cluster_apis_objects_in_its_order() {
    let r = rig();
    let mut c = cluster(UUID);
    let ngs = nodegroups(UUID);
    create(&r, &mut c, &ngs).await.unwrap();
    let stack_id = c.stack_id.clone().unwrap();
    assert!(stack_id.starts_with("kube-") && stack_id.len() == 10);
    let log = r.api.log();
    assert_eq!(
        log[0],
        format!("GET {CLUSTERS}/{stack_id}"),
        "a free name first"
    );
    assert_eq!(
        patches(&log),
        vec![
            "namespaces/magnum-system".to_string(),
            "openstackclustertemplates/magnum-v0.38.2".into(),
            "openstackmachinetemplates/magnum-v0.38.2".into(),
            "kubeadmcontrolplanetemplates/magnum-v0.38.2".into(),
            "kubeadmconfigtemplates/magnum-v0.38.2".into(),
            "clusterclasses/magnum-v0.38.2".into(),
            format!("clusterresourcesets/{UUID}"),
            format!("clusterresourcesets/{stack_id}-cloud-provider"),
            format!("secrets/{stack_id}-cloud-config"),
            format!("secrets/{stack_id}-ca"),
            format!("secrets/{stack_id}-etcd"),
            format!("secrets/{stack_id}-proxy"),
            format!("secrets/{stack_id}-sa"),
            format!("secrets/{UUID}"),
            format!("secrets/{stack_id}-cloud-provider"),
            format!("clusters/{stack_id}"),
        ]
    );
    // requests of one create: the ClusterClass set is looked for, then written
    assert_eq!(log[1], format!("GET {CLASSES}/magnum-v0.38.2"));
    assert_eq!(log.len(), 20, "{log:#?}");

    // a second create finds the class and writes only its own objects
    let before = r.api.log().len();
    let mut c2 = cluster("0f2d7c1e-9a55-4b1e-8c3d-2e4f6a8b0c1d");
    let ngs2 = nodegroups("0f2d7c1e-9a55-4b1e-8c3d-2e4f6a8b0c1d");
    create(&r, &mut c2, &ngs2).await.unwrap();
    let log2 = r.api.log()[before..].to_vec();
    assert!(
        !patches(&log2)
            .iter()
            .any(|p| p.contains("magnum-v0.38.2") || p.starts_with("namespaces/")),
        "{log2:#?}"
    );
    assert_eq!(log2.len(), 14, "{log2:#?}");
    let calls = r.fakes.calls.all();
    assert!(calls.contains(&format!("appcred create {UUID}")));
    assert!(calls.contains(&format!(
        "server group ensure {stack_id} soft-anti-affinity"
    )));
    assert!(calls.contains(&format!(
        "server group ensure {stack_id}-default-worker soft-anti-affinity"
    )));
    // the Cluster: labels, class, version, variables with the looked-up values
    let obj = r.api.get(CLUSTERS, &stack_id).unwrap();
    assert_eq!(obj["metadata"]["labels"]["cluster-uuid"], UUID);
    assert_eq!(obj["metadata"]["namespace"], NS);
    assert_eq!(obj["spec"]["topology"]["class"], "magnum-v0.38.2");
    assert_eq!(obj["spec"]["topology"]["version"], "v1.30.4");
    let vars = obj["spec"]["topology"]["variables"].as_array().unwrap();
    assert_eq!(vars.len(), 39);
    let var = |n: &str| vars.iter().find(|v| v["name"] == n).unwrap()["value"].clone();
    assert_eq!(var("externalNetworkId"), id_of("public").as_str());
    assert_eq!(var("controlPlaneFlavor"), "m1.medium");
    assert_eq!(var("imageUUID"), "11111111-2222-3333-4444-555555555555");
    assert_eq!(var("serverGroupId"), id_of(&stack_id).as_str());
    let md = &obj["spec"]["topology"]["workers"]["machineDeployments"][0];
    let ovr = md["variables"]["overrides"].as_array().unwrap();
    assert_eq!(
        ovr.iter().find(|v| v["name"] == "serverGroupId").unwrap()["value"],
        id_of(&format!("{stack_id}-default-worker")).as_str()
    );
    // Secrets are written as data (base64), the CA from the certificate manager
    let ca = r.api.get(SECRETS, &format!("{stack_id}-ca")).unwrap();
    assert!(ca.get("stringData").is_none());
    assert_eq!(ca["type"], "cluster.x-k8s.io/secret");
    let crt = openkeel_driver_capi::mgmt::secret_text(&ca, "tls.crt").unwrap();
    assert!(crt.contains("\nCA\n"));
    let cc = r
        .api
        .get(SECRETS, &format!("{stack_id}-cloud-config"))
        .unwrap();
    let clouds = openkeel_driver_capi::mgmt::secret_text(&cc, "clouds.yaml").unwrap();
    assert!(
        clouds.contains("application_credential_id: ac-1"),
        "{clouds}"
    );
}

#[tokio::test]
async fn a_retried_create_converges() {
    let r = rig();
    let mut c = cluster(UUID);
    let ngs = nodegroups(UUID);
    // the Cluster write fails transiently (the API server restarting)
    r.api
        .fault("PATCH", "/clusters/", 503, "the server is shutting down", 1);
    let e = create(&r, &mut c, &ngs).await.unwrap_err();
    assert!(e.is_transient(), "{e}");
    assert!(
        e.message().contains("apply Cluster magnum-system/kube-"),
        "{e}"
    );
    let stack_id = c.stack_id.clone().unwrap();
    r.api.clear_log();
    create(&r, &mut c, &ngs).await.unwrap();
    assert_eq!(
        c.stack_id.as_deref(),
        Some(stack_id.as_str()),
        "the stack_id is kept"
    );
    assert!(r.api.get(CLUSTERS, &stack_id).is_some());
    let creates = r
        .fakes
        .calls
        .all()
        .iter()
        .filter(|c| c.starts_with("appcred create"))
        .count();
    assert_eq!(creates, 1, "the credential of the first attempt is reused");
    assert!(!r.api.log()[0]
        .starts_with("GET /apis/cluster.x-k8s.io/v1beta1/namespaces/magnum-system/clusters/"));
    let clusters: Vec<String> = r
        .api
        .names()
        .into_iter()
        .filter(|n| n.contains("/clusters/"))
        .collect();
    assert_eq!(clusters.len(), 1);
}

#[tokio::test]
async fn taken_stack_ids_are_skipped() {
    let r = rig();
    // every candidate name exists: after 10 GETs, a transient error
    r.api.fault("GET", "/clusters/kube-", 200, "", 100);
    let mut c = cluster(UUID);
    let e = create(&r, &mut c, &nodegroups(UUID)).await.unwrap_err();
    assert!(e.is_transient());
    assert!(
        e.message().contains("No free Cluster API cluster name"),
        "{e}"
    );
    assert_eq!(r.api.log().len(), 10);
    assert!(c.stack_id.is_none());
}

#[tokio::test]
async fn errors_are_transient_or_permanent_and_name_the_object() {
    for (code, transient) in [
        (409, true),
        (429, true),
        (500, true),
        (422, false),
        (403, false),
        (400, false),
    ] {
        let r = rig();
        r.api.fault(
            "PATCH",
            "/clusterclasses/",
            code,
            "storage is (re)initializing",
            1,
        );
        let mut c = cluster(UUID);
        let e = create(&r, &mut c, &nodegroups(UUID)).await.unwrap_err();
        assert_eq!(e.is_transient(), transient, "{code}: {e}");
        assert!(
            e.message().starts_with(
                "Kubernetes API: apply ClusterClass magnum-system/magnum-v0.38.2: Injected (HTTP"
            ),
            "{e}"
        );
    }
}

#[tokio::test]
async fn a_hung_api_server_is_a_transient_timeout() {
    let r = rig_with_timeout(Duration::from_millis(300));
    r.api.fault("PATCH", "/namespaces/magnum-system", 0, "", 1);
    let mut c = cluster(UUID);
    let started = std::time::Instant::now();
    let e = create(&r, &mut c, &nodegroups(UUID)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(e.is_transient());
    assert_eq!(
        e.message(),
        "Kubernetes API: apply Namespace magnum-system: no answer within 0.3 s"
    );
}

#[tokio::test]
async fn an_unusable_kubeconfig_is_a_permanent_error_at_first_use() {
    let mut s = settings(NS);
    s.client.kubeconfig = "/nonexistent/openkeel/kubeconfig".into();
    let inner = Arc::new(CapiDriver::new(s, Fakes::new().deps(), stand_in_charts()));
    let d = entry_points_for(inner).remove(0).1;
    let req = RequestContext::default();
    let t = template();
    let ngs = nodegroups(UUID);
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: &ngs,
    };
    let mut c = cluster(UUID);
    let e = d.create_cluster(&ctx, &mut c, 60).await.unwrap_err();
    assert!(!e.is_transient());
    assert!(
        e.message().contains("/nonexistent/openkeel/kubeconfig")
            && e.message().contains("[capi_client] kubeconfig"),
        "{e}"
    );
}

fn cond(t: &str, s: &str) -> serde_json::Value {
    json!({"type": t, "status": s, "reason": "R", "message": "m", "severity": if s == "True" {""} else {"Info"}})
}

/// The stand-in's work for the cluster `stack_id`: infrastructure and control plane ready,
/// its KubeadmControlPlane and the default worker's MachineDeployment rolled out.
fn mark_ready(r: &Rig, stack_id: &str) {
    let mut obj = r.api.get(CLUSTERS, stack_id).unwrap();
    obj["spec"]["controlPlaneEndpoint"] = json!({"host": "192.0.2.7", "port": 6443});
    obj["status"] = json!({"conditions": [cond("ControlPlaneReady", "True"), cond("InfrastructureReady", "True"), cond("Ready", "True")]});
    r.api.put(CLUSTERS, stack_id, obj);
    let label = json!({"cluster.x-k8s.io/cluster-name": stack_id});
    r.api.put(
        "/apis/controlplane.cluster.x-k8s.io/v1beta1/namespaces/magnum-system/kubeadmcontrolplanes",
        "cp",
        json!({"metadata": {"name": "cp", "labels": label}, "status": {"replicas": 1, "updatedReplicas": 1, "ready": true, "observedGeneration": 1}}),
    );
    let mut md_labels = label.clone();
    md_labels["topology.cluster.x-k8s.io/deployment-name"] = json!("default-worker");
    r.api.put(
        "/apis/cluster.x-k8s.io/v1beta1/namespaces/magnum-system/machinedeployments",
        "md",
        json!({"metadata": {"name": "md", "labels": md_labels}, "spec": {"replicas": 1}, "status": {"phase": "Running"}}),
    );
}

#[tokio::test]
async fn status_ticks_from_early_poll_to_create_complete() {
    let r = rig();
    let mut c = cluster(UUID);
    let mut ngs = nodegroups(UUID);
    create(&r, &mut c, &ngs).await.unwrap();
    let stack_id = c.stack_id.clone().unwrap();
    for ng in &mut ngs {
        ng.stack_id = Some(stack_id.clone());
    }
    // the Cluster exists but CAPI has not reconciled it yet
    let before = r.mgmt.request_count();
    let rep = status(&r, &c, &ngs).await.unwrap();
    let not_ready_requests = r.mgmt.request_count() - before;
    assert_eq!(
        rep.status.as_ref().map(|s| s.status),
        Some(ClusterStatus::CreateInProgress)
    );
    assert_eq!(
        rep.status.unwrap().reason.as_deref(),
        Some("CAPI Cluster status: no events yet. CAPI OpenstackCluster status reason: not created yet")
    );
    // GET Cluster, LIST KCP, MD, Machine, OpenStackCluster, Events (no OpenStackCluster yet)
    assert_eq!(not_ready_requests, 6, "{:#?}", r.api.log());

    // the stand-in: infrastructure and control plane ready
    mark_ready(&r, &stack_id);
    let before = r.mgmt.request_count();
    let rep = status(&r, &c, &ngs).await.unwrap();
    let ready_requests = r.mgmt.request_count() - before;
    assert_eq!(
        rep.status.as_ref().map(|s| s.status),
        Some(ClusterStatus::CreateComplete)
    );
    assert_eq!(rep.api_address.as_deref(), Some("https://192.0.2.7:6443"));
    assert_eq!(rep.coe_version.as_deref(), Some("v1.30.4"));
    assert_eq!(rep.nodegroups.len(), 2);
    // the nodegroups were still in progress: GET Cluster, LIST KCP, MD, Machine, OpenStackCluster
    assert_eq!(ready_requests, 5);
}

#[tokio::test]
async fn status_reports_capi_failures_as_permanent() {
    let r = rig();
    let mut c = cluster(UUID);
    let ngs = nodegroups(UUID);
    create(&r, &mut c, &ngs).await.unwrap();
    let stack_id = c.stack_id.clone().unwrap();
    r.api.put(
        "/apis/cluster.x-k8s.io/v1beta1/namespaces/magnum-system/machines",
        "m1",
        json!({"metadata": {"name": "m1", "labels": {"cluster.x-k8s.io/cluster-name": stack_id}},
            "status": {"failureReason": "CreateError", "failureMessage": "Quota exceeded for instances"}}),
    );
    let e = status(&r, &c, &ngs).await.unwrap_err();
    assert!(!e.is_transient());
    assert_eq!(
        e.message(),
        "Machine m1 failed: CreateError: Quota exceeded for instances"
    );
    // an unreachable API server changes nothing (transient): the first request of a status
    // call, the LIST of the Clusters by their cluster-uuid label, answers 503
    r.api.fault("GET", "/clusters", 503, "unavailable", 1);
    assert!(status(&r, &c, &ngs).await.unwrap_err().is_transient());
}

#[tokio::test]
async fn delete_then_clean_up_once_the_cluster_is_gone() {
    let r = rig();
    let mut c = cluster(UUID);
    let ngs = nodegroups(UUID);
    create(&r, &mut c, &ngs).await.unwrap();
    let stack_id = c.stack_id.clone().unwrap();
    let the_cluster = r.api.get(CLUSTERS, &stack_id).unwrap();
    r.api.clear_log();
    c.status = Some(ClusterStatus::DeleteInProgress);
    delete(&r, &mut c).await.unwrap();
    assert_eq!(
        r.api.log(),
        vec![
            format!("DELETE {CRSS}/{stack_id}-cloud-provider"),
            format!("DELETE {SECRETS}/{stack_id}-cloud-provider"),
            format!("DELETE {CRSS}/{UUID}"),
            format!("DELETE {SECRETS}/{UUID}"),
            format!("DELETE {CLUSTERS}/{stack_id}"),
        ]
    );
    // CAPI still tearing down (its finalizer): the Cluster is still there
    r.api.put(CLUSTERS, &stack_id, the_cluster);
    let rep = status(&r, &c, &ngs).await.unwrap();
    assert_eq!(
        rep.status.as_ref().map(|s| s.status),
        Some(ClusterStatus::DeleteInProgress)
    );
    assert!(r.api.get(SECRETS, &format!("{stack_id}-ca")).is_some());
    assert!(!r
        .fakes
        .calls
        .all()
        .iter()
        .any(|c| c.starts_with("appcred delete")));
    // gone: clean-up and DELETE_COMPLETE
    r.api.remove(CLUSTERS, &stack_id);
    let rep = status(&r, &c, &ngs).await.unwrap();
    assert_eq!(
        rep.status.as_ref().map(|s| s.status),
        Some(ClusterStatus::DeleteComplete)
    );
    let left: Vec<String> = r
        .api
        .names()
        .into_iter()
        .filter(|n| n.contains(&stack_id) || n.contains(UUID))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let calls = r.fakes.calls.all();
    assert!(calls.contains(&format!("appcred delete user1 {UUID}")));
    assert!(calls.contains(&format!("server group delete {stack_id}")));
    assert!(calls.contains(&format!("server group delete {stack_id}-default-worker")));
    assert!(r.fakes.creds.live.lock().unwrap().is_empty());
    // the ClusterClass set stays (shared by every cluster of this driver version)
    assert!(r
        .api
        .names()
        .iter()
        .any(|n| n.ends_with("/clusterclasses/magnum-v0.38.2")));
}

#[tokio::test]
async fn deleting_what_is_already_gone_completes() {
    // never created: no stack_id
    let r = rig();
    let mut c = cluster(UUID);
    c.status = Some(ClusterStatus::DeleteInProgress);
    delete(&r, &mut c).await.unwrap();
    assert!(r.api.log().is_empty());
    let rep = status(&r, &c, &nodegroups(UUID)).await.unwrap();
    assert_eq!(
        rep.status.map(|s| s.status),
        Some(ClusterStatus::DeleteComplete)
    );

    // a stack_id whose objects are all gone already
    let r = rig();
    c.stack_id = Some("kube-zzzzz".into());
    delete(&r, &mut c).await.unwrap();
    let rep = status(&r, &c, &nodegroups(UUID)).await.unwrap();
    assert_eq!(
        rep.status.map(|s| s.status),
        Some(ClusterStatus::DeleteComplete)
    );
}

/// One status tick over many clusters in progress, asked at once as the conductor's status
/// sync does: the lists of all of them are shared (`batch.rs`), so the requests per cluster
/// stay under two (one GET of each `Cluster`, one LIST per kind for all), and each cluster's
/// report is made of its own objects only. Unbatched, the same tick took 6 requests per
/// cluster (47 for these 8).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tick_over_many_clusters_shares_the_lists() {
    let r = rig();
    let mut all = Vec::new();
    for i in 0..8 {
        let uuid = format!("0000000{i}-1111-2222-3333-444444444444");
        let mut c = cluster(&uuid);
        let mut ngs = nodegroups(&uuid);
        create(&r, &mut c, &ngs).await.unwrap();
        let stack_id = c.stack_id.clone().unwrap();
        for ng in &mut ngs {
            ng.stack_id = Some(stack_id.clone());
        }
        all.push((c, ngs));
    }
    // the first cluster is up: ready, with its control plane and workers
    let first = all[0].0.stack_id.clone().unwrap();
    mark_ready(&r, &first);

    // the calls overlap as the conductor's do: each answer takes a few milliseconds
    r.api.0.lock().unwrap().latency = Duration::from_millis(5);
    let before = r.mgmt.request_count();
    let reports =
        futures_util::future::join_all(all.iter().map(|(c, ngs)| status(&r, c, ngs))).await;
    let requests = r.mgmt.request_count() - before;
    let statuses: Vec<_> = reports
        .into_iter()
        .map(|rep| rep.unwrap().status.map(|s| s.status))
        .collect();
    assert_eq!(statuses[0], Some(ClusterStatus::CreateComplete));
    assert!(
        statuses[1..]
            .iter()
            .all(|s| *s == Some(ClusterStatus::CreateInProgress)),
        "{statuses:?}"
    );
    // One LIST each of the Clusters (by their cluster-uuid label), KCP, MD, Machine,
    // OpenStackCluster and the Clusters' Events: 6 (a GET per Cluster, and batches sent
    // before every call had joined them, made 9–17). At most one per cluster.
    eprintln!("requests for 8 clusters: {requests}");
    assert!(requests <= 8, "{requests}: {:#?}", r.api.log());
}
