//! `GET /v1/clusters/{id}` (`ClustersController.get_one` in
//! `magnum/api/controllers/v1/cluster.py`).

use super::{cluster_nodegroups, cluster_template_of, get_cluster, target, types, view};
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};

/// Query → context → policy (all projects, then the cluster) → look-ups → view.
pub(super) async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    request::widen(state, &mut ctx, "cluster:get_one_all_projects")?;
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce(state, &ctx, "cluster:get", Some(&target(&c)))?;
    let ngs = cluster_nodegroups(state, &ctx, &c).await?;
    let template = cluster_template_of(state, &ctx, &c).await?;
    let failed = c
        .status
        .is_some_and(|s| types::FAILED_STATUSES.contains(&s.as_str()));
    let faults = failed.then(|| view::faults(&ngs));
    Ok(Reply::ok(view::cluster_full(
        &c,
        &ngs,
        template.labels.as_ref(),
        req.version,
        &req.host_url,
        faults,
    )))
}
