//! What the cluster handlers do between validation and the conductor, apart from HTTP: the
//! template defaults a create takes (`_post` in `magnum/api/controllers/v1/cluster.py`), the
//! cluster object cast to `cluster_create`, and the delta of a PATCH (what the patched
//! cluster changes, which decides what the PATCH may do).

use super::types::cluster as ct;
use super::wsme::{self, Fields};
use crate::error::ApiError;
use openkeel_core::context::RequestContext;
use openkeel_core::objects::{Cluster, ClusterTemplate, StringMap};
use openkeel_core::pyvalue::PyValue;
use openkeel_rpc::Obj;

pub(super) fn text(f: &Fields, name: &str) -> Option<String> {
    match f.get(name) {
        Some(PyValue::Str(s)) => Some(s.clone()),
        _ => None,
    }
}

/// [`wsme::int_value`] within `i64`.
pub(super) fn int_of(v: Option<&PyValue>) -> Option<i64> {
    wsme::int_value(v).and_then(|i| i64::try_from(i).ok())
}

pub(super) fn as_i32(v: Option<&PyValue>) -> Option<i32> {
    int_of(v).and_then(|i| i32::try_from(i).ok())
}

fn opt_str(v: &Option<String>) -> PyValue {
    v.clone().map_or(PyValue::None, PyValue::Str)
}

fn labels_py(m: Option<&StringMap>) -> PyValue {
    PyValue::Dict(
        m.map(|m| {
            m.iter()
                .map(|(k, v)| (PyValue::str(k.clone()), PyValue::str(v.clone())))
                .collect()
        })
        .unwrap_or_default(),
    )
}

/// `_post`'s defaults from the template: its uuid as `cluster_template_id`, its keypair when
/// the cluster names none, the labels (the template's, or the cluster's merged over them with
/// `merge_labels`), the two booleans when unset and the volume size, flavors and networks when
/// falsy. Returns the labels set.
pub(super) fn apply_template_defaults(c: &mut Fields, template: &ClusterTemplate) -> PyValue {
    c.set("cluster_template_id", opt_str(&template.uuid));
    if c.getattr(&ct::KEYPAIR).is_none_or(|k| k.is_none()) {
        c.set("keypair", opt_str(&template.keypair_id));
    }
    let template_labels = labels_py(template.labels.as_ref());
    let labels = match c.get("labels") {
        Some(l) if l.truthy() => {
            if c.getattr(&ct::MERGE_LABELS).is_some_and(|m| m.truthy()) {
                let mut merged = template_labels.clone();
                if let PyValue::Dict(items) = l {
                    for (k, v) in items {
                        merged.set(&k.py_str(), v.clone());
                    }
                }
                merged
            } else {
                l.clone()
            }
        }
        _ => template_labels,
    };
    c.set("labels", labels.clone());
    if !c.is_set("floating_ip_enabled") {
        c.set(
            "floating_ip_enabled",
            PyValue::Bool(template.floating_ip_enabled.unwrap_or(true)),
        );
    }
    if !c.is_set("master_lb_enabled") {
        c.set(
            "master_lb_enabled",
            PyValue::Bool(template.master_lb_enabled.unwrap_or(false)),
        );
    }
    let from_template = [
        (
            "docker_volume_size",
            template
                .docker_volume_size
                .map_or(PyValue::None, |v| PyValue::Int(i128::from(v))),
        ),
        ("master_flavor_id", opt_str(&template.master_flavor_id)),
        ("flavor_id", opt_str(&template.flavor_id)),
        ("fixed_network", opt_str(&template.fixed_network)),
        ("fixed_subnet", opt_str(&template.fixed_subnet)),
    ];
    for (name, tv) in from_template {
        if !c.get(name).is_some_and(PyValue::truthy) {
            c.set(name, tv);
        }
    }
    labels
}

/// The attributes whose values differ between the stored cluster (`doc`, as the PATCH saw
/// it) and the patched one (`getattr` on both sides).
pub(super) fn patch_delta(doc: &PyValue, new: &Fields) -> Vec<&'static str> {
    ct::FIELDS
        .iter()
        .filter(|attr| {
            let old = doc.get(attr.name);
            let new_v = new.getattr(attr);
            match (old, new_v.as_ref()) {
                (Some(o), Some(n)) => !o.py_eq(n),
                (None, None) => false,
                _ => true,
            }
        })
        .map(|a| a.name)
        .collect()
}

/// `objects.Cluster(context, **cluster_dict)` + a new uuid: the cluster as cast to
/// `cluster_create`, with its changed fields, and the `create_timeout` argument.
pub(super) fn new_cluster(
    ctx: &RequestContext,
    c: &Fields,
) -> Result<(Obj<Cluster>, i32), ApiError> {
    let mut cl = Cluster::default();
    let mut changes: Vec<&str> = Vec::new();
    let s = |name: &str| text(c, name);
    // Attributes of the API type that are object fields, as `as_dict()` gives them.
    for attr in ct::FIELDS {
        let name = attr.name;
        if matches!(
            name,
            "node_count" | "master_count" | "node_addresses" | "master_addresses"
        ) {
            continue;
        }
        let Some(v) = c.getattr(attr) else { continue };
        changes.push(name);
        match name {
            "uuid" => {}
            "name" => cl.name = s(name),
            "cluster_template_id" => cl.cluster_template_id = s(name),
            "keypair" => cl.keypair = s(name),
            "docker_volume_size" => cl.docker_volume_size = as_i32(Some(&v)),
            "labels" => cl.labels = Some(wsme::string_map("labels", &v)?),
            "master_flavor_id" => cl.master_flavor_id = s(name),
            "flavor_id" => cl.flavor_id = s(name),
            "status" => cl.status = s(name).and_then(|x| x.parse().ok()),
            "status_reason" => cl.status_reason = s(name),
            "health_status" => cl.health_status = s(name).and_then(|x| x.parse().ok()),
            "health_status_reason" => {
                cl.health_status_reason = match &v {
                    PyValue::None => None,
                    other => Some(wsme::string_map("health_status_reason", other)?),
                }
            }
            "create_timeout" => cl.create_timeout = as_i32(Some(&v)),
            "discovery_url" => cl.discovery_url = s(name),
            "fixed_network" => cl.fixed_network = s(name),
            "fixed_subnet" => cl.fixed_subnet = s(name),
            // A null boolean takes the object's default.
            "floating_ip_enabled" => cl.floating_ip_enabled = Some(v.truthy() || v.is_none()),
            "master_lb_enabled" => cl.master_lb_enabled = Some(v.truthy()),
            _ => {}
        }
    }
    cl.uuid = Some(uuid::Uuid::new_v4().to_string());
    cl.project_id = ctx.project_id.clone();
    cl.user_id = ctx.user_id.clone();
    if cl.name.as_deref().is_none_or(str::is_empty) {
        cl.name = Some(crate::resources::generate_name("cluster"));
    }
    cl.coe_version = None;
    cl.container_version = None;
    for extra in [
        "uuid",
        "project_id",
        "user_id",
        "name",
        "coe_version",
        "container_version",
    ] {
        if !changes.contains(&extra) {
            changes.push(extra);
        }
    }
    let timeout = cl.create_timeout.unwrap_or(60);
    Ok((Obj::new(cl, changes), timeout))
}

#[cfg(test)]
mod tests {
    use crate::validation::cluster_name_matches;

    #[test]
    fn generated_names() {
        for _ in 0..50 {
            let n = crate::resources::generate_name("cluster");
            assert!(n.ends_with("-cluster"), "{n}");
            assert!(cluster_name_matches(&n), "{n}");
        }
    }
}
