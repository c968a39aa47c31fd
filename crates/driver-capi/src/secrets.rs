//! The Secrets magnum-cluster-api writes for a cluster's credentials
//! (`magnum_cluster_api/resources.py`): `<stack_id>-cloud-config` (CAPO's identity, from the
//! cluster's Keystone application credential) and the four CA Secrets `-ca`, `-etcd`,
//! `-proxy`, `-sa` that kubeadm uses instead of generating its own.

use serde_json::{json, Value};

use crate::status::CLUSTER_UUID_LABEL;
use crate::NAMESPACE;

/// `get_cluster_api_cloud_config_secret_name`.
pub fn cloud_config_secret_name(stack_id: &str) -> String {
    format!("{stack_id}-cloud-config")
}

/// Standard base64 with padding (`oslo_serialization.base64.encode_as_text`, cloud-init's
/// `encoding: base64`).
pub fn base64(data: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(data)
}

/// The application credential and cloud facts `<stack_id>-cloud-config` is made of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CloudCredentials {
    pub application_credential_id: String,
    pub application_credential_secret: String,
    /// The identity endpoint of the `[capi_client] endpoint_type` interface.
    pub auth_url: String,
    /// `[cinder_client] region_name` (None prints as `null`).
    pub region_name: Option<String>,
    /// `[capi_client] endpoint_type` (e.g. `publicURL`).
    pub endpoint_type: String,
    /// `[capi_client] insecure`.
    pub insecure: bool,
    /// The `cacert` key: `[capi_client] ca_file`'s contents, else the trusted roots bundle.
    pub cacert: String,
}

impl CloudCredentials {
    /// The `clouds.yaml` text (keys sorted, as PyYAML's `yaml.dump` writes them).
    pub fn clouds_yaml(&self) -> String {
        let doc = json!({"clouds": {"default": {
            "auth": {
                "application_credential_id": self.application_credential_id,
                "application_credential_secret": self.application_credential_secret,
                "auth_url": self.auth_url,
            },
            "endpoint_type": self.endpoint_type.replace("URL", ""),
            "identity_api_version": 3,
            "region_name": self.region_name,
            "verify": !self.insecure,
        }}});
        serde_yaml::to_string(&doc).unwrap_or_default()
    }
}

/// `Secret <stack_id>-cloud-config` (`CloudConfigSecret`).
pub fn cloud_config_secret(cluster_uuid: &str, stack_id: &str, creds: &CloudCredentials) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": cloud_config_secret_name(stack_id),
            "namespace": NAMESPACE,
            "labels": {CLUSTER_UUID_LABEL: cluster_uuid},
        },
        "stringData": {
            "cacert": creds.cacert,
            "clouds.yaml": creds.clouds_yaml(),
        },
    })
}

/// One of the cluster's certificate authorities (PEM), its key already decrypted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CertPair {
    pub cert_pem: String,
    pub key_pem: String,
}

/// The four CAs: Magnum's `ca_cert_ref` (kubernetes), `etcd_ca_cert_ref`,
/// `front_proxy_ca_cert_ref` and `magnum_cert_ref` (the service-account key pair).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClusterCas {
    pub kubernetes: CertPair,
    pub etcd: CertPair,
    pub front_proxy: CertPair,
    pub service_account: CertPair,
}

/// `Secret <stack_id>-{ca,etcd,proxy,sa}` (`CertificateAuthoritySecret`), in that order.
pub fn ca_secrets(stack_id: &str, cas: &ClusterCas) -> Vec<Value> {
    [
        ("ca", &cas.kubernetes),
        ("etcd", &cas.etcd),
        ("proxy", &cas.front_proxy),
        ("sa", &cas.service_account),
    ]
    .iter()
    .map(|(suffix, pair)| {
        json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "cluster.x-k8s.io/secret",
            "metadata": {
                "name": format!("{stack_id}-{suffix}"),
                "namespace": NAMESPACE,
                "labels": {"cluster.x-k8s.io/cluster-name": stack_id},
            },
            "stringData": {"tls.crt": pair.cert_pem, "tls.key": pair.key_pem},
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_python() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foob"), "Zm9vYg==");
    }

    #[test]
    fn ca_secret_names_and_type() {
        let s = ca_secrets("kube-abcde", &ClusterCas::default());
        let names: Vec<_> = s.iter().map(|o| o["metadata"]["name"].clone()).collect();
        assert_eq!(
            names,
            vec![
                json!("kube-abcde-ca"),
                json!("kube-abcde-etcd"),
                json!("kube-abcde-proxy"),
                json!("kube-abcde-sa")
            ]
        );
        assert_eq!(s[0]["type"], "cluster.x-k8s.io/secret");
    }
}
