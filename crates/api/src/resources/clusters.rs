//! `/v1/clusters` routes.

use crate::error::ApiError;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;

/// Route a request under `/v1/clusters`; `rest` are the segments after the collection name.
pub async fn route(
    _state: &ApiState,
    _req: &RequestInfo,
    _body: Body,
    _rest: &[&str],
) -> Result<Reply, ApiError> {
    Err(ApiError::not_found())
}
