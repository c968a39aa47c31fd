use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

use super::{ClusterStatus, StringMap, Taint};

/// A row of `nodegroup` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
///
/// `cluster_id` holds the owning cluster's **uuid**. `uuid`, `name`, `cluster_id` and
/// `project_id` are NOT NULL in the migrated schema.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeGroup {
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub id: i32,
    pub uuid: String,
    pub name: String,
    pub cluster_id: String,
    pub project_id: String,
    pub docker_volume_size: Option<i32>,
    /// JSON dict of strings.
    pub labels: Option<StringMap>,
    pub flavor_id: Option<String>,
    pub image_id: Option<String>,
    /// JSON list of strings.
    pub node_addresses: Option<Vec<String>>,
    /// NULL reads as 1 in Magnum's object layer.
    pub node_count: Option<i32>,
    pub max_node_count: Option<i32>,
    /// NULL reads as 0 in Magnum's object layer.
    pub min_node_count: Option<i32>,
    /// `master` or `worker` in practice (see [`NodeGroupRole`]); NULL breaks Magnum's loader.
    pub role: Option<String>,
    /// Inserted as `false` when unset.
    pub is_default: Option<bool>,
    pub stack_id: Option<String>,
    pub status: Option<ClusterStatus>,
    pub status_reason: Option<String>,
    pub version: Option<String>,
    /// JSON dict of strings.
    pub node_labels: Option<StringMap>,
    /// JSON list of objects, typically `{"key", "value", "effect"}`.
    pub node_taints: Option<Vec<Taint>>,
}

/// The role strings Magnum uses for nodegroups.
pub struct NodeGroupRole;

impl NodeGroupRole {
    pub const MASTER: &'static str = "master";
    pub const WORKER: &'static str = "worker";
}
