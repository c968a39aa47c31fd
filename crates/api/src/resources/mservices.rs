//! `/v1/mservices` (`magnum/api/controllers/v1/magnum_services.py`): the service heartbeat
//! rows with their computed `state` (`magnum/api/servicegroup.py`).

use crate::error::ApiError;
use crate::pagination;
use crate::query;
use crate::request::{context, enforce};
use crate::response::Reply;
use crate::validation::{str_ty, Attr, AttrType};
use crate::{ApiState, RequestInfo};
use chrono::NaiveDateTime;
use http::Method;
use openkeel_core::error::MagnumError;
use openkeel_core::objects::MagnumService;
use openkeel_db::{magnum_service as db_service, Page};
use serde_json::{Map, Value};

/// The only method of every mservices path.
const ALLOW: &str = "GET";

/// `[DEFAULT] service_down_time` default (seconds). `ApiState` does not carry the option yet
/// (wiring it needs a field there and in every `ApiState` initializer), so the list uses it.
pub const DEFAULT_SERVICE_DOWN_TIME: u64 = 180;

/// Route a request under `/v1/mservices`: only `GET /v1/mservices`; anything below it is 405.
pub async fn route(state: &ApiState, req: &RequestInfo, rest: &[&str]) -> Result<Reply, ApiError> {
    match (rest, &req.method) {
        ([], &Method::GET) => get_all(state, req).await,
        _ => Err(ApiError::method_not_allowed(ALLOW)),
    }
}

/// `ServiceGroup.service_is_up` ([`MagnumService::is_up`], shared with the conductor's
/// ownership of the periodic work).
pub fn service_is_up(s: &MagnumService, now: NaiveDateTime, down_time: u64) -> bool {
    s.is_up(now, down_time)
}

/// The `MagnumService` API type's attributes in the order the API prints them: `state`
/// (computed) among the object's fields (`last_seen_up` and `forced_down` are not API
/// attributes).
pub const API_ATTRS: [Attr; 9] = [
    Attr::new("host", str_ty(1, 255)),
    Attr::new("binary", str_ty(1, 255)),
    Attr::new(
        "state",
        AttrType::Enum {
            values: &["up", "down"],
            shown: "up, down",
        },
    ),
    Attr::new(
        "id",
        AttrType::Int {
            min: None,
            max: None,
        },
    ),
    Attr::new(
        "report_count",
        AttrType::Int {
            min: None,
            max: None,
        },
    ),
    Attr::new("disabled", AttrType::Bool),
    Attr::new("disabled_reason", str_ty(1, 255)),
    Attr::new("created_at", AttrType::DateTime).readonly(),
    Attr::new("updated_at", AttrType::DateTime).readonly(),
];

/// One service as the API shows it: the attributes of [`API_ATTRS`].
pub fn view(s: &MagnumService, up: bool) -> Value {
    let opt = |v: Option<&str>| v.map_or(Value::Null, |s| Value::String(s.to_string()));
    let time = |t: Option<&NaiveDateTime>| {
        t.map_or(Value::Null, |d| {
            Value::String(crate::resources::cluster_templates::isoformat(d))
        })
    };
    let mut m = Map::new();
    for a in API_ATTRS.iter() {
        let v = match a.name {
            "host" => opt(s.host.as_deref()),
            "binary" => opt(s.binary.as_deref()),
            "state" => Value::String(if up { "up" } else { "down" }.into()),
            "id" => Value::from(s.id),
            "report_count" => Value::from(s.report_count),
            "disabled" => s.disabled.map_or(Value::Null, Value::Bool),
            "disabled_reason" => opt(s.disabled_reason.as_deref()),
            "created_at" => time(s.created_at.as_ref()),
            "updated_at" => time(s.updated_at.as_ref()),
            _ => Value::Null,
        };
        m.insert(a.name.to_string(), v);
    }
    Value::Object(m)
}

async fn get_all(state: &ApiState, req: &RequestInfo) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = context(state, req);
    // @policy.enforce_wsgi("magnum-service"): `magnum-service:get_all`, default target.
    enforce(state, &ctx, "magnum-service:get_all", None)?;
    let db = state
        .db
        .as_ref()
        .ok_or_else(|| ApiError::from(MagnumError::internal("no database configured")))?;
    let rows = db_service::list(db, None, &Page::all().sort("id", "asc")).await?;
    let now = chrono::Utc::now().naive_utc();
    let items = rows
        .iter()
        .map(|s| view(s, service_is_up(s, now, state.service_down_time)))
        .collect();
    Ok(Reply::ok(pagination::collection("mservices", items, None)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Duration;

    #[test]
    fn up_and_down() {
        let now = chrono::Utc::now().naive_utc();
        let mut s = MagnumService {
            created_at: Some(now - Duration::seconds(1000)),
            ..Default::default()
        };
        assert!(!service_is_up(&s, now, 180));
        s.updated_at = Some(now - Duration::seconds(100));
        assert!(service_is_up(&s, now, 180));
        s.last_seen_up = Some(now - Duration::seconds(181));
        assert!(!service_is_up(&s, now, 180));
        s.last_seen_up = Some(now + Duration::seconds(100));
        assert!(service_is_up(&s, now, 180));
        s.forced_down = Some(true);
        assert!(!service_is_up(&s, now, 180));
    }
}
