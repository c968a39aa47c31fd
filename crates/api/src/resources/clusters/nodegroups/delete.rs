//! `DELETE /v1/clusters/{id}/nodegroups/{ng}` (`NodeGroupController.delete` in
//! `magnum/api/controllers/v1/nodegroup.py`): a `nodegroup_delete` cast.

use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::resources::clusters::common::conductor;
use crate::resources::clusters::common::{database, db};
use crate::resources::clusters::get_cluster;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::{nodegroup, Scope};
use openkeel_rpc::Obj;

/// Query → context → policy → the cluster and the nodegroup → cast → 204.
pub(super) async fn delete(
    state: &ApiState,
    req: &RequestInfo,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:delete", None)?;
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    let ng = nodegroup::get(
        database(state)?,
        &Scope::from(&ctx),
        cluster.uuid.as_deref().unwrap_or_default(),
        ng_ident,
    )
    .await
    .map_err(db)?;
    if ng.is_default == Some(true) {
        return Err(MagnumError::new(ErrorKind::DeletingDefaultNGNotSupported, &[]).into());
    }
    conductor(state)?
        .nodegroup_delete(&ctx, Obj::unchanged(cluster), Obj::unchanged(ng))
        .await?;
    Ok(Reply::empty(204))
}
