//! `GET /v1/clusters/{id}/nodegroups` (`NodeGroupController.get_all` in
//! `magnum/api/controllers/v1/nodegroup.py`).

use super::LIST_ARGS;
use crate::error::ApiError;
use crate::pagination;
use crate::query;
use crate::request;
use crate::resources::clusters::common::{database, db};
use crate::resources::clusters::get_cluster;
use crate::resources::clusters::view;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_db::{nodegroup, NodeGroupFilters, Page, Scope};
use serde_json::Value;

/// Query → context → policy → the cluster → the page → view.
pub(super) async fn list(
    state: &ApiState,
    req: &RequestInfo,
    cluster_ident: &str,
) -> Result<Reply, ApiError> {
    let args = query::parse_args(req, &LIST_ARGS)?;
    let params = pagination::ListParams::from_args(&args);
    let mut ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:get_all", None)?;
    request::widen(state, &mut ctx, "nodegroup:get_all_all_projects")?;
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    let cluster_uuid = cluster.uuid.clone().unwrap_or_default();
    let filters = NodeGroupFilters {
        role: args
            .text("role")
            .filter(|r| !r.is_empty())
            .map(str::to_string),
        ..NodeGroupFilters::default()
    };
    let limit = pagination::validate_limit(params.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&params.sort_dir)?;
    let dbh = database(state)?;
    let scope = Scope::from(&ctx);
    let marker = match &params.marker {
        Some(m) => Some(
            nodegroup::get(dbh, &scope, &cluster_uuid, m)
                .await
                .map_err(db)?,
        ),
        None => None,
    };
    let page = Page {
        limit: Some(limit),
        marker: marker.as_ref(),
        sort_key: Some(&params.sort_key),
        sort_dir: Some(&params.sort_dir),
    };
    let ngs = nodegroup::list(dbh, &scope, &cluster_uuid, &filters, &page)
        .await
        .map_err(db)?;
    let items: Vec<Value> = ngs.iter().map(view::ng_summary).collect();
    let last = ngs.last().map(|n| n.uuid.clone()).unwrap_or_default();
    let next = pagination::next_link(
        &req.host_url,
        &format!("clusters/{cluster_uuid}/nodegroups"),
        &params.next_args(),
        limit,
        items.len(),
        &last,
    );
    Ok(Reply::ok(pagination::collection("nodegroups", items, next)))
}
