//! Magnum's route table (`api-routes.md`): which (method, path) reaches which handler, and
//! the 404 / 405 (`Allow`) answers pecan gives for everything else.

use crate::error::ApiError;
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
pub async fn v1(_state: &ApiState, req: &RequestInfo, _body: Body) -> Result<Reply, ApiError> {
    let segs: Vec<&str> = req.segments.iter().map(String::as_str).collect();
    match segs.as_slice() {
        ["v1"] => match req.method {
            Method::GET => Ok(Reply::ok(versions::v1(&req.host_url))),
            _ => Err(ApiError::method_not_allowed("GET")),
        },
        _ => Err(ApiError::not_found()),
    }
}
