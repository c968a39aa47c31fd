//! `magnum.objects.Certificate` (1.2): not persisted; the argument and result of the
//! certificate RPCs (`sign_certificate`, `get_ca_certificate`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Certificate {
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub cluster_uuid: Option<String>,
    /// PEM of the certificate signing request (`sign_certificate` input).
    pub csr: Option<String>,
    /// PEM of the signed certificate or of the CA (`sign_certificate` / `get_ca_certificate`).
    pub pem: Option<String>,
    /// `None` / anything else = the kubernetes CA, `etcd`, `front_proxy` or `front-proxy`.
    pub ca_cert_type: Option<String>,
}
