//! Field tables (the `fields` of `magnum/objects/*.py`) and OVO's per-type coercions
//! (`oslo_versionedobjects/fields.py`).

use super::{err, CodecError};
use openkeel_core::pyvalue::{json_str, PyValue};
use serde_json::{Map, Value};

/// An OVO field type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Int,
    Str,
    Uuid,
    Bool,
    DateTime,
    DictOfStrings,
    ListOfStrings,
    ListOfDicts,
    /// An enum field: a string that must be one of the values (checked by the struct's type).
    Enum,
}

impl Kind {
    /// What a non-`Option` Rust field gets when the primitive leaves it unset.
    pub(super) fn zero(self) -> Value {
        match self {
            Kind::Int => Value::from(0),
            Kind::Bool => Value::Bool(false),
            _ => Value::String(String::new()),
        }
    }
}

/// A field's OVO default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Default_ {
    None,
    Bool(bool),
    Int(i64),
}

impl Default_ {
    pub(super) fn to_value(self) -> Option<Value> {
        match self {
            Default_::None => None,
            Default_::Bool(b) => Some(Value::Bool(b)),
            Default_::Int(i) => Some(Value::from(i)),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct FieldSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub nullable: bool,
    pub default: Default_,
    /// The Rust struct's field is not an `Option` (filled with a zero value when unset).
    pub required: bool,
}

const fn n(name: &'static str, kind: Kind) -> FieldSpec {
    FieldSpec {
        name,
        kind,
        nullable: true,
        default: Default_::None,
        required: false,
    }
}
/// Non-nullable, no default, Rust field is a plain value.
const fn r(name: &'static str, kind: Kind) -> FieldSpec {
    FieldSpec {
        name,
        kind,
        nullable: false,
        default: Default_::None,
        required: true,
    }
}
/// Non-nullable, no default, Rust field is an `Option`.
const fn nn(name: &'static str, kind: Kind) -> FieldSpec {
    FieldSpec {
        name,
        kind,
        nullable: false,
        default: Default_::None,
        required: false,
    }
}
const fn dflt(name: &'static str, kind: Kind, default: Default_) -> FieldSpec {
    FieldSpec {
        name,
        kind,
        nullable: false,
        default,
        required: false,
    }
}

use Kind::*;

const CREATED: FieldSpec = n("created_at", DateTime);
const UPDATED: FieldSpec = n("updated_at", DateTime);

pub static CLUSTER: &[FieldSpec] = &[
    r("id", Int),
    n("uuid", Uuid),
    n("name", Str),
    n("project_id", Str),
    n("user_id", Str),
    n("cluster_template_id", Str),
    n("keypair", Str),
    n("docker_volume_size", Int),
    n("labels", DictOfStrings),
    n("master_flavor_id", Str),
    n("flavor_id", Str),
    n("stack_id", Str),
    n("status", Enum),
    n("status_reason", Str),
    n("health_status", Enum),
    n("health_status_reason", DictOfStrings),
    n("create_timeout", Int),
    n("api_address", Str),
    n("discovery_url", Str),
    n("ca_cert_ref", Str),
    n("magnum_cert_ref", Str),
    n("etcd_ca_cert_ref", Str),
    n("front_proxy_ca_cert_ref", Str),
    n("coe_version", Str),
    n("container_version", Str),
    n("fixed_network", Str),
    n("fixed_subnet", Str),
    dflt("floating_ip_enabled", Bool, Default_::Bool(true)),
    dflt("master_lb_enabled", Bool, Default_::Bool(false)),
    CREATED,
    UPDATED,
];

pub static CLUSTER_TEMPLATE: &[FieldSpec] = &[
    r("id", Int),
    n("uuid", Str),
    n("project_id", Str),
    n("user_id", Str),
    n("name", Str),
    n("image_id", Str),
    n("flavor_id", Str),
    n("master_flavor_id", Str),
    n("keypair_id", Str),
    n("dns_nameserver", Str),
    n("external_network_id", Str),
    n("fixed_network", Str),
    n("fixed_subnet", Str),
    n("network_driver", Str),
    n("volume_driver", Str),
    n("apiserver_port", Int),
    n("docker_volume_size", Int),
    n("docker_storage_driver", Str),
    n("cluster_distro", Str),
    n("coe", Enum),
    n("http_proxy", Str),
    n("https_proxy", Str),
    n("no_proxy", Str),
    dflt("registry_enabled", Bool, Default_::Bool(false)),
    n("labels", DictOfStrings),
    dflt("tls_disabled", Bool, Default_::Bool(false)),
    dflt("public", Bool, Default_::Bool(false)),
    n("server_type", Str),
    n("insecure_registry", Str),
    dflt("master_lb_enabled", Bool, Default_::Bool(false)),
    dflt("floating_ip_enabled", Bool, Default_::Bool(true)),
    dflt("hidden", Bool, Default_::Bool(false)),
    n("tags", Str),
    n("driver", Str),
    CREATED,
    UPDATED,
];

pub static NODEGROUP: &[FieldSpec] = &[
    r("id", Int),
    r("uuid", Uuid),
    r("name", Str),
    r("cluster_id", Str),
    r("project_id", Str),
    n("docker_volume_size", Int),
    n("labels", DictOfStrings),
    n("flavor_id", Str),
    n("image_id", Str),
    n("node_addresses", ListOfStrings),
    dflt("node_count", Int, Default_::Int(1)),
    nn("role", Str),
    n("max_node_count", Int),
    dflt("min_node_count", Int, Default_::Int(0)),
    dflt("is_default", Bool, Default_::Bool(false)),
    n("stack_id", Str),
    n("status", Enum),
    n("status_reason", Str),
    n("version", Str),
    n("node_labels", DictOfStrings),
    n("node_taints", ListOfDicts),
    CREATED,
    UPDATED,
];

pub static CERTIFICATE: &[FieldSpec] = &[
    n("project_id", Str),
    n("user_id", Str),
    n("cluster_uuid", Str),
    n("csr", Str),
    n("pem", Str),
    n("ca_cert_type", Str),
    CREATED,
    UPDATED,
];

pub static X509KEYPAIR: &[FieldSpec] = &[
    r("id", Int),
    n("uuid", Uuid),
    n("certificate", Str),
    n("private_key", Str),
    n("intermediates", Str),
    n("private_key_passphrase", Str),
    n("project_id", Str),
    n("user_id", Str),
    CREATED,
    UPDATED,
];

pub static MAGNUM_SERVICE: &[FieldSpec] = &[
    r("id", Int),
    n("host", Str),
    n("binary", Str),
    nn("disabled", Bool),
    n("disabled_reason", Str),
    n("last_seen_up", DateTime),
    nn("forced_down", Bool),
    r("report_count", Int),
    CREATED,
    UPDATED,
];

pub static QUOTA: &[FieldSpec] = &[
    r("id", Int),
    nn("project_id", Str),
    nn("resource", Str),
    r("hard_limit", Int),
    CREATED,
    UPDATED,
];

pub static FEDERATION: &[FieldSpec] = &[
    r("id", Int),
    n("uuid", Uuid),
    n("name", Str),
    n("project_id", Str),
    n("hostcluster_id", Str),
    n("member_ids", ListOfStrings),
    n("status", Enum),
    n("status_reason", Str),
    n("properties", DictOfStrings),
    CREATED,
    UPDATED,
];

pub static STATS: &[FieldSpec] = &[
    r("clusters", Int),
    FieldSpec {
        name: "nodes",
        kind: Int,
        nullable: true,
        default: Default_::None,
        required: true,
    },
];

/// OVO's `coerce` for one field value (null rules included).
pub(super) fn coerce(f: &FieldSpec, v: &Value) -> Result<Value, CodecError> {
    if v.is_null() {
        if f.nullable {
            return Ok(Value::Null);
        }
        return f
            .default
            .to_value()
            .ok_or_else(|| err("ValueError", format!("Field `{}' cannot be None", f.name)));
    }
    let bad = || {
        err(
            "ValueError",
            format!("A {:?} is required in field {}, not {v}", f.kind, f.name),
        )
    };
    match f.kind {
        Int => int(v).ok_or_else(bad),
        Str | Uuid | Enum => string(v).map(Value::String).ok_or_else(bad),
        DateTime => v.as_str().map(|s| Value::String(s.into())).ok_or_else(bad),
        Bool => Ok(Value::Bool(truthy(v))),
        DictOfStrings => {
            let m = v.as_object().ok_or_else(bad)?;
            let mut out = Map::new();
            for (k, x) in m {
                out.insert(k.clone(), Value::String(string(x).ok_or_else(bad)?));
            }
            Ok(Value::Object(out))
        }
        ListOfStrings => {
            let a = v.as_array().ok_or_else(bad)?;
            let items: Option<Vec<Value>> =
                a.iter().map(|x| string(x).map(Value::String)).collect();
            Ok(Value::Array(items.ok_or_else(bad)?))
        }
        ListOfDicts => {
            let a = v.as_array().ok_or_else(bad)?;
            if a.iter().all(Value::is_object) {
                Ok(v.clone())
            } else {
                Err(bad())
            }
        }
    }
}

/// Python `int(v)`.
fn int(v: &Value) -> Option<Value> {
    match v {
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(v.clone()),
        Value::Number(n) => n.as_f64().map(|f| Value::from(f.trunc() as i64)),
        Value::Bool(b) => Some(Value::from(i64::from(*b))),
        Value::String(s) => openkeel_core::pyvalue::python_int(s)
            .and_then(|i| i64::try_from(i).ok())
            .map(Value::from),
        _ => None,
    }
}

/// Python `str(v)` for what StringField accepts (str, int, float, bool).
fn string(v: &Value) -> Option<String> {
    match v {
        Value::String(_) | Value::Bool(_) | Value::Number(_) => Some(json_str(v)),
        _ => None,
    }
}

/// Python `bool(v)`.
fn truthy(v: &Value) -> bool {
    PyValue::from_json(v).truthy()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// StringField coerces with Python's `str()`: CPython 3.11 `str(1e-05)` is `1e-05`,
    /// `str(1e16)` is `1e+16` (the old local float printer wrote `0.00001` and
    /// `10000000000000000`).
    #[test]
    fn string_coercion_is_python_str() {
        assert_eq!(string(&json!(1e-5)).as_deref(), Some("1e-05"));
        assert_eq!(string(&json!(1e16)).as_deref(), Some("1e+16"));
        assert_eq!(string(&json!(2.0)).as_deref(), Some("2.0"));
        assert_eq!(string(&json!(7)).as_deref(), Some("7"));
        assert_eq!(string(&json!(true)).as_deref(), Some("True"));
        assert_eq!(string(&json!("x")).as_deref(), Some("x"));
        assert_eq!(string(&json!(null)), None);
        assert_eq!(string(&json!([1])), None);
        assert!(truthy(&json!(0.5)));
        assert!(!truthy(&json!({})));
    }

    /// IntegerField coerces with Python's `int()` (`openkeel_core::pyvalue::python_int`):
    /// underscores between digits are accepted, as CPython does; beyond `i64`, refused.
    #[test]
    fn integer_coercion_is_python_int() {
        assert_eq!(int(&json!(" 12 ")), Some(json!(12)));
        assert_eq!(int(&json!("+5")), Some(json!(5)));
        assert_eq!(int(&json!("1_000")), Some(json!(1000)));
        assert_eq!(int(&json!(2.7)), Some(json!(2)));
        assert_eq!(int(&json!(true)), Some(json!(1)));
        for bad in ["", "1.5", "1__0", "x", "9223372036854775808"] {
            assert_eq!(int(&json!(bad)), None, "{bad}");
        }
        assert_eq!(int(&json!([1])), None);
    }
}
