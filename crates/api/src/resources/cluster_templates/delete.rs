//! `DELETE /v1/clustertemplates/{id}` (`ClusterTemplatesController.delete` in
//! `magnum/api/controllers/v1/cluster_template.py`).

use super::{db, get_resource};
use crate::error::ApiError;
use crate::query;
use crate::request::{context, enforce_on, widen};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_db::{cluster_template as db_ct, Scope};

/// Query → context → policy (all projects, then the template) → destroy → 204.
pub(super) async fn delete(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = context(state, req);
    widen(state, &mut ctx, "clustertemplate:delete_all_projects")?;
    let db = db(state)?;
    let t = get_resource(db, &Scope::from(&ctx), ident).await?;
    enforce_on(state, &ctx, "clustertemplate:delete", &t)?;
    db_ct::destroy(db, t.uuid.as_deref().unwrap_or_default()).await?;
    Ok(Reply::empty(204))
}
