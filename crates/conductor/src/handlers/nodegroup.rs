//! `magnum/conductor/handlers/nodegroup_conductor.py`. No
//! notifications for nodegroup operations, as in Magnum.

use openkeel_core::context::RequestContext;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, ClusterStatus, NodeGroup};
use openkeel_db::{nodegroup as ng_db, Scope};
use openkeel_drivers::DriverContext;
use openkeel_rpc::Obj;

use super::{not_supported, resizable, status_text};
use crate::save::{
    apply_writes, save_cluster, save_nodegroup, set_cluster_status, set_nodegroup_reason,
    set_nodegroup_status, touch_cluster_diff, touch_nodegroup_diff,
};
use crate::Conductor;

/// Which nodegroup driver call to make.
#[derive(Clone, Copy)]
enum NgOp {
    Create,
    Update,
    Delete,
}

/// `allowed_operation`: when the incoming nodegroup has a status and it is not in the
/// NODEGROUP set → `NotSupported('<method> when nodegroup status is "<cluster status>"')` (the
/// message shows the **cluster's** status, a Magnum quirk).
fn guard(method: &str, cluster: &Cluster, nodegroup: &Obj<NodeGroup>) -> Result<(), MagnumError> {
    let status_set = nodegroup.data.status.is_some() || nodegroup.changed("status");
    if status_set && !resizable(nodegroup.data.status) {
        return Err(not_supported(&format!(
            "{method} when nodegroup status is \"{}\"",
            status_text(cluster.status)
        )));
    }
    Ok(())
}

impl Conductor {
    /// `nodegroup_create`.
    pub async fn handle_nodegroup_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<NodeGroup, MagnumError> {
        guard("nodegroup_create", &cluster.data, &nodegroup)?;
        // The nodegroup row (CREATE_IN_PROGRESS) is written before the cluster goes
        // UPDATE_IN_PROGRESS: a status sync that completes the cluster in between would
        // otherwise never see the nodegroup in progress and leave it there (Magnum saves in
        // the other order; docs/differences.md).
        let mut data = nodegroup.data;
        data.status = Some(ClusterStatus::CreateInProgress);
        let ng = match ng_db::create_in_cluster(&self.db, &data).await {
            Ok(ng) => Obj::unchanged(ng),
            Err(e @ openkeel_db::DbError::NodeGroupAlreadyExists { .. }) => {
                // This very nodegroup (same uuid): the cast was handed out again after the
                // conductor that took it went away (ordered casts are acked once handled). A
                // create it left in progress is carried on; one that ended stays as it is.
                let scope = Scope::from(ctx);
                let uuid = data.uuid.as_str();
                match ng_db::get_by_uuid(&self.db, &scope, &data.cluster_id, uuid).await {
                    Ok(ng) if ng.status == Some(ClusterStatus::CreateInProgress) => {
                        tracing::info!(nodegroup = %uuid, "nodegroup create taken over from another conductor");
                        Obj::unchanged(ng)
                    }
                    Ok(ng) => {
                        tracing::info!(nodegroup = %uuid, "nodegroup create already handled");
                        return Ok(ng);
                    }
                    Err(_) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        };
        let mut c = cluster;
        set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        self.nodegroup_operation(ctx, c, ng, NgOp::Create).await
    }

    /// `nodegroup_update`: the API's patched fields are written with the status.
    pub async fn handle_nodegroup_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<NodeGroup, MagnumError> {
        guard("nodegroup_update", &cluster.data, &nodegroup)?;
        // The nodegroup's UPDATE_IN_PROGRESS (with the API's patched fields) is saved before
        // the cluster's, for the reason given in handle_nodegroup_create; after the driver
        // call only what the driver changed is written, so a sync that already completed the
        // nodegroup is not undone.
        let mut ng = nodegroup;
        set_nodegroup_status(&mut ng, ClusterStatus::UpdateInProgress);
        save_nodegroup(&self.db, &mut ng).await?;
        let mut c = cluster;
        set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        self.nodegroup_operation(ctx, c, ng, NgOp::Update).await
    }

    /// `nodegroup_delete`: no guard; the nodegroup's `DELETE_IN_PROGRESS` is not saved
    /// by the conductor on success (the driver persists it, and removes the row when done).
    pub async fn handle_nodegroup_delete(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<(), MagnumError> {
        let mut c = cluster;
        set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        let mut ng = nodegroup;
        set_nodegroup_status(&mut ng, ClusterStatus::DeleteInProgress);
        self.nodegroup_operation(ctx, c, ng, NgOp::Delete)
            .await
            .map(drop)
    }

    /// The `try:` part shared by the three handlers: driver call (+ save for create/update);
    /// on failure the nodegroup gets `<OP>_FAILED` + reason and the cluster `UPDATE_FAILED`
    /// (its `status_reason` untouched).
    async fn nodegroup_operation(
        &self,
        ctx: &RequestContext,
        mut c: Obj<Cluster>,
        mut ng: Obj<NodeGroup>,
        op: NgOp,
    ) -> Result<NodeGroup, MagnumError> {
        let scope = Scope::from(ctx);
        let result = async {
            let (template, driver) = self.driver_of(&scope, &c.data).await?;
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let (before_c, before_ng) = (c.data.clone(), ng.data.clone());
            let res = match op {
                NgOp::Create => {
                    self.bounded(
                        driver.name(),
                        "create_nodegroup",
                        driver.create_nodegroup(&dctx, &mut c.data, &mut ng.data),
                    )
                    .await
                }
                NgOp::Update => {
                    self.bounded(
                        driver.name(),
                        "update_nodegroup",
                        driver.update_nodegroup(&dctx, &mut c.data, &mut ng.data),
                    )
                    .await
                }
                NgOp::Delete => {
                    self.bounded(
                        driver.name(),
                        "delete_nodegroup",
                        driver.delete_nodegroup(&dctx, &mut c.data, &mut ng.data),
                    )
                    .await
                }
            };
            touch_cluster_diff(&mut c, &before_c);
            touch_nodegroup_diff(&mut ng, &before_ng);
            let writes = res?;
            apply_writes(&self.db, &ng.data.cluster_id, &writes).await?;
            if !matches!(op, NgOp::Delete) {
                save_nodegroup(&self.db, &mut ng).await?;
            }
            Ok::<(), MagnumError>(())
        }
        .await;
        if let Err(e) = result {
            let failed = match op {
                NgOp::Create => ClusterStatus::CreateFailed,
                NgOp::Update => ClusterStatus::UpdateFailed,
                NgOp::Delete => ClusterStatus::DeleteFailed,
            };
            set_nodegroup_status(&mut ng, failed);
            set_nodegroup_reason(&mut ng, Some(e.message().to_string()));
            self.save_ng_or_log(&mut ng).await;
            set_cluster_status(&mut c, ClusterStatus::UpdateFailed);
            self.save_or_log(&mut c).await;
            return Err(e);
        }
        Ok(ng.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_uses_the_nodegroup_status_and_shows_the_cluster_status() {
        let cluster = Cluster {
            status: Some(ClusterStatus::UpdateComplete),
            ..Cluster::default()
        };
        let new = Obj::unchanged(NodeGroup::default());
        assert!(guard("nodegroup_create", &cluster, &new).is_ok());
        let creating = Obj::unchanged(NodeGroup {
            status: Some(ClusterStatus::CreateInProgress),
            ..NodeGroup::default()
        });
        let e = guard("nodegroup_update", &cluster, &creating).err();
        assert_eq!(
            e.map(|e| e.message().to_string()).as_deref(),
            Some("nodegroup_update when nodegroup status is \"UPDATE_COMPLETE\" is not supported.")
        );
        let failed = Obj::unchanged(NodeGroup {
            status: Some(ClusterStatus::UpdateFailed),
            ..NodeGroup::default()
        });
        assert!(guard("nodegroup_update", &cluster, &failed).is_ok());
    }
}
