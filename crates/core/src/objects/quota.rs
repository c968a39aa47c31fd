use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A row of `quotas` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Quota {
    pub id: i32,
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub project_id: Option<String>,
    /// Always [`QuotaResource::CLUSTER`] in Magnum 23.0.0.
    pub resource: Option<String>,
    pub hard_limit: i32,
}

/// Quota resource names (`QuotaResourceName`).
pub struct QuotaResource;

impl QuotaResource {
    pub const CLUSTER: &'static str = "Cluster";
    pub const ALL: &'static [&'static str] = &[Self::CLUSTER];
}
