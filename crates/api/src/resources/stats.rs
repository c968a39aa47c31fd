//! `/v1/stats` (`magnum/api/controllers/v1/stats.py`): cluster and node counts.

use crate::error::ApiError;
use crate::query::{self, ArgSpec, ArgType};
use crate::request::{context, enforce};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use http::Method;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::Stats;
use serde_json::{Map, Value};

/// The only method of every stats path.
const ALLOW: &str = "GET";

/// The stats types Magnum knows (`allowed_stats`).
const ALLOWED_STATS: [&str; 1] = ["cluster"];

/// `get_all`'s query arguments.
pub const ARGS: [ArgSpec; 2] = [
    ArgSpec {
        name: "project_id",
        ty: ArgType::Text,
    },
    ArgSpec {
        name: "type",
        ty: ArgType::Text,
    },
];

/// Route a request under `/v1/stats`: only `GET /v1/stats`; anything below it is 405.
pub async fn route(state: &ApiState, req: &RequestInfo, rest: &[&str]) -> Result<Reply, ApiError> {
    match (rest, &req.method) {
        ([], &Method::GET) => get_all(state, req).await,
        _ => Err(ApiError::method_not_allowed(ALLOW)),
    }
}

/// The stats body: `{"clusters": n, "nodes": m}`.
pub fn view(s: &Stats) -> Value {
    let mut m = Map::new();
    m.insert("clusters".into(), Value::from(s.clusters));
    m.insert("nodes".into(), Value::from(s.nodes));
    Value::Object(m)
}

async fn get_all(state: &ApiState, req: &RequestInfo) -> Result<Reply, ApiError> {
    let args = query::parse_args(req, &ARGS)?;
    let ctx = context(state, req);
    enforce(state, &ctx, "stats:get_all", None)?;
    let ty = args.text("type").unwrap_or("cluster");
    if !ALLOWED_STATS.contains(&ty.to_lowercase().as_str()) {
        return Err(MagnumError::invalid_parameter(format!(
            "Invalid stats type. Allowed values are '{}'",
            ALLOWED_STATS.join(",")
        ))
        .into());
    }
    let mut project_id = args.text("project_id").map(str::to_string);
    if !ctx.is_admin {
        // A non-admin sees its own project's stats, and only those.
        if project_id.as_deref().is_none_or(str::is_empty) {
            project_id = ctx.project_id.clone();
        }
        if project_id != ctx.project_id {
            return Err(MagnumError::new(ErrorKind::NotAuthorized, &[]).into());
        }
    }
    let db = state
        .db
        .as_ref()
        .ok_or_else(|| ApiError::from(MagnumError::internal("no database configured")))?;
    let stats = openkeel_db::cluster::stats(db, project_id.as_deref()).await?;
    Ok(Reply::ok(view(&stats)))
}
