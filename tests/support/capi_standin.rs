//! **A scripted stand-in** for the controllers that need a cloud, on the real management-cluster
//! API of [`crate::kapi`]: it is *not* CAPO and *not* the kubeadm controllers, it only writes
//! what they would write, following their CRD schemas (CAPO v0.13.0, Cluster API v1.13.6):
//!
//! | plays | object | what it writes |
//! |---|---|---|
//! | CAPO's cluster controller | `OpenStackCluster` (`infrastructure.cluster.x-k8s.io/v1beta1`) | `spec.controlPlaneEndpoint`, `status.ready`, `status.network`, `status.failureDomains`; on failure `status.failureReason` / `failureMessage`; an Event |
//! | the kubeadm control-plane controller | `KubeadmControlPlane` status (written as the `v1beta2` it stores; a `v1beta1` reader sees it through CAPI's conversion) | `initialization.controlPlaneInitialized`, `replicas`, `readyReplicas`, `availableReplicas`, `upToDateReplicas`, `version`, `observedGeneration`, `conditions` (Available, Initialized, MachinesReady), `deprecated.v1beta1` (`readyReplicas`, `updatedReplicas`, `unavailableReplicas`, the v1beta1 conditions with severity, `failureReason` / `failureMessage`); an Event |
//! | the kubeadm bootstrap controller | `KubeadmConfig` status + its `<name>` bootstrap Secret | `initialization.dataSecretCreated`, `dataSecretName` |
//! | CAPO's machine controller | `OpenStackMachine` | `spec.providerID`, `status.ready`, `instanceID`, `instanceState`, `addresses`, conditions `Ready` / `InstanceReady`; on failure `InstanceReady=False` with the reason, `failureReason` / `failureMessage` |
//!
//! The real Cluster API manager of the rig does the rest: the Cluster's `InfrastructureReady` /
//! `ControlPlaneInitialized` / `ControlPlaneAvailable` conditions, `controlPlaneEndpoint`, and
//! the worker Machines (the real MachineSet controller creates them, with their KubeadmConfig
//! and OpenStackMachine, once the control plane is initialized). What it cannot do without a
//! workload cluster is the Machines' node: a Machine's `NodeHealthy` condition and
//! `status.nodeRef` are written by the real Machine controller, which has no node to find, so
//! the stand-in does not fight it (see [`CapiStandIn::machines_ready`]). No control-plane
//! Machines exist (no KCP controller creates them); the KCP status above is what the driver
//! reads.
//!
//! A step can be told to fail ([`Failure`]) with CAPI's/CAPO's own reason fields.

use std::collections::BTreeMap;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

use crate::kapi;

/// The stand-in's field manager.
pub const FIELD_MANAGER: &str = "openkeel-capi-standin";

const OSC: (&str, &str) = (
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackCluster",
);
const OSM: (&str, &str) = (
    "infrastructure.cluster.x-k8s.io/v1beta1",
    "OpenStackMachine",
);
const KCP: (&str, &str) = (
    "controlplane.cluster.x-k8s.io/v1beta2",
    "KubeadmControlPlane",
);
const KC: (&str, &str) = ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfig");
const MACHINE: (&str, &str) = ("cluster.x-k8s.io/v1beta2", "Machine");

/// A failure to play: the reason (CAPI's/CAPO's `failureReason` value or condition reason,
/// e.g. `CreateError`, `InstanceCreateFailed`) and the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub reason: String,
    pub message: String,
}

impl Failure {
    pub fn new(reason: &str, message: &str) -> Self {
        Self {
            reason: reason.to_string(),
            message: message.to_string(),
        }
    }
}

/// The stand-in for one CAPI `Cluster` (by name) in one namespace.
#[derive(Clone)]
pub struct CapiStandIn {
    client: Client,
    namespace: String,
    cluster: String,
}

fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// A `metav1.Condition` (CAPI v1beta2 style).
fn condition(type_: &str, ok: bool, reason: &str, message: &str, generation: i64) -> Value {
    json!({
        "type": type_,
        "status": if ok { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "lastTransitionTime": now(),
        "observedGeneration": generation.max(1),
    })
}

/// A Cluster API v1beta1 condition (with a severity when not True).
fn v1beta1_condition(type_: &str, failure: Option<&Failure>) -> Value {
    match failure {
        None => json!({"type": type_, "status": "True", "lastTransitionTime": now()}),
        Some(f) => json!({
            "type": type_, "status": "False", "severity": "Error",
            "reason": f.reason, "message": f.message, "lastTransitionTime": now(),
        }),
    }
}

impl CapiStandIn {
    pub fn new(client: Client, namespace: &str, cluster: &str) -> Self {
        Self {
            client,
            namespace: namespace.to_string(),
            cluster: cluster.to_string(),
        }
    }

    fn selector(&self) -> String {
        format!("cluster.x-k8s.io/cluster-name={}", self.cluster)
    }

    async fn api(&self, (api_version, kind): (&str, &str)) -> Api<DynamicObject> {
        kapi::dynamic_api(&self.client, &self.namespace, api_version, kind).await
    }

    /// Play the providers in the background, once a second, until the task is aborted: the
    /// control plane's status follows its spec (replicas, version) and every Machine that
    /// appears gets its bootstrap data and its server (resize, nodegroups and upgrades roll
    /// Machines out as they would with CAPO and kubeadm).
    pub fn play(self) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                let _ = self.control_plane(None).await;
                self.machines_ready(None).await;
                tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            }
        })
    }

    /// The objects of `kind` labelled with this cluster's name.
    pub async fn list(&self, gvk: (&str, &str)) -> Vec<DynamicObject> {
        let api = self.api(gvk).await;
        let lp = ListParams::default().labels(&self.selector());
        kapi::retry_transient(&format!("list {}", gvk.1), || api.list(&lp))
            .await
            .unwrap_or_else(|e| panic!("stand-in: list {} in {}: {e}", gvk.1, self.namespace))
            .items
    }

    async fn first(&self, gvk: (&str, &str)) -> Option<DynamicObject> {
        self.list(gvk).await.into_iter().next()
    }

    /// Server-side apply `body` (a partial object) to `name`, on the status subresource when
    /// `status`, as the stand-in's field manager.
    async fn apply(&self, gvk: (&str, &str), name: &str, body: Value, status: bool) {
        let api = self.api(gvk).await;
        let mut body = body;
        body["apiVersion"] = json!(gvk.0);
        body["kind"] = json!(gvk.1);
        body["metadata"]["name"] = json!(name);
        let pp = PatchParams::apply(FIELD_MANAGER).force();
        let patch = Patch::Apply(&body);
        let what = format!("stand-in: apply {} {name}", gvk.1);
        let r = if status {
            kapi::retry_transient(&what, || api.patch_status(name, &pp, &patch)).await
        } else {
            kapi::retry_transient(&what, || api.patch(name, &pp, &patch)).await
        };
        r.unwrap_or_else(|e| panic!("{what}: {e}"));
    }

    /// Record an Event about `obj` as its controller would (`Normal` or `Warning`).
    async fn event(
        &self,
        gvk: (&str, &str),
        obj: &DynamicObject,
        warning: bool,
        reason: &str,
        message: &str,
    ) {
        let name = obj.metadata.name.clone().unwrap_or_default();
        let ev: k8s_openapi::api::core::v1::Event = serde_json::from_value(json!({
            "metadata": {"generateName": format!("{name}.")},
            "involvedObject": {
                "apiVersion": gvk.0, "kind": gvk.1, "name": name,
                "namespace": self.namespace, "uid": obj.metadata.uid,
            },
            "type": if warning { "Warning" } else { "Normal" },
            "reason": reason,
            "message": message,
            "source": {"component": FIELD_MANAGER},
            "firstTimestamp": now(),
            "lastTimestamp": now(),
            "count": 1,
        }))
        .unwrap_or_else(|e| panic!("stand-in: event body: {e}"));
        let api: Api<k8s_openapi::api::core::v1::Event> =
            Api::namespaced(self.client.clone(), &self.namespace);
        let pp = PostParams::default();
        kapi::retry_transient("stand-in: create event", || api.create(&pp, &ev))
            .await
            .unwrap_or_else(|e| panic!("stand-in: create event: {e}"));
    }

    /// CAPO's cluster controller: the network, the API endpoint `host:port` and
    /// `status.ready`. [`NotYet`] until the topology controller has created the OpenStackCluster.
    pub async fn infrastructure_ready(&self, host: &str, port: u16) -> Result<(), NotYet> {
        let osc = self.first(OSC).await.ok_or(NotYet("OpenStackCluster"))?;
        let name = osc.metadata.name.clone().unwrap_or_default();
        self.apply(
            OSC,
            &name,
            json!({"spec": {"controlPlaneEndpoint": {"host": host, "port": port}}}),
            false,
        )
        .await;
        self.apply(
            OSC,
            &name,
            json!({"status": {
                "ready": true,
                "network": {"id": "00000000-0000-4000-8000-0000000000a1", "name": format!("k8s-clusterapi-cluster-{}-{}", self.namespace, self.cluster)},
                "failureDomains": {"nova": {"controlPlane": true}},
            }}),
            true,
        )
        .await;
        self.event(
            OSC,
            &osc,
            false,
            "Successful",
            &format!(
                "Created load balancer k8s-clusterapi-cluster-{}-{}-kubeapi",
                self.namespace, self.cluster
            ),
        )
        .await;
        Ok(())
    }

    /// CAPO failing to create the cluster's infrastructure: `status.ready=false` with
    /// `failureReason` / `failureMessage`, and a Warning Event.
    pub async fn infrastructure_failed(&self, f: &Failure) -> Result<(), NotYet> {
        let osc = self.first(OSC).await.ok_or(NotYet("OpenStackCluster"))?;
        let name = osc.metadata.name.clone().unwrap_or_default();
        self.apply(
            OSC,
            &name,
            json!({"status": {"ready": false, "failureReason": f.reason, "failureMessage": f.message}}),
            true,
        )
        .await;
        self.event(OSC, &osc, true, "Failed", &f.message).await;
        Ok(())
    }

    /// The kubeadm control-plane controller once every replica is up: initialized, all
    /// replicas ready, available and up to date, at the KCP's version. With `failure`, it plays
    /// a control plane that cannot come up instead: not initialized, no ready replica, the
    /// v1beta1 `failureReason` / `failureMessage` and conditions False with that reason.
    pub async fn control_plane(&self, failure: Option<&Failure>) -> Result<(), NotYet> {
        let kcp = self.first(KCP).await.ok_or(NotYet("KubeadmControlPlane"))?;
        let name = kcp.metadata.name.clone().unwrap_or_default();
        let generation = kcp.metadata.generation.unwrap_or(1);
        let replicas = kcp.data["spec"]["replicas"].as_i64().unwrap_or(1);
        let version = kcp.data["spec"]["version"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let ok = failure.is_none();
        let ready = if ok { replicas } else { 0 };
        let (reason, message) = match failure {
            None => ("Available".to_string(), String::new()),
            Some(f) => (f.reason.clone(), f.message.clone()),
        };
        let mut deprecated = json!({
            "readyReplicas": ready,
            "updatedReplicas": replicas,
            "unavailableReplicas": replicas - ready,
            "conditions": [
                v1beta1_condition("Ready", failure),
                v1beta1_condition("Available", failure),
                v1beta1_condition("CertificatesAvailable", None),
                v1beta1_condition("MachinesCreated", None),
                v1beta1_condition("MachinesReady", failure),
                v1beta1_condition("Resized", None),
            ],
        });
        if let Some(f) = failure {
            deprecated["failureReason"] = json!(f.reason);
            deprecated["failureMessage"] = json!(f.message);
        }
        let mut status = json!({
            "initialization": {"controlPlaneInitialized": ok},
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "upToDateReplicas": replicas,
            "observedGeneration": generation.max(1),
            "selector": format!("cluster.x-k8s.io/cluster-name={},cluster.x-k8s.io/control-plane", self.cluster),
            "conditions": [
                condition("Available", ok, &reason, &message, generation),
                condition("Initialized", ok, if ok { "Initialized" } else { "NotInitialized" }, &message, generation),
                condition("MachinesReady", ok, if ok { "Ready" } else { &reason }, &message, generation),
            ],
            "deprecated": {"v1beta1": deprecated},
        });
        if !version.is_empty() {
            status["version"] = json!(version);
        }
        self.apply(KCP, &name, json!({ "status": status }), true)
            .await;
        match failure {
            None => {
                self.event(
                    KCP,
                    &kcp,
                    false,
                    "SuccessfulCreate",
                    "Control plane is available",
                )
                .await
            }
            Some(f) => self.event(KCP, &kcp, true, &f.reason, &f.message).await,
        }
        Ok(())
    }

    /// The bootstrap and infrastructure providers of every Machine of the cluster that exists
    /// so far: its KubeadmConfig gets its bootstrap data Secret, its OpenStackMachine a server
    /// (`providerID`, ACTIVE, addresses `10.0.0.<n>`), ready; or, for the Machines whose name
    /// contains `fail`'s string, `InstanceReady=False` with the failure. Returns the names of the
    /// Machines handled. The real Machine controller then copies `providerID` and the
    /// addresses into the Machine and marks its infrastructure ready; the Machine's node
    /// (`nodeRef`, `NodeHealthy`) stays the real controller's, which finds no workload
    /// cluster.
    pub async fn machines_ready(&self, fail: Option<(&str, &Failure)>) -> Vec<String> {
        let machines = self.list(MACHINE).await;
        let configs: BTreeMap<String, DynamicObject> = self
            .list(KC)
            .await
            .into_iter()
            .map(|o| (o.metadata.name.clone().unwrap_or_default(), o))
            .collect();
        let osms: BTreeMap<String, DynamicObject> = self
            .list(OSM)
            .await
            .into_iter()
            .map(|o| (o.metadata.name.clone().unwrap_or_default(), o))
            .collect();
        let mut done = Vec::new();
        for (i, m) in machines.iter().enumerate() {
            let mname = m.metadata.name.clone().unwrap_or_default();
            // the bootstrap data (kubeadm's bootstrap controller)
            if let Some(cfg) = m.data["spec"]["bootstrap"]["configRef"]["name"]
                .as_str()
                .and_then(|n| configs.get(n))
            {
                let cname = cfg.metadata.name.clone().unwrap_or_default();
                self.bootstrap_secret(&cname, cfg).await;
                self.apply(
                    KC,
                    &cname,
                    json!({"status": {
                        "initialization": {"dataSecretCreated": true},
                        "dataSecretName": cname,
                        "observedGeneration": cfg.metadata.generation.unwrap_or(1).max(1),
                    }}),
                    true,
                )
                .await;
            }
            // the server (CAPO's machine controller)
            let Some(osm) = m.data["spec"]["infrastructureRef"]["name"]
                .as_str()
                .and_then(|n| osms.get(n))
            else {
                continue;
            };
            let oname = osm.metadata.name.clone().unwrap_or_default();
            let failure = fail.and_then(|(part, f)| mname.contains(part).then_some(f));
            match failure {
                None => {
                    let id = uuid::Uuid::new_v5(&uuid::Uuid::NAMESPACE_OID, oname.as_bytes());
                    self.apply(
                        OSM,
                        &oname,
                        json!({"spec": {"providerID": format!("openstack:///{id}")}}),
                        false,
                    )
                    .await;
                    self.apply(
                        OSM,
                        &oname,
                        json!({"status": {
                            "ready": true,
                            "instanceID": id.to_string(),
                            "instanceState": "ACTIVE",
                            "addresses": [
                                {"type": "InternalIP", "address": format!("10.0.0.{}", 10 + i)},
                                {"type": "Hostname", "address": oname},
                            ],
                            "conditions": [
                                v1beta1_condition("Ready", None),
                                v1beta1_condition("InstanceReady", None),
                            ],
                        }}),
                        true,
                    )
                    .await;
                }
                Some(f) => {
                    self.apply(
                        OSM,
                        &oname,
                        json!({"status": {
                            "ready": false,
                            "instanceState": "ERROR",
                            "failureReason": "CreateError",
                            "failureMessage": f.message,
                            "conditions": [
                                v1beta1_condition("Ready", Some(f)),
                                v1beta1_condition("InstanceReady", Some(f)),
                            ],
                        }}),
                        true,
                    )
                    .await;
                    self.event(OSM, osm, true, &f.reason, &f.message).await;
                }
            }
            done.push(mname);
        }
        done
    }

    async fn bootstrap_secret(&self, name: &str, cfg: &DynamicObject) {
        let api: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(self.client.clone(), &self.namespace);
        let body = json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": name,
                "labels": {"cluster.x-k8s.io/cluster-name": self.cluster},
                "ownerReferences": [{
                    "apiVersion": KC.0, "kind": KC.1, "name": name,
                    "uid": cfg.metadata.uid, "controller": true,
                }],
            },
            "type": "cluster.x-k8s.io/secret",
            "stringData": {"format": "cloud-config", "value": "#cloud-config\n# written by the OpenKeel CAPI stand-in\n"},
        });
        let pp = PatchParams::apply(FIELD_MANAGER).force();
        let patch = Patch::Apply(&body);
        kapi::retry_transient("stand-in: bootstrap secret", || {
            api.patch(name, &pp, &patch)
        })
        .await
        .unwrap_or_else(|e| panic!("stand-in: bootstrap secret {name}: {e}"));
    }
}

/// A step could not be played yet: the object it acts on (named) does not exist yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotYet(pub &'static str);
