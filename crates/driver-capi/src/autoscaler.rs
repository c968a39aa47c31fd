//! The cluster autoscaler of a cluster with `auto_scaling_enabled` (magnum-cluster-api's `magnum_cluster_api/resources.py`): the
//! `cluster-autoscaler` chart magnum-cluster-api ships (9.29.5, its ClusterRole patched to
//! read `openstackmachinetemplates`), rendered with magnum-cluster-api's values for release
//! `<stack_id>` in the driver's namespace of the management cluster. magnum-cluster-api runs
//! `helm upgrade --install`; OpenKeel renders the chart with `helm template` and applies the
//! objects itself (server-side apply), so that a repeated install is a no-op, no Helm release
//! Secret is kept, and the delete removes exactly what was written.
//!
//! The autoscaler runs in the management cluster, reads the workload cluster through the
//! `<stack_id>-kubeconfig` Secret CAPI writes, and scales the MachineDeployments between the
//! `cluster-api-autoscaler-node-group-{min,max}-size` annotations of their topology entries
//! (`cluster.rs`); the health monitor brings each nodegroup's `node_count` back from the
//! MachineDeployment's replicas.

use openkeel_core::error::MagnumError;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::addons::{HelmRelease, PostRender};

/// `CLUSTER_AUTOSCALER_LATEST_BY_MINOR` (magnum-cluster-api `images.py`).
const LATEST_BY_MINOR: &[(&str, &str)] = &[
    ("1.22", "1.22.3"),
    ("1.23", "1.23.1"),
    ("1.24", "1.24.3"),
    ("1.25", "1.25.3"),
    ("1.26", "1.26.8"),
    ("1.27", "1.27.8"),
    ("1.28", "1.28.7"),
    ("1.29", "1.29.5"),
    ("1.30", "1.30.7"),
    ("1.31", "1.31.5"),
    ("1.32", "1.32.7"),
    ("1.33", "1.33.5"),
    ("1.34", "1.34.4"),
    ("1.35", "1.35.1"),
    ("1.36", "1.36.0"),
];

/// `get_cluster_autoscaler_image`: `<repository>/cluster-autoscaler:v<x.y.z>` for the
/// cluster's `kube_tag` (`v1.30.4` → the newest 1.30 autoscaler; unknown minors `x.y.0`).
/// `None` for a tag that is not a version.
pub fn image(kube_tag: &str, repository: &str) -> Option<String> {
    let v = kube_tag.strip_prefix('v').unwrap_or(kube_tag);
    let mut parts = v.split(['.', '-', '+']);
    let major: u64 = parts.next()?.parse().ok()?;
    let minor: u64 = parts.next()?.parse().ok()?;
    let key = format!("{major}.{minor}");
    let version = LATEST_BY_MINOR
        .iter()
        .find(|(m, _)| *m == key)
        .map_or_else(|| format!("{key}.0"), |(_, v)| (*v).to_string());
    Some(format!("{repository}/cluster-autoscaler:v{version}"))
}

/// The release magnum-cluster-api installs (`ClusterAutoscalerHelmRelease.apply`).
pub fn release(
    stack_id: &str,
    namespace: &str,
    kube_tag: &str,
    repository: &str,
) -> Result<HelmRelease, MagnumError> {
    let image = image(kube_tag, repository).ok_or_else(|| {
        MagnumError::internal(format!(
            "The kube_tag {kube_tag} is not a Kubernetes version: no cluster autoscaler for it."
        ))
    })?;
    let (repo, tag) = image.rsplit_once(':').unwrap_or((image.as_str(), ""));
    Ok(HelmRelease {
        key: "cluster-autoscaler.yaml",
        chart: "cluster-autoscaler",
        release: stack_id.to_string(),
        namespace: namespace.to_string(),
        values: json!({
            "fullnameOverride": format!("{stack_id}-autoscaler"),
            "cloudProvider": "clusterapi",
            "clusterAPIMode": "kubeconfig-incluster",
            "clusterAPIKubeconfigSecret": format!("{stack_id}-kubeconfig"),
            "autoDiscovery": {"clusterName": stack_id},
            "image": {"repository": repo, "tag": tag},
            "nodeSelector": {"openstack-control-plane": "enabled"},
            "extraArgs": {
                "logtostderr": true,
                "stderrthreshold": "info",
                "v": 4,
                "enforce-node-group-min-size": true,
            },
        }),
        post: PostRender::Raw,
    })
}

/// The objects of a rendering, in the chart's order (RBAC before the Deployment).
pub fn objects(rendered: &str) -> Result<Vec<Value>, MagnumError> {
    let mut out = Vec::new();
    for doc in serde_yaml::Deserializer::from_str(rendered) {
        let v = Value::deserialize(doc).map_err(|e| {
            MagnumError::internal(format!(
                "helm template of the cluster-autoscaler chart wrote YAML that does not parse: {e}"
            ))
        })?;
        if v.is_object() && v.get("kind").is_some() {
            out.push(v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_follow_the_kube_tag_as_magnum_cluster_api() {
        let r = "registry.k8s.io/autoscaling";
        assert_eq!(
            image("v1.30.4", r).as_deref(),
            Some("registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.7")
        );
        assert_eq!(
            image("v1.37.1", "mirror/x").as_deref(),
            Some("mirror/x/cluster-autoscaler:v1.37.0")
        );
        assert_eq!(image("latest", r), None);
        let rel = release("kube-abcde", "magnum-system", "v1.31.2", r).unwrap();
        assert_eq!(rel.release, "kube-abcde");
        assert_eq!(rel.values["image"]["tag"], "v1.31.5");
        assert_eq!(
            rel.values["image"]["repository"],
            "registry.k8s.io/autoscaling/cluster-autoscaler"
        );
        assert_eq!(
            rel.values["clusterAPIKubeconfigSecret"],
            "kube-abcde-kubeconfig"
        );
    }

    #[test]
    fn documents_become_objects() {
        let text = "---\n# Source: x\n\n---\nkind: ServiceAccount\nmetadata: {name: a}\n---\nkind: Deployment\nmetadata: {name: b}\n";
        let o = objects(text).unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[1]["kind"], "Deployment");
    }
}
