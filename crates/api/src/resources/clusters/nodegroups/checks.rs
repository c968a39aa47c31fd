//! The nodegroup checks shared by create and update (`_validate_*` in
//! `magnum/api/controllers/v1/nodegroup.py` and `magnum/api/validation.py`, all 409): the
//! counts, the role, the Kubernetes node labels and taints.

use crate::error::ApiError;
use openkeel_core::error::{ErrorKind, MagnumError};
use openkeel_core::objects::Taint;
use openkeel_core::pyvalue::PyValue;
use serde_json::Value;

pub(super) fn invalid(attr: &str, ng_name: &str, expl: &str) -> ApiError {
    MagnumError::new(
        ErrorKind::NodeGroupInvalidInput,
        &[("attr", &attr), ("nodegroup", &ng_name), ("expl", &expl)],
    )
    .into()
}

/// The attributes the checks read, as Python values.
pub(super) struct Checked<'a> {
    pub(super) name: String,
    pub(super) node_count: i128,
    pub(super) min_node_count: i128,
    pub(super) max_node_count: Option<i128>,
    pub(super) role: Option<&'a str>,
    pub(super) node_labels: Option<&'a PyValue>,
    pub(super) node_taints: Option<&'a PyValue>,
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

pub(super) fn restricted_label(key: &str) -> bool {
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

pub(super) fn validate(ng: &Checked<'_>) -> Result<(), ApiError> {
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

pub(super) fn taints_of(v: &PyValue) -> Option<Vec<Taint>> {
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
