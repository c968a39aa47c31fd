//! The driver against the real management-cluster rig (`tests/services/kapi.sh`: a real
//! kube-apiserver with the real Cluster API manager, its topology controller, admission and
//! conversion webhooks) and the scripted CAPO/kubeadm stand-in (`openkeel_tests::capi_standin`):
//!
//! * create → the objects exist, the real topology controller accepts them (the ClusterClass's
//!   39 variables and 30 patches, the `Cluster`'s values) and renders the KubeadmControlPlane and
//!   the MachineDeployment → the stand-in makes infrastructure, control plane and machines ready
//!   → the status ticks reach `CREATE_COMPLETE` with `api_address` and `coe_version` → delete →
//!   the real CAPI tears the cluster down → `DELETE_COMPLETE` and nothing of the cluster's left
//!   in its namespace, the application credential and server groups deleted;
//! * the failure cases of magnum-cluster-api that belong to create, status and delete: CAPO or the
//!   control plane failing (F1: `*_FAILED` with CAPI's text instead of forever in progress), a
//!   worker server failing, an early poll (F7), an object CAPI's admission refuses (F12), an
//!   unreachable management cluster (transient), deleting what is already gone.
//!
//! Each test works in a fresh namespace (the driver's `magnum-system` is a setting). Skips
//! outside CI when `OPENKEEL_TEST_KUBECONFIG` is not set; fails under `CI=true`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use kube::api::ListParams;
use kube::Client;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_driver_capi::driver::{entry_points_for, CapiDriver};
use openkeel_driver_capi::mgmt;
use openkeel_drivers::{Driver, DriverContext, DriverError, StatusReport};
use openkeel_tests::capi_standin::{CapiStandIn, Failure};
use openkeel_tests::kapi;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(120);

struct Rig {
    client: Client,
    ns: String,
    fakes: Fakes,
    driver: Arc<dyn Driver>,
    inner: Arc<CapiDriver>,
    /// Kubernetes API requests of each status tick, with the cluster's status before it.
    ticks: Vec<(Option<ClusterStatus>, u64)>,
    cluster: Cluster,
    nodegroups: Vec<NodeGroup>,
    /// Per operation: its name, requests to the management cluster, wall time of the call.
    ops: Vec<(String, u64, Duration)>,
}

/// A driver that builds its own client from the rig's kubeconfig, in a fresh namespace.
async fn rig(prefix: &str) -> Option<Rig> {
    let client = kapi::client().await?;
    let kubeconfig = kapi::kubeconfig()?;
    let ns = kapi::fresh_namespace(&client, prefix).await;
    let fakes = Fakes::new();
    let mut s = settings(&ns);
    s.client.kubeconfig = kubeconfig.display().to_string();
    let inner = Arc::new(CapiDriver::new(s, fakes.deps(), real_helm()?));
    let driver = entry_points_for(inner.clone()).remove(0).1;
    let uuid = uuid::Uuid::new_v4().to_string();
    Some(Rig {
        client,
        ns,
        fakes,
        driver,
        inner,
        ticks: Vec::new(),
        cluster: cluster(&uuid),
        nodegroups: nodegroups(&uuid),
        ops: Vec::new(),
    })
}

impl Rig {
    fn stack_id(&self) -> String {
        self.cluster.stack_id.clone().expect("stack_id")
    }

    async fn create(&mut self) -> Result<(), DriverError> {
        let req = RequestContext::default();
        let t = template();
        let ngs = self.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let r = self
            .driver
            .create_cluster(&ctx, &mut self.cluster, 60)
            .await;
        // the conductor copies stack_id to every nodegroup
        for ng in &mut self.nodegroups {
            ng.stack_id = self.cluster.stack_id.clone();
        }
        r.map(|_| ())
    }

    async fn delete(&mut self) -> Result<(), DriverError> {
        let req = RequestContext::default();
        let t = template();
        let ngs = self.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        self.cluster.status = Some(ClusterStatus::DeleteInProgress);
        self.driver
            .delete_cluster(&ctx, &mut self.cluster)
            .await
            .map(|_| ())
    }

    /// One status tick, its report written as the conductor writes it.
    async fn tick(&mut self) -> Result<StatusReport, DriverError> {
        let req = RequestContext::default();
        let t = template();
        let ngs = self.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let before = match self.inner.mgmt().await {
            Ok(m) => m.request_count(),
            Err(_) => 0,
        };
        let status_before = self.cluster.status;
        let report = self.driver.update_cluster_status(&ctx, &self.cluster).await;
        if let Ok(m) = self.inner.mgmt().await {
            self.ticks.push((status_before, m.request_count() - before));
        }
        let report = report?;
        if let Some(s) = &report.status {
            self.cluster.status = Some(s.status);
            self.cluster.status_reason = s.reason.clone();
        }
        if let Some(a) = &report.api_address {
            self.cluster.api_address = Some(a.clone());
        }
        if let Some(v) = &report.coe_version {
            self.cluster.coe_version = Some(v.clone());
        }
        for r in &report.nodegroups {
            if let Some(ng) = self.nodegroups.iter_mut().find(|n| n.uuid == r.uuid) {
                if let Some(s) = &r.status {
                    ng.status = Some(s.status);
                    ng.status_reason = s.reason.clone();
                }
            }
        }
        self.nodegroups
            .retain(|n| !report.destroy_nodegroups.contains(&n.uuid));
        Ok(report)
    }

    /// Status ticks (every 500 ms) until the cluster's status is `want` or a tick fails.
    async fn tick_until(&mut self, want: ClusterStatus) -> Result<(), DriverError> {
        let deadline = Instant::now() + WAIT;
        loop {
            self.tick().await?;
            if self.cluster.status == Some(want) {
                return Ok(());
            }
            assert!(
                Instant::now() < deadline,
                "still {:?} ({:?}) after {WAIT:?}, waiting for {want:?}",
                self.cluster.status,
                self.cluster.status_reason
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// Status ticks until one fails permanently; returns its error.
    async fn tick_until_failed(&mut self) -> DriverError {
        let deadline = Instant::now() + WAIT;
        loop {
            match self.tick().await {
                Err(e) if !e.is_transient() => return e,
                Err(e) => eprintln!("transient: {e}"),
                Ok(_) => {}
            }
            assert!(
                Instant::now() < deadline,
                "no failure after {WAIT:?}: {:?} ({:?})",
                self.cluster.status,
                self.cluster.status_reason
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn list(&self, api_version: &str, kind: &str, labels: &str) -> Vec<Value> {
        let api = kapi::dynamic_api(&self.client, &self.ns, api_version, kind).await;
        let lp = ListParams::default().labels(labels);
        kapi::retry_transient(&format!("list {kind}"), || api.list(&lp))
            .await
            .unwrap_or_else(|e| panic!("list {kind}: {e}"))
            .items
            .into_iter()
            .map(|o| serde_json::to_value(o).unwrap())
            .collect()
    }

    async fn names(&self, api_version: &str, kind: &str) -> Vec<String> {
        self.list(api_version, kind, "")
            .await
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
            .collect()
    }

    fn standin(&self) -> CapiStandIn {
        CapiStandIn::new(self.client.clone(), &self.ns, &self.stack_id())
    }

    /// The real topology controller has rendered the control plane and the worker deployment.
    async fn wait_for_topology(&self) -> (Value, Value) {
        let sel = format!("cluster.x-k8s.io/cluster-name={}", self.stack_id());
        let kcp = kapi::wait_for("the KubeadmControlPlane", WAIT, || async {
            self.list(
                "controlplane.cluster.x-k8s.io/v1beta1",
                "KubeadmControlPlane",
                &sel,
            )
            .await
            .into_iter()
            .next()
        })
        .await;
        let md = kapi::wait_for("the MachineDeployment default-worker", WAIT, || async {
            self.list(
                "cluster.x-k8s.io/v1beta1",
                "MachineDeployment",
                &format!("{sel},topology.cluster.x-k8s.io/deployment-name=default-worker"),
            )
            .await
            .into_iter()
            .next()
        })
        .await;
        (kcp, md)
    }
}

fn condition<'a>(obj: &'a Value, t: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == t)
}

#[tokio::test]
async fn create_becomes_complete_and_delete_leaves_nothing() {
    let Some(mut r) = rig("drv-lifecycle").await else {
        return;
    };
    // F7: before anything exists, a tick changes nothing
    r.cluster.stack_id = None;
    assert!(r.tick().await.unwrap().is_unchanged());

    r.create().await.expect("create");
    let stack_id = r.stack_id();
    let uuid = r.cluster.uuid.clone().unwrap();

    // the objects exist
    assert!(r
        .names("cluster.x-k8s.io/v1beta1", "ClusterClass")
        .await
        .contains(&"magnum-v0.38.2".to_string()));
    let crs = r
        .names("addons.cluster.x-k8s.io/v1beta1", "ClusterResourceSet")
        .await;
    assert!(crs.contains(&uuid) && crs.contains(&format!("{stack_id}-cloud-provider")));
    let secrets = r.names("v1", "Secret").await;
    for s in [
        "cloud-config",
        "ca",
        "etcd",
        "proxy",
        "sa",
        "cloud-provider",
    ] {
        assert!(
            secrets.contains(&format!("{stack_id}-{s}")),
            "{s}: {secrets:?}"
        );
    }
    assert!(secrets.contains(&uuid));

    // the addon Secrets hold the charts as the real helm renders them
    let rendered = |secret: &str, key: &str| {
        let all = r.list("v1", "Secret", "");
        let (secret, key) = (secret.to_string(), key.to_string());
        async move {
            let s = all
                .await
                .into_iter()
                .find(|s| s["metadata"]["name"] == secret.as_str())
                .unwrap_or_else(|| panic!("Secret {secret}"));
            let text = mgmt::secret_text(&s, &key).unwrap_or_else(|| panic!("{secret}/{key}"));
            serde_yaml::Deserializer::from_str(&text)
                .filter_map(|d| serde::Deserialize::deserialize(d).ok())
                .filter(|d: &Value| !d.is_null())
                .map(|d| {
                    let name = d["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    let ns = d["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string();
                    (
                        format!("{}/{name}", d["kind"].as_str().unwrap_or_default()),
                        ns,
                    )
                })
                .collect::<Vec<(String, String)>>()
        }
    };
    let ka = rendered(&uuid, "keystone-auth.yaml").await;
    assert!(
        ka.contains(&("DaemonSet/k8s-keystone-auth".into(), "kube-system".into())),
        "{ka:?}"
    );
    // magnum-cluster-api's Python rendering sets the namespace, but on cluster-wide kinds
    assert!(
        ka.iter()
            .all(|(k, ns)| (ns == "kube-system") != k.starts_with("ClusterRole")),
        "{ka:?}"
    );
    let ccm = rendered(
        &format!("{stack_id}-cloud-provider"),
        "cloud-controller-manager.yaml",
    )
    .await;
    assert!(
        ccm.iter()
            .any(|(k, _)| k == "DaemonSet/openstack-cloud-controller-manager"),
        "{ccm:?}"
    );
    let csi = rendered(&format!("{stack_id}-cloud-provider"), "cinder-csi.yaml").await;
    assert!(
        csi.iter()
            .any(|(k, _)| k == "Deployment/openstack-cinder-csi-controllerplugin"),
        "{csi:?}"
    );

    // the real topology controller accepts the class and the Cluster and renders them
    let deadline = Instant::now() + WAIT;
    let capi = loop {
        let c = r
            .list("cluster.x-k8s.io/v1beta1", "Cluster", "")
            .await
            .into_iter()
            .find(|c| c["metadata"]["name"] == stack_id.as_str())
            .expect("the Cluster");
        let t = condition(&c, "TopologyReconciled").cloned();
        if t.as_ref().is_some_and(|t| t["status"] == "True") {
            break c;
        }
        assert!(Instant::now() < deadline, "TopologyReconciled: {t:#?}");
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(capi["metadata"]["labels"]["cluster-uuid"], uuid.as_str());
    let (kcp, md) = r.wait_for_topology().await;
    assert_eq!(kcp["spec"]["replicas"], 1, "{kcp:#}");
    assert_eq!(kcp["spec"]["version"], "v1.30.4", "{kcp:#}");
    assert_eq!(md["spec"]["replicas"], 1, "{md:#}");

    // not ready yet: still in progress, with magnum-cluster-api's reason
    r.tick().await.expect("tick");
    assert_eq!(r.cluster.status, Some(ClusterStatus::CreateInProgress));
    let reason = r.cluster.status_reason.clone().unwrap_or_default();
    assert!(reason.starts_with("CAPI Cluster status: "), "{reason}");
    assert!(
        reason.contains(". CAPI OpenstackCluster status reason: "),
        "{reason}"
    );

    // the stand-in: CAPO's infrastructure, kubeadm's control plane, the workers' servers
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready("192.0.2.10", 6443).await.ok()
    })
    .await;
    kapi::wait_for("the KubeadmControlPlane", WAIT, || async {
        standin.control_plane(None).await.ok()
    })
    .await;
    kapi::wait_for("a worker Machine", WAIT, || async {
        let done = standin.machines_ready(None).await;
        (!done.is_empty()).then_some(())
    })
    .await;

    r.tick_until(ClusterStatus::CreateComplete)
        .await
        .expect("CREATE_COMPLETE");
    assert_eq!(
        r.cluster.api_address.as_deref(),
        Some("https://192.0.2.10:6443")
    );
    assert_eq!(r.cluster.coe_version.as_deref(), Some("v1.30.4"));
    assert_eq!(r.cluster.status_reason, None);
    // Kubernetes API requests per status tick while creating (magnum-cluster-api: about ten)
    let creating: Vec<u64> = r
        .ticks
        .iter()
        .filter(|(s, _)| *s == Some(ClusterStatus::CreateInProgress))
        .map(|(_, n)| *n)
        .collect();
    eprintln!("requests per CREATE_IN_PROGRESS tick: {creating:?}");
    assert!(creating.iter().all(|n| *n <= 7), "{creating:?}");
    for ng in &r.nodegroups {
        assert!(
            ng.status.is_some_and(|s| s.as_str().ends_with("_COMPLETE")),
            "{}: {:?}",
            ng.name,
            ng.status
        );
    }

    // delete: the real CAPI tears the cluster down, then the clean-up
    r.delete().await.expect("delete");
    r.tick_until(ClusterStatus::DeleteComplete)
        .await
        .expect("DELETE_COMPLETE");
    let deleting: Vec<u64> = r
        .ticks
        .iter()
        .filter(|(s, _)| *s == Some(ClusterStatus::DeleteInProgress))
        .map(|(_, n)| *n)
        .collect();
    eprintln!("requests per DELETE_IN_PROGRESS tick: {deleting:?}");
    let sel = format!("cluster.x-k8s.io/cluster-name={stack_id}");
    for (v, k) in [
        ("cluster.x-k8s.io/v1beta1", "Cluster"),
        ("addons.cluster.x-k8s.io/v1beta1", "ClusterResourceSet"),
    ] {
        let left: Vec<String> = r
            .names(v, k)
            .await
            .into_iter()
            .filter(|n| n.contains(&stack_id) || n.contains(&uuid))
            .collect();
        assert!(left.is_empty(), "{k}: {left:?}");
    }
    for (v, k) in [
        (
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
        ),
        ("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
        ("cluster.x-k8s.io/v1beta1", "Machine"),
        (
            "infrastructure.cluster.x-k8s.io/v1beta1",
            "OpenStackCluster",
        ),
    ] {
        assert!(r.list(v, k, &sel).await.is_empty(), "{k} left");
    }
    // Secrets: the driver's are gone; what remains of the cluster is owned by another object
    // (the stand-in's bootstrap data, garbage-collected by a real kube-controller-manager)
    for s in r.list("v1", "Secret", "").await {
        let name = s["metadata"]["name"].as_str().unwrap_or("");
        if name.contains(&stack_id) || name.contains(&uuid) {
            assert!(
                s["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|o| !o.is_empty()),
                "Secret {name} left: {s:#}"
            );
        }
    }
    let calls = r.fakes.calls.all();
    assert!(
        calls.contains(&format!("appcred delete user1 {uuid}")),
        "{calls:#?}"
    );
    assert!(calls.contains(&format!("server group delete {stack_id}")));
    assert!(calls.contains(&format!("server group delete {stack_id}-default-worker")));
    // the ClusterClass stays for the next cluster
    assert!(r
        .names("cluster.x-k8s.io/v1beta1", "ClusterClass")
        .await
        .contains(&"magnum-v0.38.2".to_string()));
}

/// F1: CAPO cannot build the infrastructure → `CREATE_FAILED` with CAPO's text.
#[tokio::test]
async fn an_infrastructure_failure_fails_the_create() {
    let Some(mut r) = rig("drv-infra-fail").await else {
        return;
    };
    r.create().await.expect("create");
    let f = Failure::new(
        "CreateError",
        "Failed to create load balancer: quota exceeded",
    );
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_failed(&f).await.ok()
    })
    .await;
    let e = r.tick_until_failed().await;
    assert!(
        e.message().starts_with("OpenStackCluster ")
            && e.message()
                .ends_with(" failed: CreateError: Failed to create load balancer: quota exceeded"),
        "{e}"
    );
}

/// F1: the control plane cannot come up → `CREATE_FAILED` with the kubeadm control plane's
/// reason.
#[tokio::test]
async fn a_control_plane_failure_fails_the_create() {
    let Some(mut r) = rig("drv-cp-fail").await else {
        return;
    };
    r.create().await.expect("create");
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready("192.0.2.11", 6443).await.ok()
    })
    .await;
    let f = Failure::new("InvalidConfiguration", "etcd member failed to join");
    kapi::wait_for("the KubeadmControlPlane", WAIT, || async {
        standin.control_plane(Some(&f)).await.ok()
    })
    .await;
    let e = r.tick_until_failed().await;
    assert!(
        e.message().starts_with("KubeadmControlPlane ")
            && e.message()
                .contains("InvalidConfiguration: etcd member failed to join"),
        "{e}"
    );
}

/// A worker server that Nova cannot build → `CREATE_FAILED` with CAPO's reason.
#[tokio::test]
async fn a_worker_server_failure_fails_the_create() {
    let Some(mut r) = rig("drv-worker-fail").await else {
        return;
    };
    r.create().await.expect("create");
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready("192.0.2.12", 6443).await.ok()
    })
    .await;
    kapi::wait_for("the KubeadmControlPlane", WAIT, || async {
        standin.control_plane(None).await.ok()
    })
    .await;
    let f = Failure::new("InstanceCreateFailed", "No valid host was found.");
    kapi::wait_for("a worker Machine", WAIT, || async {
        let done = standin.machines_ready(Some(("", &f))).await;
        (!done.is_empty()).then_some(())
    })
    .await;
    let e = r.tick_until_failed().await;
    assert!(e.message().contains("No valid host was found."), "{e}");
    assert_ne!(r.cluster.status, Some(ClusterStatus::CreateComplete));
}

/// F12: what CAPI's admission refuses is a permanent error naming the object (here a
/// `kube_tag` the create-time check would have refused, sent anyway).
#[tokio::test]
async fn an_object_refused_by_admission_fails_the_create() {
    let Some(mut r) = rig("drv-admission").await else {
        return;
    };
    r.cluster
        .labels
        .as_mut()
        .unwrap()
        .insert("kube_tag".into(), "banana".into());
    let e = r.create().await.unwrap_err();
    assert!(!e.is_transient(), "{e}");
    assert!(
        e.message()
            .contains(&format!("apply Cluster {}/kube-", r.ns))
            && e.message().contains("(HTTP 422)"),
        "{e}"
    );
}

/// Deleting a cluster whose objects are already gone (or were never written) completes.
#[tokio::test]
async fn deleting_what_is_gone_completes() {
    let Some(mut r) = rig("drv-gone").await else {
        return;
    };
    r.cluster.stack_id = Some("kube-00000".into());
    r.delete().await.expect("delete");
    r.tick().await.expect("tick");
    assert_eq!(r.cluster.status, Some(ClusterStatus::DeleteComplete));

    // a cluster created, then its objects removed behind the driver's back
    let Some(mut r) = rig("drv-gone2").await else {
        return;
    };
    r.create().await.expect("create");
    r.delete().await.expect("delete");
    r.delete().await.expect("a second delete is fine too");
    r.tick_until(ClusterStatus::DeleteComplete)
        .await
        .expect("DELETE_COMPLETE");
}

/// The management cluster unreachable: transient (the status sync retries), naming it.
#[tokio::test]
async fn an_unreachable_management_cluster_is_transient() {
    let Some(kubeconfig) = kapi::kubeconfig() else {
        return;
    };
    let text = std::fs::read_to_string(&kubeconfig).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    // the same credentials, a port nothing listens on
    let mut doc: Value = serde_yaml::from_str(&text).unwrap();
    for c in doc["clusters"].as_array_mut().unwrap() {
        c["cluster"]["server"] = Value::String("https://127.0.0.1:1".into());
    }
    std::fs::write(&path, serde_yaml::to_string(&doc).unwrap()).unwrap();
    let fakes = Fakes::new();
    let mut s = settings("magnum-system");
    s.client.kubeconfig = path.display().to_string();
    s.request_timeout = Duration::from_secs(3);
    let d = entry_points_for(Arc::new(CapiDriver::new(
        s,
        fakes.deps(),
        stand_in_charts(),
    )))
    .remove(0)
    .1;
    let req = RequestContext::default();
    let t = template();
    let ngs = nodegroups(UUID);
    let ctx = DriverContext {
        request: &req,
        template: &t,
        nodegroups: &ngs,
    };
    let mut c = cluster(UUID);
    c.stack_id = Some("kube-abcde".into());
    let e = d.update_cluster_status(&ctx, &c).await.unwrap_err();
    assert!(e.is_transient(), "{e}");
    // the status call's first request: the tick's LIST of the Clusters by their cluster-uuid
    // label
    assert!(
        e.message().contains(&format!(
            "Clusters in magnum-system labelled cluster-uuid in ({UUID})"
        )),
        "{e}"
    );
}

impl Rig {
    /// The conductor's part of an operation: the cluster `UPDATE_IN_PROGRESS`, the
    /// nodegroup too (with its new count).
    fn start_update(&mut self, ng: &str, count: Option<i32>) -> NodeGroup {
        self.cluster.status = Some(ClusterStatus::UpdateInProgress);
        let n = self
            .nodegroups
            .iter_mut()
            .find(|n| n.name == ng)
            .unwrap_or_else(|| panic!("nodegroup {ng}"));
        n.status = Some(ClusterStatus::UpdateInProgress);
        if let Some(c) = count {
            n.node_count = Some(c);
        }
        n.clone()
    }

    async fn resize(&mut self, ng: &str, count: i32, remove: &[String]) -> Result<(), DriverError> {
        let mut n = self.start_update(ng, Some(count));
        let req = RequestContext::default();
        let t = template();
        let ngs = self.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        self.driver
            .resize_cluster(&ctx, &mut self.cluster, None, count, remove, &mut n)
            .await
            .map(|_| ())
    }

    /// Requests made to the management cluster so far, without the retries after a conflict
    /// (a refused PUT and the GET again: CAPI's controllers write the `Cluster` too, so how
    /// many happen depends on timing).
    async fn requests(&self) -> u64 {
        self.inner
            .mgmt()
            .await
            .map(|m| m.request_count() - 2 * m.conflict_count())
            .unwrap_or(0)
    }

    /// Record an operation that started at `t0` after `before` requests.
    async fn record(&mut self, op: &str, before: u64, t0: Instant) {
        let n = self.requests().await - before;
        self.ops.push((op.to_string(), n, t0.elapsed()));
    }

    /// The stand-in plays the providers; status ticks until the cluster is `want`.
    async fn converge(&mut self, want: ClusterStatus) {
        let standin = self.standin();
        let deadline = Instant::now() + WAIT;
        loop {
            let _ = standin.control_plane(None).await;
            standin.machines_ready(None).await;
            self.tick().await.expect("tick");
            if self.cluster.status == Some(want) {
                return;
            }
            if Instant::now() >= deadline {
                let sel = format!("cluster.x-k8s.io/cluster-name={}", self.stack_id());
                let capi = self.capi_cluster().await;
                eprintln!("Cluster status: {:#}", capi["status"]);
                for (v, k) in [
                    (
                        "controlplane.cluster.x-k8s.io/v1beta1",
                        "KubeadmControlPlane",
                    ),
                    ("cluster.x-k8s.io/v1beta1", "MachineDeployment"),
                ] {
                    for o in self.list(v, k, &sel).await {
                        eprintln!(
                            "{k} {} spec {:#} status {:#}",
                            o["metadata"]["name"], o["spec"]["replicas"], o["status"]
                        );
                    }
                }
            }
            assert!(
                Instant::now() < deadline,
                "still {:?} ({:?}) after {WAIT:?}, waiting for {want:?}; nodegroups {:?}",
                self.cluster.status,
                self.cluster.status_reason,
                self.nodegroups
                    .iter()
                    .map(|n| (&n.name, n.status))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    async fn object(&self, api_version: &str, kind: &str, name: &str) -> Option<Value> {
        self.list(api_version, kind, "")
            .await
            .into_iter()
            .find(|o| o["metadata"]["name"] == name)
    }

    async fn capi_cluster(&self) -> Value {
        let stack_id = self.stack_id();
        self.list("cluster.x-k8s.io/v1beta1", "Cluster", "")
            .await
            .into_iter()
            .find(|c| c["metadata"]["name"] == stack_id.as_str())
            .expect("the Cluster")
    }

    async fn machines(&self, deployment: &str) -> Vec<Value> {
        self.list(
            "cluster.x-k8s.io/v1beta1",
            "Machine",
            &format!(
                "cluster.x-k8s.io/cluster-name={},topology.cluster.x-k8s.io/deployment-name={deployment}",
                self.stack_id()
            ),
        )
        .await
    }

    /// Wait until the `MachineDeployment` of `deployment` asks for `replicas` (`None`: until
    /// it is gone).
    async fn wait_for_deployment(&self, deployment: &str, replicas: Option<i64>) {
        let sel = format!(
            "cluster.x-k8s.io/cluster-name={},topology.cluster.x-k8s.io/deployment-name={deployment}",
            self.stack_id()
        );
        kapi::wait_for(
            &format!("MachineDeployment {deployment} at {replicas:?}"),
            WAIT,
            || async {
                let mds = self
                    .list("cluster.x-k8s.io/v1beta1", "MachineDeployment", &sel)
                    .await;
                let now = mds.first().map(|md| md["spec"]["replicas"].as_i64());
                match (replicas, now) {
                    (None, None) => Some(()),
                    (Some(r), Some(Some(n))) if r == n => Some(()),
                    _ => None,
                }
            },
        )
        .await;
    }
}

/// Part 2 on the real management cluster: resize of workers (with `nodes_to_remove`) and of
/// the control plane, `PATCH node_count`, nodegroup create / update / delete, the health
/// monitor and an upgrade, each converging with the real CAPI controllers and the stand-in.
#[tokio::test]
async fn operations_on_a_running_cluster_converge() {
    let Some(mut r) = rig("drv-ops").await else {
        return;
    };
    r.create().await.expect("create");
    r.wait_for_topology().await;
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready("192.0.2.11", 6443).await.ok()
    })
    .await;
    r.converge(ClusterStatus::CreateComplete).await;

    // health from the management cluster's view: the control plane is Available, the
    // Machines have no node (no workload cluster here), so UNHEALTHY naming each
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let h = r
            .driver
            .poll_health_status(&ctx, &r.cluster)
            .await
            .expect("health")
            .expect("a report");
        assert_eq!(
            h.health_status,
            Some(openkeel_core::objects::ClusterHealthStatus::Unhealthy)
        );
        let reason = h.health_status_reason.expect("reason");
        assert_eq!(
            reason.get("api").map(String::as_str),
            Some("ok"),
            "{reason:?}"
        );
        let machines = r.machines("default-worker").await;
        assert_eq!(reason.len(), machines.len() + 1, "{reason:?}");
        for m in &machines {
            let osm = m["spec"]["infrastructureRef"]["name"].as_str().unwrap();
            assert_eq!(
                reason.get(&format!("{osm}.Ready")).map(String::as_str),
                Some("False"),
                "{reason:?}"
            );
        }
    }

    // workers 1 → 2
    let (n0, t0) = (r.requests().await, Instant::now());
    r.resize("default-worker", 2, &[]).await.expect("resize up");
    r.record("resize workers 1 → 2", n0, t0).await;
    r.wait_for_deployment("default-worker", Some(2)).await;
    r.converge(ClusterStatus::UpdateComplete).await;
    // the real Machine controller copies each server's id from its OpenStackMachine
    let machines = kapi::wait_for("two Machines with their servers", WAIT, || async {
        let ms = r.machines("default-worker").await;
        (ms.len() == 2 && ms.iter().all(|m| m["spec"]["providerID"].is_string())).then_some(ms)
    })
    .await;

    // a node that is not in the nodegroup: refused before anything is written
    let e = r
        .resize("default-worker", 1, &["no-such-server".into()])
        .await
        .expect_err("unknown node");
    assert!(!e.is_transient());
    assert!(e.message().contains("no-such-server"), "{e}");
    r.wait_for_deployment("default-worker", Some(2)).await;

    // workers 2 → 1, removing the named server
    let victim = machines[0].clone();
    let server = victim["spec"]["providerID"]
        .as_str()
        .and_then(|p| p.rsplit('/').next())
        .expect("providerID")
        .to_string();
    let victim_name = victim["metadata"]["name"].as_str().unwrap().to_string();
    let (n0, t0) = (r.requests().await, Instant::now());
    r.resize("default-worker", 1, &[server])
        .await
        .expect("resize down");
    r.record("resize workers 2 → 1 with nodes_to_remove", n0, t0)
        .await;
    r.wait_for_deployment("default-worker", Some(1)).await;
    kapi::wait_for("the named Machine gone", WAIT, || async {
        let left = r.machines("default-worker").await;
        (left.len() == 1 && left[0]["metadata"]["name"] != victim_name.as_str()).then_some(())
    })
    .await;
    r.converge(ClusterStatus::UpdateComplete).await;

    // the control plane 1 → 3
    let (n0, t0) = (r.requests().await, Instant::now());
    r.resize("default-master", 3, &[])
        .await
        .expect("control plane");
    r.record("resize control plane 1 → 3", n0, t0).await;
    assert_eq!(
        r.capi_cluster().await["spec"]["topology"]["controlPlane"]["replicas"],
        3
    );
    r.converge(ClusterStatus::UpdateComplete).await;

    // PATCH node_count: the default worker nodegroup's resize, followed to completion
    {
        r.cluster.status = Some(ClusterStatus::UpdateInProgress);
        if let Some(w) = r.nodegroups.iter_mut().find(|n| n.name == "default-worker") {
            w.node_count = Some(2);
        }
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let (n0, t0) = (r.requests().await, Instant::now());
        let w = r
            .driver
            .update_cluster(&ctx, &mut r.cluster, None, false)
            .await
            .expect("update_cluster");
        r.record("PATCH node_count 1 → 2", n0, t0).await;
        assert_eq!(w.nodegroups.len(), 1);
        assert_eq!(
            w.nodegroups[0].status,
            Some(ClusterStatus::UpdateInProgress)
        );
        for n in w.nodegroups {
            if let Some(ng) = r.nodegroups.iter_mut().find(|x| x.uuid == n.uuid) {
                *ng = n;
            }
        }
    }
    r.wait_for_deployment("default-worker", Some(2)).await;
    r.converge(ClusterStatus::UpdateComplete).await;

    // a nodegroup: create, update, delete
    let uuid = r.cluster.uuid.clone().unwrap();
    let mut ng2 = r.nodegroups[1].clone();
    ng2.uuid = format!("{uuid}-ng2");
    ng2.name = "ng2".into();
    ng2.is_default = Some(false);
    ng2.node_count = Some(1);
    ng2.status = Some(ClusterStatus::CreateInProgress);
    r.nodegroups.push(ng2.clone());
    r.cluster.status = Some(ClusterStatus::UpdateInProgress);
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let (n0, t0) = (r.requests().await, Instant::now());
        r.driver
            .create_nodegroup(&ctx, &mut r.cluster, &mut ng2)
            .await
            .expect("create_nodegroup");
        r.record("nodegroup create", n0, t0).await;
        let (n0, t0) = (r.requests().await, Instant::now());
        // a retried create writes nothing new
        r.driver
            .create_nodegroup(&ctx, &mut r.cluster, &mut ng2)
            .await
            .expect("create_nodegroup again");
        r.record("nodegroup create again (nothing to change)", n0, t0)
            .await;
    }
    assert!(r
        .fakes
        .calls
        .all()
        .iter()
        .any(|c| c.contains(&format!("{}-ng2", r.stack_id()))));
    r.wait_for_deployment("ng2", Some(1)).await;
    r.converge(ClusterStatus::UpdateComplete).await;
    // auto-healing (on by default): a MachineHealthCheck for the control plane and for each
    // nodegroup, made by CAPI from the topology
    let mhcs = kapi::wait_for("three MachineHealthChecks", WAIT, || async {
        let m = r
            .list(
                "cluster.x-k8s.io/v1beta1",
                "MachineHealthCheck",
                &format!("cluster.x-k8s.io/cluster-name={}", r.stack_id()),
            )
            .await;
        (m.len() == 3).then_some(m)
    })
    .await;
    assert!(mhcs.iter().any(|m| m["spec"]["selector"]["matchLabels"]
        ["topology.cluster.x-k8s.io/deployment-name"]
        == "ng2"));
    assert_eq!(
        r.nodegroups
            .iter()
            .find(|n| n.name == "ng2")
            .unwrap()
            .status,
        Some(ClusterStatus::CreateComplete)
    );

    let mut n = r.start_update("ng2", Some(2));
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let (n0, t0) = (r.requests().await, Instant::now());
        r.driver
            .update_nodegroup(&ctx, &mut r.cluster, &mut n)
            .await
            .expect("update_nodegroup");
        r.record("nodegroup update (resize 1 → 2)", n0, t0).await;
    }
    r.wait_for_deployment("ng2", Some(2)).await;
    r.converge(ClusterStatus::UpdateComplete).await;

    // upgrade: a minor-version skip is refused and nothing is written
    let before = r.capi_cluster().await;
    let mut skip = template();
    skip.uuid = Some("tmpl-skip".into());
    skip.labels
        .get_or_insert_with(Default::default)
        .insert("kube_tag".into(), "v1.32.0".into());
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let mut default_worker = r.nodegroups[1].clone();
        let e = r
            .driver
            .upgrade_cluster(&ctx, &mut r.cluster, &skip, 1, &mut default_worker, false)
            .await
            .expect_err("a skip");
        assert_eq!(
            e.error().kind(),
            openkeel_core::error::ErrorKind::NotSupported,
            "{e}"
        );
        assert!(r
            .driver
            .validate_cluster_upgrade(&r.cluster, &skip)
            .is_err());
    }
    assert_eq!(
        r.capi_cluster().await["metadata"]["resourceVersion"],
        before["metadata"]["resourceVersion"]
    );

    // upgrade to v1.31: the control plane and the default nodegroups; ng2 keeps its version
    let mut next = template();
    next.uuid = Some("tmpl-next".into());
    next.image_id = Some("ubuntu-2204-v1.31".into());
    next.labels
        .get_or_insert_with(Default::default)
        .insert("kube_tag".into(), "v1.31.1".into());
    r.cluster.status = Some(ClusterStatus::UpdateInProgress);
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let mut default_worker = r.nodegroups[1].clone();
        let (n0, t0) = (r.requests().await, Instant::now());
        let w = r
            .driver
            .upgrade_cluster(&ctx, &mut r.cluster, &next, 2, &mut default_worker, false)
            .await
            .expect("upgrade");
        r.record("upgrade v1.30.4 → v1.31.1 (addons rendered again)", n0, t0)
            .await;
        assert_eq!(r.cluster.cluster_template_id.as_deref(), Some("tmpl-next"));
        assert_eq!(
            r.cluster
                .labels
                .as_ref()
                .unwrap()
                .get("kube_tag")
                .map(String::as_str),
            Some("v1.31.1")
        );
        let names: Vec<&str> = w.nodegroups.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["default-master", "default-worker"]);
        assert_eq!(
            default_worker.image_id.as_deref(),
            Some("ubuntu-2204-v1.31")
        );
        for n in w.nodegroups {
            if let Some(ng) = r.nodegroups.iter_mut().find(|x| x.uuid == n.uuid) {
                *ng = n;
            }
        }
    }
    let capi = r.capi_cluster().await;
    let topo = &capi["spec"]["topology"];
    assert_eq!(topo["version"], "v1.31.1");
    let entry = |name: &str| {
        topo["workers"]["machineDeployments"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .cloned()
            .unwrap()
    };
    assert_eq!(
        entry("default-worker")["strategy"]["rollingUpdate"]["maxUnavailable"],
        2
    );
    assert!(entry("default-worker")["metadata"]["annotations"]
        .get("topology.cluster.x-k8s.io/defer-upgrade")
        .is_none());
    assert_eq!(
        entry("ng2")["metadata"]["annotations"]["topology.cluster.x-k8s.io/defer-upgrade"],
        ""
    );
    // the real topology controller takes it: the control plane moves to v1.31.1
    let sel = format!("cluster.x-k8s.io/cluster-name={}", r.stack_id());
    kapi::wait_for("the control plane at v1.31.1", WAIT, || async {
        r.list(
            "controlplane.cluster.x-k8s.io/v1beta1",
            "KubeadmControlPlane",
            &sel,
        )
        .await
        .into_iter()
        .next()
        .filter(|k| k["spec"]["version"] == "v1.31.1")
        .map(|_| ())
    })
    .await;
    // the upgrade completes only once the control plane and the default workers run it
    r.converge(ClusterStatus::UpdateComplete).await;
    let mds = r
        .list("cluster.x-k8s.io/v1beta1", "MachineDeployment", &sel)
        .await;
    let version_of = |name: &str| {
        mds.iter()
            .find(|m| m["metadata"]["labels"]["topology.cluster.x-k8s.io/deployment-name"] == name)
            .map(|m| m["spec"]["template"]["spec"]["version"].clone())
    };
    assert_eq!(version_of("default-worker"), Some("v1.31.1".into()));
    assert_eq!(version_of("ng2"), Some("v1.30.4".into()), "ng2 is deferred");

    // delete ng2, then a nodegroup whose entry is gone already: both end removed
    r.cluster.status = Some(ClusterStatus::UpdateInProgress);
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let mut n = r
            .nodegroups
            .iter()
            .find(|n| n.name == "ng2")
            .unwrap()
            .clone();
        let (n0, t0) = (r.requests().await, Instant::now());
        let w = r
            .driver
            .delete_nodegroup(&ctx, &mut r.cluster, &mut n)
            .await
            .expect("delete_nodegroup");
        r.record("nodegroup delete", n0, t0).await;
        assert_eq!(
            w.nodegroups[0].status,
            Some(ClusterStatus::DeleteInProgress)
        );
        let w = r
            .driver
            .delete_nodegroup(&ctx, &mut r.cluster, &mut n)
            .await
            .expect("delete_nodegroup of a nodegroup already gone");
        assert_eq!(
            w.nodegroups[0].status,
            Some(ClusterStatus::DeleteInProgress)
        );
        if let Some(x) = r.nodegroups.iter_mut().find(|x| x.name == "ng2") {
            x.status = Some(ClusterStatus::DeleteInProgress);
        }
    }
    r.wait_for_deployment("ng2", None).await;
    let deadline = Instant::now() + WAIT;
    while r.nodegroups.iter().any(|n| n.name == "ng2") {
        let _ = r.tick().await;
        assert!(
            Instant::now() < deadline,
            "ng2 still there: {:?}",
            r.nodegroups
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    assert!(r
        .fakes
        .calls
        .all()
        .iter()
        .any(|c| c == &format!("server group delete {}-ng2", r.stack_id())));

    // requests to the management cluster per operation, retries after a conflict aside
    // (magnum-cluster-api's `magnum_cluster_api/driver.py`)
    eprintln!("| operation | requests | wall time of the driver call |");
    for (op, n, t) in &r.ops {
        eprintln!("| {op} | {n} | {} ms |", t.as_millis());
    }
    for (op, n, _) in &r.ops {
        let bound = if op.starts_with("upgrade") {
            16
        } else if op.contains("nodes_to_remove") {
            4
        } else {
            2
        };
        assert!(*n <= bound, "{op}: {n} requests");
    }
    r.delete().await.expect("delete");
    r.tick_until(ClusterStatus::DeleteComplete)
        .await
        .expect("DELETE_COMPLETE");
}

/// `auto_scaling_enabled`: the topology entries carry the autoscaler's bounds instead of
/// replicas, the autoscaler (magnum-cluster-api's chart, rendered by the real helm) is written
/// once the cluster is up, the health monitor brings the autoscaler's replicas back as
/// `node_count`, and the delete removes the autoscaler.
#[tokio::test]
async fn an_autoscaled_cluster_runs_the_autoscaler() {
    let Some(mut r) = rig("drv-autoscale").await else {
        return;
    };
    let l = r.cluster.labels.get_or_insert_with(Default::default);
    l.insert("auto_scaling_enabled".into(), "true".into());
    l.insert("auto_healing_enabled".into(), "false".into());
    for ng in &mut r.nodegroups {
        ng.labels
            .get_or_insert_with(Default::default)
            .insert("auto_scaling_enabled".into(), "true".into());
        if ng.role.as_deref() == Some("worker") {
            ng.min_node_count = Some(1);
            ng.max_node_count = Some(3);
        }
    }
    r.create().await.expect("create");
    let capi = r.capi_cluster().await;
    let entry = &capi["spec"]["topology"]["workers"]["machineDeployments"][0];
    assert!(entry.get("replicas").is_none(), "{entry:#}");
    let ann = &entry["metadata"]["annotations"];
    assert_eq!(
        ann["cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"],
        "1"
    );
    assert_eq!(
        ann["cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"],
        "3"
    );
    r.wait_for_topology().await;
    let standin = r.standin();
    kapi::wait_for("the OpenStackCluster", WAIT, || async {
        standin.infrastructure_ready("192.0.2.12", 6443).await.ok()
    })
    .await;
    let name = format!("{}-autoscaler", r.stack_id());
    // not before the cluster is up (F16)
    r.tick().await.expect("tick");
    assert!(r.object("apps/v1", "Deployment", &name).await.is_none());
    r.converge(ClusterStatus::CreateComplete).await;
    // auto_healing_enabled=false: CAPI makes no MachineHealthCheck
    let mhcs = r
        .list(
            "cluster.x-k8s.io/v1beta1",
            "MachineHealthCheck",
            &format!("cluster.x-k8s.io/cluster-name={}", r.stack_id()),
        )
        .await;
    assert!(mhcs.is_empty(), "{mhcs:#?}");
    let d = r
        .object("apps/v1", "Deployment", &name)
        .await
        .expect("the autoscaler's Deployment");
    let c = &d["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        c["image"],
        "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.7"
    );
    let args: Vec<&str> = c["command"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        args.contains(
            &format!(
                "--node-group-auto-discovery=clusterapi:clusterName={}",
                r.stack_id()
            )
            .as_str()
        ),
        "{args:?}"
    );
    assert!(
        args.contains(&"--enforce-node-group-min-size=true"),
        "{args:?}"
    );
    for (v, k) in [
        ("v1", "ServiceAccount"),
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ] {
        assert!(r.names(v, k).await.contains(&name), "{k}");
    }

    // the autoscaler scales the MachineDeployment: node_count follows
    let sel = format!(
        "cluster.x-k8s.io/cluster-name={},topology.cluster.x-k8s.io/deployment-name=default-worker",
        r.stack_id()
    );
    let md = r
        .list("cluster.x-k8s.io/v1beta1", "MachineDeployment", &sel)
        .await
        .remove(0);
    let md_name = md["metadata"]["name"].as_str().unwrap().to_string();
    let api = kapi::dynamic_api(
        &r.client,
        &r.ns,
        "cluster.x-k8s.io/v1beta1",
        "MachineDeployment",
    )
    .await;
    let body = serde_json::json!({"spec": {"replicas": 2}});
    let (pp, patch) = (
        kube::api::PatchParams::default(),
        kube::api::Patch::Merge(&body),
    );
    kapi::retry_transient("scale the MachineDeployment", || {
        api.patch(&md_name, &pp, &patch)
    })
    .await
    .expect("scale");
    {
        let req = RequestContext::default();
        let t = template();
        let ngs = r.nodegroups.clone();
        let ctx = DriverContext {
            request: &req,
            template: &t,
            nodegroups: &ngs,
        };
        let h = r
            .driver
            .poll_health_status(&ctx, &r.cluster)
            .await
            .expect("health")
            .expect("a report");
        let worker = r
            .nodegroups
            .iter()
            .find(|n| n.name == "default-worker")
            .unwrap();
        assert_eq!(h.nodegroups.len(), 1, "{:?}", h.nodegroups);
        assert_eq!(h.nodegroups[0].uuid, worker.uuid);
        assert_eq!(h.nodegroups[0].node_count, Some(2));
    }

    r.delete().await.expect("delete");
    assert!(r.object("apps/v1", "Deployment", &name).await.is_none());
    for (v, k) in [
        ("v1", "ServiceAccount"),
        ("rbac.authorization.k8s.io/v1", "Role"),
    ] {
        assert!(!r.names(v, k).await.contains(&name), "{k} left");
    }
    let cluster_roles: kube::Api<k8s_openapi::api::rbac::v1::ClusterRole> =
        kube::Api::all(r.client.clone());
    assert!(cluster_roles.get_opt(&name).await.unwrap().is_none());
    r.tick_until(ClusterStatus::DeleteComplete)
        .await
        .expect("DELETE_COMPLETE");
}
