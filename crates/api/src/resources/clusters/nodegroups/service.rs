//! What the nodegroup handlers do between validation and the conductor, apart from HTTP: the
//! defaults a create takes from its cluster, the object cast to `nodegroup_create`, and the
//! fields a PATCH changes (written into the row).

use super::checks::taints_of;
use crate::error::ApiError;
use crate::resources::clusters::types::nodegroup as nt;
use crate::resources::clusters::wsme::{self, Fields};
use openkeel_core::error::MagnumError;
use openkeel_core::objects::{Cluster, NodeGroup, StringMap};
use openkeel_core::pyvalue::PyValue;
use openkeel_rpc::Obj;
use serde_json::{Map, Value};

/// `post`'s defaults from the cluster: its flavor when the nodegroup names none, its labels
/// when the nodegroup gives none (merged under the given ones with `merge_labels`).
pub(super) fn apply_cluster_defaults(f: &mut Fields, cluster: &Cluster) {
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
}

/// "Update only the fields that have changed": every attribute whose patched value differs
/// from the stored document's, coerced as the object does and written into `ng`; the changed
/// names, in the type's attribute order.
pub(super) fn apply_changes(
    ng: &mut NodeGroup,
    new: &Fields,
    doc: &PyValue,
) -> Result<Vec<&'static str>, ApiError> {
    let mut changes: Vec<&str> = Vec::new();
    for attr in nt::FIELDS {
        let new_v = new.getattr(attr).unwrap_or(PyValue::None);
        let old = doc.get(attr.name).cloned().unwrap_or(PyValue::None);
        if old.py_eq(&new_v) {
            continue;
        }
        let int = wsme::int_value(Some(&new_v)).and_then(|i| i32::try_from(i).ok());
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
    Ok(changes)
}

/// `objects.NodeGroup(context, **nodegroup_dict)` with a new uuid: the object as cast (its
/// changed fields) and its set fields as JSON (what the 202 shows).
pub(super) fn new_nodegroup(f: &Fields) -> Result<(Obj<NodeGroup>, Map<String, Value>), ApiError> {
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
