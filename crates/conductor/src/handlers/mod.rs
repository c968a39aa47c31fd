//! The RPC handlers, one module per Magnum handler class: [`cluster`]
//! (`cluster_conductor.Handler`) and [`nodegroup`] (`nodegroup_conductor.Handler`).

mod ca;
mod cluster;
mod nodegroup;

use std::sync::Arc;

use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate, NodeGroup};
use openkeel_db::{cluster_template, nodegroup as ng_db, NodeGroupFilters, Page, Scope};
use openkeel_drivers::Driver;

use crate::Conductor;

/// UPDATABLE (`magnum/conductor/handlers/cluster_conductor.py`): the COMPLETE set.
pub(crate) fn updatable(status: Option<ClusterStatus>) -> bool {
    status.is_some_and(ClusterStatus::is_complete)
}

/// RESIZABLE: UPDATABLE + UPDATE_FAILED + UPDATE_IN_PROGRESS (the nodegroup guard uses the
/// same set).
pub(crate) fn resizable(status: Option<ClusterStatus>) -> bool {
    updatable(status)
        || matches!(
            status,
            Some(ClusterStatus::UpdateFailed | ClusterStatus::UpdateInProgress)
        )
}

/// A status as Python's `%s` prints it.
pub(crate) fn status_text(status: Option<ClusterStatus>) -> &'static str {
    status.map(ClusterStatus::as_str).unwrap_or("None")
}

/// `NotSupported(operation=...)`: "<operation> is not supported."
pub(crate) fn not_supported(operation: &str) -> MagnumError {
    MagnumError::new(ErrorKind::NotSupported, &[("operation", &operation)])
}

impl Conductor {
    /// `ClusterTemplate.get_by_uuid(context, cluster.cluster_template_id)`.
    pub(crate) async fn template_of(
        &self,
        scope: &Scope,
        cluster: &Cluster,
    ) -> Result<ClusterTemplate, MagnumError> {
        let id = cluster.cluster_template_id.as_deref().unwrap_or("None");
        Ok(cluster_template::get_by_uuid(&self.db, scope, id).await?)
    }

    /// The cluster's template and driver (`get_driver_for_cluster`).
    pub(crate) async fn driver_of(
        &self,
        scope: &Scope,
        cluster: &Cluster,
    ) -> Result<(ClusterTemplate, Arc<dyn Driver>), MagnumError> {
        let template = self.template_of(scope, cluster).await?;
        let driver = self.drivers.get_driver_for_template(&template)?;
        Ok((template, driver))
    }

    /// `cluster.nodegroups`: the cluster's nodegroups in id order.
    pub(crate) async fn nodegroups_of(
        &self,
        scope: &Scope,
        cluster: &Cluster,
    ) -> Result<Vec<NodeGroup>, MagnumError> {
        let uuid = cluster.uuid.as_deref().unwrap_or_default();
        Ok(ng_db::list(
            &self.db,
            scope,
            uuid,
            &NodeGroupFilters::default(),
            &Page::all(),
        )
        .await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_sets() {
        assert!(updatable(Some(ClusterStatus::AdoptComplete)));
        assert!(!updatable(Some(ClusterStatus::UpdateFailed)));
        assert!(!updatable(None));
        assert!(resizable(Some(ClusterStatus::UpdateInProgress)));
        assert!(resizable(Some(ClusterStatus::UpdateFailed)));
        assert!(!resizable(Some(ClusterStatus::CreateInProgress)));
        assert_eq!(
            not_supported("Updating a cluster when status is \"CREATE_IN_PROGRESS\"").message(),
            "Updating a cluster when status is \"CREATE_IN_PROGRESS\" is not supported."
        );
        assert_eq!(status_text(None), "None");
    }
}
