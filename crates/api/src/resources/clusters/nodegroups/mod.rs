//! `/v1/clusters/{id}/nodegroups[/{ng}]` (`magnum/api/controllers/v1/nodegroup.py`), 1.9+:
//! one file per operation ([`list`], [`show`], [`create`], [`update`], [`delete`]), the checks
//! create and update share in [`checks`], the cluster defaults, the object cast and the PATCH's
//! changed fields in [`service`].

mod checks;
mod create;
mod delete;
mod list;
mod service;
mod show;
mod update;

use super::types::nodegroup as nt;
use super::{missing_argument, not_at_version, positional_body_error, read_json};
use crate::error::ApiError;
use crate::pagination;
use crate::query::{self, ArgSpec, ArgType};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use http::Method;

const ALLOW: &str = "DELETE, GET, PATCH, POST";

/// Route `nodegroups/...` of the cluster `cluster_ident`.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
    tail: &[&str],
) -> Result<Reply, ApiError> {
    version_gate(req)?;
    let m = &req.method;
    match tail {
        [] => match *m {
            Method::GET => list::list(state, req, cluster_ident).await,
            Method::POST => create::create(state, req, body, cluster_ident).await,
            Method::DELETE => Err(missing_argument("nodegroup_id")),
            Method::PATCH => {
                query::parse_args(req, &[])?;
                let value = read_json(req, body, "patch").await?;
                nt::PATCH.parse(&value)?;
                Err(missing_argument("nodegroup_id"))
            }
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [ng] => match *m {
            Method::GET => show::get_one(state, req, cluster_ident, ng).await,
            Method::PATCH => update::update(state, req, body, cluster_ident, ng).await,
            Method::DELETE => delete::delete(state, req, cluster_ident, ng).await,
            Method::POST => Err(positional_body_error("nodegroup", "NodeGroup", ng)),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::beyond_arguments(m, ALLOW)),
    }
}

/// Every handler of the controller is versioned: looked up while routing (`get_one`, what
/// a magnum-api that has served the controller names; see docs/differences.md).
fn version_gate(req: &RequestInfo) -> Result<(), ApiError> {
    if req.version.at_least(9) {
        Ok(())
    } else {
        Err(not_at_version(req.version, "get_one"))
    }
}

/// The controller reached with other routing arguments than the cluster's
/// (`/v1/clusters/a/b/nodegroups`): the version gate, then no handler takes them.
pub fn beyond_arguments(req: &RequestInfo) -> ApiError {
    match version_gate(req) {
        Err(e) => e,
        Ok(()) => ApiError::beyond_arguments(&req.method, ALLOW),
    }
}

/// `get_all`'s query arguments: the list arguments and `role`.
pub const LIST_ARGS: [ArgSpec; 5] = [
    pagination::LIST_ARGS[0],
    pagination::LIST_ARGS[1],
    pagination::LIST_ARGS[2],
    pagination::LIST_ARGS[3],
    ArgSpec {
        name: "role",
        ty: ArgType::Text,
    },
];
