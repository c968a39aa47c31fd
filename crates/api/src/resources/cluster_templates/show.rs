//! `GET /v1/clustertemplates/{id}` (`ClusterTemplatesController.get_one` in
//! `magnum/api/controllers/v1/cluster_template.py`).

use super::view::view;
use super::{db, get_resource};
use crate::error::ApiError;
use crate::query;
use crate::request::{context, enforce_on, widen};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::Scope;

/// Query → context → policy (all projects) → look-up → visibility and policy of the
/// template → view.
pub(super) async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = context(state, req);
    widen(state, &mut ctx, "clustertemplate:get_one_all_projects")?;
    let t = get_resource(db(state)?, &Scope::from(&ctx), ident).await?;
    if t.hidden == Some(true) && !ctx.is_admin && t.project_id != ctx.project_id {
        return Err(MagnumError::new(
            ErrorKind::ClusterTemplateNotFound,
            &[("clustertemplate", &ident)],
        )
        .into());
    }
    if t.public != Some(true) {
        enforce_on(state, &ctx, "clustertemplate:get", &t)?;
    }
    Ok(Reply::ok(view(&t, &req.host_url)))
}
