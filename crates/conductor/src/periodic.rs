//! The periodic loops (`magnum/service/periodic.py`): the cluster status sync with the deletion cascade
//! (`sync_cluster_status`, every 10 s in Magnum) and the health poll
//! (`sync_cluster_health_status`, every 60 s).
//!
//! Each round lists the clusters with an all-tenants admin context and handles them
//! concurrently, at most [`ConductorSettings::sync_concurrency`] at a time, every driver call
//! bounded by [`ConductorSettings::driver_call_timeout`]; errors are logged and the round goes
//! on, as oslo.service's periodic tasks swallow them.
//!
//! Beyond Magnum: an operation still in progress after its limit is marked `*_FAILED` with a
//! `status_reason` saying it timed out (`CREATE_IN_PROGRESS`: the cluster's `create_timeout`
//! minutes from `created_at`; anything else: [`ConductorSettings::operation_timeout`] from when
//! the operation started), so no cluster stays in progress forever.
//!
//! [`ConductorSettings::sync_concurrency`]: crate::ConductorSettings::sync_concurrency
//! [`ConductorSettings::driver_call_timeout`]: crate::ConductorSettings::driver_call_timeout
//! [`ConductorSettings::operation_timeout`]: crate::ConductorSettings::operation_timeout

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::NaiveDateTime;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::NodeGroup;
use openkeel_core::objects::{Cluster, ClusterStatus, ClusterTemplate};
use openkeel_db::{
    cluster as cluster_db, cluster_template, nodegroup as ng_db, ClusterFilters, Page, Scope,
};
use openkeel_drivers::{DriverContext, NodeGroupReport, StatusChange, StatusReport, Writes};
use tokio::sync::{watch, Semaphore};
use tokio::task::{JoinHandle, JoinSet};

use crate::notify::{Action, Outcome};
use crate::ownership::Membership;
use crate::save::{apply_writes, write_cluster_diff};
use crate::{admin_context, Conductor};

/// What one status-sync round did (for logs and tests).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncReport {
    /// Clusters in progress that were looked at.
    pub checked: usize,
    /// Clusters whose status changed (completed, failed, or timed out).
    pub changed: usize,
    /// Clusters removed after `DELETE_COMPLETE`.
    pub deleted: usize,
    /// Clusters marked failed by OpenKeel's operation timeout.
    pub timed_out: usize,
    /// Clusters whose sync failed (logged).
    pub errors: usize,
    /// Clusters whose driver answered with a transient error (unchanged, retried next tick).
    pub transient: usize,
    /// Clusters skipped because an operation on them was running.
    pub busy: usize,
    /// Clusters in progress left to the other live conductors ([`crate::ownership`]).
    pub others: usize,
}

/// The outcome of one cluster's sync.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum One {
    /// An operation held the cluster's lock: looked at again on the next tick.
    Busy,
    Unchanged,
    Changed,
    Deleted,
    TimedOut,
}

/// A tick's nodegroups (by cluster uuid) and templates (by uuid).
struct Known {
    ngs: std::collections::HashMap<String, Vec<NodeGroup>>,
    templates: std::collections::HashMap<String, ClusterTemplate>,
}

impl Known {
    fn of(&self, cluster: &Cluster) -> (Vec<NodeGroup>, Option<ClusterTemplate>) {
        let ngs = cluster
            .uuid
            .as_deref()
            .and_then(|u| self.ngs.get(u))
            .cloned()
            .unwrap_or_default();
        let template = cluster
            .cluster_template_id
            .as_deref()
            .and_then(|t| self.templates.get(t))
            .cloned();
        (ngs, template)
    }
}

/// The statuses the health poll looks at (`periodic.py:194-205`).
const HEALTH_STATUSES: &[ClusterStatus] = &[
    ClusterStatus::CreateInProgress,
    ClusterStatus::CreateFailed,
    ClusterStatus::CreateComplete,
    ClusterStatus::UpdateInProgress,
    ClusterStatus::UpdateComplete,
    ClusterStatus::UpdateFailed,
    ClusterStatus::DeleteInProgress,
    ClusterStatus::DeleteFailed,
    ClusterStatus::RollbackInProgress,
];

fn failed_of(s: ClusterStatus) -> ClusterStatus {
    match s {
        ClusterStatus::CreateInProgress => ClusterStatus::CreateFailed,
        ClusterStatus::DeleteInProgress => ClusterStatus::DeleteFailed,
        ClusterStatus::RollbackInProgress => ClusterStatus::RollbackFailed,
        ClusterStatus::UpdateInProgress => ClusterStatus::UpdateFailed,
        other => other,
    }
}

/// The report that fails the operation in progress: the cluster and its nodegroups in
/// progress go to their `*_FAILED` status with `reason`.
/// The reason of a create interrupted before its driver was called ([`Conductor::overdue`]).
pub const INTERRUPTED_CREATE: &str =
    "Create interrupted: the conductor running it stopped before the \
     cluster driver was called, so nothing was created for this cluster; openkeel-conductor \
     marked it CREATE_FAILED. Delete the cluster and create it again.";

fn failure_report(cluster: &Cluster, nodegroups: &[NodeGroup], reason: &str) -> StatusReport {
    let mut report = StatusReport::unchanged();
    if let Some(s) = cluster.status.filter(|s| s.is_in_progress()) {
        report.status = Some(StatusChange {
            status: failed_of(s),
            reason: Some(reason.to_string()),
        });
    }
    for ng in nodegroups {
        if let Some(s) = ng.status.filter(|s| s.is_in_progress()) {
            let mut n = NodeGroupReport::new(ng.uuid.clone());
            n.status = Some(StatusChange {
                status: failed_of(s),
                reason: Some(reason.to_string()),
            });
            report.nodegroups.push(n);
        }
    }
    report
}

/// The cluster as the report leaves it, and the nodegroup writes (the stored rows with the
/// reported fields; rows the report names that are not stored are ignored).
fn merge_report(
    cluster: &Cluster,
    nodegroups: &[NodeGroup],
    report: StatusReport,
) -> (Cluster, Writes) {
    let mut new = cluster.clone();
    if let Some(change) = report.status {
        new.status = Some(change.status);
        new.status_reason = change.reason;
    }
    if let Some(a) = report.api_address {
        new.api_address = Some(a);
    }
    if let Some(v) = report.coe_version {
        new.coe_version = Some(v);
    }
    let mut writes = Writes::none();
    for r in report.nodegroups {
        let Some(stored) = nodegroups.iter().find(|n| n.uuid == r.uuid) else {
            continue;
        };
        let mut n = stored.clone();
        if let Some(change) = r.status {
            n.status = Some(change.status);
            n.status_reason = change.reason;
        }
        if let Some(c) = r.node_count {
            n.node_count = Some(c);
        }
        if let Some(a) = r.node_addresses {
            n.node_addresses = Some(a);
        }
        if n != *stored {
            writes.nodegroups.push(n);
        }
    }
    writes.destroy_nodegroups = report.destroy_nodegroups;
    (new, writes)
}

/// "60 minutes" / "90 seconds".
fn human(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 60 && s % 60 == 0 {
        let m = s / 60;
        format!("{m} minute{}", if m == 1 { "" } else { "s" })
    } else if s >= 1 {
        format!("{s} second{}", if s == 1 { "" } else { "s" })
    } else {
        format!("{} ms", d.as_millis())
    }
}

impl Conductor {
    /// One round of `sync_cluster_status`: every cluster in `CREATE_/UPDATE_/DELETE_/
    /// ROLLBACK_IN_PROGRESS` is given to its driver's `update_cluster_status`, the answer is
    /// written, `*_COMPLETE` / `*_FAILED` are notified, `DELETE_COMPLETE` clusters are removed
    /// with their nodegroups (and certificates), and overdue operations are failed.
    pub async fn sync_cluster_status(self: &Arc<Self>) -> SyncReport {
        let started = std::time::Instant::now();
        let report = self.sync_cluster_status_sweep().await;
        self.metrics
            .status_sync_duration
            .observe(&[], started.elapsed().as_secs_f64());
        report
    }

    /// [`Conductor::sync_cluster_status`] without the timing.
    async fn sync_cluster_status_sweep(self: &Arc<Self>) -> SyncReport {
        let scope = Scope::admin_all_tenants();
        let clusters = match cluster_db::list(
            &self.db,
            &scope,
            &ClusterFilters::status(ClusterStatus::IN_PROGRESS),
            &Page::all(),
        )
        .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "Ignore error when syncing up cluster status.");
                return SyncReport {
                    errors: 1,
                    ..SyncReport::default()
                };
            }
        };
        let Some((clusters, others)) = self.owned(clusters, "sync_cluster_status").await else {
            return SyncReport {
                errors: 1,
                ..SyncReport::default()
            };
        };
        {
            let mut since = self.since();
            since.retain(|uuid, _| {
                clusters
                    .iter()
                    .any(|c| c.uuid.as_deref() == Some(uuid.as_str()))
            });
        }
        let mut report = SyncReport {
            checked: clusters.len(),
            others,
            ..SyncReport::default()
        };
        let Some(known) = self.prefetch(&clusters, "sync_cluster_status").await else {
            report.errors = 1;
            return report;
        };
        let job_timeout = self.settings.driver_call_timeout * 2 + Duration::from_secs(30);
        let results = self
            .for_each_bounded(clusters, move |me, cluster| {
                let (ngs, template) = known.of(&cluster);
                async move {
                    let uuid = cluster.uuid.clone().unwrap_or_default();
                    let job = me.sync_one(cluster, ngs, template);
                    match tokio::time::timeout(job_timeout, job).await {
                        Ok(Ok(one)) => Some(one),
                        Ok(Err(e)) => {
                            tracing::warn!(cluster = %uuid, error = %e, "cluster status sync failed");
                            None
                        }
                        Err(_) => {
                            tracing::warn!(cluster = %uuid, "cluster status sync timed out");
                            None
                        }
                    }
                }
            })
            .await;
        for r in results {
            if matches!(r, Some((_, true))) {
                report.transient += 1;
            }
            match r.map(|(one, _)| one) {
                Some(One::Busy) => report.busy += 1,
                Some(One::Unchanged) => {}
                Some(One::Changed) => report.changed += 1,
                Some(One::Deleted) => {
                    report.changed += 1;
                    report.deleted += 1;
                }
                Some(One::TimedOut) => {
                    report.changed += 1;
                    report.timed_out += 1;
                }
                None => report.errors += 1,
            }
        }
        if report.changed > 0 || report.errors > 0 || report.transient > 0 {
            tracing::info!(?report, "cluster status sync");
        } else {
            tracing::debug!(?report, "cluster status sync");
        }
        report
    }

    /// The nodegroups and templates of a tick's clusters, read at once (one statement each
    /// per 10,000 clusters) instead of two per cluster; `None` (tick skipped) on a database
    /// error.
    async fn prefetch(&self, clusters: &[Cluster], task: &str) -> Option<Arc<Known>> {
        let scope = Scope::admin_all_tenants();
        let uuids: Vec<&str> = clusters.iter().filter_map(|c| c.uuid.as_deref()).collect();
        let mut templates: Vec<&str> = clusters
            .iter()
            .filter_map(|c| c.cluster_template_id.as_deref())
            .collect();
        templates.sort_unstable();
        templates.dedup();
        let read = async {
            let ngs = ng_db::list_for_clusters(&self.db, &scope, &uuids).await?;
            let templates = cluster_template::list_by_uuids(&self.db, &scope, &templates).await?;
            Ok::<_, openkeel_db::DbError>(Known { ngs, templates })
        };
        match read.await {
            Ok(k) => Some(Arc::new(k)),
            Err(e) => {
                tracing::warn!(task, error = %e, "cannot read the clusters' nodegroups and templates; tick skipped");
                None
            }
        }
    }

    /// The cluster's template (read with the tick's) and its driver (`get_driver_for_cluster`);
    /// no template is `ClusterTemplateNotFound`, as the look-up one at a time answered.
    fn driver_for(
        &self,
        cluster: &Cluster,
        template: Option<ClusterTemplate>,
    ) -> Result<(ClusterTemplate, Arc<dyn openkeel_drivers::Driver>), MagnumError> {
        let template = template.ok_or_else(|| {
            MagnumError::from(openkeel_db::DbError::ClusterTemplateNotFound(
                cluster
                    .cluster_template_id
                    .clone()
                    .unwrap_or_else(|| "None".into()),
            ))
        })?;
        let driver = self.drivers.get_driver_for_template(&template)?;
        Ok((template, driver))
    }

    /// The clusters of `clusters` whose periodic work is this conductor's on this tick, and
    /// how many were left to the other live conductors; `None` (tick skipped) when the live
    /// set cannot be read.
    async fn owned(&self, clusters: Vec<Cluster>, task: &str) -> Option<(Vec<Cluster>, usize)> {
        let members = match Membership::read(
            &self.db,
            self.settings.host.as_deref(),
            self.settings.service_down_time,
        )
        .await
        {
            Ok(m) => m,
            Err(e) => {
                tracing::warn!(task, error = %e, "cannot read the live conductors; tick skipped");
                return None;
            }
        };
        let total = clusters.len();
        let mine: Vec<Cluster> = clusters
            .into_iter()
            .filter(|c| members.owns(c.uuid.as_deref().unwrap_or_default()))
            .collect();
        tracing::debug!(
            task,
            conductors = members.size(),
            mine = mine.len(),
            others = total - mine.len(),
            "periodic round"
        );
        let others = total - mine.len();
        Some((mine, others))
    }

    /// `ClusterUpdateJob.update_status` for one cluster (as listed this tick, with its
    /// nodegroups and template read with the others'): a cluster whose operation is running
    /// in this conductor is skipped this tick; the driver is asked about the state read, and
    /// what it reports is written only under the cluster's lock and only if the cluster is
    /// still in that state, so it never lands over an operation that started meanwhile.
    async fn sync_one(
        self: &Arc<Self>,
        cluster: Cluster,
        ngs: Vec<NodeGroup>,
        template: Option<ClusterTemplate>,
    ) -> Result<(One, bool), MagnumError> {
        let ctx = admin_context();
        let scope = Scope::admin_all_tenants();
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let Some(_serial) = self.try_cluster_lock(&uuid) else {
            tracing::debug!(cluster = %uuid, "an operation is running: status sync skipped this tick");
            return Ok((One::Busy, false));
        };
        let mut transient = false;
        let report = match self.driver_for(&cluster, template) {
            Ok((template, driver)) => {
                let dctx = DriverContext {
                    request: &ctx,
                    template: &template,
                    nodegroups: &ngs,
                };
                tracing::debug!(cluster = %uuid, driver = driver.name(), "update_cluster_status");
                let call = driver.update_cluster_status(&dctx, &cluster);
                match self
                    .bounded(driver.name(), "update_cluster_status", call)
                    .await
                {
                    Ok(r) => r,
                    Err(e) if e.is_transient() => {
                        tracing::warn!(cluster = %uuid, driver = driver.name(), error = %e, "driver update_cluster_status failed; retried on the next tick");
                        transient = true;
                        StatusReport::unchanged()
                    }
                    Err(e) => {
                        tracing::warn!(cluster = %uuid, driver = driver.name(), error = %e, "driver update_cluster_status: the operation failed");
                        failure_report(&cluster, &ngs, e.message())
                    }
                }
            }
            // No template or no driver: nothing can complete the operation, but the timeout
            // below still applies, so the cluster does not stay in progress forever.
            Err(e) => {
                tracing::warn!(cluster = %uuid, error = %e, "no driver for the cluster");
                StatusReport::unchanged()
            }
        };
        let (new, writes) = merge_report(&cluster, &ngs, report);
        let overdue = new
            .status
            .filter(|s| s.is_in_progress())
            .and_then(|s| self.overdue(&cluster, s).map(|reason| (s, reason)));
        if writes.is_empty() && new == cluster && overdue.is_none() {
            return Ok((One::Unchanged, transient));
        }
        // Something to write: under the cluster's lock across the conductors, and only if no
        // operation (in this conductor or another) changed the cluster since it was read.
        let Some(server) = self.try_server_lock(&uuid).await? else {
            tracing::debug!(cluster = %uuid, "an operation is running in another conductor: status sync skipped this tick");
            return Ok((One::Busy, transient));
        };
        let now = cluster_db::get_by_uuid(&self.db, &scope, &uuid).await;
        let moved = match &now {
            Ok(c) => *c != cluster || self.nodegroups_of(&scope, c).await? != ngs,
            Err(e) if e.is_not_found() => true,
            Err(_) => false,
        };
        let r = match now {
            Err(e) if !e.is_not_found() => Err(e.into()),
            _ if moved => {
                tracing::debug!(cluster = %uuid, "an operation changed the cluster meanwhile: status sync skipped this tick");
                Ok((One::Busy, transient))
            }
            _ => self
                .write_sync(&ctx, &uuid, cluster, new, writes, overdue)
                .await
                .map(|one| (one, transient)),
        };
        server.release().await;
        r
    }

    /// The status sync's writes for one cluster (under its lock): the report's, the operation
    /// timeout's, the notification of a final status, the deletion cascade.
    async fn write_sync(
        self: &Arc<Self>,
        ctx: &openkeel_core::context::RequestContext,
        uuid: &str,
        cluster: Cluster,
        mut new: Cluster,
        writes: Writes,
        overdue: Option<(ClusterStatus, String)>,
    ) -> Result<One, MagnumError> {
        let scope = Scope::admin_all_tenants();
        apply_writes(&self.db, uuid, &writes).await?;

        let mut outcome = One::Unchanged;
        if let Some((status, reason)) = overdue {
            tracing::warn!(cluster = %uuid, status = status.as_str(), "{reason}");
            let ngs = self.nodegroups_of(&scope, &cluster).await?;
            let (n, writes) = merge_report(&new, &ngs, failure_report(&new, &ngs, &reason));
            apply_writes(&self.db, uuid, &writes).await?;
            new = n;
            outcome = One::TimedOut;
        }
        let deleting = new.status == Some(ClusterStatus::DeleteComplete);
        if !deleting {
            write_cluster_diff(&self.db, &cluster, &new).await?;
        }
        if new.status != cluster.status && outcome == One::Unchanged {
            outcome = One::Changed;
        }

        if let Some(status) = new.status.filter(|_| new.status != cluster.status) {
            let text = status.as_str();
            let outcome_kind = if text.ends_with("_COMPLETE") {
                Some(Outcome::Success)
            } else if text.ends_with("_FAILED") {
                Some(Outcome::Failure)
            } else {
                None
            };
            if let Some(o) = outcome_kind {
                match Action::for_final_status(status) {
                    Some(action) => {
                        self.notifier
                            .notify_cluster_operation(ctx, action, o, &new)
                            .await
                    }
                    None => tracing::warn!(
                        cluster = %uuid,
                        status = text,
                        "no notification action for this status (Magnum raises KeyError here)"
                    ),
                }
            }
        }

        if deleting {
            if let Some(certs) = &self.certificates {
                if let Err(e) = certs.delete_certificates(ctx, &cluster).await {
                    tracing::warn!(cluster = %uuid, error = %e, "cannot delete the cluster's certificates");
                }
            }
            match cluster_db::destroy_with_nodegroups(&self.db, uuid).await {
                Ok(()) => {}
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e.into()),
            }
            self.since().remove(uuid);
            tracing::info!(cluster = %uuid, "cluster deleted");
            return Ok(One::Deleted);
        }
        Ok(outcome)
    }

    /// The timeout reason when `cluster` has been in `status` for longer than allowed.
    fn overdue(&self, cluster: &Cluster, status: ClusterStatus) -> Option<String> {
        let now = chrono::Utc::now().naive_utc();
        // A create whose conductor stopped before the driver was called: no stack id, and
        // (the status sync only writes under the cluster's lock, which a running create
        // holds from before its insert until its end) no operation on it anywhere. Nothing
        // will ever complete it; it fails now instead of after its whole create_timeout.
        if status == ClusterStatus::CreateInProgress
            && cluster.stack_id.as_deref().is_none_or(str::is_empty)
        {
            let age = (now - cluster.created_at.unwrap_or(now))
                .to_std()
                .unwrap_or(Duration::ZERO);
            if age > self.settings.driver_call_timeout * 2 {
                return Some(INTERRUPTED_CREATE.to_string());
            }
        }
        let (start, limit, what): (NaiveDateTime, Duration, &str) =
            if status == ClusterStatus::CreateInProgress {
                let limit = match cluster.create_timeout {
                    Some(m) if m > 0 => Duration::from_secs(u64::from(m.unsigned_abs()) * 60),
                    _ => self.settings.default_create_timeout,
                };
                (cluster.created_at.unwrap_or(now), limit, "create_timeout")
            } else {
                let uuid = cluster.uuid.clone().unwrap_or_default();
                let first_seen = cluster.updated_at.or(cluster.created_at).unwrap_or(now);
                let mut since = self.since();
                let entry = since.entry(uuid).or_insert((status, first_seen));
                if entry.0 != status {
                    *entry = (status, first_seen);
                }
                (
                    entry.1,
                    self.settings.operation_timeout,
                    "operation timeout",
                )
            };
        let elapsed = (now - start).to_std().unwrap_or(Duration::ZERO);
        if elapsed <= limit {
            return None;
        }
        Some(format!(
            "Timed out: the operation did not finish within {} ({what}); the cluster had been {} since {} UTC, so openkeel-conductor marked it {}.",
            human(limit),
            status.as_str(),
            start.format("%Y-%m-%d %H:%M:%S"),
            failed_of(status).as_str(),
        ))
    }

    /// One round of `sync_cluster_health_status`: for clusters in the statuses Magnum polls,
    /// ask the driver's monitor and save `health_status` / `health_status_reason` when it
    /// reports a status. Returns how many clusters were updated.
    pub async fn sync_cluster_health(self: &Arc<Self>) -> usize {
        let scope = Scope::admin_all_tenants();
        let clusters = match cluster_db::list(
            &self.db,
            &scope,
            &ClusterFilters::status(HEALTH_STATUSES),
            &Page::all(),
        )
        .await
        {
            Ok(c) => c,
            Err(e) => {
                tracing::warn!(error = %e, "Ignore error when syncing up cluster health status.");
                return 0;
            }
        };
        let Some((clusters, _)) = self.owned(clusters, "sync_cluster_health_status").await else {
            return 0;
        };
        let Some(known) = self.prefetch(&clusters, "sync_cluster_health_status").await else {
            return 0;
        };
        let results = self
            .for_each_bounded(clusters, |me, cluster| {
                let (ngs, template) = known.of(&cluster);
                async move {
                    let uuid = cluster.uuid.clone().unwrap_or_default();
                    match me.health_one(cluster, ngs, template).await {
                        Ok(updated) => updated,
                        Err(e) => {
                            tracing::warn!(cluster = %uuid, error = %e, "Skip pulling data from cluster");
                            false
                        }
                    }
                }
            })
            .await;
        results.into_iter().filter(|u| *u).count()
    }

    async fn health_one(
        self: &Arc<Self>,
        cluster: Cluster,
        ngs: Vec<NodeGroup>,
        template: Option<ClusterTemplate>,
    ) -> Result<bool, MagnumError> {
        let ctx = admin_context();
        let (template, driver) = self.driver_for(&cluster, template)?;
        let dctx = DriverContext {
            request: &ctx,
            template: &template,
            nodegroups: &ngs,
        };
        let report = self
            .bounded(
                driver.name(),
                "poll_health_status",
                driver.poll_health_status(&dctx, &cluster),
            )
            .await?;
        let Some(report) = report.filter(|r| r.health_status.is_some()) else {
            return Ok(false);
        };
        let mut new = cluster.clone();
        new.health_status = report.health_status;
        new.health_status_reason = report.health_status_reason;
        let uuid = cluster.uuid.as_deref().unwrap_or_default();
        cluster_db::update(
            &self.db,
            uuid,
            &new,
            &["health_status", "health_status_reason"],
        )
        .await?;
        // node counts the monitor saw change (the autoscaler's): only `node_count` differs
        let mut writes = Writes::default();
        for r in &report.nodegroups {
            if let (Some(ng), Some(count)) = (ngs.iter().find(|n| n.uuid == r.uuid), r.node_count) {
                let mut ng = ng.clone();
                ng.node_count = Some(count);
                writes.nodegroups.push(ng);
            }
        }
        apply_writes(&self.db, uuid, &writes).await?;
        Ok(true)
    }

    /// Run `job` for every cluster, at most `sync_concurrency` at a time; results in any order.
    async fn for_each_bounded<T, F, Fut>(self: &Arc<Self>, clusters: Vec<Cluster>, job: F) -> Vec<T>
    where
        T: Send + 'static,
        F: Fn(Arc<Conductor>, Cluster) -> Fut,
        Fut: Future<Output = T> + Send + 'static,
    {
        let permits = Arc::new(Semaphore::new(self.settings.sync_concurrency.max(1)));
        let mut set = JoinSet::new();
        let mut out = Vec::with_capacity(clusters.len());
        for cluster in clusters {
            let Ok(permit) = permits.clone().acquire_owned().await else {
                break;
            };
            let fut = job(self.clone(), cluster);
            set.spawn(async move {
                let r = fut.await;
                drop(permit);
                r
            });
        }
        while let Some(r) = set.join_next().await {
            match r {
                Ok(v) => out.push(v),
                Err(e) => tracing::error!(error = %e, "periodic job panicked"),
            }
        }
        out
    }
}

/// Resolves when `rx` says `true` or its sender is gone.
async fn stopped(rx: &mut watch::Receiver<bool>) {
    loop {
        if *rx.borrow_and_update() {
            return;
        }
        if rx.changed().await.is_err() {
            return;
        }
    }
}

fn spawn_loop<F, Fut>(
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
    name: &'static str,
    round: F,
) -> JoinHandle<()>
where
    F: Fn() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    let interval = interval.max(Duration::from_millis(1));
    tokio::spawn(async move {
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tracing::debug!(task = name, ?interval, "periodic task started");
        loop {
            tokio::select! {
                _ = stopped(&mut shutdown) => break,
                _ = ticker.tick() => {
                    tokio::select! {
                        _ = stopped(&mut shutdown) => break,
                        _ = round() => {}
                    }
                }
            }
        }
        tracing::debug!(task = name, "periodic task stopped");
    })
}

/// Run [`Conductor::sync_cluster_status`] every `interval` (Magnum: 10 s, first round at once)
/// until `shutdown` becomes `true` (or its sender is dropped). A round in progress at shutdown
/// is abandoned between two writes.
pub fn spawn_periodic(
    conductor: Arc<Conductor>,
    interval: Duration,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    spawn_loop(interval, shutdown, "sync_cluster_status", move || {
        let c = conductor.clone();
        async move {
            c.sync_cluster_status().await;
        }
    })
}

/// Run [`Conductor::sync_cluster_health`] every `interval` (Magnum: 60 s, the default of
/// `[kubernetes] health_polling_interval`, which Magnum reads at import time) until shutdown.
pub fn spawn_health_periodic(
    conductor: Arc<Conductor>,
    interval: Duration,
    shutdown: watch::Receiver<bool>,
) -> JoinHandle<()> {
    spawn_loop(
        interval,
        shutdown,
        "sync_cluster_health_status",
        move || {
            let c = conductor.clone();
            async move {
                c.sync_cluster_health().await;
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human(Duration::from_secs(3600)), "60 minutes");
        assert_eq!(human(Duration::from_secs(60)), "1 minute");
        assert_eq!(human(Duration::from_secs(90)), "90 seconds");
        assert_eq!(human(Duration::from_millis(20)), "20 ms");
        assert_eq!(
            failed_of(ClusterStatus::RollbackInProgress),
            ClusterStatus::RollbackFailed
        );
    }
}
