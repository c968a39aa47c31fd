//! `GET /v1/clustertemplates`, `/detail` and `/{marker}/detail`
//! (`ClusterTemplatesController.get_all` and `detail` in
//! `magnum/api/controllers/v1/cluster_template.py`).

use super::view::view;
use super::{db, RESOURCE};
use crate::error::ApiError;
use crate::pagination::{self, ListParams, LIST_ARGS};
use crate::query;
use crate::request::{context, enforce, widen};
use crate::response::Reply;
use crate::validation::invalid_input;
use crate::{ApiState, RequestInfo};
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_db::{cluster_template as db_ct, ClusterTemplateFilters, Page, Scope};

/// Query → context → policy → the page → view.
pub(super) async fn get_all(
    state: &ApiState,
    req: &RequestInfo,
    positional_marker: Option<&str>,
    detail: bool,
) -> Result<Reply, ApiError> {
    // `/{x}/detail`: pecan passes `x` as the first positional argument (the marker).
    if let Some(m) = positional_marker {
        if !openkeel_db::ident::is_uuid_like(m) {
            return Err(invalid_input(
                "marker",
                m,
                &format!("unable to convert to uuid. Error: Expected a uuid but received {m}."),
            )
            .into());
        }
    }
    let args = query::parse_args(req, &LIST_ARGS)?;
    let mut ctx = context(state, req);
    let (rule, all_rule, resource_url) = if detail {
        (
            "clustertemplate:detail",
            "clustertemplate:detail_all_projects",
            "clustertemplates/detail",
        )
    } else {
        (
            "clustertemplate:get_all",
            "clustertemplate:get_all_all_projects",
            RESOURCE,
        )
    };
    enforce(state, &ctx, rule, None)?;
    if positional_marker.is_some() {
        // "/detail should only work against collections".
        return Err(MagnumError::new(ErrorKind::HTTPNotFound, &[]).into());
    }
    widen(state, &mut ctx, all_rule)?;
    let list = ListParams::from_args(&args);
    let limit = pagination::validate_limit(list.limit, state.template_settings.max_limit)?;
    pagination::validate_sort_dir(&list.sort_dir)?;
    let db = db(state)?;
    let scope = Scope::from(&ctx);
    let marker = match &list.marker {
        Some(m) => Some(db_ct::get_by_uuid(db, &scope, m).await?),
        None => None,
    };
    let mut page = Page::all()
        .limit(limit)
        .sort(&list.sort_key, &list.sort_dir);
    if let Some(m) = &marker {
        page = page.marker(m);
    }
    let rows = db_ct::list(db, &scope, &ClusterTemplateFilters::default(), &page).await?;
    let last = rows.last().and_then(|t| t.uuid.clone()).unwrap_or_default();
    let next = pagination::next_link(
        &req.host_url,
        resource_url,
        &list.next_args(),
        limit,
        rows.len(),
        &last,
    );
    let items = rows.iter().map(|t| view(t, &req.host_url)).collect();
    Ok(Reply::ok(pagination::collection(RESOURCE, items, next)))
}
