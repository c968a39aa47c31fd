//! WSME's typing of the cluster, nodegroup and action types: over the attribute
//! declarations of `types.rs` (the one type model, [`crate::validation::AttrType`]), the two
//! ways WSME applies them — `fromjson` for a request body (conversion, read-only / mandatory rules, then
//! the attribute setter) and the bare setter (`Type(**dict)`, after a JSON Patch).
//!
//! Values are [`PyValue`]s, as WSME sees them. Error texts are WSME's (`wsme/types.py`,
//! `wsme/rest/json.py`). Where Magnum breaks with a 500 on bad input (an invalid boolean string, a list
//! given to an integer attribute) the same `InvalidInput` 400 is given instead
//! (`docs/differences.md`).

use crate::validation::{self, AttrType, FromJsonError};
use openkeel_core::error::MagnumError;
use openkeel_core::pyvalue::PyValue;
use serde_json::Value;

/// Declared defaults (`wsattr(..., default=X)`): the one default type of every API type.
pub use crate::validation::AttrDefault as Default;

/// One declared attribute: the one attribute model.
pub use crate::validation::Attr;

/// The set attributes of a complex value, in declaration order (`None` is a set `None`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(pub Vec<(&'static str, PyValue)>);

impl Fields {
    pub fn get(&self, name: &str) -> Option<&PyValue> {
        self.0.iter().find(|(k, _)| *k == name).map(|(_, v)| v)
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn set(&mut self, name: &'static str, v: PyValue) {
        match self.0.iter_mut().find(|(k, _)| *k == name) {
            Some(slot) => slot.1 = v,
            None => self.0.push((name, v)),
        }
    }

    pub fn remove(&mut self, name: &str) -> Option<PyValue> {
        let i = self.0.iter().position(|(k, _)| *k == name)?;
        Some(self.0.remove(i).1)
    }

    /// `getattr`: the set value, else the declared default, else `None` (unset).
    pub fn getattr(&self, attr: &Attr) -> Option<PyValue> {
        self.get(attr.name)
            .cloned()
            .or_else(|| attr.default.map(Default::value))
    }
}

pub use crate::validation::{invalid_input, unknown_attributes};

/// `fromjson(Type, body)` for the body argument `arg`.
pub fn from_json(arg: &str, body: &Value, attrs: &[Attr]) -> Result<Fields, MagnumError> {
    let Value::Object(obj) = body else {
        // Magnum: 500 (`'<type>' object has no attribute ...`); see docs/differences.md.
        return Err(MagnumError::client_side("Request must be a JSON dict"));
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| !attrs.iter().any(|a| a.name == *k))
        .collect();
    if !unknown.is_empty() {
        return Err(unknown_attributes(arg, &unknown));
    }
    let mut out = Fields::default();
    for attr in attrs {
        match obj.get(attr.name) {
            Some(raw) => {
                let converted = convert(attr, &PyValue::from_json(raw)).map_err(|e| match e {
                    FromJsonError::Value(msg) => {
                        invalid_input(arg, &PyValue::from_json(body).py_str(), &msg)
                    }
                    // Magnum: a 500 with this text (docs/differences.md).
                    FromJsonError::Other(msg) => MagnumError::client_side(msg),
                })?;
                if attr.readonly {
                    return Err(invalid_input(
                        attr.name,
                        &shown_converted(attr, &converted),
                        "Cannot set read only field.",
                    ));
                }
                out.set(attr.name, assign(attr, &converted)?);
            }
            None if attr.mandatory => {
                return Err(invalid_input(attr.name, "None", "Mandatory field missing."));
            }
            None => {}
        }
    }
    Ok(out)
}

fn shown_converted(attr: &Attr, v: &PyValue) -> String {
    match (attr.ty, v) {
        // `str(datetime)` of what `parse_isodatetime` made of the text.
        (AttrType::DateTime, PyValue::Opaque { repr, .. }) => repr.clone(),
        _ => v.py_str(),
    }
}

/// The integer of a value WSME has already typed as an integer (a `bool` is an `int` to
/// Python); `None` for anything else (unset, `None`).
pub fn int_value(v: Option<&PyValue>) -> Option<i128> {
    match v {
        Some(PyValue::Int(i)) => Some(*i),
        Some(PyValue::Bool(b)) => Some(i128::from(*b)),
        _ => None,
    }
}

/// The `fromjson` step for one attribute.
fn convert(attr: &Attr, raw: &PyValue) -> Result<PyValue, FromJsonError> {
    validation::fromjson(attr.ty, raw)
}

/// The attribute setter (`wsattr.__set__` → `validate_value`): the stored value.
pub fn assign(attr: &Attr, v: &PyValue) -> Result<PyValue, MagnumError> {
    let out = validation::typecheck(attr, v)?;
    if let (AttrType::Int { .. }, PyValue::Int(n)) = (attr.ty, &out) {
        // The columns are int(11): larger values would fail later in the conductor.
        if *n > i128::from(i32::MAX) {
            return Err(invalid_input(
                attr.name,
                &v.py_str(),
                &format!("Value should be lower or equal to {}", i32::MAX),
            ));
        }
    }
    Ok(out)
}

/// `Type(**doc)`: each attribute of `order` (the object's field order) that `doc` holds goes
/// through the setter; absent ones stay unset.
pub fn construct(doc: &PyValue, order: &[&Attr]) -> Result<Fields, MagnumError> {
    let mut out = Fields::default();
    for attr in order {
        if let Some(v) = doc.get(attr.name) {
            out.set(attr.name, assign(attr, v)?);
        }
    }
    Ok(out)
}

/// Values added into a dict-of-strings field of a stored object (`/labels/k`,
/// `/health_status_reason/k`, `/node_labels/k`) go through oslo's `CoercedDict`, which stores
/// `str(value)`: apply that to the patched document (unless an earlier operation replaced
/// the whole dict with a plain one).
pub fn coerce_nested(ops: &[crate::patch::PatchOp], doc: &mut PyValue, dict_fields: &[&str]) {
    let mut replaced: Vec<&str> = Vec::new();
    for op in ops {
        let Some(path) = op.path.as_deref() else {
            continue;
        };
        let parts: Vec<&str> = path.split('/').skip(1).collect();
        match parts.as_slice() {
            [field] if op.op == Some(crate::patch::OpKind::Replace) => {
                if let Some(f) = dict_fields.iter().find(|f| *f == field) {
                    replaced.push(f);
                }
            }
            [field, key] if dict_fields.contains(field) && !replaced.contains(field) => {
                let (Some(value), Some(kind)) = (&op.value, op.op) else {
                    continue;
                };
                if kind == crate::patch::OpKind::Remove {
                    continue;
                }
                let Some(PyValue::Dict(items)) = doc.get(field).cloned() else {
                    continue;
                };
                let mut d = PyValue::Dict(items);
                if d.get(key).is_some_and(|v| v.py_eq(value)) && value.as_str().is_none() {
                    d.set(key, PyValue::Str(value.py_str()));
                    doc.set(field, d);
                }
            }
            _ => {}
        }
    }
}

/// `DictOfStringsField` coercion of a dict (`str()` of the values; a `None` value is
/// refused with oslo's text, a 400 here where Magnum 500s) as a string map.
pub fn string_map(
    attr: &str,
    v: &PyValue,
) -> Result<openkeel_core::objects::StringMap, MagnumError> {
    let coerced = validation::coerce(validation::ObjField::DictOfStrings, attr, v)?;
    Ok(validation::string_map(&coerced).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    use crate::validation::{cluster_name_matches, int_min};

    const ATTRS: &[Attr] = &[
        Attr::new(
            "name",
            AttrType::Str {
                min: 1,
                max: 242,
                name_pattern: true,
            },
        ),
        Attr::new("cluster_template_id", AttrType::Text).mandatory(),
        Attr::new("node_count", int_min(0)).default(Default::Int(1)),
        Attr::new("labels", AttrType::Labels),
        Attr::new("links", AttrType::Links).readonly(),
        Attr::new("floating_ip_enabled", AttrType::Bool),
        Attr::new("uuid", AttrType::Uuid),
    ];

    fn err(body: Value) -> String {
        from_json("cluster", &body, ATTRS)
            .unwrap_err()
            .message()
            .to_string()
    }

    #[test]
    fn body_errors_are_wsme_texts() {
        assert_eq!(
            err(json!({"cluster_template_id": "k", "foo": 1})),
            "Unknown attribute for argument cluster: foo"
        );
        assert_eq!(
            err(json!({"cluster_template_id": "k", "foo": 1, "bar": 2})),
            "Unknown attributes for argument cluster: foo, bar"
        );
        assert_eq!(err(json!({"name": "x"})), "Invalid input for field/attribute cluster_template_id. Value: 'None'. Mandatory field missing.");
        assert_eq!(
            err(json!({"cluster_template_id": "k8s", "node_count": "abc"})),
            "Invalid input for field/attribute cluster. Value: '{'cluster_template_id': 'k8s', 'node_count': 'abc'}'. invalid literal for int() with base 10: 'abc'"
        );
        assert_eq!(err(json!({"cluster_template_id": "k", "node_count": -1})), "Invalid input for field/attribute node_count. Value: '-1'. Value should be greater or equal to 0");
        assert_eq!(err(json!({"cluster_template_id": "k", "name": "1bad"})), "Invalid input for field/attribute name. Value: '1bad'. Value should match the pattern ^[a-zA-Z][a-zA-Z0-9_.-]*$");
        assert_eq!(
            err(json!({"cluster_template_id": "k", "name": 5})),
            "Invalid input for field/attribute name. Value: '5'. Value should be string"
        );
        assert_eq!(
            err(json!({"cluster_template_id": "k", "links": []})),
            "Invalid input for field/attribute links. Value: '[]'. Cannot set read only field."
        );
        assert_eq!(
            err(json!({"cluster_template_id": "k", "labels": {"a": [1]}})),
            "Invalid input for field/attribute labels. Value: '{'a': [1]}'. Wrong type. Expected '(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)', got '<class 'list'>'"
        );
        assert_eq!(err(json!({"cluster_template_id": 5})), "Invalid input for field/attribute cluster_template_id. Value: '5'. Wrong type. Expected '<class 'str'>', got '<class 'int'>'");
        assert_eq!(
            err(json!({"cluster_template_id": "k", "uuid": "nope"})),
            "Expected a uuid but received nope."
        );
        assert!(err(json!({"cluster_template_id": "k", "floating_ip_enabled": "maybe"}))
            .starts_with("Invalid input for field/attribute floating_ip_enabled. Value: 'maybe'. Unrecognized value 'maybe'"));
    }

    #[test]
    fn conversions() {
        let f = from_json(
            "cluster",
            &json!({"cluster_template_id": "k", "node_count": 5.7, "floating_ip_enabled": "yes", "name": null}),
            ATTRS,
        )
        .unwrap();
        assert_eq!(f.get("node_count"), Some(&PyValue::Int(5)));
        assert_eq!(f.get("floating_ip_enabled"), Some(&PyValue::Bool(true)));
        assert_eq!(f.get("name"), Some(&PyValue::None));
        assert_eq!(f.getattr(&ATTRS[2]), Some(PyValue::Int(5)));
        assert!(cluster_name_matches("abc\n"));
        assert!(!cluster_name_matches("-abc"));
    }

    #[test]
    fn setter_after_patch() {
        let attr = Attr::new("node_count", int_min(0));
        assert_eq!(
            assign(&attr, &PyValue::str("5")).unwrap_err().message(),
            "Invalid input for field/attribute node_count. Value: '5'. '<' not supported between instances of 'str' and 'int'"
        );
        let labels = Attr::new("labels", AttrType::Labels);
        assert_eq!(
            assign(&labels, &PyValue::Int(5)).unwrap_err().message(),
            "Invalid input for field/attribute labels. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class 'int'>'"
        );
    }
}
