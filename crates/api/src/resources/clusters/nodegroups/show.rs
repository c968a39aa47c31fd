//! `GET /v1/clusters/{id}/nodegroups/{ng}` (`NodeGroupController.get_one` in
//! `magnum/api/controllers/v1/nodegroup.py`).

use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::resources::clusters::common::{database, db};
use crate::resources::clusters::get_cluster;
use crate::resources::clusters::view;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_db::{nodegroup, Scope};

/// Query → context → policy → the cluster and the nodegroup → view.
pub(super) async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:get", None)?;
    request::widen(state, &mut ctx, "nodegroup:get_one_all_projects")?;
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    let ng = nodegroup::get(
        database(state)?,
        &Scope::from(&ctx),
        cluster.uuid.as_deref().unwrap_or_default(),
        ng_ident,
    )
    .await
    .map_err(db)?;
    Ok(Reply::ok(view::ng_full_row(
        &ng,
        cluster.labels.as_ref(),
        &req.host_url,
    )))
}
