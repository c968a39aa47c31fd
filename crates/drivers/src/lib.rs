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

pub mod registry;
pub mod simulator;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterHealthStatus, ClusterTemplate, Federation, NodeGroup, StringMap,
};

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

/// The answer of [`Driver::update_cluster_status`] (the periodic status sync).
///
/// `cluster` holds the new values of the cluster (status, status_reason, api_address,
/// coe_version, ...): the conductor writes the fields that differ from the row it passed in.
/// `None` means "nothing changed". A cluster reported as `DELETE_COMPLETE` is not written: the
/// conductor removes it with its nodegroups (Magnum's deletion cascade).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusUpdate {
    pub cluster: Option<Cluster>,
    pub writes: Writes,
}

impl StatusUpdate {
    /// No change this round.
    pub fn unchanged() -> Self {
        StatusUpdate::default()
    }
}

/// The result of a health poll (Magnum's `monitor.data['health_status']` and
/// `['health_status_reason']`). The conductor writes them only when `health_status` is set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthReport {
    pub health_status: Option<ClusterHealthStatus>,
    pub health_status_reason: Option<StringMap>,
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
/// is the exception Magnum's conductor catches: its message becomes `status_reason`.
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
    ) -> Result<Writes, MagnumError>;

    /// `update_cluster(context, cluster, scale_manager, rollback)`: apply the default worker
    /// nodegroup's new `node_count` (already saved by the conductor).
    async fn update_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        scale_manager: Option<&dyn ScaleManager>,
        rollback: bool,
    ) -> Result<Writes, MagnumError>;

    /// `upgrade_cluster(context, cluster, cluster_template, max_batch_size, nodegroup,
    /// scale_manager, rollback)`. `cluster_template` is the target template; the driver must
    /// move the cluster onto it (`cluster_template_id`, ...) — the conductor does not.
    ///
    /// Magnum's conductor passes its `rollback` argument in the `scale_manager` slot, so a
    /// driver always sees `rollback = false` (conductor.md §3.5); OpenKeel's conductor does the
    /// same. Return a `NotSupported` error to refuse without any state change.
    async fn upgrade_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        cluster_template: &ClusterTemplate,
        max_batch_size: i32,
        nodegroup: &mut NodeGroup,
        rollback: bool,
    ) -> Result<Writes, MagnumError>;

    /// `delete_cluster(context, cluster)`: start deleting. The row is removed by the periodic
    /// status sync once [`Driver::update_cluster_status`] reports `DELETE_COMPLETE`.
    async fn delete_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> Result<Writes, MagnumError>;

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
    ) -> Result<Writes, MagnumError>;

    /// `create_nodegroup(context, cluster, nodegroup)` (the row exists, `CREATE_IN_PROGRESS`).
    async fn create_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> Result<Writes, MagnumError>;

    /// `update_nodegroup(context, cluster, nodegroup)` (`nodegroup` carries the API's patch and
    /// `UPDATE_IN_PROGRESS`; the conductor saves it after the call).
    async fn update_nodegroup(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> Result<Writes, MagnumError>;

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
    ) -> Result<Writes, MagnumError>;

    /// `update_cluster_status(context, cluster)`: called by the periodic status sync for
    /// clusters in `CREATE_/UPDATE_/DELETE_/ROLLBACK_IN_PROGRESS` (with an all-tenants admin
    /// context). Default: nothing changes (Magnum's base implementation is a no-op).
    async fn update_cluster_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> Result<StatusUpdate, MagnumError> {
        let _ = (ctx, cluster);
        Ok(StatusUpdate::unchanged())
    }

    /// `pre_delete_cluster(context, cluster)`: not called by the conductor (drivers' own use).
    async fn pre_delete_cluster(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> Result<(), MagnumError> {
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

    /// `rotate_credential(context, cluster)`. Magnum's base raises `NotImplementedError`, which
    /// the credential handler turns into `NotSupported("Credential rotation is not supported by
    /// driver.")`; the default here returns that error directly.
    async fn rotate_credential(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> Result<Writes, MagnumError> {
        let _ = (ctx, cluster);
        Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            "Credential rotation is not supported by driver.",
        ))
    }

    /// `rotate_ca_certificate(context, cluster)`. Base: `NotSupported("'rotate_ca_certificate'
    /// is not supported by this driver.")`.
    async fn rotate_ca_certificate(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> Result<Writes, MagnumError> {
        let _ = (ctx, cluster);
        Err(MagnumError::with_message(
            ErrorKind::NotSupported,
            "'rotate_ca_certificate' is not supported by this driver.",
        ))
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
    ) -> Result<Option<HealthReport>, MagnumError> {
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
