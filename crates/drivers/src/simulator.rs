//! The simulator driver (`simulator`): the embedded default's cluster driver.
//!
//! **It provisions nothing.** No server, network, load balancer or Kubernetes object is ever
//! created, and no cloud API is called: every operation only records that it started, and the
//! periodic status sync then moves the cluster (and its nodegroups) from `*_IN_PROGRESS` to
//! `*_COMPLETE`, filling in plausible but fake values — `stack_id` (`kube-xxxxx`),
//! `api_address` (`https://<fake ip>:6443`), one private IPv4 address per node in each
//! nodegroup's `node_addresses` (so masters and workers both get addresses), and `coe_version`
//! (the `kube_tag` label, else [`DEFAULT_KUBE_VERSION`]). It exists so that the API, the
//! conductor and the whole lifecycle can be exercised without a cloud. It is registered only
//! when `[openkeel] enable_simulator_driver` is true.
//!
//! Behaviour is steered with cluster (or nodegroup) labels:
//!
//! | label | effect |
//! |---|---|
//! | `simulator_fail_on` | comma list of [`Operation`] names: that operation is accepted but ends in `*_FAILED` on the status tick, with a `status_reason` naming the label |
//! | `simulator_raise_on` | comma list of operation names: the driver call itself fails, so the conductor's own failure handling runs (`*_FAILED` at once, node counts restored, ...) |
//! | `simulator_ticks` | number of status ticks an operation stays in progress (default 1: it completes on the first tick) |
//! | `simulator_call_seconds` | seconds each operation's driver call (create, update, delete, resize, upgrade, the nodegroup operations, the CA rotation) takes before it returns, as against a slow cloud |
//! | `simulator_health` | `HEALTHY` / `UNHEALTHY` / `UNKNOWN`: what the health poll reports (without it the simulator has no monitor, like Magnum's default driver, and `health_status` stays unset) |
//!
//! Which operation is in progress is remembered in memory; after a restart it is inferred
//! from the stored statuses (the tick count starts again, plus one tick). See
//! `docs/simulator.md`.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use async_trait::async_trait;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{
    Cluster, ClusterHealthStatus, ClusterStatus, ClusterTemplate, NodeGroup, NodeGroupRole,
    StringMap,
};

use crate::{
    Driver, DriverContext, DriverResult, HealthReport, NodeGroupReport, ProvidedType, ScaleManager,
    StatusChange, StatusReport, Writes,
};

/// The simulator's entry-point name.
pub const NAME: &str = "simulator";
/// Label: operations that end in `*_FAILED` on the status tick.
pub const LABEL_FAIL_ON: &str = "simulator_fail_on";
/// Label: operations whose driver call fails immediately.
pub const LABEL_RAISE_ON: &str = "simulator_raise_on";
/// Label: status ticks an operation stays in progress.
pub const LABEL_TICKS: &str = "simulator_ticks";
/// Label: seconds each operation's driver call takes before it returns (a slow cloud).
pub const LABEL_CALL_SECONDS: &str = "simulator_call_seconds";
/// Label: the health status the simulator's monitor reports.
pub const LABEL_HEALTH: &str = "simulator_health";
/// With [`LABEL_HEALTH`]: the node count the health poll reports for the default worker
/// nodegroup, as an autoscaler that changed it would (the Cluster API driver's monitor
/// reports its MachineDeployment's replicas).
pub const LABEL_AUTOSCALED: &str = "simulator_autoscaled_node_count";
/// `coe_version` when neither the cluster nor its template has a `kube_tag` label.
pub const DEFAULT_KUBE_VERSION: &str = "v1.30.4";

/// The operations the simulator tells apart (the names used in the labels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operation {
    Create,
    Update,
    Delete,
    Resize,
    Upgrade,
    NodegroupCreate,
    NodegroupUpdate,
    NodegroupDelete,
    RotateCaCertificate,
    Rollback,
}

impl Operation {
    pub const ALL: &'static [Operation] = &[
        Operation::Create,
        Operation::Update,
        Operation::Delete,
        Operation::Resize,
        Operation::Upgrade,
        Operation::NodegroupCreate,
        Operation::NodegroupUpdate,
        Operation::NodegroupDelete,
        Operation::RotateCaCertificate,
        Operation::Rollback,
    ];

    /// The name used in `simulator_fail_on` / `simulator_raise_on`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "create",
            Operation::Update => "update",
            Operation::Delete => "delete",
            Operation::Resize => "resize",
            Operation::Upgrade => "upgrade",
            Operation::NodegroupCreate => "nodegroup_create",
            Operation::NodegroupUpdate => "nodegroup_update",
            Operation::NodegroupDelete => "nodegroup_delete",
            Operation::RotateCaCertificate => "rotate_ca_certificate",
            Operation::Rollback => "rollback",
        }
    }

    /// The driver method that starts it.
    pub fn method(self) -> &'static str {
        match self {
            Operation::Create => "create_cluster",
            Operation::Update | Operation::Rollback => "update_cluster",
            Operation::Delete => "delete_cluster",
            Operation::Resize => "resize_cluster",
            Operation::Upgrade => "upgrade_cluster",
            Operation::NodegroupCreate => "create_nodegroup",
            Operation::NodegroupUpdate => "update_nodegroup",
            Operation::NodegroupDelete => "delete_nodegroup",
            Operation::RotateCaCertificate => "rotate_ca_certificate",
        }
    }
}

#[derive(Debug, Clone)]
struct Pending {
    op: Operation,
    /// The nodegroup the operation is about (resize, upgrade, nodegroup_*).
    nodegroup: Option<String>,
    ticks: u32,
    /// Not recorded by a driver call but guessed from the statuses (after a restart, or in
    /// the instant between a handler saving `*_IN_PROGRESS` and calling the driver): such an
    /// operation waits one extra tick, so that the real record can replace it.
    inferred: bool,
}

/// The simulator driver. See the module documentation: it provisions nothing.
#[derive(Debug, Default)]
pub struct SimulatorDriver {
    /// In-progress operations by cluster uuid.
    pending: Mutex<HashMap<String, Pending>>,
}

impl SimulatorDriver {
    pub fn new() -> Self {
        SimulatorDriver::default()
    }

    fn pending(&self) -> MutexGuard<'_, HashMap<String, Pending>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Refuse the call when `simulator_raise_on` lists the operation; else remember it.
    async fn start(
        &self,
        cluster: &Cluster,
        nodegroup: Option<&NodeGroup>,
        op: Operation,
    ) -> Result<(), MagnumError> {
        let labels = [
            nodegroup.and_then(|n| n.labels.as_ref()),
            cluster.labels.as_ref(),
        ];
        if let Some(secs) = labels
            .iter()
            .flatten()
            .find_map(|l| l.get(LABEL_CALL_SECONDS))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
        {
            tokio::time::sleep(std::time::Duration::from_secs_f64(secs.min(3600.0))).await;
        }
        if label_list(&labels, LABEL_RAISE_ON)
            .iter()
            .any(|o| o == op.as_str())
        {
            return Err(MagnumError::internal(format!(
                "simulator: {} refused because label {LABEL_RAISE_ON} lists \"{}\"",
                op.method(),
                op.as_str()
            )));
        }
        let uuid = cluster.uuid.clone().unwrap_or_default();
        tracing::debug!(cluster = %uuid, operation = op.as_str(), "simulator: operation started");
        self.pending().insert(
            uuid,
            Pending {
                op,
                nodegroup: nodegroup.map(|n| n.uuid.clone()),
                ticks: 0,
                inferred: false,
            },
        );
        Ok(())
    }
}

#[async_trait]
impl Driver for SimulatorDriver {
    fn name(&self) -> &str {
        NAME
    }

    /// `(vm, ubuntu, kubernetes)` and the other tuples of the Cluster API driver's entry points
    /// (`ubuntu-focal`, `debian`, `flatcar`, `rockylinux`; magnum-cluster-api's
    /// `magnum_cluster_api/driver.py`).
    fn provides(&self) -> Vec<ProvidedType> {
        ["ubuntu", "ubuntu-focal", "debian", "flatcar", "rockylinux"]
            .iter()
            .map(|os| ProvidedType::new("vm", os, "kubernetes"))
            .collect()
    }

    async fn create_cluster(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _create_timeout: i32,
    ) -> DriverResult<Writes> {
        self.start(cluster, None, Operation::Create).await?;
        if cluster.stack_id.as_deref().is_none_or(str::is_empty) {
            let id = uuid::Uuid::new_v4().simple().to_string();
            cluster.stack_id = Some(format!("kube-{}", &id[..5]));
        }
        Ok(Writes::none())
    }

    async fn update_cluster(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _scale_manager: Option<&dyn ScaleManager>,
        rollback: bool,
    ) -> DriverResult<Writes> {
        let op = if rollback {
            Operation::Rollback
        } else {
            Operation::Update
        };
        self.start(cluster, None, op).await?;
        Ok(Writes::none())
    }

    /// Moves the cluster onto `cluster_template` (`cluster_template_id`, `kube_tag` label) and
    /// the nodegroup onto its image; `coe_version` follows on completion.
    async fn upgrade_cluster(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        cluster_template: &ClusterTemplate,
        _max_batch_size: i32,
        nodegroup: &mut NodeGroup,
        _rollback: bool,
    ) -> DriverResult<Writes> {
        self.start(cluster, Some(nodegroup), Operation::Upgrade)
            .await?;
        cluster.cluster_template_id = cluster_template.uuid.clone();
        if let Some(tag) = kube_tag(cluster_template.labels.as_ref()) {
            cluster
                .labels
                .get_or_insert_with(StringMap::new)
                .insert("kube_tag".into(), tag.to_string());
            nodegroup
                .labels
                .get_or_insert_with(StringMap::new)
                .insert("kube_tag".into(), tag.to_string());
        }
        nodegroup.image_id = cluster_template.image_id.clone();
        Ok(Writes::none())
    }

    async fn delete_cluster(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        self.start(cluster, None, Operation::Delete).await?;
        Ok(Writes::none())
    }

    async fn resize_cluster(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        _resize_manager: Option<&dyn ScaleManager>,
        _node_count: i32,
        _nodes_to_remove: &[String],
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.start(cluster, Some(nodegroup), Operation::Resize)
            .await?;
        Ok(Writes::none())
    }

    async fn create_nodegroup(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.start(cluster, Some(nodegroup), Operation::NodegroupCreate)
            .await?;
        Ok(Writes::none())
    }

    async fn update_nodegroup(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.start(cluster, Some(nodegroup), Operation::NodegroupUpdate)
            .await?;
        Ok(Writes::none())
    }

    /// Persists the `DELETE_IN_PROGRESS` status the conductor set (as a real driver does); the
    /// row is removed on the status tick.
    async fn delete_nodegroup(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
        nodegroup: &mut NodeGroup,
    ) -> DriverResult<Writes> {
        self.start(cluster, Some(nodegroup), Operation::NodegroupDelete)
            .await?;
        Ok(Writes {
            nodegroups: vec![nodegroup.clone()],
            destroy_nodegroups: Vec::new(),
        })
    }

    async fn update_cluster_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<StatusReport> {
        let Some(status) = cluster.status.filter(|s| s.is_in_progress()) else {
            return Ok(StatusReport::unchanged());
        };
        // create_cluster() has not returned yet (Magnum's drivers guard the same way).
        if status == ClusterStatus::CreateInProgress
            && cluster.stack_id.as_deref().is_none_or(str::is_empty)
        {
            return Ok(StatusReport::unchanged());
        }
        let uuid = cluster.uuid.clone().unwrap_or_default();
        let pending = {
            let mut map = self.pending();
            let entry = map
                .entry(uuid.clone())
                .or_insert_with(|| infer(status, ctx.nodegroups));
            entry.ticks += 1;
            entry.clone()
        };
        let ng_labels = pending
            .nodegroup
            .as_deref()
            .and_then(|u| ctx.nodegroups.iter().find(|n| n.uuid == u))
            .and_then(|n| n.labels.as_ref());
        let labels = [ng_labels, cluster.labels.as_ref()];
        let needed = ticks_needed(&labels) + u32::from(pending.inferred);
        if pending.ticks < needed {
            return Ok(StatusReport::unchanged());
        }
        self.pending().remove(&uuid);

        let op = pending.op;
        let mut report = StatusReport::unchanged();
        if label_list(&labels, LABEL_FAIL_ON)
            .iter()
            .any(|o| o == op.as_str())
        {
            let reason = format!(
                "simulator: the {} operation failed because label {LABEL_FAIL_ON} lists \"{}\"",
                op.as_str(),
                op.as_str()
            );
            tracing::info!(cluster = %uuid, operation = op.as_str(), "simulator: operation failed as requested");
            report.status = Some(StatusChange {
                status: failed(status),
                reason: Some(reason.clone()),
            });
            for ng in ctx.nodegroups {
                if let Some(s) = ng.status.filter(|s| s.is_in_progress()) {
                    let mut n = NodeGroupReport::new(ng.uuid.clone());
                    n.status = Some(StatusChange {
                        status: failed(s),
                        reason: Some(reason.clone()),
                    });
                    report.nodegroups.push(n);
                }
            }
            return Ok(report);
        }

        tracing::debug!(cluster = %uuid, operation = op.as_str(), "simulator: operation complete");
        report.status = Some(StatusChange {
            status: complete(status),
            reason: None,
        });
        if status == ClusterStatus::DeleteInProgress {
            return Ok(report);
        }
        let base = address_base(&uuid);
        let mut first_master: Option<String> = None;
        for (index, ng) in ctx.nodegroups.iter().enumerate() {
            if ng.status == Some(ClusterStatus::DeleteInProgress) {
                report.destroy_nodegroups.push(ng.uuid.clone());
                continue;
            }
            let mut n = NodeGroupReport::new(ng.uuid.clone());
            if let Some(s) = ng.status.filter(|s| s.is_in_progress()) {
                n.status = Some(StatusChange {
                    status: complete(s),
                    reason: None,
                });
            }
            let count = ng.node_count.unwrap_or(1).max(0);
            let addresses: Vec<String> = (0..count).map(|i| node_ip(base, index, i)).collect();
            if ng.role.as_deref() == Some(NodeGroupRole::MASTER) && first_master.is_none() {
                first_master = addresses.first().cloned();
            }
            n.node_addresses = Some(addresses);
            report.nodegroups.push(n);
        }
        if cluster.api_address.as_deref().is_none_or(str::is_empty) {
            let ip = if cluster.floating_ip_enabled.unwrap_or(true) {
                format!("203.0.113.{}", 2 + u32::from(base) % 250)
            } else {
                first_master.unwrap_or_else(|| node_ip(base, 0, 0))
            };
            report.api_address = Some(format!("https://{ip}:6443"));
        }
        report.coe_version = Some(
            kube_tag(cluster.labels.as_ref())
                .or_else(|| kube_tag(ctx.template.labels.as_ref()))
                .unwrap_or(DEFAULT_KUBE_VERSION)
                .to_string(),
        );
        Ok(report)
    }

    /// Like the Cluster API driver: any odd count of at least 1.
    fn validate_master_resize(&self, node_count: i32) -> Result<(), MagnumError> {
        self.validate_master_size(node_count)
    }

    /// Nothing to rotate: the simulator holds no credentials.
    async fn rotate_credential(
        &self,
        _ctx: &DriverContext<'_>,
        _cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        Ok(Writes::none())
    }

    async fn rotate_ca_certificate(
        &self,
        _ctx: &DriverContext<'_>,
        cluster: &mut Cluster,
    ) -> DriverResult<Writes> {
        self.start(cluster, None, Operation::RotateCaCertificate)
            .await?;
        Ok(Writes::none())
    }

    async fn poll_health_status(
        &self,
        ctx: &DriverContext<'_>,
        cluster: &Cluster,
    ) -> DriverResult<Option<HealthReport>> {
        let Some(value) = cluster.labels.as_ref().and_then(|l| l.get(LABEL_HEALTH)) else {
            return Ok(None);
        };
        let status: ClusterHealthStatus = value.trim().to_ascii_uppercase().parse().map_err(
            |_| {
                MagnumError::with_message(
                    ErrorKind::InvalidParameterValue,
                    format!("simulator: label {LABEL_HEALTH} must be HEALTHY, UNHEALTHY or UNKNOWN, not {value:?}"),
                )
            },
        )?;
        let mut reason = StringMap::new();
        let api = match status {
            ClusterHealthStatus::Healthy => "ok",
            ClusterHealthStatus::Unhealthy | ClusterHealthStatus::Unknown => "nok",
        };
        reason.insert("api".into(), api.into());
        let mut nodegroups = Vec::new();
        if let Some(v) = cluster
            .labels
            .as_ref()
            .and_then(|l| l.get(LABEL_AUTOSCALED))
        {
            let count: i32 = v.trim().parse().map_err(|_| {
                MagnumError::with_message(
                    ErrorKind::InvalidParameterValue,
                    format!("simulator: label {LABEL_AUTOSCALED} must be an integer, not {v:?}"),
                )
            })?;
            if let Some(w) = ctx
                .nodegroups
                .iter()
                .find(|n| n.role.as_deref() != Some("master") && n.is_default == Some(true))
            {
                let mut r = NodeGroupReport::new(w.uuid.clone());
                r.node_count = Some(count);
                nodegroups.push(r);
            }
        }
        Ok(Some(HealthReport {
            health_status: Some(status),
            health_status_reason: Some(reason),
            nodegroups,
        }))
    }
}

/// The operation a cluster is in when the simulator has no record of it (after a restart).
fn infer(status: ClusterStatus, nodegroups: &[NodeGroup]) -> Pending {
    let ng_in = |s: ClusterStatus, non_default: bool| {
        nodegroups
            .iter()
            .find(|n| n.status == Some(s) && (!non_default || n.is_default != Some(true)))
            .map(|n| n.uuid.clone())
    };
    let (op, nodegroup) = match status {
        ClusterStatus::CreateInProgress => (Operation::Create, None),
        ClusterStatus::DeleteInProgress => (Operation::Delete, None),
        ClusterStatus::RollbackInProgress => (Operation::Rollback, None),
        _ => {
            if let Some(u) = ng_in(ClusterStatus::CreateInProgress, true) {
                (Operation::NodegroupCreate, Some(u))
            } else if let Some(u) = ng_in(ClusterStatus::DeleteInProgress, false) {
                (Operation::NodegroupDelete, Some(u))
            } else if let Some(u) = ng_in(ClusterStatus::UpdateInProgress, false) {
                (Operation::Resize, Some(u))
            } else {
                (Operation::Update, None)
            }
        }
    };
    Pending {
        op,
        nodegroup,
        ticks: 0,
        inferred: true,
    }
}

fn complete(s: ClusterStatus) -> ClusterStatus {
    match s {
        ClusterStatus::CreateInProgress => ClusterStatus::CreateComplete,
        ClusterStatus::DeleteInProgress => ClusterStatus::DeleteComplete,
        ClusterStatus::RollbackInProgress => ClusterStatus::RollbackComplete,
        ClusterStatus::UpdateInProgress => ClusterStatus::UpdateComplete,
        other => other,
    }
}

fn failed(s: ClusterStatus) -> ClusterStatus {
    match s {
        ClusterStatus::CreateInProgress => ClusterStatus::CreateFailed,
        ClusterStatus::DeleteInProgress => ClusterStatus::DeleteFailed,
        ClusterStatus::RollbackInProgress => ClusterStatus::RollbackFailed,
        ClusterStatus::UpdateInProgress => ClusterStatus::UpdateFailed,
        other => other,
    }
}

/// The comma-separated values of `key` across the label maps (trimmed, non-empty).
fn label_list(labels: &[Option<&StringMap>], key: &str) -> Vec<String> {
    labels
        .iter()
        .flatten()
        .filter_map(|l| l.get(key))
        .flat_map(|v| v.split(','))
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

/// `simulator_ticks` from the first map that has it (at least 1; default 1).
fn ticks_needed(labels: &[Option<&StringMap>]) -> u32 {
    labels
        .iter()
        .flatten()
        .find_map(|l| l.get(LABEL_TICKS))
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(1)
        .max(1)
}

fn kube_tag(labels: Option<&StringMap>) -> Option<&str> {
    labels
        .and_then(|l| l.get("kube_tag"))
        .map(String::as_str)
        .filter(|t| !t.is_empty())
}

/// A per-cluster private /16: `10.<a>.0.0`, `a` derived from the cluster uuid (FNV-1a).
fn address_base(uuid: &str) -> u8 {
    let mut h: u32 = 0x811c_9dc5;
    for b in uuid.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    (h % 254) as u8 + 1
}

/// Node `i` of the nodegroup at position `index`: `10.<a>.<16·index + i/250>.<4 + i%250>`.
fn node_ip(base: u8, index: usize, i: i32) -> String {
    let i = usize::try_from(i).unwrap_or(0);
    let third = (index * 16 + i / 250) % 256;
    let fourth = 4 + i % 250;
    format!("10.{}.{third}.{fourth}", base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use openkeel_core::context::RequestContext;

    fn labels(pairs: &[(&str, &str)]) -> Option<StringMap> {
        Some(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    fn cluster(l: &[(&str, &str)]) -> Cluster {
        Cluster {
            uuid: Some("0b6a9f4e-3f57-4c2c-9d0e-4a6f1f0a7c11".into()),
            status: Some(ClusterStatus::CreateInProgress),
            labels: labels(l),
            ..Cluster::default()
        }
    }

    fn ng(uuid: &str, role: &str, count: i32, status: ClusterStatus) -> NodeGroup {
        NodeGroup {
            uuid: uuid.into(),
            name: format!("ng-{uuid}"),
            role: Some(role.into()),
            node_count: Some(count),
            status: Some(status),
            is_default: Some(true),
            ..NodeGroup::default()
        }
    }

    #[tokio::test]
    async fn create_completes_on_the_first_tick_with_addresses() {
        let sim = SimulatorDriver::new();
        let req = RequestContext::default();
        let template = ClusterTemplate {
            labels: labels(&[("kube_tag", "v1.31.2")]),
            ..ClusterTemplate::default()
        };
        let ngs = vec![
            ng("m", "master", 3, ClusterStatus::CreateInProgress),
            ng("w", "worker", 2, ClusterStatus::CreateInProgress),
        ];
        let ctx = DriverContext {
            request: &req,
            template: &template,
            nodegroups: &ngs,
        };
        let mut c = cluster(&[]);
        // Before create_cluster returns there is no stack id: nothing happens.
        let u = sim.update_cluster_status(&ctx, &c).await.ok();
        assert_eq!(u, Some(StatusReport::unchanged()));
        sim.create_cluster(&ctx, &mut c, 60).await.ok();
        let stack = c.stack_id.clone().unwrap_or_default();
        assert!(stack.starts_with("kube-") && stack.len() == 10);
        let u = sim
            .update_cluster_status(&ctx, &c)
            .await
            .ok()
            .unwrap_or_default();
        assert_eq!(
            u.status.as_ref().map(|s| s.status),
            Some(ClusterStatus::CreateComplete)
        );
        assert_eq!(u.coe_version.as_deref(), Some("v1.31.2"));
        assert!(u
            .api_address
            .as_deref()
            .is_some_and(|a| a.starts_with("https://203.0.113.") && a.ends_with(":6443")));
        assert_eq!(u.nodegroups.len(), 2);
        let m = &u.nodegroups[0];
        assert_eq!(
            m.status.as_ref().map(|s| s.status),
            Some(ClusterStatus::CreateComplete)
        );
        assert_eq!(m.node_addresses.as_ref().map(Vec::len), Some(3));
        let w = &u.nodegroups[1];
        assert_eq!(w.node_addresses.as_ref().map(Vec::len), Some(2));
        let all: Vec<&String> = m
            .node_addresses
            .iter()
            .chain(w.node_addresses.iter())
            .flatten()
            .collect();
        let mut dedup = all.clone();
        dedup.sort();
        dedup.dedup();
        assert_eq!(dedup.len(), all.len(), "addresses are distinct");
        assert!(all.iter().all(|a| a.starts_with("10.")));
    }

    #[tokio::test]
    async fn ticks_fail_on_and_raise_on() {
        let sim = SimulatorDriver::new();
        let req = RequestContext::default();
        let template = ClusterTemplate::default();
        let ngs = vec![ng("w", "worker", 1, ClusterStatus::CreateInProgress)];
        let ctx = DriverContext {
            request: &req,
            template: &template,
            nodegroups: &ngs,
        };
        let mut c = cluster(&[(LABEL_TICKS, "3"), (LABEL_FAIL_ON, "update, create")]);
        sim.create_cluster(&ctx, &mut c, 60).await.ok();
        for _ in 0..2 {
            let u = sim.update_cluster_status(&ctx, &c).await.ok();
            assert_eq!(u, Some(StatusReport::unchanged()));
        }
        let u = sim
            .update_cluster_status(&ctx, &c)
            .await
            .ok()
            .unwrap_or_default();
        let change = u.status.clone().unwrap_or(StatusChange {
            status: ClusterStatus::CreateInProgress,
            reason: None,
        });
        assert_eq!(change.status, ClusterStatus::CreateFailed);
        assert!(change
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("simulator_fail_on") && r.contains("create")));
        assert_eq!(
            u.nodegroups
                .first()
                .and_then(|n| n.status.as_ref())
                .map(|s| s.status),
            Some(ClusterStatus::CreateFailed)
        );

        let mut c = cluster(&[(LABEL_RAISE_ON, "delete")]);
        let e = sim.delete_cluster(&ctx, &mut c).await.err();
        assert!(e.is_some_and(|e| e.message().contains("delete_cluster refused")));
    }

    #[tokio::test]
    async fn delete_nodegroup_is_persisted_then_destroyed() {
        let sim = SimulatorDriver::new();
        let req = RequestContext::default();
        let template = ClusterTemplate::default();
        let mut extra = ng("x", "worker", 1, ClusterStatus::CreateComplete);
        extra.is_default = Some(false);
        let mut c = cluster(&[]);
        c.status = Some(ClusterStatus::UpdateInProgress);
        c.stack_id = Some("kube-abcde".into());
        let ctx = DriverContext {
            request: &req,
            template: &template,
            nodegroups: &[],
        };
        extra.status = Some(ClusterStatus::DeleteInProgress);
        let w = sim
            .delete_nodegroup(&ctx, &mut c, &mut extra)
            .await
            .ok()
            .unwrap_or_default();
        assert_eq!(w.nodegroups.len(), 1);
        let ngs = vec![
            ng("w", "worker", 1, ClusterStatus::CreateComplete),
            extra.clone(),
        ];
        let ctx = DriverContext {
            nodegroups: &ngs,
            ..ctx
        };
        let u = sim
            .update_cluster_status(&ctx, &c)
            .await
            .ok()
            .unwrap_or_default();
        assert_eq!(u.destroy_nodegroups, vec!["x".to_string()]);
        assert_eq!(
            u.status.map(|s| s.status),
            Some(ClusterStatus::UpdateComplete)
        );
    }

    #[tokio::test]
    async fn an_inferred_operation_waits_for_the_real_record() {
        // nodegroup_create saves the cluster UPDATE_IN_PROGRESS before the nodegroup row and
        // the driver call exist; a tick in that instant must not complete the cluster.
        let sim = SimulatorDriver::new();
        let req = RequestContext::default();
        let template = ClusterTemplate::default();
        let mut c = cluster(&[]);
        c.status = Some(ClusterStatus::UpdateInProgress);
        c.stack_id = Some("kube-abcde".into());
        let none = DriverContext {
            request: &req,
            template: &template,
            nodegroups: &[],
        };
        let u = sim.update_cluster_status(&none, &c).await.ok();
        assert_eq!(u, Some(StatusReport::unchanged()));
        let mut extra = ng("x", "worker", 1, ClusterStatus::CreateInProgress);
        extra.is_default = Some(false);
        sim.create_nodegroup(&none, &mut c, &mut extra).await.ok();
        let ngs = vec![extra];
        let ctx = DriverContext {
            nodegroups: &ngs,
            ..none
        };
        let u = sim
            .update_cluster_status(&ctx, &c)
            .await
            .ok()
            .unwrap_or_default();
        assert_eq!(
            u.status.map(|s| s.status),
            Some(ClusterStatus::UpdateComplete)
        );
        assert_eq!(
            u.nodegroups
                .first()
                .and_then(|n| n.status.as_ref())
                .map(|s| s.status),
            Some(ClusterStatus::CreateComplete)
        );
    }

    #[test]
    fn inference_after_restart() {
        let mut extra = ng("x", "worker", 1, ClusterStatus::CreateInProgress);
        extra.is_default = Some(false);
        let p = infer(ClusterStatus::UpdateInProgress, &[extra]);
        assert_eq!(p.op, Operation::NodegroupCreate);
        assert_eq!(p.nodegroup.as_deref(), Some("x"));
        assert!(p.inferred);
        assert_eq!(
            infer(ClusterStatus::UpdateInProgress, &[]).op,
            Operation::Update
        );
        assert_eq!(
            infer(ClusterStatus::DeleteInProgress, &[]).op,
            Operation::Delete
        );
    }

    #[test]
    fn label_parsing() {
        let a = labels(&[(LABEL_TICKS, "0"), (LABEL_FAIL_ON, " create ,, resize")]);
        assert_eq!(ticks_needed(&[a.as_ref()]), 1);
        assert_eq!(
            label_list(&[a.as_ref()], LABEL_FAIL_ON),
            vec!["create".to_string(), "resize".to_string()]
        );
        let b = labels(&[(LABEL_TICKS, "x")]);
        assert_eq!(ticks_needed(&[b.as_ref()]), 1);
        assert_eq!(
            ticks_needed(&[None, labels(&[(LABEL_TICKS, "4")]).as_ref()]),
            4
        );
        let names: Vec<&str> = Operation::ALL.iter().map(|o| o.as_str()).collect();
        assert!(names.contains(&"nodegroup_delete"));
    }
}
