//! The ClusterClass's four base templates (`src/features/mod.rs:186-420` of
//! magnum-cluster-api). The ClusterClass's patches (`patches.rs`) fill their placeholders
//! from the `Cluster`'s variables.

use serde_json::{json, Value};

/// Kubernetes' audit policy (from GCE's `configure-helper.sh`), written to every control-plane
/// node; the `auditLog` patch makes kube-apiserver use it.
const AUDIT_POLICY: &str = include_str!("../../data/audit-policy.yaml");

/// Appends a KubeProxyConfiguration (metrics on 0.0.0.0:10249) to kubeadm's configuration
/// before `kubeadm init/join` runs (a pre-kubeadm command).
const CONFIGURE_KUBE_PROXY: &str = include_str!("../../data/configure-kube-proxy.sh");

/// The kubeconfig kube-apiserver's webhook authenticator/authorizer reads when keystone-auth
/// is enabled (k8s-keystone-auth listens on 127.0.0.1:8443). magnum-cluster-api ships it with
/// CRLF line ends; kept as is so the template (and its hash in CAPI's rollouts) is the same.
fn keystone_webhook_kubeconfig() -> String {
    [
        "---",
        "apiVersion: v1",
        "kind: Config",
        "preferences: {}",
        "clusters:",
        "  - cluster:",
        "      insecure-skip-tls-verify: true",
        "      server: https://127.0.0.1:8443/webhook",
        "    name: webhook",
        "users:",
        "  - name: webhook",
        "contexts:",
        "  - context:",
        "      cluster: webhook",
        "      user: webhook",
        "    name: webhook",
        "current-context: webhook",
        "",
    ]
    .join("\r\n")
}

/// The placeholder the templates carry where a patch always writes the real value.
pub const PLACEHOLDER: &str = "PLACEHOLDER";

/// `metadata` of every object of the set.
pub(super) fn metadata(name: &str, namespace: &str) -> Value {
    json!({"name": name, "namespace": namespace})
}

use crate::secrets::base64;

/// The node registration of `kubeadm init` / `kubeadm join`: cloud-init's hostname, and the
/// external cloud provider (the OpenStack CCM).
fn node_registration() -> Value {
    json!({
        "name": "{{ local_hostname }}",
        "kubeletExtraArgs": {"cloud-provider": "external"},
    })
}

/// `controlplane.cluster.x-k8s.io/v1beta1 KubeadmControlPlaneTemplate`.
pub fn kubeadm_control_plane_template(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": metadata(name, namespace),
        "spec": {"template": {"spec": {
            "rolloutBefore": {"certificatesExpiryDays": 21},
            "kubeadmConfigSpec": {
                "clusterConfiguration": {
                    "apiServer": {
                        "extraArgs": {"profiling": "false"},
                        "extraVolumes": [{
                            "name": "webhooks",
                            "hostPath": "/etc/kubernetes/webhooks",
                            "mountPath": "/etc/kubernetes/webhooks",
                        }],
                    },
                    "controllerManager": {"extraArgs": {
                        "bind-address": "0.0.0.0",
                        "cloud-provider": "external",
                        "profiling": "false",
                    }},
                    "etcd": {"local": {"extraArgs": {
                        "listen-metrics-urls": "http://0.0.0.0:2381",
                    }}},
                    "scheduler": {"extraArgs": {
                        "bind-address": "0.0.0.0",
                        "profiling": "false",
                    }},
                },
                "diskSetup": {},
                "files": [
                    {
                        "path": "/etc/kubernetes/audit-policy/apiserver-audit-policy.yaml",
                        "permissions": "0600",
                        "encoding": "base64",
                        "content": base64(AUDIT_POLICY.as_bytes()),
                    },
                    {
                        "path": "/etc/kubernetes/webhooks/webhookconfig.yaml",
                        "owner": "root:root",
                        "permissions": "0644",
                        "encoding": "base64",
                        "content": base64(keystone_webhook_kubeconfig().as_bytes()),
                    },
                    {
                        "path": "/run/kubeadm/configure-kube-proxy.sh",
                        "permissions": "0755",
                        "encoding": "base64",
                        "content": base64(CONFIGURE_KUBE_PROXY.as_bytes()),
                    },
                ],
                "format": "cloud-config",
                "initConfiguration": {"nodeRegistration": node_registration()},
                "joinConfiguration": {"nodeRegistration": node_registration()},
                "preKubeadmCommands": [
                    "rm /var/lib/etcd/lost+found -rf",
                    "bash /run/kubeadm/configure-kube-proxy.sh",
                ],
                // the list must exist for the patches that append to it (keystoneAuth)
                "postKubeadmCommands": ["echo PLACEHOLDER"],
            },
        }}},
    })
}

/// `bootstrap.cluster.x-k8s.io/v1beta1 KubeadmConfigTemplate` (the `default-worker` class).
pub fn kubeadm_config_template(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfigTemplate",
        "metadata": metadata(name, namespace),
        "spec": {"template": {"spec": {
            "diskSetup": {},
            // the list must exist for the patches that append to it
            "files": [{
                "path": "/etc/kubernetes/.placeholder",
                "permissions": "0644",
                "encoding": "base64",
                "content": base64(PLACEHOLDER.as_bytes()),
            }],
            "joinConfiguration": {"nodeRegistration": node_registration()},
        }}},
    })
}

/// The OpenStack credentials reference of both OpenStack templates; the
/// `clusterIdentityRefName` patch sets the name (`<stack_id>-cloud-config`).
fn identity_ref() -> Value {
    json!({"name": PLACEHOLDER, "cloudName": "default"})
}

/// `infrastructure.cluster.x-k8s.io/v1beta1 OpenStackMachineTemplate` (control plane and
/// `default-worker` alike).
pub fn openstack_machine_template(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "OpenStackMachineTemplate",
        "metadata": metadata(name, namespace),
        "spec": {"template": {"spec": {
            "flavor": PLACEHOLDER,
            "identityRef": identity_ref(),
            "image": {"id": "00000000-0000-0000-0000-000000000000"},
        }}},
    })
}

/// One all-nodes security group rule opening the NodePort range to the world.
fn node_port_rule(protocol: &str, label: &str) -> Value {
    json!({
        "name": format!("Node Port ({label}, anywhere)"),
        "direction": "ingress",
        "etherType": "IPv4",
        "portRangeMin": 30000,
        "portRangeMax": 32767,
        "protocol": protocol,
        "remoteIPPrefix": "0.0.0.0/0",
    })
}

/// `infrastructure.cluster.x-k8s.io/v1beta1 OpenStackClusterTemplate`.
pub fn openstack_cluster_template(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "OpenStackClusterTemplate",
        "metadata": metadata(name, namespace),
        "spec": {"template": {"spec": {
            "identityRef": identity_ref(),
            "managedSecurityGroups": {
                "allNodesSecurityGroupRules": [
                    node_port_rule("udp", "UDP"),
                    node_port_rule("tcp", "TCP"),
                ],
                "allowAllInClusterTraffic": true,
            },
        }}},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
            ("PLACEHOLDER", "UExBQ0VIT0xERVI="),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x3f]), "//4/");
    }

    #[test]
    fn node_files_are_the_upstream_ones() {
        assert!(AUDIT_POLICY.starts_with("apiVersion: audit.k8s.io/v1\nkind: Policy\n"));
        assert!(AUDIT_POLICY
            .ends_with("  - level: Metadata\n    omitStages:\n      - \"RequestReceived\"\n"));
        assert!(CONFIGURE_KUBE_PROXY.contains("metricsBindAddress: \"0.0.0.0:10249\""));
        let webhook = keystone_webhook_kubeconfig();
        assert_eq!(webhook.matches("\r\n").count(), 17);
        assert!(webhook.contains("server: https://127.0.0.1:8443/webhook\r\n"));
    }

    #[test]
    fn templates_carry_the_placeholders_the_patches_replace() {
        let osmt = openstack_machine_template("n", "ns");
        let spec = &osmt["spec"]["template"]["spec"];
        assert_eq!(spec["flavor"], PLACEHOLDER);
        assert_eq!(spec["identityRef"]["name"], PLACEHOLDER);
        let osct = openstack_cluster_template("n", "ns");
        assert_eq!(
            osct["spec"]["template"]["spec"]["identityRef"]["cloudName"],
            "default"
        );
        let kcpt = kubeadm_control_plane_template("n", "ns");
        let kcs = &kcpt["spec"]["template"]["spec"]["kubeadmConfigSpec"];
        assert_eq!(kcs["format"], "cloud-config");
        assert_eq!(kcs["files"].as_array().map(Vec::len), Some(3));
    }
}
