//! `PATCH /v1/clusters/{id}/nodegroups/{ng}` (`NodeGroupController.patch` in
//! `magnum/api/controllers/v1/nodegroup.py`): the patch applied to the nodegroup's document,
//! the changed fields ([`service::apply_changes`]) checked, then a `nodegroup_update` cast.

use super::checks::{validate, Checked};
use super::service;
use crate::error::ApiError;
use crate::patch;
use crate::query;
use crate::request;
use crate::resources::clusters::common::{self, conductor, FlavorRef};
use crate::resources::clusters::common::{database, db};
use crate::resources::clusters::get_cluster;
use crate::resources::clusters::types::nodegroup as nt;
use crate::resources::clusters::{read_json, view, wsme};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_core::error::MagnumError;
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{nodegroup, Scope};
use openkeel_rpc::Obj;

/// Query and body → context → the cluster → policy → the nodegroup → patch and validation →
/// cast → 202.
pub(super) async fn update(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    // Magnum: a missing body is a 500 (`'NoneType' object is not iterable`).
    let value = read_json(req, body, "patch").await?;
    let mut ops = nt::PATCH.parse(&value)?;
    let ctx = request::context(state, req);
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    request::enforce(state, &ctx, "nodegroup:update", None)?;
    let cluster_uuid = cluster.uuid.clone().unwrap_or_default();
    let mut ng = nodegroup::get(
        database(state)?,
        &Scope::from(&ctx),
        &cluster_uuid,
        ng_ident,
    )
    .await
    .map_err(db)?;
    let doc = view::ng_doc(&ng);
    check_taint_items(&ops, &doc)?;
    let mut patched = patch::apply_jsonpatch(&doc, &mut ops)?;
    wsme::coerce_nested(&ops, &mut patched, &["labels", "node_labels"]);
    let new = wsme::construct(&patched, nt::FIELDS)?;

    // "Update only the fields that have changed" (object coercions applied).
    let changes = service::apply_changes(&mut ng, &new, &doc)?;

    let flavor = ng
        .flavor_id
        .as_deref()
        .map_or(FlavorRef::Null, FlavorRef::Name);
    common::check_root_volume(
        common::cloud(state)?,
        &ctx,
        cluster.labels.as_ref(),
        flavor,
        state.template_settings.default_boot_volume_size,
    )
    .await?;
    let after = view::ng_doc(&ng);
    let checked = Checked {
        name: ng.name.clone(),
        node_count: i128::from(view::ng_node_count(&ng)),
        min_node_count: i128::from(ng.min_node_count.unwrap_or(0)),
        max_node_count: ng.max_node_count.map(i128::from),
        role: ng.role.as_deref(),
        node_labels: after.get("node_labels"),
        node_taints: after.get("node_taints"),
    };
    validate(&checked)?;
    let body = view::ng_full_row(&ng, cluster.labels.as_ref(), &req.host_url);
    conductor(state)?
        .nodegroup_update(&ctx, Obj::unchanged(cluster), Obj::new(ng, changes))
        .await?;
    Ok(Reply::json(202, body))
}

/// An item added to the stored `node_taints` goes through oslo's `CoercedList`, which
/// refuses a non-dict (Magnum: a 500 with this text; OpenKeel: 400, docs/differences.md).
fn check_taint_items(ops: &[patch::PatchOp], doc: &PyValue) -> Result<(), ApiError> {
    let mut len = match doc.get("node_taints") {
        Some(PyValue::List(items)) => items.len(),
        _ => return Ok(()),
    };
    for op in ops {
        let Some(path) = op.path.as_deref() else {
            continue;
        };
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        match parts.as_slice() {
            ["node_taints"] => return Ok(()),
            ["node_taints", part] => {
                // `CoercedList.append` names the item `len + 1`, `insert` / `__setitem__` its index.
                let index = if *part == "-" {
                    len + 1
                } else {
                    match part.parse::<usize>() {
                        Ok(i) => i,
                        Err(_) => continue,
                    }
                };
                match (op.op, &op.value) {
                    (Some(patch::OpKind::Remove), _) => len = len.saturating_sub(1),
                    (Some(_), Some(v)) if v.as_dict().is_none() => {
                        return Err(MagnumError::client_side(format!(
                            "A dict is required in field node_taints[{index}], not a {}",
                            v.type_name()
                        ))
                        .into());
                    }
                    (Some(patch::OpKind::Add), _) => len += 1,
                    (_, _) => {}
                }
            }
            _ => {}
        }
    }
    Ok(())
}
