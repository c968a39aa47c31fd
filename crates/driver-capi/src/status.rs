//! Status derivation (magnum-cluster-api's `magnum_cluster_api/driver.py`): what a cluster's CAPI objects say about the Magnum cluster and
//! its nodegroups. Pure functions over the objects the driver fetched ([`Observed`]), so every
//! rule is tested from JSON alone; `driver.rs` decides what to fetch ([`needs_detail`]) and
//! carries out the [`Derived::actions`].
//!
//! As magnum-cluster-api (`update_cluster_status`, `driver.py:156-302`):
//! * the control-plane nodegroup follows the `KubeadmControlPlane`, worker nodegroups
//!   their `MachineDeployment`;
//! * a cluster whose `Cluster` conditions `ControlPlaneReady`, `InfrastructureReady` and
//!   `Ready` are all `True` gets `api_address` (`https://<host>:<port>` of
//!   `spec.controlPlaneEndpoint`) and `coe_version` (`spec.topology.version`), and completes
//!   when every nodegroup has completed; until then `status_reason` says
//!   `CAPI Cluster status: <reason>: <message>. CAPI OpenstackCluster status reason: <reason>:
//!   <message>` from the objects' latest events;
//! * `DELETE_IN_PROGRESS` completes once the `Cluster` is gone (after the clean-up).
//!
//! Better than magnum-cluster-api:
//! * a poll before the objects exist (no `Cluster`, no conditions yet, no `OpenStackCluster`)
//!   changes nothing instead of aborting the round;
//! * a failure CAPI reports — `failureReason`/`failureMessage` (CAPI's terminal failures), a
//!   `MachineDeployment` in phase `Failed`, or a condition `False` with severity `Error` and a
//!   reason that does not recover by itself (an instance that could not be created) that has
//!   stayed so for [`Failures::grace`] (CAPI reports most errors it retries the same way, e.g.
//!   `TopologyReconcileFailed` after a stale cache read, `PreflightCheckFailed` while the
//!   control plane provisions: those stay progress) on the `Cluster`, its `OpenStackCluster`,
//!   `KubeadmControlPlane`, `Machine`s or `OpenStackMachine`s — is a permanent error whose text
//!   is CAPI's own, so the conductor marks the operation `*_FAILED`;
//! * a nodegroup being deleted waits for its `MachineDeployment` to go instead of aborting
//!   the round; `api_address` and `coe_version` are reported as soon as the cluster is
//!   ready;
//! * the event shown is the latest by time, not the last in list order.

use std::time::Duration;

use chrono::{DateTime, Utc};
use openkeel_core::objects::{Cluster, ClusterHealthStatus, ClusterStatus, NodeGroup, StringMap};
use openkeel_drivers::{DriverError, HealthReport, NodeGroupReport, StatusChange, StatusReport};
use serde_json::Value;

/// The label CAPI puts on every object of a cluster.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The label the driver puts on the `Cluster` and its Secrets, as magnum-cluster-api does: the
/// Magnum cluster's uuid (the ClusterResourceSets select the `Cluster` by it, and the status
/// sync lists the `Cluster`s of a tick by it).
pub const CLUSTER_UUID_LABEL: &str = "cluster-uuid";
/// The label of a topology MachineDeployment (and its machines): the nodegroup's name.
pub const DEPLOYMENT_NAME_LABEL: &str = "topology.cluster.x-k8s.io/deployment-name";

/// The `Cluster` conditions that must all be `True` (magnum-cluster-api's readiness test).
pub const READY_CONDITIONS: &[&str] = &["ControlPlaneReady", "InfrastructureReady", "Ready"];

/// The objects of one cluster, as fetched this tick (namespace `magnum-system`; everything but
/// the `Cluster` selected by [`CLUSTER_NAME_LABEL`]). Lists not fetched are empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// `Cluster <stack_id>`; `None`: there is none.
    pub cluster: Option<Value>,
    pub control_planes: Vec<Value>,
    pub machine_deployments: Vec<Value>,
    pub machines: Vec<Value>,
    pub openstack_clusters: Vec<Value>,
    pub openstack_machines: Vec<Value>,
    /// Events about the `Cluster`.
    pub cluster_events: Vec<Value>,
    /// Events about its `OpenStackCluster`.
    pub openstack_cluster_events: Vec<Value>,
}

/// When a condition with severity `Error` counts as a failure: once it has been `False` for
/// `grace` (its `lastTransitionTime`; a condition without one counts at once).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Failures {
    pub now: DateTime<Utc>,
    pub grace: Duration,
}

/// The default [`Failures::grace`]: six status ticks.
pub const DEFAULT_FAILURE_GRACE: Duration = Duration::from_secs(60);

impl Failures {
    pub fn now(grace: Duration) -> Self {
        Failures {
            now: Utc::now(),
            grace,
        }
    }

    /// Whether a condition that became what it is at `since` has lasted the grace period.
    fn lasted(&self, since: Option<&str>) -> bool {
        let Some(t) = since.and_then(|s| DateTime::parse_from_rfc3339(s).ok()) else {
            return true;
        };
        let grace = chrono::Duration::from_std(self.grace).unwrap_or(chrono::Duration::MAX);
        self.now.signed_duration_since(t.with_timezone(&Utc)) >= grace
    }
}

impl Default for Failures {
    fn default() -> Self {
        Failures::now(DEFAULT_FAILURE_GRACE)
    }
}

/// Something the driver must do for the report to hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// The `Cluster` is gone: delete the cluster's remaining objects, its application
    /// credential and server groups, then report `DELETE_COMPLETE`.
    CleanUp,
    /// A nodegroup's `MachineDeployment` is gone: delete its Nova server group (by name).
    DeleteServerGroup(String),
}

/// The outcome of one derivation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derived {
    pub report: StatusReport,
    pub actions: Vec<Action>,
}

/// `status.conditions[type]` of a (v1beta1) CAPI object.
pub fn condition<'a>(object: &'a Value, kind: &str) -> Option<&'a Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"].as_str() == Some(kind))
}

fn condition_is_true(object: &Value, kind: &str) -> bool {
    condition(object, kind).and_then(|c| c["status"].as_str()) == Some("True")
}

/// magnum-cluster-api's readiness test: `ControlPlaneReady`, `InfrastructureReady` and
/// `Ready` all `True`. A `Cluster` without conditions yet is not ready.
pub fn cluster_ready(cluster: &Value) -> bool {
    READY_CONDITIONS
        .iter()
        .all(|c| condition_is_true(cluster, c))
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap_or("")
}

fn text(v: &Value) -> Option<&str> {
    v.as_str().filter(|s| !s.is_empty())
}

/// `<reason>: <message>` with whichever is present.
fn reason_message(reason: Option<&str>, message: Option<&str>) -> Option<String> {
    match (reason, message) {
        (Some(r), Some(m)) => Some(format!("{r}: {m}")),
        (Some(r), None) => Some(r.to_string()),
        (None, Some(m)) => Some(m.to_string()),
        (None, None) => None,
    }
}

/// What CAPI says failed about `object` (`kind` names it in the text): its
/// `status.failureReason` / `failureMessage`, else the first condition `False` with severity
/// `Error` for the grace period of `failures`.
pub fn failure_of(object: &Value, kind: &str, failures: &Failures) -> Option<String> {
    let status = &object["status"];
    let what = format!("{kind} {}", name_of(object));
    if let Some(rm) = reason_message(
        text(&status["failureReason"]),
        text(&status["failureMessage"]),
    ) {
        return Some(format!("{what} failed: {rm}"));
    }
    let failed = status["conditions"].as_array()?.iter().find(|c| {
        c["status"].as_str() == Some("False")
            && c["severity"].as_str() == Some("Error")
            && is_terminal(c["reason"].as_str().unwrap_or_default())
            && failures.lasted(c["lastTransitionTime"].as_str())
    })?;
    let rm = reason_message(text(&failed["reason"]), text(&failed["message"]));
    Some(match rm {
        Some(rm) => format!(
            "{what} failed: {} is False: {rm}",
            failed["type"].as_str().unwrap_or("a condition")
        ),
        None => format!(
            "{what} failed: {} is False",
            failed["type"].as_str().unwrap_or("a condition")
        ),
    })
}

/// Condition reasons (severity `Error`) that do not recover without a change: CAPO's for a
/// server that could not be created or is gone. Cluster API reports most of what it retries
/// with severity `Error` too (seen on the real rig under load: `PreflightCheckFailed` for over
/// a minute while the control plane provisioned, `TopologyReconcileFailed` after a stale cache
/// read, both followed by success), so any other reason is progress; terminal failures also
/// come as `failureReason` / `failureMessage`.
fn is_terminal(reason: &str) -> bool {
    matches!(
        reason,
        "InstanceCreateFailed" | "InstanceStateError" | "InstanceNotFound" | "InstanceDeleteFailed"
    )
}

/// The first failure among the cluster's objects, in the order a reader would look for it:
/// the `Cluster`, its infrastructure, its control plane, its machines, its deployments.
pub fn first_failure(obs: &Observed, failures: &Failures) -> Option<String> {
    let failure_of = |o: &Value, kind: &str| failure_of(o, kind, failures);
    if let Some(f) = obs.cluster.as_ref().and_then(|c| failure_of(c, "Cluster")) {
        return Some(f);
    }
    for o in &obs.openstack_clusters {
        if let Some(f) = failure_of(o, "OpenStackCluster") {
            return Some(f);
        }
    }
    for o in &obs.control_planes {
        if let Some(f) = failure_of(o, "KubeadmControlPlane") {
            return Some(f);
        }
    }
    for o in &obs.machines {
        if let Some(f) = failure_of(o, "Machine") {
            return Some(f);
        }
    }
    for o in &obs.openstack_machines {
        if let Some(f) = failure_of(o, "OpenStackMachine") {
            return Some(f);
        }
    }
    for o in &obs.machine_deployments {
        if o["status"]["phase"].as_str() == Some("Failed") {
            return Some(
                failure_of(o, "MachineDeployment")
                    .unwrap_or_else(|| format!("MachineDeployment {} failed", name_of(o))),
            );
        }
        if let Some(f) = failure_of(o, "MachineDeployment") {
            return Some(f);
        }
    }
    None
}

/// An event's time: `lastTimestamp`, `eventTime`, `firstTimestamp`, then the creation time
/// (RFC 3339 strings compare in time order).
fn event_time(e: &Value) -> &str {
    ["lastTimestamp", "eventTime", "firstTimestamp"]
        .iter()
        .find_map(|k| text(&e[k]))
        .or_else(|| text(&e["metadata"]["creationTimestamp"]))
        .unwrap_or("")
}

/// `<reason>: <message>` of the latest event.
pub fn latest_event(events: &[Value]) -> Option<String> {
    let e = events
        .iter()
        .max_by(|a, b| event_time(a).cmp(event_time(b)))?;
    Some(format!(
        "{}: {}",
        e["reason"].as_str().unwrap_or(""),
        e["message"].as_str().unwrap_or("")
    ))
}

/// The first of [`READY_CONDITIONS`] that is not `True`, as `<reason>: <message>`.
fn not_ready_condition(object: &Value) -> Option<String> {
    ["Ready", "ControlPlaneReady", "InfrastructureReady"]
        .iter()
        .filter_map(|t| condition(object, t))
        .find(|c| c["status"].as_str() != Some("True"))
        .and_then(|c| reason_message(text(&c["reason"]), text(&c["message"])))
}

/// magnum-cluster-api's `status_reason` of a cluster that is not ready:
/// `CAPI Cluster status: <reason>: <message>. CAPI OpenstackCluster status reason: <reason>:
/// <message>`, each from the latest event of the object (else its condition that is not
/// `True`; the `OpenStackCluster` part says when there is none yet).
pub fn progress_reason(obs: &Observed) -> String {
    let cluster = latest_event(&obs.cluster_events)
        .or_else(|| obs.cluster.as_ref().and_then(not_ready_condition))
        .unwrap_or_else(|| "no events yet".into());
    let osc = match obs.openstack_clusters.first() {
        None => "not created yet".to_string(),
        Some(o) => latest_event(&obs.openstack_cluster_events)
            .or_else(|| {
                condition(o, "Ready")
                    .filter(|c| c["status"].as_str() != Some("True"))
                    .and_then(|c| reason_message(text(&c["reason"]), text(&c["message"])))
            })
            .unwrap_or_else(|| "no events yet".into()),
    };
    format!("CAPI Cluster status: {cluster}. CAPI OpenstackCluster status reason: {osc}")
}

/// `https://<host>:<port>` of `spec.controlPlaneEndpoint`, when set.
pub fn api_address(cluster: &Value) -> Option<String> {
    let ep = &cluster["spec"]["controlPlaneEndpoint"];
    let host = text(&ep["host"])?;
    let port = ep["port"].as_i64().filter(|p| *p > 0)?;
    Some(format!("https://{host}:{port}"))
}

fn is_master(ng: &NodeGroup) -> bool {
    ng.role.as_deref() == Some("master")
}

/// The action verb of a nodegroup's status (`CREATE`, `UPDATE`, `DELETE`, ...).
fn verb(status: Option<ClusterStatus>) -> &'static str {
    let s = status.map(ClusterStatus::as_str).unwrap_or("CREATE");
    match s.split_once('_') {
        Some(("UPDATE", _)) => "UPDATE",
        Some(("DELETE", _)) => "DELETE",
        Some(("ROLLBACK", _)) => "ROLLBACK",
        _ => "CREATE",
    }
}

fn status_of(verb: &str, suffix: &str) -> Option<ClusterStatus> {
    format!("{verb}_{suffix}").parse().ok()
}

fn change(ng: &NodeGroup, status: ClusterStatus, reason: Option<String>) -> Option<StatusChange> {
    (ng.status != Some(status) || ng.status_reason != reason)
        .then_some(StatusChange { status, reason })
}

/// The control-plane nodegroup from the cluster's single `KubeadmControlPlane` (none or
/// several: untouched). Returns the nodegroup's new status, when it changes.
pub fn control_plane_status(ng: &NodeGroup, control_planes: &[Value]) -> Option<StatusChange> {
    let [kcp] = control_planes else {
        return None;
    };
    let st = &kcp["status"];
    let mut verb = verb(ng.status);
    if st["observedGeneration"].as_i64().unwrap_or(1) > 1 && verb == "CREATE" {
        verb = "UPDATE";
    }
    let replicas = st["replicas"].as_i64().unwrap_or(0);
    let updated = st["updatedReplicas"].as_i64().unwrap_or(0);
    let ready = st["ready"].as_bool().unwrap_or(false);
    let reason = text(&st["failureMessage"]).map(str::to_string);
    let status = if updated != replicas {
        status_of(verb, "IN_PROGRESS")?
    } else if i64::from(ng.node_count.unwrap_or(0)) == replicas && ready {
        status_of(verb, "COMPLETE")?
    } else {
        // as magnum-cluster-api: the status stays, the reason is written
        ng.status?
    };
    change(ng, status, reason)
}

/// The topology entry of a nodegroup in the `Cluster`.
fn topology_entry<'a>(cluster: &'a Value, name: &str) -> Option<&'a Value> {
    cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array()?
        .iter()
        .find(|md| md["name"].as_str() == Some(name))
}

fn override_value<'a>(entry: &'a Value, name: &str) -> Option<&'a Value> {
    entry["variables"]["overrides"]
        .as_array()?
        .iter()
        .find(|v| v["name"].as_str() == Some(name))
        .map(|v| &v["value"])
}

/// Objects carrying a nodegroup's deployment-name label.
fn of_deployment<'a>(objects: &'a [Value], name: &'a str) -> impl Iterator<Item = &'a Value> {
    objects
        .iter()
        .filter(move |o| o["metadata"]["labels"][DEPLOYMENT_NAME_LABEL].as_str() == Some(name))
}

/// A worker nodegroup's `UPDATE_IN_PROGRESS`: the deployment has what the topology entry asks (replicas, or
/// the autoscaler annotations), and every OpenStackMachine runs the entry's image and flavor.
fn update_applied(
    ng: &NodeGroup,
    entry: &Value,
    md: &Value,
    openstack_machines: &[Value],
    auto_scaling: bool,
) -> bool {
    let spec_equal = if auto_scaling {
        entry["metadata"]["annotations"] == md["spec"]["template"]["metadata"]["annotations"]
    } else {
        entry["replicas"] == md["spec"]["replicas"]
    };
    if !spec_equal || !rolled_out(md) {
        return false;
    }
    let image = override_value(entry, "imageUUID");
    let flavor = override_value(entry, "flavor");
    of_deployment(openstack_machines, &ng.name).all(|osm| {
        image.is_none_or(|i| &osm["spec"]["image"]["id"] == i)
            && flavor.is_none_or(|f| &osm["spec"]["flavor"] == f)
    })
}

/// One worker nodegroup.
fn worker_report(
    cluster: &Cluster,
    ng: &NodeGroup,
    capi: &Value,
    obs: &Observed,
    actions: &mut Vec<Action>,
) -> Option<StatusChange> {
    let md = of_deployment(&obs.machine_deployments, &ng.name).next();
    let running = md.is_some_and(|m| m["status"]["phase"].as_str() == Some("Running"));
    match ng.status {
        Some(ClusterStatus::DeleteInProgress) => {
            if md.is_none() {
                actions.push(Action::DeleteServerGroup(format!(
                    "{}-{}",
                    cluster.stack_id.as_deref().unwrap_or(""),
                    ng.name
                )));
                change(ng, ClusterStatus::DeleteComplete, None)
            } else {
                None
            }
        }
        Some(ClusterStatus::CreateInProgress) if running => {
            change(ng, ClusterStatus::CreateComplete, None)
        }
        Some(ClusterStatus::UpdateInProgress) if running => {
            let entry = topology_entry(capi, &ng.name)?;
            let auto_scaling = crate::labels::Labels::new(cluster.labels.as_ref())
                .bool_or("auto_scaling_enabled", false)
                .unwrap_or(false);
            update_applied(ng, entry, md?, &obs.openstack_machines, auto_scaling)
                .then(|| change(ng, ClusterStatus::UpdateComplete, None))
                .flatten()
        }
        _ => None,
    }
}

/// Whether a nodegroup row goes: `DELETE_COMPLETE` and not a default nodegroup, or the whole
/// cluster is being deleted.
fn destroyed(cluster: &Cluster, ng: &NodeGroup, status: Option<ClusterStatus>) -> bool {
    status == Some(ClusterStatus::DeleteComplete)
        && (!ng.is_default.unwrap_or(false)
            || cluster.status == Some(ClusterStatus::DeleteInProgress))
}

/// Whether this tick needs the detail lists (machines, OpenStackCluster, events): the cluster
/// is not ready, or a nodegroup has not finished.
pub fn needs_detail(capi: &Value, nodegroups: &[NodeGroup]) -> bool {
    !cluster_ready(capi)
        || nodegroups
            .iter()
            .any(|ng| !ng.status.is_some_and(|s| s.as_str().ends_with("_COMPLETE")))
}

/// Whether this tick needs the OpenStackMachines (a worker nodegroup is being updated).
pub fn needs_openstack_machines(nodegroups: &[NodeGroup]) -> bool {
    nodegroups
        .iter()
        .any(|ng| !is_master(ng) && ng.status == Some(ClusterStatus::UpdateInProgress))
}

/// The `Cluster`'s reasons for a `TopologyReconciled` that is not `True` but leaves nothing
/// to wait for: MachineDeployments held on their version on purpose (`defer-upgrade`).
const DEFERRED_REASONS: &[&str] = &[
    "MachineDeploymentsUpgradeDeferred",
    "MachinePoolsUpgradeDeferred",
];

/// Whether the topology controller has carried the `Cluster`'s current spec into the control
/// plane and the MachineDeployments: its `TopologyReconciled` condition (the `v1beta2` one,
/// which names the generation it saw) is `True` for this generation, or only deferred
/// upgrades are left. Right after a change (resize, upgrade) the control plane and the
/// MachineDeployments still show the old spec as fully rolled out: without this an operation
/// could complete before it started (magnum-cluster-api's status has that race). Without
/// `v1beta2` conditions (older Cluster API), the `v1beta1` condition decides; without any,
/// nothing is waited for.
pub fn topology_settled(capi: &Value) -> bool {
    let generation = capi["metadata"]["generation"].as_i64();
    let v1beta2 = capi["status"]["v1beta2"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "TopologyReconciled"));
    match v1beta2 {
        Some(c) => {
            let seen = match (generation, c["observedGeneration"].as_i64()) {
                (Some(g), Some(o)) => o >= g,
                _ => true,
            };
            let done = c["status"] == "True"
                || c["reason"]
                    .as_str()
                    .is_some_and(|r| DEFERRED_REASONS.contains(&r));
            seen && done
        }
        None => match condition(capi, "TopologyReconciled") {
            Some(c) => {
                c["status"] == "True"
                    || c["reason"]
                        .as_str()
                        .is_some_and(|r| DEFERRED_REASONS.contains(&r))
            }
            None => true,
        },
    }
}

/// `CAPI Cluster status: <reason>: <message>` of a `TopologyReconciled` that is not done.
fn topology_progress(capi: &Value) -> Option<String> {
    let c = capi["status"]["v1beta2"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "TopologyReconciled"))
        .or_else(|| condition(capi, "TopologyReconciled"))
        .filter(|c| c["status"] != "True")?;
    let message = text(&c["message"]).map(|m| m.split_whitespace().collect::<Vec<_>>().join(" "));
    Some(format!(
        "CAPI Cluster status: {}",
        reason_message(text(&c["reason"]), message.as_deref())?
    ))
}

/// Whether a MachineDeployment has rolled out its current template to every replica.
fn rolled_out(md: &Value) -> bool {
    let want = md["spec"]["replicas"].as_i64().unwrap_or(0);
    let st = &md["status"];
    match st["updatedReplicas"].as_i64() {
        Some(updated) => updated >= want && st["replicas"].as_i64().unwrap_or(want) == want,
        None => true,
    }
}

/// The status sync's answer for `cluster` (with `nodegroups` as stored) from what was
/// observed. `Err` is a permanent failure reported by CAPI (the conductor marks the operation
/// `*_FAILED` with its text).
pub fn derive(
    cluster: &Cluster,
    nodegroups: &[NodeGroup],
    obs: &Observed,
    failures: &Failures,
) -> Result<Derived, DriverError> {
    let mut out = Derived::default();
    let status = cluster.status;
    if status == Some(ClusterStatus::DeleteInProgress) {
        match &obs.cluster {
            None => out.actions.push(Action::CleanUp),
            Some(_) => {
                let reason = Some(progress_reason(obs));
                if reason != cluster.status_reason {
                    out.report.status = Some(StatusChange {
                        status: ClusterStatus::DeleteInProgress,
                        reason,
                    });
                }
            }
        }
        return Ok(out);
    }
    if !matches!(
        status,
        Some(ClusterStatus::CreateInProgress | ClusterStatus::UpdateInProgress)
    ) {
        return Ok(out);
    }
    // an early poll: nothing to say yet
    let Some(capi) = &obs.cluster else {
        return Ok(out);
    };
    if let Some(failure) = first_failure(obs, failures) {
        return Err(DriverError::permanent_message(failure));
    }

    // nodegroups, each with its new status as the report leaves it; nothing
    // completes while the topology controller has not carried the spec through
    let settled = topology_settled(capi);
    let mut statuses = Vec::with_capacity(nodegroups.len());
    for ng in nodegroups {
        let change = if is_master(ng) {
            control_plane_status(ng, &obs.control_planes)
        } else {
            worker_report(cluster, ng, capi, obs, &mut out.actions)
        };
        let change = change.filter(|c| {
            settled
                || !c.status.as_str().ends_with("_COMPLETE")
                || c.status == ClusterStatus::DeleteComplete
        });
        let new_status = change.as_ref().map(|c| c.status).or(ng.status);
        if destroyed(cluster, ng, new_status) {
            out.report.destroy_nodegroups.push(ng.uuid.clone());
        } else if let Some(c) = change {
            let mut r = NodeGroupReport::new(ng.uuid.clone());
            r.status = Some(c);
            out.report.nodegroups.push(r);
        }
        statuses.push(new_status);
    }

    let current = status.unwrap_or(ClusterStatus::CreateInProgress);
    if !cluster_ready(capi) {
        let reason = Some(progress_reason(obs));
        if reason != cluster.status_reason {
            out.report.status = Some(StatusChange {
                status: current,
                reason,
            });
        }
        return Ok(out);
    }
    if !settled {
        // what CAPI is still doing (e.g. "Cluster is upgrading to v1.31.1 ...")
        if let Some(reason) =
            topology_progress(capi).filter(|r| cluster.status_reason.as_ref() != Some(r))
        {
            out.report.status = Some(StatusChange {
                status: current,
                reason: Some(reason),
            });
        }
    }
    if let Some(a) = api_address(capi).filter(|a| cluster.api_address.as_ref() != Some(a)) {
        out.report.api_address = Some(a);
    }
    if let Some(v) = text(&capi["spec"]["topology"]["version"])
        .filter(|v| cluster.coe_version.as_deref() != Some(*v))
    {
        out.report.coe_version = Some(v.to_string());
    }
    let all_complete = settled
        && statuses
            .iter()
            .all(|s| s.is_some_and(|s| s.as_str().ends_with("_COMPLETE")));
    if all_complete {
        let done = if current == ClusterStatus::UpdateInProgress {
            ClusterStatus::UpdateComplete
        } else {
            ClusterStatus::CreateComplete
        };
        out.report.status = Some(StatusChange {
            status: done,
            reason: None,
        });
    }
    Ok(out)
}

/// The health monitor's answer (`magnum_cluster_api/monitor.py`) from the cluster's `KubeadmControlPlane`s, Machines
/// and, with the autoscaler, MachineDeployments: `HEALTHY` when the control plane is
/// `Available` and every Machine `NodeHealthy`; the reason names each Machine
/// (`<infrastructure name>.Ready`) and the API (`api`). `None` without a single control plane
/// (magnum-cluster-api raises: the old value stays).
pub fn health(
    nodegroups: &[NodeGroup],
    control_planes: &[Value],
    machines: &[Value],
    deployments: &[Value],
) -> Option<HealthReport> {
    let [kcp] = control_planes else {
        return None;
    };
    let api_ok = condition_is_true(kcp, "Available");
    let mut reason = StringMap::new();
    let mut healthy = api_ok;
    for m in machines {
        let ok = condition_is_true(m, "NodeHealthy");
        healthy &= ok;
        let name = text(&m["spec"]["infrastructureRef"]["name"]).unwrap_or(name_of(m));
        reason.insert(
            format!("{name}.Ready"),
            if ok { "True" } else { "False" }.to_string(),
        );
    }
    reason.insert("api".into(), if api_ok { "ok" } else { "nok" }.to_string());
    let mut report = HealthReport {
        health_status: Some(if healthy {
            ClusterHealthStatus::Healthy
        } else {
            ClusterHealthStatus::Unhealthy
        }),
        health_status_reason: Some(reason),
        nodegroups: Vec::new(),
    };
    for ng in nodegroups.iter().filter(|ng| !is_master(ng)) {
        let replicas = of_deployment(deployments, &ng.name)
            .next()
            .and_then(|md| md["spec"]["replicas"].as_i64())
            .and_then(|r| i32::try_from(r).ok());
        if let Some(r) = replicas.filter(|r| Some(*r) != ng.node_count) {
            let mut n = NodeGroupReport::new(ng.uuid.clone());
            n.node_count = Some(r);
            report.nodegroups.push(n);
        }
    }
    Some(report)
}

#[cfg(test)]
mod tests;
