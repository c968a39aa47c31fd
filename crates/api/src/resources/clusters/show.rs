//! `GET /v1/clusters/{id}` (`ClustersController.get_one` in
//! `magnum/api/controllers/v1/cluster.py`).

use super::common::db;
use super::{get_cluster_with_relations, types, view};
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};

/// A typical show's body is about 1.2 KB.
const SHOW_BODY_CAPACITY: usize = 2048;

/// Query → context → policy (all projects, then the cluster) → look-ups → view.
pub(super) async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    request::widen(state, &mut ctx, "cluster:get_one_all_projects")?;
    // the cluster, its nodegroups and its template on one database connection; their
    // errors in Magnum's order: the cluster's, the policy's, the nodegroups', the template's
    let found = get_cluster_with_relations(state, &ctx, ident).await?;
    let c = found.cluster;
    request::enforce_on(state, &ctx, "cluster:get", &c)?;
    let ngs = found.nodegroups.map_err(db)?;
    let template = found.template.map_err(db)?;
    let failed = c
        .status
        .is_some_and(|s| types::FAILED_STATUSES.contains(&s.as_str()));
    let faults = failed.then(|| view::faults(&ngs));
    // written straight as `json.dumps` text, as a list's items (no map of 45 keys built)
    let mut body = String::with_capacity(SHOW_BODY_CAPACITY);
    view::write_cluster_full(
        &mut body,
        &c,
        &ngs,
        template.labels.as_ref(),
        req.version,
        &req.host_url,
        faults,
    );
    Ok(Reply::ok_rendered(body))
}
