//! `DELETE /v1/clusters/{id}` (`ClustersController.delete` in
//! `magnum/api/controllers/v1/cluster.py`): a `cluster_delete` cast.

use super::common::conductor;
use super::get_cluster;
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};

/// Query → context → policy → look-up → cast → 204.
pub(super) async fn delete(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    request::widen(state, &mut ctx, "cluster:delete_all_projects")?;
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce_on(state, &ctx, "cluster:delete", &c)?;
    conductor(state)?
        .cluster_delete(&ctx, c.uuid.clone().unwrap_or_default())
        .await?;
    Ok(Reply::empty(204))
}
