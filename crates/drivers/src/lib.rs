//! openkeel-drivers: the cluster driver interface, the registry that selects a driver for a
//! cluster template, and the built-in drivers.
//!
//! * [`Driver`] mirrors Magnum's `magnum/drivers/common/driver.py` (`Driver`): the same
//!   operations with the same arguments and defaults. Drivers never touch the database: they
//!   change the objects they are handed (the conductor saves them exactly where Magnum's
//!   conductor calls `save()`), and whatever else a Magnum driver would save or destroy itself
//!   is returned as [`Writes`] for the conductor to apply.
//! * [`DriverRegistry`] reproduces Magnum 23.0.0's selection rules (template `driver` field,
//!   `(server_type, os, coe)` tuples, `[drivers] disabled_drivers`, beta drivers) and error
//!   messages.
//! * [`simulator::SimulatorDriver`]: the embedded default's driver, which provisions nothing.

pub mod deps;
pub mod registry;
pub mod simulator;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterHealthStatus, ClusterStatus, ClusterTemplate, Federation, NodeGroup, StringMap,
};

pub use deps::DriverDeps;
pub use registry::{DriverRegistry, DriverSettings};

/// One `(server_type, os, coe)` tuple of a driver's `provides` list
/// (`{'server_type': ..., 'os': ..., 'coe': ...}` in Magnum). `os` is matched against the
/// template's `cluster_distro`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProvidedType {
    pub server_type: String,
    pub os: String,
    pub coe: String,
}

impl ProvidedType {
    pub fn new(server_type: &str, os: &str, coe: &str) -> Self {
        ProvidedType {
            server_type: server_type.to_string(),
            os: os.to_string(),
            coe: coe.to_string(),
        }
    }
}

impl fmt::Display for ProvidedType {
    /// Python's `'(%s, %s, %s)' % cluster_type`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {}, {})", self.server_type, self.os, self.coe)
    }
}

/// What a driver call can see besides the objects it may change: the caller's request context,
/// the cluster's (current) template — Magnum's lazily loaded `cluster.cluster_template` — and
/// the cluster's nodegroups as stored (`cluster.nodegroups`, id order).
#[derive(Debug, Clone, Copy)]
pub struct DriverContext<'a> {
    pub request: &'a RequestContext,
    pub template: &'a ClusterTemplate,
    pub nodegroups: &'a [NodeGroup],
}

/// Database writes a driver asks for, beyond the objects the conductor saves itself. They
/// stand for the `nodegroup.save()` / `nodegroup.destroy()` calls a Magnum driver makes.
///
/// The conductor applies them right after the driver call returns successfully: for each
/// nodegroup in `nodegroups` (found by `uuid` within the cluster) the fields whose values
/// differ from the stored row are written; the nodegroups in `destroy_nodegroups` (uuids) are
/// deleted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Writes {
    pub nodegroups: Vec<NodeGroup>,
    pub destroy_nodegroups: Vec<String>,
}

impl Writes {
    pub fn none() -> Self {
        Writes::default()
    }

    pub fn is_empty(&self) -> bool {
        self.nodegroups.is_empty() && self.destroy_nodegroups.is_empty()
    }
}

/// A driver call's failure, typed by what the conductor should do with it.
///
/// * **Transient**: the management cluster or a cloud API could not be reached, answered a
///   conflict (409) or a throttle (429), or the call timed out. The operation did not happen
///   or may be retried as it is: the status sync leaves the cluster unchanged and tries again
///   on its next tick (the error is counted and logged); an operation
///   handler fails the operation with the text, as Magnum does with any exception.
/// * **Permanent**: the request cannot succeed as it is (an invalid object, a failed control
///   plane, an expired deadline): its message becomes the `status_reason` of `*_FAILED`, in
///   the status sync too.
///
/// A [`MagnumError`] converts into a permanent error, so `?` works inside drivers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverError {
    transient: bool,
    error: MagnumError,
}

impl DriverError {
    /// A transient failure with `message` (an `InternalError`-class error when it reaches a
    /// caller).
    pub fn transient(message: impl Into<String>) -> Self {
        DriverError {
            transient: true,
            error: MagnumError::internal(message.into()),
        }
    }

    /// A permanent failure.
    pub fn permanent(error: MagnumError) -> Self {
        DriverError {
            transient: false,
            error,
        }
    }

    /// A permanent failure with `message` (Magnum's generic `MagnumException` text rules).
    pub fn permanent_message(message: impl Into<String>) -> Self {
        DriverError::permanent(MagnumError::internal(message.into()))
    }

    /// The conductor's own bound on a driver call ran out (transient).
    pub fn timed_out(method: &str, limit: std::time::Duration) -> Self {
        DriverError::transient(format!(
            "The driver's {method} did not answer within {} s.",
            limit.as_secs_f64()
        ))
    }

    pub fn is_transient(&self) -> bool {
        self.transient
    }

    /// The text that becomes `status_reason`.
    pub fn message(&self) -> &str {
        self.error.message()
    }

    /// The Magnum exception this failure is reported as.
    pub fn error(&self) -> &MagnumError {
        &self.error
    }

    pub fn into_error(self) -> MagnumError {
        self.error
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.transient {
            "transient"
        } else {
            "permanent"
        };
        write!(f, "{kind}: {}", self.error.message())
    }
}

impl std::error::Error for DriverError {}

impl From<MagnumError> for DriverError {
    fn from(error: MagnumError) -> Self {
        DriverError::permanent(error)
    }
}

impl From<DriverError> for MagnumError {
    fn from(e: DriverError) -> Self {
        e.error
    }
}

/// A new status with its reason (`None` clears `status_reason`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusChange {
    pub status: ClusterStatus,
    pub reason: Option<String>,
}

/// What the driver observed about one nodegroup (found by `uuid` within the cluster). Every
/// `Some` field is written when it differs from the stored row; `None` leaves it alone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeGroupReport {
    pub uuid: String,
    pub status: Option<StatusChange>,
    pub node_count: Option<i32>,
    pub node_addresses: Option<Vec<String>>,
}

impl NodeGroupReport {
    pub fn new(uuid: impl Into<String>) -> Self {
        NodeGroupReport {
            uuid: uuid.into(),
            ..NodeGroupReport::default()
        }
    }
}

/// The answer of [`Driver::update_cluster_status`] (the periodic status sync): what the
/// driver observed, field by field. `None` / empty means "unchanged"; the conductor writes
/// only what differs from the row it holds under the cluster's operation lock. A cluster
/// reported `DELETE_COMPLETE` is not written: the conductor removes it with its nodegroups and
/// certificates (Magnum's deletion cascade). A master nodegroup's `node_addresses` are the
/// cluster's master addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StatusReport {
    pub status: Option<StatusChange>,
    pub api_address: Option<String>,
    pub coe_version: Option<String>,
    pub nodegroups: Vec<NodeGroupReport>,
    /// Nodegroups (uuids) whose infrastructure is gone: their rows are removed.
    pub destroy_nodegroups: Vec<String>,
}

impl StatusReport {
    /// No change this round.
    pub fn unchanged() -> Self {
        StatusReport::default()
    }

    pub fn is_unchanged(&self) -> bool {
        *self == StatusReport::default()
    }
}

/// The result type of driver calls.
pub type DriverResult<T> = Result<T, DriverError>;

/// The result of a health poll (Magnum's `monitor.data['health_status']` and
/// `['health_status_reason']`). The conductor writes them only when `health_status` is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthReport {
    pub health_status: Option<ClusterHealthStatus>,
    pub health_status_reason: Option<StringMap>,
    /// Nodegroups whose `node_count` the monitor saw change (the autoscaler's doing); only
    /// `node_count` of each is written.
    pub nodegroups: Vec<NodeGroupReport>,
}

/// Magnum's scale manager (`magnum/conductor/scale_manager.py`): decides which hosts to remove
/// when a nodegroup shrinks. Passed to [`Driver::update_cluster`] and
/// [`Driver::resize_cluster`].
#[async_trait]
pub trait ScaleManager: Send + Sync {
    /// The hosts to remove when `nodegroup` goes from its current node count to
    /// `new_node_count`.
    async fn get_removal_nodes(
        &self,
        cluster: &Cluster,
        nodegroup: &NodeGroup,
        new_node_count: i32,
    ) -> Result<Vec<String>, MagnumError>;
}

/// A cluster driver: Magnum's `magnum.drivers.common.driver.Driver`.
///
/// Every operation gets the objects Magnum's conductor passes (mutable where a Magnum driver
/// may change them; the conductor saves them afterwards, success or failure, exactly as
/// Magnum does) and returns the extra [`Writes`] the driver would have saved itself. An `Err`
/// is the exception Magnum's conductor catches: its message becomes `status_reason`; whether
/// it is [transient or permanent](DriverError) decides what the status sync does with it.
///
/// The conductor bounds every call (`[openkeel] driver_call_timeout`): a driver need not time
/// out its own requests to stay within the cluster's operation lock, but should give each
/// outbound request its own, shorter timeout so that the error names what hung.
///
/// What a driver needs besides the objects (the management cluster's client, the cluster's
/// certificates, Keystone) is given to it when it is built: see [`deps`].
#[async_trait]
pub trait Driver: Send + Sync {
    /// The entry-point name (`magnum.drivers` group): the value of a template's `driver` field.
    fn name(&self) -> &str;

    /// `provides`: the `(server_type, os, coe)` tuples this driver serves.
    fn provides(&self) -> Vec<ProvidedType>;

    /// `beta`: a beta driver is only selected by tuple when named in
    /// `[drivers] enabled_beta_drivers`.
    fn beta(&self) -> bool {
        false
    }

    /// `create_cluster(context, cluster, cluster_create_timeout)`: start provisioning. May set
    /// e.g. `stack_id`; the conductor then saves the cluster and copies `stack_id` to every
    /// nodegroup.
    async fn create_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        create_timeout: i32,
    ) -> DriverResult<Writes>;

    /// `update_cluster(context, cluster, scale_manager, rollback)`: apply the default worker
    /// nodegroup's new `node_count` (already saved by the conductor).
    async fn update_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        scale_manager: Option<&dyn ScaleManager>,
        rollback: bool,
    ) -> DriverResult<Writes>;

    /// `upgrade_cluster(context, cluster, cluster_template, max_batch_size, nodegroup,
    /// scale_manager, rollback)`. `cluster_template` is the target template; the driver must
    /// move the cluster onto it (`cluster_template_id`, ...) — the conductor does not.
    ///
    /// Magnum's conductor passes its `rollback` argument in the `scale_manager` slot, so a
    /// driver always sees `rollback = false` (`cluster_upgrade` in
    /// `magnum/conductor/handlers/cluster_conductor.py`); OpenKeel's conductor does the
    /// same. Return a `NotSupported` error to refuse without any state change.
    async fn upgrade_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        cluster_template: &ClusterTemplate,
        max_batch_size: i32,
        nodegroup: &mut NodeGroup,
        rollback: bool,
    ) -> DriverResult<Writes>;

    /// `delete_cluster(context, cluster)`: start deleting. The row is removed by the periodic
    /// status sync once [`Driver::update_cluster_status`] reports `DELETE_COMPLETE`.
    async fn delete_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes>;

    /// `resize_cluster(context, cluster, resize_manager, node_count, nodes_to_remove,
    /// nodegroup)`. The conductor has already saved `nodegroup` with the new `node_count` and
    /// `UPDATE_IN_PROGRESS`.
    async fn resize_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        resize_manager: Option<&dyn ScaleManager>,
        node_count: i32,
        nodes_to_remove: &[String],
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes>;

    /// `create_nodegroup(context, cluster, nodegroup)` (the row exists, `CREATE_IN_PROGRESS`).
    async fn create_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes>;

    /// `update_nodegroup(context, cluster, nodegroup)` (`nodegroup` carries the API's patch and
    /// `UPDATE_IN_PROGRESS`; the conductor saves it after the call).
    async fn update_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes>;

    /// `delete_nodegroup(context, cluster, nodegroup)`. `nodegroup.status` is
    /// `DELETE_IN_PROGRESS` in memory only: Magnum's conductor does not save it on success, so
    /// a driver that wants it stored returns it in [`Writes::nodegroups`]. The driver removes
    /// the row itself when done ([`Writes::destroy_nodegroups`], usually from
    /// [`Driver::update_cluster_status`]).
    async fn delete_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes>;

    /// `update_cluster_status(context, cluster)`: called by the periodic status sync for
    /// clusters in `CREATE_/UPDATE_/DELETE_/ROLLBACK_IN_PROGRESS` (with an all-tenants admin
    /// context). Default: nothing changes (Magnum's base implementation is a no-op).
    async fn update_cluster_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<StatusReport> {
        let _ = (ctx, cluster);
        Ok(StatusReport::unchanged())
    }

    /// `pre_delete_cluster(context, cluster)`: not called by the conductor (drivers' own use).
    async fn pre_delete_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<()> {
        let _ = (ctx, cluster);
        Ok(())
    }

    /// `validate_master_size(node_count)` (called by the API): an even count or one below 1 →
    /// `MasterNGSizeInvalid`.
    fn validate_master_size(&self, node_count: i32) -> Result<(), MagnumError> {
        if node_count % 2 == 0 || node_count < 1 {
            return Err(MagnumError::new(
                ErrorKind::MasterNGSizeInvalid,
                &[("requested_size", &node_count)],
            ));
        }
        Ok(())
    }

    /// `validate_master_resize(node_count)` (called by the API): refused by default.
    fn validate_master_resize(&self, node_count: i32) -> Result<(), MagnumError> {
        let _ = node_count;
        Err(MagnumError::new(ErrorKind::MasterNGResizeNotSupported, &[]))
    }

    /// OpenKeel's create-time check, called by the API before anything is written: what the
    /// driver would only find out later (magnum-cluster-api refuses a missing `kube_tag`, an
    /// unsupported network driver or an even master count in the middle of `create_cluster`)
    /// is refused here with a 400. `cluster` carries the template defaults already merged in
    /// (labels, network driver via `template`). Default: nothing to check.
    fn validate_cluster_create(
        &self,
        cluster: &Cluster,
        template: &ClusterTemplate,
        master_count: i32,
    ) -> Result<(), MagnumError> {
        let _ = (cluster, template, master_count);
        Ok(())
    }

    /// OpenKeel's nodegroup-create check (the API's 400 before anything is written), e.g.
    /// a name the driver cannot turn into a Kubernetes object name. Default: nothing to check.
    fn validate_nodegroup_create(
        &self,
        cluster: &Cluster,
        nodegroup: &NodeGroup,
    ) -> Result<(), MagnumError> {
        let _ = (cluster, nodegroup);
        Ok(())
    }

    /// OpenKeel's upgrade check (the API's 400 before anything is written): an upgrade of
    /// `cluster` onto `template` the driver knows it cannot carry out (e.g. a Kubernetes
    /// version Cluster API refuses to move to). Default: nothing to check.
    fn validate_cluster_upgrade(
        &self,
        cluster: &Cluster,
        template: &ClusterTemplate,
    ) -> Result<(), MagnumError> {
        let _ = (cluster, template);
        Ok(())
    }

    /// `rotate_credential(context, cluster)`. Magnum's base raises `NotImplementedError`, which
    /// the credential handler turns into `NotSupported("Credential rotation is not supported by
    /// driver.")`; the default here returns that error directly.
    async fn rotate_credential(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        let _ = (ctx, cluster);
        Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            "Credential rotation is not supported by driver.",
        )
        .into())
    }

    /// `rotate_ca_certificate(context, cluster)`. Base: `NotSupported("'rotate_ca_certificate'
    /// is not supported by this driver.")`.
    async fn rotate_ca_certificate(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        let _ = (ctx, cluster);
        Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            "'rotate_ca_certificate' is not supported by this driver.",
        )
        .into())
    }

    /// `get_scale_manager(context, osclient, cluster)`: default none.
    fn get_scale_manager(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> Option<Arc<dyn ScaleManager>> {
        let _ = (ctx, cluster);
        None
    }

    /// `get_monitor(context, cluster).poll_health_status()` in one step. `Ok(None)` = the
    /// driver has no monitor for this cluster (Magnum's default `get_monitor` returns None);
    /// an `Err` is logged and the cluster skipped.
    async fn poll_health_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<Option<HealthReport>> {
        let _ = (ctx, cluster);
        Ok(None)
    }

    /// `create_federation` / `update_federation` / `delete_federation`: never called by
    /// Magnum 23.0.0's conductor (its federation handlers raise before reaching a driver).
    async fn create_federation(
        &self,
        ctx: &RequestContext,
        federation: &mut Federation,
    ) -> Result<(), MagnumError> {
        let _ = (ctx, federation);
        Err(not_implemented())
    }

    async fn update_federation(
        &self,
        ctx: &RequestContext,
        federation: &mut Federation,
    ) -> Result<(), MagnumError> {
        let _ = (ctx, federation);
        Err(not_implemented())
    }

    async fn delete_federation(
        &self,
        ctx: &RequestContext,
        federation: &mut Federation,
    ) -> Result<(), MagnumError> {
        let _ = (ctx, federation);
        Err(not_implemented())
    }
}

fn not_implemented() -> MagnumError {
    MagnumError::internal("This feature is not yet implemented.")
}

/// True when `kind` is `NotSupported` or one of its subclasses (`ClusterTypeNotSupported`,
/// `MasterNGResizeNotSupported`, ...), as Python's `except exception.NotSupported` matches.
pub fn is_not_supported(kind: ErrorKind) -> bool {
    let mut class = kind.class_name();
    loop {
        if class == "NotSupported" {
            return true;
        }
        match MagnumError::kind_by_class_name(class) {
            Some(k) if k.parent() != class => class = k.parent(),
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provided_type_displays_as_python_tuple() {
        assert_eq!(
            ProvidedType::new("vm", "ubuntu", "kubernetes").to_string(),
            "(vm, ubuntu, kubernetes)"
        );
    }

    #[test]
    fn not_supported_hierarchy() {
        assert!(is_not_supported(ErrorKind::NotSupported));
        assert!(is_not_supported(ErrorKind::ClusterTypeNotSupported));
        assert!(is_not_supported(ErrorKind::MasterNGResizeNotSupported));
        assert!(!is_not_supported(ErrorKind::ClusterNotFound));
        assert!(!is_not_supported(ErrorKind::MagnumException));
        assert!(!is_not_supported(ErrorKind::ClientSideError));
    }
}
