//! `ca_conductor.Handler` and `credential_conductor.Handler`
//! (`magnum/conductor/handlers/ca_conductor.py`, `credential_conductor.py`).

use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Certificate, Cluster, ClusterStatus};
use openkeel_db::Scope;
use openkeel_drivers::DriverContext;
use openkeel_rpc::Obj;

use super::{not_supported, resizable, status_text, updatable};
use crate::certificates::{CertificateRefs, ClusterCertificates};
use crate::notify::{Action, Outcome};
use crate::save::{save_cluster, set_cluster_reason, set_cluster_status};
use crate::Conductor;

impl Conductor {
    fn cert_backend(&self) -> Result<&dyn ClusterCertificates, MagnumError> {
        self.certificates.as_deref().ok_or_else(|| {
            MagnumError::internal("no certificate manager is configured for this conductor")
        })
    }

    /// `sign_certificate`: sign `certificate.csr` with the cluster's CA of
    /// `certificate.ca_cert_type` (unset → kubernetes); the certificate comes back with `pem`.
    pub async fn handle_sign_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        certificate: Obj<Certificate>,
    ) -> Result<Certificate, MagnumError> {
        let mut cert = certificate.data;
        let csr = cert.csr.clone().unwrap_or_default();
        let pem = self
            .cert_backend()?
            .sign(ctx, cluster, &csr, cert.ca_cert_type.as_deref())
            .await?;
        cert.pem = Some(pem);
        Ok(cert)
    }

    /// `get_ca_certificate`.
    pub async fn handle_get_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        ca_cert_type: Option<&str>,
    ) -> Result<Certificate, MagnumError> {
        let pem = self
            .cert_backend()?
            .ca_certificate(ctx, cluster, ca_cert_type)
            .await?;
        Ok(Certificate {
            project_id: cluster.project_id.clone(),
            user_id: cluster.user_id.clone(),
            cluster_uuid: cluster.uuid.clone(),
            pem: Some(pem),
            ..Certificate::default()
        })
    }

    /// `rotate_ca_certificate`, done safely: new CAs and client certificate are
    /// generated and handed to the driver; only when the driver accepted them are the refs
    /// saved and the old certificates deleted. A refusal or failure deletes the new
    /// certificates and leaves the cluster on its old CA (Magnum saves the new refs anyway
    /// and never deletes the old ones); the cluster goes to UPDATE_FAILED as in Magnum.
    pub async fn handle_rotate_ca_certificate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<Cluster, MagnumError> {
        let mut c = cluster;
        if !updatable(c.data.status) {
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                .await;
            return Err(not_supported(&format!(
                "Updating a cluster when status is \"{}\"",
                status_text(c.data.status)
            )));
        }
        let backend = self.cert_backend()?;
        let scope = Scope::from(ctx);
        let old = c.data.clone();
        let result = async {
            let (template, driver) = self.driver_of(&scope, &c.data).await?;
            let new = backend.generate_certificates(ctx, &c.data).await?;
            let mut candidate = c.data.clone();
            set_refs(&mut candidate, &new);
            let ngs = self.nodegroups_of(&scope, &candidate).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            match self
                .bounded(
                    driver.name(),
                    "rotate_ca_certificate",
                    driver.rotate_ca_certificate(&dctx, &mut candidate),
                )
                .await
            {
                Ok(writes) => Ok((new, writes)),
                Err(e) => {
                    // the driver may have changed its copy: delete exactly the new refs
                    set_refs(&mut candidate, &new);
                    delete_all_or_log(backend, ctx, &candidate).await;
                    Err::<_, MagnumError>(e.into())
                }
            }
        }
        .await;
        match result {
            Ok((new, writes)) => {
                crate::save::apply_writes(
                    &self.db,
                    c.data.uuid.as_deref().unwrap_or_default(),
                    &writes,
                )
                .await?;
                for field in [
                    "ca_cert_ref",
                    "magnum_cert_ref",
                    "etcd_ca_cert_ref",
                    "front_proxy_ca_cert_ref",
                ] {
                    c.touch(field);
                }
                set_refs(&mut c.data, &new);
                set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
                set_cluster_reason(&mut c, None);
                save_cluster(&self.db, &mut c).await?;
                // The cluster now uses the new CA: the old certificates can go.
                delete_all_or_log(backend, ctx, &old).await;
                Ok(c.data)
            }
            // A driver that cannot rotate a CA (the Cluster API driver: Cluster API has no CA
            // rotation, kubernetes-sigs/cluster-api#7721) refuses before it touches anything:
            // the cluster keeps its CA and its status. Magnum marks it UPDATE_FAILED although
            // nothing happened to it (docs/differences.md).
            Err(e) if e.kind() == ErrorKind::NotSupported => {
                self.notifier
                    .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                    .await;
                Err(e)
            }
            Err(e) => {
                set_cluster_status(&mut c, ClusterStatus::UpdateFailed);
                set_cluster_reason(&mut c, Some(e.message().to_string()));
                self.save_or_log(&mut c).await;
                self.notifier
                    .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                    .await;
                Err(e)
            }
        }
    }

    /// `credential_rotate`: status guard, then the driver; no status change.
    pub async fn handle_credential_rotate(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
    ) -> Result<(), MagnumError> {
        let mut c = cluster.data;
        if !resizable(c.status) {
            return Err(not_supported(&format!(
                "magnum.conductor.handlers.credential_conductor when cluster status is \"{}\"",
                status_text(c.status)
            )));
        }
        let scope = Scope::from(ctx);
        let (template, driver) = self.driver_of(&scope, &c).await?;
        let ngs = self.nodegroups_of(&scope, &c).await?;
        let dctx = DriverContext {
            request: ctx,
            template: &template,
            nodegroups: &ngs,
        };
        let writes = self
            .bounded(
                driver.name(),
                "rotate_credential",
                driver.rotate_credential(&dctx, &mut c),
            )
            .await?;
        crate::save::apply_writes(&self.db, c.uuid.as_deref().unwrap_or_default(), &writes).await?;
        Ok(())
    }
}

fn set_refs(c: &mut Cluster, refs: &CertificateRefs) {
    c.ca_cert_ref = Some(refs.ca_cert_ref.clone());
    c.magnum_cert_ref = Some(refs.magnum_cert_ref.clone());
    c.etcd_ca_cert_ref = Some(refs.etcd_ca_cert_ref.clone());
    c.front_proxy_ca_cert_ref = Some(refs.front_proxy_ca_cert_ref.clone());
}

async fn delete_all_or_log(backend: &dyn ClusterCertificates, ctx: &RequestContext, c: &Cluster) {
    if let Err(e) = backend.delete_certificates(ctx, c).await {
        tracing::warn!(cluster = c.uuid.as_deref().unwrap_or_default(), error = %e, "could not delete certificates");
    }
}
