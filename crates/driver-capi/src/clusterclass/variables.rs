//! The ClusterClass's 39 topology variables and their OpenAPI schemas.
//!
//! magnum-cluster-api derives each schema from a Rust value type with `schemars`
//! (`src/features/mod.rs:92-182`): optional string fields become a plain `{"type": "string"}`
//! left out of `required` (CAPI's Go schema type rejects `["string", "null"]`), integers are
//! `int64`, and no schema carries a `default`. Every variable is `required: true`, so a
//! `Cluster` must set all 39 (the `Cluster` side lives in `cluster.rs`).
//!
//! The order is the order magnum-cluster-api 0.38.2's ClusterClass lists them in (its feature
//! modules' `inventory` order, which Rust does not specify and which the golden test pins).

use serde_json::{json, Map, Value};

/// The type of a variable or of one of its object's properties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarType {
    /// `{"type": "string"}`
    String,
    /// `{"type": "boolean"}`
    Boolean,
    /// `{"type": "integer", "format": "int64"}`
    Integer,
    /// `{"type": "array", "items": {"type": "string"}}`
    StringList,
    /// `{"type": "string", "enum": [...]}`
    Enum(&'static [&'static str]),
    /// `{"type": "object", "properties": {...}, "required": [...]}`: each property with its
    /// type and whether it is required (the required ones listed in this order).
    Object(&'static [Property]),
}

/// A property of an object variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Property {
    pub name: &'static str,
    pub ty: VarType,
    pub required: bool,
}

/// One ClusterClass variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variable {
    pub name: &'static str,
    pub ty: VarType,
}

/// The values `operatingSystem` accepts (`src/features/operating_system.rs:39-46`); a
/// template whose `cluster_distro` matches none of them cannot make a valid `Cluster`.
pub const OPERATING_SYSTEMS: &[&str] = &["ubuntu", "debian", "flatcar", "rockylinux"];

const fn req(name: &'static str, ty: VarType) -> Property {
    Property {
        name,
        ty,
        required: true,
    }
}

const fn opt(name: &'static str, ty: VarType) -> Property {
    Property {
        name,
        ty,
        required: false,
    }
}

const fn var(name: &'static str, ty: VarType) -> Variable {
    Variable { name, ty }
}

use VarType::{Boolean, Enum, Integer, Object, String as Str, StringList};

/// `openidConnect`: the `oidc_*` labels, all required strings.
const OPENID_CONNECT: &[Property] = &[
    req("issuerUrl", Str),
    req("clientId", Str),
    req("usernameClaim", Str),
    req("usernamePrefix", Str),
    req("groupsClaim", Str),
    req("groupsPrefix", Str),
];

/// `bootVolume`: Cinder volume type and size (GiB; 0 = boot from the image).
const BOOT_VOLUME: &[Property] = &[req("type", Str), req("size", Integer)];

/// `auditLog`: the `audit_log_*` labels.
const AUDIT_LOG: &[Property] = &[
    req("enabled", Boolean),
    req("maxAge", Str),
    req("maxBackup", Str),
    req("maxSize", Str),
];

/// `apiServerLoadBalancer`: only `enabled` is required (CAPO's webhook rejected a required
/// `provider`, magnum-cluster-api #917/#924).
const API_SERVER_LOAD_BALANCER: &[Property] = &[
    req("enabled", Boolean),
    opt("provider", Str),
    opt("flavor", Str),
    opt("availabilityZone", Str),
];

/// The 39 variables, in magnum-cluster-api 0.38.2's order.
pub const VARIABLES: [Variable; 39] = [
    var("enableKeystoneAuth", Boolean),
    var("sshKeyName", Str),
    var("imageUUID", Str),
    var("admissionControlList", Str),
    var("openidConnect", Object(OPENID_CONNECT)),
    var("apiServerTLSCipherSuites", Str),
    var("kubeletTLSCipherSuites", Str),
    var("apiServerSANs", Str),
    var("disableAPIServerFloatingIP", Boolean),
    var("disableAPIServerFloatingIPManaged", Boolean),
    var("apiServerFloatingIP", Str),
    var("containerdConfig", Str),
    var("systemdProxyConfig", Str),
    var("operatingSystem", Enum(OPERATING_SYSTEMS)),
    var("aptProxyConfig", Str),
    var("imageRepository", Str),
    var("serverGroupId", Str),
    var("isServerGroupDiffFailureDomain", Boolean),
    var("bootVolume", Object(BOOT_VOLUME)),
    var("bootVolumeAvailabilityZone", Str),
    var("nodeCidr", Str),
    var("dnsNameservers", StringList),
    var("fixedNetworkId", Str),
    var("fixedSubnetId", Str),
    var("hardwareDiskBus", Str),
    var("enableDockerVolume", Boolean),
    var("dockerVolumeSize", Integer),
    var("dockerVolumeType", Str),
    var("enableEtcdVolume", Boolean),
    var("etcdVolumeSize", Integer),
    var("etcdVolumeType", Str),
    var("availabilityZone", Str),
    var("controlPlaneFlavor", Str),
    var("flavor", Str),
    var("clusterIdentityRefName", Str),
    var("auditLog", Object(AUDIT_LOG)),
    var("controlPlaneAvailabilityZones", StringList),
    var("apiServerLoadBalancer", Object(API_SERVER_LOAD_BALANCER)),
    var("externalNetworkId", Str),
];

/// The variables a `Cluster` may override per machine deployment
/// (`magnum_cluster_api/resources.py:797-846`).
pub const MACHINE_DEPLOYMENT_OVERRIDES: [&str; 7] = [
    "bootVolume",
    "flavor",
    "imageRepository",
    "imageUUID",
    "hardwareDiskBus",
    "serverGroupId",
    "isServerGroupDiffFailureDomain",
];

/// The variable called `name`, if the ClusterClass has one.
pub fn variable(name: &str) -> Option<&'static Variable> {
    VARIABLES.iter().find(|v| v.name == name)
}

impl VarType {
    /// The OpenAPI v3 schema of this type.
    pub fn schema(&self) -> Value {
        match self {
            VarType::String => json!({"type": "string"}),
            VarType::Boolean => json!({"type": "boolean"}),
            VarType::Integer => json!({"type": "integer", "format": "int64"}),
            VarType::StringList => json!({"type": "array", "items": {"type": "string"}}),
            VarType::Enum(values) => json!({"type": "string", "enum": values}),
            VarType::Object(props) => {
                let properties: Map<String, Value> = props
                    .iter()
                    .map(|p| (p.name.to_string(), p.ty.schema()))
                    .collect();
                let required: Vec<&str> = props
                    .iter()
                    .filter(|p| p.required)
                    .map(|p| p.name)
                    .collect();
                json!({"type": "object", "properties": properties, "required": required})
            }
        }
    }

    /// Whether `value` has this type (the check CAPI's webhook makes against the schema).
    pub fn accepts(&self, value: &Value) -> bool {
        match (self, value) {
            (VarType::String, Value::String(_)) => true,
            (VarType::Boolean, Value::Bool(_)) => true,
            (VarType::Integer, Value::Number(n)) => n.is_i64(),
            (VarType::StringList, Value::Array(items)) => items.iter().all(Value::is_string),
            (VarType::Enum(values), Value::String(s)) => values.contains(&s.as_str()),
            (VarType::Object(props), Value::Object(map)) => {
                props
                    .iter()
                    .all(|p| map.get(p.name).map_or(!p.required, |v| p.ty.accepts(v)))
                    && map.keys().all(|k| props.iter().any(|p| p.name == k))
            }
            _ => false,
        }
    }
}

impl Variable {
    /// The variable as `spec.variables[]` of the ClusterClass (v1beta1) lists it.
    pub fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "required": true,
            "schema": {"openAPIV3Schema": self.ty.schema()},
        })
    }
}

/// `spec.variables` of the ClusterClass.
pub fn variables_json() -> Value {
    Value::Array(VARIABLES.iter().map(Variable::to_json).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn there_are_39_distinct_variables_all_required_without_defaults() {
        let vars = variables_json();
        let list = vars.as_array().cloned().unwrap_or_default();
        assert_eq!(list.len(), 39);
        let names: BTreeSet<&str> = VARIABLES.iter().map(|v| v.name).collect();
        assert_eq!(names.len(), 39, "duplicate variable names");
        for v in &list {
            assert_eq!(v["required"], json!(true), "{v}");
            let schema = v["schema"]["openAPIV3Schema"].to_string();
            // no defaults anywhere: the Cluster must set every value itself
            assert!(!schema.contains("\"default\""), "{schema}");
            // CAPI's Go schema type takes one type name, never a list ("nullable" types)
            assert!(!schema.contains("\"type\":["), "{schema}");
            assert!(!schema.contains("null"), "{schema}");
        }
    }

    #[test]
    fn variable_types_are_the_upstream_ones() {
        let of = |name: &str| variable(name).map(|v| v.ty);
        let booleans = [
            "enableKeystoneAuth",
            "disableAPIServerFloatingIP",
            "disableAPIServerFloatingIPManaged",
            "isServerGroupDiffFailureDomain",
            "enableDockerVolume",
            "enableEtcdVolume",
        ];
        let integers = ["dockerVolumeSize", "etcdVolumeSize"];
        let lists = ["dnsNameservers", "controlPlaneAvailabilityZones"];
        let objects = [
            "openidConnect",
            "bootVolume",
            "auditLog",
            "apiServerLoadBalancer",
        ];
        for name in booleans {
            assert_eq!(of(name), Some(Boolean), "{name}");
        }
        for name in integers {
            assert_eq!(of(name), Some(Integer), "{name}");
        }
        for name in lists {
            assert_eq!(of(name), Some(StringList), "{name}");
        }
        for name in objects {
            assert!(matches!(of(name), Some(Object(_))), "{name}");
        }
        assert_eq!(of("operatingSystem"), Some(Enum(OPERATING_SYSTEMS)));
        let strings = VARIABLES.iter().filter(|v| v.ty == Str).count();
        assert_eq!(
            strings,
            39 - booleans.len() - integers.len() - lists.len() - objects.len() - 1
        );
        assert_eq!(strings, 24);
    }

    #[test]
    fn object_schemas() {
        let schema = |name: &str| variable(name).map(|v| v.ty.schema());
        assert_eq!(
            schema("apiServerLoadBalancer"),
            Some(json!({
                "type": "object",
                "properties": {
                    "enabled": {"type": "boolean"},
                    "provider": {"type": "string"},
                    "flavor": {"type": "string"},
                    "availabilityZone": {"type": "string"},
                },
                "required": ["enabled"],
            }))
        );
        assert_eq!(
            schema("bootVolume"),
            Some(json!({
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "size": {"type": "integer", "format": "int64"},
                },
                "required": ["type", "size"],
            }))
        );
        assert_eq!(
            schema("auditLog").map(|s| s["required"].clone()),
            Some(json!(["enabled", "maxAge", "maxBackup", "maxSize"]))
        );
        assert_eq!(
            schema("openidConnect").map(|s| s["required"].clone()),
            Some(json!([
                "issuerUrl",
                "clientId",
                "usernameClaim",
                "usernamePrefix",
                "groupsClaim",
                "groupsPrefix"
            ]))
        );
        assert_eq!(
            schema("operatingSystem"),
            Some(json!({"type": "string", "enum": ["ubuntu", "debian", "flatcar", "rockylinux"]}))
        );
    }

    #[test]
    fn accepts_checks_values_against_the_schema() {
        let lb = variable("apiServerLoadBalancer").map(|v| v.ty);
        let Some(lb) = lb else {
            panic!("apiServerLoadBalancer missing")
        };
        assert!(lb.accepts(&json!({"enabled": true})));
        assert!(lb.accepts(&json!({"enabled": false, "provider": "amphora"})));
        assert!(
            !lb.accepts(&json!({"provider": "amphora"})),
            "enabled is required"
        );
        assert!(!lb.accepts(&json!({"enabled": true, "provider": null})));
        assert!(!lb.accepts(&json!({"enabled": true, "other": "x"})));
        assert!(Enum(OPERATING_SYSTEMS).accepts(&json!("flatcar")));
        assert!(!Enum(OPERATING_SYSTEMS).accepts(&json!("centos")));
        assert!(!Enum(OPERATING_SYSTEMS).accepts(&Value::Null));
        assert!(Integer.accepts(&json!(20)));
        assert!(!Integer.accepts(&json!(2.5)));
        assert!(!Integer.accepts(&json!("20")));
        assert!(StringList.accepts(&json!([""])));
        assert!(!StringList.accepts(&json!([1])));
    }

    #[test]
    fn machine_deployment_overrides_are_class_variables() {
        for name in MACHINE_DEPLOYMENT_OVERRIDES {
            assert!(variable(name).is_some(), "{name}");
        }
    }
}
