use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

use super::{ClusterHealthStatus, ClusterStatus, StringMap};

/// A row of `cluster` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
///
/// `cluster_template_id` holds the template's **uuid**. Node counts and addresses live in the
/// cluster's nodegroups (`nodegroup.cluster_id` = this `uuid`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub id: i32,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub cluster_template_id: Option<String>,
    pub api_address: Option<String>,
    pub stack_id: Option<String>,
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub status: Option<ClusterStatus>,
    pub discovery_url: Option<String>,
    pub status_reason: Option<String>,
    pub ca_cert_ref: Option<String>,
    pub magnum_cert_ref: Option<String>,
    pub create_timeout: Option<i32>,
    pub coe_version: Option<String>,
    pub container_version: Option<String>,
    pub keypair: Option<String>,
    pub docker_volume_size: Option<i32>,
    /// JSON dict of strings.
    pub labels: Option<StringMap>,
    pub master_flavor_id: Option<String>,
    pub flavor_id: Option<String>,
    pub health_status: Option<ClusterHealthStatus>,
    /// JSON dict of strings (booleans are stored as `"True"`/`"False"`).
    pub health_status_reason: Option<StringMap>,
    pub fixed_network: Option<String>,
    pub fixed_subnet: Option<String>,
    /// NULL reads as `true` in Magnum's object layer; Magnum's ORM inserts `true` when unset.
    pub floating_ip_enabled: Option<bool>,
    /// NULL reads as `false`; inserted as `false` when unset.
    pub master_lb_enabled: Option<bool>,
    pub etcd_ca_cert_ref: Option<String>,
    pub front_proxy_ca_cert_ref: Option<String>,
}
