//! [`ClusterCaSource`] over the configured cert manager: what the Cluster API driver writes
//! into the management cluster's `<stack_id>-ca`, `-etcd`, `-proxy` and `-sa` Secrets
//! (magnum-cluster-api's `CertificateAuthoritySecret`, `magnum_cluster_api/resources.py`): each
//! certificate with its private key **decrypted** with the passphrase Magnum stored.
//!
//! It lives here rather than in the conductor or the CLI because it is the cert manager's
//! own knowledge (refs, backends, key encryption); `openkeel-drivers` depends only on
//! `openkeel-core`, so `openkeel-certs → openkeel-drivers` makes no cycle.
//!
//! Errors: a missing ref or certificate is permanent (magnum-cluster-api raises a plain
//! `Exception`); the database or Barbican being unreachable is transient.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;
use openkeel_drivers::deps::{ClusterCaSource, ClusterCas, KeyPairPem};
use openkeel_drivers::{DriverError, DriverResult};

use crate::manager::X509KeyPairCertManager;
use crate::CertError;

/// A cert-manager failure as a driver error.
fn driver_error(what: &str, e: CertError) -> DriverError {
    let transient = match &e {
        CertError::Db(db) => db.is_connection_error(),
        // Barbican could not be reached or answered an error other than 404.
        CertError::Barbican(_) => true,
        _ => false,
    };
    let message = format!("Cannot read the cluster's {what}: {e}");
    if transient {
        DriverError::transient(message)
    } else {
        DriverError::permanent_message(message)
    }
}

impl X509KeyPairCertManager {
    /// The certificate `cert_ref` (named `field` in errors) with its key decrypted.
    async fn key_pair_pem(
        &self,
        ctx: &RequestContext,
        cert_ref: Option<&str>,
        field: &str,
    ) -> DriverResult<KeyPairPem> {
        let cert_ref = cert_ref.filter(|r| !r.is_empty()).ok_or_else(|| {
            DriverError::permanent_message(format!("The cluster has no {field}."))
        })?;
        let cert = self
            .get_cert(ctx, cert_ref)
            .await
            .map_err(|e| driver_error(field, e))?;
        let private_key = cert
            .decrypted_private_key()
            .map_err(|e| driver_error(field, e))?;
        Ok(KeyPairPem {
            certificate: cert.certificate,
            private_key,
        })
    }
}

#[async_trait]
impl ClusterCaSource for X509KeyPairCertManager {
    async fn cluster_cas(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> DriverResult<ClusterCas> {
        Ok(ClusterCas {
            kubernetes: self
                .key_pair_pem(ctx, cluster.ca_cert_ref.as_deref(), "ca_cert_ref")
                .await?,
            etcd: self
                .key_pair_pem(ctx, cluster.etcd_ca_cert_ref.as_deref(), "etcd_ca_cert_ref")
                .await?,
            front_proxy: self
                .key_pair_pem(
                    ctx,
                    cluster.front_proxy_ca_cert_ref.as_deref(),
                    "front_proxy_ca_cert_ref",
                )
                .await?,
            service_account: self
                .key_pair_pem(ctx, cluster.magnum_cert_ref.as_deref(), "magnum_cert_ref")
                .await?,
        })
    }
}
