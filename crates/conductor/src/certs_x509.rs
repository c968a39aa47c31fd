//! [`ClusterCertificates`] over the `x509keypair` cert manager of `openkeel-certs`
//! (`[certificates] cert_manager_type = x509keypair`, `magnum/conductor/handlers/common/cert_manager.py`,
//! `magnum/common/cert_manager/x509keypair_cert_manager.py`).
//!
//! Unlike Magnum, deleting a cluster's certificates removes all four rows (Magnum leaves the
//! etcd and front-proxy CAs behind), and a failed generation removes the rows it stored.

use async_trait::async_trait;
use openkeel_certs::X509KeyPairCertManager;
use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::Cluster;

use crate::certificates::{CertificateRefs, ClusterCertificates};

/// The conductor's certificate seam backed by the Magnum DB (`x509keypair` table).
#[derive(Debug, Clone)]
pub struct X509KeyPairCertificates {
    manager: X509KeyPairCertManager,
}

impl X509KeyPairCertificates {
    pub fn new(manager: X509KeyPairCertManager) -> Self {
        X509KeyPairCertificates { manager }
    }

    pub fn manager(&self) -> &X509KeyPairCertManager {
        &self.manager
    }
}

#[async_trait]
impl ClusterCertificates for X509KeyPairCertificates {
    async fn generate_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<CertificateRefs, MagnumError> {
        let refs = self
            .manager
            .generate_certificates_to_cluster(ctx, cluster)
            .await?;
        Ok(CertificateRefs {
            ca_cert_ref: refs.ca_cert_ref,
            magnum_cert_ref: refs.magnum_cert_ref,
            etcd_ca_cert_ref: refs.etcd_ca_cert_ref,
            front_proxy_ca_cert_ref: refs.front_proxy_ca_cert_ref,
        })
    }

    async fn delete_certificates(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> Result<(), MagnumError> {
        self.manager
            .delete_certificates_from_cluster(ctx, cluster)
            .await
            .map_err(MagnumError::from)
    }

    async fn ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        ca_cert_type: Option<&str>,
    ) -> Result<String, MagnumError> {
        Ok(self
            .manager
            .get_cluster_ca_certificate(ctx, cluster, ca_cert_type)
            .await?
            .certificate)
    }

    async fn sign(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        csr: &str,
        ca_cert_type: Option<&str>,
    ) -> Result<String, MagnumError> {
        Ok(self
            .manager
            .sign_node_certificate(ctx, cluster, csr, ca_cert_type)
            .await?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use openkeel_core::config::X509Section;
    use openkeel_db::{x509keypair, Database, Scope};

    async fn rows(db: &Database) -> usize {
        x509keypair::list(
            db,
            &Scope::admin_all_tenants(),
            &Default::default(),
            &Default::default(),
        )
        .await
        .unwrap()
        .len()
    }

    #[tokio::test]
    async fn generate_stores_four_rows_and_delete_removes_all_four() {
        let db = Database::in_memory().await.unwrap();
        openkeel_db::manage::upgrade(&db).await.unwrap();
        let certs = X509KeyPairCertificates::new(X509KeyPairCertManager::new(
            db.clone(),
            X509Section::default(),
        ));
        let ctx = RequestContext {
            project_id: Some("p1".to_string()),
            user_id: Some("u1".to_string()),
            ..RequestContext::default()
        };
        let mut cluster = Cluster {
            uuid: Some("0b7a1f2e-3c4d-4e5f-8a9b-0c1d2e3f4a5b".to_string()),
            name: Some("k8s".to_string()),
            ..Cluster::default()
        };
        let refs = certs.generate_certificates(&ctx, &cluster).await.unwrap();
        assert_eq!(rows(&db).await, 4);
        cluster.ca_cert_ref = Some(refs.ca_cert_ref);
        cluster.magnum_cert_ref = Some(refs.magnum_cert_ref);
        cluster.etcd_ca_cert_ref = Some(refs.etcd_ca_cert_ref);
        cluster.front_proxy_ca_cert_ref = Some(refs.front_proxy_ca_cert_ref);
        // The periodic task deletes with the admin all-tenants context.
        certs
            .delete_certificates(&crate::admin_context(), &cluster)
            .await
            .unwrap();
        assert_eq!(rows(&db).await, 0);
    }
}
