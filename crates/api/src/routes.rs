//! Magnum's route table (`api-routes.md`): which (method, path) reaches which handler, and
//! the 404 / 405 (`Allow`) answers pecan gives for everything else. Each resource module
//! owns the routes under its collection and exposes one `route` function.

use crate::error::ApiError;
use crate::resources;
use crate::response::Reply;
use crate::{versions, ApiState, RequestInfo};
use axum::body::Body;
use http::Method;

/// `GET /`: the root document; any other method is 405 `Allow: GET`.
pub fn root(req: &RequestInfo) -> Result<Reply, ApiError> {
    match req.method {
        Method::GET => Ok(Reply::ok(versions::root(&req.host_url))),
        _ => Err(ApiError::method_not_allowed("GET")),
    }
}

/// Everything under `/v1` (after the prefix rewrite and version negotiation).
pub async fn v1(state: &ApiState, req: &RequestInfo, body: Body) -> Result<Reply, ApiError> {
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["v1"] => match req.method {
            Method::GET => Ok(Reply::ok(versions::v1(&req.host_url))),
            _ => Err(ApiError::method_not_allowed("GET")),
        },
        ["v1", "clustertemplates", rest @ ..] => {
            resources::cluster_templates::route(state, req, body, rest).await
        }
        ["v1", "clusters", rest @ ..] => resources::clusters::route(state, req, body, rest).await,
        ["v1", "certificates", rest @ ..] => {
            resources::certificates::route(state, req, body, rest).await
        }
        ["v1", "credentials", rest @ ..] => {
            resources::certificates::route_credentials(state, req, body, rest).await
        }
        ["v1", "quotas", rest @ ..] => resources::quotas::route(state, req, body, rest).await,
        ["v1", "stats", rest @ ..] => resources::stats::route(state, req, rest).await,
        ["v1", "mservices", rest @ ..] => resources::mservices::route(state, req, rest).await,
        ["v1", "federations", rest @ ..] => {
            resources::federations::route(state, req, body, rest).await
        }
        _ => Err(ApiError::not_found()),
    }
}
