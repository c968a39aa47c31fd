//! The ClusterClass `magnum-<version>` and its four templates: the objects magnum-cluster-api
//! applies in step 2 of a cluster create (and again at every upgrade), before anything
//! per-cluster (`src/driver.rs:187-241` of magnum-cluster-api).
//!
//! Pure functions, no I/O: [`objects`] gives the six objects in the order they are applied
//! (the `magnum-system` Namespace, the OpenStackClusterTemplate, the OpenStackMachineTemplate,
//! the KubeadmControlPlaneTemplate, the KubeadmConfigTemplate, then the ClusterClass that
//! refers to them), each a `serde_json::Value` with its `apiVersion` and `kind`.
//!
//! # The version in the name
//!
//! magnum-cluster-api names the set `magnum-<git describe of the driver build>`
//! (`magnum-v0.38.2` for the 0.38.2 wheel). A ClusterClass's content must never change under
//! a name that clusters already use: every `Cluster` of that class would be re-rendered and
//! its machines rolled out. That is why the name carries a version, and why a cluster only
//! moves to a new class at an upgrade.
//!
//! OpenKeel writes exactly the objects of magnum-cluster-api 0.38.2 (the golden test
//! `tests/golden_clusterclass.rs` compares them with the wheel's own), so it uses the same
//! name, [`CLUSTER_CLASS_VERSION`] = `v0.38.2`: clusters created by magnum-cluster-api 0.38.2
//! keep their class untouched when OpenKeel takes over (the apply is a no-op), and both
//! drivers may run side by side during a migration without fighting over the objects. The
//! day OpenKeel's content differs from that release's, the version must change with it
//! (e.g. `v0.38.2-openkeel.1`): never two contents under one name.

pub mod patches;
pub mod templates;
pub mod variables;

use serde_json::{json, Value};

pub use crate::NAMESPACE;

/// The version in the ClusterClass's name (see the module documentation): the
/// magnum-cluster-api release whose ClusterClass OpenKeel writes.
pub const CLUSTER_CLASS_VERSION: &str = "v0.38.2";

/// The name of the ClusterClass and of its four templates for a driver version.
pub fn cluster_class_name_for(version: &str) -> String {
    format!("magnum-{version}")
}

/// The name of OpenKeel's ClusterClass, `magnum-v0.38.2`: `Cluster.spec.topology.class`.
pub fn cluster_class_name() -> String {
    cluster_class_name_for(CLUSTER_CLASS_VERSION)
}

/// `v1 Namespace magnum-system` (cluster-scoped).
pub fn namespace() -> Value {
    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
}

/// A reference to one of the class's templates.
fn template_ref(template: &Value) -> Value {
    json!({
        "apiVersion": template["apiVersion"],
        "kind": template["kind"],
        "name": template["metadata"]["name"],
        "namespace": template["metadata"]["namespace"],
    })
}

/// The machine health check of the control plane and the workers: a machine whose node is
/// not `Ready` for 5 minutes is replaced, unless more than 80% are unhealthy.
fn machine_health_check() -> Value {
    let unhealthy = |status: &str| json!({"type": "Ready", "status": status, "timeout": "5m0s"});
    json!({
        "maxUnhealthy": "80%",
        "unhealthyConditions": [unhealthy("False"), unhealthy("Unknown")],
    })
}

/// The set of objects for one driver version.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterClassSet {
    pub namespace: Value,
    pub openstack_cluster_template: Value,
    pub openstack_machine_template: Value,
    pub kubeadm_control_plane_template: Value,
    pub kubeadm_config_template: Value,
    pub cluster_class: Value,
}

impl ClusterClassSet {
    /// The set for `version` (its objects named `magnum-<version>` in `magnum-system`).
    pub fn for_version(version: &str) -> Self {
        Self::for_version_in(version, NAMESPACE)
    }

    /// The set for `version` in `namespace` (`magnum-system` in production; tests give each
    /// run a namespace of its own).
    pub fn for_version_in(version: &str, namespace: &str) -> Self {
        let name = cluster_class_name_for(version);
        let osct = templates::openstack_cluster_template(&name, namespace);
        let osmt = templates::openstack_machine_template(&name, namespace);
        let kcpt = templates::kubeadm_control_plane_template(&name, namespace);
        let kct = templates::kubeadm_config_template(&name, namespace);
        let cluster_class = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "ClusterClass",
            "metadata": templates::metadata(&name, namespace),
            "spec": {
                "infrastructure": {"ref": template_ref(&osct)},
                "controlPlane": {
                    "ref": template_ref(&kcpt),
                    "machineInfrastructure": {"ref": template_ref(&osmt)},
                    "machineHealthCheck": machine_health_check(),
                    "nodeVolumeDetachTimeout": "5m0s",
                },
                "workers": {"machineDeployments": [{
                    "class": patches::WORKER_CLASS,
                    "template": {
                        "bootstrap": {"ref": template_ref(&kct)},
                        "infrastructure": {"ref": template_ref(&osmt)},
                    },
                    "machineHealthCheck": machine_health_check(),
                    "nodeVolumeDetachTimeout": "5m0s",
                }]},
                "variables": variables::variables_json(),
                "patches": patches::patches_json(),
            },
        });
        Self {
            namespace: json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
            openstack_cluster_template: osct,
            openstack_machine_template: osmt,
            kubeadm_control_plane_template: kcpt,
            kubeadm_config_template: kct,
            cluster_class,
        }
    }

    /// The objects in the order magnum-cluster-api applies them.
    pub fn into_objects(self) -> Vec<Value> {
        vec![
            self.namespace,
            self.openstack_cluster_template,
            self.openstack_machine_template,
            self.kubeadm_control_plane_template,
            self.kubeadm_config_template,
            self.cluster_class,
        ]
    }
}

/// The API resource (group, version, plural) of an object of the set, from its `apiVersion`
/// and `kind`: what a kube-rs `Api<DynamicObject>` needs to write it. `None` for a kind that
/// is not part of the set.
pub fn api_resource(object: &Value) -> Option<kube::core::ApiResource> {
    let api_version = object["apiVersion"].as_str()?;
    let kind = object["kind"].as_str()?;
    let plural = match kind {
        "Namespace" => "namespaces",
        "OpenStackClusterTemplate" => "openstackclustertemplates",
        "OpenStackMachineTemplate" => "openstackmachinetemplates",
        "KubeadmControlPlaneTemplate" => "kubeadmcontrolplanetemplates",
        "KubeadmConfigTemplate" => "kubeadmconfigtemplates",
        "ClusterClass" => "clusterclasses",
        _ => return None,
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Some(kube::core::ApiResource::from_gvk_with_plural(
        &kube::core::GroupVersionKind::gvk(group, version, kind),
        plural,
    ))
}

/// OpenKeel's ClusterClass set ([`CLUSTER_CLASS_VERSION`]), in apply order.
pub fn objects() -> Vec<Value> {
    ClusterClassSet::for_version(CLUSTER_CLASS_VERSION).into_objects()
}

#[cfg(test)]
mod tests;
