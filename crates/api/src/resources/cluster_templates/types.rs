//! The WSME type of a cluster template (`ClusterTemplate` and `ClusterTemplatePatchType` in
//! `magnum/api/controllers/v1/cluster_template.py`) and its object fields
//! (`magnum/objects/cluster_template.py`): the attributes, the typing of a POST body and of a
//! patched document.

use crate::patch::PatchType;
use crate::validation::{
    coerce, fromjson, invalid_input, str_ty, typecheck, unknown_attributes, Attr, AttrDefault,
    AttrType, FromJsonError, ObjField, Shown,
};
use openkeel_core::error::MagnumError;
use openkeel_core::pyvalue::PyValue;
use serde_json::Value;

const STR255: AttrType = str_ty(1, 255);
const S: ObjField = ObjField::String { nullable: true };
const I: ObjField = ObjField::Integer { nullable: true };

/// `fields.ClusterType.ALL`.
pub const COE_VALUES: [&str; 1] = ["kubernetes"];

/// The API type's attributes in declaration order (POST typing order and response order).
pub const API_ATTRS: [Attr; 36] = [
    Attr::new("uuid", AttrType::Uuid),
    Attr::new("name", STR255),
    Attr::new(
        "coe",
        AttrType::Enum {
            values: &COE_VALUES,
            shown: "kubernetes",
        },
    ),
    Attr::new("image_id", STR255).mandatory(),
    Attr::new("flavor_id", STR255),
    Attr::new("master_flavor_id", STR255),
    Attr::new("dns_nameserver", AttrType::Dns),
    Attr::new("keypair_id", STR255).default(AttrDefault::None),
    Attr::new("external_network_id", STR255),
    Attr::new("fixed_network", STR255),
    Attr::new("fixed_subnet", STR255),
    Attr::new("network_driver", STR255),
    Attr::new(
        "apiserver_port",
        AttrType::Int {
            min: Some(1024),
            max: Some(65535),
        },
    ),
    Attr::new(
        "docker_volume_size",
        AttrType::Int {
            min: Some(1),
            max: None,
        },
    ),
    Attr::new("cluster_distro", STR255),
    Attr::new("links", AttrType::Links).readonly(),
    Attr::new("http_proxy", STR255),
    Attr::new("https_proxy", STR255),
    Attr::new("no_proxy", STR255),
    Attr::new("volume_driver", STR255),
    Attr::new("registry_enabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("labels", AttrType::Labels),
    Attr::new("tls_disabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("public", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new(
        "server_type",
        AttrType::Enum {
            values: &["vm", "bm"],
            shown: "bm, vm",
        },
    )
    .default(AttrDefault::Str("vm")),
    Attr::new("insecure_registry", STR255),
    Attr::new("docker_storage_driver", STR255),
    Attr::new("master_lb_enabled", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("floating_ip_enabled", AttrType::Bool).default(AttrDefault::Bool(true)),
    Attr::new("project_id", AttrType::Text).readonly(),
    Attr::new("user_id", AttrType::Text).readonly(),
    Attr::new("hidden", AttrType::Bool).default(AttrDefault::Bool(false)),
    Attr::new("tags", str_ty(0, 255)),
    Attr::new("driver", STR255),
    Attr::new("created_at", AttrType::DateTime).readonly(),
    Attr::new("updated_at", AttrType::DateTime).readonly(),
];

/// `objects.ClusterTemplate.fields` in declaration order (then the base's timestamps):
/// the order of `as_dict()`, of object coercion and of the API constructor's validation.
pub const OBJ_FIELDS: [(&str, ObjField); 36] = [
    ("id", ObjField::Integer { nullable: false }),
    ("uuid", S),
    ("project_id", S),
    ("user_id", S),
    ("name", S),
    ("image_id", S),
    ("flavor_id", S),
    ("master_flavor_id", S),
    ("keypair_id", S),
    ("dns_nameserver", S),
    ("external_network_id", S),
    ("fixed_network", S),
    ("fixed_subnet", S),
    ("network_driver", S),
    ("volume_driver", S),
    ("apiserver_port", I),
    ("docker_volume_size", I),
    ("docker_storage_driver", S),
    ("cluster_distro", S),
    (
        "coe",
        ObjField::Enum {
            values: &COE_VALUES,
        },
    ),
    ("http_proxy", S),
    ("https_proxy", S),
    ("no_proxy", S),
    ("registry_enabled", ObjField::Boolean { default: false }),
    ("labels", ObjField::DictOfStrings),
    ("tls_disabled", ObjField::Boolean { default: false }),
    ("public", ObjField::Boolean { default: false }),
    ("server_type", S),
    ("insecure_registry", S),
    ("master_lb_enabled", ObjField::Boolean { default: false }),
    ("floating_ip_enabled", ObjField::Boolean { default: true }),
    ("hidden", ObjField::Boolean { default: false }),
    ("tags", S),
    ("driver", S),
    ("created_at", ObjField::DateTime),
    ("updated_at", ObjField::DateTime),
];

/// `ClusterTemplatePatchType`.
pub const PATCH_TYPE: PatchType = PatchType {
    extra_internal: &[],
    non_removable: &[
        "/network_driver",
        "/external_network_id",
        "/tls_disabled",
        "/public",
        "/server_type",
        "/coe",
        "/registry_enabled",
        "/cluster_distro",
        "/hidden",
        "/image_id",
    ],
};

pub(super) fn api_attr(name: &str) -> Option<&'static Attr> {
    API_ATTRS.iter().find(|a| a.name == name)
}

/// A WSME `ClusterTemplate` instance: the attributes that were set.
#[derive(Debug, Clone, Default)]
pub(super) struct ApiObj {
    vals: Vec<(&'static str, PyValue)>,
}

impl ApiObj {
    pub(super) fn set(&mut self, name: &'static str, v: PyValue) {
        match self.vals.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v,
            None => self.vals.push((name, v)),
        }
    }

    /// `getattr(obj, name)`: the set value, else the declared default, else `None` (Unset).
    pub(super) fn attr(&self, name: &str) -> Option<PyValue> {
        if let Some((_, v)) = self.vals.iter().find(|(n, _)| *n == name) {
            return Some(v.clone());
        }
        api_attr(name)
            .and_then(|a| a.default)
            .map(AttrDefault::value)
    }

    pub(super) fn shown(&self, name: &str) -> String {
        self.attr(name)
            .map_or_else(|| "Unset".to_string(), |v| v.py_str())
    }

    /// `as_dict()`: every object field the API declares whose value is not Unset.
    pub(super) fn as_dict(&self) -> Vec<(&'static str, PyValue)> {
        OBJ_FIELDS
            .iter()
            .filter(|(n, _)| api_attr(n).is_some())
            .filter_map(|(n, _)| self.attr(n).map(|v| (*n, v)))
            .collect()
    }
}

pub(super) fn dict_get<'a>(d: &'a [(&'static str, PyValue)], name: &str) -> Option<&'a PyValue> {
    d.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
}

pub(super) fn opt_str(v: Option<&PyValue>) -> Option<&str> {
    v.and_then(PyValue::as_str)
}

pub(super) fn shown_of(v: Option<&PyValue>) -> Shown<'_> {
    match v {
        None => Shown::Unset,
        Some(PyValue::None) => Shown::None,
        Some(PyValue::Str(s)) => Shown::Value(s),
        // Non-strings cannot pass the attribute types; print like Python would if they did.
        Some(_) => Shown::None,
    }
}

/// WSME's `fromjson(ClusterTemplate, body)`.
pub(super) fn type_body(body: &Value) -> Result<ApiObj, MagnumError> {
    let obj = match body {
        Value::Object(o) => o,
        // Magnum: 500s (`'NoneType' object has no attribute 'coe'`, `'list' object has no
        // attribute 'keys'`); OpenKeel: 400 with the same text.
        Value::Null => {
            return Err(MagnumError::client_side(
                "'NoneType' object has no attribute 'coe'",
            ))
        }
        other => {
            return Err(MagnumError::client_side(format!(
                "'{}' object has no attribute 'keys'",
                PyValue::from_json(other).type_name()
            )))
        }
    };
    let unknown: Vec<&str> = obj
        .keys()
        .map(String::as_str)
        .filter(|k| api_attr(k).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(unknown_attributes("cluster_template", &unknown));
    }
    let whole = || PyValue::from_json(body).py_str();
    let mut out = ApiObj::default();
    for a in API_ATTRS.iter() {
        match obj.get(a.name) {
            Some(raw) => {
                let v = PyValue::from_json(raw);
                let v = match fromjson(a.ty, &v) {
                    Ok(v) => v,
                    Err(FromJsonError::Value(msg)) => {
                        return Err(invalid_input("cluster_template", &whole(), &msg))
                    }
                    Err(FromJsonError::Other(msg)) => return Err(MagnumError::client_side(msg)),
                };
                if a.readonly {
                    return Err(invalid_input(
                        a.name,
                        &v.py_str(),
                        "Cannot set read only field.",
                    ));
                }
                let v = typecheck(a, &v)?;
                out.set(a.name, v);
            }
            None if a.mandatory => {
                return Err(invalid_input(a.name, "None", "Mandatory field missing."))
            }
            None => {}
        }
    }
    Ok(out)
}

/// `objects.ClusterTemplate(context, **patched)`: coerce every key in the dict's order.
pub(super) fn coerce_object(patched: &PyValue) -> Result<Vec<(String, PyValue)>, MagnumError> {
    let mut out = Vec::new();
    for (k, v) in patched.as_dict().unwrap_or_default() {
        let name = k.py_str();
        let field = OBJ_FIELDS
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(ObjField::String { nullable: true }, |(_, f)| *f);
        let c = coerce(field, &name, v)?;
        out.push((name, c));
    }
    Ok(out)
}

/// `ClusterTemplate(**patched)`: the API constructor validates each object field it
/// declares, in the object's field order.
pub(super) fn construct(patched: &PyValue) -> Result<ApiObj, MagnumError> {
    let mut out = ApiObj::default();
    for (name, _) in OBJ_FIELDS.iter() {
        let Some(a) = api_attr(name) else { continue };
        if let Some(v) = patched.get(name) {
            let v = typecheck(a, v)?;
            out.set(a.name, v);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_typing() {
        let e = |b: Value| type_body(&b).unwrap_err().message().to_string();
        let base =
            serde_json::json!({"coe": "kubernetes", "image_id": "i", "apiserver_port": "abc"});
        assert_eq!(e(base), "Invalid input for field/attribute cluster_template. Value: '{'coe': 'kubernetes', 'image_id': 'i', 'apiserver_port': 'abc'}'. invalid literal for int() with base 10: 'abc'");
        assert_eq!(
            e(serde_json::json!({"coe": "kubernetes"})),
            "Invalid input for field/attribute image_id. Value: 'None'. Mandatory field missing."
        );
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "foo": 1})),
            "Unknown attribute for argument cluster_template: foo"
        );
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "project_id": "p"})),
            "Invalid input for field/attribute project_id. Value: 'p'. Cannot set read only field."
        );
        assert_eq!(e(serde_json::json!({"image_id": "i", "created_at": "2020-01-01T00:00:00"})), "Invalid input for field/attribute created_at. Value: '2020-01-01 00:00:00'. Cannot set read only field.");
        assert_eq!(e(serde_json::json!({"image_id": "i", "server_type": "xx"})), "Invalid input for field/attribute server_type. Value: 'xx'. Value should be one of: bm, vm");
        assert_eq!(
            e(serde_json::json!({"image_id": "i", "uuid": 5})),
            "Expected a uuid but received 5."
        );
        let ok =
            type_body(&serde_json::json!({"image_id": "i", "apiserver_port": 5000.7})).unwrap();
        assert_eq!(ok.attr("apiserver_port"), Some(PyValue::Int(5000)));
        assert_eq!(ok.attr("server_type"), Some(PyValue::str("vm")));
        assert_eq!(ok.attr("flavor_id"), None);
    }

    /// `ClusterTemplate(**doc)` with a non-dict `labels` (in a PATCH the object coercion of
    /// the update decorators refuses it first, as in Magnum).
    #[test]
    fn constructor_labels_text() {
        let doc = PyValue::from_json(&serde_json::json!({"image_id": "i", "labels": 5}));
        assert_eq!(
            construct(&doc).unwrap_err().message(),
            "Invalid input for field/attribute labels. Value: '5'. Wrong type. Expected '{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}', got '<class 'int'>'"
        );
    }
}
