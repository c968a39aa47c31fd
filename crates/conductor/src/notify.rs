//! The notification seam: Magnum's `notify_about_cluster_operation(context, action, outcome,
//! cluster)` (`magnum/conductor/utils.py`).
//!
//! The conductor calls a [`Notifier`] at exactly the points Magnum does; the caller chooses the
//! implementation. [`LogNotifier`] writes one log line per event. The CADF/oslo.messaging
//! notifier (`magnum/common/rpc.py`, `magnum/conductor/utils.py`) implements the same trait.

use async_trait::async_trait;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterStatus};

/// `taxonomy.ACTION_*` used by Magnum: the `<action>` of `magnum.cluster.<action>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Create,
    Update,
    Delete,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
        }
    }

    /// The notification event type, e.g. `magnum.cluster.create`.
    pub fn event_type(self) -> &'static str {
        match self {
            Action::Create => "magnum.cluster.create",
            Action::Update => "magnum.cluster.update",
            Action::Delete => "magnum.cluster.delete",
        }
    }

    /// `ClusterUpdateJob.status_to_event` (`magnum/service/periodic.py:51-60`): the action
    /// notified when the periodic sync sees a cluster reach `status`. Other `_COMPLETE` /
    /// `_FAILED` values have no entry (Magnum raises `KeyError` there; OpenKeel logs and sends
    /// nothing).
    pub fn for_final_status(status: ClusterStatus) -> Option<Action> {
        use ClusterStatus as S;
        match status {
            S::DeleteComplete | S::DeleteFailed => Some(Action::Delete),
            S::CreateComplete | S::CreateFailed => Some(Action::Create),
            S::UpdateComplete | S::UpdateFailed | S::RollbackComplete | S::RollbackFailed => {
                Some(Action::Update)
            }
            _ => None,
        }
    }
}

/// `taxonomy.OUTCOME_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Pending,
    Success,
    Failure,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pending => "pending",
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }

    /// `ERROR` for failures, `INFO` otherwise (`magnum/conductor/utils.py:149-154`).
    pub fn priority(self) -> &'static str {
        match self {
            Outcome::Failure => "ERROR",
            Outcome::Pending | Outcome::Success => "INFO",
        }
    }
}

/// Receives the conductor's cluster-operation notifications. Implementations must not fail
/// the operation: errors are theirs to log.
#[async_trait]
pub trait Notifier: Send + Sync {
    /// `notify_about_cluster_operation(context, action, outcome, cluster)`. `cluster` is the
    /// conductor's object at that moment (it may hold values not yet saved).
    async fn notify_cluster_operation(
        &self,
        ctx: &RequestContext,
        action: Action,
        outcome: Outcome,
        cluster: &Cluster,
    );
}

/// Logs each notification (event type, outcome, priority, cluster uuid and status, request
/// id). Never logs the context's token.
#[derive(Debug, Clone, Copy, Default)]
pub struct LogNotifier;

#[async_trait]
impl Notifier for LogNotifier {
    async fn notify_cluster_operation(
        &self,
        ctx: &RequestContext,
        action: Action,
        outcome: Outcome,
        cluster: &Cluster,
    ) {
        let uuid = cluster.uuid.as_deref().unwrap_or("-");
        let status = cluster.status.map(|s| s.as_str()).unwrap_or("-");
        match outcome {
            Outcome::Failure => tracing::error!(
                event_type = action.event_type(),
                outcome = outcome.as_str(),
                priority = outcome.priority(),
                cluster = uuid,
                status,
                request_id = %ctx.request_id,
                "notification"
            ),
            Outcome::Pending | Outcome::Success => tracing::info!(
                event_type = action.event_type(),
                outcome = outcome.as_str(),
                priority = outcome.priority(),
                cluster = uuid,
                status,
                request_id = %ctx.request_id,
                "notification"
            ),
        }
    }
}

/// pycadf's `AUDIT_NS` for `[audit] namespace = openstack`: the first 32 hex digits of
/// sha256("openstack") (pycadf `identifier.py`).
const AUDIT_NS: uuid::Uuid = uuid::Uuid::from_u128(0xd460a96a_a6b4_9db0_52ef_9f1aac13d33e);

/// A pycadf identifier: `uuid5(AUDIT_NS, str(uuid4()))`.
fn cadf_id() -> String {
    uuid::Uuid::new_v5(&AUDIT_NS, uuid::Uuid::new_v4().to_string().as_bytes()).to_string()
}

fn py_datetime(d: &Option<chrono::NaiveDateTime>) -> serde_json::Value {
    match d {
        Some(t) => serde_json::Value::String(t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()),
        None => serde_json::Value::Null,
    }
}

/// The CADF event Magnum builds with pycadf's `EventFactory` (`magnum/conductor/utils.py`), with the
/// cluster's node counts and addresses taken from `nodegroups` as Magnum's `Cluster`
/// properties compute them.
pub fn cadf_payload(
    ctx: &RequestContext,
    action: Action,
    outcome: Outcome,
    cluster: &Cluster,
    nodegroups: &[openkeel_core::objects::NodeGroup],
) -> serde_json::Value {
    use serde_json::{json, Map, Value};
    let s = |v: &Option<String>| v.clone().map_or(Value::Null, Value::String);
    let mut initiator = Map::new();
    initiator.insert("id".into(), json!(cadf_id()));
    initiator.insert("typeURI".into(), json!("service/security/account/user"));
    for (k, v) in [
        ("user_id", &ctx.user_id),
        ("project_id", &ctx.project_id),
        ("domain_id", &ctx.domain_id),
    ] {
        if let Some(v) = v.as_ref().filter(|v| !v.is_empty()) {
            initiator.insert(k.into(), json!(v));
        }
    }
    let is_master = |n: &&openkeel_core::objects::NodeGroup| n.role.as_deref() == Some("master");
    let addresses = |master: bool| -> Vec<Value> {
        nodegroups
            .iter()
            .filter(|n| is_master(n) == master)
            .flat_map(|n| n.node_addresses.clone().unwrap_or_default())
            .map(Value::String)
            .collect()
    };
    let count = |master: bool| -> i64 {
        nodegroups
            .iter()
            .filter(|n| is_master(n) == master)
            .map(|n| i64::from(n.node_count.unwrap_or(0)))
            .sum()
    };
    let mut content = Map::new();
    content.insert(
        "status".into(),
        cluster.status.map_or(Value::Null, |x| json!(x.as_str())),
    );
    content.insert("status_reason".into(), s(&cluster.status_reason));
    content.insert("project_id".into(), s(&cluster.project_id));
    content.insert("created_at".into(), py_datetime(&cluster.created_at));
    content.insert("updated_at".into(), py_datetime(&cluster.updated_at));
    content.insert(
        "cluster_template_id".into(),
        s(&cluster.cluster_template_id),
    );
    content.insert("keypair".into(), s(&cluster.keypair));
    // Magnum's key really has a trailing colon (magnum/conductor/utils.py:108).
    content.insert(
        "docker_volume_size:".into(),
        cluster.docker_volume_size.map_or(Value::Null, |v| json!(v)),
    );
    content.insert(
        "labels".into(),
        cluster.labels.as_ref().map_or(Value::Null, |l| json!(l)),
    );
    content.insert("master_flavor_id".into(), s(&cluster.master_flavor_id));
    content.insert("flavor_id".into(), s(&cluster.flavor_id));
    content.insert("stack_id".into(), s(&cluster.stack_id));
    content.insert(
        "health_status".into(),
        cluster
            .health_status
            .map_or(Value::Null, |h| json!(h.as_str())),
    );
    content.insert(
        "create_timeout".into(),
        cluster.create_timeout.map_or(Value::Null, |v| json!(v)),
    );
    content.insert("api_address".into(), s(&cluster.api_address));
    content.insert("discovery_url".into(), s(&cluster.discovery_url));
    content.insert("node_addresses".into(), Value::Array(addresses(false)));
    content.insert("master_addresses".into(), Value::Array(addresses(true)));
    content.insert("node_count".into(), json!(count(false)));
    content.insert("master_count".into(), json!(count(true)));
    let mut target = Map::new();
    target.insert("id".into(), s(&cluster.uuid));
    target.insert("typeURI".into(), json!("service/magnum/cluster"));
    if let Some(n) = &cluster.name {
        target.insert("name".into(), json!(n));
    }
    let mut attachment = Map::new();
    attachment.insert("typeURI".into(), json!("service/magnum/cluster"));
    attachment.insert("content".into(), Value::Object(content));
    attachment.insert("name".into(), json!("cluster_data"));
    target.insert("attachments".into(), json!([Value::Object(attachment)]));
    let mut event = Map::new();
    event.insert(
        "typeURI".into(),
        json!("http://schemas.dmtf.org/cloud/audit/1.0/event"),
    );
    event.insert("eventType".into(), json!("activity"));
    event.insert("id".into(), json!(cadf_id()));
    event.insert(
        "eventTime".into(),
        json!(chrono::Utc::now()
            .format("%Y-%m-%dT%H:%M:%S%.6f+0000")
            .to_string()),
    );
    event.insert("action".into(), json!(action.as_str()));
    event.insert("outcome".into(), json!(outcome.as_str()));
    event.insert(
        "observer".into(),
        json!({"id": cadf_id(), "typeURI": "service/magnum/cluster"}),
    );
    event.insert("initiator".into(), Value::Object(initiator));
    event.insert("target".into(), Value::Object(target));
    Value::Object(event)
}

/// CADF notifications on the message bus (`[oslo_messaging_notifications] driver =
/// messagingv2`), as Magnum sends them: `magnum.cluster.<action>` on
/// `notifications.<priority>` of the control exchange. A failure to publish is logged and
/// never fails the operation.
pub struct BusNotifier {
    bus: openkeel_rpc::oslo::notifier::AmqpNotifier,
    db: openkeel_db::Database,
}

impl BusNotifier {
    pub fn new(bus: openkeel_rpc::oslo::notifier::AmqpNotifier, db: openkeel_db::Database) -> Self {
        BusNotifier { bus, db }
    }
}

#[async_trait]
impl Notifier for BusNotifier {
    async fn notify_cluster_operation(
        &self,
        ctx: &RequestContext,
        action: Action,
        outcome: Outcome,
        cluster: &Cluster,
    ) {
        let nodegroups = match cluster.uuid.as_deref() {
            Some(uuid) => openkeel_db::nodegroup::list(
                &self.db,
                &openkeel_db::Scope::admin_all_tenants(),
                uuid,
                &openkeel_db::NodeGroupFilters::default(),
                &openkeel_db::Page::all(),
            )
            .await
            .unwrap_or_default(),
            None => Vec::new(),
        };
        let payload = cadf_payload(ctx, action, outcome, cluster, &nodegroups);
        LogNotifier
            .notify_cluster_operation(ctx, action, outcome, cluster)
            .await;
        if let Err(e) = self
            .bus
            .notify(ctx, action.event_type(), outcome.priority(), payload)
            .await
        {
            tracing::error!(
                event_type = action.event_type(),
                error = %e,
                request_id = %ctx.request_id,
                "notification not sent"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cadf_payload_has_magnums_keys_in_order() {
        use openkeel_core::objects::NodeGroup;
        let cluster = Cluster {
            uuid: Some("f16a9c3e-aa81-46f2-a5ce-d06aa1b70f50".into()),
            name: Some("k8s-smoke".into()),
            status: Some(ClusterStatus::CreateInProgress),
            docker_volume_size: Some(10),
            created_at: chrono::NaiveDate::from_ymd_opt(2026, 12, 2)
                .and_then(|d| d.and_hms_micro_opt(14, 18, 7, 853_499)),
            ..Default::default()
        };
        let ngs = vec![
            NodeGroup {
                role: Some("master".into()),
                node_count: Some(1),
                node_addresses: Some(vec!["10.0.0.1".into()]),
                ..Default::default()
            },
            NodeGroup {
                role: Some("worker".into()),
                node_count: Some(2),
                node_addresses: Some(vec!["10.0.0.2".into(), "10.0.0.3".into()]),
                ..Default::default()
            },
        ];
        let ctx = RequestContext {
            user_id: Some("noauth-admin".into()),
            project_id: Some("noauth-project".into()),
            ..Default::default()
        };
        let p = cadf_payload(&ctx, Action::Create, Outcome::Pending, &cluster, &ngs);
        let keys: Vec<_> = p
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(
            keys,
            [
                "typeURI",
                "eventType",
                "id",
                "eventTime",
                "action",
                "outcome",
                "observer",
                "initiator",
                "target"
            ]
        );
        assert_eq!(p["initiator"]["user_id"], "noauth-admin");
        assert!(p["initiator"].get("domain_id").is_none());
        let id = p["id"].as_str().unwrap_or_default();
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "5", "a uuid5 as pycadf makes: {id}");
        let c = &p["target"]["attachments"][0]["content"];
        let ckeys: Vec<_> = c
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        assert_eq!(
            ckeys,
            [
                "status",
                "status_reason",
                "project_id",
                "created_at",
                "updated_at",
                "cluster_template_id",
                "keypair",
                "docker_volume_size:",
                "labels",
                "master_flavor_id",
                "flavor_id",
                "stack_id",
                "health_status",
                "create_timeout",
                "api_address",
                "discovery_url",
                "node_addresses",
                "master_addresses",
                "node_count",
                "master_count"
            ]
        );
        assert_eq!(c["created_at"], "2026-12-02T14:18:07.853499");
        assert_eq!(c["node_count"], 2);
        assert_eq!(c["master_count"], 1);
        assert_eq!(
            c["node_addresses"],
            serde_json::json!(["10.0.0.2", "10.0.0.3"])
        );
        assert_eq!(c["master_addresses"], serde_json::json!(["10.0.0.1"]));
        assert_eq!(p["target"]["name"], "k8s-smoke");
        assert!(p["eventTime"]
            .as_str()
            .unwrap_or_default()
            .ends_with("+0000"));
    }

    #[test]
    fn final_status_actions() {
        assert_eq!(
            Action::for_final_status(ClusterStatus::DeleteComplete),
            Some(Action::Delete)
        );
        assert_eq!(
            Action::for_final_status(ClusterStatus::RollbackFailed),
            Some(Action::Update)
        );
        assert_eq!(Action::for_final_status(ClusterStatus::CheckComplete), None);
        assert_eq!(Outcome::Failure.priority(), "ERROR");
        assert_eq!(Action::Create.event_type(), "magnum.cluster.create");
    }
}
