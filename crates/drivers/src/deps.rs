//! What a driver is given when it is built, besides its own configuration: access to a
//! cluster's certificates through the configured cert manager, Keystone application
//! credentials, and the OpenStack look-ups and resources a driver needs. The process that builds the registry (`openkeel::wiring::driver_registry`)
//! implements these over `openkeel-certs` and `openkeel-cloud`; tests give stand-ins.
//!
//! A driver that talks to a management cluster builds that client itself from its option
//! group (`[capi_client]`), so that the dependency on `kube` stays in that driver's crate.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use openkeel_core::cloud::{Flavor, Image, NamedResource};
use openkeel_core::context::RequestContext;
use openkeel_core::objects::Cluster;

use crate::DriverResult;

/// A certificate and its private key, PEM, the key decrypted (it goes into a Kubernetes Secret
/// of the management cluster, as magnum-cluster-api writes it). `Debug` never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPairPem {
    pub certificate: String,
    pub private_key: String,
}

impl fmt::Debug for KeyPairPem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyPairPem")
            .field(
                "certificate",
                &format_args!("{} bytes", self.certificate.len()),
            )
            .field("private_key", &"<redacted>")
            .finish()
    }
}

/// A cluster's CAs as the cert manager stores them (`ca_cert_ref`, `etcd_ca_cert_ref`,
/// `front_proxy_ca_cert_ref`) and Magnum's client certificate (`magnum_cert_ref`), which
/// magnum-cluster-api uses as the service-account key pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterCas {
    pub kubernetes: KeyPairPem,
    pub etcd: KeyPairPem,
    pub front_proxy: KeyPairPem,
    pub service_account: KeyPairPem,
}

/// Reads a cluster's certificates through the configured cert manager.
#[async_trait]
pub trait ClusterCaSource: Send + Sync {
    async fn cluster_cas(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> DriverResult<ClusterCas>;
}

/// A Keystone application credential and where to use it. `Debug` never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ApplicationCredential {
    pub id: String,
    pub secret: String,
    /// The identity endpoint for the configured interface (`[capi_client] endpoint_type`).
    pub auth_url: String,
    /// The region (`[cinder_client] region_name` in magnum-cluster-api), if configured.
    pub region_name: Option<String>,
}

impl fmt::Debug for ApplicationCredential {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ApplicationCredential")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .field("auth_url", &self.auth_url)
            .field("region_name", &self.region_name)
            .finish()
    }
}

/// Keystone application credentials for a cluster's cloud provider (CAPO, the CCM, CSI).
///
/// A cluster's credentials are named after its uuid: the first one (made at create) is named
/// the uuid itself, as magnum-cluster-api names it; a rotation's is `<uuid>-<suffix>`
/// ([`rotated_credential_name`]), because Keystone wants a user's credential names unique and
/// the old one must live until the new one is in use.
#[async_trait]
pub trait ApplicationCredentials: Send + Sync {
    /// Create one named after the cluster's uuid, owned by the requesting user (the token in
    /// `ctx`), with the token's roles and no expiry (magnum-cluster-api's `clients.py`).
    async fn create(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
    ) -> DriverResult<ApplicationCredential>;

    /// As [`ApplicationCredentials::create`], named `name` (a rotation's
    /// `<uuid>-<suffix>`).
    async fn create_named(
        &self,
        ctx: &RequestContext,
        cluster: &Cluster,
        name: &str,
    ) -> DriverResult<ApplicationCredential>;

    /// Delete the cluster's credentials, owned by `user_id`, with the service's own
    /// credentials: the one named `name` (the cluster uuid) and every `<name>-…` a rotation
    /// made (the current one and any left by an interrupted rotation). Already gone is
    /// success.
    async fn delete(&self, user_id: &str, name: &str) -> DriverResult<()>;

    /// Delete the credential `id` of `user_id` with the service's own credentials. Already
    /// gone is success; a refusal is an error.
    async fn delete_id(&self, user_id: &str, id: &str) -> DriverResult<()>;
}

/// The name of a rotation's credential for cluster `uuid`: `<uuid>-<suffix>`, the suffix 8
/// random hex digits (Keystone wants a user's credential names unique).
pub fn rotated_credential_name(uuid: &str, suffix: &str) -> String {
    format!("{uuid}-{suffix}")
}

/// Whether credential `name` belongs to cluster `uuid`: the uuid itself (the first credential,
/// magnum-cluster-api's name) or `<uuid>-…` (a rotation's).
pub fn is_cluster_credential(name: &str, uuid: &str) -> bool {
    !uuid.is_empty()
        && (name == uuid
            || name
                .strip_prefix(uuid)
                .is_some_and(|rest| rest.starts_with('-')))
}

/// The OpenStack look-ups and the few resources a driver manages itself (magnum-cluster-api:
/// Nova flavors and server groups, the Glance image, Cinder's default volume type, Neutron
/// networks and subnets), each made with the caller's context (its token, or the service's
/// credentials for the periodic tasks' admin context). Not found is a permanent error with
/// Magnum's message; an unreachable service or a timeout is transient.
#[async_trait]
pub trait DriverCloud: Send + Sync {
    /// A Nova flavor by name or id.
    async fn flavor(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Flavor>;
    /// A Glance image by id or unique name.
    async fn image(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<Image>;
    /// A Neutron network by name or id (`external`: among the external networks).
    async fn network(
        &self,
        ctx: &RequestContext,
        name_or_id: &str,
        external: bool,
    ) -> DriverResult<NamedResource>;
    /// A Neutron subnet by name or id.
    async fn subnet(&self, ctx: &RequestContext, name_or_id: &str) -> DriverResult<NamedResource>;
    /// The name of Cinder's default volume type.
    async fn default_volume_type(&self, ctx: &RequestContext) -> DriverResult<String>;
    /// The names of Cinder's volume types, in Cinder's order, or `None` when the catalogue
    /// has no block-storage service (`volumev3` or `block-storage`).
    async fn volume_types(&self, ctx: &RequestContext) -> DriverResult<Option<Vec<String>>>;
    /// The id of the Nova server group `name` in the caller's project, created with `policy`
    /// (e.g. `soft-anti-affinity`) when there is none.
    async fn ensure_server_group(
        &self,
        ctx: &RequestContext,
        name: &str,
        policy: &str,
    ) -> DriverResult<String>;
    /// Delete the Nova server groups named `name` of the cluster's project (none is success).
    async fn delete_server_group(&self, ctx: &RequestContext, name: &str) -> DriverResult<()>;
    /// Before a cluster is deleted: delete (cascade) the Octavia load balancers its cloud
    /// controller manager made (description `Kubernetes … from cluster <uuid>`) and their
    /// floating IPs, and wait up to `timeout` for them to be gone (Magnum's
    /// `delete_loadbalancers`). No load-balancer service in the catalogue: nothing to do.
    /// Failures are `PreDeletionFailed`.
    async fn delete_cluster_load_balancers(
        &self,
        ctx: &RequestContext,
        cluster_uuid: &str,
        timeout: std::time::Duration,
    ) -> DriverResult<()>;
}

/// Everything a driver may be given when the registry is built.
#[derive(Clone, Default)]
pub struct DriverDeps {
    pub certificates: Option<Arc<dyn ClusterCaSource>>,
    pub application_credentials: Option<Arc<dyn ApplicationCredentials>>,
    pub cloud: Option<Arc<dyn DriverCloud>>,
}

impl fmt::Debug for DriverDeps {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DriverDeps")
            .field("certificates", &self.certificates.is_some())
            .field(
                "application_credentials",
                &self.application_credentials.is_some(),
            )
            .field("cloud", &self.cloud.is_some())
            .finish()
    }
}
