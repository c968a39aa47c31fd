use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A row of `magnum_service` (database.md §2.5), in MariaDB column order.
///
/// `disabled` and `forced_down` are nullable columns but Magnum's object layer cannot load a
/// row where they are NULL: always write them (Magnum's ORM inserts `false`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MagnumService {
    pub created_at: Option<NaiveDateTime>,
    pub updated_at: Option<NaiveDateTime>,
    pub id: i32,
    pub report_count: i32,
    pub host: Option<String>,
    pub binary: Option<String>,
    pub disabled: Option<bool>,
    pub disabled_reason: Option<String>,
    pub last_seen_up: Option<NaiveDateTime>,
    pub forced_down: Option<bool>,
}
