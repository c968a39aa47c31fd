use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

use super::StringMap;

/// A row of `cluster_template` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
///
/// Booleans are nullable columns; Magnum's ORM inserts `false` for `registry_enabled`,
/// `tls_disabled`, `public`, `master_lb_enabled`, `hidden` and `true` for
/// `floating_ip_enabled` when the caller leaves them unset, and the object layer reads NULL as
/// those same defaults.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClusterTemplate {
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub id: i32,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub flavor_id: Option<String>,
    pub keypair_id: Option<String>,
    pub image_id: Option<String>,
    pub external_network_id: Option<String>,
    pub dns_nameserver: Option<String>,
    pub apiserver_port: Option<i32>,
    pub project_id: Option<String>,
    pub user_id: Option<String>,
    pub docker_volume_size: Option<i32>,
    pub fixed_network: Option<String>,
    pub master_flavor_id: Option<String>,
    pub cluster_distro: Option<String>,
    /// A [`super::ClusterType`] value (`kubernetes`) for rows Magnum 23.0.0 wrote.
    pub coe: Option<String>,
    pub http_proxy: Option<String>,
    pub https_proxy: Option<String>,
    pub no_proxy: Option<String>,
    pub registry_enabled: Option<bool>,
    pub network_driver: Option<String>,
    /// JSON dict of strings.
    pub labels: Option<StringMap>,
    pub tls_disabled: Option<bool>,
    pub public: Option<bool>,
    /// Server default `'vm'`.
    pub server_type: Option<String>,
    pub volume_driver: Option<String>,
    pub insecure_registry: Option<String>,
    pub docker_storage_driver: Option<String>,
    pub master_lb_enabled: Option<bool>,
    pub fixed_subnet: Option<String>,
    pub floating_ip_enabled: Option<bool>,
    pub hidden: Option<bool>,
    pub tags: Option<String>,
    pub driver: Option<String>,
}
