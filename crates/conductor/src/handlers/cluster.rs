//! `magnum/conductor/handlers/cluster_conductor.py`.

use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterHealthStatus, ClusterStatus, ClusterTemplate, NodeGroup, NodeGroupRole,
    StringMap,
};
use openkeel_db::{cluster as cluster_db, nodegroup as ng_db, NodeGroupFilters, Page, Scope};
use openkeel_drivers::{is_not_supported, DriverContext};
use openkeel_rpc::Obj;

use super::{not_supported, resizable, status_text, updatable};
use crate::notify::{Action, Outcome};
use crate::save::{
    apply_writes, save_cluster, save_nodegroup, set_cluster_reason, set_cluster_status,
    set_nodegroup_reason, set_nodegroup_status, touch_cluster_diff, touch_nodegroup_diff,
};
use crate::Conductor;

/// `conductor_utils._get_nodegroup_object` (`magnum/conductor/utils.py`): a default nodegroup of
/// a new cluster.
pub(crate) fn default_nodegroup(
    cluster: &Cluster,
    template: &ClusterTemplate,
    node_count: i32,
    is_master: bool,
) -> Result<NodeGroup, MagnumError> {
    let or = |a: &Option<String>, b: &Option<String>| {
        a.clone().filter(|s| !s.is_empty()).or_else(|| b.clone())
    };
    let labels = cluster.labels.clone().unwrap_or_default();
    let mut ng = NodeGroup {
        cluster_id: cluster.uuid.clone().unwrap_or_default(),
        project_id: cluster.project_id.clone().unwrap_or_default(),
        node_count: Some(node_count),
        image_id: template.image_id.clone(),
        docker_volume_size: cluster
            .docker_volume_size
            .filter(|v| *v != 0)
            .or(template.docker_volume_size),
        is_default: Some(true),
        status: Some(ClusterStatus::CreateInProgress),
        ..NodeGroup::default()
    };
    let role = if is_master {
        ng.flavor_id = or(&cluster.master_flavor_id, &template.master_flavor_id);
        NodeGroupRole::MASTER
    } else {
        ng.flavor_id = or(&cluster.flavor_id, &template.flavor_id);
        if let Some(v) = labels.get("min_node_count") {
            // IntegerField coercion: `int(value)`.
            let n = v.trim().parse::<i32>().map_err(|_| {
                MagnumError::internal(format!("invalid literal for int() with base 10: '{v}'"))
            })?;
            ng.min_node_count = Some(n);
        }
        NodeGroupRole::WORKER
    };
    ng.role = Some(role.to_string());
    ng.name = format!("default-{role}");
    ng.labels = Some(labels);
    Ok(ng)
}

/// `e` (from looking up `cluster`'s driver) says the template is gone, and the cluster has no
/// `stack_id`: no driver ever created anything for it.
fn never_reached_a_driver(cluster: &Cluster, e: &MagnumError) -> bool {
    e.kind() == ErrorKind::ClusterTemplateNotFound
        && cluster.stack_id.as_deref().is_none_or(str::is_empty)
}

impl Conductor {
    /// `cluster_create`: insert the cluster `CREATE_IN_PROGRESS` and its two default
    /// nodegroups, then (certificates,) notify, driver `create_cluster`, save the cluster and
    /// copy `stack_id` to the nodegroups. A failure after the inserts → `CREATE_FAILED`.
    ///
    /// Certificates: without a [`crate::ClusterCertificates`] the four cert refs stay NULL.
    pub async fn handle_cluster_create(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        master_count: i32,
        node_count: i32,
        create_timeout: i32,
    ) -> Result<Cluster, MagnumError> {
        let scope = Scope::from(ctx);
        let mut data = cluster.data;
        data.status = Some(ClusterStatus::CreateInProgress);
        data.status_reason = None;
        if data.uuid.as_deref().is_none_or(str::is_empty) {
            data.uuid = Some(uuid::Uuid::new_v4().to_string());
        }
        // The cluster and its two default nodegroups in one transaction: a conductor killed
        // here leaves all three or none.
        let defaults = async {
            let template = self.template_of(&scope, &data).await?;
            let master = default_nodegroup(&data, &template, master_count, true)?;
            let worker = default_nodegroup(&data, &template, node_count, false)?;
            Ok::<_, MagnumError>([master, worker])
        }
        .await;
        let ngs = match defaults {
            Ok(ngs) => ngs,
            Err(e) => return self.create_failed_before_driver(ctx, data, e).await,
        };
        let mut c = match cluster_db::create_with_nodegroups(&self.db, &data, &ngs).await {
            Ok(c) => Obj::unchanged(c),
            // The template was deleted after the API checked it (the insert reads it under
            // lock, so a delete cannot slip in after this).
            Err(e @ openkeel_db::DbError::ClusterTemplateNotFound(_)) => {
                return self.create_failed_before_driver(ctx, data, e.into()).await
            }
            // The cast handed out again after the conductor that took it went away (ordered
            // casts are acked once handled): that one stored the cluster, and what it left in
            // progress the status sync finishes or fails (an interrupted create without `stack_id` fails at the next tick).
            Err(e @ openkeel_db::DbError::ClusterAlreadyExists { .. }) => {
                let uuid = data.uuid.as_deref().unwrap_or_default();
                return match cluster_db::get_by_uuid(&self.db, &scope, uuid).await {
                    Ok(existing) => {
                        tracing::info!(cluster = %uuid, "cluster create already handled");
                        Ok(existing)
                    }
                    Err(_) => Err(e.into()),
                };
            }
            Err(e) => return Err(e.into()),
        };

        let result = async {
            if let Some(certs) = &self.certificates {
                let refs = certs
                    .generate_certificates(ctx, &c.data)
                    .await
                    .map_err(|e| {
                        tracing::error!(cluster = ?c.data.uuid, error = %e, "certificate generation failed");
                        MagnumError::new(
                            ErrorKind::CertificatesToClusterFailed,
                            &[("cluster_uuid", &c.data.uuid.as_deref().unwrap_or("None"))],
                        )
                    })?;
                c.data.ca_cert_ref = Some(refs.ca_cert_ref);
                c.data.magnum_cert_ref = Some(refs.magnum_cert_ref);
                c.data.etcd_ca_cert_ref = Some(refs.etcd_ca_cert_ref);
                c.data.front_proxy_ca_cert_ref = Some(refs.front_proxy_ca_cert_ref);
                for f in [
                    "ca_cert_ref",
                    "magnum_cert_ref",
                    "etcd_ca_cert_ref",
                    "front_proxy_ca_cert_ref",
                ] {
                    c.touch(f);
                }
            }
            self.notifier
                .notify_cluster_operation(ctx, Action::Create, Outcome::Pending, &c.data)
                .await;
            let (template, driver) = self.driver_of(&scope, &c.data).await?;
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let before = c.data.clone();
            let res = self.bounded(driver.name(), "create_cluster", driver.create_cluster(&dctx, &mut c.data, create_timeout)).await;
            touch_cluster_diff(&mut c, &before);
            let writes = res?;
            apply_writes(&self.db, c.data.uuid.as_deref().unwrap_or_default(), &writes).await?;
            save_cluster(&self.db, &mut c).await?;
            for ng in self.nodegroups_of(&scope, &c.data).await? {
                let mut ng = Obj::unchanged(ng);
                ng.data.stack_id = c.data.stack_id.clone();
                ng.touch("stack_id");
                save_nodegroup(&self.db, &mut ng).await?;
            }
            Ok::<(), MagnumError>(())
        }
        .await;

        if let Err(e) = result {
            set_cluster_status(&mut c, ClusterStatus::CreateFailed);
            set_cluster_reason(&mut c, Some(e.message().to_string()));
            self.save_or_log(&mut c).await;
            self.notifier
                .notify_cluster_operation(ctx, Action::Create, Outcome::Failure, &c.data)
                .await;
            return Err(e);
        }
        Ok(c.data)
    }

    /// A create that cannot reach its driver — its template is gone (deleted while the cast
    /// was on its way) or a label the default nodegroups cannot take: the cluster the API
    /// answered 202 for is stored `CREATE_FAILED` with the reason, without nodegroups, and
    /// the failure is notified. Magnum stores it `CREATE_IN_PROGRESS` and leaves it there
    /// (its template look-up raises after `cluster.create()`), where it can be neither
    /// completed nor deleted. Such a cluster is deleted without its driver
    /// ([`Self::handle_cluster_delete`]).
    async fn create_failed_before_driver(
        &self,
        ctx: &RequestContext,
        mut data: Cluster,
        e: MagnumError,
    ) -> Result<Cluster, MagnumError> {
        tracing::warn!(cluster = ?data.uuid, error = %e, "cluster create failed before its driver");
        data.status = Some(ClusterStatus::CreateFailed);
        data.status_reason = Some(e.message().to_string());
        let stored = cluster_db::create(&self.db, &data).await?;
        self.notifier
            .notify_cluster_operation(ctx, Action::Create, Outcome::Failure, &stored)
            .await;
        Err(e)
    }

    /// `cluster_update`: health fields and/or the default worker's `node_count`.
    /// Returns `None` when nothing had to change.
    pub async fn handle_cluster_update(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        health_status: Option<String>,
        health_status_reason: Option<StringMap>,
        rollback: bool,
    ) -> Result<Option<Cluster>, MagnumError> {
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
        let scope = Scope::from(ctx);
        let mut worker = Obj::unchanged(self.default_worker(&scope, &c.data).await?);
        let current_count = worker.data.node_count.unwrap_or(1);
        if current_count == node_count
            && c.data.health_status.map(ClusterHealthStatus::as_str) == health_status.as_deref()
            && c.data.health_status_reason == health_status_reason
        {
            return Ok(None);
        }
        c.data.health_status = match health_status.as_deref() {
            None => None,
            Some(s) => Some(
                s.parse::<ClusterHealthStatus>()
                    .map_err(|_| MagnumError::internal(format!("Field value {s} is invalid")))?,
            ),
        };
        c.data.health_status_reason = health_status_reason;
        c.touch("health_status");
        c.touch("health_status_reason");
        if current_count == node_count {
            save_cluster(&self.db, &mut c).await?;
            return Ok(Some(c.data));
        }
        let old_node_count = worker.data.node_count;
        let (template, driver) = self.driver_of(&scope, &c.data).await?;

        let result = async {
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Pending, &c.data)
                .await;
            worker.data.node_count = Some(node_count);
            worker.touch("node_count");
            save_nodegroup(&self.db, &mut worker).await?;
            // UPDATE_IN_PROGRESS before the driver call (Magnum saves it after), as in
            // resize: a conductor killed during the call leaves the cluster in progress for
            // the status sync to finish or the operation timeout to fail.
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            save_cluster(&self.db, &mut c).await?;
            self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let manager = driver.get_scale_manager(&dctx, &c.data);
            let before = c.data.clone();
            let res = self
                .bounded(
                    driver.name(),
                    "update_cluster",
                    driver.update_cluster(&dctx, &mut c.data, manager.as_deref(), rollback),
                )
                .await;
            touch_cluster_diff(&mut c, &before);
            let writes = res?;
            apply_writes(
                &self.db,
                c.data.uuid.as_deref().unwrap_or_default(),
                &writes,
            )
            .await?;
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            Ok::<(), MagnumError>(())
        }
        .await;

        if let Err(e) = result {
            set_cluster_status(&mut c, ClusterStatus::UpdateFailed);
            set_cluster_reason(&mut c, Some(e.message().to_string()));
            self.save_or_log(&mut c).await;
            worker.data.node_count = old_node_count;
            worker.touch("node_count");
            self.save_ng_or_log(&mut worker).await;
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                .await;
            return Err(e);
        }
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        Ok(Some(c.data))
    }

    /// `cluster_delete`: no precondition; `DELETE_IN_PROGRESS` once the driver accepted.
    /// The row goes when the status sync sees `DELETE_COMPLETE`.
    pub async fn handle_cluster_delete(
        &self,
        ctx: &RequestContext,
        uuid: &str,
    ) -> Result<(), MagnumError> {
        let scope = Scope::from(ctx);
        let mut c = Obj::unchanged(cluster_db::get_by_uuid(&self.db, &scope, uuid).await?);
        let (template, driver) = match self.driver_of(&scope, &c.data).await {
            Ok(found) => found,
            Err(e) if never_reached_a_driver(&c.data, &e) => {
                return self.delete_without_driver(ctx, c.data).await;
            }
            Err(e) => return Err(e),
        };
        let result = async {
            self.notifier
                .notify_cluster_operation(ctx, Action::Delete, Outcome::Pending, &c.data)
                .await;
            // DELETE_IN_PROGRESS before the driver call (Magnum sets it after): a conductor
            // killed during the call leaves the cluster in progress, and the status sync of
            // another conductor finishes the delete (or the operation timeout fails it)
            // instead of the cluster looking untouched after a delete was accepted.
            set_cluster_status(&mut c, ClusterStatus::DeleteInProgress);
            set_cluster_reason(&mut c, None);
            save_cluster(&self.db, &mut c).await?;
            self.mark_started(&c.data, ClusterStatus::DeleteInProgress);
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let before = c.data.clone();
            let res = self
                .bounded_by(
                    driver.name(),
                    "delete_cluster",
                    self.settings.driver_call_timeout + self.settings.pre_delete_timeout,
                    driver.delete_cluster(&dctx, &mut c.data),
                )
                .await;
            touch_cluster_diff(&mut c, &before);
            let writes = res?;
            apply_writes(&self.db, uuid, &writes).await?;
            set_cluster_status(&mut c, ClusterStatus::DeleteInProgress);
            set_cluster_reason(&mut c, None);
            Ok::<(), MagnumError>(())
        }
        .await;
        if let Err(e) = result {
            self.notifier
                .notify_cluster_operation(ctx, Action::Delete, Outcome::Failure, &c.data)
                .await;
            set_cluster_status(&mut c, ClusterStatus::DeleteFailed);
            set_cluster_reason(&mut c, Some(e.message().to_string()));
            self.save_or_log(&mut c).await;
            return Err(e);
        }
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::DeleteInProgress);
        Ok(())
    }

    /// The delete of a cluster whose template is gone and that never reached a driver (no
    /// `stack_id`: [`Self::create_failed_before_driver`], or a cluster Magnum left behind the
    /// same way): there is nothing in any cloud to remove, so its rows (and certificates, if
    /// any were made) go at once, with the delete's notifications. Magnum's conductor raises
    /// `ClusterTemplateNotFound` for it and the cluster can never be deleted.
    async fn delete_without_driver(
        &self,
        ctx: &RequestContext,
        mut cluster: Cluster,
    ) -> Result<(), MagnumError> {
        let uuid = cluster.uuid.clone().unwrap_or_default();
        tracing::info!(cluster = %uuid, "deleting a cluster that never reached a driver (its template is gone)");
        self.notifier
            .notify_cluster_operation(ctx, Action::Delete, Outcome::Pending, &cluster)
            .await;
        if let Some(certs) = &self.certificates {
            if cluster.ca_cert_ref.is_some() {
                if let Err(e) = certs.delete_certificates(ctx, &cluster).await {
                    tracing::warn!(cluster = %uuid, error = %e, "cannot delete the cluster's certificates");
                }
            }
        }
        match cluster_db::destroy_with_nodegroups(&self.db, &uuid).await {
            Ok(()) => {}
            Err(e) if e.is_not_found() => {}
            Err(e) => return Err(e.into()),
        }
        cluster.status = Some(ClusterStatus::DeleteComplete);
        cluster.status_reason = None;
        self.notifier
            .notify_cluster_operation(ctx, Action::Delete, Outcome::Success, &cluster)
            .await;
        Ok(())
    }

    /// `cluster_resize`.
    pub async fn handle_cluster_resize(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        node_count: i32,
        nodes_to_remove: Vec<String>,
        nodegroup: Obj<NodeGroup>,
    ) -> Result<Cluster, MagnumError> {
        let mut c = cluster;
        let mut ng = nodegroup;
        if !resizable(c.data.status) {
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                .await;
            return Err(not_supported(&format!(
                "Resizing a cluster when status is \"{}\"",
                status_text(c.data.status)
            )));
        }
        let scope = Scope::from(ctx);
        let (template, driver) = self.driver_of(&scope, &c.data).await?;
        let old_node_count = ng.data.node_count;

        let result = async {
            ng.data.node_count = Some(node_count);
            ng.touch("node_count");
            set_nodegroup_status(&mut ng, ClusterStatus::UpdateInProgress);
            save_nodegroup(&self.db, &mut ng).await?;
            // The cluster's UPDATE_IN_PROGRESS before the driver call too (Magnum saves it
            // after): a conductor killed during the call leaves cluster and nodegroup in
            // progress, which the status sync finishes or the operation timeout fails, not a
            // nodegroup in progress under a complete cluster that nothing syncs.
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            save_cluster(&self.db, &mut c).await?;
            self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Pending, &c.data)
                .await;
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let manager = driver.get_scale_manager(&dctx, &c.data);
            let (before_c, before_ng) = (c.data.clone(), ng.data.clone());
            let res = self
                .bounded(
                    driver.name(),
                    "resize_cluster",
                    driver.resize_cluster(
                        &dctx,
                        &mut c.data,
                        manager.as_deref(),
                        node_count,
                        &nodes_to_remove,
                        &mut ng.data,
                    ),
                )
                .await;
            touch_cluster_diff(&mut c, &before_c);
            touch_nodegroup_diff(&mut ng, &before_ng);
            let writes = res?;
            apply_writes(
                &self.db,
                c.data.uuid.as_deref().unwrap_or_default(),
                &writes,
            )
            .await?;
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            Ok::<(), MagnumError>(())
        }
        .await;

        if let Err(e) = result {
            let reason = e.message().to_string();
            set_cluster_status(&mut c, ClusterStatus::UpdateFailed);
            set_cluster_reason(&mut c, Some(reason.clone()));
            self.save_or_log(&mut c).await;
            ng.data.node_count = old_node_count;
            ng.touch("node_count");
            set_nodegroup_status(&mut ng, ClusterStatus::UpdateFailed);
            set_nodegroup_reason(&mut ng, Some(reason));
            self.save_ng_or_log(&mut ng).await;
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                .await;
            return Err(e);
        }
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        Ok(c.data)
    }

    /// `cluster_upgrade` (an RPC call). The driver is the one of the cluster's
    /// **current** template and must move the cluster onto `cluster_template` itself. As in
    /// Magnum, the driver sees `rollback = false` (Magnum passes `rollback` in the
    /// `scale_manager` slot). A driver `NotSupported` is returned without any state change.
    pub async fn handle_cluster_upgrade(
        &self,
        ctx: &RequestContext,
        cluster: Obj<Cluster>,
        cluster_template: Obj<ClusterTemplate>,
        max_batch_size: i32,
        nodegroup: Obj<NodeGroup>,
        rollback: bool,
    ) -> Result<Cluster, MagnumError> {
        let mut c = cluster;
        let mut ng = nodegroup;
        // OpenKeel: an UPDATE_FAILED cluster may be upgraded again (Magnum only allows the
        // *_COMPLETE statuses, so a failed upgrade could never be retried; resize already
        // allows it)
        if !updatable(c.data.status) && c.data.status != Some(ClusterStatus::UpdateFailed) {
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                .await;
            return Err(not_supported(&format!(
                "Upgrading a cluster when status is \"{}\"",
                status_text(c.data.status)
            )));
        }
        tracing::debug!(
            rollback,
            "cluster_upgrade: rollback is not passed to the driver (Magnum quirk)"
        );
        let scope = Scope::from(ctx);
        let (template, driver) = self.driver_of(&scope, &c.data).await?;
        // What a driver's NotSupported restores (the statuses are saved before the call).
        let before_status = (
            c.data.status,
            c.data.status_reason.clone(),
            ng.data.status,
            ng.data.status_reason.clone(),
        );

        let result = async {
            self.notifier
                .notify_cluster_operation(ctx, Action::Update, Outcome::Pending, &c.data)
                .await;
            // UPDATE_IN_PROGRESS before the driver call (Magnum saves it after), as in
            // resize: a conductor killed during the call leaves the cluster in progress for
            // the status sync to finish or the operation timeout to fail.
            set_nodegroup_status(&mut ng, ClusterStatus::UpdateInProgress);
            save_nodegroup(&self.db, &mut ng).await?;
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            save_cluster(&self.db, &mut c).await?;
            self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
            let ngs = self.nodegroups_of(&scope, &c.data).await?;
            let dctx = DriverContext {
                request: ctx,
                template: &template,
                nodegroups: &ngs,
            };
            let (before_c, before_ng) = (c.data.clone(), ng.data.clone());
            let res = self
                .bounded(
                    driver.name(),
                    "upgrade_cluster",
                    driver.upgrade_cluster(
                        &dctx,
                        &mut c.data,
                        &cluster_template.data,
                        max_batch_size,
                        &mut ng.data,
                        false,
                    ),
                )
                .await;
            touch_cluster_diff(&mut c, &before_c);
            touch_nodegroup_diff(&mut ng, &before_ng);
            let writes = res?;
            apply_writes(
                &self.db,
                c.data.uuid.as_deref().unwrap_or_default(),
                &writes,
            )
            .await?;
            set_cluster_status(&mut c, ClusterStatus::UpdateInProgress);
            set_nodegroup_status(&mut ng, ClusterStatus::UpdateInProgress);
            set_cluster_reason(&mut c, None);
            Ok::<(), MagnumError>(())
        }
        .await;

        match result {
            Ok(()) => {}
            Err(e) if is_not_supported(e.kind()) => {
                // No state change for a driver that cannot upgrade: the statuses saved
                // before the call go back.
                let (cs, cr, ns, nr) = before_status;
                if let Some(cs) = cs {
                    set_cluster_status(&mut c, cs);
                }
                set_cluster_reason(&mut c, cr);
                self.save_or_log(&mut c).await;
                if let Some(ns) = ns {
                    set_nodegroup_status(&mut ng, ns);
                }
                set_nodegroup_reason(&mut ng, nr);
                self.save_ng_or_log(&mut ng).await;
                self.notifier
                    .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                    .await;
                return Err(e);
            }
            Err(e) => {
                let reason = e.message().to_string();
                set_cluster_status(&mut c, ClusterStatus::UpdateFailed);
                set_cluster_reason(&mut c, Some(reason.clone()));
                self.save_or_log(&mut c).await;
                set_nodegroup_status(&mut ng, ClusterStatus::UpdateFailed);
                set_nodegroup_reason(&mut ng, Some(reason));
                self.save_ng_or_log(&mut ng).await;
                self.notifier
                    .notify_cluster_operation(ctx, Action::Update, Outcome::Failure, &c.data)
                    .await;
                return Err(e);
            }
        }
        save_nodegroup(&self.db, &mut ng).await?;
        save_cluster(&self.db, &mut c).await?;
        self.mark_started(&c.data, ClusterStatus::UpdateInProgress);
        Ok(c.data)
    }

    /// `cluster.default_ng_worker`: the first default nodegroup whose role is not master.
    async fn default_worker(
        &self,
        scope: &Scope,
        cluster: &Cluster,
    ) -> Result<NodeGroup, MagnumError> {
        let uuid = cluster.uuid.as_deref().unwrap_or_default();
        let filters = NodeGroupFilters {
            is_default: Some(true),
            ..NodeGroupFilters::default()
        };
        ng_db::list(&self.db, scope, uuid, &filters, &Page::all())
            .await?
            .into_iter()
            .find(|n| n.role.as_deref() != Some(NodeGroupRole::MASTER))
            .ok_or_else(|| MagnumError::internal("list index out of range"))
    }

    /// A save inside an `except:` block: its own failure is logged, the original error wins.
    pub(crate) async fn save_or_log(&self, c: &mut Obj<Cluster>) {
        if let Err(e) = save_cluster(&self.db, c).await {
            tracing::error!(cluster = ?c.data.uuid, error = %e, "cannot save the cluster's failure");
        }
    }

    pub(crate) async fn save_ng_or_log(&self, ng: &mut Obj<NodeGroup>) {
        if let Err(e) = save_nodegroup(&self.db, ng).await {
            tracing::error!(nodegroup = %ng.data.uuid, error = %e, "cannot save the nodegroup's failure");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Option<StringMap> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn default_nodegroups_follow_magnum() {
        let cluster = Cluster {
            uuid: Some("c-uuid".into()),
            project_id: Some("p".into()),
            labels: labels(&[("min_node_count", "2"), ("k", "v")]),
            flavor_id: Some("".into()),
            master_flavor_id: Some("m-big".into()),
            docker_volume_size: Some(0),
            ..Cluster::default()
        };
        let template = ClusterTemplate {
            image_id: Some("img".into()),
            flavor_id: Some("t-small".into()),
            master_flavor_id: Some("t-master".into()),
            docker_volume_size: Some(20),
            ..ClusterTemplate::default()
        };
        let m = default_nodegroup(&cluster, &template, 3, true).unwrap_or_default();
        assert_eq!(m.name, "default-master");
        assert_eq!(m.role.as_deref(), Some("master"));
        assert_eq!(m.flavor_id.as_deref(), Some("m-big"));
        assert_eq!(m.min_node_count, None);
        assert_eq!(m.node_count, Some(3));
        assert_eq!(m.docker_volume_size, Some(20));
        assert_eq!(m.image_id.as_deref(), Some("img"));
        assert_eq!(m.is_default, Some(true));
        assert_eq!(m.status, Some(ClusterStatus::CreateInProgress));
        assert_eq!(m.cluster_id, "c-uuid");
        assert_eq!(m.labels, cluster.labels);
        let w = default_nodegroup(&cluster, &template, 5, false).unwrap_or_default();
        assert_eq!(w.name, "default-worker");
        assert_eq!(w.flavor_id.as_deref(), Some("t-small"));
        assert_eq!(w.min_node_count, Some(2));

        let bad = Cluster {
            labels: labels(&[("min_node_count", "two")]),
            ..cluster
        };
        let e = default_nodegroup(&bad, &template, 1, false).err();
        assert_eq!(
            e.map(|e| e.message().to_string()).as_deref(),
            Some("invalid literal for int() with base 10: 'two'")
        );
        assert!(default_nodegroup(&bad, &template, 1, true).is_ok());
    }
}
