use chrono::NaiveDateTime;
use serde::{Deserialize, Serialize};

/// A row of `magnum_service` (`magnum/db/sqlalchemy/models.py`), in MariaDB column order.
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

impl MagnumService {
    /// `ServiceGroup.service_is_up`: not forced down, and the last heartbeat (`last_seen_up`,
    /// else `updated_at`, else `created_at`) at most `down_time` seconds from `now` (either
    /// way). The API's `state` and the conductors' live set both use it.
    pub fn is_up(&self, now: NaiveDateTime, down_time: u64) -> bool {
        if self.forced_down == Some(true) {
            return false;
        }
        let Some(last) = self.last_seen_up.or(self.updated_at).or(self.created_at) else {
            // Magnum cannot compute a delta from `None` (TypeError); such a row is not alive.
            return false;
        };
        let elapsed = (now - last)
            .num_microseconds()
            .map_or(f64::INFINITY, |us| (us as f64 / 1_000_000.0).abs());
        elapsed <= down_time as f64
    }
}
