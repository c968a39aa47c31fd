//! `/v1/clusters/{id}/actions/resize|upgrade` (`magnum/api/controllers/v1/cluster_actions.py`).

use super::service::int_of;
use super::types::actions as at;
use super::{
    cluster_nodegroups, cluster_template_of, common, default_worker, get_cluster, not_at_version,
    read_json, wsme,
};
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use common::{conductor, database, db};
use http::Method;
use openkeel_core::context::RequestContext;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{Cluster, NodeGroup};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{cluster_template, nodegroup, Scope};
use openkeel_rpc::Obj;
use serde_json::json;

/// Route `actions/...` of the cluster `ident`.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
    tail: &[&str],
) -> Result<Reply, ApiError> {
    match tail {
        [name @ ("resize" | "upgrade"), rest @ ..] => {
            // The versioned handler is looked up while routing.
            if !req.version.at_least(7) {
                return Err(not_at_version(req.version, name));
            }
            if !rest.is_empty() || req.method != Method::POST {
                return Err(ApiError::method_not_allowed(""));
            }
            if *name == "resize" {
                resize(state, req, body, ident).await
            } else {
                upgrade(state, req, body, ident).await
            }
        }
        _ => Err(ApiError::method_not_allowed("")),
    }
}

/// The controller reached with other routing arguments than the cluster's
/// (`/v1/clusters/a/b/actions/resize`): the same version gate and 405s, and no handler takes
/// the arguments.
pub fn beyond_arguments(req: &RequestInfo, tail: &[&str]) -> ApiError {
    match tail {
        [name @ ("resize" | "upgrade"), rest @ ..] => {
            if !req.version.at_least(7) {
                not_at_version(req.version, name)
            } else if !rest.is_empty() || req.method != Method::POST {
                ApiError::method_not_allowed("")
            } else {
                ApiError::not_found()
            }
        }
        _ => ApiError::method_not_allowed(""),
    }
}

/// A mandatory attribute sent as `null` (or, for upgrade, not sent): Magnum fails later with
/// a 500; OpenKeel refuses it with WSME's mandatory-field 400 (docs/differences.md).
fn mandatory(name: &str) -> ApiError {
    wsme::invalid_input(name, "None", "Mandatory field missing.").into()
}

/// The nodegroup an action targets: the named one (`NodeGroup.get`: id, uuid or name within
/// the cluster), else the default worker.
async fn target_nodegroup(
    state: &ApiState,
    ctx: &RequestContext,
    cluster: &Cluster,
    ident: Option<&str>,
) -> Result<NodeGroup, ApiError> {
    match ident.filter(|s| !s.is_empty()) {
        Some(ng) => nodegroup::get(
            database(state)?,
            &Scope::from(ctx),
            cluster.uuid.as_deref().unwrap_or_default(),
            ng,
        )
        .await
        .map_err(db),
        None => {
            let ngs = cluster_nodegroups(state, ctx, cluster).await?;
            default_worker(&ngs).cloned()
        }
    }
}

async fn resize(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let value = read_json(req, body, "cluster_resize_req").await?;
    let f = wsme::from_json("cluster_resize_req", &value, at::RESIZE)?;
    let node_count = int_of(f.get("node_count"));
    if !req.version.at_least(10) && node_count == Some(0) {
        return Err(MagnumError::new(ErrorKind::ZeroNodeCountNotSupported, &[]).into());
    }
    let ctx = request::context(state, req);
    let cluster = get_cluster(state, &ctx, ident).await?;
    request::enforce_on(state, &ctx, "cluster:resize", &cluster)?;
    let ng_ident = match f.get("nodegroup") {
        Some(PyValue::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let ng = target_nodegroup(state, &ctx, &cluster, ng_ident.as_deref()).await?;
    let Some(node_count) = node_count else {
        return Err(mandatory("node_count"));
    };
    let min = i64::from(ng.min_node_count.unwrap_or(0));
    let max = ng.max_node_count.map(i64::from);
    let is_master = super::view::is_master(&ng);
    let out_of_bounds =
        !is_master && (min > node_count || max.is_some_and(|m| m != 0 && m < node_count));
    if out_of_bounds {
        return Err(MagnumError::new(
            ErrorKind::NGResizeOutBounds,
            &[
                ("nodegroup", &ng.name),
                ("min_nc", &min),
                (
                    "max_nc",
                    &max.map_or_else(|| "None".to_string(), |m| m.to_string()),
                ),
            ],
        )
        .into());
    }
    if is_master {
        // `Driver.get_driver_for_cluster(context, cluster).validate_master_resize(n)`: the
        // cluster's template by uuid, its type and `driver`; the base driver refuses.
        let Some(drivers) = &state.drivers else {
            return Err(MagnumError::new(ErrorKind::MasterNGResizeNotSupported, &[]).into());
        };
        let template = cluster_template::get_by_uuid(
            database(state)?,
            &Scope::from(&ctx),
            cluster.cluster_template_id.as_deref().unwrap_or_default(),
        )
        .await
        .map_err(db)?;
        drivers.validate_master_resize(
            template.server_type.as_deref(),
            template.cluster_distro.as_deref(),
            template.coe.as_deref(),
            template.driver.as_deref(),
            node_count,
        )?;
    }
    let nodes_to_remove: Vec<String> = match f.getattr(&at::NODES_TO_REMOVE) {
        Some(PyValue::List(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    };
    let uuid = cluster.uuid.clone().unwrap_or_default();
    conductor(state)?
        .cluster_resize(
            &ctx,
            Obj::unchanged(cluster),
            i32::try_from(node_count).unwrap_or(i32::MAX),
            nodes_to_remove,
            Obj::unchanged(ng),
        )
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}

async fn upgrade(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let value = read_json(req, body, "cluster_upgrade_req").await?;
    let f = wsme::from_json("cluster_upgrade_req", &value, at::UPGRADE)?;
    if !req.version.at_least(8) {
        return Err(MagnumError::new(ErrorKind::ClusterUpgradeNotSupported, &[]).into());
    }
    let mut ctx = request::context(state, req);
    request::widen(state, &mut ctx, "cluster:upgrade_all_projects")?;
    let cluster = get_cluster(state, &ctx, ident).await?;
    request::enforce_on(state, &ctx, "cluster:upgrade", &cluster)?;
    // Magnum: a missing `cluster_template` fails in the DB layer with a 500.
    let Some(PyValue::Str(ct_ident)) = f.get("cluster_template") else {
        return Err(mandatory("cluster_template"));
    };
    let dbh = database(state)?;
    let scope = Scope::from(&ctx);
    let new_template = if openkeel_db::ident::is_uuid_like(ct_ident) {
        cluster_template::get_by_uuid(dbh, &scope, ct_ident).await
    } else {
        cluster_template::get_by_name(dbh, &scope, ct_ident).await
    }
    .map_err(db)?;
    let ng_ident = match f.get("nodegroup") {
        Some(PyValue::Str(s)) if !s.is_empty() => Some(s.clone()),
        _ => None,
    };
    let ng = target_nodegroup(state, &ctx, &cluster, ng_ident.as_deref()).await?;
    if ng_ident.is_some()
        && new_template.uuid != cluster.cluster_template_id
        && ng.is_default != Some(true)
    {
        let current = cluster_template_of(state, &ctx, &cluster).await?;
        let reason = format!(
            "Nodegroup {} can be upgraded only to match cluster's template ({}).",
            ng.name,
            current.name.as_deref().unwrap_or("None")
        );
        return Err(MagnumError::new(
            ErrorKind::InvalidClusterTemplateForUpgrade,
            &[("reason", &reason)],
        )
        .into());
    }
    // Magnum: an omitted `max_batch_size` reaches the RPC serializer as WSME's Unset (500).
    let Some(max_batch_size) = int_of(f.get("max_batch_size")) else {
        return Err(mandatory("max_batch_size"));
    };
    // OpenKeel: what the driver knows it cannot do is a 400 before anything is written
    if let Some(drivers) = &state.drivers {
        let current = cluster_template_of(state, &ctx, &cluster).await?;
        drivers.validate_cluster_upgrade(&current, &cluster, &new_template)?;
    }
    let uuid = cluster.uuid.clone().unwrap_or_default();
    conductor(state)?
        .cluster_upgrade(
            &ctx,
            Obj::unchanged(cluster),
            Obj::unchanged(new_template),
            i32::try_from(max_batch_size).unwrap_or(i32::MAX),
            Obj::unchanged(ng),
            false,
        )
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}
