use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

use super::{FederationStatus, StringMap};

/// A row of `federation` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
///
/// `hostcluster_id` and `member_ids` hold cluster uuids.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Federation {
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub id: i32,
    pub project_id: Option<String>,
    pub uuid: Option<String>,
    pub name: Option<String>,
    pub hostcluster_id: Option<String>,
    /// JSON list of strings.
    pub member_ids: Option<Vec<String>>,
    pub status: Option<FederationStatus>,
    pub status_reason: Option<String>,
    /// JSON dict of strings.
    pub properties: Option<StringMap>,
}
