//! The management-cluster test rig (`tests/services/kapi.sh`) proven with kube-rs: a real
//! kube-apiserver v1.37.2 with the Cluster API core manager v1.13.6. The objects are written as
//! magnum-cluster-api 0.38.2 writes them, `cluster.x-k8s.io/v1beta1` and the kubeadm groups'
//! `v1beta1` (the CRDs store `v1beta2`: every write and read here goes through Cluster API's own
//! conversion webhooks), and the real topology controller turns them into a KubeadmControlPlane
//! and a MachineDeployment.
//!
//! Skips outside CI when `OPENKEEL_TEST_KUBECONFIG` is not set; fails under `CI=true`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use kube::api::{ListParams, Patch, PatchParams};
use kube::Client;
use openkeel_tests::kapi;
use serde_json::{json, Value};

const MANAGER: &str = "openkeel-kapi-rig-test";

/// A minimal ClusterClass in magnum-cluster-api's API versions, with its five templates, one
/// variable and one patch that uses it.
const CLASS: &str = r#"
apiVersion: controlplane.cluster.x-k8s.io/v1beta1
kind: KubeadmControlPlaneTemplate
metadata:
  name: rig-cp
spec:
  template:
    spec:
      kubeadmConfigSpec:
        format: cloud-config
        clusterConfiguration:
          apiServer:
            extraArgs:
              cloud-provider: external
        initConfiguration:
          nodeRegistration:
            kubeletExtraArgs:
              cloud-provider: external
---
apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
kind: KubeadmConfigTemplate
metadata:
  name: rig-worker
spec:
  template:
    spec:
      format: cloud-config
      joinConfiguration:
        nodeRegistration:
          kubeletExtraArgs:
            cloud-provider: external
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackClusterTemplate
metadata:
  name: rig
spec:
  template:
    spec:
      identityRef:
        name: rig-cloud-config
        cloudName: default
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachineTemplate
metadata:
  name: rig-cp
spec:
  template:
    spec:
      flavor: m1.medium
      image:
        filter:
          name: ubuntu-2204-kube-v1.34.1
---
apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
kind: OpenStackMachineTemplate
metadata:
  name: rig-worker
spec:
  template:
    spec:
      flavor: m1.small
      image:
        filter:
          name: ubuntu-2204-kube-v1.34.1
---
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata:
  name: rig
spec:
  infrastructure:
    ref:
      apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
      kind: OpenStackClusterTemplate
      name: rig
  controlPlane:
    ref:
      apiVersion: controlplane.cluster.x-k8s.io/v1beta1
      kind: KubeadmControlPlaneTemplate
      name: rig-cp
    machineInfrastructure:
      ref:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: OpenStackMachineTemplate
        name: rig-cp
  workers:
    machineDeployments:
    - class: default-worker
      template:
        bootstrap:
          ref:
            apiVersion: bootstrap.cluster.x-k8s.io/v1beta1
            kind: KubeadmConfigTemplate
            name: rig-worker
        infrastructure:
          ref:
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: OpenStackMachineTemplate
            name: rig-worker
  variables:
  - name: flavor
    required: true
    schema:
      openAPIV3Schema:
        type: string
        default: m1.small
  patches:
  - name: worker-flavor
    definitions:
    - selector:
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
        kind: OpenStackMachineTemplate
        matchResources:
          machineDeploymentClass:
            names:
            - default-worker
      jsonPatches:
      - op: replace
        path: /spec/template/spec/flavor
        valueFrom:
          variable: flavor
"#;

fn cluster(name: &str, version: &str) -> Value {
    json!({
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {
            "name": name,
            "labels": {"magnum.openstack.org/uuid": "00000000-0000-4000-8000-000000000001"},
        },
        "spec": {
            "clusterNetwork": {
                "pods": {"cidrBlocks": ["10.100.0.0/16"]},
                "services": {"cidrBlocks": ["10.254.0.0/16"]},
                "serviceDomain": "cluster.local",
            },
            "topology": {
                "class": "rig",
                "version": version,
                "controlPlane": {"replicas": 1},
                "workers": {"machineDeployments": [
                    {"class": "default-worker", "name": "md-0", "replicas": 2},
                ]},
                "variables": [{"name": "flavor", "value": "m1.large"}],
            },
        },
    })
}

async fn get(client: &Client, ns: &str, api_version: &str, kind: &str, name: &str) -> Value {
    let api = kapi::dynamic_api(client, ns, api_version, kind).await;
    let obj = kapi::retry_transient(&format!("get {kind} {name}"), || api.get(name))
        .await
        .unwrap_or_else(|e| panic!("get {api_version} {kind} {ns}/{name}: {e}"));
    serde_json::to_value(obj).expect("object as JSON")
}

async fn list(
    client: &Client,
    ns: &str,
    api_version: &str,
    kind: &str,
    labels: &str,
) -> Vec<Value> {
    let api = kapi::dynamic_api(client, ns, api_version, kind).await;
    let lp = ListParams::default().labels(labels);
    kapi::retry_transient(&format!("list {kind}"), || api.list(&lp))
        .await
        .unwrap_or_else(|e| panic!("list {api_version} {kind} in {ns}: {e}"))
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).expect("object as JSON"))
        .collect()
}

fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Apply the class and wait until CAPI's ClusterClass controller has reconciled it (the
/// Cluster webhook checks the variables against its status).
async fn apply_class(client: &Client, ns: &str) {
    kapi::apply_yaml(client, ns, MANAGER, CLASS).await;
    kapi::wait_for(
        "the ClusterClass to be reconciled",
        Duration::from_secs(60),
        || async {
            let cc = get(
                client,
                ns,
                "cluster.x-k8s.io/v1beta2",
                "ClusterClass",
                "rig",
            )
            .await;
            let reconciled = cc["status"]["observedGeneration"] == cc["metadata"]["generation"]
                && condition(&cc, "VariablesReady").is_some_and(|c| c["status"] == "True");
            reconciled.then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn the_topology_controller_renders_a_v1beta1_cluster() {
    let Some(client) = kapi::client().await else {
        return;
    };
    let version = client.apiserver_version().await.expect("GET /version");
    assert_eq!(version.git_version, "v1.37.2");
    let ns = kapi::fresh_namespace(&client, "rig-topology").await;
    apply_class(&client, &ns).await;

    // v1beta1 writes are stored as v1beta2 by Cluster API's conversion code: the kubeadm
    // groups' map-shaped extraArgs become v1beta2's name/value lists
    let kcpt = get(
        &client,
        &ns,
        "controlplane.cluster.x-k8s.io/v1beta2",
        "KubeadmControlPlaneTemplate",
        "rig-cp",
    )
    .await;
    assert_eq!(
        kcpt["spec"]["template"]["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
            ["extraArgs"],
        json!([{"name": "cloud-provider", "value": "external"}]),
        "{kcpt:#}"
    );
    let kct = get(
        &client,
        &ns,
        "bootstrap.cluster.x-k8s.io/v1beta2",
        "KubeadmConfigTemplate",
        "rig-worker",
    )
    .await;
    assert_eq!(
        kct["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"]
            ["kubeletExtraArgs"],
        json!([{"name": "cloud-provider", "value": "external"}]),
        "{kct:#}"
    );
    let cc = get(
        &client,
        &ns,
        "cluster.x-k8s.io/v1beta2",
        "ClusterClass",
        "rig",
    )
    .await;
    assert_eq!(
        cc["spec"]["controlPlane"]["templateRef"]["name"], "rig-cp",
        "{cc:#}"
    );

    kapi::apply_json(&client, &ns, MANAGER, cluster("rig", "v1.34.1")).await;
    let c2 = get(&client, &ns, "cluster.x-k8s.io/v1beta2", "Cluster", "rig").await;
    assert_eq!(c2["spec"]["topology"]["classRef"]["name"], "rig", "{c2:#}");

    // the real topology controller renders the control plane and the workers
    let sel = "cluster.x-k8s.io/cluster-name=rig";
    let kcp = kapi::wait_for(
        "the KubeadmControlPlane",
        Duration::from_secs(90),
        || async {
            list(
                &client,
                &ns,
                "controlplane.cluster.x-k8s.io/v1beta2",
                "KubeadmControlPlane",
                sel,
            )
            .await
            .into_iter()
            .next()
        },
    )
    .await;
    assert_eq!(kcp["spec"]["replicas"], 1, "{kcp:#}");
    assert_eq!(kcp["spec"]["version"], "v1.34.1", "{kcp:#}");
    let md = kapi::wait_for(
        "the MachineDeployment md-0",
        Duration::from_secs(90),
        || async {
            list(
                &client,
                &ns,
                "cluster.x-k8s.io/v1beta1",
                "MachineDeployment",
                &format!("{sel},topology.cluster.x-k8s.io/deployment-name=md-0"),
            )
            .await
            .into_iter()
            .next()
        },
    )
    .await;
    assert_eq!(md["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert_eq!(md["spec"]["replicas"], 2, "{md:#}");

    // the ClusterClass patch put the Cluster's variable into the worker machine template
    let infra = &md["spec"]["template"]["spec"]["infrastructureRef"];
    let omt = get(
        &client,
        &ns,
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "OpenStackMachineTemplate",
        infra["name"].as_str().expect("infrastructureRef.name"),
    )
    .await;
    assert_eq!(
        omt["spec"]["template"]["spec"]["flavor"], "m1.large",
        "{omt:#}"
    );

    // and the v1beta1 view of the Cluster carries the controller's status
    kapi::wait_for(
        "TopologyReconciled on the Cluster",
        Duration::from_secs(60),
        || async {
            let c1 = get(&client, &ns, "cluster.x-k8s.io/v1beta1", "Cluster", "rig").await;
            condition(&c1, "TopologyReconciled")
                .is_some_and(|c| c["status"] == "True")
                .then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn capi_admission_webhooks_reject_an_invalid_cluster() {
    let Some(client) = kapi::client().await else {
        return;
    };
    let ns = kapi::fresh_namespace(&client, "rig-admission").await;
    apply_class(&client, &ns).await;
    let api = kapi::dynamic_api(&client, &ns, "cluster.x-k8s.io/v1beta1", "Cluster").await;
    let body = cluster("bad", "banana");
    let err = api
        .patch(
            "bad",
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&body),
        )
        .await
        .expect_err("CAPI's Cluster webhook must reject topology.version banana");
    match err {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 422, "{s:?}");
            assert!(s.message.contains("version"), "{s:?}");
        }
        e => panic!("expected a 422, got {e}"),
    }
}

/// The rig's real CAPI manager plus the scripted stand-in (CAPO, kubeadm): a Cluster goes
/// from its topology to infrastructure ready, control plane ready and provisioned worker
/// Machines, and the driver's `v1beta1` view shows it.
#[tokio::test]
async fn the_stand_in_advances_a_cluster_to_ready() {
    use openkeel_tests::capi_standin::CapiStandIn;
    let Some(client) = kapi::client().await else {
        return;
    };
    let ns = kapi::fresh_namespace(&client, "rig-standin").await;
    apply_class(&client, &ns).await;
    kapi::apply_json(&client, &ns, MANAGER, cluster("rig", "v1.34.1")).await;
    let standin = CapiStandIn::new(client.clone(), &ns, "rig");

    kapi::wait_for("the OpenStackCluster", Duration::from_secs(90), || async {
        standin.infrastructure_ready("192.0.2.10", 6443).await.ok()
    })
    .await;
    let c1 = kapi::wait_for(
        "InfrastructureReady and the endpoint on the Cluster",
        Duration::from_secs(60),
        || async {
            let c1 = get(&client, &ns, "cluster.x-k8s.io/v1beta1", "Cluster", "rig").await;
            (condition(&c1, "InfrastructureReady").is_some_and(|c| c["status"] == "True")
                && c1["spec"]["controlPlaneEndpoint"]["host"] == "192.0.2.10")
                .then_some(c1)
        },
    )
    .await;
    assert_eq!(c1["spec"]["controlPlaneEndpoint"]["port"], 6443, "{c1:#}");

    kapi::wait_for(
        "the KubeadmControlPlane",
        Duration::from_secs(60),
        || async { standin.control_plane(None).await.ok() },
    )
    .await;
    // what the driver reads (magnum-cluster-api's `magnum_cluster_api/driver.py`), through CAPI's conversion
    let kcp = list(
        &client,
        &ns,
        "controlplane.cluster.x-k8s.io/v1beta1",
        "KubeadmControlPlane",
        "cluster.x-k8s.io/cluster-name=rig",
    )
    .await
    .remove(0);
    assert_eq!(kcp["status"]["ready"], true, "{kcp:#}");
    assert_eq!(kcp["status"]["initialized"], true, "{kcp:#}");
    assert_eq!(kcp["status"]["replicas"], 1, "{kcp:#}");
    assert_eq!(kcp["status"]["updatedReplicas"], 1, "{kcp:#}");
    assert_eq!(kcp["status"]["version"], "v1.34.1", "{kcp:#}");
    assert!(
        condition(&kcp, "Available").is_some_and(|c| c["status"] == "True"),
        "{kcp:#}"
    );
    kapi::wait_for(
        "ControlPlaneInitialized and ControlPlaneReady on the Cluster",
        Duration::from_secs(60),
        || async {
            let c1 = get(&client, &ns, "cluster.x-k8s.io/v1beta1", "Cluster", "rig").await;
            (condition(&c1, "ControlPlaneInitialized").is_some_and(|c| c["status"] == "True")
                && condition(&c1, "ControlPlaneReady").is_some_and(|c| c["status"] == "True"))
            .then_some(())
        },
    )
    .await;

    // the real MachineSet controller now creates the two workers; the stand-in provisions them
    let machines = kapi::wait_for(
        "two worker Machines provisioned",
        Duration::from_secs(90),
        || async {
            let done = standin.machines_ready(None).await;
            (done.len() == 2).then_some(done)
        },
    )
    .await;
    kapi::wait_for(
        "the Machines' providerID and addresses",
        Duration::from_secs(60),
        || async {
            let ms = list(
                &client,
                &ns,
                "cluster.x-k8s.io/v1beta1",
                "Machine",
                "cluster.x-k8s.io/cluster-name=rig",
            )
            .await;
            let provisioned = ms.iter().filter(|m| {
                m["spec"]["providerID"]
                    .as_str()
                    .is_some_and(|p| p.starts_with("openstack:///"))
                    && m["status"]["addresses"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty())
                    && m["status"]["infrastructureReady"] == true
            });
            (provisioned.count() == machines.len()).then_some(())
        },
    )
    .await;
}

/// The stand-in told to fail: the control plane and the infrastructure carry CAPI's and
/// CAPO's own failure fields, in the `v1beta1` view the driver reads, and a Warning Event.
#[tokio::test]
async fn the_stand_in_plays_failures() {
    use openkeel_tests::capi_standin::{CapiStandIn, Failure};
    let Some(client) = kapi::client().await else {
        return;
    };
    let ns = kapi::fresh_namespace(&client, "rig-standin-fail").await;
    apply_class(&client, &ns).await;
    kapi::apply_json(&client, &ns, MANAGER, cluster("rig", "v1.34.1")).await;
    let standin = CapiStandIn::new(client.clone(), &ns, "rig");

    let f = Failure::new(
        "CreateError",
        "Failed to create load balancer: quota exceeded",
    );
    kapi::wait_for("the OpenStackCluster", Duration::from_secs(90), || async {
        standin.infrastructure_failed(&f).await.ok()
    })
    .await;
    let osc = list(
        &client,
        &ns,
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "OpenStackCluster",
        "cluster.x-k8s.io/cluster-name=rig",
    )
    .await
    .remove(0);
    assert_eq!(osc["status"]["ready"], false, "{osc:#}");
    assert_eq!(osc["status"]["failureReason"], "CreateError", "{osc:#}");
    assert_eq!(osc["status"]["failureMessage"], f.message, "{osc:#}");
    let events = list(&client, &ns, "v1", "Event", "").await;
    assert!(
        events
            .iter()
            .any(|e| e["involvedObject"]["kind"] == "OpenStackCluster"
                && e["type"] == "Warning"
                && e["message"] == f.message),
        "{events:#?}"
    );

    let f = Failure::new(
        "UpdateError",
        "etcd member failed to join: context deadline exceeded",
    );
    kapi::wait_for(
        "the KubeadmControlPlane",
        Duration::from_secs(60),
        || async { standin.control_plane(Some(&f)).await.ok() },
    )
    .await;
    let kcp = list(
        &client,
        &ns,
        "controlplane.cluster.x-k8s.io/v1beta1",
        "KubeadmControlPlane",
        "cluster.x-k8s.io/cluster-name=rig",
    )
    .await
    .remove(0);
    assert_eq!(kcp["status"]["ready"], false, "{kcp:#}");
    assert_eq!(kcp["status"]["initialized"], false, "{kcp:#}");
    assert_eq!(kcp["status"]["failureReason"], "UpdateError", "{kcp:#}");
    assert_eq!(kcp["status"]["failureMessage"], f.message, "{kcp:#}");
    let ready = condition(&kcp, "Ready").expect("a Ready condition");
    assert_eq!(ready["status"], "False", "{kcp:#}");
    assert_eq!(ready["reason"], "UpdateError", "{kcp:#}");
    assert_eq!(ready["severity"], "Error", "{kcp:#}");
}

/// A worker server that cannot be created: the stand-in plays CAPO's InstanceReady failure on
/// the OpenStackMachine, and the real Machine controller keeps the Machine unprovisioned.
#[tokio::test]
async fn the_stand_in_fails_a_worker_machine() {
    use openkeel_tests::capi_standin::{CapiStandIn, Failure};
    let Some(client) = kapi::client().await else {
        return;
    };
    let ns = kapi::fresh_namespace(&client, "rig-standin-machine").await;
    apply_class(&client, &ns).await;
    kapi::apply_json(&client, &ns, MANAGER, cluster("rig", "v1.34.1")).await;
    let standin = CapiStandIn::new(client.clone(), &ns, "rig");
    kapi::wait_for("the OpenStackCluster", Duration::from_secs(90), || async {
        standin.infrastructure_ready("192.0.2.10", 6443).await.ok()
    })
    .await;
    kapi::wait_for(
        "the KubeadmControlPlane",
        Duration::from_secs(60),
        || async { standin.control_plane(None).await.ok() },
    )
    .await;
    let f = Failure::new(
        "InstanceCreateFailed",
        "No valid host was found. There are not enough hosts available.",
    );
    kapi::wait_for("two worker Machines", Duration::from_secs(90), || async {
        let done = standin.machines_ready(Some(("md-0", &f))).await;
        (done.len() == 2).then_some(())
    })
    .await;
    let osms = list(
        &client,
        &ns,
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "OpenStackMachine",
        "cluster.x-k8s.io/cluster-name=rig",
    )
    .await;
    assert_eq!(osms.len(), 2, "{osms:#?}");
    for osm in &osms {
        assert_eq!(osm["status"]["ready"], false, "{osm:#}");
        assert_eq!(osm["status"]["failureMessage"], f.message, "{osm:#}");
        let c = condition(osm, "InstanceReady").expect("InstanceReady");
        assert_eq!(
            (c["status"].as_str(), c["reason"].as_str()),
            (Some("False"), Some("InstanceCreateFailed")),
            "{osm:#}"
        );
    }
    // give the Machine controller a moment: the Machines stay unprovisioned
    tokio::time::sleep(Duration::from_secs(2)).await;
    let ms = list(
        &client,
        &ns,
        "cluster.x-k8s.io/v1beta1",
        "Machine",
        "cluster.x-k8s.io/cluster-name=rig",
    )
    .await;
    assert!(
        ms.iter().all(
            |m| m["status"]["infrastructureReady"] != true && m["spec"]["providerID"].is_null()
        ),
        "{ms:#?}"
    );
}
