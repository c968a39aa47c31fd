//! `PATCH /v1/clusters/{id}` (`ClustersController.patch` in
//! `magnum/api/controllers/v1/cluster.py`): the JSON patch applied to the cluster's API
//! document, the delta ([`service::patch_delta`]) limited to `node_count` and the health
//! fields, then a `cluster_update` cast.

use super::common::{self, conductor, FlavorRef};
use super::types::cluster as ct;
use super::{cluster_nodegroups, default_worker, get_cluster, read_json, service, view, wsme};
use crate::error::ApiError;
use crate::patch;
use crate::query::{self, ArgSpec, ArgType};
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::StringMap;
use openkeel_core::pyvalue::PyValue;
use openkeel_rpc::Obj;
use serde_json::json;
use service::int_of;

/// The PATCH query argument (from 1.3).
pub const PATCH_ARGS: [ArgSpec; 1] = [ArgSpec {
    name: "rollback",
    ty: ArgType::Bool,
}];

/// The PATCH query (`rollback` from 1.3) and body (`[ClusterPatchType]`).
pub(super) async fn patch_body(
    _state: &ApiState,
    req: &RequestInfo,
    body: Body,
) -> Result<(bool, Vec<patch::PatchOp>), ApiError> {
    let rollback = if req.version.at_least(3) {
        let args = query::parse_args(req, &PATCH_ARGS)?;
        args.bool("rollback").unwrap_or(false)
    } else {
        query::parse_args(req, &[])?;
        false
    };
    // Magnum (1.3+): a missing body is a 500 (`'NoneType' object is not iterable`).
    let value = read_json(req, body, "patch").await?;
    let ops = ct::PATCH.parse(&value)?;
    Ok((rollback, ops))
}

/// Query and body → context → policy → look-ups → patch and validation → cast → 202.
pub(super) async fn update(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    ident: &str,
) -> Result<Reply, ApiError> {
    let (rollback, mut ops) = patch_body(state, req, body).await?;
    let mut ctx = request::context(state, req);
    request::widen(state, &mut ctx, "cluster:update_all_projects")?;
    let c = get_cluster(state, &ctx, ident).await?;
    request::enforce_on(state, &ctx, "cluster:update", &c)?;
    request::enforce(state, &ctx, "cluster:update_health_status", None)?;
    let ngs = cluster_nodegroups(state, &ctx, &c).await?;
    let doc = view::cluster_doc(&c, &ngs);
    let mut patched = patch::apply_jsonpatch(&doc, &mut ops)?;
    wsme::coerce_nested(&ops, &mut patched, &["labels", "health_status_reason"]);
    let new = wsme::construct(&patched, ct::FIELDS)?;

    let delta = service::patch_delta(&doc, &new);

    // Root volume of the patched flavors (labels that are not a dict: Magnum 500s; the
    // property check below refuses the change instead).
    if let Some(PyValue::Dict(items)) = new.get("labels") {
        let labels: StringMap = items
            .iter()
            .map(|(k, v)| (k.py_str(), v.py_str()))
            .collect();
        let cloud = common::cloud(state)?;
        for attr in [&ct::FLAVOR_ID, &ct::MASTER_FLAVOR_ID] {
            let v = new.getattr(attr);
            let r = match &v {
                None => FlavorRef::Unset,
                Some(PyValue::Str(s)) => FlavorRef::Name(s),
                Some(_) => FlavorRef::Null,
            };
            common::check_root_volume(
                cloud,
                &ctx,
                Some(&labels),
                r,
                state.template_settings.default_boot_volume_size,
            )
            .await?;
        }
    }
    let disallowed: Vec<&str> = delta
        .iter()
        .copied()
        .filter(|f| !matches!(*f, "node_count" | "health_status" | "health_status_reason"))
        .collect();
    if !disallowed.is_empty() {
        return Err(MagnumError::invalid_parameter(format!(
            "cannot change cluster property(ies) {}.",
            disallowed.join(", ")
        ))
        .into());
    }

    let mut node_count = view::ng_node_count(default_worker(&ngs)?);
    for op in ops.iter() {
        if op.path.as_deref() == Some("/node_count") {
            node_count = match &op.value {
                Some(v) if v.truthy() => int_of(Some(v)).unwrap_or(0),
                _ => int_of(new.getattr(&ct::NODE_COUNT).as_ref()).unwrap_or(1),
            };
        }
    }
    if !req.version.at_least(10) && node_count == 0 {
        return Err(MagnumError::new(ErrorKind::ZeroNodeCountNotSupported, &[]).into());
    }
    let health_status = match new.getattr(&ct::HEALTH_STATUS) {
        Some(PyValue::Str(s)) => Some(s),
        _ => None,
    };
    let health_status_reason = match new.getattr(&ct::HEALTH_STATUS_REASON) {
        Some(v @ PyValue::Dict(_)) => Some(wsme::string_map("health_status_reason", &v)?),
        _ => None,
    };
    let uuid = c.uuid.clone().unwrap_or_default();
    conductor(state)?
        .cluster_update(
            &ctx,
            Obj::unchanged(c),
            i32::try_from(node_count).unwrap_or(i32::MAX),
            health_status,
            health_status_reason,
            rollback,
        )
        .await?;
    Ok(Reply::json(202, json!({ "uuid": uuid })))
}
