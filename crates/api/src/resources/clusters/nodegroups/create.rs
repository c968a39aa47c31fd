//! `POST /v1/clusters/{id}/nodegroups` (`NodeGroupController.post` in
//! `magnum/api/controllers/v1/nodegroup.py`): a `nodegroup_create` cast.

use super::checks::{validate, Checked};
use super::service;
use crate::error::ApiError;
use crate::query;
use crate::request;
use crate::resources::clusters::common::{self, conductor, FlavorRef};
use crate::resources::clusters::get_cluster;
use crate::resources::clusters::types::nodegroup as nt;
use crate::resources::clusters::{cluster_nodegroups, cluster_template_of, read_json, view, wsme};
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::pyvalue::PyValue;
use openkeel_rpc::Obj;

/// Query and body → context → policy → the cluster → validation → defaults and look-ups →
/// cast → 202, once the row is visible.
pub(super) async fn create(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
) -> Result<Reply, ApiError> {
    query::parse_args(req, &[])?;
    let value = read_json(req, body, "nodegroup").await?;
    let mut f = wsme::from_json("nodegroup", &value, nt::ATTRS)?;
    let ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:create", None)?;
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    if cluster.api_address.as_deref().is_none_or(str::is_empty) {
        return Err(MagnumError::new(ErrorKind::ClusterAPIAddressUnavailable, &[]).into());
    }
    let ngs = cluster_nodegroups(state, &ctx, &cluster).await?;
    let name = f.getattr(&nt::NAME);
    if let Some(PyValue::Str(n)) = &name {
        if ngs.iter().any(|ng| &ng.name == n) {
            return Err(MagnumError::new(
                ErrorKind::NodeGroupAlreadyExists,
                &[
                    ("name", n),
                    ("cluster_id", &cluster.name.as_deref().unwrap_or("None")),
                ],
            )
            .into());
        }
    }
    let role = f.getattr(&nt::ROLE);
    let checked = Checked {
        name: name.as_ref().map_or_else(|| "None".into(), PyValue::py_str),
        node_count: wsme::int_value(f.getattr(&nt::NODE_COUNT).as_ref()).unwrap_or(1),
        min_node_count: wsme::int_value(f.getattr(&nt::MIN_NODE_COUNT).as_ref()).unwrap_or(0),
        max_node_count: match f.getattr(&nt::MAX_NODE_COUNT) {
            Some(PyValue::Int(i)) => Some(i),
            _ => None,
        },
        role: role.as_ref().and_then(PyValue::as_str),
        node_labels: f.get("node_labels"),
        node_taints: f.get("node_taints"),
    };
    validate(&checked)?;
    if checked.role == Some("master") {
        return Err(MagnumError::new(ErrorKind::CreateMasterNodeGroup, &[]).into());
    }
    // The cluster's template, read once: for the default image and the driver's check.
    let mut template = None;
    if f.get("image_id").is_none_or(PyValue::is_none) {
        let t = cluster_template_of(state, &ctx, &cluster).await?;
        f.set(
            "image_id",
            t.image_id.clone().map_or(PyValue::None, PyValue::Str),
        );
        template = Some(t);
    }
    service::apply_cluster_defaults(&mut f, &cluster);
    let flavor = match f.get("flavor_id") {
        Some(PyValue::Str(s)) => FlavorRef::Name(s),
        _ => FlavorRef::Null,
    };
    common::check_root_volume(
        common::cloud(state)?,
        &ctx,
        cluster.labels.as_ref(),
        flavor,
        state.template_settings.default_boot_volume_size,
    )
    .await?;

    // `nodegroup.as_dict()` + cluster_id + project_id → `objects.NodeGroup(**dict)`.
    let cluster_uuid = cluster.uuid.clone().unwrap_or_default();
    f.set("cluster_id", PyValue::str(cluster_uuid.clone()));
    f.set(
        "project_id",
        ctx.project_id.clone().map_or(PyValue::None, PyValue::Str),
    );
    let (obj, set) = service::new_nodegroup(&f)?;
    // OpenKeel: the driver refuses now what it would only find out in the conductor.
    if let Some(drivers) = &state.drivers {
        let template = match template {
            Some(t) => t,
            None => cluster_template_of(state, &ctx, &cluster).await?,
        };
        drivers.validate_nodegroup_create(&template, &cluster, &obj.data)?;
    }
    let body = view::ng_full(&set, cluster.labels.as_ref(), &req.host_url);
    let new_uuid = obj.data.uuid.clone();
    conductor(state)?
        .nodegroup_create(&ctx, Obj::unchanged(cluster), obj)
        .await?;
    // Magnum answers 202 as soon as the create is cast, and the conductor inserts the row a
    // moment later: a GET of the uuid just returned can 404 (gophercloud's acceptance test
    // does exactly that). OpenKeel waits, bounded, until the row is visible.
    if let (Some(db), uuid) = (state.db.as_ref(), new_uuid) {
        let deadline = std::time::Instant::now() + NODEGROUP_VISIBLE_WITHIN;
        let scope = openkeel_db::Scope::admin_all_tenants();
        while openkeel_db::nodegroup::get_by_uuid(db, &scope, &cluster_uuid, &uuid)
            .await
            .is_err()
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }
    Ok(Reply::json(202, body))
}

/// How long a nodegroup create waits for the conductor's row (see `post`).
const NODEGROUP_VISIBLE_WITHIN: std::time::Duration = std::time::Duration::from_secs(5);
