//! The certificate seam of the cluster handlers (`generate_certificates_to_cluster` in
//! `magnum/conductor/handlers/common/cert_manager.py`, called by `cluster_create`).
//!
//! Magnum's `cluster_create` generates and stores four certificates and records their refs on
//! the cluster (`ca_cert_ref`, `magnum_cert_ref`, `etcd_ca_cert_ref`,
//! `front_proxy_ca_cert_ref`); the status sync deletes the kubernetes CA and the client
//! certificate when a cluster is gone. Certificate generation belongs to `openkeel-certs`
//! ([`crate::certs_x509::X509KeyPairCertificates`] over the `x509keypair` table): without a
//! [`ClusterCertificates`] passed to [`crate::Conductor::with_certificates`], no certificate is
//! generated, **the four cert refs stay NULL** and the certificate RPCs fail with
//! `CertificatesToClusterFailed`-like errors naming the missing backend.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::Cluster;

/// The refs of a freshly generated certificate set (in the configured cert backend).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateRefs {
    pub ca_cert_ref: String,
    pub magnum_cert_ref: String,
    pub etcd_ca_cert_ref: String,
    pub front_proxy_ca_cert_ref: String,
}

/// Magnum's `cert_manager.generate_certificates_to_cluster` and
/// `delete_certificates_from_cluster`.
#[async_trait]
pub trait ClusterCertificates: Send + Sync {
    /// Generate and store the cluster's CAs and client certificate. Any error makes the
    /// conductor fail the create with `CertificatesToClusterFailed`.
    async fn generate_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<CertificateRefs, MagnumError>;

    /// Delete the certificates referenced by `ca_cert_ref` and `magnum_cert_ref` (Magnum leaves
    /// the etcd and front-proxy CAs). Errors are only logged by the conductor.
    async fn delete_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<(), MagnumError>;

    /// `get_cluster_ca_certificate(cluster, ca_cert_type)`: the CA's PEM (`etcd`,
    /// `front_proxy` / `front-proxy`, anything else the kubernetes CA).
    async fn ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        ca_cert_type: Option<&str>,
    ) -> Result<String, MagnumError>;

    /// `sign_node_certificate(cluster, csr, ca_cert_type)`: the signed certificate's PEM.
    async fn sign(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        csr: &str,
        ca_cert_type: Option<&str>,
    ) -> Result<String, MagnumError>;
}
