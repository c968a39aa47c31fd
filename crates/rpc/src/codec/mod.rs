//! Magnum's versioned-object primitives (`magnum_object.*`, `magnum/objects/base.py` and `oslo_versionedobjects/base.py`), as
//! oslo.versionedobjects 3.12 writes and reads them.
//!
//! Each object has a static field table (OVO field order, kind, nullability, default).
//! Encoding walks the table over the plain struct; decoding applies OVO's rules (version
//! acceptance, unknown keys ignored, `changes ∩ fields`, null → default / error, coercions)
//! and then builds the struct.

mod fields;
#[cfg(test)]
mod tests;

pub use fields::{Default_, FieldSpec, Kind};

use crate::Obj;
use openkeel_core::objects::{
    Certificate, Cluster, ClusterTemplate, Federation, MagnumService, NodeGroup, Quota, Stats,
    X509KeyPair,
};
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

pub const NAMESPACE: &str = "magnum";

/// Why a primitive could not be decoded (OVO's exception class in `class`).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{class}: {message}")]
pub struct CodecError {
    /// `IncompatibleObjectVersion`, `UnsupportedObjectError`, `ValueError`, `ObjectActionError`.
    pub class: &'static str,
    pub message: String,
}

fn err(class: &'static str, message: impl Into<String>) -> CodecError {
    CodecError {
        class,
        message: message.into(),
    }
}

/// A Magnum versioned object at its Magnum 23.0.0 version.
pub trait VersionedObject: Serialize + DeserializeOwned {
    const NAME: &'static str;
    const VERSION: &'static str;
    fn fields() -> &'static [FieldSpec];
    /// True for an object never saved (no `id`): only its changed fields are set, as for an
    /// object built in magnum-api and sent to `cluster_create` / `nodegroup_create`.
    fn is_new(&self) -> bool {
        false
    }
    /// Whether a field that is `None` in the struct counts as set (encoded as `null`).
    /// Objects loaded from the DB have every column set.
    fn none_is_set(&self) -> bool {
        true
    }
}

macro_rules! persistent {
    ($t:ty, $name:literal, $ver:literal, $table:path) => {
        impl VersionedObject for $t {
            const NAME: &'static str = $name;
            const VERSION: &'static str = $ver;
            fn fields() -> &'static [FieldSpec] {
                $table
            }
            fn is_new(&self) -> bool {
                self.id == 0
            }
        }
    };
}

persistent!(Cluster, "Cluster", "1.24", fields::CLUSTER);
persistent!(
    ClusterTemplate,
    "ClusterTemplate",
    "1.21",
    fields::CLUSTER_TEMPLATE
);
persistent!(NodeGroup, "NodeGroup", "1.2", fields::NODEGROUP);
persistent!(X509KeyPair, "X509KeyPair", "1.2", fields::X509KEYPAIR);
persistent!(
    MagnumService,
    "MagnumService",
    "1.0",
    fields::MAGNUM_SERVICE
);
persistent!(Quota, "Quota", "1.0", fields::QUOTA);
persistent!(Federation, "Federation", "1.0", fields::FEDERATION);

impl VersionedObject for Certificate {
    const NAME: &'static str = "Certificate";
    const VERSION: &'static str = "1.2";
    fn fields() -> &'static [FieldSpec] {
        fields::CERTIFICATE
    }
    /// A Certificate is never loaded from a table: only the fields given a value are set.
    fn none_is_set(&self) -> bool {
        false
    }
}

impl VersionedObject for Stats {
    const NAME: &'static str = "Stats";
    const VERSION: &'static str = "1.0";
    fn fields() -> &'static [FieldSpec] {
        fields::STATS
    }
}

/// `obj_to_primitive()` of `obj` at its current version.
pub fn encode<T: VersionedObject>(obj: &Obj<T>) -> Value {
    let raw = match serde_json::to_value(&obj.data) {
        Ok(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let new = obj.data.is_new();
    let none_set = obj.data.none_is_set();
    let mut data = Map::new();
    for f in T::fields() {
        if new && !obj.changes.contains(f.name) {
            continue;
        }
        let v = raw.get(f.name).cloned().unwrap_or(Value::Null);
        let v = if v.is_null() {
            if !f.nullable {
                match f.default.to_value() {
                    Some(d) => d,
                    None => continue, // a non-nullable field without value is unset
                }
            } else if !none_set && !obj.changes.contains(f.name) {
                continue;
            } else {
                Value::Null
            }
        } else if f.kind == Kind::DateTime {
            match v.as_str() {
                Some(s) => Value::String(wire_datetime(s)),
                None => v,
            }
        } else {
            v
        };
        data.insert(f.name.to_string(), v);
    }
    let mut out = Map::new();
    out.insert("magnum_object.name".into(), T::NAME.into());
    out.insert("magnum_object.namespace".into(), NAMESPACE.into());
    out.insert("magnum_object.version".into(), T::VERSION.into());
    let changes: Vec<Value> = obj
        .changes
        .iter()
        .filter(|c| data.contains_key(c.as_str()))
        .map(|c| Value::String(c.clone()))
        .collect();
    out.insert("magnum_object.data".into(), Value::Object(data));
    if !changes.is_empty() {
        out.insert("magnum_object.changes".into(), Value::Array(changes));
    }
    Value::Object(out)
}

/// `YYYY-MM-DDTHH:MM:SSZ` from chrono's serde form (`YYYY-MM-DDTHH:MM:SS[.f]`).
fn wire_datetime(s: &str) -> String {
    let base: String = s.chars().take(19).collect();
    format!("{base}Z")
}

/// Whether an incoming version is accepted by a local class at `local` (OVO's rule: same
/// major, requested minor ≤ local minor; a 3-part version is retried as its first 2 parts).
pub fn version_accepted(requested: &str, local: &str) -> bool {
    fn parse(v: &str) -> Option<Vec<u64>> {
        v.split('.').map(|p| p.parse().ok()).collect()
    }
    let (Some(r), Some(l)) = (parse(requested), parse(local)) else {
        return false;
    };
    if r.len() < 2 || l.len() < 2 || r.len() > 3 {
        return false;
    }
    r[0] == l[0] && r[1] <= l[1]
}

/// `obj_from_primitive()` into an [`Obj`].
pub fn decode<T: VersionedObject>(prim: &Value) -> Result<Obj<T>, CodecError> {
    let p = prim
        .as_object()
        .ok_or_else(|| err("ObjectActionError", "object primitive is not a dict"))?;
    let ns = p.get("magnum_object.namespace").and_then(Value::as_str);
    if ns != Some(NAMESPACE) {
        return Err(err(
            "UnsupportedObjectError",
            format!("Unsupported object type {}", ns.unwrap_or("")),
        ));
    }
    let name = p.get("magnum_object.name").and_then(Value::as_str);
    if name != Some(T::NAME) {
        return Err(err(
            "UnsupportedObjectError",
            format!("Unsupported object type {}", name.unwrap_or("")),
        ));
    }
    let version = p
        .get("magnum_object.version")
        .and_then(Value::as_str)
        .unwrap_or("");
    if !version_accepted(version, T::VERSION) {
        return Err(err(
            "IncompatibleObjectVersion",
            format!(
                "Version {version} of {} is not supported, supported version is {}",
                T::NAME,
                T::VERSION
            ),
        ));
    }
    let empty = Map::new();
    let data = match p.get("magnum_object.data") {
        Some(Value::Object(m)) => m,
        None => &empty,
        Some(_) => return Err(err("ObjectActionError", "magnum_object.data is not a dict")),
    };
    let mut out = Map::new();
    for f in T::fields() {
        let v = match data.get(f.name) {
            Some(v) => Some(fields::coerce(f, v)?),
            None => None,
        };
        let v = match v {
            Some(v) => v,
            None if f.required => f.kind.zero(),
            None => continue,
        };
        let v = if v.is_null() && f.required {
            f.kind.zero()
        } else if f.kind == Kind::DateTime {
            match v.as_str() {
                Some(s) => Value::String(s.chars().take(19).collect()),
                None => v,
            }
        } else {
            v
        };
        out.insert(f.name.to_string(), v);
    }
    let obj: T = serde_json::from_value(Value::Object(out))
        .map_err(|e| err("ValueError", format!("{}: {e}", T::NAME)))?;
    let mut changes = std::collections::BTreeSet::new();
    if let Some(Value::Array(cs)) = p.get("magnum_object.changes") {
        for c in cs.iter().filter_map(Value::as_str) {
            if T::fields().iter().any(|f| f.name == c) {
                changes.insert(c.to_string());
            }
        }
    }
    Ok(Obj { data: obj, changes })
}
