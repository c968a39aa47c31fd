//! `GET /v1/clusters` and `GET /v1/clusters/detail` (`ClustersController.get_all` and
//! `detail` in `magnum/api/controllers/v1/cluster.py`), and `GET /v1/clusters/{id}/detail`.

use super::common::{database, db};
use super::{view, wsme};
use crate::error::ApiError;
use crate::pagination;
use crate::query::{self, ArgSpec};
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::{cluster, Page, Scope};

/// Context → policy → query validation → the page, rendered row by row.
pub(super) async fn list(
    state: &ApiState,
    req: &RequestInfo,
    detail: bool,
) -> Result<Reply, ApiError> {
    let args = query::parse_args(req, &pagination::LIST_ARGS)?;
    let params = pagination::ListParams::from_args(&args);
    let mut ctx = request::context(state, req);
    let (rule, all) = if detail {
        ("cluster:detail", "cluster:detail_all_projects")
    } else {
        ("cluster:get_all", "cluster:get_all_all_projects")
    };
    request::enforce(state, &ctx, rule, None)?;
    request::widen(state, &mut ctx, all)?;
    let limit = pagination::validate_limit(params.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&params.sort_dir)?;
    let dbh = database(state)?;
    // the semaphore is never closed: a failure could only mean running unbounded
    let _permit = state.list_permits.acquire().await.ok();
    let scope = Scope::from(&ctx);
    let marker = match &params.marker {
        Some(m) => Some(cluster::get_by_uuid(dbh, &scope, m).await.map_err(db)?),
        None => None,
    };
    let page = Page {
        limit: Some(limit),
        marker: marker.as_ref(),
        sort_key: Some(&params.sort_key),
        sort_dir: Some(&params.sort_dir),
    };
    // The page's keys, nodegroup summaries and templates first (a template the caller
    // cannot see fails the whole list, as Magnum's prefetch does, for summaries too), then
    // each cluster is rendered into the body as its row arrives: the page never exists as
    // decoded rows nor as one JSON tree (docs/performance.md, memory).
    let reader = cluster::read_page(dbh, &scope, &Default::default(), &page)
        .await
        .map_err(db)?;
    let per_item = if detail { 1_200 } else { 700 };
    let mut body = pagination::CollectionWriter::new("clusters", reader.len() * per_item);
    let mut last = String::new();
    reader
        .for_each(|c, ngs, labels| {
            body.push_with(|out| {
                if detail {
                    view::write_cluster_full(
                        out,
                        &c,
                        &ngs,
                        labels,
                        req.version,
                        &req.host_url,
                        None,
                    )
                } else {
                    view::write_cluster_summary(out, &c, &ngs, req.version, &req.host_url)
                }
            });
            last = c.uuid.unwrap_or_default();
            Ok(())
        })
        .await
        .map_err(db)?;
    let url = if detail {
        "clusters/detail"
    } else {
        "clusters"
    };
    let next = pagination::next_link(
        &req.host_url,
        url,
        &params.next_args(),
        limit,
        body.len(),
        &last,
    );
    Ok(Reply::ok_rendered(body.finish(next)))
}

/// `GET /v1/clusters/{id}/detail`: `detail` with the path segment as its `marker`, refused
/// after the policy check with the unformatted `HTTPNotFound` text.
pub(super) fn detail_of_one(
    state: &ApiState,
    req: &RequestInfo,
    ident: &str,
) -> Result<Reply, ApiError> {
    if !openkeel_db::ident::is_uuid_like(ident) {
        return Err(wsme::invalid_input(
            "marker",
            ident,
            &format!("unable to convert to uuid. Error: Expected a uuid but received {ident}."),
        )
        .into());
    }
    let specs: Vec<ArgSpec> = pagination::LIST_ARGS
        .iter()
        .copied()
        .filter(|s| s.name != "marker")
        .collect();
    query::parse_args(req, &specs)?;
    let ctx = request::context(state, req);
    request::enforce(state, &ctx, "cluster:detail", None)?;
    Err(MagnumError::new(ErrorKind::HTTPNotFound, &[]).into())
}
