//! The notification seam: Magnum's `notify_about_cluster_operation(context, action, outcome,
//! cluster)` (`magnum/conductor/utils.py`, conductor.md §8).
//!
//! The conductor calls a [`Notifier`] at exactly the points Magnum does; the caller chooses the
//! implementation. [`LogNotifier`] writes one log line per event. The CADF/oslo.messaging
//! notifier (conductor.md §8.2–§8.3) implements the same trait.

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

#[cfg(test)]
mod tests {
    use super::*;

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
