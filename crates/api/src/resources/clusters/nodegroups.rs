//! `/v1/clusters/{id}/nodegroups[/{ng}]` (`magnum/api/controllers/v1/nodegroup.py`), 1.9+.

use super::types::nodegroup as nt;
use super::{
    cluster_nodegroups, cluster_template_of, common, get_cluster, missing_argument, not_at_version,
    positional_body_error, read_json, view, wsme,
};
use crate::error::ApiError;
use crate::pagination::{self, ArgSpec, ArgType};
use crate::patch;
use crate::request;
use crate::response::Reply;
use crate::{ApiState, RequestInfo};
use axum::body::Body;
use common::{conductor, database, db, FlavorRef};
use http::Method;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::{NodeGroup, StringMap, Taint};
use openkeel_core::pyvalue::PyValue;
use openkeel_db::{nodegroup, NodeGroupFilters, Page, Scope};
use openkeel_rpc::Obj;
use serde_json::{Map, Value};
use wsme::Fields;

const ALLOW: &str = "DELETE, GET, PATCH, POST";

/// Route `nodegroups/...` of the cluster `cluster_ident`.
pub async fn route(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
    tail: &[&str],
) -> Result<Reply, ApiError> {
    // Every handler of the controller is versioned: looked up while routing.
    if !req.version.at_least(9) {
        return Err(not_at_version(req.version, "get_one"));
    }
    let m = &req.method;
    match tail {
        [] => match *m {
            Method::GET => list(state, req, cluster_ident).await,
            Method::POST => create(state, req, body, cluster_ident).await,
            Method::DELETE => Err(missing_argument("nodegroup_id")),
            Method::PATCH => {
                pagination::parse_args(req, &[])?;
                let value = read_json(req, body, "patch").await?;
                nt::PATCH.parse(&value)?;
                Err(missing_argument("nodegroup_id"))
            }
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        [ng] => match *m {
            Method::GET => get_one(state, req, cluster_ident, ng).await,
            Method::PATCH => update(state, req, body, cluster_ident, ng).await,
            Method::DELETE => delete(state, req, cluster_ident, ng).await,
            Method::POST => Err(positional_body_error("nodegroup", "NodeGroup", ng)),
            _ => Err(ApiError::method_not_allowed(ALLOW)),
        },
        _ => Err(ApiError::not_found()),
    }
}

/// `get_all`'s query arguments: the list arguments and `role`.
pub const LIST_ARGS: [ArgSpec; 5] = [
    pagination::LIST_ARGS[0],
    pagination::LIST_ARGS[1],
    pagination::LIST_ARGS[2],
    pagination::LIST_ARGS[3],
    ArgSpec {
        name: "role",
        ty: ArgType::Text,
    },
];

async fn list(state: &ApiState, req: &RequestInfo, cluster_ident: &str) -> Result<Reply, ApiError> {
    let args = pagination::parse_args(req, &LIST_ARGS)?;
    let params = pagination::ListParams::from_args(&args);
    let mut ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:get_all", None)?;
    if ctx.is_admin {
        request::enforce(state, &ctx, "nodegroup:get_all_all_projects", None)?;
        ctx.all_tenants = true;
    }
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

async fn get_one(
    state: &ApiState,
    req: &RequestInfo,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let mut ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:get", None)?;
    if ctx.is_admin {
        request::enforce(state, &ctx, "nodegroup:get_one_all_projects", None)?;
        ctx.all_tenants = true;
    }
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    let ng = nodegroup::get(
        database(state)?,
        &Scope::from(&ctx),
        cluster.uuid.as_deref().unwrap_or_default(),
        ng_ident,
    )
    .await
    .map_err(db)?;
    Ok(Reply::ok(view::ng_full_row(
        &ng,
        cluster.labels.as_ref(),
        &req.host_url,
    )))
}

// ---- validation shared by create and update (`_validate_*`, all 409) ----

fn invalid(attr: &str, ng_name: &str, expl: &str) -> ApiError {
    MagnumError::new(
        ErrorKind::NodeGroupInvalidInput,
        &[("attr", &attr), ("nodegroup", &ng_name), ("expl", &expl)],
    )
    .into()
}

/// The attributes the checks read, as Python values.
struct Checked<'a> {
    name: String,
    node_count: i128,
    min_node_count: i128,
    max_node_count: Option<i128>,
    role: Option<&'a str>,
    node_labels: Option<&'a PyValue>,
    node_taints: Option<&'a PyValue>,
}

fn py_int(v: Option<&PyValue>, default: i128) -> i128 {
    match v {
        Some(PyValue::Int(i)) => *i,
        Some(PyValue::Bool(b)) => i128::from(*b),
        _ => default,
    }
}

const KUBELET_ALLOWED_LABEL_NAMESPACES: [&str; 2] = ["kubelet.kubernetes.io", "node.kubernetes.io"];
const KUBELET_ALLOWED_LABELS: [&str; 12] = [
    "beta.kubernetes.io/arch",
    "beta.kubernetes.io/instance-type",
    "beta.kubernetes.io/os",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "kubernetes.io/arch",
    "kubernetes.io/hostname",
    "kubernetes.io/os",
    "node.kubernetes.io/instance-type",
    "node.kubernetes.io/windows-build",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
];
const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
const TAINT_FIELDS: [&str; 3] = ["key", "value", "effect"];

fn restricted_label(key: &str) -> bool {
    match key.split_once('/') {
        None => false,
        Some((prefix, _)) => {
            prefix == "kubernetes.io"
                || prefix == "k8s.io"
                || prefix.ends_with(".kubernetes.io")
                || prefix.ends_with(".k8s.io")
        }
    }
}

fn validate(ng: &Checked<'_>) -> Result<(), ApiError> {
    let name = &ng.name;
    // _validate_node_count
    if let Some(max) = ng.max_node_count.filter(|m| *m != 0) {
        if max < ng.min_node_count {
            return Err(invalid(
                "max_node_count",
                name,
                &format!(
                    "min_node_count ({}) should be less or equal to max_node_count ({max})",
                    ng.min_node_count
                ),
            ));
        }
        if ng.node_count > max {
            return Err(invalid(
                "max_node_count",
                name,
                &format!(
                    "node_count ({}) should be less or equal to max_node_count ({max})",
                    ng.node_count
                ),
            ));
        }
    }
    if ng.min_node_count > ng.node_count {
        return Err(invalid(
            "min_node_count",
            name,
            &format!(
                "min_node_count ({}) should be less or equal to node_count ({})",
                ng.min_node_count, ng.node_count
            ),
        ));
    }
    // _validate_node_attrs_role
    if ng.role == Some("master") {
        for (attr, v) in [
            ("node_labels", ng.node_labels),
            ("node_taints", ng.node_taints),
        ] {
            if v.is_some_and(PyValue::truthy) {
                return Err(invalid(
                    attr,
                    name,
                    &format!("{attr} may not be set on master nodegroups"),
                ));
            }
        }
    }
    // _validate_node_labels
    if let Some(PyValue::Dict(items)) = ng.node_labels {
        for (k, _) in items {
            let key = k.py_str();
            if !restricted_label(&key) {
                continue;
            }
            let prefix = key.split('/').next().unwrap_or_default();
            if KUBELET_ALLOWED_LABEL_NAMESPACES.contains(&prefix)
                || KUBELET_ALLOWED_LABELS.contains(&key.as_str())
            {
                continue;
            }
            let expl = format!(
                "node label '{key}' is in a restricted Kubernetes namespace; the kubelet will refuse to start. Labels in the kubernetes.io/ and k8s.io/ namespaces must use one of the allowed prefixes ({}) or be one of the allowed labels ({}).",
                KUBELET_ALLOWED_LABEL_NAMESPACES.join(", "),
                KUBELET_ALLOWED_LABELS.join(", ")
            );
            return Err(invalid("node_labels", name, &expl));
        }
    }
    // _validate_node_taints
    if let Some(PyValue::List(items) | PyValue::Tuple(items)) = ng.node_taints {
        for (i, taint) in items.iter().enumerate() {
            let Some(entries) = taint.as_dict() else {
                return Err(invalid(
                    "node_taints",
                    name,
                    &format!(
                        "node_taints[{i}] must be an object with key, effect and optional value"
                    ),
                ));
            };
            let mut unknown: Vec<String> = entries
                .iter()
                .map(|(k, _)| k.py_str())
                .filter(|k| !TAINT_FIELDS.contains(&k.as_str()))
                .collect();
            unknown.sort();
            unknown.dedup();
            if !unknown.is_empty() {
                return Err(invalid(
                    "node_taints",
                    name,
                    &format!(
                        "node_taints[{i}] contains unrecognised field(s) {}; allowed fields are {}",
                        unknown.join(", "),
                        TAINT_FIELDS.join(", ")
                    ),
                ));
            }
            if !taint.get("key").is_some_and(PyValue::truthy) {
                return Err(invalid(
                    "node_taints",
                    name,
                    &format!("node_taints[{i}].key is required"),
                ));
            }
            let effect = taint.get("effect").and_then(PyValue::as_str);
            if !effect.is_some_and(|e| TAINT_EFFECTS.contains(&e)) {
                return Err(invalid(
                    "node_taints",
                    name,
                    &format!(
                        "node_taints[{i}].effect must be one of {}",
                        TAINT_EFFECTS.join(", ")
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn taints_of(v: &PyValue) -> Option<Vec<Taint>> {
    match v.to_json()? {
        Value::Array(items) => Some(
            items
                .into_iter()
                .filter_map(|t| match t {
                    Value::Object(m) => Some(m),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

// ---- POST .../nodegroups ----

async fn create(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
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
        node_count: py_int(f.getattr(&nt::NODE_COUNT).as_ref(), 1),
        min_node_count: py_int(f.getattr(&nt::MIN_NODE_COUNT).as_ref(), 0),
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
    if f.get("flavor_id").is_none_or(PyValue::is_none) {
        f.set(
            "flavor_id",
            cluster
                .flavor_id
                .clone()
                .map_or(PyValue::None, PyValue::Str),
        );
    }
    let cluster_labels: Vec<(PyValue, PyValue)> = cluster
        .labels
        .iter()
        .flatten()
        .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
        .collect();
    match f.get("labels").cloned() {
        None | Some(PyValue::None) => f.set("labels", PyValue::Dict(cluster_labels)),
        Some(given) => {
            if f.getattr(&nt::MERGE_LABELS).is_some_and(|m| m.truthy()) {
                let mut merged = PyValue::Dict(cluster_labels);
                if let PyValue::Dict(items) = &given {
                    for (k, v) in items {
                        merged.set(&k.py_str(), v.clone());
                    }
                }
                f.set("labels", merged);
            }
        }
    }
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
    let (obj, set) = new_nodegroup(&f)?;
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

/// `objects.NodeGroup(context, **nodegroup_dict)` with a new uuid: the object as cast (its
/// changed fields) and its set fields as JSON (what the 202 shows).
fn new_nodegroup(f: &Fields) -> Result<(Obj<NodeGroup>, Map<String, Value>), ApiError> {
    let mut ng = NodeGroup::default();
    let mut changes: Vec<&str> = Vec::new();
    let mut set = Map::new();
    let cannot_be_none = |name: &str| -> ApiError {
        MagnumError::client_side(format!("Field `{name}' cannot be None")).into()
    };
    let uuid = uuid::Uuid::new_v4().to_string();
    for attr in nt::FIELDS {
        let name = attr.name;
        let Some(v) = f.getattr(attr) else {
            if name == "uuid" {
                changes.push(name);
                ng.uuid = uuid.clone();
                set.insert(name.into(), Value::from(uuid.clone()));
            }
            continue;
        };
        changes.push(name);
        let s = v.as_str().map(str::to_string);
        let i = match &v {
            PyValue::Int(i) => i32::try_from(*i).ok(),
            PyValue::Bool(b) => Some(i32::from(*b)),
            _ => None,
        };
        let shown: Value = match name {
            "uuid" => {
                ng.uuid = uuid.clone();
                Value::from(uuid.clone())
            }
            "name" | "cluster_id" | "project_id" | "role" => {
                let Some(text) = s else {
                    // Magnum: 500 from the versioned object (docs/differences.md).
                    return Err(cannot_be_none(name));
                };
                match name {
                    "name" => ng.name = text.clone(),
                    "cluster_id" => ng.cluster_id = text.clone(),
                    "project_id" => ng.project_id = text.clone(),
                    _ => ng.role = Some(text.clone()),
                }
                Value::from(text)
            }
            "id" => {
                ng.id = i.unwrap_or(0);
                Value::from(ng.id)
            }
            "docker_volume_size" => {
                ng.docker_volume_size = i;
                i.map_or(Value::Null, Value::from)
            }
            "max_node_count" => {
                ng.max_node_count = i;
                i.map_or(Value::Null, Value::from)
            }
            "node_count" => {
                let n = i.unwrap_or(1);
                ng.node_count = Some(n);
                Value::from(n)
            }
            "min_node_count" => {
                let n = i.unwrap_or(0);
                ng.min_node_count = Some(n);
                Value::from(n)
            }
            "is_default" => {
                let b = v.truthy();
                ng.is_default = Some(b);
                Value::Bool(b)
            }
            "labels" | "node_labels" => {
                let m: Option<StringMap> = match &v {
                    PyValue::None => None,
                    other => Some(wsme::string_map(name, other)?),
                };
                let shown = m.as_ref().map_or(Value::Null, |m| {
                    Value::Object(
                        m.iter()
                            .map(|(k, v)| (k.clone(), Value::from(v.clone())))
                            .collect(),
                    )
                });
                if name == "labels" {
                    ng.labels = m;
                } else {
                    ng.node_labels = m;
                }
                shown
            }
            "node_taints" => {
                ng.node_taints = taints_of(&v);
                v.to_json().unwrap_or(Value::Null)
            }
            "flavor_id" => {
                ng.flavor_id = s.clone();
                s.map_or(Value::Null, Value::from)
            }
            "image_id" => {
                ng.image_id = s.clone();
                s.map_or(Value::Null, Value::from)
            }
            "status" => {
                ng.status = s.as_deref().and_then(|x| x.parse().ok());
                s.map_or(Value::Null, Value::from)
            }
            "status_reason" => {
                ng.status_reason = s.clone();
                s.map_or(Value::Null, Value::from)
            }
            "version" => {
                ng.version = s.clone();
                s.map_or(Value::Null, Value::from)
            }
            _ => v.to_json().unwrap_or(Value::Null),
        };
        set.insert(name.into(), shown);
    }
    Ok((Obj::new(ng, changes), set))
}

// ---- PATCH .../nodegroups/{ng} ----

async fn update(
    state: &ApiState,
    req: &RequestInfo,
    body: Body,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
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
    let mut changes: Vec<&str> = Vec::new();
    for attr in nt::FIELDS {
        let new_v = new.getattr(attr).unwrap_or(PyValue::None);
        let old = doc.get(attr.name).cloned().unwrap_or(PyValue::None);
        if old.py_eq(&new_v) {
            continue;
        }
        let int = match &new_v {
            PyValue::Int(i) => i32::try_from(*i).ok(),
            PyValue::Bool(b) => Some(i32::from(*b)),
            _ => None,
        };
        let text = new_v.as_str().map(str::to_string);
        match attr.name {
            "min_node_count" => ng.min_node_count = Some(int.unwrap_or(0)),
            "max_node_count" => ng.max_node_count = int,
            "node_count" => ng.node_count = Some(int.unwrap_or(1)),
            "docker_volume_size" => ng.docker_volume_size = int,
            "node_labels" => {
                ng.node_labels = match &new_v {
                    PyValue::None => None,
                    other => Some(wsme::string_map("node_labels", other)?),
                }
            }
            "labels" => {
                ng.labels = match &new_v {
                    PyValue::None => None,
                    other => Some(wsme::string_map("labels", other)?),
                }
            }
            "node_taints" => ng.node_taints = taints_of(&new_v),
            "flavor_id" => ng.flavor_id = text,
            "image_id" => ng.image_id = text,
            "status_reason" => ng.status_reason = text,
            "version" => ng.version = text,
            "stack_id" => ng.stack_id = text,
            "status" => ng.status = text.and_then(|s| s.parse().ok()),
            "is_default" => ng.is_default = Some(new_v.truthy()),
            "name" | "role" | "cluster_id" | "project_id" | "uuid" => match text {
                Some(t) => match attr.name {
                    "name" => ng.name = t,
                    "role" => ng.role = Some(t),
                    "cluster_id" => ng.cluster_id = t,
                    "project_id" => ng.project_id = t,
                    _ => ng.uuid = t,
                },
                None => {
                    return Err(MagnumError::client_side(format!(
                        "Field `{}' cannot be None",
                        attr.name
                    ))
                    .into())
                }
            },
            _ => continue,
        }
        changes.push(attr.name);
    }

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

// ---- DELETE .../nodegroups/{ng} ----

async fn delete(
    state: &ApiState,
    req: &RequestInfo,
    cluster_ident: &str,
    ng_ident: &str,
) -> Result<Reply, ApiError> {
    pagination::parse_args(req, &[])?;
    let ctx = request::context(state, req);
    request::enforce(state, &ctx, "nodegroup:delete", None)?;
    let cluster = get_cluster(state, &ctx, cluster_ident).await?;
    let ng = nodegroup::get(
        database(state)?,
        &Scope::from(&ctx),
        cluster.uuid.as_deref().unwrap_or_default(),
        ng_ident,
    )
    .await
    .map_err(db)?;
    if ng.is_default == Some(true) {
        return Err(MagnumError::new(ErrorKind::DeletingDefaultNGNotSupported, &[]).into());
    }
    conductor(state)?
        .nodegroup_delete(&ctx, Obj::unchanged(cluster), Obj::unchanged(ng))
        .await?;
    Ok(Reply::empty(204))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        node_count: i128,
        min: i128,
        max: Option<i128>,
        role: Option<&str>,
        labels: Option<&PyValue>,
        taints: Option<&PyValue>,
    ) -> String {
        let c = Checked {
            name: "ng".into(),
            node_count,
            min_node_count: min,
            max_node_count: max,
            role,
            node_labels: labels,
            node_taints: taints,
        };
        match validate(&c) {
            Ok(()) => "ok".into(),
            Err(ApiError::Handler(e)) => format!("{} {}", e.code(), e.message()),
            Err(other) => format!("{other:?}"),
        }
    }

    #[test]
    fn count_rules() {
        assert_eq!(check(1, 0, None, None, None, None), "ok");
        assert_eq!(check(1, 0, Some(0), None, None, None), "ok");
        assert_eq!(
            check(3, 2, Some(1), None, None, None),
            "409 max_node_count for ng is invalid (min_node_count (2) should be less or equal to max_node_count (1))."
        );
        assert_eq!(
            check(3, 0, Some(2), None, None, None),
            "409 max_node_count for ng is invalid (node_count (3) should be less or equal to max_node_count (2))."
        );
        assert_eq!(
            check(1, 3, None, None, None, None),
            "409 min_node_count for ng is invalid (min_node_count (3) should be less or equal to node_count (1))."
        );
    }

    #[test]
    fn label_and_taint_rules() {
        let labels = PyValue::from_json(
            &serde_json::json!({"node.kubernetes.io/x": "1", "kubernetes.io/os": "l", "a": "b"}),
        );
        assert_eq!(check(1, 0, None, None, Some(&labels), None), "ok");
        assert_eq!(
            check(1, 0, None, Some("master"), Some(&labels), None),
            "409 node_labels for ng is invalid (node_labels may not be set on master nodegroups)."
        );
        let bad = PyValue::from_json(&serde_json::json!({"foo.k8s.io/x": "1"}));
        assert!(check(1, 0, None, None, Some(&bad), None)
            .starts_with("409 node_labels for ng is invalid (node label 'foo.k8s.io/x' is in a restricted Kubernetes namespace"));
        let taints = PyValue::from_json(&serde_json::json!([{"key": "k", "effect": "Bad"}]));
        assert_eq!(
            check(1, 0, None, None, None, Some(&taints)),
            "409 node_taints for ng is invalid (node_taints[0].effect must be one of NoSchedule, PreferNoSchedule, NoExecute)."
        );
        let taints = PyValue::from_json(
            &serde_json::json!([{"key": "k", "zz": 1, "aa": 2, "effect": "NoSchedule"}]),
        );
        assert_eq!(
            check(1, 0, None, None, None, Some(&taints)),
            "409 node_taints for ng is invalid (node_taints[0] contains unrecognised field(s) aa, zz; allowed fields are key, value, effect)."
        );
        let taints = PyValue::from_json(&serde_json::json!([{"effect": "NoSchedule"}]));
        assert_eq!(
            check(1, 0, None, None, None, Some(&taints)),
            "409 node_taints for ng is invalid (node_taints[0].key is required)."
        );
    }
}
